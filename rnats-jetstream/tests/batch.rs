//! Atomic batch publishing (ADR-50) against a real nats-server: commits with a message and
//! with end-of-batch, every refusal as its kind, and nothing of a failed batch stored.
#![allow(clippy::unwrap_used, missing_docs)]

use bytes::Bytes;
use rnats_jetstream::batch::BatchPublishErrorKind;
use rnats_jetstream::context::Publish;
use rnats_jetstream::stream::{Config, StorageType};
use rnats_jetstream::{Context, ErrorCode};
use rnats_test_server::NatsServer;

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

async fn atomic_stream(js: &Context, name: &str, atomic: bool) {
    js.create_stream(Config {
        name: name.to_owned(),
        subjects: vec![format!("{}.>", name.to_lowercase())],
        storage: StorageType::Memory,
        allow_atomic_publish: atomic,
        ..Default::default()
    })
    .await
    .unwrap();
}

async fn stored(js: &Context, name: &str) -> u64 {
    let mut stream = js.get_stream(name).await.unwrap();
    stream.info().await.unwrap().state.messages
}

#[tokio::test]
async fn a_committed_batch_is_stored_whole_and_acked_once() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "ORDERS", true).await;
    let mut batch = js.atomic_batch();
    let id = batch.id().to_owned();
    batch
        .add("orders.1.street", "Main St 1".into())
        .await
        .unwrap();
    batch
        .add("orders.1.city", "Springfield".into())
        .await
        .unwrap();
    // Staged, not stored, until the commit.
    assert_eq!(stored(&js, "ORDERS").await, 0);
    let ack = batch.commit("orders.1.zip", "12345".into()).await.unwrap();
    assert_eq!(ack.stream, "ORDERS");
    assert_eq!(ack.sequence, 3);
    assert_eq!(ack.batch_id.as_deref(), Some(id.as_str()));
    assert_eq!(ack.batch_size, Some(3));
    assert_eq!(stored(&js, "ORDERS").await, 3);
    let stream = js.get_stream("ORDERS").await.unwrap();
    let last = stream.get_raw_message(3).await.unwrap();
    assert_eq!(last.payload, Bytes::from("12345"));
    assert_eq!(last.headers.get("Nats-Batch-Commit").unwrap().as_str(), "1");
}

#[tokio::test]
async fn an_end_of_batch_commit_stores_only_the_added_messages() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "EOB", true).await;
    let mut batch = js.atomic_batch().ack_every(1);
    for i in 0..5 {
        batch.add(format!("eob.{i}"), "x".into()).await.unwrap();
    }
    let ack = batch.commit_eob().await.unwrap();
    assert_eq!((ack.sequence, ack.batch_size), (5, Some(5)));
    assert_eq!(stored(&js, "EOB").await, 5);

    let empty = js.atomic_batch();
    let err = empty.commit_eob().await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::Empty);
}

#[tokio::test]
async fn a_stream_without_atomic_publish_refuses_the_first_message() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "PLAIN", false).await;
    let mut batch = js.atomic_batch();
    let err = batch.add("plain.a", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::Disabled);
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(detail.error_code(), ErrorCode::ATOMIC_PUBLISH_DISABLED);
    // The batch is over.
    let err = batch.add("plain.a", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::Closed);
    assert_eq!(stored(&js, "PLAIN").await, 0);

    let mut batch = js.atomic_batch();
    let err = batch.add("nowhere.a", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::StreamNotFound);
}

#[tokio::test]
async fn a_failed_expectation_stores_nothing_of_the_batch() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "ACCOUNTS", true).await;
    js.publish("accounts.alice", "100".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let mut batch = js.atomic_batch();
    batch
        .add("accounts.audit", "move 10 from alice to bob".into())
        .await
        .unwrap();
    batch.add("accounts.bob", "10".into()).await.unwrap();
    // alice's last sequence is 1, not 7: the whole batch must go.
    let err = batch
        .commit_message(
            "accounts.alice",
            Publish::build()
                .payload("90".into())
                .expected_last_subject_sequence(7),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::ExpectationFailed);
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(detail.error_code(), ErrorCode::STREAM_WRONG_LAST_SEQUENCE);
    assert_eq!(stored(&js, "ACCOUNTS").await, 1);

    // The same batch with the right expectation goes through.
    let ack = js
        .publish_atomic_batch([
            ("accounts.audit", Publish::build().payload("move".into())),
            ("accounts.bob", Publish::build().payload("10".into())),
            (
                "accounts.alice",
                Publish::build()
                    .payload("90".into())
                    .expected_last_subject_sequence(1),
            ),
        ])
        .await
        .unwrap();
    assert_eq!(ack.batch_size, Some(3));
    assert_eq!(stored(&js, "ACCOUNTS").await, 4);
}

#[tokio::test]
async fn an_abandoned_batch_is_dropped_by_the_server_at_once() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "GONE", true).await;
    let mut first = js.atomic_batch().with_id("reused").unwrap();
    first.add("gone.a", "1".into()).await.unwrap();
    first.add("gone.b", "2".into()).await.unwrap();
    first.abandon().await.unwrap();
    // Had the server kept the batch, a new first message with its id would be a gap.
    let mut second = js.atomic_batch().with_id("reused").unwrap();
    second.add("gone.c", "3".into()).await.unwrap();
    let ack = second.commit("gone.d", "4".into()).await.unwrap();
    assert_eq!(ack.batch_size, Some(2));
    assert_eq!(stored(&js, "GONE").await, 2);

    // A batch whose staged message went missing is incomplete: send message 1, then one
    // that skips to 3 under the same id through the raw client, then commit 4.
    let mut batch = js.atomic_batch().with_id("holed").unwrap();
    batch.add("gone.e", "5".into()).await.unwrap();
    let mut headers = rnats_core::HeaderMap::new();
    headers.insert("Nats-Batch-Id", "holed");
    headers.insert("Nats-Batch-Sequence", "3");
    js.client()
        .publish_with_headers("gone.f", headers, "6".into())
        .await
        .unwrap();
    let err = batch.commit("gone.g", "7".into()).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::Incomplete);
    assert_eq!(stored(&js, "GONE").await, 2);
}

#[tokio::test]
async fn duplicates_are_refused_by_the_client_and_by_the_server() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "DEDUP", true).await;
    // Within the batch: refused before anything is sent.
    let err = js
        .publish_atomic_batch([
            ("dedup.a", Publish::build().message_id("m1")),
            ("dedup.b", Publish::build().message_id("m1")),
        ])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::DuplicateMessageId);
    assert_eq!(stored(&js, "DEDUP").await, 0);

    // Already in the stream: the server refuses the commit.
    js.send_publish("dedup.a", Publish::build().message_id("m1"))
        .await
        .unwrap()
        .await
        .unwrap();
    let mut batch = js.atomic_batch();
    batch.add("dedup.x", "x".into()).await.unwrap();
    let err = batch
        .commit_message("dedup.b", Publish::build().message_id("m1"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::DuplicateMessageId);
    assert_eq!(stored(&js, "DEDUP").await, 1);
}

#[tokio::test]
async fn limits_known_to_the_client_are_checked_before_sending() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "LIMITS", true).await;
    let mut batch = js.atomic_batch().max_messages(2);
    batch.add("limits.a", "1".into()).await.unwrap();
    batch.add("limits.b", "2".into()).await.unwrap();
    let err = batch.add("limits.c", "3".into()).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::TooLarge);
    // A refusal before sending leaves the batch as it was.
    let err = batch
        .add_message(
            "limits.c",
            Publish::build().expected_last_message_id("whatever"),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::TooLarge);
    let ack = batch.commit_eob().await.unwrap();
    assert_eq!(ack.batch_size, Some(2));

    let mut batch = js.atomic_batch();
    let err = batch
        .add_message("limits.a", Publish::build().expected_last_message_id("x"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::UnsupportedHeader);
    batch.add("limits.a", "1".into()).await.unwrap();
    let err = batch
        .add_message("limits.b", Publish::build().expected_last_sequence(2))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::UnsupportedHeader);
    let big = Bytes::from(vec![b'x'; js.client().max_payload() + 1]);
    let err = batch.add("limits.b", big).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::MaxPayloadExceeded);
    batch.abandon().await.unwrap();

    let too_long = "x".repeat(65);
    let err = js.atomic_batch().with_id(too_long).unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::InvalidId);
    assert_eq!(stored(&js, "LIMITS").await, 2);
}

#[tokio::test]
async fn the_servers_batch_limit_is_a_typed_error_and_stores_nothing() {
    let (_server, js) = jetstream().await;
    atomic_stream(&js, "BIG", true).await;
    // Past the client's guard, to see the server's own answer.
    let mut batch = js.atomic_batch().max_messages(2_000);
    for _ in 0..1_000 {
        batch.add("big.a", "x".into()).await.unwrap();
    }
    let err = batch.commit("big.a", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), BatchPublishErrorKind::TooLarge);
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(
        detail.error_code(),
        ErrorCode::ATOMIC_PUBLISH_TOO_LARGE_BATCH
    );
    assert_eq!(stored(&js, "BIG").await, 0);
}
