//! rnats beyond one cluster, on real topologies built by rnats-test-server: a hub cluster
//! with leaf nodes in their own JetStream domain (Core across the leaf link, JetStream by
//! domain, mirrors and sources between domains, consumers and watchers across a cut of the
//! leaf link), and a supercluster of two regions joined by gateways (Core across gateways,
//! failover inside a region, a stream placed in the other region).
//!
//! Servers are heavy on a two-core CI machine, so each topology is started once and one test
//! walks through its checks in order; every step names itself in its failure messages. Run
//! with `--nocapture` to see the measured times (failover, watch recovery).
#![cfg(all(feature = "kv", feature = "object-store"))]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashSet;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{Client, ConnectOptions, ConnectionEvent};
use rnats_jetstream::Message;
use rnats_jetstream::consumer::{AckPolicy, pull};
use rnats_jetstream::context::CreateStreamErrorKind;
use rnats_jetstream::errors::ErrorCode;
use rnats_jetstream::kv::{self, Operation};
use rnats_jetstream::object_store;
use rnats_jetstream::stream::{self, Placement, Source, StorageType};
use rnats_test_server::{
    HUB_DOMAIN, HubAndLeaf, LEAF_DOMAIN, NatsServer, Proxy, SUPERCLUSTER_NAMES, Supercluster,
};

/// Bound on every wait: elections and reconnections on a loaded 2-core machine take seconds.
const WAIT: Duration = Duration::from_secs(30);
/// How long the leaf link stays down in the cut scenario.
const CUT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// A client that reconnects at once (the default backs off after the first pass).
async fn connect(url: &str) -> Client {
    ConnectOptions::new()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect(url)
        .await
        .unwrap()
}

/// Whether `subject` (or a subscription whose subject starts with it, for inbox prefixes)
/// is in any `subscriptions_list` of `body`.
fn lists_subscription(body: &serde_json::Value, subject: &str) -> bool {
    match body {
        serde_json::Value::Object(map) => map.iter().any(|(key, value)| {
            if key == "subscriptions_list" {
                value.as_array().is_some_and(|subs| {
                    subs.iter().filter_map(serde_json::Value::as_str).any(|s| {
                        let sub = s.split(' ').next().unwrap_or_default();
                        sub == subject || sub.starts_with(subject)
                    })
                })
            } else {
                lists_subscription(value, subject)
            }
        }),
        serde_json::Value::Array(items) => items.iter().any(|v| lists_subscription(v, subject)),
        _ => false,
    }
}

/// Waits until `server` has heard of a subscription on `subject` from a neighbour through
/// the link named by `endpoint` (`/leafz?subs=1`, `/routez?subs=1`,
/// `/gatewayz?accs=1&subs=1`): the server's own view, not a guess with a timer.
fn wait_interest(server: &NatsServer, endpoint: &str, subject: &str, step: &str) {
    server
        .wait_for_monitor(endpoint, WAIT, |body| lists_subscription(body, subject))
        .unwrap_or_else(|e| panic!("{step}: {subject} never reached {}: {e}", server.url()));
}

/// Waits until hub node `server` has heard of `subject` from a leaf connected to it or from
/// a route to the hub node a leaf is connected to.
fn wait_interest_here(server: &NatsServer, subject: &str, step: &str) {
    server
        .wait_for_monitor("/leafz?subs=1", WAIT, |leafz| {
            lists_subscription(leafz, subject)
                || server
                    .monitor("/routez?subs=1")
                    .is_ok_and(|routez| lists_subscription(&routez, subject))
        })
        .unwrap_or_else(|e| panic!("{step}: {subject} never reached {}: {e}", server.url()));
}

/// Waits until `server` no longer lists `subject` at `endpoint`.
fn wait_no_interest(server: &NatsServer, endpoint: &str, subject: &str, step: &str) {
    server
        .wait_for_monitor(endpoint, WAIT, |body| !lists_subscription(body, subject))
        .unwrap_or_else(|e| panic!("{step}: {subject} stayed at {}: {e}", server.url()));
}

/// The next item of a stream, bounded by [`WAIT`].
async fn next<S, T>(stream: &mut S, step: &str) -> T
where
    S: futures_util::Stream<Item = T> + Unpin,
{
    tokio::time::timeout(WAIT, stream.next())
        .await
        .unwrap_or_else(|_| panic!("{step}: timed out waiting for the next item"))
        .unwrap_or_else(|| panic!("{step}: the stream ended"))
}

/// Waits for the client's next `Reconnected` event.
async fn reconnected(events: &mut rnats_core::Events, step: &str) {
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if event == ConnectionEvent::Reconnected {
                return;
            }
        }
        panic!("{step}: events ended");
    })
    .await
    .unwrap_or_else(|_| panic!("{step}: no reconnect"));
}

fn memory_stream(name: &str, subjects: &[&str]) -> stream::Config {
    stream::Config {
        name: name.to_owned(),
        subjects: subjects.iter().map(|s| (*s).to_owned()).collect(),
        storage: StorageType::Memory,
        ..Default::default()
    }
}

fn memory_bucket(bucket: &str) -> kv::Config {
    kv::Config {
        bucket: bucket.to_owned(),
        storage: StorageType::Memory,
        history: 10,
        ..Default::default()
    }
}

/// The stream sequence of a JetStream message.
fn sequence(message: &Message) -> u64 {
    message.info().unwrap().stream_sequence
}

/// Waits until a watch of `key` in `store` sees `value` (copies between domains are
/// asynchronous; the watch is woken by the copy itself).
async fn wait_for_value(store: &kv::Store, key: &str, value: &str, step: &str) {
    let mut watch = store.watch_with_history(key).await.unwrap();
    tokio::time::timeout(WAIT, async {
        while let Some(entry) = watch.next().await {
            let entry = entry.unwrap();
            if entry.operation == Operation::Put && entry.value == value {
                return;
            }
        }
        panic!("{step}: watch ended");
    })
    .await
    .unwrap_or_else(|_| panic!("{step}: {key}={value} never arrived"));
}

// ---------------------------------------------------------------------------------------
// Hub and leaf
// ---------------------------------------------------------------------------------------

/// The hub node the JetStream leaf is connected to: hub clients connect there, so interest
/// crosses one link and the monitoring endpoints of one server tell when it has.
fn hub_of_leaf(topology: &HubAndLeaf) -> &NatsServer {
    topology
        .hub()
        .nodes()
        .iter()
        .find(|node| {
            node.monitor("/leafz").unwrap()["leafs"]
                .as_array()
                .is_some_and(|leafs| leafs.iter().any(|l| l["name"] == LEAF_DOMAIN))
        })
        .expect("no hub node has the leaf")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_and_leaf_nodes_with_jetstream_domains() {
    let started = Instant::now();
    let topology = HubAndLeaf::builder().plain_leaf(true).start().unwrap();
    println!("hub and leaf: formed in {:?}", started.elapsed());
    let hub_node = hub_of_leaf(&topology);
    let hub = connect(&hub_node.url()).await;
    let leaf = connect(&topology.leaf().url()).await;

    core_across_the_leaf_link(&topology, hub_node, &hub, &leaf).await;
    jetstream_by_domain(&topology, &hub, &leaf).await;
    mirrors_and_sources_across_domains(&hub, &leaf).await;
    interest_comes_back_after_a_client_reconnect(&topology, hub_node, &hub).await;
    consumers_and_watchers_across_a_leaf_link_cut(&topology, hub_node, &hub, &leaf).await;
    a_pull_dropped_across_a_cut_is_asked_after(&topology, hub_node, &hub, &leaf).await;
    a_pull_sent_after_a_reconnect_is_watched(&topology, hub_node, &hub).await;
    println!("hub and leaf: all steps in {:?}", started.elapsed());
}

/// The blocking consumer's requests dropped across a cut of the leaf link, on a topology of
/// its own so that it runs beside the async steps above rather than after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_pulls_dropped_across_a_leaf_link_cut() {
    let started = Instant::now();
    let topology = HubAndLeaf::builder().plain_leaf(true).start().unwrap();
    println!("blocking, hub and leaf: formed in {:?}", started.elapsed());
    let hub_node = hub_of_leaf(&topology);
    let hub = connect(&hub_node.url()).await;
    a_blocking_pull_dropped_across_a_cut_is_asked_after(&topology, hub_node, &hub).await;
    a_blocking_pull_sent_after_a_reconnect_is_watched(&topology, hub_node, &hub).await;
    println!(
        "blocking, hub and leaf: all steps in {:?}",
        started.elapsed()
    );
}

/// A pull request the hub dropped while the leaf link was down goes without a word to the
/// client: its own connection never dropped, and nothing ends the request. With a heartbeat
/// late (one and a half intervals without one), the stream asks the consumer's leader whether
/// anybody waits, hears nobody does, and pulls again before the heartbeats count as missed
/// (two intervals: 20 s at this step's 10 s, shorter than the default 15 s to spare the
/// suite 7.5 s; the cut comes right after the pull, so the question is 15 s after it).
async fn a_pull_dropped_across_a_cut_is_asked_after(
    topology: &HubAndLeaf,
    hub_node: &NatsServer,
    hub: &Client,
    leaf: &Client,
) {
    let step = "a pull dropped across a cut";
    let heartbeat = Duration::from_secs(10);
    let (hub_js, stream) = stream_with_durable(hub, "DROPPED", "dropped").await;
    let leaf_js = rnats_jetstream::with_domain(leaf.clone(), HUB_DOMAIN);
    let consumer = leaf_js
        .get_stream("DROPPED")
        .await
        .unwrap()
        .get_consumer::<pull::Config>("dropped")
        .await
        .unwrap();
    let messages = consumer
        .stream()
        .heartbeat(heartbeat)
        .expires(Duration::from_secs(120))
        .messages()
        .await
        .unwrap();
    let (reader, mut deliveries) = read_on_a_task(messages);
    waiting(&stream, "dropped", 1, step).await;

    let cut_at = Instant::now();
    topology.cut_leaf_links();
    hub_node
        .wait_for_monitor("/leafz", WAIT, |l| l["leafnodes"] == 0)
        .unwrap();
    // The hub drops the request once its 2 s grace for interest across a link has passed,
    // when it next looks at its requests (a heartbeat due, or a consumer info). The link
    // must be back before the question at 15 s for the stream to hear the answer before
    // the miss at 20 s: seconds, where restoring it takes about one.
    waiting(&stream, "dropped", 0, step).await;
    println!("{step}: dropped {:?} after the cut", cut_at.elapsed());
    topology.restore_leaf_links().unwrap();
    hub_js
        .publish("dropped.a", Bytes::from("after"))
        .await
        .unwrap()
        .await
        .unwrap();
    let (payload, recoveries) = tokio::time::timeout(heartbeat * 3, deliveries.recv())
        .await
        .unwrap_or_else(|_| panic!("{step}: nothing delivered"))
        .unwrap();
    println!(
        "{step}: delivered {:?} after the cut, {recoveries:?}",
        cut_at.elapsed()
    );
    assert_eq!(payload.unwrap(), "after", "{step}");
    assert_eq!(recoveries.lost_pulls, 1, "{step}: asked and pulled again");
    assert_eq!(recoveries.missed_heartbeats, 0, "{step}: before a miss");
    reader.abort();
}

/// A context on `hub`, and the memory stream `name` on `<durable>.>` with the pull consumer
/// `durable`.
async fn stream_with_durable(
    hub: &Client,
    name: &str,
    durable: &str,
) -> (rnats_jetstream::Context, stream::Stream) {
    let hub_js = rnats_jetstream::new(hub.clone());
    let subjects = format!("{durable}.>");
    let stream = hub_js
        .create_stream(memory_stream(name, &[subjects.as_str()]))
        .await
        .unwrap();
    stream
        .create_consumer(pull::Config {
            durable_name: Some(durable.into()),
            ..Default::default()
        })
        .await
        .unwrap();
    (hub_js, stream)
}

/// Waits until `count` pull requests wait at the consumer `name` of `stream`, as its leader
/// counts them.
async fn waiting(stream: &stream::Stream, name: &str, count: usize, step: &str) {
    let deadline = Instant::now() + WAIT;
    let mut pace = tokio::time::interval(Duration::from_millis(100));
    loop {
        pace.tick().await;
        let info = stream.consumer_info(name).await.unwrap();
        if info.num_waiting == count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{step}: {} requests wait, not {count}",
            info.num_waiting
        );
    }
}

/// What [`read_on_a_task`] hands over: each payload (or error) and the recoveries then.
type Deliveries = tokio::sync::mpsc::UnboundedReceiver<(Result<Bytes, String>, pull::Recoveries)>;

/// Reads `messages` on a task of its own, so that the stream's timers run while a step
/// waits, and hands over each payload with the stream's recoveries at the time.
fn read_on_a_task(mut messages: pull::Stream) -> (tokio::task::JoinHandle<()>, Deliveries) {
    let (delivered, deliveries) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        while let Some(message) = messages.next().await {
            let payload = message
                .map(|m| m.payload.clone())
                .map_err(|e| e.to_string());
            if delivered.send((payload, messages.recoveries())).is_err() {
                break;
            }
        }
    });
    (reader, deliveries)
}

/// A pull sent again after a reconnect, then dropped by the hub without a word (the leaf
/// link cut and back), is found out within seconds of the reconnect: requests sent after a
/// fault ask for a heartbeat a second, and four silent seconds mean the request is gone.
/// The question a late heartbeat would bring comes 45 s after the pull with this step's
/// 30 s heartbeat, long so that a slow restore of the link cannot blur the two.
async fn a_pull_sent_after_a_reconnect_is_watched(
    topology: &HubAndLeaf,
    hub_node: &NatsServer,
    hub: &Client,
) {
    let step = "a pull sent after a reconnect";
    let (hub_js, stream) = stream_with_durable(hub, "WATCHED", "watched").await;
    // The client reaches the leaf through a proxy, to be cut off and let back in.
    let proxy = Proxy::start(&topology.leaf().url()).unwrap();
    let client = connect(&proxy.url()).await;
    let mut events = client.events();
    let leaf_js = rnats_jetstream::with_domain(client, HUB_DOMAIN);
    let consumer = leaf_js
        .get_stream("WATCHED")
        .await
        .unwrap()
        .get_consumer::<pull::Config>("watched")
        .await
        .unwrap();
    let messages = consumer
        .stream()
        .heartbeat(Duration::from_secs(30))
        .expires(Duration::from_secs(120))
        .messages()
        .await
        .unwrap();
    let (reader, mut deliveries) = read_on_a_task(messages);
    waiting(&stream, "watched", 1, step).await;

    // Cut off until the hub has dropped the request, then back: the stream pulls again.
    proxy.refuse(true);
    proxy.cut();
    waiting(&stream, "watched", 0, step).await;
    proxy.refuse(false);
    reconnected(&mut events, step).await;
    let back_at = Instant::now();
    waiting(&stream, "watched", 1, step).await;

    // The new request goes the same way, and nothing tells the client.
    topology.cut_leaf_links();
    hub_node
        .wait_for_monitor("/leafz", WAIT, |l| l["leafnodes"] == 0)
        .unwrap();
    waiting(&stream, "watched", 0, step).await;
    topology.restore_leaf_links().unwrap();
    hub_js
        .publish("watched.a", Bytes::from("after"))
        .await
        .unwrap()
        .await
        .unwrap();
    let (payload, recoveries) = tokio::time::timeout(WAIT * 2, deliveries.recv())
        .await
        .unwrap_or_else(|_| panic!("{step}: nothing delivered"))
        .unwrap();
    let took = back_at.elapsed();
    println!("{step}: delivered {took:?} after the reconnect, {recoveries:?}");
    assert_eq!(payload.unwrap(), "after", "{step}");
    assert_eq!(recoveries.reconnects, 1, "{step}");
    assert!(
        recoveries.lost_pulls >= 1,
        "{step}: found out and pulled again"
    );
    assert_eq!(recoveries.missed_heartbeats, 0, "{step}: before a miss");
    // Which watch found it: the probe within seconds, the late-heartbeat question only at
    // 45 s. The bound lies between them with room on either side for a slow machine.
    assert!(
        took < Duration::from_secs(40),
        "{step}: found out only when the heartbeat was late, {took:?} after the reconnect"
    );
    reader.abort();
}

/// What [`read_blocking`] hands over: each payload (or error) and the recoveries then.
type BlockingReader = (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
    Deliveries,
);

/// Reads the blocking consumer `name` of `stream` (over `client`, in the hub's domain) with
/// `heartbeat` and a 120 s expiry on a thread of its own, handing over each payload with the
/// recoveries at the time, until the flag is set. It waits a second at a time, as a reader
/// with other work between its looks would: shorter than a question to the server may
/// take, whose answer it reads as it comes.
fn read_blocking(
    client: rnats_core::blocking::Client,
    stream: &str,
    name: &str,
    heartbeat: Duration,
) -> BlockingReader {
    let js = rnats_jetstream::blocking::with_domain(client, HUB_DOMAIN);
    let consumer = js
        .get_stream(stream)
        .unwrap()
        .get_consumer::<pull::Config>(name)
        .unwrap();
    let mut messages = consumer
        .messages_with(pull::BatchConfig {
            batch: 10,
            expires: Some(Duration::from_secs(120)),
            idle_heartbeat: heartbeat,
            ..Default::default()
        })
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (delivered, deliveries) = tokio::sync::mpsc::unbounded_channel();
    let stopped = stop.clone();
    let reader = std::thread::spawn(move || {
        while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
            let item = match messages.next_timeout(Duration::from_secs(1)) {
                Ok(None) => continue,
                Ok(Some(message)) => Ok(message.payload.clone()),
                Err(error) => Err(error.to_string()),
            };
            if delivered.send((item, messages.recoveries())).is_err() {
                break;
            }
        }
    });
    (stop, reader, deliveries)
}

/// Ends a [`read_blocking`] thread (within its 1 s wait).
fn stop_reading((stop, reader, _): BlockingReader) {
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    reader.join().unwrap();
}

/// The blocking consumer's `Messages`, as the async stream in
/// [`a_pull_dropped_across_a_cut_is_asked_after`]: a request the hub dropped while the leaf
/// link was down is found out by asking the consumer's leader once a heartbeat is late
/// (15 s after the pull with this step's 10 s heartbeat), before the miss at 20 s, and
/// without an error item.
async fn a_blocking_pull_dropped_across_a_cut_is_asked_after(
    topology: &HubAndLeaf,
    hub_node: &NatsServer,
    hub: &Client,
) {
    let step = "a blocking pull dropped across a cut";
    let (hub_js, stream) = stream_with_durable(hub, "BDROPPED", "bdropped").await;
    let url = topology.leaf().url();
    let reader = tokio::task::spawn_blocking(move || {
        let client = rnats_core::blocking::connect(url).unwrap();
        read_blocking(client, "BDROPPED", "bdropped", Duration::from_secs(10))
    })
    .await
    .unwrap();
    // Cut right after the pull is taken, so that its last word is the pull itself.
    waiting(&stream, "bdropped", 1, step).await;
    let cut_at = Instant::now();
    topology.cut_leaf_links();
    hub_node
        .wait_for_monitor("/leafz", WAIT, |l| l["leafnodes"] == 0)
        .unwrap();
    waiting(&stream, "bdropped", 0, step).await;
    topology.restore_leaf_links().unwrap();
    println!(
        "{step}: dropped and back {:?} after the cut",
        cut_at.elapsed()
    );
    hub_js
        .publish("bdropped.a", Bytes::from("after"))
        .await
        .unwrap()
        .await
        .unwrap();
    let mut reader = reader;
    let (payload, recoveries) = tokio::time::timeout(WAIT, reader.2.recv())
        .await
        .unwrap_or_else(|_| panic!("{step}: nothing delivered"))
        .unwrap();
    println!(
        "{step}: delivered {:?} after the cut, {recoveries:?}",
        cut_at.elapsed()
    );
    assert_eq!(payload.unwrap(), "after", "{step}: no error item first");
    assert_eq!(recoveries.lost_pulls, 1, "{step}: asked and pulled again");
    assert_eq!(recoveries.missed_heartbeats, 0, "{step}: before a miss");
    tokio::task::spawn_blocking(move || stop_reading(reader))
        .await
        .unwrap();
}

/// The blocking consumer's `Messages`, as the async stream in
/// [`a_pull_sent_after_a_reconnect_is_watched`]: after a reconnect its requests ask for a
/// heartbeat a second, so one the hub then drops without a word is found out within
/// seconds, where the question a late heartbeat brings would come 45 s after the pull.
async fn a_blocking_pull_sent_after_a_reconnect_is_watched(
    topology: &HubAndLeaf,
    hub_node: &NatsServer,
    hub: &Client,
) {
    let step = "a blocking pull sent after a reconnect";
    let (hub_js, stream) = stream_with_durable(hub, "BWATCHED", "bwatched").await;
    let proxy = Proxy::start(&topology.leaf().url()).unwrap();
    let url = proxy.url();
    let reader = tokio::task::spawn_blocking(move || {
        let client = ConnectOptions::new()
            .reconnect_delay_callback(|_| Duration::from_millis(20))
            .connect_blocking(url)
            .unwrap();
        read_blocking(client, "BWATCHED", "bwatched", Duration::from_secs(30))
    })
    .await
    .unwrap();
    waiting(&stream, "bwatched", 1, step).await;

    // Cut off until the hub has dropped the request, then back: it pulls again.
    proxy.refuse(true);
    proxy.cut();
    waiting(&stream, "bwatched", 0, step).await;
    proxy.refuse(false);
    waiting(&stream, "bwatched", 1, step).await;
    let back_at = Instant::now();

    // The new request goes the same way, and nothing tells the client.
    topology.cut_leaf_links();
    hub_node
        .wait_for_monitor("/leafz", WAIT, |l| l["leafnodes"] == 0)
        .unwrap();
    waiting(&stream, "bwatched", 0, step).await;
    topology.restore_leaf_links().unwrap();
    hub_js
        .publish("bwatched.a", Bytes::from("after"))
        .await
        .unwrap()
        .await
        .unwrap();
    let mut reader = reader;
    let (payload, recoveries) = tokio::time::timeout(WAIT * 2, reader.2.recv())
        .await
        .unwrap_or_else(|_| panic!("{step}: nothing delivered"))
        .unwrap();
    let took = back_at.elapsed();
    println!("{step}: delivered {took:?} after the reconnect, {recoveries:?}");
    assert_eq!(payload.unwrap(), "after", "{step}: no error item first");
    assert_eq!(recoveries.reconnects, 1, "{step}");
    assert!(
        recoveries.lost_pulls >= 1,
        "{step}: found out and pulled again"
    );
    assert_eq!(recoveries.missed_heartbeats, 0, "{step}: before a miss");
    // The probe finds it within seconds; the late-heartbeat question would come at 45 s.
    assert!(
        took < Duration::from_secs(40),
        "{step}: found out only when the heartbeat was late, {took:?} after the reconnect"
    );
    tokio::task::spawn_blocking(move || stop_reading(reader))
        .await
        .unwrap();
}

/// Request/reply both ways, and queue groups whose members on each side of the link get the
/// messages published on their side (the server's local preference, observed).
async fn core_across_the_leaf_link(
    topology: &HubAndLeaf,
    hub_node: &NatsServer,
    hub: &Client,
    leaf: &Client,
) {
    let step = "core across the leaf link";
    let leaf_server = topology.leaf();

    // A responder on the hub, a requester on the leaf; then the other way round.
    let mut service = hub.subscribe("svc.hub").await.unwrap();
    hub.flush().await.unwrap();
    let responder = tokio::spawn({
        let hub = hub.clone();
        async move {
            while let Some(request) = service.next().await {
                let reply = request.reply.unwrap();
                hub.publish(
                    reply,
                    Bytes::from(format!(
                        "hub got {}",
                        String::from_utf8_lossy(&request.payload)
                    )),
                )
                .await
                .unwrap();
            }
        }
    });
    wait_interest(leaf_server, "/leafz?subs=1", "svc.hub", step);
    let answer = leaf.request("svc.hub", "ping".into()).await.unwrap();
    assert_eq!(answer.payload, "hub got ping", "{step}");
    responder.abort();

    let mut service = leaf.subscribe("svc.leaf").await.unwrap();
    leaf.flush().await.unwrap();
    let responder = tokio::spawn({
        let leaf = leaf.clone();
        async move {
            while let Some(request) = service.next().await {
                leaf.publish(request.reply.unwrap(), "leaf here".into())
                    .await
                    .unwrap();
            }
        }
    });
    wait_interest(hub_node, "/leafz?subs=1", "svc.leaf", step);
    let answer = hub.request("svc.leaf", "ping".into()).await.unwrap();
    assert_eq!(answer.payload, "leaf here", "{step}");
    responder.abort();

    // One queue group with a member on each side.
    let mut at_hub = hub.queue_subscribe("work", "workers".into()).await.unwrap();
    let mut at_leaf = leaf
        .queue_subscribe("work", "workers".into())
        .await
        .unwrap();
    hub.flush().await.unwrap();
    leaf.flush().await.unwrap();
    wait_interest(hub_node, "/leafz?subs=1", "work", step);
    wait_interest(leaf_server, "/leafz?subs=1", "work", step);
    const JOBS: usize = 20;
    for i in 0..JOBS {
        leaf.publish("work", Bytes::from(format!("leaf {i}")))
            .await
            .unwrap();
        hub.publish("work", Bytes::from(format!("hub {i}")))
            .await
            .unwrap();
    }
    leaf.flush().await.unwrap();
    hub.flush().await.unwrap();
    for i in 0..JOBS {
        let job = next(&mut at_leaf, step).await;
        assert_eq!(
            job.payload,
            format!("leaf {i}"),
            "{step}: the leaf's member takes the leaf's jobs"
        );
        let job = next(&mut at_hub, step).await;
        assert_eq!(
            job.payload,
            format!("hub {i}"),
            "{step}: the hub's member takes the hub's jobs"
        );
    }
    // With the leaf's member gone, the hub's serves the leaf's publishers.
    at_leaf.unsubscribe().await.unwrap();
    wait_no_interest(hub_node, "/leafz?subs=1", "work", step);
    leaf.publish("work", "leaf again".into()).await.unwrap();
    assert_eq!(
        next(&mut at_hub, step).await.payload,
        "leaf again",
        "{step}"
    );
}

/// JetStream of the other domain, from a client on the leaf and from one on the hub: streams,
/// consumers, publish acks, KV and Object Store; and the hub's JetStream from a leaf that has
/// none of its own.
async fn jetstream_by_domain(topology: &HubAndLeaf, hub: &Client, leaf: &Client) {
    // Across the leaf link an API call waits on the other domain's JetStream: seconds on a
    // loaded machine, so the API timeout is a hang guard.
    let from_leaf = rnats_jetstream::ContextBuilder::new()
        .timeout(WAIT)
        .domain(HUB_DOMAIN)
        .build(leaf.clone());
    let from_hub = rnats_jetstream::ContextBuilder::new()
        .timeout(WAIT)
        .domain(LEAF_DOMAIN)
        .build(hub.clone());
    for (js, domain, tag) in [(&from_leaf, HUB_DOMAIN, "H"), (&from_hub, LEAF_DOMAIN, "L")] {
        let step = format!("JetStream in domain {domain} from the other side");
        let step = step.as_str();
        let account = js
            .query_account()
            .await
            .unwrap_or_else(|e| panic!("{step}: {e}"));
        assert_eq!(account.domain.as_deref(), Some(domain), "{step}");

        let name = format!("ORDERS{tag}");
        let subject = format!("orders{tag}.new");
        let stream = js
            .create_stream(memory_stream(&name, &[&format!("orders{tag}.>")]))
            .await
            .unwrap_or_else(|e| panic!("{step}: create stream: {e}"));
        let ack = js
            .publish(subject.clone(), "one".into())
            .await
            .unwrap()
            .await
            .unwrap_or_else(|e| panic!("{step}: publish ack: {e}"));
        assert_eq!(
            (ack.stream.as_str(), ack.sequence, ack.domain.as_str()),
            (name.as_str(), 1, domain),
            "{step}"
        );
        let consumer = stream
            .create_consumer(pull::Config {
                durable_name: Some("reader".into()),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{step}: create consumer: {e}"));
        let mut batch = consumer.fetch().max_messages(1).messages().await.unwrap();
        let message = match tokio::time::timeout(WAIT, batch.next()).await {
            Ok(Some(message)) => message.unwrap(),
            Ok(None) => panic!("{step}: the fetch ended with no message"),
            Err(_) => {
                // Once in a CI run (the machine loaded by the fuzz build beside it) no message
                // came. The consumer's counts tell a pull request that never reached it
                // (nothing delivered, a pull waiting) from a message delivered and lost on
                // its way back across the link (delivered, its ack pending).
                let info = consumer.get_info().await;
                let counts = info.map(|info| {
                    format!(
                        "delivered up to stream sequence {}, ack pending {}, pulls waiting {}, \
                         pending {}",
                        info.delivered.stream_sequence,
                        info.num_ack_pending,
                        info.num_waiting,
                        info.num_pending
                    )
                });
                panic!("{step}: no message within {WAIT:?}; the consumer: {counts:?}");
            }
        };
        assert_eq!(message.payload, "one", "{step}");
        message.ack().await.unwrap();
        assert_eq!(
            js.get_stream(&name)
                .await
                .unwrap()
                .cached_info()
                .state
                .messages,
            1,
            "{step}"
        );

        let bucket = format!("config{tag}");
        let kv = js
            .create_key_value(memory_bucket(&bucket))
            .await
            .unwrap_or_else(|e| panic!("{step}: create bucket: {e}"));
        let revision = kv
            .put("colour", "blue".into())
            .await
            .unwrap_or_else(|e| panic!("{step}: put: {e}"));
        assert_eq!(
            kv.get("colour").await.unwrap(),
            Some(Bytes::from("blue")),
            "{step}"
        );
        assert_eq!(
            kv.entry("colour").await.unwrap().unwrap().revision,
            revision,
            "{step}"
        );
        let kv = js.get_key_value(&bucket).await.unwrap();
        kv.delete("colour").await.unwrap();
        assert_eq!(kv.get("colour").await.unwrap(), None, "{step}");
        let created = kv
            .create("shape", "round".into())
            .await
            .unwrap_or_else(|e| panic!("{step}: create: {e}"));
        assert!(
            kv.create("shape", "square".into()).await.is_err(),
            "{step}: create over a value"
        );
        let updated = kv
            .update("shape", "square".into(), created)
            .await
            .unwrap_or_else(|e| panic!("{step}: update: {e}"));
        assert!(
            kv.update("shape", "oval".into(), created).await.is_err(),
            "{step}: stale update"
        );
        let keys: Vec<String> = kv.keys().await.unwrap().map(Result::unwrap).collect().await;
        assert_eq!(keys, ["shape"], "{step}");
        let history: Vec<u64> = kv
            .history("shape")
            .await
            .unwrap()
            .map(|entry| entry.unwrap().revision)
            .collect()
            .await;
        assert_eq!(history, [created, updated], "{step}");

        let objects = js
            .create_object_store(object_store::Config {
                bucket: format!("files{tag}"),
                storage: StorageType::Memory,
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{step}: create object store: {e}"));
        // More than one chunk (128 KiB each), so chunks and their acks cross the link.
        let data = Bytes::from((0..300_000u32).map(|i| i as u8).collect::<Vec<u8>>());
        objects
            .put_bytes("blob", data.clone())
            .await
            .unwrap_or_else(|e| panic!("{step}: put object: {e}"));
        assert_eq!(objects.get_bytes("blob").await.unwrap(), data, "{step}");
    }

    // A leaf without JetStream uses the hub's, by its domain: a hub with a domain answers
    // `$JS.<domain>.API` across the leaf link, not the plain `$JS.API`.
    let step = "JetStream from a leaf without its own";
    let plain = connect(&topology.plain_leaf().unwrap().url()).await;
    let js = rnats_jetstream::with_domain(plain, HUB_DOMAIN);
    let account = js
        .query_account()
        .await
        .unwrap_or_else(|e| panic!("{step}: {e}"));
    assert_eq!(account.domain.as_deref(), Some(HUB_DOMAIN), "{step}");
    let ack = js
        .publish("ordersH.plain", "two".into())
        .await
        .unwrap()
        .await
        .unwrap();
    assert_eq!(
        (ack.sequence, ack.domain.as_str()),
        (2, HUB_DOMAIN),
        "{step}"
    );
    let kv = js.get_key_value("configH").await.unwrap();
    kv.put("size", "large".into()).await.unwrap();
    assert_eq!(
        kv.get("size").await.unwrap(),
        Some(Bytes::from("large")),
        "{step}"
    );
}

/// A bucket of the hub mirrored into the leaf, and a leaf bucket sourced from a hub bucket
/// and a leaf bucket that takes writes of its own.
async fn mirrors_and_sources_across_domains(hub: &Client, leaf: &Client) {
    let step = "KV mirror and sources across domains";
    let hub_js = rnats_jetstream::new(hub.clone());
    let leaf_js = rnats_jetstream::new(leaf.clone());
    let origin = hub_js
        .create_key_value(memory_bucket("origin"))
        .await
        .unwrap();
    origin.put("k", "one".into()).await.unwrap();

    // async-nats sends `domain` as is, which the server refuses (nats.rs issue 1541); rnats
    // sends the domain's API prefix as `external`.
    let copy = leaf_js
        .create_key_value(kv::Config {
            mirror: Some(Source {
                name: "origin".into(),
                domain: Some(HUB_DOMAIN.into()),
                ..Default::default()
            }),
            ..memory_bucket("copy")
        })
        .await
        .unwrap_or_else(|e| panic!("{step}: create mirror: {e}"));
    let mirror = copy.stream.cached_info().config.mirror.clone().unwrap();
    assert_eq!(mirror.external.unwrap().api_prefix, "$JS.hub.API", "{step}");
    assert_eq!(copy.prefix, "$KV.origin.", "{step}");
    assert_eq!(
        copy.put_prefix.as_deref(),
        Some("$JS.hub.API.$KV.origin."),
        "{step}"
    );
    wait_for_value(&copy, "k", "one", step).await;
    // A write through the mirror lands in the origin, and comes back through the mirror.
    copy.put("k", "two".into()).await.unwrap();
    assert_eq!(
        origin.get("k").await.unwrap(),
        Some(Bytes::from("two")),
        "{step}"
    );
    wait_for_value(&copy, "k", "two", step).await;
    assert_eq!(
        copy.get("k").await.unwrap(),
        Some(Bytes::from("two")),
        "{step}"
    );
    // Compare-and-set through the mirror is checked at the origin, whose revisions the
    // mirror keeps.
    let revision = copy.entry("k").await.unwrap().unwrap().revision;
    assert_eq!(
        origin.entry("k").await.unwrap().unwrap().revision,
        revision,
        "{step}"
    );
    let created = copy
        .create("fresh", "new".into())
        .await
        .unwrap_or_else(|e| panic!("{step}: create through the mirror: {e}"));
    assert!(
        copy.create("fresh", "again".into()).await.is_err(),
        "{step}: create over a value"
    );
    copy.update("fresh", "newer".into(), created)
        .await
        .unwrap_or_else(|e| panic!("{step}: update through the mirror: {e}"));
    wait_for_value(&copy, "fresh", "newer", step).await;
    let mut keys: Vec<String> = copy
        .keys()
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    keys.sort();
    assert_eq!(keys, ["fresh", "k"], "{step}: keys of the mirror");
    let history = copy.history("k").await.unwrap().count().await;
    assert_eq!(history, 2, "{step}: history of the mirror");

    // Sourced from two domains: the hub's `origin` and the leaf's own `local`.
    let local = leaf_js
        .create_key_value(memory_bucket("local"))
        .await
        .unwrap();
    local.put("l", "from leaf".into()).await.unwrap();
    let all = leaf_js
        .create_key_value(kv::Config {
            sources: Some(vec![
                Source {
                    name: "origin".into(),
                    domain: Some(HUB_DOMAIN.into()),
                    ..Default::default()
                },
                Source {
                    name: "local".into(),
                    ..Default::default()
                },
            ]),
            ..memory_bucket("all")
        })
        .await
        .unwrap_or_else(|e| panic!("{step}: create sourced bucket: {e}"));
    all.put("own", "written here".into()).await.unwrap();
    wait_for_value(&all, "k", "two", step).await;
    wait_for_value(&all, "l", "from leaf", step).await;
    origin.put("k", "three".into()).await.unwrap();
    wait_for_value(&all, "k", "three", step).await;
    assert_eq!(
        all.get("own").await.unwrap(),
        Some(Bytes::from("written here")),
        "{step}"
    );
    // The sourced bucket's own writes stay its own.
    assert_eq!(origin.get("own").await.unwrap(), None, "{step}");
}

/// A leaf client's subscription is known to the hub again after the client reconnects.
async fn interest_comes_back_after_a_client_reconnect(
    topology: &HubAndLeaf,
    hub_node: &NatsServer,
    hub: &Client,
) {
    let step = "interest after a client reconnect";
    let link = Proxy::start(&topology.leaf().url()).unwrap();
    let client = connect(&link.url()).await;
    let mut events = client.events();
    let mut sub = client.subscribe("after.reconnect").await.unwrap();
    client.flush().await.unwrap();
    wait_interest(hub_node, "/leafz?subs=1", "after.reconnect", step);

    link.refuse(true);
    link.cut();
    wait_no_interest(hub_node, "/leafz?subs=1", "after.reconnect", step);
    link.refuse(false);
    reconnected(&mut events, step).await;
    wait_interest(hub_node, "/leafz?subs=1", "after.reconnect", step);
    hub.publish("after.reconnect", "back".into()).await.unwrap();
    assert_eq!(next(&mut sub, step).await.payload, "back", "{step}");
}

/// Across a 5 s cut of the leaf link: an ordered consumer and a KV watcher on the leaf
/// (reading the hub's domain) go on in order with no gap or repeat, a pull consumer gets what
/// was published meanwhile, and Core subscriptions on both leaves are not lost.
async fn consumers_and_watchers_across_a_leaf_link_cut(
    topology: &HubAndLeaf,
    hub_node: &NatsServer,
    hub: &Client,
    leaf: &Client,
) {
    let step = "across a leaf link cut";
    let hub_js = rnats_jetstream::new(hub.clone());
    let leaf_js = rnats_jetstream::with_domain(leaf.clone(), HUB_DOMAIN);
    let stream = hub_js
        .create_stream(memory_stream("EVENTS", &["events.>"]))
        .await
        .unwrap();
    let settings = hub_js
        .create_key_value(memory_bucket("settings"))
        .await
        .unwrap();
    const BEFORE: u64 = 10;
    const DURING: u64 = 10;
    const AFTER: u64 = 10;
    for i in 0..BEFORE {
        hub_js
            .publish("events.a", Bytes::from(i.to_string()))
            .await
            .unwrap()
            .await
            .unwrap();
        settings.put(format!("k{i}"), "v".into()).await.unwrap();
    }

    let leaf_stream = leaf_js.get_stream("EVENTS").await.unwrap();
    let ordered = leaf_stream
        .create_consumer(pull::OrderedConfig {
            filter_subject: "events.>".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut ordered = ordered.messages().await.unwrap();
    let pending = stream
        .create_consumer(pull::Config {
            durable_name: Some("pending".into()),
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        })
        .await
        .unwrap();
    let pending = leaf_stream
        .get_consumer::<pull::Config>(&pending.cached_info().name)
        .await
        .unwrap();
    // The hub drops a pull request once its reply subject loses interest, as it does when
    // the leaf link goes; the client, whose own connection never dropped, notices when a
    // heartbeat is late (its question fails while the link is down) or missed, and pulls
    // again. A short heartbeat keeps that wait short here; the next step times the default.
    let mut pending = pending
        .stream()
        .heartbeat(Duration::from_secs(1))
        .expires(Duration::from_secs(2))
        .messages()
        .await
        .unwrap();
    let leaf_settings = leaf_js.get_key_value("settings").await.unwrap();
    let mut watch = leaf_settings.watch_all_from_revision(1).await.unwrap();

    // Core subscriptions on both leaves.
    let plain = connect(&topology.plain_leaf().unwrap().url()).await;
    let mut leaf_sub = leaf.subscribe("core.after.cut.leaf").await.unwrap();
    let mut plain_sub = plain.subscribe("core.after.cut.plain").await.unwrap();
    leaf.flush().await.unwrap();
    plain.flush().await.unwrap();

    let mut ordered_last = 0;
    let mut pending_seen = HashSet::new();
    let mut watch_last = 0;
    let take_ordered = |message: Result<Message, _>, last: &mut u64| match message {
        Ok(message) => {
            assert_eq!(
                sequence(&message),
                *last + 1,
                "{step}: ordered consumer in order, no gap, no repeat"
            );
            *last = sequence(&message);
        }
        // Recreating the consumer while the link is down fails until it is back.
        Err(error) => println!("{step}: ordered consumer recovering: {error}"),
    };
    while ordered_last < BEFORE {
        take_ordered(next(&mut ordered, step).await, &mut ordered_last);
    }
    while watch_last < BEFORE {
        let entry = next(&mut watch, step).await.unwrap();
        assert_eq!(entry.revision, watch_last + 1, "{step}: watcher in order");
        watch_last = entry.revision;
    }
    while (pending_seen.len() as u64) < BEFORE {
        let message = next(&mut pending, step).await.unwrap();
        pending_seen.insert(sequence(&message));
        message.ack().await.unwrap();
    }

    // The cut: the leaf goes on alone while the hub takes writes.
    let cut_at = Instant::now();
    topology.cut_leaf_links();
    hub_node
        .wait_for_monitor("/leafz", WAIT, |l| l["leafnodes"] == 0)
        .unwrap();
    for i in 0..DURING {
        hub_js
            .publish("events.b", Bytes::from(i.to_string()))
            .await
            .unwrap()
            .await
            .unwrap();
        settings
            .put(format!("k{}", BEFORE + i), "v".into())
            .await
            .unwrap();
    }
    // The scenario is a link that stays down for CUT, not a race to paper over.
    tokio::time::sleep(CUT.saturating_sub(cut_at.elapsed())).await;
    topology.restore_leaf_links().unwrap();
    let restored_at = Instant::now();
    println!("{step}: link down for {:?}", cut_at.elapsed());
    for i in 0..AFTER {
        hub_js
            .publish("events.c", Bytes::from(i.to_string()))
            .await
            .unwrap()
            .await
            .unwrap();
        settings
            .put(format!("k{}", BEFORE + DURING + i), "v".into())
            .await
            .unwrap();
    }
    let total = BEFORE + DURING + AFTER;

    while watch_last < total {
        let entry = next(&mut watch, step)
            .await
            .unwrap_or_else(|e| panic!("{step}: watcher: {e}"));
        assert_eq!(
            entry.revision,
            watch_last + 1,
            "{step}: watcher in order, no gap, no repeat"
        );
        watch_last = entry.revision;
    }
    println!(
        "{step}: watcher caught up {:?} after the link was back",
        restored_at.elapsed()
    );
    while ordered_last < total {
        take_ordered(next(&mut ordered, step).await, &mut ordered_last);
    }
    println!(
        "{step}: ordered consumer caught up {:?} after the link was back",
        restored_at.elapsed()
    );
    while (pending_seen.len() as u64) < total {
        match next(&mut pending, step).await {
            Ok(message) => {
                pending_seen.insert(sequence(&message));
                message.ack().await.unwrap();
            }
            Err(error) => println!("{step}: pull consumer recovering: {error}"),
        }
    }
    assert_eq!(
        pending_seen,
        (1..=total).collect::<HashSet<_>>(),
        "{step}: pull consumer"
    );
    println!(
        "{step}: pull consumer caught up {:?} after the link was back",
        restored_at.elapsed()
    );

    // No subscription was lost: the hub hears of both again and delivers to them.
    wait_interest_here(hub_node, "core.after.cut.leaf", step);
    wait_interest_here(hub_node, "core.after.cut.plain", step);
    hub.publish("core.after.cut.leaf", "still here".into())
        .await
        .unwrap();
    hub.publish("core.after.cut.plain", "still here".into())
        .await
        .unwrap();
    assert_eq!(
        next(&mut leaf_sub, step).await.payload,
        "still here",
        "{step}: leaf subscription"
    );
    assert_eq!(
        next(&mut plain_sub, step).await.payload,
        "still here",
        "{step}: plain leaf subscription"
    );
}

// ---------------------------------------------------------------------------------------
// Supercluster
// ---------------------------------------------------------------------------------------

/// Accounts of every supercluster node: clients land in APP (JetStream on) without
/// credentials, and SYS lets the test hear the servers' `STATSZ` broadcasts.
const ACCOUNTS: &str = "accounts {
  SYS { users: [{ user: sys, password: sys }] }
  APP { jetstream: enabled, users: [{ user: app, password: app }] }
}
system_account: SYS
no_auth_user: app
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supercluster_of_two_regions() {
    let started = Instant::now();
    let mut supercluster = Supercluster::builder()
        .jetstream(true)
        .configure(|cluster, _, node| {
            node.append_config(&format!(
                "{ACCOUNTS}server_tags: [\"region:{}\"]\n",
                SUPERCLUSTER_NAMES[cluster]
            ))
        })
        .start()
        .unwrap();
    println!("supercluster: formed in {:?}", started.elapsed());

    core_across_gateways(&supercluster).await;
    a_stream_placed_in_the_other_region(&supercluster).await;
    failover_stays_in_the_region(&mut supercluster).await;
    println!("supercluster: all steps in {:?}", started.elapsed());
}

/// Waits until `publisher`'s outbound gateway to `remote` would forward `subject`: in
/// interest-only mode it lists the subscription, in optimistic mode it forwards anything it
/// was not told to drop (and these subjects are fresh).
fn wait_gateway_interest(publisher: &NatsServer, remote: &str, subject: &str, step: &str) {
    publisher
        .wait_for_monitor("/gatewayz?accs=1&subs=1", WAIT, |body| {
            let accounts = body["outbound_gateways"][remote]["accounts"].as_array();
            accounts.is_some_and(|accounts| {
                accounts
                    .iter()
                    .filter(|a| a["name"] == "APP")
                    .all(|account| {
                        account["interest_mode"] == "Optimistic"
                            && account["no_interest_count"].as_u64().unwrap_or(0) == 0
                            || lists_subscription(account, subject)
                    })
            })
        })
        .unwrap_or_else(|e| {
            panic!(
                "{step}: {subject} not forwarded by {}: {e}",
                publisher.url()
            )
        });
}

/// Request/reply across the gateway, a queue group with a member in each region (each
/// region's publishers served by their own), and a subscription that outlives a gateway cut.
async fn core_across_gateways(supercluster: &Supercluster) {
    let step = "core across gateways";
    let east_node = &supercluster.cluster(0).nodes()[0];
    let west_node = &supercluster.cluster(1).nodes()[0];
    let east = connect(&east_node.url()).await;
    let west = connect(&west_node.url()).await;

    let mut service = east.subscribe("svc.east").await.unwrap();
    east.flush().await.unwrap();
    let responder = tokio::spawn({
        let east = east.clone();
        async move {
            while let Some(request) = service.next().await {
                east.publish(request.reply.unwrap(), "east here".into())
                    .await
                    .unwrap();
            }
        }
    });
    wait_gateway_interest(west_node, "east", "svc.east", step);
    let answer = west
        .request("svc.east", "ping".into())
        .await
        .unwrap_or_else(|e| panic!("{step}: request: {e}"));
    assert_eq!(answer.payload, "east here", "{step}");
    responder.abort();

    let mut east_member = east
        .queue_subscribe("jobs", "workers".into())
        .await
        .unwrap();
    let mut west_member = west
        .queue_subscribe("jobs", "workers".into())
        .await
        .unwrap();
    east.flush().await.unwrap();
    west.flush().await.unwrap();
    // Queue interest always crosses gateways.
    wait_interest(west_node, "/gatewayz?accs=1&subs=1", "jobs", step);
    wait_interest(east_node, "/gatewayz?accs=1&subs=1", "jobs", step);
    const JOBS: usize = 20;
    for i in 0..JOBS {
        east.publish("jobs", Bytes::from(format!("east {i}")))
            .await
            .unwrap();
        west.publish("jobs", Bytes::from(format!("west {i}")))
            .await
            .unwrap();
    }
    east.flush().await.unwrap();
    west.flush().await.unwrap();
    for i in 0..JOBS {
        assert_eq!(
            next(&mut east_member, step).await.payload,
            format!("east {i}"),
            "{step}: east's member takes east's jobs"
        );
        assert_eq!(
            next(&mut west_member, step).await.payload,
            format!("west {i}"),
            "{step}: west's member takes west's jobs"
        );
    }
    west_member.unsubscribe().await.unwrap();
    wait_no_interest(east_node, "/gatewayz?accs=1&subs=1", "jobs", step);
    west.publish("jobs", "west again".into()).await.unwrap();
    assert_eq!(
        next(&mut east_member, step).await.payload,
        "west again",
        "{step}: the other region serves when ours has no member"
    );

    // A subscription in east, a gateway cut and its restoration, a publisher in west.
    let step = "core across a gateway cut";
    let mut sub = east.subscribe("after.gateway.cut").await.unwrap();
    east.flush().await.unwrap();
    supercluster.cut_gateways();
    west_node
        .wait_for_monitor("/gatewayz", WAIT, |g| {
            g["outbound_gateways"]
                .as_object()
                .is_none_or(serde_json::Map::is_empty)
        })
        .unwrap();
    supercluster
        .restore_gateways()
        .unwrap_or_else(|e| panic!("{step}: {e}"));
    wait_gateway_interest(west_node, "east", "after.gateway.cut", step);
    west.publish("after.gateway.cut", "across".into())
        .await
        .unwrap();
    assert_eq!(next(&mut sub, step).await.payload, "across", "{step}");
}

/// An R3 stream placed in west by cluster and tag, created and used from a client in east.
async fn a_stream_placed_in_the_other_region(supercluster: &Supercluster) {
    let step = "a stream placed in the other region";
    let east_url = supercluster.cluster(0).nodes()[1].url();
    // Creating an R3 stream (and bucket) answers once its own group has elected a leader,
    // across a gateway: seconds on a loaded machine, so the API timeout is a hang guard.
    let js = rnats_jetstream::ContextBuilder::new()
        .timeout(WAIT)
        .build(connect(&east_url).await);
    let config = stream::Config {
        num_replicas: 3,
        placement: Some(Placement {
            cluster: Some("west".into()),
            tags: vec!["region:west".into()],
        }),
        ..memory_stream("WESTERN", &["western.>"])
    };
    // Until the meta leader has had a `STATSZ` from each west server it cannot place there
    // ("no suitable peers"), and it logs nothing when one arrives: so listen to those
    // broadcasts and try again after each.
    let system = ConnectOptions::new()
        .user_and_password("sys".into(), "sys".into())
        .connect(east_url)
        .await
        .unwrap();
    let mut statsz = system.subscribe("$SYS.SERVER.*.STATSZ").await.unwrap();
    system.flush().await.unwrap();
    let stream = loop {
        match js.create_stream(config.clone()).await {
            Ok(stream) => break stream,
            Err(e) => match e.kind() {
                CreateStreamErrorKind::JetStream(error)
                    if error.error_code() == ErrorCode::CLUSTER_NO_PEERS =>
                {
                    next(&mut statsz, step).await;
                }
                _ => panic!("{step}: create: {e}"),
            },
        }
    };
    let info = stream.cached_info();
    let cluster = info.cluster.as_ref().unwrap();
    assert_eq!(cluster.name.as_deref(), Some("west"), "{step}");
    let leader = cluster.leader.clone().unwrap();
    assert!(leader.starts_with("west-"), "{step}: leader {leader}");
    assert_eq!(cluster.replicas.len(), 2, "{step}");
    assert!(
        cluster.replicas.iter().all(|r| r.name.starts_with("west-")),
        "{step}"
    );
    for i in 0..10u64 {
        let ack = js
            .publish("western.x", Bytes::from(i.to_string()))
            .await
            .unwrap()
            .await
            .unwrap();
        assert_eq!(ack.sequence, i + 1, "{step}");
    }
    let mut stream = js.get_stream("WESTERN").await.unwrap();
    assert_eq!(stream.info().await.unwrap().state.messages, 10, "{step}");

    // Consumers of it from east: replies to pull requests cross the gateway back.
    let durable = stream
        .create_consumer(pull::Config {
            durable_name: Some("eastern".into()),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{step}: create consumer: {e}"));
    // The consumer is there once created, but east learns of its pull subject over the
    // gateway a moment later; a one-shot fetch before that gets no responders.
    let east_node = &supercluster.cluster(0).nodes()[1];
    wait_gateway_interest(
        east_node,
        "west",
        "$JS.API.CONSUMER.MSG.NEXT.WESTERN.eastern",
        step,
    );
    let mut batch = durable.fetch().max_messages(10).messages().await.unwrap();
    for i in 1..=10 {
        let message = next(&mut batch, step).await.unwrap();
        assert_eq!(sequence(&message), i, "{step}: fetch");
        message.ack().await.unwrap();
    }
    let ordered = stream
        .create_consumer(pull::OrderedConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{step}: create ordered consumer: {e}"));
    let mut ordered = ordered.messages().await.unwrap();
    for i in 1..=10 {
        assert_eq!(
            sequence(&next(&mut ordered, step).await.unwrap()),
            i,
            "{step}: ordered"
        );
    }

    // A bucket placed the same way, used from east.
    let kv = js
        .create_key_value(kv::Config {
            num_replicas: 3,
            placement: config.placement.clone(),
            ..memory_bucket("western")
        })
        .await
        .unwrap_or_else(|e| panic!("{step}: create bucket: {e}"));
    let placed = kv.stream.cached_info().cluster.clone().unwrap();
    assert_eq!(
        placed.name.as_deref(),
        Some("west"),
        "{step}: bucket placement"
    );
    for subject in ["$KV.western.", "$JS.API.DIRECT.GET.KV_western"] {
        wait_gateway_interest(east_node, "west", subject, step);
    }
    let mut watch = kv.watch("k").await.unwrap();
    kv.put("k", "v".into()).await.unwrap();
    assert_eq!(
        next(&mut watch, step).await.unwrap().value,
        "v",
        "{step}: watch"
    );
    assert_eq!(kv.get("k").await.unwrap(), Some(Bytes::from("v")), "{step}");
}

/// A client given one east node learns the other east nodes from INFO, and only those; when
/// its node dies it is on another east node within a second, its subscription intact.
async fn failover_stays_in_the_region(supercluster: &mut Supercluster) {
    let step = "failover inside the region";
    let ports = |cluster: usize| -> Vec<u16> {
        supercluster
            .cluster(cluster)
            .nodes()
            .iter()
            .map(NatsServer::port)
            .collect()
    };
    let (east_ports, west_ports) = (ports(0), ports(1));
    let client = ConnectOptions::new()
        .connect(supercluster.cluster(0).nodes()[0].url())
        .await
        .unwrap();
    let pool: Vec<u16> = client
        .server_pool()
        .await
        .unwrap()
        .iter()
        .map(|s| s.addr.port())
        .collect();
    for port in &east_ports {
        assert!(
            pool.contains(port),
            "{step}: east node {port} not learnt: {pool:?}"
        );
    }
    for port in &west_ports {
        assert!(
            !pool.contains(port),
            "{step}: west node {port} in the pool: {pool:?}"
        );
    }
    let mut sub = client.subscribe("failover").await.unwrap();
    client.flush().await.unwrap();
    let mut events = client.events();

    let killed_at = Instant::now();
    supercluster.cluster_mut(0).node_mut(0).kill();
    let mut failed_attempts = Vec::new();
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            match event {
                ConnectionEvent::Reconnected => return,
                ConnectionEvent::ReconnectFailed { server, .. } => failed_attempts.push(server),
                _ => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{step}: no reconnect"));
    let failover = killed_at.elapsed();
    // The server just lost is tried last, as nats.go does: a dead host can hold a connect
    // attempt for the whole connection timeout.
    assert_eq!(
        failed_attempts,
        Vec::<String>::new(),
        "{step}: went to the lost server first"
    );
    println!("{step}: reconnected in {failover:?}");
    let info = client.server_info();
    assert_eq!(info.cluster.as_deref(), Some("east"), "{step}");
    assert!(
        east_ports[1..].contains(&info.port),
        "{step}: on {}",
        info.port
    );
    assert!(
        failover < Duration::from_secs(1),
        "{step}: took {failover:?}"
    );

    let west_node = &supercluster.cluster(1).nodes()[2];
    let west = connect(&west_node.url()).await;
    wait_gateway_interest(west_node, "east", "failover", step);
    west.publish("failover", "still subscribed".into())
        .await
        .unwrap();
    assert_eq!(
        next(&mut sub, step).await.payload,
        "still subscribed",
        "{step}"
    );
}
