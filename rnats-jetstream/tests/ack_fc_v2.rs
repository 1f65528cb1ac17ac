//! ADR-53's `js_ack_fc_v2` server feature flag: v2 ack reply subjects (with the domain and the
//! account hash) and flow control answered on `$JS.FC.`. nats-server 2.15 has the flag off by
//! default and is expected to turn it on; these tests turn it on explicitly, and CI runs the
//! whole JetStream test set a second time with `RNATS_TEST_FEATURE_FLAGS=js_ack_fc_v2`.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_jetstream::consumer::{self, AckPolicy, pull, push};
use rnats_jetstream::message::Info;
use rnats_jetstream::stream::{self, StorageType};
use rnats_test_server::NatsServer;

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

fn server_with_v2_acks() -> NatsServer {
    NatsServer::builder()
        .jetstream(true)
        .feature_flag("js_ack_fc_v2")
        .spawn()
        .unwrap()
}

async fn stream(js: &rnats_jetstream::Context, name: &str, subject: &str) -> stream::Stream {
    js.create_stream(stream::Config {
        name: name.into(),
        subjects: vec![subject.into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn v2_ack_subjects_are_read_and_acks_on_them_count() {
    let server = server_with_v2_acks();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    let orders = stream(&js, "V2", "v2.>").await;
    for n in 0..3 {
        js.publish("v2.order", format!("order {n}").into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let consumer = orders
        .create_consumer(pull::Config {
            durable_name: Some("billing".into()),
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut batch = consumer.fetch().max_messages(3).messages().await.unwrap();
    let mut seen = 0;
    while let Some(message) = tokio::time::timeout(WAIT, batch.next()).await.unwrap() {
        let message = message.unwrap();
        let reply = message.reply.as_ref().unwrap().to_string();
        // `$JS.ACK.<domain>.<account hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>`
        assert_eq!(reply.split('.').count(), 11, "{reply}");
        let info = message.info().unwrap();
        assert_eq!(info.domain, None, "`_` is no domain");
        assert!(info.acc_hash.is_some_and(|hash| !hash.is_empty()));
        assert_eq!((info.stream, info.consumer), ("V2", "billing"));
        seen += 1;
        assert_eq!(info.stream_sequence, seen);
        assert_eq!(info.pending, 3 - seen);
        assert_eq!(
            Info::from_ack_subject(&reply).unwrap().stream_sequence,
            seen
        );
        message.double_ack().await.unwrap();
    }
    assert_eq!(seen, 3);
    let info = consumer.clone().info().await.unwrap().clone();
    assert_eq!(info.ack_floor.stream_sequence, 3);
    assert_eq!(info.num_ack_pending, 0);
}

#[tokio::test]
async fn push_consumers_answer_v2_flow_control_and_ack_by_it() {
    let server = server_with_v2_acks();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    let bulk = stream(&js, "V2FC", "v2fc.>").await;
    // Well past the server's flow-control window: delivery stalls unless answered.
    const COUNT: u64 = 2000;
    let payload = Bytes::from(vec![b'x'; 8 * 1024]);
    let mut acks = Vec::new();
    for _ in 0..COUNT {
        acks.push(js.publish("v2fc.big", payload.clone()).await.unwrap());
    }
    for ack in acks {
        ack.await.unwrap();
    }
    // The answers go to the flow-control requests' `$JS.FC.` subjects: this test sees them.
    let mut answers = client.subscribe("$JS.FC.>").await.unwrap();
    client.flush().await.unwrap();
    let consumer: consumer::PushConsumer = bulk
        .create_consumer(push::Config {
            deliver_subject: client.new_inbox(),
            durable_name: Some("fc".into()),
            ack_policy: AckPolicy::FlowControl,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    for expected in 1..=COUNT {
        let message = tokio::time::timeout(WAIT, messages.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, expected);
    }
    let answer = tokio::time::timeout(WAIT, answers.next())
        .await
        .unwrap()
        .unwrap();
    // v2: `$JS.FC.<domain>.<account hash>.<stream>.<consumer>.<token>`.
    let tokens: Vec<&str> = answer.subject.split('.').collect();
    assert_eq!(tokens.len(), 7, "{}", answer.subject);
    assert_eq!(tokens[2], "_", "{}", answer.subject);
    assert_eq!(&tokens[4..6], ["V2FC", "fc"], "{}", answer.subject);
}

#[cfg(feature = "kv")]
#[tokio::test]
async fn kv_watchers_run_on_v2_acks() {
    let server = server_with_v2_acks();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    let kv = js
        .create_key_value(rnats_jetstream::kv::Config {
            bucket: "settings".into(),
            history: 5,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut watch = kv.watch_all().await.unwrap();
    for n in 0..5u8 {
        kv.put(format!("key{n}"), vec![n].into()).await.unwrap();
    }
    for n in 0..5u8 {
        let entry = tokio::time::timeout(WAIT, watch.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(entry.key, format!("key{n}"));
        assert_eq!(entry.value.as_ref(), [n]);
    }
}

#[tokio::test]
async fn ordered_consumers_run_on_v2_acks() {
    let server = server_with_v2_acks();
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    let history = stream(&js, "V2ORD", "v2ord.>").await;
    for n in 0..50u64 {
        js.publish("v2ord.a", n.to_string().into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let ordered = history
        .create_consumer(pull::OrderedConfig::default())
        .await
        .unwrap();
    let mut messages = ordered.messages().await.unwrap();
    for expected in 1..=50u64 {
        let message = tokio::time::timeout(WAIT, messages.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, expected);
    }
}
