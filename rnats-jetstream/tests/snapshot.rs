//! Stream snapshots and restores against a real nats-server: a stream with thousands of
//! messages and a durable consumer snapshotted in many small chunks (so the flow-control acks
//! carry it), deleted, restored from the bytes and read back; the same through a backup
//! directory without consumers; and the refusals (a name in use, a missing stream, data that
//! is not a snapshot).
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_core::HeaderMap;
use rnats_jetstream::consumer::{self, PullConsumer};
use rnats_jetstream::context::Publish;
use rnats_jetstream::stream::{Config, RestoreErrorKind, SnapshotErrorKind, StorageType, Stream};
use rnats_jetstream::{Context, ErrorCode};
use rnats_test_server::NatsServer;

/// Messages in the big stream: enough for a few hundred 1 KiB chunks.
const MESSAGES: usize = 3000;

/// One stored message as read back: (sequence, subject, `X-Index` header, payload).
type Stored = (u64, String, Option<String>, Bytes);

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

/// A file stream `name` on `<name>.>` (the server snapshots file streams only).
async fn file_stream(js: &Context, name: &str) -> Stream {
    js.create_stream(Config {
        name: name.to_owned(),
        subjects: vec![format!("{name}.>")],
        storage: StorageType::File,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Publishes `count` messages to `name`, each with an `X-Index` header and a payload of
/// pseudo-random bytes (so compression leaves many chunks); what the stream stores.
async fn fill(js: &Context, name: &str, count: usize) -> Vec<Stored> {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut stored = Vec::with_capacity(count);
    let mut acks = Vec::with_capacity(count);
    for i in 0..count {
        let payload: Vec<u8> = (0..64 + i % 100)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let payload = Bytes::from(payload);
        let subject = format!("{name}.{}", i % 5);
        let mut headers = HeaderMap::new();
        headers.insert("X-Index", i.to_string().as_str());
        let publish = Publish::build().payload(payload.clone()).headers(headers);
        acks.push(js.send_publish(subject.clone(), publish).await.unwrap());
        stored.push((i as u64 + 1, subject, Some(i.to_string()), payload));
    }
    for (ack, expected) in acks.into_iter().zip(&stored) {
        assert_eq!(ack.await.unwrap().sequence, expected.0);
    }
    stored
}

/// Every message of stream `name`, in order, through an ordered consumer.
async fn read_all(js: &Context, name: &str, count: usize) -> Vec<Stored> {
    let stream = js.get_stream(name).await.unwrap();
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig::default())
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let message = messages.next().await.unwrap().unwrap();
        let sequence = message.info().unwrap().stream_sequence;
        let header = message
            .headers
            .as_ref()
            .and_then(|h| h.get("X-Index"))
            .map(|v| v.as_str().to_owned());
        out.push((
            sequence,
            message.subject.to_string(),
            header,
            message.payload.clone(),
        ));
    }
    out
}

/// A durable pull consumer `name` on `stream` that has taken and acked the first `acked`
/// messages, so its state is worth restoring.
async fn durable_with_acks(stream: &Stream, name: &str, acked: usize) -> PullConsumer {
    let consumer: PullConsumer = stream
        .create_consumer(consumer::pull::Config {
            durable_name: Some(name.to_owned()),
            ..Default::default()
        })
        .await
        .unwrap();
    let messages: Vec<_> = consumer
        .fetch()
        .max_messages(acked)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(messages.len(), acked);
    for message in &messages {
        message.double_ack().await.unwrap();
    }
    consumer
}

#[tokio::test]
async fn a_stream_and_its_consumer_survive_a_snapshot_in_small_chunks_and_a_restore() {
    let (_server, js) = jetstream().await;
    let stream = file_stream(&js, "SNAP").await;
    let published = fill(&js, "SNAP", MESSAGES).await;
    durable_with_acks(&stream, "WORKER", 25).await;

    // 1 KiB chunks and a 4 KiB window: the server stops every four chunks until acked.
    let mut snapshot = stream
        .snapshot()
        .chunk_size(1024)
        .window_size(4096)
        .start()
        .await
        .unwrap();
    assert_eq!(snapshot.config().name, "SNAP");
    assert_eq!(snapshot.state().messages, MESSAGES as u64);
    assert_eq!(snapshot.state().last_sequence, MESSAGES as u64);
    let mut data = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = snapshot.try_next().await.unwrap() {
        assert!(!chunk.is_empty() && chunk.len() <= 1024, "{}", chunk.len());
        data.extend_from_slice(&chunk);
        chunks += 1;
    }
    assert!(chunks > 100, "only {chunks} chunks");
    // Ended: the stream stays ended.
    assert!(snapshot.next().await.is_none());
    let (config, state) = (snapshot.config().clone(), snapshot.state().clone());

    js.delete_stream("SNAP").await.unwrap();
    let info = js
        .restore_stream(config, Some(state), &data[..])
        .await
        .unwrap();
    assert_eq!(info.config.name, "SNAP");
    assert_eq!(info.state.messages, MESSAGES as u64);

    let restored = js.get_stream("SNAP").await.unwrap();
    let worker = restored.consumer_info("WORKER").await.unwrap();
    assert_eq!(worker.ack_floor.stream_sequence, 25);
    assert_eq!(worker.num_pending, (MESSAGES - 25) as u64);
    assert_eq!(read_all(&js, "SNAP", MESSAGES).await, published);
}

#[tokio::test]
async fn a_backup_directory_without_consumers_restores_the_messages_alone() {
    let (_server, js) = jetstream().await;
    let stream = file_stream(&js, "DIR").await;
    let published = fill(&js, "DIR", 200).await;
    durable_with_acks(&stream, "WORKER", 5).await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("backup");

    let snapshot = stream.snapshot().no_consumers(true).start().await.unwrap();
    let written = snapshot.to_directory(&target).await.unwrap();
    let data = std::fs::metadata(target.join("stream.tar.s2")).unwrap();
    assert_eq!(data.len(), written);
    let metadata: serde_json::Value =
        serde_json::from_slice(&std::fs::read(target.join("backup.json")).unwrap()).unwrap();
    assert_eq!(metadata["config"]["name"], "DIR");
    assert_eq!(metadata["state"]["messages"], 200);
    // The server's JSON as sent: fields at their defaults too, which rnats' typed config
    // leaves out when it writes one.
    assert_eq!(metadata["config"]["sealed"], false);

    js.delete_stream("DIR").await.unwrap();
    let info = js.restore_stream_from_directory(&target).await.unwrap();
    assert_eq!(info.state.messages, 200);
    let restored = js.get_stream("DIR").await.unwrap();
    let names: Vec<String> = restored.consumer_names().try_collect().await.unwrap();
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(read_all(&js, "DIR", 200).await, published);
}

#[tokio::test]
async fn restoring_over_an_existing_stream_is_refused() {
    let (_server, js) = jetstream().await;
    let stream = file_stream(&js, "TAKEN").await;
    fill(&js, "TAKEN", 10).await;
    let mut snapshot = stream.snapshot().start().await.unwrap();
    let mut data = Vec::new();
    snapshot.write_to(&mut data).await.unwrap();

    let error = js
        .restore_stream(snapshot.config().clone(), None, &data[..])
        .await
        .unwrap_err();
    assert_eq!(error.kind(), RestoreErrorKind::AlreadyExists, "{error}");
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(
        refusal.error_code(),
        ErrorCode::STREAM_NAME_EXIST_RESTORE_FAILED
    );
    // The stream is as it was.
    assert_eq!(
        js.get_stream("TAKEN")
            .await
            .unwrap()
            .cached_info()
            .state
            .messages,
        10
    );
}

#[tokio::test]
async fn a_snapshot_of_a_missing_stream_is_refused() {
    let (_server, js) = jetstream().await;
    let missing = js.get_stream_no_info("MISSING").await.unwrap();
    let error = missing.snapshot().start().await.unwrap_err();
    assert_eq!(error.kind(), SnapshotErrorKind::NotFound, "{error}");
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_NOT_FOUND);
}

#[tokio::test]
async fn data_that_is_not_a_snapshot_is_refused() {
    let (_server, js) = jetstream().await;
    let garbage: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
    let config = Config {
        name: "JUNK".to_owned(),
        subjects: vec!["junk.>".to_owned()],
        ..Default::default()
    };
    // Bounded, so a hang fails the test rather than stalling the suite.
    let error = tokio::time::timeout(
        Duration::from_secs(60),
        js.restore_stream(config, None, &garbage[..]),
    )
    .await
    .expect("the restore hung")
    .unwrap_err();
    match error.kind() {
        RestoreErrorKind::JetStream(refusal) => {
            assert_eq!(refusal.error_code(), ErrorCode::STREAM_RESTORE, "{refusal}")
        }
        other => panic!("expected the server's refusal, got {other:?}: {error}"),
    }
    assert!(js.get_stream("JUNK").await.is_err());
}

#[tokio::test]
async fn a_restore_from_json_sends_the_configuration_as_given() {
    let (_server, js) = jetstream().await;
    let stream = file_stream(&js, "EDITED").await;
    let stored = fill(&js, "EDITED", 20).await;
    let mut snapshot = stream.snapshot().start().await.unwrap();
    let mut data = Vec::new();
    snapshot.write_to(&mut data).await.unwrap();
    let backup: serde_json::Value = serde_json::from_slice(&snapshot.backup_json()).unwrap();
    js.delete_stream("EDITED").await.unwrap();

    // The JSON goes as given, not through the typed configuration (which would drop a field
    // it has no name for): a field no server knows reaches the server, which refuses it.
    let mut config = backup["config"].clone();
    config["some_future_field"] = serde_json::json!({ "on": true });
    let refused = js
        .restore_stream_json(config.clone(), Some(backup["state"].clone()), &data[..])
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("some_future_field"),
        "{refused}"
    );
    // Edited as a tool would, it restores.
    config.as_object_mut().unwrap().remove("some_future_field");
    config["description"] = "restored from JSON".into();
    let info = js
        .restore_stream_json(config, Some(backup["state"].clone()), &data[..])
        .await
        .unwrap();
    assert_eq!(
        info.config.description.as_deref(),
        Some("restored from JSON")
    );
    assert_eq!(read_all(&js, "EDITED", stored.len()).await, stored);

    let nameless = js
        .restore_stream_json(serde_json::json!({ "subjects": ["x"] }), None, &data[..])
        .await
        .unwrap_err();
    assert_eq!(nameless.kind(), RestoreErrorKind::InvalidBackup);
}
