//! The async client on the runtime-neutral backend, under smol, with no tokio runtime in the
//! process: the Core set against real nats-servers (publish/subscribe, queue groups,
//! request/reply, headers, flush, drain, reconnect, cluster failover, TLS, auth), a transport
//! the test makes itself, and handles dropped outside any executor.
#![cfg(feature = "runtime-neutral")]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{
    Client, ConnectOptions, ConnectionEvent, Events, HeaderMap, RequestErrorKind, ServerAddr,
    Subscriber,
};
use rnats_test_server::{Cluster, NatsServer, TestCa};

use common::{ScratchDir, WAIT};

/// Runs `test` under smol's `block_on`, after checking that no tokio runtime is around.
fn on_smol<F: Future<Output = ()>>(test: F) {
    assert!(
        tokio::runtime::Handle::try_current().is_err(),
        "a tokio runtime is current"
    );
    smol::block_on(async {
        assert!(tokio::runtime::Handle::try_current().is_err());
        test.await;
    });
}

/// `work`, or a failed test after [`WAIT`].
async fn within<T>(work: impl Future<Output = T>) -> T {
    smol::future::or(async { Some(work.await) }, async {
        smol::Timer::after(WAIT).await;
        None
    })
    .await
    .expect("timed out")
}

/// `work`'s output if it comes within `limit`.
async fn before<T>(limit: Duration, work: impl Future<Output = T>) -> Option<T> {
    smol::future::or(async { Some(work.await) }, async {
        smol::Timer::after(limit).await;
        None
    })
    .await
}

async fn next_payload(sub: &mut Subscriber) -> Bytes {
    within(sub.next()).await.expect("ended").payload
}

async fn wait_for(events: &mut Events, want: impl Fn(&ConnectionEvent) -> bool) {
    within(async {
        loop {
            let event = events.next().await.expect("events ended");
            if want(&event) {
                return;
            }
        }
    })
    .await;
}

fn quick() -> ConnectOptions {
    ConnectOptions::new().reconnect_delay_callback(|_| Duration::from_millis(20))
}

/// Answers every request on `subject` with `prefix` + the request's payload, on smol's
/// executor.
async fn serve(client: &Client, subject: &str, prefix: &'static str) {
    let mut requests = client.subscribe(subject.to_owned()).await.unwrap();
    client.flush().await.unwrap();
    let responder = client.clone();
    smol::spawn(async move {
        while let Some(request) = requests.next().await {
            if let Some(reply) = request.reply {
                let mut body = prefix.as_bytes().to_vec();
                body.extend_from_slice(&request.payload);
                let _ = responder.publish(reply, body.into()).await;
            }
        }
    })
    .detach();
}

#[test]
fn publish_subscribe_headers_and_flush() {
    let server = NatsServer::start();
    on_smol(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = client.subscribe("neutral.>").await.unwrap();
        client.flush().await.unwrap();
        for i in 0..100 {
            client
                .publish(format!("neutral.{i}"), format!("m{i}").into())
                .await
                .unwrap();
        }
        client.flush().await.unwrap();
        for i in 0..100 {
            let message = within(sub.next()).await.unwrap();
            assert_eq!(message.subject.as_str(), format!("neutral.{i}"));
            assert_eq!(message.payload, Bytes::from(format!("m{i}")));
        }
        let mut headers = HeaderMap::new();
        headers.insert("X-Runtime", "none");
        client
            .publish_with_headers("neutral.h", headers, "with headers".into())
            .await
            .unwrap();
        let message = within(sub.next()).await.unwrap();
        let headers = message.headers.expect("headers");
        assert_eq!(headers.get("X-Runtime").map(|v| v.as_str()), Some("none"));
        assert_eq!(
            client.statistics().out_messages.load(Ordering::Relaxed),
            101
        );
    });
}

/// Messages of every size from one byte to 64 KiB, more than the write limit at once, arrive
/// whole and in order: the backend writes the queue's slices in one vectored write and
/// goes on from wherever the socket cut it, and reads with room that grows and shrinks
/// with what comes in.
#[test]
fn messages_of_every_size_arrive_whole_and_in_order() {
    const COUNT: usize = 600;
    let server = NatsServer::start();
    let payload = |i: usize| -> Bytes {
        let size = [1, 100, 1_000, 8 * 1024, 20_000, 64 * 1024][i % 6] + i;
        (0..size).map(|at| (at * 31 + i) as u8).collect()
    };
    on_smol(async {
        let client = ConnectOptions::new()
            .write_buffer_limit(16 * 1024)
            .connect(server.url())
            .await
            .unwrap();
        let mut sub = client.subscribe("neutral.sizes").await.unwrap();
        client.flush().await.unwrap();
        for i in 0..COUNT {
            client.publish("neutral.sizes", payload(i)).await.unwrap();
        }
        client.flush().await.unwrap();
        for i in 0..COUNT {
            let message = within(sub.next()).await.unwrap();
            assert!(message.payload == payload(i), "message {i} differs");
        }
    });
}

#[test]
fn queue_groups_share_the_messages() {
    let server = NatsServer::start();
    on_smol(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let mut a = client
            .queue_subscribe("work", "workers".into())
            .await
            .unwrap();
        let mut b = client
            .queue_subscribe("work", "workers".into())
            .await
            .unwrap();
        client.flush().await.unwrap();
        for i in 0..50 {
            client.publish("work", format!("{i}").into()).await.unwrap();
        }
        client.flush().await.unwrap();
        // Every message reaches exactly one member: count them all, then expect no more.
        let mut seen = 0;
        while seen < 50 {
            let next = smol::future::or(async { a.next().await }, async { b.next().await });
            within(next).await.expect("ended");
            seen += 1;
        }
        client.publish("work", "end".into()).await.unwrap();
        client.flush().await.unwrap();
        let last = smol::future::or(async { a.next().await }, async { b.next().await });
        assert_eq!(within(last).await.unwrap().payload, Bytes::from("end"));
    });
}

#[test]
fn request_reply_and_timeouts() {
    let server = NatsServer::start();
    on_smol(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        serve(&client, "svc.echo", "echo: ").await;
        for i in 0..20 {
            let reply = client
                .request("svc.echo", format!("{i}").into())
                .await
                .unwrap();
            assert_eq!(reply.payload, Bytes::from(format!("echo: {i}")));
        }
        // No responder: the server says so at once.
        let error = client.request("svc.nobody", "?".into()).await.unwrap_err();
        assert_eq!(error.kind(), RequestErrorKind::NoResponders);
        // A responder that never answers: the client's timer ends the wait.
        let _silent = client.subscribe("svc.silent").await.unwrap();
        client.flush().await.unwrap();
        let error = client
            .request_with_timeout("svc.silent", "?".into(), Some(Duration::from_millis(50)))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), RequestErrorKind::TimedOut);
    });
}

#[test]
fn drain_delivers_what_was_sent_and_closes() {
    let server = NatsServer::start();
    on_smol(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let publisher = rnats_core::connect(server.url()).await.unwrap();
        let mut sub = client.subscribe("drain").await.unwrap();
        client.flush().await.unwrap();
        for i in 0..10 {
            publisher
                .publish("drain", format!("{i}").into())
                .await
                .unwrap();
        }
        publisher.flush().await.unwrap();
        within(client.drain()).await.unwrap();
        let mut got = 0;
        while within(sub.next()).await.is_some() {
            got += 1;
        }
        assert_eq!(got, 10);
        assert_eq!(client.connection_state(), rnats_core::State::Disconnected);
    });
}

#[test]
fn a_server_restart_keeps_subscriptions_and_outage_publishes() {
    let mut server = NatsServer::start();
    let client = smol::block_on(quick().connect(server.url())).unwrap();
    let mut events = client.events();
    let mut sub = smol::block_on(client.subscribe("restart")).unwrap();
    smol::block_on(client.flush()).unwrap();
    server.kill();
    on_smol(async {
        wait_for(&mut events, |e| {
            matches!(e, ConnectionEvent::Disconnected { .. })
        })
        .await;
        client.publish("restart", "kept".into()).await.unwrap();
    });
    server.restart().unwrap();
    on_smol(async {
        wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
        within(client.flush()).await.unwrap();
        assert_eq!(next_payload(&mut sub).await, Bytes::from("kept"));
        client.publish("restart", "after".into()).await.unwrap();
        assert_eq!(next_payload(&mut sub).await, Bytes::from("after"));
    });
}

/// A server that stops reading under a publisher: the write timeout ends the link on this
/// backend as on tokio (the engine and its watch are the same; the socket is async-io's).
#[test]
fn a_write_timeout_ends_a_link_whose_server_stopped_reading() {
    let server = NatsServer::start();
    let proxy = rnats_test_server::Proxy::start(&server.url()).unwrap();
    let timeout = Duration::from_millis(500);
    let client = smol::block_on(
        quick()
            .write_timeout(timeout)
            .ignore_discovered_servers()
            .connect(proxy.url()),
    )
    .unwrap();
    let mut events = client.events();
    smol::block_on(client.flush()).unwrap();
    proxy.stall();
    let stalled = std::time::Instant::now();
    on_smol(async {
        let publisher = client.clone();
        let filler = Bytes::from(vec![b'x'; 16 * 1024]);
        let publishing = smol::spawn(async move {
            while publisher.publish("filler", filler.clone()).await.is_ok() {}
        });
        let reason = within(async {
            loop {
                if let ConnectionEvent::Disconnected { reason } =
                    events.next().await.expect("events ended")
                {
                    return reason;
                }
            }
        })
        .await;
        let took = stalled.elapsed();
        assert!(reason.contains("write stalled"), "{reason}");
        assert!(took >= timeout, "ended after {took:?}, before its timeout");
        assert!(took < Duration::from_secs(10), "ended only after {took:?}");
        drop(publishing);
    });
    proxy.cut();
    proxy.resume();
    on_smol(async {
        wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
        within(client.flush()).await.unwrap();
    });
}

#[test]
fn cluster_failover_keeps_subscriptions_and_requests_working() {
    let mut cluster = Cluster::start(3).unwrap();
    let urls = cluster.urls();
    let (client, service, mut events, mut sub) = smol::block_on(async {
        let client = quick()
            .retain_servers_order()
            .connect(urls.join(","))
            .await
            .unwrap();
        let service = quick().connect(urls[2].clone()).await.unwrap();
        let events = client.events();
        let sub = client.subscribe("fo").await.unwrap();
        client.flush().await.unwrap();
        serve(&service, "fo.svc", "").await;
        (client, service, events, sub)
    });
    assert_eq!(client.server_info().port, cluster.nodes()[0].port());
    cluster.node_mut(0).kill();
    on_smol(async {
        wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
        assert_ne!(client.server_info().port, cluster.nodes()[0].port());
        // The restored interest crosses the routes asynchronously: repeat until it lands.
        let mut delivered = false;
        for _ in 0..100 {
            service.publish("fo", "after".into()).await.unwrap();
            if let Some(Some(m)) = before(Duration::from_millis(100), sub.next()).await {
                assert_eq!(m.payload, Bytes::from("after"));
                delivered = true;
                break;
            }
        }
        assert!(delivered, "no delivery after the failover");
        let mut answered = false;
        for _ in 0..50 {
            let limit = Some(Duration::from_millis(200));
            match client
                .request_with_timeout("fo.svc", "x".into(), limit)
                .await
            {
                Ok(reply) => {
                    assert_eq!(reply.payload, Bytes::from("x"));
                    answered = true;
                    break;
                }
                Err(e) if e.kind() == RequestErrorKind::TimedOut => continue,
                Err(e) if e.kind() == RequestErrorKind::NoResponders => continue,
                Err(e) => panic!("request failed: {e}"),
            }
        }
        assert!(answered, "no reply after the failover");
    });
}

#[test]
fn tls_with_the_test_ca() {
    let dir = ScratchDir::new();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    let server = NatsServer::builder()
        .tls(&files, false, false)
        .spawn()
        .unwrap();
    on_smol(async {
        let url = format!("tls://localhost:{}", server.port());
        let client = ConnectOptions::new()
            .add_root_certificates(files.ca.clone())
            .connect(url)
            .await
            .unwrap();
        assert!(client.server_info().tls_required);
        serve(&client, "tls.echo", "").await;
        let reply = client.request("tls.echo", "over tls".into()).await.unwrap();
        assert_eq!(reply.payload, Bytes::from("over tls"));
        // A `nats://` address upgrades when the server's INFO asks for TLS.
        let upgraded = ConnectOptions::new()
            .add_root_certificates(files.ca.clone())
            .connect(server.url())
            .await
            .unwrap();
        upgraded.flush().await.unwrap();
        // An untrusted server is refused with a typed error.
        let error = ConnectOptions::new()
            .connect(format!("tls://localhost:{}", server.port()))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), rnats_core::ConnectErrorKind::Tls);
    });
}

#[test]
fn user_password_and_token_auth() {
    let server = NatsServer::builder()
        .user_password("alice", "s3cret")
        .spawn()
        .unwrap();
    let token_server = NatsServer::builder().token("t0ken").spawn().unwrap();
    on_smol(async {
        let client = ConnectOptions::with_user_and_password("alice".into(), "s3cret".into())
            .connect(server.url())
            .await
            .unwrap();
        client.flush().await.unwrap();
        let error = ConnectOptions::with_user_and_password("alice".into(), "wrong".into())
            .connect(server.url())
            .await
            .unwrap_err();
        assert_eq!(
            error.kind(),
            rnats_core::ConnectErrorKind::AuthorizationViolation
        );
        let client = ConnectOptions::with_token("t0ken".into())
            .connect(token_server.url())
            .await
            .unwrap();
        client.flush().await.unwrap();
    });
}

#[test]
fn a_transport_the_application_dials_carries_reconnects_too() {
    let mut server = NatsServer::start();
    let dials = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&dials);
    let options = quick().transport(move |addr: ServerAddr| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move {
            let stream = smol::net::TcpStream::connect((addr.host(), addr.port())).await?;
            Ok(rnats_core::connector::from_futures_io(stream))
        }
    });
    let client = smol::block_on(options.connect(server.url())).unwrap();
    let mut events = client.events();
    let mut sub = smol::block_on(client.subscribe("own")).unwrap();
    assert_eq!(dials.load(Ordering::SeqCst), 1);
    server.kill();
    server.restart().unwrap();
    on_smol(async {
        wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
        client.publish("own", "through it".into()).await.unwrap();
        assert_eq!(next_payload(&mut sub).await, Bytes::from("through it"));
    });
    assert!(
        dials.load(Ordering::SeqCst) >= 2,
        "the reconnect dialed elsewhere"
    );
}

#[test]
fn handles_dropped_outside_any_executor_neither_panic_nor_hang() {
    let server = NatsServer::start();
    let (client, sub, replies, events) = smol::block_on(async {
        let client = rnats_core::connect(server.url()).await.unwrap();
        let sub = client.subscribe("dropped").await.unwrap();
        let replies = client.request_many("nobody", "x".into()).send().await;
        let events = client.events();
        client.flush().await.unwrap();
        (client, sub, replies, events)
    });
    // No executor, no runtime here.
    assert!(tokio::runtime::Handle::try_current().is_err());
    drop(sub);
    drop(replies);
    drop(events);
    let other = client.clone();
    drop(client);
    // The last handle closes the client; its engine winds down on rnats' task thread.
    drop(other);
}

#[test]
fn options_read_a_credentials_file_without_a_runtime() {
    on_smol(async {
        let error = ConnectOptions::with_credentials_file("/nonexistent/rnats.creds")
            .await
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    });
}

#[test]
fn websocket_without_a_runtime() {
    let server = NatsServer::builder().websocket().spawn().unwrap();
    let url = server.websocket_url().expect("a websocket port");
    on_smol(async {
        let client = rnats_core::connect(url).await.unwrap();
        let mut sub = client.subscribe("ws").await.unwrap();
        client.publish("ws", "over websocket".into()).await.unwrap();
        assert_eq!(next_payload(&mut sub).await, Bytes::from("over websocket"));
    });
}
