//! Stress on the multi-threaded runtime: concurrent publishers, subscribers, flushes and
//! unsubscribes across forced reconnects, against a real nats-server. The engine runs on one
//! worker while the callers run on the other, so the races the single-threaded tests cannot
//! reach happen here.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use rnats_core::{Client, ConnectionEvent};
use rnats_test_server::{NatsServer, Proxy};

/// Forces `rounds` reconnects one after the other, each awaited, then stops `running`.
fn reconnect_repeatedly(
    client: &Client,
    rounds: usize,
    running: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    let client = client.clone();
    tokio::spawn(async move {
        let mut events = client.events();
        for _ in 0..rounds {
            client.force_reconnect().await.unwrap();
            wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
        }
        running.store(false, Ordering::Release);
    })
}

/// Bug 1: a SUB made while the reconnect replay ran was neither replayed nor sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_made_while_reconnecting_are_never_lost() {
    let server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let publisher = rnats_core::connect(server.url()).await.unwrap();
    let running = Arc::new(AtomicBool::new(true));
    let reconnects = reconnect_repeatedly(&client, 100, Arc::clone(&running));
    let mut subs = Vec::new();
    while running.load(Ordering::Acquire) {
        let subject = format!("s.{}", subs.len());
        subs.push((subject.clone(), client.subscribe(subject).await.unwrap()));
        if subs.len() % 8 == 0 {
            // Paces the loop to the link: a round trip, or the next reconnect.
            let _ = client.flush().await;
        }
    }
    reconnects.await.unwrap();
    // Every SUB the client sent is now known to the server.
    client.flush().await.unwrap();
    for (subject, _) in &subs {
        publisher
            .publish(subject.clone(), "x".into())
            .await
            .unwrap();
    }
    publisher.flush().await.unwrap();
    for (subject, sub) in &mut subs {
        let got = tokio::time::timeout(Duration::from_secs(5), sub.next()).await;
        assert!(
            matches!(got, Ok(Some(_))),
            "subscription {subject} was lost across a reconnect"
        );
    }
    assert!(subs.len() > 100, "subscribed during the reconnects");
}

/// Frame order on one connection: a PUB never overtakes the SUB before it, nor a PING the
/// PUB before it. When `subscribe; publish; flush` succeeds, the server has seen the three in
/// that order, so the message is already queued when the flush returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_pub_flush_stay_in_order_across_reconnects() {
    let server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let running = Arc::new(AtomicBool::new(true));
    let reconnects = reconnect_repeatedly(&client, 100, Arc::clone(&running));
    let mut workers = Vec::new();
    for w in 0..4 {
        let client = client.clone();
        let running = Arc::clone(&running);
        workers.push(tokio::spawn(async move {
            let (mut checked, mut lost) = (0u32, 0u32);
            let mut i = 0u64;
            while running.load(Ordering::Acquire) {
                i += 1;
                let subject = format!("order.{w}.{i}");
                let mut sub = client.subscribe(subject.clone()).await.unwrap();
                client
                    .publish(subject, Bytes::from(i.to_string()))
                    .await
                    .unwrap();
                match client.flush().await {
                    Ok(()) => {
                        let m = sub.next().now_or_never();
                        let m = m.flatten().expect("the PUB overtook its SUB or the PING");
                        assert_eq!(m.payload, Bytes::from(i.to_string()));
                        checked += 1;
                    }
                    // The link broke under the flush: it says so, nothing to judge.
                    Err(_) => lost += 1,
                }
            }
            (checked, lost)
        }));
    }
    reconnects.await.unwrap();
    let mut checked = 0;
    for worker in workers {
        checked += worker.await.unwrap().0;
    }
    assert!(checked > 0);
}

/// No message is delivered to a subscription after its `unsubscribe()` returned, while
/// publishers, flushes and reconnects go on around it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_delivered_after_unsubscribe_returns_across_reconnects() {
    let server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let running = Arc::new(AtomicBool::new(true));
    let reconnects = reconnect_repeatedly(&client, 100, Arc::clone(&running));
    let flood = {
        let client = client.clone();
        let running = Arc::clone(&running);
        tokio::spawn(async move {
            while running.load(Ordering::Acquire) {
                for _ in 0..64 {
                    client.publish("flood.x", "before".into()).await.unwrap();
                }
                let _ = client.flush().await;
            }
        })
    };
    let mut rounds = 0;
    while running.load(Ordering::Acquire) {
        rounds += 1;
        let mut sub = client.subscribe("flood.*").await.unwrap();
        let _ = client.flush().await;
        sub.unsubscribe().await.unwrap();
        // Published after unsubscribe returned, on the same connection.
        client.publish("flood.after", "after".into()).await.unwrap();
        let _ = client.flush().await;
        let rest: Vec<Bytes> = tokio::time::timeout(WAIT, sub.map(|m| m.payload).collect())
            .await
            .expect("the stream ends after unsubscribe");
        assert!(
            rest.iter().all(|p| p == "before"),
            "a message published after unsubscribe returned was delivered"
        );
    }
    reconnects.await.unwrap();
    flood.await.unwrap();
    assert!(rounds > 0);
}

/// Bug 3 under broken links: a flush that returns Ok vouches for every publish before it made
/// on the same connection (or kept for it while reconnecting), while the link is cut again and
/// again under concurrent publishers. A publish written to a link that died before the flush
/// began cannot be vouched for by a PONG of the next link, so a reconnect between the two
/// leaves the pair out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successful_flush_vouches_for_earlier_publishes_across_cut_links() {
    let server = NatsServer::start();
    let proxy = Arc::new(Proxy::start(&server.url()).unwrap());
    let receiver = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = receiver.subscribe("vouched.>").await.unwrap();
    receiver.flush().await.unwrap();
    let client = quick().connect(proxy.url()).await.unwrap();
    let running = Arc::new(AtomicBool::new(true));
    let cutter = {
        let (client, proxy, running) = (client.clone(), Arc::clone(&proxy), Arc::clone(&running));
        tokio::spawn(async move {
            let mut events = client.events();
            for _ in 0..20 {
                // Let some traffic through, then break the link under it.
                client.flush().await.ok();
                proxy.cut();
                wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
            }
            running.store(false, Ordering::Release);
        })
    };
    let mut workers = Vec::new();
    for w in 0..3 {
        let (client, running) = (client.clone(), Arc::clone(&running));
        workers.push(tokio::spawn(async move {
            let mut vouched = Vec::new();
            let mut i = 0u64;
            // One more round once the cuts are over, on a link that stays up: so every
            // worker vouches for something however the cuts fell.
            loop {
                let last = !running.load(Ordering::Acquire);
                i += 1;
                let subject = format!("vouched.{w}.{i}");
                let connects = client.statistics().connects.load(Ordering::Acquire);
                if client.publish(subject.clone(), "v".into()).await.is_err() {
                    continue;
                }
                let flushed = client.flush().await.is_ok();
                let same_link = client.statistics().connects.load(Ordering::Acquire) == connects;
                if flushed && same_link {
                    vouched.push(subject);
                }
                if last {
                    break;
                }
            }
            vouched
        }));
    }
    cutter.await.unwrap();
    let mut vouched = HashSet::new();
    for worker in workers {
        vouched.extend(worker.await.unwrap());
    }
    receiver.flush().await.unwrap();
    let mut received = HashSet::new();
    while let Some(Some(m)) = sub.next().now_or_never() {
        received.insert(m.subject.to_string());
    }
    let missing: Vec<_> = vouched.difference(&received).collect();
    assert!(
        missing.is_empty(),
        "{} publishes vouched for by a flush never arrived: {:?}",
        missing.len(),
        missing.iter().take(5).collect::<Vec<_>>()
    );
    assert!(!vouched.is_empty());
}

/// PINGs paired with PONGs by number, under races: flushes from several tasks, keepalive
/// PINGs every few milliseconds and the last PINGs of planned moves all interleave on the
/// wire, numbered from two threads. A planned move finishes what the old link accepted, so
/// every flush succeeds (none waits for a PONG that never comes, none fails), and the server
/// sends a client its own messages before the PONG of a PING behind their PUB, so when a
/// flush returns, the message published before it is in its subscriber's queue. (Which PONG
/// answers which PING is pinned down exactly by `session::tests`: a flush resolved one PONG
/// early is usually still beaten here by the message in the same read.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flushes_keepalives_and_planned_moves_pair_their_pongs() {
    let server = NatsServer::start();
    let client = quick()
        .ping_interval(Duration::from_millis(3))
        .connect(server.url())
        .await
        .unwrap();
    let running = Arc::new(AtomicBool::new(true));
    let mut workers = Vec::new();
    for w in 0..3 {
        let (client, running) = (client.clone(), Arc::clone(&running));
        let mut sub = client.subscribe(format!("paired.{w}")).await.unwrap();
        client.flush().await.unwrap();
        workers.push(tokio::spawn(async move {
            let mut i = 0u64;
            // One more round once the moves are over.
            loop {
                let last = !running.load(Ordering::Acquire);
                i += 1;
                let payload = Bytes::from(i.to_string());
                client
                    .publish(format!("paired.{w}"), payload.clone())
                    .await
                    .unwrap();
                let flushed = tokio::time::timeout(Duration::from_secs(10), client.flush()).await;
                assert!(
                    matches!(flushed, Ok(Ok(()))),
                    "flush {i} of worker {w}: {flushed:?}"
                );
                let got = sub.next().now_or_never().flatten().map(|m| m.payload);
                assert_eq!(
                    got,
                    Some(payload),
                    "worker {w}: flush {i} returned before its publish came back"
                );
                if last {
                    break;
                }
            }
            i
        }));
    }
    let moves = reconnect_repeatedly(&client, 200, Arc::clone(&running));
    moves.await.unwrap();
    for worker in workers {
        assert!(worker.await.unwrap() > 1);
    }
}
