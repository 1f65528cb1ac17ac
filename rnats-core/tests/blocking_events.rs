//! The blocking client's lifecycle against real nats-servers: its connection events (the
//! `events()` iterator and the `event_callback` thread), its server pool, and the
//! reconnect-to-server callback.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::WAIT;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use rnats_core::blocking::{self, Events};
use rnats_core::proto::{PermissionOp, ServerError as ProtocolError};
use rnats_core::{
    ClientError, ConnectOptions, ConnectionEvent, Event, ReconnectToServer, ServerAddr,
    ServerError, ServerPoolErrorKind, SetServerPoolErrorKind,
};
use rnats_test_server::{Cluster, NatsServer, free_port};

fn quick() -> ConnectOptions {
    common::quick()
}

/// The next event other than `DiscoveredServers` (a cluster's INFO updates come and go with
/// its membership, whatever else happens), failing the test instead of hanging.
fn next_event(events: &mut Events) -> ConnectionEvent {
    loop {
        match events.next_timeout(WAIT) {
            // Failed reconnect attempts come and go with the timing of a restart, and news of
            // the cluster with the timing of its routes.
            Ok(Some(
                ConnectionEvent::DiscoveredServers(_)
                | ConnectionEvent::ClusterChanged
                | ConnectionEvent::ReconnectFailed { .. },
            )) => continue,
            Ok(Some(event)) => return event,
            Ok(None) => panic!("the events ended"),
            Err(timed_out) => panic!("no event: {timed_out}"),
        }
    }
}

/// Waits for the first event `want` accepts, skipping others.
fn wait_for(events: &mut Events, mut want: impl FnMut(&ConnectionEvent) -> bool) {
    while !want(&next_event(events)) {}
}

fn disconnected(event: &ConnectionEvent) -> bool {
    matches!(event, ConnectionEvent::Disconnected { .. })
}

/// That the iterator has ended (the client closed and everything was read).
fn assert_ended(events: &mut Events) {
    assert_eq!(events.next_timeout(WAIT), Ok(None));
    assert_eq!(events.next(), None);
}

#[test]
fn the_first_connect_in_the_background_is_connected_and_closed_ends_the_events() {
    let port = free_port();
    let client = quick()
        .retry_on_initial_connect()
        .connect_blocking(format!("nats://127.0.0.1:{port}"))
        .unwrap();
    assert!(!client.is_connected());
    let mut events = client.events();
    let _server = NatsServer::builder().port(port).spawn().unwrap();
    // Failed attempts before it are `ReconnectFailed`; the first link is not a reconnect.
    let mut event = next_event(&mut events);
    while let ConnectionEvent::ReconnectFailed { .. } = event {
        event = next_event(&mut events);
    }
    assert_eq!(event, ConnectionEvent::Connected);
    client.flush().unwrap();
    assert_eq!(events.try_next(), None);
    client.close();
    assert_eq!(next_event(&mut events), ConnectionEvent::Closed);
    assert_ended(&mut events);
    // Listeners that come after the close end at once.
    assert_ended(&mut client.events());
}

#[test]
fn a_restart_is_disconnected_then_reconnected() {
    let mut server = NatsServer::start();
    let client = quick().connect_blocking(server.url()).unwrap();
    let mut sub = client.subscribe("after.restart").unwrap();
    client.flush().unwrap();
    let mut events = client.events();
    let mut second = client.events();
    server.kill();
    assert!(disconnected(&next_event(&mut events)));
    server.restart().unwrap();
    assert_eq!(next_event(&mut events), ConnectionEvent::Reconnected);
    // The reconnect is done: the subscription is back without polling the state.
    assert!(client.is_connected());
    client.publish("after.restart", "back".into()).unwrap();
    let message = sub.next_timeout(WAIT).unwrap().unwrap();
    assert_eq!(message.payload, Bytes::from("back"));
    assert_eq!(events.try_next(), None);
    // Every listener has its own copy, in the same order.
    assert!(disconnected(&next_event(&mut second)));
    assert_eq!(next_event(&mut second), ConnectionEvent::Reconnected);
    assert_eq!(second.try_next(), None);
}

#[test]
fn lame_duck_mode_comes_before_the_move() {
    let cluster = Cluster::start(2).unwrap();
    // Both nodes up front, node 0 first, as in tests/blocking.rs
    // `lame_duck_mode_moves_the_client_to_another_server`: node 0's INFOs do not always list
    // node 1, and a pool of node 0 alone never gets off the lame duck.
    let client = quick()
        .retain_servers_order()
        .connect_blocking(cluster.urls().join(","))
        .unwrap();
    assert_eq!(client.server_info().port, cluster.nodes()[0].port());
    let mut events = client.events();
    cluster.nodes()[0].signal("ldm").unwrap();
    assert_eq!(next_event(&mut events), ConnectionEvent::LameDuckMode);
    assert!(disconnected(&next_event(&mut events)));
    assert_eq!(next_event(&mut events), ConnectionEvent::Reconnected);
    assert_eq!(client.server_info().port, cluster.nodes()[1].port());
    client.flush().unwrap();
}

#[test]
fn running_out_of_reconnects_is_a_client_error_then_closed() {
    let mut server = NatsServer::start();
    let client = quick()
        .max_reconnects(1)
        .connect_blocking(server.url())
        .unwrap();
    let mut events = client.events();
    server.kill();
    assert!(disconnected(&next_event(&mut events)));
    let failed = events.next_timeout(WAIT).unwrap().unwrap();
    assert!(
        matches!(failed, ConnectionEvent::ReconnectFailed { attempt: 1, .. }),
        "{failed:?}"
    );
    assert_eq!(
        next_event(&mut events),
        ConnectionEvent::ClientError(ClientError::MaxReconnects)
    );
    assert_eq!(next_event(&mut events), ConnectionEvent::Closed);
    assert_ended(&mut events);
    assert!(client.is_closed());
}

#[test]
fn no_reconnect_is_disconnected_then_closed() {
    let mut server = NatsServer::start();
    let client = quick()
        .no_reconnect()
        .connect_blocking(server.url())
        .unwrap();
    let mut events = client.events();
    server.kill();
    assert!(disconnected(&next_event(&mut events)));
    // Nothing ran out: no `MaxReconnects`, as in the async client.
    assert_eq!(next_event(&mut events), ConnectionEvent::Closed);
    assert_ended(&mut events);
}

#[test]
fn drain_is_draining_then_closed() {
    let server = NatsServer::start();
    let client = blocking::connect(server.url()).unwrap();
    let _sub = client.subscribe("drained").unwrap();
    let mut events = client.events();
    client.drain().unwrap();
    assert_eq!(next_event(&mut events), ConnectionEvent::Draining);
    assert_eq!(next_event(&mut events), ConnectionEvent::Closed);
    assert_ended(&mut events);
}

#[test]
fn dropping_the_last_handle_ends_the_events() {
    let server = NatsServer::start();
    let client = blocking::connect(server.url()).unwrap();
    let mut events = client.events();
    drop(client);
    assert_eq!(next_event(&mut events), ConnectionEvent::Closed);
    assert_ended(&mut events);
}

#[test]
fn a_force_reconnect_is_disconnected_then_reconnected() {
    let server = NatsServer::start();
    let client = quick().connect_blocking(server.url()).unwrap();
    let mut events = client.events();
    client.force_reconnect().unwrap();
    assert_eq!(
        next_event(&mut events),
        ConnectionEvent::Disconnected {
            reason: "reconnect requested".to_owned()
        }
    );
    assert_eq!(next_event(&mut events), ConnectionEvent::Reconnected);
}

#[test]
fn a_slow_consumer_is_reported_once_per_episode() {
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .subscription_capacity(2)
        .connect_blocking(server.url())
        .unwrap();
    // A wildcard: the report names the subscription, not the messages' subjects.
    let mut sub = client.subscribe("slow.*").unwrap();
    let mut events = client.events();
    // The flush's PONG comes after the messages: all were dispatched by then.
    let publish = |count: u64| {
        for i in 0..count {
            client
                .publish(format!("slow.{i}"), Bytes::from(i.to_string()))
                .unwrap();
        }
        client.flush().unwrap();
    };
    publish(10);
    assert_eq!(
        next_event(&mut events),
        ConnectionEvent::SlowConsumer {
            sid: sub.sid(),
            subject: "slow.*".into(),
            dropped: 1
        }
    );
    assert_eq!(events.try_next(), None, "one report per episode");
    assert_eq!(sub.dropped(), 8);
    let dropped = || {
        client
            .statistics()
            .dropped_messages
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    assert_eq!(
        dropped(),
        8,
        "the client's count of every subscription's drops"
    );
    // The queue takes a message again, which ends the episode; the next overflow is new.
    while sub.try_next().is_some() {}
    publish(4);
    assert_eq!(
        next_event(&mut events),
        ConnectionEvent::SlowConsumer {
            sid: sub.sid(),
            subject: "slow.*".into(),
            dropped: 9
        }
    );
    assert_eq!(events.try_next(), None);
    assert_eq!(dropped(), sub.dropped());
}

#[test]
fn a_first_connect_in_the_background_counts_and_reports_every_attempt() {
    let port = free_port();
    let (delays_tx, delays) = mpsc::channel();
    let delays_tx = Mutex::new(delays_tx);
    let (events_tx, heard) = mpsc::channel();
    let events_tx = Mutex::new(events_tx);
    let client = ConnectOptions::new()
        .retry_on_initial_connect()
        .max_reconnects(2)
        .reconnect_delay_callback(move |attempt| {
            let _ = delays_tx.lock().unwrap().send(attempt);
            Duration::from_millis(10)
        })
        .event_callback(move |event| {
            let _ = events_tx.lock().unwrap().send(event);
            async {}
        })
        .connect_blocking(format!("nats://127.0.0.1:{port}"))
        .unwrap();
    // Back at once, before any INFO: the server default stands in.
    assert_eq!(client.max_payload(), 1024 * 1024);
    let failed = Event::ClientError(ClientError::Other("IO error".into()));
    for expected in [
        failed.clone(),
        failed,
        Event::ClientError(ClientError::MaxReconnects),
        Event::Closed,
    ] {
        assert_eq!(heard.recv_timeout(WAIT).unwrap(), expected);
    }
    // The delay callback was asked before each attempt, the first included.
    assert_eq!(delays.try_iter().collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn the_event_callback_hears_of_every_dropped_message() {
    let server = NatsServer::start();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let client = ConnectOptions::new()
        .subscription_capacity(1)
        .event_callback(move |event| {
            let _ = tx.lock().unwrap().send(event);
            async {}
        })
        .connect_blocking(server.url())
        .unwrap();
    let sub = client.subscribe("slow").unwrap();
    // Two overflows in separate reads, one episode (nobody reads the queue in between).
    for _ in 0..3 {
        client.publish("slow", "x".into()).unwrap();
    }
    client.flush().unwrap();
    client.publish("slow", "x".into()).unwrap();
    client.flush().unwrap();
    assert_eq!(sub.dropped(), 3);
    let events = client.events();
    client.close();
    let slow = Event::SlowConsumer(sub.sid());
    let mut seen = Vec::new();
    loop {
        let event = rx.recv_timeout(WAIT).unwrap();
        if event == Event::Closed {
            break;
        }
        seen.push(event);
    }
    assert_eq!(seen, [Event::Connected, slow.clone(), slow.clone(), slow]);
    // rnats' listeners: the episode was reported once, before this listener came.
    for event in events {
        assert!(!matches!(event, ConnectionEvent::SlowConsumer { .. }));
    }
}

/// A future that is pending once (waking itself) and notes whether another callback's
/// future ran while it was unfinished.
struct YieldOnce {
    yielded: bool,
    running: Arc<AtomicBool>,
    overlapped: Arc<AtomicBool>,
}

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            self.running.store(false, Ordering::SeqCst);
            return Poll::Ready(());
        }
        if self.running.swap(true, Ordering::SeqCst) {
            self.overlapped.store(true, Ordering::SeqCst);
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Options whose event callback sends every event to the returned receiver, once its
/// future (pending once) is done.
fn recording(options: ConnectOptions) -> (ConnectOptions, mpsc::Receiver<Event>, Arc<AtomicBool>) {
    let (tx, rx) = mpsc::channel();
    let running = Arc::new(AtomicBool::new(false));
    let overlapped = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&overlapped);
    let options = options.event_callback(move |event| {
        let tx = tx.clone();
        let step = YieldOnce {
            yielded: false,
            running: Arc::clone(&running),
            overlapped: Arc::clone(&overlapped),
        };
        async move {
            step.await;
            tx.send(event).ok();
        }
    });
    (options, rx, seen)
}

fn received(rx: &mpsc::Receiver<Event>) -> Event {
    rx.recv_timeout(WAIT).expect("the callback got no event")
}

#[test]
fn the_event_callback_sees_every_event_in_order_one_at_a_time() {
    let mut server = NatsServer::start();
    let (options, rx, overlapped) = recording(quick());
    let client = options.connect_blocking(server.url()).unwrap();
    // Registered before the first connect: it sees the first `Connected`.
    assert_eq!(received(&rx), Event::Connected);
    server.kill();
    assert_eq!(received(&rx), Event::Disconnected);
    server.restart().unwrap();
    // Failed tries, if any, are client errors; a reconnect is `Connected` to an async-nats
    // callback.
    let mut event = received(&rx);
    while let Event::ClientError(ClientError::Other(_)) = event {
        event = received(&rx);
    }
    assert_eq!(event, Event::Connected);
    client.drain().unwrap();
    assert_eq!(received(&rx), Event::Draining);
    assert_eq!(received(&rx), Event::Closed);
    assert!(!overlapped.load(Ordering::SeqCst));
    drop(client);
    // Nothing after `Closed`: the callback's thread ends and drops it, and with the last
    // handle gone so does the client.
    assert_eq!(
        rx.recv_timeout(WAIT),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
}

#[test]
fn a_failed_connect_tells_the_callback_nothing() {
    let (options, rx, _) = recording(ConnectOptions::new());
    let refused = options.connect_blocking(format!("nats://127.0.0.1:{}", free_port()));
    assert!(refused.is_err());
    assert_eq!(
        rx.recv_timeout(WAIT),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
}

#[test]
fn permission_violations_are_server_errors() {
    let server = NatsServer::builder()
        .append_config(
            "authorization { users = [ { user: u, password: p, permissions: { \
             subscribe: { deny: \"secret.>\" }, publish: { deny: \"locked\" } } } ] }\n",
        )
        .spawn()
        .unwrap();
    let (options, rx, _) = recording(ConnectOptions::with_user_and_password(
        "u".into(),
        "p".into(),
    ));
    let client = options.connect_blocking(server.url()).unwrap();
    assert_eq!(received(&rx), Event::Connected);
    let mut events = client.events();
    let mut denied = client.subscribe("secret.plans").unwrap();
    client.flush().unwrap();
    assert_eq!(denied.next_timeout(WAIT).unwrap(), None);
    assert_eq!(
        next_event(&mut events),
        ConnectionEvent::ServerError(ProtocolError::PermissionViolation {
            operation: PermissionOp::Subscribe,
            subject: "secret.plans".to_owned(),
            queue: None,
        })
    );
    client.publish("locked", "x".into()).unwrap();
    client.flush().unwrap();
    let publish_refused = ProtocolError::PermissionViolation {
        operation: PermissionOp::Publish,
        subject: "locked".to_owned(),
        queue: None,
    };
    assert_eq!(
        next_event(&mut events),
        ConnectionEvent::ServerError(publish_refused.clone())
    );
    // The callback gets them in async-nats' shape.
    assert!(matches!(
        received(&rx),
        Event::ServerError(ServerError::Other(_))
    ));
    assert_eq!(
        received(&rx),
        Event::ServerError(ServerError::from(&publish_refused))
    );
    // Neither ended the connection.
    assert!(client.is_connected());
    assert_eq!(events.try_next(), None);
}

#[test]
fn server_pool_reports_given_failed_and_discovered_servers() {
    let cluster = Cluster::start(2).unwrap();
    let dead = format!("nats://127.0.0.1:{}", free_port());
    let first = cluster.nodes()[0].url();
    let client = ConnectOptions::new()
        .retain_servers_order()
        .connect_blocking(format!("{dead},{first}"))
        .unwrap();
    // The handshake's INFO names the other node, but an INFO update sent while the two
    // nodes' routes settle may leave it out for a moment (the pool then drops it, as nats.go
    // does): read the pool until the cluster's latest word names it again.
    let deadline = std::time::Instant::now() + WAIT;
    let pool = loop {
        let pool = client.server_pool().unwrap();
        if pool.len() == 3 || std::time::Instant::now() > deadline {
            break pool;
        }
        std::thread::yield_now();
    };
    assert_eq!(pool.len(), 3, "{pool:?}");
    let dead_port = dead.parse::<ServerAddr>().unwrap().port();
    let dead_entry = &pool[0];
    assert_eq!(dead_entry.addr.port(), dead_port);
    assert_eq!(dead_entry.failed_attempts, 1);
    assert!(dead_entry.last_error.is_some());
    assert!(!dead_entry.did_connect && !dead_entry.is_discovered);
    let live = &pool[1];
    assert_eq!(live.addr.port(), cluster.nodes()[0].port());
    assert!(live.did_connect && !live.is_discovered);
    assert_eq!(
        (live.failed_attempts, live.last_error.as_deref()),
        (0, None)
    );
    // The other node, from the cluster's INFO.
    let discovered = &pool[2];
    assert_eq!(discovered.addr.port(), cluster.nodes()[1].port());
    assert!(discovered.is_discovered && !discovered.did_connect);
    client.close();
    assert_eq!(
        client.server_pool().unwrap_err().kind(),
        ServerPoolErrorKind::Send
    );
}

#[test]
fn set_server_pool_moves_the_client_at_the_next_reconnect() {
    let old = NatsServer::start();
    let new = NatsServer::start();
    let client = quick().connect_blocking(old.url()).unwrap();
    let mut events = client.events();
    client.set_server_pool(new.url()).unwrap();
    // The link stays where it is...
    client.flush().unwrap();
    assert_eq!(client.server_info().port, old.port());
    assert!(client.is_connected());
    let pool = client.server_pool().unwrap();
    assert_eq!(pool.len(), 1);
    assert_eq!(pool[0].addr.port(), new.port());
    assert!(!pool[0].did_connect);
    // ...until the next reconnect, which goes to the new pool although the old server is up.
    client.force_reconnect().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected);
    assert_eq!(client.server_info().port, new.port());
    assert!(client.server_pool().unwrap()[0].did_connect);
    client.flush().unwrap();
}

#[test]
fn set_server_pool_refuses_what_it_cannot_use() {
    let server = NatsServer::start();
    let client = blocking::connect(server.url()).unwrap();
    let kind = |addrs: &str| client.set_server_pool(addrs).unwrap_err().kind();
    assert_eq!(kind(""), SetServerPoolErrorKind::EmptyPool);
    assert_eq!(kind("nats://[::1"), SetServerPoolErrorKind::InvalidAddress);
    assert_eq!(
        kind("nats://127.0.0.1:1,ws://127.0.0.1:2"),
        SetServerPoolErrorKind::MixedSchemes
    );
    // The blocking client cannot dial WebSocket servers at all.
    assert_eq!(
        kind("ws://127.0.0.1:2"),
        SetServerPoolErrorKind::InvalidAddress
    );
    // The pool is as it was.
    let pool = client.server_pool().unwrap();
    assert_eq!(pool.len(), 1);
    assert_eq!(pool[0].addr.port(), server.port());
    client.close();
    assert_eq!(kind(&server.url()), SetServerPoolErrorKind::Send);
}

#[test]
fn the_reconnect_to_server_callback_chooses_the_next_server() {
    let a = NatsServer::start();
    let b = NatsServer::start();
    let b_addr: ServerAddr = b.url().parse().unwrap();
    // What the callback answers: 0 = server b, 1 = a server not in the pool.
    let mode = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(Mutex::new(Vec::new()));
    let options = {
        let (mode, calls) = (Arc::clone(&mode), Arc::clone(&calls));
        quick()
            .retain_servers_order()
            .reconnect_to_server_callback(move |servers, _info| {
                calls.lock().unwrap().push(servers.len());
                let addr = match mode.load(Ordering::SeqCst) {
                    0 => b_addr.clone(),
                    _ => "nats://127.0.0.1:1".parse().unwrap(),
                };
                async move {
                    Some(ReconnectToServer {
                        addr,
                        delay: Some(Duration::ZERO),
                    })
                }
            })
    };
    let client = options
        .connect_blocking(format!("{},{}", a.url(), b.url()))
        .unwrap();
    // The first connect asks the callback too, as async-nats does: b, not the pool's first.
    assert_eq!(*calls.lock().unwrap(), [2]);
    assert_eq!(client.server_info().port, b.port());
    let mut events = client.events();
    client.force_reconnect().unwrap();
    assert!(disconnected(&next_event(&mut events)));
    assert_eq!(next_event(&mut events), ConnectionEvent::Reconnected);
    assert_eq!(client.server_info().port, b.port());
    assert_eq!(*calls.lock().unwrap(), [2, 2]);
    // A server outside the pool is reported, and a pass over the pool follows (from a).
    mode.store(1, Ordering::SeqCst);
    client.force_reconnect().unwrap();
    assert!(disconnected(&next_event(&mut events)));
    assert_eq!(
        next_event(&mut events),
        ConnectionEvent::ClientError(ClientError::ServerNotInPool)
    );
    assert_eq!(next_event(&mut events), ConnectionEvent::Reconnected);
    assert_eq!(client.server_info().port, a.port());
    client.flush().unwrap();
}
