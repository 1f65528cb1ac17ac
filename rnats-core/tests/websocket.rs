//! NATS over WebSocket against real nats-servers: `ws://` and `wss://` with the same client
//! API as TCP, frames that do not line up with NATS ops, reconnecting, discovery of a
//! cluster's WebSocket addresses, and refused upgrades.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{ConnectCause, ConnectOptions, ConnectionEvent, HeaderMap};
use rnats_test_server::{Cluster, NatsServer, Proxy, TestCa, TlsFiles};

/// A server with a plain WebSocket listener beside its client port.
fn websocket_server() -> NatsServer {
    NatsServer::builder().websocket().spawn().unwrap()
}

/// Its `ws://127.0.0.1:PORT`.
fn ws_url(server: &NatsServer) -> String {
    server
        .websocket_url()
        .expect("the server has a websocket listener")
}

/// Certificates from a fresh CA, in a directory that lives as long as the returned guard.
fn certificates() -> (ScratchDir, TlsFiles) {
    let dir = ScratchDir::new();
    let files = TestCa::new().write_to(dir.path()).unwrap();
    (dir, files)
}

#[tokio::test]
async fn publish_subscribe_and_request_reply_over_ws() {
    let server = websocket_server();
    let client = ConnectOptions::new()
        .connect(ws_url(&server))
        .await
        .unwrap();
    assert!(!client.server_info().tls_required);
    round_trip(&client).await;

    // A TCP client on the same server sees what the WebSocket client publishes, and back.
    let tcp = rnats_core::connect(server.url()).await.unwrap();
    let mut from_ws = tcp.subscribe("from.ws").await.unwrap();
    let mut from_tcp = client.subscribe("from.tcp").await.unwrap();
    tcp.flush().await.unwrap();
    client.flush().await.unwrap();
    client.publish("from.ws", "hello tcp".into()).await.unwrap();
    tcp.publish("from.tcp", "hello ws".into()).await.unwrap();
    assert_eq!(next_payload(&mut from_ws).await, Bytes::from("hello tcp"));
    assert_eq!(next_payload(&mut from_tcp).await, Bytes::from("hello ws"));
}

#[tokio::test]
async fn headers_travel_over_ws() {
    let server = websocket_server();
    let client = rnats_core::connect(ws_url(&server)).await.unwrap();
    let mut sub = client.subscribe("with.headers").await.unwrap();
    client.flush().await.unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("X-Trace", "abc-123");
    headers.append("X-Many", "one");
    headers.append("X-Many", "two");
    client
        .publish_with_headers("with.headers", headers, "body".into())
        .await
        .unwrap();
    let msg = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(msg.payload, Bytes::from("body"));
    let got = msg.headers.expect("headers");
    assert_eq!(got.get("X-Trace").map(|v| v.as_str()), Some("abc-123"));
    let many: Vec<&str> = got.get_all("X-Many").map(|v| v.as_str()).collect();
    assert_eq!(many, ["one", "two"]);
}

#[tokio::test]
async fn many_small_and_a_few_large_messages_survive_the_framing() {
    let server = websocket_server();
    let publisher = rnats_core::connect(ws_url(&server)).await.unwrap();
    let subscriber = rnats_core::connect(ws_url(&server)).await.unwrap();
    let mut small = subscriber.subscribe("small").await.unwrap();
    let mut large = subscriber.subscribe("large").await.unwrap();
    subscriber.flush().await.unwrap();

    // Batched writes put many ops into one WebSocket message, and the server's frames cut
    // ops wherever its buffers end.
    const COUNT: usize = 5_000;
    for i in 0..COUNT {
        publisher
            .publish("small", Bytes::from(format!("message {i}")))
            .await
            .unwrap();
    }
    // Larger than one WebSocket message of the client (256 KiB): split over several.
    let big: Bytes = (0..900 * 1024)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<_>>()
        .into();
    for _ in 0..3 {
        publisher.publish("large", big.clone()).await.unwrap();
    }
    publisher.flush().await.unwrap();

    for i in 0..COUNT {
        assert_eq!(
            next_payload(&mut small).await,
            Bytes::from(format!("message {i}"))
        );
    }
    for _ in 0..3 {
        assert!(
            next_payload(&mut large).await == big,
            "a large payload changed"
        );
    }
}

#[tokio::test]
async fn reconnects_over_ws_after_a_restart() {
    let mut server = websocket_server();
    let client = quick().connect(ws_url(&server)).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("kept").await.unwrap();
    round_trip(&client).await;

    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    client.flush().await.unwrap();
    round_trip(&client).await;

    // The subscription made before the restart was replayed over the new WebSocket.
    client.publish("kept", "after".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("after"));
}

#[tokio::test]
async fn wss_with_the_test_ca_round_trips_and_reconnects() {
    let (_dir, files) = certificates();
    let mut server = NatsServer::builder().websocket_tls(&files).spawn().unwrap();
    let url = server.websocket_url().unwrap();
    assert!(url.starts_with("wss://"), "{url}");
    let client = quick()
        .add_root_certificates(files.ca.clone())
        .connect(&url)
        .await
        .unwrap();
    let mut events = client.events();
    round_trip(&client).await;

    server.restart().unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
}

#[tokio::test]
async fn wss_checks_the_certificate() {
    let (_dir, files) = certificates();
    let (_other_dir, other) = certificates();
    let server = NatsServer::builder().websocket_tls(&files).spawn().unwrap();
    let url = server.websocket_url().unwrap();
    let err = connect_err(
        ConnectOptions::new().add_root_certificates(other.ca.clone()),
        url.clone(),
    )
    .await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
    // The operating system's store, the default trust, does not know the test CA either.
    let err = connect_err(ConnectOptions::new(), url).await;
    assert!(matches!(err.cause(), Some(ConnectCause::Tls(_))), "{err:?}");
}

#[tokio::test]
async fn require_tls_turns_a_ws_url_into_wss() {
    let (_dir, files) = certificates();
    let server = NatsServer::builder().websocket_tls(&files).spawn().unwrap();
    let port = server.websocket_port().unwrap();
    let client = ConnectOptions::new()
        .add_root_certificates(files.ca.clone())
        .require_tls(true)
        .connect(format!("ws://127.0.0.1:{port}"))
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn a_ws_url_to_a_nats_port_is_a_websocket_error() {
    let server = NatsServer::start();
    // The server answers the HTTP upgrade request with its INFO line.
    let err = connect_err(
        ConnectOptions::new(),
        format!("ws://127.0.0.1:{}", server.port()),
    )
    .await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::WebSocket(_))),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_cluster_advertises_its_websocket_addresses_for_failover() {
    let mut cluster = Cluster::start_with(2, |node| node.websocket()).unwrap();
    let first = cluster.nodes()[0].websocket_url().unwrap();
    // Only the first node is given; the second comes from its INFO, which lists the
    // cluster's WebSocket addresses for WebSocket clients (as bare host:port).
    let client = quick().connect(&first).await.unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("disc").await.unwrap();
    client.flush().await.unwrap();
    let advertised = format!("127.0.0.1:{}", cluster.nodes()[1].websocket_port().unwrap());
    let info = client.server_info();
    assert!(info.connect_urls.contains(&advertised), "{info:?}");

    cluster.node_mut(0).kill();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    // Over WebSocket, INFO's `port` is the WebSocket port.
    assert_eq!(
        Some(client.server_info().port),
        cluster.nodes()[1].websocket_port()
    );
    client
        .publish("disc", "on the second node".into())
        .await
        .unwrap();
    assert_eq!(
        next_payload(&mut sub).await,
        Bytes::from("on the second node")
    );
}

#[tokio::test]
async fn local_address_binds_the_client_socket() {
    let server = websocket_server();
    for url in [ws_url(&server), server.url()] {
        // A port found free may be taken before the client binds it (by another test run on
        // the machine): then another one is tried.
        let mut tries = 0;
        let (client, local) = loop {
            let local =
                std::net::SocketAddr::from(([127, 0, 0, 1], rnats_test_server::free_port()));
            match ConnectOptions::new()
                .local_address(local)
                .connect(url.clone())
                .await
            {
                Ok(client) => break (client, local),
                Err(e) if tries < 10 && is_addr_in_use(&e) => tries += 1,
                Err(e) => panic!("connecting from {local}: {e:?}"),
            }
        };
        round_trip(&client).await;
        // The address is taken by the first connection: a second one bound to it fails.
        let err = connect_err(ConnectOptions::new().local_address(local), url).await;
        assert!(
            matches!(err.cause(), Some(ConnectCause::Io { .. })),
            "{err:?}"
        );
    }
}

/// Whether `error` is the local address being taken.
fn is_addr_in_use(error: &rnats_core::ConnectError) -> bool {
    matches!(error.cause(), Some(ConnectCause::Io { source, .. })
        if source.kind() == std::io::ErrorKind::AddrInUse)
}

/// A server whose WebSocket listener takes credentials from the upgrade request's cookies
/// (`user_cookie`, `pass_cookie`, `token_cookie`) when CONNECT carries none, with `auth` as
/// its `authorization` block; returns it and its `ws://` URL.
fn cookie_server(auth: &str) -> (NatsServer, String) {
    let server = NatsServer::builder()
        .config(format!(
            "authorization {{ {auth} }}\n\
             websocket {{\n  listen: \"127.0.0.1:-1\"\n  no_tls: true\n  \
             user_cookie: \"nats_user\"\n  pass_cookie: \"nats_pass\"\n  \
             token_cookie: \"nats_token\"\n}}\n"
        ))
        .monitoring()
        .spawn()
        .unwrap();
    let line = server
        .wait_for_log("Listening for websocket clients on ", WAIT)
        .unwrap();
    let port = line.rsplit(':').next().unwrap().trim().to_owned();
    (server, format!("ws://127.0.0.1:{port}"))
}

fn cookie(value: &str) -> rnats_core::http::HeaderMap {
    let mut headers = rnats_core::http::HeaderMap::new();
    headers.insert(
        rnats_core::http::header::COOKIE,
        rnats_core::http::HeaderValue::try_from(value).unwrap(),
    );
    headers
}

#[tokio::test]
async fn static_upgrade_headers_carry_a_token_cookie_the_server_accepts() {
    let (_server, url) = cookie_server("token: \"s3cret\"");
    // Without the cookie the server knows nothing of us.
    let err = connect_err(ConnectOptions::new(), url.clone()).await;
    assert_eq!(
        err.kind(),
        rnats_core::ConnectErrorKind::AuthorizationViolation,
        "{err}"
    );
    let mut headers = cookie("nats_token=s3cret");
    headers.insert("x-request-id", "42".parse().unwrap());
    let client = ConnectOptions::new()
        .websocket_headers(headers)
        .connect(url)
        .await
        .unwrap();
    round_trip(&client).await;
}

#[tokio::test]
async fn an_upgrade_headers_callback_runs_again_for_every_reconnect() {
    let (server, url) =
        cookie_server("users = [ {user: alice, password: a}, {user: bob, password: b} ]");
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let client = quick()
        .name("cookies")
        .websocket_headers_callback(move || {
            // A fresh identity at each connect, as a rotating token would be.
            let (user, pass) = match counter.fetch_add(1, Ordering::SeqCst) {
                0 => ("alice", "a"),
                _ => ("bob", "b"),
            };
            async move { Ok(cookie(&format!("nats_user={user}; nats_pass={pass}"))) }
        })
        .connect(url)
        .await
        .unwrap();
    let mut events = client.events();
    let user = || {
        let body = server
            .wait_for_monitor("/connz?auth=true", WAIT, |body| {
                body["connections"]
                    .as_array()
                    .is_some_and(|all| all.iter().filter(|c| c["name"] == "cookies").count() == 1)
            })
            .unwrap();
        let all = body["connections"].as_array().unwrap();
        let ours = all.iter().find(|c| c["name"] == "cookies").unwrap();
        ours["authorized_user"].as_str().unwrap().to_owned()
    };
    assert_eq!(user(), "alice");

    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(user(), "bob");
}

#[tokio::test]
async fn upgrade_headers_the_handshake_owns_or_a_failing_callback_fail_the_connect() {
    let server = websocket_server();
    let mut headers = rnats_core::http::HeaderMap::new();
    headers.insert(
        rnats_core::http::header::SEC_WEBSOCKET_KEY,
        "dGhlIHNhbXBsZSBub25jZQ==".parse().unwrap(),
    );
    let err = connect_err(
        ConnectOptions::new().websocket_headers(headers),
        ws_url(&server),
    )
    .await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::WebSocket(reason)) if reason.contains("sec-websocket-key")),
        "{err:?}"
    );

    let failing = ConnectOptions::new().websocket_headers_callback(|| async {
        Err(rnats_core::AuthError::new("the token service is down"))
    });
    let err = connect_err(failing, ws_url(&server)).await;
    assert_eq!(err.kind(), rnats_core::ConnectErrorKind::Authentication);
    assert!(err.to_string().contains("token service is down"), "{err}");
}

/// Something that is not a NATS server (or is in the way of one) answers the upgrade with a
/// `Sec-WebSocket-Accept` too long for a SHA-1 digest: a failed connect, not a panic.
#[tokio::test]
async fn an_upgrade_answered_with_a_malformed_accept_fails_the_connect() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let answering = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.ends_with(b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "the request ended early");
            request.extend_from_slice(&buf[..n]);
        }
        let accept = "A".repeat(40);
        let response = format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        );
        socket.write_all(response.as_bytes()).await.unwrap();
        // Held open until the client gives up.
        let _ = socket.read(&mut buf).await;
    });
    let error = ConnectOptions::new()
        .connect(format!("ws://127.0.0.1:{port}"))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("Sec-WebSocket-Accept"),
        "{error}"
    );
    answering.await.unwrap();
}

/// Over WebSocket the engine writes through the framing layer: a server that stops reading
/// still ends the link at the write timeout.
#[tokio::test]
async fn a_write_timeout_ends_a_websocket_link_whose_server_stopped_reading() {
    let server = websocket_server();
    let port = server.websocket_port().expect("a websocket listener");
    let proxy = Proxy::start(&format!("127.0.0.1:{port}")).unwrap();
    let timeout = Duration::from_millis(500);
    let client = quick()
        .write_timeout(timeout)
        .ignore_discovered_servers()
        .connect(format!("ws://127.0.0.1:{}", proxy.port()))
        .await
        .unwrap();
    client.flush().await.unwrap();
    a_stall_ends_the_link(&client, &proxy, timeout).await;
    round_trip(&client).await;
}
