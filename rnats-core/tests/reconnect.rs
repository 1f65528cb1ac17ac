//! Riding through server restarts, failovers and lame duck mode, against real nats-servers.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::error::Error as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use rnats_core::{
    ConnectionEvent, FlushCause, FlushError, PublishCause, RequestCause, RequestErrorKind, State,
};
use rnats_test_server::{Cluster, NatsServer, Proxy};

#[tokio::test]
async fn restart_on_the_same_port_keeps_subscriptions_and_delivers_outage_publishes() {
    let mut server = NatsServer::start();
    let subscriber = quick().connect(server.url()).await.unwrap();
    let publisher = quick().connect(server.url()).await.unwrap();
    let mut sub_events = subscriber.events();
    let mut pub_events = publisher.events();
    let mut sub = subscriber.subscribe("steady").await.unwrap();
    subscriber.flush().await.unwrap();
    publisher.publish("steady", "before".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("before"));

    server.kill();
    wait_for(&mut pub_events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    // Published during the outage: kept and sent after the reconnect, in order.
    for i in 0..100 {
        publisher
            .publish("steady", Bytes::from(format!("outage {i}")))
            .await
            .unwrap();
    }
    server.restart().unwrap();
    wait_for(&mut sub_events, |e| *e == ConnectionEvent::Reconnected).await;
    wait_for(&mut pub_events, |e| *e == ConnectionEvent::Reconnected).await;
    // The publisher's reconnect may beat the subscriber's; its flush waits for the server.
    // Make sure the subscription is back before the kept publishes are judged.
    subscriber.flush().await.unwrap();
    publisher.flush().await.unwrap();
    publisher.publish("steady", "after".into()).await.unwrap();

    let mut got = Vec::new();
    loop {
        let payload = next_payload(&mut sub).await;
        if payload == "after" {
            break;
        }
        got.push(payload);
    }
    // Outage publishes reach the server before the subscriber may have resubscribed; those
    // that arrive are in order and none is duplicated.
    let expected: Vec<Bytes> = (0..100)
        .map(|i| Bytes::from(format!("outage {i}")))
        .collect();
    let start = expected
        .iter()
        .position(|p| Some(p) == got.first())
        .unwrap_or(expected.len());
    assert_eq!(
        got,
        expected[start..],
        "kept publishes arrive in order, once"
    );
    assert_eq!(subscriber.statistics().connects.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn outage_publishes_all_arrive_once_in_order() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let publisher = quick()
        .ignore_discovered_servers()
        .connect(proxy.url())
        .await
        .unwrap();
    let mut events = publisher.events();
    // Cut the publisher off and keep it off while publishing.
    proxy.refuse(true);
    proxy.cut();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    for i in 0..500 {
        publisher
            .publish("kept", Bytes::from(i.to_string()))
            .await
            .unwrap();
    }
    let subscriber = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = subscriber.subscribe("kept").await.unwrap();
    subscriber.flush().await.unwrap();
    proxy.refuse(false);
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    publisher.flush().await.unwrap();
    for i in 0..500 {
        assert_eq!(next_payload(&mut sub).await, Bytes::from(i.to_string()));
    }
    publisher.publish("kept", "end".into()).await.unwrap();
    assert_eq!(
        next_payload(&mut sub).await,
        Bytes::from("end"),
        "no duplicates"
    );
}

#[tokio::test]
async fn the_reconnect_buffer_is_bounded() {
    let mut server = NatsServer::start();
    let client = quick()
        .reconnect_buffer_size(1024)
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    server.kill();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    let payload = Bytes::from(vec![b'x'; 100]);
    let mut accepted = 0;
    let err = loop {
        match client.publish("full", payload.clone()).await {
            Ok(()) => accepted += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(
        err.cause(),
        Some(&PublishCause::ReconnectBufferFull { limit: 1024 })
    );
    assert!((5..=10).contains(&accepted), "{accepted}");
    // Reconnecting empties it again.
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client.flush().await.unwrap();
    client.publish("full", payload).await.unwrap();
}

#[tokio::test]
async fn flush_waits_for_the_reconnect() {
    let mut server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    server.kill();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    let flusher = client.clone();
    let flush = tokio::spawn(async move { flusher.flush().await });
    server.restart().unwrap();
    tokio::time::timeout(WAIT, flush)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(client.connection_state(), rnats_core::State::Connected);
}

#[tokio::test]
async fn requests_fail_fast_on_disconnect_when_asked() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = quick()
        .fail_requests_on_disconnect()
        .request_timeout(Some(Duration::from_secs(30)))
        .connect(proxy.url())
        .await
        .unwrap();
    let _silent = client.subscribe("slow").await.unwrap();
    client.flush().await.unwrap();
    let requester = client.clone();
    let request = tokio::spawn(async move { requester.request("slow", "?".into()).await });
    // The request is registered once its publish is flushed behind it.
    client.flush().await.unwrap();
    proxy.cut();
    let result = tokio::time::timeout(WAIT, request).await.unwrap().unwrap();
    // The disconnect ended it, not the 30 s request timeout (that would be `TimedOut`).
    assert_eq!(
        result.unwrap_err().cause(),
        Some(&RequestCause::Disconnected)
    );
}

#[tokio::test]
async fn requests_time_out_while_reconnecting() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let limit = Duration::from_millis(300);
    let client = quick()
        .request_timeout(Some(limit))
        .connect(proxy.url())
        .await
        .unwrap();
    let _silent = client.subscribe("slow").await.unwrap();
    client.flush().await.unwrap();
    let mut events = client.events();
    // One request in flight when the link goes, its deadline already watched...
    let requester = client.clone();
    let long = Duration::from_secs(2);
    let before = tokio::spawn(async move {
        requester
            .request_with_timeout("slow", "?".into(), Some(long))
            .await
    });
    client.flush().await.unwrap();
    proxy.refuse(true);
    proxy.cut();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    // ...and one made while the client is reconnecting.
    let during = client.request("slow", "?".into());
    let during = tokio::time::timeout(WAIT, during).await.unwrap();
    let before = tokio::time::timeout(WAIT, before).await.unwrap().unwrap();
    assert_eq!(
        before.unwrap_err().cause(),
        Some(&RequestCause::TimedOut(long))
    );
    assert_eq!(
        during.unwrap_err().cause(),
        Some(&RequestCause::TimedOut(limit))
    );
    assert_ne!(client.connection_state(), rnats_core::State::Connected);
}

#[tokio::test]
async fn retry_on_initial_connect_keeps_publishes_until_the_server_is_reachable() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    proxy.refuse(true);
    let client = quick()
        .retry_on_initial_connect()
        .ignore_discovered_servers()
        .connect(proxy.url())
        .await
        .unwrap();
    assert_eq!(client.connection_state(), rnats_core::State::Pending);
    let mut events = client.events();
    client.publish("early", "kept".into()).await.unwrap();
    let watcher = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = watcher.subscribe("early").await.unwrap();
    watcher.flush().await.unwrap();
    proxy.refuse(false);
    // The first connection made in the background is reported as `Connected`.
    wait_for(&mut events, |e| *e == ConnectionEvent::Connected).await;
    assert_eq!(next_payload(&mut sub).await, Bytes::from("kept"));
    assert_eq!(client.connection_state(), rnats_core::State::Connected);
}

#[tokio::test]
async fn a_first_connect_in_the_background_counts_and_reports_every_attempt() {
    let port = rnats_test_server::free_port();
    let (delays_tx, mut delays) = tokio::sync::mpsc::unbounded_channel();
    let (events_tx, mut callback) = tokio::sync::mpsc::unbounded_channel();
    let client = rnats_core::ConnectOptions::new()
        .retry_on_initial_connect()
        .max_reconnects(3)
        .reconnect_delay_callback(move |attempt| {
            let _ = delays_tx.send(attempt);
            Duration::from_millis(10)
        })
        .event_callback(move |event| {
            let tx = events_tx.clone();
            async move {
                let _ = tx.send(event);
            }
        })
        .connect(format!("nats://127.0.0.1:{port}"))
        .await
        .unwrap();
    // Back at once, before any INFO: the defaults stand in, as in async-nats.
    assert_eq!(client.connection_state(), rnats_core::State::Pending);
    assert_eq!(client.max_payload(), 1024 * 1024);
    assert_eq!(client.try_server_info(), None);
    assert_eq!(client.server_info(), rnats_core::ServerInfo::default());
    let mut events = client.events();
    // Each attempt is reported to listeners, numbered from 1...
    for n in 1..=3 {
        let event = wait_for(&mut events, |e| {
            matches!(e, ConnectionEvent::ReconnectFailed { .. })
        })
        .await;
        assert!(
            matches!(event, ConnectionEvent::ReconnectFailed { attempt, .. } if attempt == n),
            "{event:?}"
        );
    }
    wait_for(&mut events, |e| *e == ConnectionEvent::Closed).await;
    // ...the delay callback was asked before each, the first included...
    let mut asked = Vec::new();
    while let Ok(n) = delays.try_recv() {
        asked.push(n);
    }
    assert_eq!(asked, [1, 2, 3]);
    // ...and the event callback heard of each failed try, then of the end, in async-nats'
    // shape.
    let mut heard = Vec::new();
    while let Some(event) = tokio::time::timeout(WAIT, callback.recv()).await.unwrap() {
        let closed = event == rnats_core::Event::Closed;
        heard.push(event);
        if closed {
            break;
        }
    }
    let failed = rnats_core::Event::ClientError(rnats_core::ClientError::Other("IO error".into()));
    assert_eq!(
        heard,
        [
            failed.clone(),
            failed.clone(),
            failed,
            rnats_core::Event::ClientError(rnats_core::ClientError::MaxReconnects),
            rnats_core::Event::Closed,
        ]
    );
}

#[tokio::test]
async fn flushes_waiting_for_a_reconnect_fail_when_the_client_closes() {
    let mut server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    server.kill();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    // Polled once here, so it is parked for the reconnect (not started after the close,
    // which would fail it with `NotSent` instead).
    let mut flush = Box::pin(client.flush());
    assert!(
        (&mut flush).now_or_never().is_none(),
        "parked until a reconnect"
    );
    client.close().await;
    let result = tokio::time::timeout(WAIT, flush).await.unwrap();
    assert_eq!(result.unwrap_err().cause(), Some(&FlushCause::Closed));
}

#[tokio::test]
async fn close_while_reconnecting_ends_promptly() {
    let mut server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("x").await.unwrap();
    server.kill();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    tokio::time::timeout(Duration::from_secs(5), client.close())
        .await
        .unwrap();
    assert!(client.is_closed());
    assert!(
        tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .is_none()
    );
    let err = client.publish("x", "y".into()).await.unwrap_err();
    assert_eq!(err.cause(), Some(&PublishCause::Closed));
}

#[tokio::test]
async fn max_reconnects_gives_up_and_closes() {
    let mut server = NatsServer::start();
    let client = quick()
        .max_reconnects(Some(3))
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    server.kill();
    let mut disconnects = 0;
    wait_for(&mut events, |e| {
        disconnects += usize::from(matches!(e, ConnectionEvent::Disconnected { .. }));
        *e == ConnectionEvent::Closed
    })
    .await;
    assert_eq!(disconnects, 1, "the disconnect is reported once");
    assert!(client.is_closed());
}

#[tokio::test]
async fn a_stalled_connection_is_detected_by_the_ping_timer_and_replaced() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    // The proxy is the only way in, so the replacement goes through it too.
    let client = quick()
        .ping_interval(Duration::from_millis(100))
        .max_pings_outstanding(2)
        .ignore_discovered_servers()
        .connect(proxy.url())
        .await
        .unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("alive").await.unwrap();
    client.flush().await.unwrap();
    proxy.stall();
    let event = wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    assert!(event.to_string().contains("stale"), "{event}");
    proxy.cut();
    proxy.resume();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client.publish("alive", "again".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("again"));
}

/// A server that stops reading while a publisher has bytes for it: with a write timeout the
/// link ends once the socket has taken nothing for that long, far inside the ping interval;
/// a client beside it without one (the default) is still waiting on the same stalled link.
#[tokio::test]
async fn a_write_timeout_ends_a_link_whose_server_stopped_reading() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let timeout = Duration::from_millis(500);
    // Pings every minute (the default): they cannot be what ends the link here.
    let client = quick()
        .write_timeout(timeout)
        .ignore_discovered_servers()
        .connect(proxy.url())
        .await
        .unwrap();
    let untimed = quick()
        .ignore_discovered_servers()
        .connect(proxy.url())
        .await
        .unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("after").await.unwrap();
    client.flush().await.unwrap();
    untimed.flush().await.unwrap();
    proxy.stall();
    let stalled = Instant::now();
    // Each publisher fills its socket, and the proxy's, then waits for room.
    let publishers = [
        publish_filler(client.clone()),
        publish_filler(untimed.clone()),
    ];
    wait_for_write_stall(&mut events, stalled, timeout).await;
    // The same stall, no write timeout: its link stands (and would until pings end it).
    assert_eq!(untimed.connection_state(), State::Connected);
    assert_eq!(untimed.statistics().connects.load(Ordering::Relaxed), 1);
    for publisher in publishers {
        publisher.abort();
    }
    proxy.cut();
    proxy.resume();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client
        .publish("after", "moving again".into())
        .await
        .unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("moving again"));
}

/// A link that stops and goes (the proxy holds its bytes for 300 ms at a time) keeps taking
/// bytes within every write timeout of 1 s: it is slow, not stalled, and stays up. (The
/// holds are the scenario; the timeout leaves a busy machine 700 ms to resume the proxy.)
#[tokio::test]
async fn a_write_timeout_leaves_a_link_that_keeps_moving() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = quick()
        .write_timeout(Duration::from_secs(1))
        .ignore_discovered_servers()
        .connect(proxy.url())
        .await
        .unwrap();
    client.flush().await.unwrap();
    let publishing = publish_filler(client.clone());
    let before = client.statistics().out_bytes.load(Ordering::Relaxed);
    let stop_and_go = tokio::task::spawn_blocking(move || {
        for _ in 0..8 {
            proxy.stall();
            std::thread::sleep(Duration::from_millis(300));
            proxy.resume();
            std::thread::sleep(Duration::from_millis(50));
        }
        proxy
    });
    let proxy = stop_and_go.await.unwrap();
    let moved = client.statistics().out_bytes.load(Ordering::Relaxed) - before;
    publishing.abort();
    assert_eq!(client.statistics().connects.load(Ordering::Relaxed), 1);
    assert_eq!(client.connection_state(), State::Connected);
    // The socket was full at every stall: the watch was running and saw the bytes move.
    assert!(moved > 8 << 20, "only {moved} bytes went out");
    drop(proxy);
}

#[tokio::test]
async fn cluster_failover_keeps_subscriptions_and_requests_working() {
    let mut cluster = Cluster::start(3).unwrap();
    let urls = cluster.urls().join(",");
    let client = quick().retain_servers_order().connect(&urls).await.unwrap();
    let service = quick().connect(cluster.urls()[2].clone()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("fo").await.unwrap();
    let mut requests = service.subscribe("fo.svc").await.unwrap();
    client.flush().await.unwrap();
    service.flush().await.unwrap();
    let responder = service.clone();
    tokio::spawn(async move {
        while let Some(m) = requests.next().await {
            if let Some(reply) = m.reply {
                let _ = responder.publish(reply, "pong".into()).await;
            }
        }
    });
    // With the order retained the client is on the first node; kill it.
    assert_eq!(client.server_info().port, cluster.nodes()[0].port());
    let killed = Instant::now();
    cluster.node_mut(0).kill();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    let failover = killed.elapsed();
    eprintln!("failover took {failover:?}");
    assert_ne!(client.server_info().port, cluster.nodes()[0].port());
    client.flush().await.unwrap();
    // The restored subscription reaches the other nodes over the routes asynchronously, so
    // the service's node may drop the first publishes: repeat until one arrives.
    let mut delivered = false;
    for _ in 0..100 {
        service
            .publish("fo", "after failover".into())
            .await
            .unwrap();
        if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(100), sub.next()).await {
            assert_eq!(m.payload, Bytes::from("after failover"));
            delivered = true;
            break;
        }
    }
    assert!(delivered, "the subscription never received after failover");
    // The same holds for the request inbox the client restored.
    let mut answered = false;
    for _ in 0..50 {
        let timeout = Some(Duration::from_millis(200));
        match client
            .request_with_timeout("fo.svc", "ping".into(), timeout)
            .await
        {
            Ok(reply) => {
                assert_eq!(reply.payload, Bytes::from("pong"));
                answered = true;
                break;
            }
            Err(e) if e.kind() == RequestErrorKind::TimedOut => continue,
            Err(e) => panic!("request failed: {e}"),
        }
    }
    assert!(answered, "requests were never answered after failover");
}

#[tokio::test]
async fn lame_duck_mode_moves_the_client_before_the_server_goes() {
    let cluster = Cluster::start(2).unwrap();
    // Both nodes in the pool from the start, node 0 first: this tests the move, not
    // discovery (a node's INFO has been seen to miss the other node under load, and a pool
    // of the lame duck alone can only retry its closed port).
    let client = quick()
        .retain_servers_order()
        .connect(cluster.urls().join(","))
        .await
        .unwrap();
    assert_eq!(client.server_info().port, cluster.nodes()[0].port());
    let mut events = client.events();
    let mut sub = client.subscribe("ldm").await.unwrap();
    client.flush().await.unwrap();
    cluster.nodes()[0].signal("ldm").unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::LameDuckMode).await;
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert_eq!(client.server_info().port, cluster.nodes()[1].port());
    client.publish("ldm", "moved".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("moved"));
}

#[tokio::test]
async fn force_reconnect_restores_subscriptions_with_their_remaining_count() {
    let server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("limited").await.unwrap();
    sub.unsubscribe_after(3).await.unwrap();
    client.flush().await.unwrap();
    client.publish("limited", "1".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("1"));
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    for i in 2..=5 {
        client
            .publish("limited", Bytes::from(i.to_string()))
            .await
            .unwrap();
    }
    client.flush().await.unwrap();
    let rest: Vec<Bytes> = tokio::time::timeout(WAIT, sub.by_ref().map(|m| m.payload).collect())
        .await
        .unwrap();
    assert_eq!(rest, [Bytes::from("2"), Bytes::from("3")]);
}

#[tokio::test]
async fn servers_advertised_by_the_cluster_are_used_for_failover() {
    let mut cluster = Cluster::start(3).unwrap();
    // Only the first node is given; the others come from its INFO.
    let client = quick().connect(cluster.nodes()[0].url()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("disc").await.unwrap();
    client.flush().await.unwrap();
    let info = client.server_info();
    assert!(info.connect_urls.len() >= 2, "{:?}", info.connect_urls);
    cluster.node_mut(0).kill();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    let other = rnats_core::connect(cluster.nodes()[1].url()).await.unwrap();
    other.flush().await.unwrap();
    client.flush().await.unwrap();
    // Interest crosses the routes asynchronously: publish until it has.
    assert!(publish_until_received(&other, &mut sub, "disc").await);
}

/// Publishes to `subject` from `publisher` until `sub` receives one; false if it never does.
/// For subscriptions whose interest must first travel between cluster nodes.
async fn publish_until_received(
    publisher: &rnats_core::Client,
    sub: &mut rnats_core::Subscriber,
    subject: &'static str,
) -> bool {
    for _ in 0..100 {
        publisher.publish(subject, "probe".into()).await.unwrap();
        if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(100), sub.next()).await {
            assert_eq!(m.payload, Bytes::from("probe"));
            return true;
        }
    }
    false
}

#[tokio::test]
async fn a_steady_publisher_through_a_restart_loses_nothing_once_the_subscriber_is_back() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let mut server = NatsServer::start();
    let subscriber = quick().connect(server.url()).await.unwrap();
    let publisher = quick().connect(server.url()).await.unwrap();
    let mut sub_events = subscriber.events();
    let mut sub = subscriber.subscribe("seq").await.unwrap();
    subscriber.flush().await.unwrap();

    let published = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let task = {
        let (published, stop) = (published.clone(), stop.clone());
        tokio::spawn(async move {
            // About one message a millisecond, before, during and after the outage.
            let mut pace = tokio::time::interval(Duration::from_millis(1));
            let mut seq = 0u64;
            while !stop.load(Ordering::Relaxed) {
                pace.tick().await;
                publisher
                    .publish("seq", Bytes::from(seq.to_string()))
                    .await
                    .unwrap();
                seq += 1;
                published.store(seq, Ordering::Relaxed);
            }
        })
    };
    let parse = |p: Bytes| std::str::from_utf8(&p).unwrap().parse::<u64>().unwrap();
    let mut received = vec![parse(next_payload(&mut sub).await)];

    server.kill();
    wait_for(&mut sub_events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    server.restart().unwrap();
    wait_for(&mut sub_events, |e| *e == ConnectionEvent::Reconnected).await;
    subscriber.flush().await.unwrap();
    // Everything published from here on must arrive.
    let resumed_at = published.load(Ordering::Relaxed);
    loop {
        let seq = parse(next_payload(&mut sub).await);
        received.push(seq);
        if seq >= resumed_at + 200 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    task.await.unwrap();

    assert!(
        received.windows(2).all(|w| w[0] < w[1]),
        "in order, no duplicates"
    );
    let after: Vec<u64> = received
        .iter()
        .copied()
        .filter(|s| *s >= resumed_at)
        .collect();
    let expected: Vec<u64> = (resumed_at..=resumed_at + 200).collect();
    assert_eq!(
        after, expected,
        "nothing lost after the subscriber was back"
    );
}

#[tokio::test]
async fn drain_of_a_stalled_connection_gives_up_after_the_drain_timeout_and_closes() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = quick()
        .drain_timeout(Duration::from_millis(200))
        .connect(proxy.url())
        .await
        .unwrap();
    let mut sub = client.subscribe("d").await.unwrap();
    client.flush().await.unwrap();
    // Still connected, but the server's answers never come.
    proxy.stall();
    let result = tokio::time::timeout(WAIT, client.drain()).await.unwrap();
    let flush = result
        .unwrap_err()
        .source()
        .and_then(|e| e.downcast_ref::<FlushError>())
        .and_then(|e| e.cause().cloned());
    assert_eq!(
        flush,
        Some(FlushCause::TimedOut(Duration::from_millis(200)))
    );
    assert!(client.is_closed());
    assert!(
        tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn drain_while_disconnected_closes_at_once_and_says_nothing_was_drained() {
    let mut server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("d").await.unwrap();
    client.flush().await.unwrap();
    server.kill();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    let result = tokio::time::timeout(WAIT, client.drain()).await.unwrap();
    let flush = result
        .unwrap_err()
        .source()
        .and_then(|e| e.downcast_ref::<FlushError>())
        .and_then(|e| e.cause().cloned());
    assert_eq!(flush, Some(FlushCause::NotConnected));
    assert!(client.is_closed());
    assert!(
        tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_server_that_closes_every_link_at_once_is_dialled_with_backoff() {
    // Fake server: see `closing_server`.
    let (url, accepted) = closing_server();
    let client = rnats_core::connect(url).await.unwrap();
    tokio::task::spawn_blocking(move || assert_backed_off(&accepted))
        .await
        .unwrap();
    drop(client);
}

#[tokio::test]
async fn the_client_names_the_server_it_is_connected_to() {
    let mut cluster = Cluster::start(2).unwrap();
    let (first, second) = (cluster.nodes()[0].port(), cluster.nodes()[1].port());
    let client = quick()
        .retain_servers_order()
        .connect(cluster.urls().join(","))
        .await
        .unwrap();
    let mut events = client.events();
    assert_eq!(client.connected_server().map(|s| s.port()), Some(first));
    cluster.node_mut(0).kill();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert_eq!(client.connected_server().map(|s| s.port()), Some(second));
    client.close().await;
    assert_eq!(client.connected_server(), None);
}

#[test]
fn the_blocking_client_names_the_server_it_is_connected_to() {
    let mut cluster = Cluster::start(2).unwrap();
    let (first, second) = (cluster.nodes()[0].port(), cluster.nodes()[1].port());
    let client = quick()
        .retain_servers_order()
        .connect_blocking(cluster.urls().join(","))
        .unwrap();
    let mut events = client.events();
    assert_eq!(client.connected_server().map(|s| s.port()), Some(first));
    cluster.node_mut(0).kill();
    wait_for_blocking(&mut events, |e| *e == ConnectionEvent::Reconnected);
    assert_eq!(client.connected_server().map(|s| s.port()), Some(second));
    client.close();
    assert_eq!(client.connected_server(), None);
}
