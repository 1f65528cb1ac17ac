//! Long-lived JetStream streams whose server goes away while they are being polled (nats.rs
//! issue 1371: a push consumer or `watch_all` panicked there): a KV watcher, a durable push
//! consumer and an ordered push consumer are polled by their own tasks while the server is
//! killed, stays down and comes back. None may panic, and each goes on delivering what is
//! written after the server is back.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use rnats_core::{ConnectOptions, ConnectionEvent};
use rnats_jetstream::consumer::{self, AckPolicy, push};
use rnats_jetstream::kv;
use rnats_jetstream::stream::{self, StorageType};
use rnats_test_server::NatsServer;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(30);

/// Polls `items` until it ends, passing every item's text (a value or an error) on.
fn poll_in_task<S, T, E>(mut items: S, name: &'static str) -> (JoinHandle<()>, Seen)
where
    S: Stream<Item = Result<T, E>> + Unpin + Send + 'static,
    T: std::fmt::Debug,
    E: std::fmt::Display,
{
    let (sender, receiver) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while let Some(item) = items.next().await {
            let seen = match item {
                Ok(value) => Ok(format!("{value:?}")),
                Err(error) => Err(format!("{name}: {error}")),
            };
            if sender.send(seen).is_err() {
                return;
            }
        }
    });
    (task, receiver)
}

type Seen = mpsc::UnboundedReceiver<Result<String, String>>;

/// The next value `seen` passes on that contains `needle`; errors on the way are fine (the
/// server was away), a task that ended or panicked is not.
async fn value_containing(seen: &mut Seen, needle: &str) {
    tokio::time::timeout(WAIT, async {
        loop {
            match seen.recv().await {
                Some(Ok(value)) if value.contains(needle) => return,
                Some(_) => {}
                None => panic!("the polling task ended before {needle:?} came"),
            }
        }
    })
    .await
    .unwrap();
}

async fn next_event(events: &mut rnats_core::Events, wanted: fn(&ConnectionEvent) -> bool) {
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if wanted(&event) {
                return;
            }
        }
    })
    .await
    .unwrap();
}

/// A client that comes back quickly once its server is back.
async fn reconnecting_client(server: &NatsServer) -> rnats_core::Client {
    ConnectOptions::new()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .ignore_discovered_servers()
        .connect(server.url())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_and_push_consumers_survive_their_server_going_away() {
    let mut server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = reconnecting_client(&server).await;
    let js = rnats_jetstream::new(client.clone());
    let bucket = js
        .create_key_value(kv::Config {
            bucket: "gone".into(),
            storage: StorageType::File,
            ..Default::default()
        })
        .await
        .unwrap();
    let events = js
        .create_stream(stream::Config {
            name: "GONE".into(),
            subjects: vec!["gone.>".into()],
            storage: StorageType::File,
            ..Default::default()
        })
        .await
        .unwrap();
    let durable: consumer::PushConsumer = events
        .create_consumer(push::Config {
            deliver_subject: client.new_inbox(),
            durable_name: Some("pusher".into()),
            ack_policy: AckPolicy::None,
            flow_control: true,
            idle_heartbeat: Duration::from_millis(500),
            ..Default::default()
        })
        .await
        .unwrap();
    let ordered = events
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            ..Default::default()
        })
        .await
        .unwrap();

    let (watch_task, mut watched) = poll_in_task(bucket.watch_all().await.unwrap(), "watch_all");
    let (durable_task, mut durable_seen) = poll_in_task(durable.messages().await.unwrap(), "push");
    let (ordered_task, mut ordered_seen) =
        poll_in_task(ordered.messages().await.unwrap(), "ordered push");
    bucket.put("before", "1".into()).await.unwrap();
    js.publish("gone.before", "1".into())
        .await
        .unwrap()
        .await
        .unwrap();
    value_containing(&mut watched, "before").await;
    value_containing(&mut durable_seen, "gone.before").await;
    value_containing(&mut ordered_seen, "gone.before").await;

    // The server goes away while all three are being polled, and stays away until the
    // client has noticed and the durable consumer has missed a heartbeat (its half-second
    // one), so the streams are polled with the server gone.
    let mut connection = client.events();
    server.kill();
    next_event(&mut connection, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    tokio::time::timeout(WAIT, async {
        while let Some(Ok(_)) = durable_seen.recv().await {}
    })
    .await
    .unwrap();
    for task in [&watch_task, &durable_task, &ordered_task] {
        assert!(
            !task.is_finished(),
            "a polling task ended with the server away"
        );
    }

    server.restart().unwrap();
    next_event(&mut connection, |e| *e == ConnectionEvent::Reconnected).await;
    // JetStream takes writes again once it has recovered its store.
    tokio::time::timeout(WAIT, async {
        while bucket.put("after", "2".into()).await.is_err() {}
    })
    .await
    .unwrap();
    js.publish("gone.after", "2".into())
        .await
        .unwrap()
        .await
        .unwrap();
    value_containing(&mut watched, "after").await;
    value_containing(&mut durable_seen, "gone.after").await;
    value_containing(&mut ordered_seen, "gone.after").await;

    for task in [watch_task, durable_task, ordered_task] {
        task.abort();
        let ended = task.await;
        assert!(
            ended.as_ref().is_ok() || ended.as_ref().is_err_and(|e| e.is_cancelled()),
            "a polling task panicked: {ended:?}"
        );
    }
}

/// nats.rs issue 1596: a KV watch nobody polls while its server restarts, with values put
/// before the restart, while it is down for the watch's client, and after it, resumes when
/// it is polled again and misses none of them, in revision order, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_left_unpolled_across_a_restart_misses_nothing() {
    let mut server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = reconnecting_client(&server).await;
    let mut events = client.events();
    let js = rnats_jetstream::new(client.clone());
    let bucket = js
        .create_key_value(kv::Config {
            bucket: "unpolled".into(),
            // Every revision kept, so that each can still be delivered once the watch is read.
            history: 10,
            storage: StorageType::File,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut watch = bucket.watch_all().await.unwrap();
    bucket.put("a", "1".into()).await.unwrap();
    bucket.put("b", "2".into()).await.unwrap();

    // Not polled from here on: the restart happens behind its back.
    server.restart().unwrap();
    next_event(&mut events, |e| matches!(e, ConnectionEvent::Reconnected)).await;
    // A publish meeting JetStream still recovering is retried by the context (no responders).
    bucket.put("c", "3".into()).await.unwrap();
    bucket.put("a", "4".into()).await.unwrap();

    let mut seen = Vec::new();
    while seen.len() < 4 {
        let entry = tokio::time::timeout(WAIT, watch.next())
            .await
            .unwrap_or_else(|_| panic!("the watch stopped after {seen:?}"))
            .expect("the watch goes on")
            .unwrap();
        seen.push((
            entry.key,
            String::from_utf8(entry.value.to_vec()).unwrap(),
            entry.revision,
        ));
    }
    let values: Vec<(&str, &str)> = seen
        .iter()
        .map(|(k, v, _)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(values, [("a", "1"), ("b", "2"), ("c", "3"), ("a", "4")]);
    assert!(seen.windows(2).all(|w| w[0].2 < w[1].2), "{seen:?}");
}
