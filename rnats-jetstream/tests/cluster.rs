//! JetStream in a three-node cluster: an R3 stream keeps taking writes when its leader dies,
//! and loses nothing it acknowledged; a pinned consumer (ADR-42) moves its pin to another
//! client when the pinned one goes away, and loses no message.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use common::{ACCOUNTS, create_named_stream};
use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::Context;
use rnats_jetstream::consumer::{PriorityPolicy, PullConsumer, pull};
use rnats_jetstream::context::Publish;
use rnats_jetstream::stream::Stream;
use rnats_test_server::{Cluster, Proxy};
use tokio::sync::Notify;

/// Bound on every wait of this file: elections on a loaded 2-core machine take seconds.
const WAIT: Duration = Duration::from_secs(60);
/// The JetStream API timeout of calls that may wait on an election (a new R3 stream or
/// consumer elects its own leader before the server answers): seconds on a loaded machine.
const API_TIMEOUT: Duration = Duration::from_secs(30);
const MESSAGES: usize = 1_000;

/// Creates the R3 stream once the cluster can place it (see [`create_named_stream`]).
async fn create_r3_stream(cluster: &Cluster, js: &Context, name: &str) -> Stream {
    create_stream(cluster, js, name, 3).await
}

/// Creates a stream of `replicas` copies once the cluster can place it, asking with
/// [`API_TIMEOUT`] whatever `js` does.
async fn create_stream(cluster: &Cluster, js: &Context, name: &str, replicas: usize) -> Stream {
    let js = rnats_jetstream::ContextBuilder::new()
        .timeout(API_TIMEOUT)
        .build(js.client());
    create_named_stream(cluster, &js, name, replicas, WAIT).await
}

/// Publishes message `i` with message id `i` until the stream acks it; a retried publish that
/// had been stored already is dropped by the stream's duplicate window.
async fn publish_until_acked(js: &Context, subject: &str, i: usize) {
    loop {
        let publish = Publish::build()
            .payload(Bytes::from(i.to_string()))
            .message_id(i.to_string());
        // No spin while the stream elects a leader: each failed attempt has waited out the
        // ack timeout or the context's no-responders backoff (ADR-22).
        if let Ok(ack) = js.send_publish(subject.to_owned(), publish).await
            && ack.await.is_ok()
        {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r3_stream_survives_losing_its_leader_while_publishing() {
    let mut cluster =
        Cluster::start_with(3, |node| node.jetstream(true).append_config(ACCOUNTS)).unwrap();
    let urls = cluster.urls();
    let client = rnats_core::ConnectOptions::new()
        .retry_on_initial_connect()
        .connect(urls.as_slice())
        .await
        .unwrap();
    let js = rnats_jetstream::ContextBuilder::new()
        .timeout(Duration::from_secs(2))
        .build(client);
    let mut stream = create_r3_stream(&cluster, &js, "R3").await;

    let acked = Arc::new(AtomicUsize::new(0));
    let halfway = Arc::new(Notify::new());
    let publisher = tokio::spawn({
        let (js, acked, halfway) = (js.clone(), acked.clone(), halfway.clone());
        async move {
            for i in 0..MESSAGES {
                publish_until_acked(&js, "R3.events", i).await;
                if acked.fetch_add(1, Ordering::Relaxed) + 1 == MESSAGES / 3 {
                    halfway.notify_one();
                }
            }
        }
    });

    tokio::time::timeout(WAIT, halfway.notified())
        .await
        .expect("the first third was never acked");
    let leader = stream
        .info()
        .await
        .unwrap()
        .cluster
        .as_ref()
        .unwrap()
        .leader
        .clone()
        .unwrap();
    let index: usize = leader
        .strip_prefix("rnats-node-")
        .and_then(|i| i.parse().ok())
        .unwrap_or_else(|| panic!("unexpected leader name {leader}"));
    cluster.node_mut(index).kill();
    let acked_at_kill = acked.load(Ordering::Relaxed);
    assert!(
        acked_at_kill < MESSAGES,
        "the publisher finished before the kill"
    );

    tokio::time::timeout(WAIT, publisher)
        .await
        .expect("publishing stalled after the leader died")
        .unwrap();

    // Every message is there exactly once, served by the two survivors.
    let info = stream.info().await.unwrap();
    assert_eq!(info.state.messages, MESSAGES as u64);
    let new_leader = info.cluster.as_ref().unwrap().leader.clone().unwrap();
    assert_ne!(new_leader, leader, "the dead node still leads");
    let mut seen = BTreeSet::new();
    for sequence in 1..=MESSAGES as u64 {
        let message = stream.get_raw_message(sequence).await.unwrap();
        let n: usize = std::str::from_utf8(&message.payload)
            .unwrap()
            .parse()
            .unwrap();
        assert!(seen.insert(n), "message {n} stored twice");
    }
    assert_eq!(seen, (0..MESSAGES).collect());
}

/// How long a pin outlives its client's last pull (the consumer's `priority_timeout`).
const PINNED_TTL: Duration = Duration::from_secs(2);

/// Pulls up to `max` pinned messages of group `g` waiting up to `expires`, acks them and
/// returns their payloads.
async fn pull_pinned(consumer: &PullConsumer, max: usize, expires: Duration) -> Vec<String> {
    let messages: Vec<_> = consumer
        .batch()
        .pinned()
        .group("g")
        .max_messages(max)
        .expires(expires)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut payloads = Vec::new();
    for message in messages {
        message.double_ack().await.unwrap();
        payloads.push(String::from_utf8(message.payload.to_vec()).unwrap());
    }
    payloads
}

/// Fetches up to `max` messages of group `g` with a pin, asking again while the pull has no
/// responders: the consumer was made through another node, and the interest in its pull
/// subject reaches this client's node over the routes a moment after the API answered (a
/// pull before it got a 503 on a loaded machine). Each try is a round trip to the server,
/// which is the event waited for.
async fn first_pinned_fetch(consumer: &PullConsumer, max: usize) -> Vec<rnats_jetstream::Message> {
    tokio::time::timeout(WAIT, async {
        loop {
            let batch = consumer
                .fetch()
                .pinned()
                .group("g")
                .max_messages(max)
                .messages()
                .await
                .unwrap();
            match batch.try_collect::<Vec<_>>().await {
                Ok(messages) => return messages,
                Err(e)
                    if e.downcast_ref::<pull::MessagesError>().map(|e| e.kind())
                        == Some(pull::MessagesErrorKind::NoResponders) => {}
                Err(e) => panic!("the first fetch failed: {e}"),
            }
        }
    })
    .await
    .expect("the consumer's pull subject never reached the first client's node")
}

/// Waits for the first of `events` that `wanted` accepts.
async fn wait_for_event(
    mut events: rnats_core::Events,
    wanted: impl Fn(&rnats_core::ConnectionEvent) -> bool,
) {
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if wanted(&event) {
                return;
            }
        }
    })
    .await
    .expect("the connection event never came");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pin_moves_to_another_client_when_the_pinned_one_goes_away() {
    const COUNT: usize = 20;
    let cluster =
        Cluster::start_with(3, |node| node.jetstream(true).append_config(ACCOUNTS)).unwrap();
    // The first client reaches node 0 through a proxy that can take it away; the second
    // is on node 1.
    let proxy = Proxy::start(&cluster.nodes()[0].url()).unwrap();
    let first = rnats_core::ConnectOptions::new()
        .ignore_discovered_servers()
        .reconnect_delay_callback(|_| Duration::from_millis(50))
        .connect(proxy.url())
        .await
        .unwrap();
    let second = rnats_core::connect(cluster.nodes()[1].url()).await.unwrap();
    let first_js = rnats_jetstream::ContextBuilder::new()
        .timeout(API_TIMEOUT)
        .build(first.clone());
    let second_js = rnats_jetstream::ContextBuilder::new()
        .timeout(API_TIMEOUT)
        .build(second);
    let stream = create_stream(&cluster, &second_js, "PIN", 3).await;
    for i in 0..COUNT {
        publish_until_acked(&second_js, "PIN.jobs", i).await;
    }
    let second_handle: PullConsumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("workers".into()),
            priority_policy: PriorityPolicy::PinnedClient,
            priority_groups: vec!["g".into()],
            priority_timeout: PINNED_TTL,
            // A message the vanished client took and never acked comes back this soon.
            ack_wait: Duration::from_secs(2),
            ..Default::default()
        })
        .await
        .unwrap();
    let first_handle: PullConsumer = first_js
        .get_stream("PIN")
        .await
        .unwrap()
        .get_consumer("workers")
        .await
        .unwrap();

    // The first client takes the pin and five messages, acks four and vanishes.
    let taken = first_pinned_fetch(&first_handle, 5).await;
    assert_eq!(taken.len(), 5);
    let mut done: BTreeSet<usize> = BTreeSet::new();
    for message in &taken[..4] {
        message.double_ack().await.unwrap();
        done.insert(
            std::str::from_utf8(&message.payload)
                .unwrap()
                .parse()
                .unwrap(),
        );
    }
    let first_pin = first_handle.pin_id().unwrap();
    proxy.refuse(true);
    let events = first.events();
    proxy.cut();
    wait_for_event(events, |e| {
        matches!(e, rnats_core::ConnectionEvent::Disconnected { .. })
    })
    .await;

    // The second client's waiting pull is served once the pin's TTL ran out, under a new
    // pin; everything else comes to it, the unacked message again after its ack wait.
    let mut pulls = 0;
    while done.len() < COUNT {
        pulls += 1;
        assert!(pulls < 20, "only {done:?} came");
        for payload in pull_pinned(&second_handle, COUNT, Duration::from_secs(3)).await {
            done.insert(payload.parse().unwrap());
        }
    }
    assert_eq!(done, (0..COUNT).collect());
    let second_pin = second_handle
        .pin_id()
        .expect("the pin moved to the second client");
    assert_ne!(second_pin, first_pin);

    // Back again, the first client pulls with its old pin: the server answers 423, the pull
    // ends empty, and the handle forgets the pin; no message is left for it.
    let events = first.events();
    proxy.refuse(false);
    wait_for_event(events, |e| *e == rnats_core::ConnectionEvent::Reconnected).await;
    assert_eq!(first_handle.pin_id().as_deref(), Some(first_pin.as_str()));
    assert!(
        pull_pinned(&first_handle, 5, Duration::from_secs(1))
            .await
            .is_empty()
    );
    assert_eq!(first_handle.pin_id(), None);
    let info = second_handle.get_info().await.unwrap();
    assert_eq!(info.num_pending, 0);
    assert_eq!(info.num_ack_pending, 0);
}
