//! Connecting, authentication, keepalive and bad peers.
//!
//! Tests marked "fake server" talk to a tiny TCP server written in the test, because a real
//! nats-server never sends garbage; everything else runs against a real nats-server.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{
    ConnectCause, ConnectError, ConnectErrorKind, ConnectOptions, ConnectionEvent, FlushCause,
    SubscriberError,
};
use rnats_test_server::NatsServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

const INFO: &[u8] = b"INFO {\"server_id\":\"fake\",\"version\":\"2.15.1\",\"headers\":true,\"max_payload\":1048576}\r\n";

/// Starts a one-connection fake server on loopback running `script` on the accepted socket.
async fn fake_server<F, Fut>(script: F) -> String
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        script(socket).await;
    });
    format!("nats://{addr}")
}

/// Connects to a fake server that sends `bytes` and hangs up; returns the connect error.
async fn handshake_error(bytes: &'static [u8]) -> ConnectError {
    let url = fake_server(move |mut socket| async move {
        socket.write_all(bytes).await.unwrap();
        let _ = socket.shutdown().await;
    })
    .await;
    rnats_core::connect(url).await.unwrap_err()
}

/// Reads client lines until a PING, i.e. through the CONNECT.
async fn read_through_ping(reader: &mut BufReader<TcpStream>) {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await.unwrap() == 0 || line.starts_with("PING") {
            return;
        }
    }
}

#[tokio::test]
async fn nothing_listening_fails_within_the_timeout() {
    // Reserve a port and close it so nothing listens there.
    let port = rnats_test_server::free_port();
    // The outer timeout only catches a connect that never gives up (retrying, say): how
    // soon it fails is not judged, a loaded machine may stretch it past the 2 s.
    let err = tokio::time::timeout(
        Duration::from_secs(60),
        ConnectOptions::new()
            .connection_timeout(Duration::from_secs(2))
            .connect(format!("nats://127.0.0.1:{port}")),
    )
    .await
    .expect("the connect never gave up")
    .unwrap_err();
    assert!(
        matches!(
            err.cause(),
            Some(ConnectCause::Io { .. } | ConnectCause::TimedOut { .. })
        ),
        "{err}"
    );
}

#[tokio::test]
async fn invalid_urls_are_rejected() {
    for url in [
        "http://127.0.0.1:4222",
        "nats://127.0.0.1:notaport",
        "nats://:4222",
    ] {
        assert!(
            matches!(
                rnats_core::connect(url).await,
                Err(e) if e.kind() == ConnectErrorKind::ServerParse
            ),
            "{url}"
        );
    }
}

#[tokio::test]
async fn token_auth_succeeds_and_fails_clearly() {
    let server = NatsServer::builder().token("s3cret").spawn().unwrap();
    let ok = ConnectOptions::new()
        .token("s3cret".into())
        .connect(server.url())
        .await
        .unwrap();
    ok.flush().await.unwrap();
    let url_token = rnats_core::connect(format!("nats://s3cret@127.0.0.1:{}", server.port())).await;
    url_token.unwrap().flush().await.unwrap();
    let with_token = ConnectOptions::with_token("s3cret".into())
        .connect(server.url())
        .await;
    with_token.unwrap().flush().await.unwrap();
    let err = ConnectOptions::new()
        .token("wrong".into())
        .connect(server.url())
        .await
        .unwrap_err();
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
    assert!(err.to_string().contains("authorization violation"));
    let err = rnats_core::connect(server.url()).await.unwrap_err();
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
}

#[tokio::test]
async fn user_password_auth_succeeds_and_fails_clearly() {
    let server = NatsServer::builder()
        .user_password("alice", "wonder")
        .spawn()
        .unwrap();
    let ok = ConnectOptions::new()
        .user_and_password("alice".into(), "wonder".into())
        .connect(server.url())
        .await
        .unwrap();
    ok.flush().await.unwrap();
    let in_url = format!("nats://alice:wonder@127.0.0.1:{}", server.port());
    rnats_core::connect(in_url)
        .await
        .unwrap()
        .flush()
        .await
        .unwrap();
    let with_user = ConnectOptions::with_user_and_password("alice".into(), "wonder".into());
    with_user
        .connect(server.url())
        .await
        .unwrap()
        .flush()
        .await
        .unwrap();
    let err = ConnectOptions::new()
        .user_and_password("alice".into(), "nope".into())
        .connect(server.url())
        .await
        .unwrap_err();
    assert!(
        matches!(err.cause(), Some(ConnectCause::AuthorizationViolation)),
        "{err}"
    );
}

#[tokio::test]
async fn subscription_permission_violation_reaches_the_subscriber_and_events() {
    let config = r#"
authorization {
  users = [ { user: "limited", password: "pw", permissions: { subscribe: { deny: ["secret.>"] } } } ]
}
"#;
    let server = NatsServer::builder().config(config).spawn().unwrap();
    let client = ConnectOptions::new()
        .user_and_password("limited".into(), "pw".into())
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    let mut denied = client.subscribe("secret.plans").await.unwrap();
    let mut allowed = client.subscribe("public").await.unwrap();
    client.flush().await.unwrap();
    let end = tokio::time::timeout(Duration::from_secs(10), denied.next())
        .await
        .unwrap();
    assert!(end.is_none(), "the refused subscription ends");
    assert_eq!(
        denied.take_error(),
        Some(SubscriberError::PermissionViolation {
            subject: "secret.plans".into()
        })
    );
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap();
    assert!(matches!(
        event,
        Some(ConnectionEvent::ServerError(
            rnats_core::proto::ServerError::PermissionViolation { .. }
        ))
    ));
    // The connection and the other subscription are unaffected.
    client.publish("public", "ok".into()).await.unwrap();
    let m = tokio::time::timeout(Duration::from_secs(10), allowed.next())
        .await
        .unwrap();
    assert_eq!(m.unwrap().payload, Bytes::from("ok"));
}

#[tokio::test]
async fn without_reconnect_server_shutdown_ends_subscriptions_and_fails_flush() {
    let mut server = NatsServer::start();
    let client = ConnectOptions::new()
        .no_reconnect()
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    let mut sub = client.subscribe("x").await.unwrap();
    client.flush().await.unwrap();
    server.kill();
    let end = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(end.is_none());
    assert!(matches!(
        sub.take_error(),
        Some(SubscriberError::ConnectionClosed(_))
    ));
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap();
    assert!(
        matches!(event, Some(ConnectionEvent::Disconnected { .. })),
        "{event:?}"
    );
    assert!(matches!(
        client.flush().await.unwrap_err().cause(),
        Some(FlushCause::NotSent)
    ));
    assert!(client.is_closed());
}

#[tokio::test]
async fn close_ends_everything_promptly() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut sub = client.subscribe("c").await.unwrap();
    client.publish("c", "last".into()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .unwrap();
    assert!(client.is_closed());
    // Anything already delivered is still readable, then the stream ends.
    while let Some(m) = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap()
    {
        assert_eq!(m.payload, Bytes::from("last"));
    }
    assert_eq!(sub.take_error(), None, "a requested close is not an error");
}

#[tokio::test]
async fn fake_server_sending_garbage_gives_a_protocol_error() {
    let err = handshake_error(b"HELLO THERE\r\n").await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::Protocol(_))),
        "{err}"
    );
}

#[tokio::test]
async fn fake_server_with_non_json_info_gives_a_protocol_error() {
    let err = handshake_error(b"INFO {not json}\r\n").await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::Protocol(_))),
        "{err}"
    );
}

#[tokio::test]
async fn fake_server_closing_during_handshake_is_reported() {
    let err = handshake_error(b"INF").await;
    assert!(
        matches!(err.cause(), Some(ConnectCause::ClosedByServer)),
        "{err}"
    );
}

#[tokio::test]
async fn fake_server_that_never_speaks_times_out() {
    let url = fake_server(|socket| async move {
        // Hold the socket open without a word until the client gives up.
        let mut reader = BufReader::new(socket);
        let mut line = String::new();
        let _ = reader.read_line(&mut line).await;
    })
    .await;
    let err = ConnectOptions::new()
        .connection_timeout(Duration::from_millis(300))
        .connect(url)
        .await
        .unwrap_err();
    assert!(
        matches!(err.cause(), Some(ConnectCause::TimedOut { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn fake_server_truncated_frame_then_close_ends_the_connection_cleanly() {
    let url = fake_server(|socket| async move {
        let mut reader = BufReader::new(socket);
        reader.get_mut().write_all(INFO).await.unwrap();
        read_through_ping(&mut reader).await;
        // Accept the connection, then send half a message and hang up.
        reader
            .get_mut()
            .write_all(b"PONG\r\nMSG a 1 10\r\nhal")
            .await
            .unwrap();
        let _ = reader.get_mut().shutdown().await;
    })
    .await;
    let client = ConnectOptions::new()
        .no_reconnect()
        .connect(url)
        .await
        .unwrap();
    let mut events = client.events();
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap();
    assert!(
        matches!(event, Some(ConnectionEvent::Disconnected { .. })),
        "{event:?}"
    );
    assert!(matches!(
        client.flush().await.unwrap_err().cause(),
        Some(FlushCause::NotSent)
    ));
}

#[tokio::test]
async fn fake_server_sending_a_malformed_frame_after_connect_closes_with_a_reason() {
    let url = fake_server(|socket| async move {
        let mut reader = BufReader::new(socket);
        reader.get_mut().write_all(INFO).await.unwrap();
        read_through_ping(&mut reader).await;
        reader
            .get_mut()
            .write_all(b"PONG\r\nMSG a notanumber 5\r\nhello\r\n")
            .await
            .unwrap();
        let mut line = String::new();
        let _ = reader.read_line(&mut line).await;
    })
    .await;
    let client = ConnectOptions::new()
        .no_reconnect()
        .connect(url)
        .await
        .unwrap();
    let mut events = client.events();
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap();
    match event {
        Some(ConnectionEvent::Disconnected { reason }) => {
            assert!(reason.contains("protocol"), "{reason}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn unanswered_pings_declare_the_connection_stale() {
    let url = fake_server(|socket| async move {
        let mut reader = BufReader::new(socket);
        reader.get_mut().write_all(INFO).await.unwrap();
        read_through_ping(&mut reader).await;
        reader.get_mut().write_all(b"PONG\r\n").await.unwrap();
        // From now on, read everything and answer nothing.
        let mut line = String::new();
        while reader.read_line(&mut line).await.unwrap_or(0) > 0 {
            line.clear();
        }
    })
    .await;
    let client = ConnectOptions::new()
        .ping_interval(Duration::from_millis(50))
        .max_pings_outstanding(2)
        .no_reconnect()
        .connect(url)
        .await
        .unwrap();
    let mut events = client.events();
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap();
    match event {
        Some(ConnectionEvent::Disconnected { reason }) => {
            assert!(reason.contains("stale"), "{reason}")
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(client.is_closed());
}

#[tokio::test]
async fn keepalive_pings_are_answered_by_a_real_server() {
    let server = NatsServer::start();
    // Up to 50 PINGs outstanding, a second: a server starved of CPU on a loaded 2-core
    // machine may take that long to answer, and two (40 ms) were too few for it.
    let client = ConnectOptions::new()
        .ping_interval(Duration::from_millis(20))
        .max_pings_outstanding(50)
        .connect(server.url())
        .await
        .unwrap();
    let mut sub = client.subscribe("alive").await.unwrap();
    // Time passes here on purpose: each turn lets a ping interval go by, so that more PINGs
    // are sent (100 turns, at least 2 s) than may be outstanding, and each round trip proves
    // the connection is still up.
    for i in 0..100 {
        client
            .publish("alive", Bytes::from(i.to_string()))
            .await
            .unwrap();
        let m = tokio::time::timeout(Duration::from_secs(10), sub.next())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(m.payload, Bytes::from(i.to_string()));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The PONGs were counted, or the link would have gone stale and been replaced.
    assert_eq!(client.connection_state(), rnats_core::State::Connected);
    assert_eq!(
        client
            .statistics()
            .connects
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[tokio::test]
async fn server_info_is_exposed() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let info = client.server_info();
    assert_eq!(info.version, "2.15.1");
    assert!(info.headers);
    assert_eq!(info.port, server.port());
}

#[tokio::test]
async fn an_invalid_inbox_prefix_is_refused_at_connect() {
    let server = NatsServer::start();
    for prefix in ["has space", "trailing.", "wild.*"] {
        let err = ConnectOptions::new()
            .custom_inbox_prefix(prefix)
            .connect(server.url())
            .await
            .unwrap_err();
        assert!(
            matches!(err.cause(), Some(ConnectCause::InvalidInboxPrefix(_))),
            "{prefix}: {err}"
        );
    }
}

#[tokio::test]
async fn lame_duck_mode_is_reported_as_an_event() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut events = client.events();
    server.signal("ldm").unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .unwrap();
    assert_eq!(event, Some(ConnectionEvent::LameDuckMode));
}

/// The next event from `events` that `pick` accepts, failing the test instead of hanging.
async fn event_where(
    events: &mut rnats_core::Events,
    pick: impl Fn(&ConnectionEvent) -> bool,
) -> ConnectionEvent {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let event = events.next().await.expect("the event stream ended");
            if pick(&event) {
                return event;
            }
        }
    })
    .await
    .expect("timed out waiting for an event")
}

#[tokio::test]
async fn rtt_measures_a_round_trip_and_fails_typed_without_a_connection() {
    let mut server = NatsServer::start();
    let client = ConnectOptions::new()
        .max_reconnects(None)
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    // Behind a publish, as a flush would be: the server answered, so it took the publish.
    let mut sub = client.subscribe("rtt.check").await.unwrap();
    client.publish("rtt.check", "before".into()).await.unwrap();
    let rtt = client.rtt().await.unwrap();
    assert!(rtt > Duration::ZERO, "{rtt:?}");
    assert_eq!(sub.next().await.unwrap().payload, Bytes::from("before"));

    // A PING whose connection dies before the PONG: the server is frozen, the PING is
    // queued (the first poll queues it), then the server goes away.
    server.freeze().unwrap();
    let lost = client.rtt();
    tokio::pin!(lost);
    assert!(futures_util::poll!(&mut lost).is_pending());
    server.kill();
    let error = lost.await.unwrap_err();
    assert_eq!(error.cause(), Some(&rnats_core::RttCause::Disconnected));
    assert_eq!(error.kind(), rnats_core::RttErrorKind::RecvError);

    // Reconnecting: nothing to measure, and no waiting for the outage to end.
    event_where(&mut events, |e| {
        matches!(e, ConnectionEvent::Disconnected { .. })
    })
    .await;
    let error = client.rtt().await.unwrap_err();
    assert_eq!(error.cause(), Some(&rnats_core::RttCause::NotConnected));
    assert_eq!(error.kind(), rnats_core::RttErrorKind::SendError);

    client.close().await;
    let error = client.rtt().await.unwrap_err();
    assert_eq!(error.cause(), Some(&rnats_core::RttCause::Closed));
}

/// Reads client lines until one is `want` (without its CRLF); false at EOF.
async fn read_until_line(reader: &mut BufReader<TcpStream>, want: &str) -> bool {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return false;
        }
        if line.trim_end() == want {
            return true;
        }
    }
}

#[tokio::test]
async fn fake_server_sending_an_unasked_pong_answers_no_later_flush() {
    let (stray_read_tx, stray_read) = tokio::sync::oneshot::channel();
    let (go_tx, go) = tokio::sync::oneshot::channel::<()>();
    let url = fake_server(|socket| async move {
        let mut reader = BufReader::new(socket);
        reader.get_mut().write_all(INFO).await.unwrap();
        read_through_ping(&mut reader).await;
        reader.get_mut().write_all(b"PONG\r\n").await.unwrap();
        // A PONG nobody asked for, then a PING of our own: the client answers in order, so
        // its PONG says it has taken in the unasked one.
        reader
            .get_mut()
            .write_all(b"PONG\r\nPING\r\n")
            .await
            .unwrap();
        assert!(read_until_line(&mut reader, "PONG").await);
        stray_read_tx.send(()).unwrap();
        // The two flushes' PINGs: only the first is answered until the test says so.
        assert!(read_until_line(&mut reader, "PING").await);
        assert!(read_until_line(&mut reader, "PING").await);
        reader.get_mut().write_all(b"PONG\r\n").await.unwrap();
        go.await.unwrap();
        reader.get_mut().write_all(b"PONG\r\n").await.unwrap();
        while read_until_line(&mut reader, "PING").await {
            reader.get_mut().write_all(b"PONG\r\n").await.unwrap();
        }
    })
    .await;
    let client = ConnectOptions::new()
        .no_reconnect()
        .connect(url)
        .await
        .unwrap();
    stray_read.await.unwrap();
    // The first poll of each queues its PING: 1, then 2. The tokio client pairs a flush
    // with its PING when the next PONG comes, so it takes two flushes and one PONG to see
    // the unasked PONG counted: it would make that PONG the second PING's answer too.
    let first = client.flush();
    let second = client.flush();
    tokio::pin!(first, second);
    assert!(futures_util::poll!(&mut first).is_pending());
    assert!(futures_util::poll!(&mut second).is_pending());
    let answered = tokio::time::timeout(Duration::from_secs(20), &mut first).await;
    assert!(matches!(answered, Ok(Ok(()))), "{answered:?}");
    // The server has not answered PING 2: nothing may say it did (a wait that cannot
    // flake this way, only miss a late wrong answer).
    let early = tokio::time::timeout(Duration::from_millis(200), &mut second).await;
    assert!(
        early.is_err(),
        "the second flush was answered by the unasked PONG: {early:?}"
    );
    go_tx.send(()).unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(20), &mut second).await;
    assert!(matches!(answered, Ok(Ok(()))), "{answered:?}");
    // Pairing goes on one PONG per PING.
    let again = tokio::time::timeout(Duration::from_secs(20), client.flush()).await;
    assert!(matches!(again, Ok(Ok(()))), "{again:?}");
}
