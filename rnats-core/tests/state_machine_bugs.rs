//! Regression tests for the connection-state bugs of issue 9, against real nats-servers.
//! Each test failed before its fix; the commit that adds it says how.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use rnats_core::{ConnectOptions, ConnectionEvent, FlushCause, HeaderMap, RequestCause};
use rnats_test_server::{NatsServer, Proxy};

/// Bug 7: `ping_interval(Duration::MAX)` made `Instant + Duration` overflow at the first
/// reconnect; the engine panicked and every later call hung.
#[tokio::test]
async fn a_ping_interval_of_duration_max_survives_a_reconnect() {
    let server = NatsServer::start();
    let client = quick()
        .ping_interval(Duration::MAX)
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
    tokio::time::timeout(WAIT, client.close()).await.unwrap();
}

/// Bug 7: a huge linger delay overflowed the linger deadline.
#[tokio::test]
async fn a_linger_of_duration_max_does_not_overflow() {
    let server = NatsServer::start();
    let receiver = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = receiver.subscribe("long.linger").await.unwrap();
    receiver.flush().await.unwrap();
    let client = ConnectOptions::new()
        .linger(Duration::MAX, 1 << 20)
        .connect(server.url())
        .await
        .unwrap();
    client.publish("long.linger", "x".into()).await.unwrap();
    tokio::time::timeout(WAIT, client.flush())
        .await
        .expect("the engine is alive")
        .unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("x"));
}

/// Bug 8: a request failed by `fail_requests_on_disconnect` reported `Closed` when its
/// caller looked after the reconnect was already done.
#[tokio::test]
async fn a_request_failed_by_a_disconnect_says_so_after_a_fast_reconnect() {
    let server = NatsServer::start();
    let client = quick()
        .fail_requests_on_disconnect()
        .connect(server.url())
        .await
        .unwrap();
    let _silent = client.subscribe("nobody.answers").await.unwrap();
    client.flush().await.unwrap();
    let mut events = client.events();
    let pending = client
        .start_request("nobody.answers", None, "?".into())
        .await
        .unwrap();
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    let err = tokio::time::timeout(WAIT, pending.wait(None))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.cause(), Some(&RequestCause::Disconnected));
}

/// Bug 3: a flush whose PING was lost with the link resolved Ok after the reconnect,
/// although the publishes before it were lost too.
#[tokio::test]
async fn a_flush_lost_with_its_link_fails() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = quick().connect(proxy.url()).await.unwrap();
    let mut events = client.events();
    client.flush().await.unwrap();
    proxy.stall();
    client.publish("lost", "x".into()).await.unwrap();
    let mut flush = Box::pin(client.flush());
    assert!((&mut flush).now_or_never().is_none(), "the PING is out");
    // The PUB and the PING are with the stalled proxy; cutting it loses them.
    proxy.cut();
    proxy.resume();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    let result = tokio::time::timeout(WAIT, flush).await.unwrap();
    assert_eq!(result.unwrap_err().cause(), Some(&FlushCause::Disconnected));
    // Flushes made after the reconnect work as usual.
    client.flush().await.unwrap();
}

/// Bug 3: `force_reconnect` discarded up to two write limits of accepted publishes although
/// the old server was healthy; a planned move writes them first.
#[tokio::test]
async fn force_reconnect_first_writes_what_was_accepted() {
    let server = NatsServer::start();
    let receiver = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = receiver.subscribe("moved").await.unwrap();
    receiver.flush().await.unwrap();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    let n = 5_000;
    let payload = Bytes::from(vec![b'm'; 100]);
    for _ in 0..n {
        client.publish("moved", payload.clone()).await.unwrap();
    }
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client.publish("moved", "last".into()).await.unwrap();
    client.flush().await.unwrap();
    let mut got = 0;
    loop {
        let payload = next_payload(&mut sub).await;
        if payload == "last" {
            break;
        }
        got += 1;
    }
    assert_eq!(got, n, "every accepted publish reached the server");
}

/// Bug 4: dropping a `Subscriber::drain` future left the entry in the table, and the
/// stream never ended.
#[tokio::test]
async fn a_dropped_subscriber_drain_still_ends_the_stream() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = client.subscribe("d").await.unwrap();
    client.flush().await.unwrap();
    assert!(
        sub.drain().now_or_never().is_none(),
        "drain waits for a PONG"
    );
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("the stream ends");
    assert!(end.is_none());
}

/// Bug 4: dropping a `Client::drain` future left the subscriptions open and the client
/// running; a started drain finishes.
#[tokio::test]
async fn a_dropped_client_drain_still_ends_subscriptions_and_closes() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("d").await.unwrap();
    client.flush().await.unwrap();
    assert!(client.drain().now_or_never().is_none());
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("the stream ends");
    assert!(end.is_none());
    wait_for(&mut events, |e| *e == ConnectionEvent::Closed).await;
    assert!(client.is_closed());
}

/// A client behind a proxy (to cut or stall), its events, and a subscription to `d` the
/// server has.
async fn subscribed_through_a_proxy() -> (
    NatsServer,
    Proxy,
    rnats_core::Client,
    rnats_core::Events,
    rnats_core::Subscriber,
) {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = quick().connect(proxy.url()).await.unwrap();
    let events = client.events();
    let sub = client.subscribe("d").await.unwrap();
    client.flush().await.unwrap();
    (server, proxy, client, events, sub)
}

/// Bug 4: a drain during an outage waited the whole drain timeout (30 s by default) and
/// then re-subscribed; nats.go closes at once and reports an error. A drained client
/// never dials again.
#[tokio::test]
async fn drain_during_an_outage_closes_at_once_and_never_dials_again() {
    let (_server, proxy, client, mut events, mut sub) = subscribed_through_a_proxy().await;
    proxy.refuse(true);
    proxy.cut();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    let result = tokio::time::timeout(Duration::from_secs(5), client.drain())
        .await
        .expect("drain returns promptly during an outage");
    assert!(result.is_err(), "nothing could be drained");
    assert!(client.is_closed());
    assert!(
        tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .is_none()
    );
    proxy.refuse(false);
    // A closed client has no engine left to dial: a flush fails at once, and no
    // connection is made through the proxy.
    assert!(client.flush().await.is_err());
    assert_eq!(proxy.connections(), 0);
}

/// Bug 2: with linger on, a publisher blocked on the write limit waited for the linger
/// timer, because the engine was only woken at `max_bytes`.
#[tokio::test]
async fn a_lingering_publisher_at_the_write_limit_does_not_wait_for_the_timer() {
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .write_buffer_limit(16 * 1024)
        .linger(Duration::from_secs(3600), 1 << 30)
        .connect(server.url())
        .await
        .unwrap();
    let payload = Bytes::from(vec![b'l'; 1024]);
    tokio::time::timeout(Duration::from_secs(10), async {
        for _ in 0..1_000 {
            client
                .publish("linger.limit", payload.clone())
                .await
                .unwrap();
        }
    })
    .await
    .expect("publishers at the write limit are not held for the linger delay");
}

/// Bug 9: before the first connect (`retry_on_initial_connect`) header publishes failed
/// with `HeadersNotSupported`, as if the server had refused headers.
#[tokio::test]
async fn header_publishes_are_kept_before_the_first_connect() {
    let server = NatsServer::start();
    let receiver = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = receiver.subscribe("early").await.unwrap();
    receiver.flush().await.unwrap();
    let proxy = Proxy::start(&server.url()).unwrap();
    proxy.refuse(true);
    let client = quick()
        .retry_on_initial_connect()
        .connect(proxy.url())
        .await
        .unwrap();
    let mut events = client.events();
    let mut headers = HeaderMap::new();
    headers.insert("k", "v");
    client
        .publish_with_headers("early", headers, "h".into())
        .await
        .unwrap();
    proxy.refuse(false);
    wait_for(&mut events, |e| *e == ConnectionEvent::Connected).await;
    client.flush().await.unwrap();
    let m = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(m.payload, Bytes::from("h"));
    assert_eq!(m.headers.unwrap().get("k").map(|v| v.as_str()), Some("v"));
}

/// Bug 4: a subscription drained during an outage was re-subscribed by the next
/// reconnect's replay (its UNSUB could not be sent), so the server kept sending for it.
#[tokio::test]
async fn a_subscription_drained_during_an_outage_is_not_restored() {
    let mut server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("drained").await.unwrap();
    client.flush().await.unwrap();
    server.kill();
    wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    tokio::time::timeout(Duration::from_secs(5), sub.drain())
        .await
        .expect("nothing to wait for during an outage")
        .unwrap();
    assert!(sub.next().await.is_none());
    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client.flush().await.unwrap();
    let received = client.statistics().in_messages.load(Ordering::Relaxed);
    let publisher = rnats_core::connect(server.url()).await.unwrap();
    publisher.publish("drained", "x".into()).await.unwrap();
    publisher.flush().await.unwrap();
    // The server handled the PUB before this PING: a MSG for a live SUB comes before the PONG.
    client.flush().await.unwrap();
    assert_eq!(
        client.statistics().in_messages.load(Ordering::Relaxed),
        received,
        "the server has no subscription left for it"
    );
}

/// The `Draining` phase: a link lost while a drain waits for its PONG is not re-established
/// (a reconnect would only restore the subscriptions being taken down); the engine closes
/// the client itself and the drain fails. Before the phase existed the engine reconnected
/// and replayed the drained subscription, and only the drain's own close stopped it.
#[tokio::test]
async fn a_link_lost_while_draining_is_not_reestablished() {
    let (_server, proxy, client, mut events, mut sub) = subscribed_through_a_proxy().await;
    proxy.stall();
    // Polled once here, so it has sent its UNSUB and PING; not polled again until the
    // engine has decided, so its own close cannot be what stops a reconnect.
    let mut drain = Box::pin(client.drain());
    assert!(
        (&mut drain).now_or_never().is_none(),
        "the drain waits for its PONG"
    );
    assert!(
        matches!(
            client.subscribe("late").await.unwrap_err().cause(),
            Some(rnats_core::SubscribeCause::Draining)
        ),
        "no new subscription while draining"
    );
    // The UNSUB and the drain's PING are with the stalled proxy; cutting it loses them.
    proxy.cut();
    proxy.resume();
    let ended = wait_for(&mut events, |e| {
        matches!(e, ConnectionEvent::Reconnected | ConnectionEvent::Closed)
    })
    .await;
    assert_eq!(
        ended,
        ConnectionEvent::Closed,
        "the draining client reconnected"
    );
    assert!(client.is_closed());
    let result = tokio::time::timeout(WAIT, drain).await.unwrap();
    assert!(result.is_err(), "the drain could not finish");
    assert!(
        tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(client.statistics().connects.load(Ordering::Relaxed), 1);
}
