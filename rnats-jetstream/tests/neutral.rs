//! JetStream, Key-Value and Object Store with the client on the runtime-neutral backend,
//! under smol, with no tokio runtime in the process: every timer these crates arm (pull
//! expiries, idle heartbeats, the acks of dropped publishes, progress keepalives, a KV
//! history's quiet spell, an object's file) comes from the runtime the caller runs under.
//! Before, the first of them panicked outside tokio.
#![cfg(all(feature = "kv", feature = "object-store"))]
#![allow(clippy::unwrap_used, missing_docs)]

use std::future::Future;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::consumer::{self, pull};
use rnats_jetstream::kv;
use rnats_jetstream::object_store;
use rnats_jetstream::stream;
use rnats_test_server::NatsServer;

/// How long any single wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

/// Runs `test` under smol's `block_on`, after checking that no tokio runtime is around.
fn on_smol<F: Future<Output = ()>>(test: F) {
    smol::block_on(async {
        assert!(
            tokio::runtime::Handle::try_current().is_err(),
            "a tokio runtime is current"
        );
        test.await;
    });
}

/// `work`, or a failed test after [`WAIT`].
async fn within<T>(work: impl Future<Output = T>) -> T {
    smol::future::or(async { Some(work.await) }, async {
        smol::Timer::after(WAIT).await;
        None
    })
    .await
    .expect("timed out")
}

async fn jetstream(server: &NatsServer) -> rnats_jetstream::Context {
    let client = within(rnats_core::connect(server.url())).await.unwrap();
    rnats_jetstream::new(client)
}

fn spawn_server() -> NatsServer {
    NatsServer::builder().jetstream(true).spawn().unwrap()
}

#[test]
fn publishes_fetches_and_streams_messages_under_smol() {
    let server = spawn_server();
    on_smol(async {
        let js = jetstream(&server).await;
        let orders = within(js.create_stream(stream::Config {
            name: "ORDERS".into(),
            subjects: vec!["orders.>".into()],
            ..Default::default()
        }))
        .await
        .unwrap();
        for (n, payload) in ["a", "b", "c"].into_iter().enumerate() {
            let ack = within(async { js.publish("orders.new", payload.into()).await?.await })
                .await
                .unwrap();
            assert_eq!(ack.sequence, n as u64 + 1);
        }
        // A publish whose ack nobody awaits: the context's acker task (spawned on the
        // runtime-neutral backend) waits it out; the message is stored all the same.
        drop(within(js.publish("orders.new", "d".into())).await.unwrap());

        let consumer: consumer::PullConsumer = within(orders.create_consumer(pull::Config {
            durable_name: Some("worker".into()),
            ack_wait: Duration::from_millis(500),
            ..Default::default()
        }))
        .await
        .unwrap();

        // The fetch ends with its fourth message, the one whose publish was dropped.
        let fetched: Vec<_> = within(async {
            consumer
                .fetch()
                .max_messages(4)
                .expires(Duration::from_secs(10))
                .messages()
                .await
                .unwrap()
                .try_collect::<Vec<_>>()
                .await
        })
        .await
        .unwrap();
        let payloads: Vec<_> = fetched.iter().map(|m| m.payload.clone()).collect();
        assert_eq!(payloads, ["a", "b", "c", "d"]);
        for message in &fetched {
            within(message.double_ack()).await.unwrap();
        }

        // An empty batch waits out its expiry on async-io's timer, then ends empty.
        let started = Instant::now();
        let empty = within(async {
            consumer
                .batch()
                .max_messages(5)
                .expires(Duration::from_millis(300))
                .messages()
                .await
                .unwrap()
                .try_collect::<Vec<_>>()
                .await
        })
        .await
        .unwrap();
        assert!(empty.is_empty());
        assert!(started.elapsed() >= Duration::from_millis(250));

        // A continuous stream keeps pulling past its requests' expiry, watched by idle
        // heartbeats: a message published after the first request expired still arrives.
        let mut messages = within(
            consumer
                .stream()
                .expires(Duration::from_secs(1))
                .heartbeat(Duration::from_millis(300))
                .messages(),
        )
        .await
        .unwrap();
        smol::Timer::after(Duration::from_millis(1_300)).await;
        within(async { js.publish("orders.late", "e".into()).await?.await })
            .await
            .unwrap();
        let late = within(messages.next()).await.unwrap().unwrap();
        assert_eq!(late.payload, "e");
        // Long work keeps the message in progress on async-io's timer: with an ack wait of
        // 500 ms and work of 1.2 s, the server redelivers nothing (with progress every 10 s,
        // it counts one redelivery here).
        late.with_progress(Duration::from_millis(100), async {
            smol::Timer::after(Duration::from_millis(1_200)).await;
        })
        .await;
        let mut consumer = consumer;
        let info = within(consumer.info()).await.unwrap();
        assert_eq!((info.num_redelivered, info.num_ack_pending), (0, 1));
        within(late.double_ack()).await.unwrap();
    });
}

#[test]
fn ordered_consumer_reads_a_stream_under_smol() {
    let server = spawn_server();
    on_smol(async {
        let js = jetstream(&server).await;
        let events = within(js.create_stream(stream::Config {
            name: "EVENTS".into(),
            subjects: vec!["events".into()],
            ..Default::default()
        }))
        .await
        .unwrap();
        for n in 0..20 {
            within(async { js.publish("events", n.to_string().into()).await?.await })
                .await
                .unwrap();
        }
        let ordered = within(events.create_consumer(pull::OrderedConfig::default()))
            .await
            .unwrap();
        let mut messages = within(ordered.messages()).await.unwrap();
        for n in 0..20 {
            let message = within(messages.next()).await.unwrap().unwrap();
            assert_eq!(message.payload, n.to_string());
        }
    });
}

#[test]
fn key_value_puts_reads_watches_and_lists_under_smol() {
    let server = spawn_server();
    on_smol(async {
        let js = jetstream(&server).await;
        let store = within(js.create_key_value(kv::Config {
            bucket: "settings".into(),
            history: 5,
            ..Default::default()
        }))
        .await
        .unwrap();
        within(store.put("colour", "red".into())).await.unwrap();
        within(store.put("size", "L".into())).await.unwrap();
        let mut watch = within(store.watch_all()).await.unwrap();
        let revision = within(store.put("colour", "blue".into())).await.unwrap();
        let seen = within(watch.next()).await.unwrap().unwrap();
        assert_eq!((seen.key.as_str(), seen.revision), ("colour", revision));
        assert_eq!(seen.value, "blue");

        assert_eq!(
            within(store.get("colour")).await.unwrap(),
            Some(Bytes::from("blue"))
        );
        // The history ends by itself once the server has nothing more to send.
        let history: Vec<_> = within(async {
            store
                .history("colour")
                .await
                .unwrap()
                .try_collect::<Vec<_>>()
                .await
        })
        .await
        .unwrap();
        let values: Vec<_> = history.iter().map(|entry| entry.value.clone()).collect();
        assert_eq!(values, ["red", "blue"]);
        let mut keys: Vec<String> =
            within(async { store.keys().await.unwrap().try_collect::<Vec<_>>().await })
                .await
                .unwrap();
        keys.sort();
        assert_eq!(keys, ["colour", "size"]);
    });
}

#[test]
fn object_store_round_trips_bytes_and_files_under_smol() {
    let server = spawn_server();
    let dir = tempfile::tempdir().unwrap();
    on_smol(async {
        let js = jetstream(&server).await;
        let bucket = within(js.create_object_store(object_store::Config {
            bucket: "files".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
        // Several chunks (128 KiB each), so the object is read and written in pieces.
        let data: Bytes = (0..300_000u32).map(|n| (n % 251) as u8).collect();
        let source = dir.path().join("source.bin");
        std::fs::write(&source, &data).unwrap();
        let info = within(bucket.put_file("report.bin", &source))
            .await
            .unwrap();
        assert_eq!((info.size, info.chunks), (data.len(), 3));
        assert_eq!(within(bucket.get_bytes("report.bin")).await.unwrap(), data);
        let copy = dir.path().join("copy.bin");
        within(bucket.get_file("report.bin", &copy)).await.unwrap();
        assert_eq!(std::fs::read(&copy).unwrap(), data);
    });
}

#[test]
fn a_stream_snapshot_round_trips_through_a_directory_under_smol() {
    let server = spawn_server();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("backup");
    on_smol(async {
        let js = jetstream(&server).await;
        let stream = within(js.create_stream(stream::Config {
            name: "SNAP".into(),
            subjects: vec!["snap.>".into()],
            storage: stream::StorageType::File,
            ..Default::default()
        }))
        .await
        .unwrap();
        for i in 0..50 {
            within(async { js.publish("snap.a", format!("{i}").into()).await?.await })
                .await
                .unwrap();
        }
        // Small chunks: the wait for each (a timer of the runtime-neutral backend) and the
        // files (written off the caller's thread there) are what this checks.
        let snapshot = within(stream.snapshot().chunk_size(1024).start())
            .await
            .unwrap();
        within(snapshot.to_directory(&target)).await.unwrap();
        within(js.delete_stream("SNAP")).await.unwrap();
        let info = within(js.restore_stream_from_directory(&target))
            .await
            .unwrap();
        assert_eq!(info.state.messages, 50);
        assert_eq!(info.state.last_sequence, 50);
    });
}
