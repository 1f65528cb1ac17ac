//! Publishing to streams against a real nats-server with JetStream: acks, dedup, expectations,
//! pipelining under the in-flight limit, retry on no responders (ADR-22), account info.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use rnats_jetstream::context::{AccountErrorKind, Publish, PublishErrorKind};
use rnats_jetstream::{Context, ContextBuilder, ErrorCode};
use rnats_test_server::NatsServer;
use serde_json::json;

fn jetstream_server() -> NatsServer {
    NatsServer::builder().jetstream(true).spawn().unwrap()
}

/// Creates a stream through the raw API (the stream module has its own tests).
async fn add_stream(js: &Context, name: &str, subjects: &[&str]) {
    let reply: serde_json::Value = js
        .request(
            format!("STREAM.CREATE.{name}"),
            &json!({ "name": name, "subjects": subjects, "storage": "memory" }),
        )
        .await
        .unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
}

/// The stream's message count, from the raw API.
async fn stream_messages(js: &Context, name: &str) -> u64 {
    let info: serde_json::Value = js
        .request(format!("STREAM.INFO.{name}"), &())
        .await
        .unwrap();
    info["state"]["messages"].as_u64().unwrap()
}

#[tokio::test]
async fn a_publish_is_acked_with_stream_and_sequence() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    add_stream(&js, "ORDERS", &["orders.>"]).await;
    for expected in 1..=3 {
        let ack = js
            .publish("orders.new", Bytes::from("o"))
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(ack.stream, "ORDERS");
        assert_eq!(ack.sequence, expected);
        assert!(!ack.duplicate);
    }
    let mut headers = rnats_core::HeaderMap::new();
    headers.insert("X-Kind", "with-headers");
    let ack = js
        .publish_with_headers("orders.new", headers, Bytes::from("h"))
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(ack.sequence, 4);
}

#[tokio::test]
async fn message_ids_deduplicate_and_expectations_are_checked() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    add_stream(&js, "EVENTS", &["events.>"]).await;
    let first = js
        .send_publish(
            "events.a",
            Publish::build().payload("1".into()).message_id("m-1"),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    let again = js
        .send_publish(
            "events.a",
            Publish::build().payload("1".into()).message_id("m-1"),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    assert!(!first.duplicate && again.duplicate);
    assert_eq!(again.sequence, first.sequence);
    assert_eq!(stream_messages(&js, "EVENTS").await, 1);

    let err = js
        .send_publish(
            "events.a",
            Publish::build()
                .payload("2".into())
                .expected_last_sequence(7),
        )
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::WrongLastSequence);
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(detail.error_code(), ErrorCode::STREAM_WRONG_LAST_SEQUENCE);
    assert_eq!(detail.code(), 400);

    let err = js
        .send_publish(
            "events.a",
            Publish::build()
                .payload("2".into())
                .expected_last_message_id("not-m-1"),
        )
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::WrongLastMessageId);

    let ok = js
        .send_publish(
            "events.a",
            Publish::build()
                .payload("2".into())
                .expected_stream("EVENTS")
                .expected_last_sequence(1)
                .expected_last_subject_sequence(1)
                .expected_last_message_id("m-1"),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(ok.sequence, 2);
}

#[tokio::test]
async fn the_last_subject_sequence_can_be_expected_for_a_wildcard_filter() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    add_stream(&js, "FILTERED", &["a.*"]).await;
    for (subject, sequence) in [("a.1", 1), ("a.2", 2)] {
        let ack = js
            .publish(subject, Bytes::from("x"))
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(ack.sequence, sequence);
    }
    // a.3 has no message of its own: only the filter makes 2 the last sequence to expect.
    let ack = js
        .send_publish(
            "a.3",
            Publish::build()
                .payload("3".into())
                .expected_last_subject_sequence_for("a.*", 2),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(ack.sequence, 3);

    let err = js
        .send_publish(
            "a.3",
            Publish::build()
                .payload("stale".into())
                .expected_last_subject_sequence_for("a.*", 1),
        )
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::WrongLastSequence);
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(detail.error_code(), ErrorCode::STREAM_WRONG_LAST_SEQUENCE);
    assert_eq!(stream_messages(&js, "FILTERED").await, 3);
}

#[tokio::test]
async fn no_stream_is_stream_not_found_after_the_retries() {
    let server = jetstream_server();
    let js = ContextBuilder::new()
        .retry_on_no_responders(2, Duration::from_millis(10))
        .build(rnats_core::connect(server.url()).await.unwrap());
    let err = js
        .publish("nobody.stores.this", Bytes::from("x"))
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::StreamNotFound);
}

#[tokio::test]
async fn a_publish_made_before_the_stream_exists_succeeds_on_retry() {
    let server = jetstream_server();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = ContextBuilder::new()
        .retry_on_no_responders(5, Duration::from_millis(50))
        .build(client.clone());
    let ack = js.publish("late.stream", Bytes::from("x")).await.unwrap();
    // The server answered the first attempt (503, no stream) before this PONG.
    client.flush().await.unwrap();
    add_stream(&js, "LATE", &["late.>"]).await;
    let ack = ack.await.unwrap();
    assert_eq!((ack.stream.as_str(), ack.sequence), ("LATE", 1));
}

#[tokio::test]
async fn pipelined_publishes_respect_the_in_flight_limit_and_all_land() {
    let server = jetstream_server();
    let js = ContextBuilder::new()
        .max_ack_inflight(256)
        .build(rnats_core::connect(server.url()).await.unwrap());
    add_stream(&js, "BULK", &["bulk.>"]).await;
    let total = 100_000u64;
    let mut acks = std::collections::VecDeque::new();
    for i in 0..total {
        let ack = js
            .publish("bulk.x", Bytes::from_static(b"0123456789"))
            .await
            .unwrap();
        acks.push_back(ack);
        // Await the oldest once 256 are out: what a pipelined publisher does.
        if acks.len() == 256 {
            let ack = acks.pop_front().unwrap().await.unwrap();
            assert_eq!(ack.sequence, i + 1 - 255);
        }
    }
    for ack in acks {
        ack.await.unwrap();
    }
    assert_eq!(stream_messages(&js, "BULK").await, total);
}

#[tokio::test]
async fn dropped_ack_futures_still_count_until_their_ack_arrives() {
    let server = jetstream_server();
    let js = ContextBuilder::new()
        .max_ack_inflight(64)
        .build(rnats_core::connect(server.url()).await.unwrap());
    add_stream(&js, "FIRE", &["fire.>"]).await;
    // Fire and forget, well past the limit: publishing waits for room instead of failing.
    for _ in 0..1_000 {
        drop(
            js.publish("fire.x", Bytes::from_static(b"f"))
                .await
                .unwrap(),
        );
    }
    js.wait_for_acks().await;
    assert_eq!(stream_messages(&js, "FIRE").await, 1_000);
}

#[tokio::test]
async fn without_backpressure_a_full_window_is_max_ack_pending() {
    let server = jetstream_server();
    let js = ContextBuilder::new()
        .max_ack_inflight(1)
        .backpressure_on_inflight(false)
        .build(rnats_core::connect(server.url()).await.unwrap());
    add_stream(&js, "ONE", &["one.>"]).await;
    let first = js.publish("one.x", Bytes::from("1")).await.unwrap();
    let err = js.publish("one.x", Bytes::from("2")).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::MaxAckPending);
    first.await.unwrap();
    js.publish("one.x", Bytes::from("3"))
        .await
        .unwrap()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_oversize_publish_is_refused_before_sending() {
    let server = NatsServer::builder()
        .jetstream(true)
        .max_payload(1024)
        .spawn()
        .unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    let sent = client.statistics().out_messages.load(Ordering::Relaxed);
    let err = js
        .publish("big", Bytes::from(vec![0; 2048]))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::MaxPayloadExceeded);
    assert_eq!(
        client.statistics().out_messages.load(Ordering::Relaxed),
        sent
    );
}

#[tokio::test]
async fn query_account_reports_usage_and_a_server_without_jetstream_is_unavailable() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    add_stream(&js, "ACC", &["acc.>"]).await;
    let account = js.query_account().await.unwrap();
    assert_eq!(account.streams, 1);
    assert!(account.requests.total > 0);

    let plain = NatsServer::start();
    let js = ContextBuilder::new()
        .timeout(Duration::from_secs(2))
        .build(rnats_core::connect(plain.url()).await.unwrap());
    let err = js.query_account().await.unwrap_err();
    assert_eq!(err.kind(), AccountErrorKind::JetStreamUnavailable);
}

#[tokio::test]
async fn a_domain_context_sends_under_the_domain_prefix() {
    let server = NatsServer::builder()
        .jetstream(true)
        .config("jetstream { domain: hub }")
        .spawn()
        .unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::with_domain(client.clone(), "hub");
    assert_eq!(js.prefix(), "$JS.hub.API");
    add_stream(&js, "DOM", &["dom.>"]).await;
    let ack = js
        .publish("dom.x", Bytes::from("x"))
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(ack.domain, "hub");
    let prefixed = rnats_jetstream::with_prefix(client, "$JS.hub.API.");
    assert_eq!(prefixed.prefix(), "$JS.hub.API");
    assert_eq!(prefixed.query_account().await.unwrap().streams, 1);
}

#[tokio::test]
async fn a_message_with_ttl_never_outlives_the_streams_max_age() {
    let server = jetstream_server();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let stream = js
        .create_stream(rnats_jetstream::stream::Config {
            name: "AGED".into(),
            subjects: vec!["aged.>".into()],
            storage: rnats_jetstream::stream::StorageType::Memory,
            max_age: Duration::from_secs(1),
            allow_message_ttl: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let publish = |subject: &'static str, publish: Publish| {
        let js = js.clone();
        async move {
            js.send_publish(subject, publish)
                .await
                .unwrap()
                .await
                .unwrap()
                .sequence
        }
    };
    let kept = publish("aged.kept", Publish::build().ttl_never()).await;
    let aged = publish("aged.plain", Publish::build()).await;
    // The later message goes with max_age; the earlier one would have gone before it. The
    // server ages messages out on its own clock, so its store is looked at until then.
    tokio::time::timeout(Duration::from_secs(20), async {
        while stream.get_raw_message(aged).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("max_age removed nothing");
    let message = stream.get_raw_message(kept).await.unwrap();
    assert_eq!(message.headers.get("Nats-TTL").unwrap().as_str(), "never");

    // Whole seconds, as the server counts them: under one is refused there, as nats.go's is.
    let error = js
        .send_publish(
            "aged.short",
            Publish::build().ttl(Duration::from_millis(500)),
        )
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(error.kind(), PublishErrorKind::Other);
    let detail = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(detail.error_code(), ErrorCode::MESSAGE_TTL_INVALID);
}
