//! JetStream in a three-node cluster: an R3 stream keeps taking writes when its leader dies,
//! and loses nothing it acknowledged.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_jetstream::Context;
use rnats_jetstream::context::CreateStreamErrorKind;
use rnats_jetstream::context::Publish;
use rnats_jetstream::errors::ErrorCode;
use rnats_jetstream::stream::{Config, StorageType, Stream};
use rnats_test_server::Cluster;
use tokio::sync::Notify;

/// Bound on every wait of this file: elections on a loaded 2-core machine take seconds.
const WAIT: Duration = Duration::from_secs(60);
const MESSAGES: usize = 1_000;

/// Accounts of every node: the test's client lands in APP (JetStream on) without
/// credentials, and SYS lets the test watch the servers' `STATSZ` broadcasts.
const ACCOUNTS: &str = "accounts {
  SYS { users: [{ user: sys, password: sys }] }
  APP { jetstream: enabled, users: [{ user: app, password: app }] }
}
system_account: SYS
no_auth_user: app
";

/// Creates the R3 stream once the cluster can place it.
///
/// Until every node has logged the election of a metadata leader, JetStream answers
/// "temporarily unavailable" or not at all. After that the leader still refuses placement
/// ("no suitable peers", 10005) on a node it has had no `STATSZ` from yet, and it logs
/// nothing when one arrives. So the test listens to those broadcasts in the system
/// account and tries again after each one: every retry follows a change on the server.
async fn create_r3_stream(cluster: &Cluster, js: &Context, name: &str) -> Stream {
    for node in cluster.nodes() {
        node.wait_for_log("metadata leader", WAIT)
            .expect("no metadata leader was elected");
    }
    let system = rnats_core::ConnectOptions::new()
        .user_and_password("sys".into(), "sys".into())
        .connect(cluster.urls().as_slice())
        .await
        .unwrap();
    let mut statsz = system.subscribe("$SYS.SERVER.*.STATSZ").await.unwrap();
    system.flush().await.unwrap();

    let config = Config {
        name: name.to_owned(),
        subjects: vec![format!("{name}.>")],
        storage: StorageType::File,
        num_replicas: 3,
        ..Default::default()
    };
    loop {
        match js.create_stream(config.clone()).await {
            Ok(stream) => return stream,
            Err(e) => match e.kind() {
                CreateStreamErrorKind::JetStream(js_error)
                    if js_error.error_code() == ErrorCode::CLUSTER_NO_PEERS =>
                {
                    tokio::time::timeout(WAIT, statsz.next())
                        .await
                        .expect("no server sent STATSZ")
                        .expect("the system subscription ended");
                }
                _ => panic!("creating the R3 stream failed: {e}"),
            },
        }
    }
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
        if let Ok(ack) = js.send_publish(subject.to_owned(), publish).await {
            if ack.await.is_ok() {
                return;
            }
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
