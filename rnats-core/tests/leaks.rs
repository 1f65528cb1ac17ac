//! Reconnecting over and over leaks nothing. Its own test binary, so that no other test's
//! sockets or memory show up in the process-wide figures it reads.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::sync::atomic::Ordering;

use bytes::Bytes;
use rnats_core::ConnectionEvent;
use rnats_test_server::NatsServer;

/// Open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_reconnect_cycles_leak_no_tasks_fds_or_memory() {
    let server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("cycle").await.unwrap();
    client.flush().await.unwrap();
    let metrics = tokio::runtime::Handle::current().metrics();
    // Warm up so lazily made buffers and runtime structures exist before measuring.
    for _ in 0..20 {
        client.force_reconnect().await.unwrap();
        wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    }
    client.flush().await.unwrap();
    let (tasks, fds, rss) = (metrics.num_alive_tasks(), open_fds(), rss_kib());
    for i in 0..1000 {
        client.force_reconnect().await.unwrap();
        wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
        if i % 100 == 0 {
            client
                .publish("cycle", Bytes::from(i.to_string()))
                .await
                .unwrap();
            assert_eq!(next_payload(&mut sub).await, Bytes::from(i.to_string()));
        }
    }
    client.flush().await.unwrap();
    let (tasks_after, fds_after, rss_after) = (metrics.num_alive_tasks(), open_fds(), rss_kib());
    eprintln!(
        "1000 reconnects: tasks {tasks} -> {tasks_after}, fds {fds} -> {fds_after}, \
         RSS {rss} KiB -> {rss_after} KiB"
    );
    assert_eq!(tasks_after, tasks, "tasks leaked");
    assert!(
        fds_after <= fds + 2,
        "file descriptors leaked: {fds} -> {fds_after}"
    );
    assert!(
        rss_after < rss + 8 * 1024,
        "memory grew: {rss} KiB -> {rss_after} KiB"
    );
    assert_eq!(client.statistics().connects.load(Ordering::Relaxed), 1021);
}
