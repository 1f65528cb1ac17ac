//! Consumer priority groups (ADR-42) on one-shot pulls against a real nats-server: a pinned
//! client keeps its pin across fetches and batches, loses it to an unpin (the server's `423`
//! clears it), overflow thresholds, and prioritized requests.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::TryStreamExt;
use rnats_jetstream::consumer::{PriorityPolicy, PullConsumer, pull};
use rnats_jetstream::stream::{self, StorageType};
use rnats_jetstream::{AckKind, Context};
use rnats_test_server::NatsServer;

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    js.create_stream(stream::Config {
        name: "JOBS".into(),
        subjects: vec!["jobs.>".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    (server, js)
}

async fn publish(js: &Context, count: usize) {
    for i in 0..count {
        js.publish("jobs.x", Bytes::from(i.to_string()))
            .await
            .unwrap()
            .await
            .unwrap();
    }
}

async fn consumer(js: &Context, policy: PriorityPolicy) -> PullConsumer {
    let stream = js.get_stream("JOBS").await.unwrap();
    stream
        .create_consumer(pull::Config {
            durable_name: Some("workers".into()),
            priority_policy: policy,
            priority_groups: vec!["g".into()],
            priority_timeout: Duration::from_secs(60),
            ..Default::default()
        })
        .await
        .unwrap()
}

/// A second handle to the same consumer, as another client would have.
async fn other_handle(js: &Context) -> PullConsumer {
    js.get_stream("JOBS")
        .await
        .unwrap()
        .get_consumer("workers")
        .await
        .unwrap()
}

async fn fetch(consumer: &PullConsumer, max: usize) -> Vec<String> {
    let messages: Vec<_> = consumer
        .fetch()
        .pinned()
        .group("g")
        .max_messages(max)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut payloads = Vec::new();
    for message in messages {
        message.ack_with(AckKind::Ack).await.unwrap();
        payloads.push(String::from_utf8(message.payload.to_vec()).unwrap());
    }
    payloads
}

#[tokio::test]
async fn a_pinned_client_keeps_its_pin_across_fetches_until_unpinned() {
    let (_server, js) = jetstream().await;
    publish(&js, 6).await;
    let first = consumer(&js, PriorityPolicy::PinnedClient).await;
    let second = other_handle(&js).await;

    assert_eq!(fetch(&first, 2).await, ["0", "1"]);
    let pin = first.pin_id().unwrap();
    // The other client is not served while the pin is held.
    assert!(fetch(&second, 2).await.is_empty());
    assert_eq!(second.pin_id(), None);
    // A batch (waiting pull) of the pinned handle keeps the same pin.
    let batch: Vec<_> = first
        .batch()
        .pinned()
        .group("g")
        .max_messages(1)
        .expires(Duration::from_secs(5))
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(batch.len(), 1);
    batch[0].ack_with(AckKind::Ack).await.unwrap();
    assert_eq!(first.pin_id().as_deref(), Some(pin.as_str()));

    // Unpinned: the next client to pull takes the pin.
    first.unpin("g").await.unwrap();
    assert_eq!(first.pin_id(), None);
    assert_eq!(fetch(&second, 1).await, ["3"]);
    let new_pin = second.pin_id().unwrap();
    assert_ne!(new_pin, pin);

    // Unpinned behind its back (through the stream), a handle still sends its old pin:
    // the server answers 423, the pull ends empty, and the handle forgets the pin.
    let stream = js.get_stream("JOBS").await.unwrap();
    stream.unpin_consumer("workers", "g").await.unwrap();
    assert!(fetch(&second, 1).await.is_empty());
    assert_eq!(second.pin_id(), None);
    assert_eq!(fetch(&second, 2).await, ["4", "5"]);
    assert_ne!(second.pin_id().unwrap(), new_pin);
}

#[tokio::test]
async fn one_shot_pulls_of_a_pinned_group_need_pinned_as_in_async_nats() {
    let (_server, js) = jetstream().await;
    publish(&js, 1).await;
    let consumer = consumer(&js, PriorityPolicy::PinnedClient).await;
    // async-nats' own calls refuse, as async-nats does: nothing is pulled.
    let error = consumer.fetch().group("g").messages().await.err().unwrap();
    assert_eq!(error.kind(), pull::BatchErrorKind::PinnedClient);
    let error = consumer.batch().group("g").messages().await.err().unwrap();
    assert_eq!(error.kind(), pull::BatchErrorKind::PinnedClient);
    assert_eq!(
        consumer.sequence(1).err().map(|e| e.kind()),
        Some(pull::BatchErrorKind::PinnedClient)
    );
    assert_eq!(consumer.pin_id(), None);
    // With pinned() the same pull is served and the handle holds the pin.
    assert_eq!(fetch(&consumer, 1).await, ["0"]);
    assert!(consumer.pin_id().is_some());
}

#[tokio::test]
async fn overflow_pulls_are_served_only_past_their_thresholds() {
    let (_server, js) = jetstream().await;
    publish(&js, 5).await;
    let consumer = consumer(&js, PriorityPolicy::Overflow).await;
    let over = |min_pending| {
        let consumer = consumer.clone();
        async move {
            let messages: Vec<_> = consumer
                .fetch()
                .group("g")
                .min_pending(min_pending)
                .max_messages(1)
                .messages()
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            messages.len()
        }
    };
    // Five pending: a pull that waits for ten gets nothing, one for three is served.
    assert_eq!(over(10).await, 0);
    assert_eq!(over(3).await, 1);

    // An ack-pending threshold: nothing is unacked yet but the one just fetched.
    let messages: Vec<_> = consumer
        .fetch()
        .group("g")
        .min_ack_pending(5)
        .max_messages(1)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(messages.is_empty());
}

#[tokio::test]
async fn prioritized_pulls_name_their_priority() {
    let (_server, js) = jetstream().await;
    publish(&js, 2).await;
    let consumer = consumer(&js, PriorityPolicy::Prioritized).await;
    let batch: Vec<_> = consumer
        .batch()
        .group("g")
        .priority(1)
        .max_messages(2)
        .expires(Duration::from_secs(5))
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(batch.len(), 2);
    let fetched: Vec<_> = consumer
        .fetch()
        .group("g")
        .priority(0)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    // Both were delivered to the batch and are awaiting acks.
    assert!(fetched.is_empty());
    // A pull without the group is refused by the server.
    let error = consumer
        .fetch()
        .messages()
        .await
        .unwrap()
        .try_collect::<Vec<_>>()
        .await;
    assert!(error.is_err());
}
