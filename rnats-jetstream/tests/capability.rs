//! Server capability (ADR-44): the API level from INFO and `$JS.API.INFO`, and publishing
//! features refused before sending on a server (or stream) that cannot do them. Old servers
//! are played by a fake that sends an INFO and records what the client sends.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};

use rnats_jetstream::Feature;
use rnats_jetstream::batch::BatchPublishErrorKind;
use rnats_jetstream::capability::ApiLevelTooLow;
use rnats_jetstream::counter::CounterErrorKind;
use rnats_jetstream::features::Unsupported;
use rnats_jetstream::schedule::{Schedule, ScheduleErrorKind, ScheduledMessage};
use rnats_jetstream::stream::{Config, StorageType};
use rnats_test_server::NatsServer;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// A server that announces `info`, answers PINGs, and records the ops it receives.
async fn fake_server(info: serde_json::Value) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("nats://{}", listener.local_addr().unwrap());
    let ops = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&ops);
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (read, mut write) = socket.into_split();
        write
            .write_all(format!("INFO {info}\r\n").as_bytes())
            .await
            .unwrap();
        let mut read = BufReader::new(read);
        let mut line = String::new();
        while read.read_line(&mut line).await.unwrap_or(0) > 0 {
            let op = line
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
            if op == "PING" {
                write.write_all(b"PONG\r\n").await.unwrap();
            }
            if op == "PUB" || op == "HPUB" {
                // Skip the payload: its size is the last argument, then CRLF.
                let size: usize = line.split_whitespace().last().unwrap().parse().unwrap();
                let mut payload = vec![0; size + 2];
                read.read_exact(&mut payload).await.unwrap();
            }
            seen.lock().unwrap().push(op);
            line.clear();
        }
    });
    (url, ops)
}

fn info(version: &str, level: u32) -> serde_json::Value {
    serde_json::json!({
        "server_id": "FAKE", "version": version, "api_lvl": level, "proto": 1,
        "headers": true, "max_payload": 1048576, "jetstream": true,
    })
}

fn published(ops: &Mutex<Vec<String>>) -> usize {
    let ops = ops.lock().unwrap();
    ops.iter()
        .filter(|op| *op == "PUB" || *op == "HPUB")
        .count()
}

#[tokio::test]
async fn an_older_server_gets_nothing_it_would_misread() {
    let (url, ops) = fake_server(info("2.11.4", 1)).await;
    let client = rnats_core::connect(url).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    assert_eq!(js.api_level(), Some(1));
    assert!(!js.has_capability(Feature::AtomicPublish));
    assert!(js.has_capability(Feature::MessageTtl));

    let mut batch = js.atomic_batch();
    let err = batch.add("orders.1", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::Unsupported);
    let why = err.downcast_source::<Unsupported>().unwrap();
    assert_eq!(why.feature, Feature::AtomicPublish);

    let err = js.counter("HITS").await.unwrap_err();
    assert_eq!(err.kind(), CounterErrorKind::Unsupported);

    let err = js
        .publish_schedule(
            "sched.a",
            ScheduledMessage::new(Schedule::cron("@daily").unwrap(), "orders.a"),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::Unsupported);

    // Everything the client sent has reached the fake by now: none of it was a message.
    client.flush().await.unwrap();
    assert_eq!(published(&ops), 0, "{:?}", ops.lock().unwrap());
}

#[tokio::test]
async fn an_api_level_below_the_version_is_believed() {
    // A build that says 2.14 but speaks level 2.
    let (url, ops) = fake_server(info("2.14.0-dev", 2)).await;
    let client = rnats_core::connect(url).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    assert!(js.has_capability(Feature::AtomicPublish));
    assert!(!js.has_capability(Feature::BatchPublish));
    let zoned = Schedule::cron("@daily").unwrap().time_zone("UTC").unwrap();
    let err = js
        .publish_schedule("sched.a", ScheduledMessage::new(zoned, "orders.a"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::Unsupported);
    let why = err.downcast_source::<ApiLevelTooLow>().unwrap();
    assert_eq!((why.feature, why.level), (Feature::ScheduleTimeZones, 2));
    client.flush().await.unwrap();
    assert_eq!(published(&ops), 0);
}

#[tokio::test]
async fn the_real_server_reports_its_level_and_streams_their_settings() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    let announced = js.api_level().unwrap();
    assert!(
        announced >= 4,
        "2.14+ speaks level 4 or more, got {announced}"
    );
    assert_eq!(js.jetstream_api_level().await.unwrap(), announced);
    for feature in [
        Feature::AtomicPublish,
        Feature::MessageCounters,
        Feature::MessageSchedules,
        Feature::BatchPublish,
        Feature::AtomicCommitEob,
        Feature::ScheduleTimeZones,
    ] {
        assert!(js.has_capability(feature), "{feature:?}");
    }

    let plain = js
        .create_stream(Config {
            name: "PLAIN".into(),
            subjects: vec!["plain.>".into()],
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await
        .unwrap();
    let err = plain.atomic_batch().unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::Disabled);
    let atomic = js
        .create_stream(Config {
            name: "ATOMIC".into(),
            subjects: vec!["atomic.>".into()],
            storage: StorageType::Memory,
            allow_atomic_publish: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut batch = atomic.atomic_batch().unwrap();
    batch.add("atomic.a", "1".into()).await.unwrap();
    let ack = batch.commit("atomic.b", "2".into()).await.unwrap();
    assert_eq!(ack.batch_size, Some(2));
}
