//! Behaviour of the async-nats shaped API against a real server: event callbacks, live
//! statistics, `send_request`, the `Sink`, server info helpers, auth callbacks.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use rnats_core::message::OutboundMessage;
use rnats_core::{
    Auth, ConnectErrorKind, ConnectOptions, ConnectionEvent, Event, HeaderMap, PublishCause,
    PublishErrorKind, Request, RequestErrorKind, SetServerPoolErrorKind, Subject,
};
use rnats_test_server::NatsServer;
use tokio::sync::mpsc;

/// An event callback that forwards every event into a channel.
fn forwarding_callback(
    options: ConnectOptions,
) -> (ConnectOptions, mpsc::UnboundedReceiver<Event>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let options = options.event_callback(move |event| {
        let tx = tx.clone();
        async move {
            tx.send(event).ok();
        }
    });
    (options, rx)
}

async fn next_event(rx: &mut mpsc::UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("no event came")
        .expect("callback channel closed")
}

#[tokio::test]
async fn event_callback_sees_connected_first_then_reconnects_draining_and_closed() {
    let mut server = NatsServer::start();
    let (options, mut rx) = forwarding_callback(quick());
    let client = options.connect(server.url()).await.unwrap();
    assert_eq!(next_event(&mut rx).await, Event::Connected);

    server.restart().unwrap();
    assert_eq!(next_event(&mut rx).await, Event::Disconnected);
    assert_eq!(next_event(&mut rx).await, Event::Connected);

    client.drain().await.unwrap();
    assert_eq!(next_event(&mut rx).await, Event::Draining);
    assert_eq!(next_event(&mut rx).await, Event::Closed);
}

#[tokio::test]
async fn statistics_is_a_live_handle() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let stats = client.statistics();
    assert_eq!(stats.connects.load(Ordering::Relaxed), 1);
    let out_before = stats.out_bytes.load(Ordering::Relaxed);
    let mut sub = client.subscribe("live").await.unwrap();
    for _ in 0..25 {
        client
            .publish("live", Bytes::from_static(b"abcd"))
            .await
            .unwrap();
    }
    client.flush().await.unwrap();
    for _ in 0..25 {
        next_payload(&mut sub).await;
    }
    // The handle taken before the traffic sees it.
    assert_eq!(stats.out_messages.load(Ordering::Relaxed), 25);
    assert_eq!(stats.in_messages.load(Ordering::Relaxed), 25);
    // Bytes are protocol bytes, as in async-nats: more than the payloads alone.
    assert!(stats.out_bytes.load(Ordering::Relaxed) - out_before > 100);
    assert!(stats.in_bytes.load(Ordering::Relaxed) > 100);
}

#[tokio::test]
async fn send_request_carries_headers_honours_timeouts_and_custom_inboxes() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut service = client.subscribe("svc.echo").await.unwrap();
    let responder = client.clone();
    tokio::spawn(async move {
        while let Some(request) = service.next().await {
            let mut headers = HeaderMap::new();
            headers.insert("X-Reply-To", request.reply.as_deref().unwrap_or_default());
            let seen = request
                .headers
                .as_ref()
                .and_then(|h| h.get("X-Trace"))
                .map(|v| v.as_str().to_owned())
                .unwrap_or_default();
            headers.insert("X-Trace-Seen", seen.as_str());
            if let Some(reply) = request.reply {
                responder
                    .publish_with_headers(reply, headers, request.payload)
                    .await
                    .unwrap();
            }
        }
    });
    client.flush().await.unwrap();

    let mut headers = HeaderMap::new();
    headers.insert("X-Trace", "t-1");
    let reply = client
        .send_request(
            "svc.echo",
            Request::new()
                .payload("ping".into())
                .headers(headers)
                .timeout(Some(Duration::from_secs(5))),
        )
        .await
        .unwrap();
    assert_eq!(reply.payload, Bytes::from("ping"));
    let reply_headers = reply.headers.unwrap();
    assert_eq!(reply_headers.get("X-Trace-Seen").unwrap().as_str(), "t-1");

    let inbox = format!("{}.mine", client.new_inbox());
    let reply = client
        .send_request("svc.echo", Request::new().inbox(inbox.clone()))
        .await
        .unwrap();
    assert_eq!(
        reply.headers.unwrap().get("X-Reply-To").unwrap().as_str(),
        inbox
    );

    let mut silent = client.subscribe("svc.silent").await.unwrap();
    client.flush().await.unwrap();
    let err = client
        .send_request(
            "svc.silent",
            Request::new().timeout(Some(Duration::from_millis(100))),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::TimedOut);
    assert!(silent.next().await.is_some());

    let err = client
        .send_request("svc.nobody", Request::new())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoResponders);
}

#[tokio::test]
async fn the_client_is_a_sink_of_outbound_messages() {
    let server = NatsServer::start();
    // A small write limit makes poll_ready wait for room now and then.
    let client = ConnectOptions::new()
        .write_buffer_limit(1024)
        .connect(server.url())
        .await
        .unwrap();
    let mut sub = client.subscribe("sink.>").await.unwrap();
    client.flush().await.unwrap();
    let messages = (0..500).map(|i| {
        Ok(OutboundMessage {
            subject: Subject::from(format!("sink.{i}")),
            reply: None,
            payload: Bytes::from(vec![b'x'; 100]),
            headers: None,
        })
    });
    let mut sink = client.clone();
    sink.send_all(&mut futures_util::stream::iter(messages))
        .await
        .unwrap();
    client.flush().await.unwrap();
    for i in 0..500 {
        let message = tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(message.subject.as_str(), format!("sink.{i}"));
    }

    let bad = OutboundMessage {
        subject: Subject::from("bad subject"),
        reply: None,
        payload: Bytes::new(),
        headers: None,
    };
    let err = sink.send(bad).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::InvalidSubject);
}

#[tokio::test]
async fn server_info_helpers_report_the_server() {
    let server = NatsServer::builder().max_payload(4096).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let info = client.try_server_info().unwrap();
    assert!(info.version.starts_with("2."), "{}", info.version);
    assert_eq!(client.max_payload(), 4096);
    assert!(client.is_server_compatible(2, 0, 0));
    assert!(!client.is_server_compatible(99, 0, 0));
    assert_eq!(client.connection_state().to_string(), "connected");
}

#[tokio::test]
async fn force_reconnect_moves_and_fails_once_closed() {
    let server = NatsServer::start();
    let client = quick().connect(server.url()).await.unwrap();
    let mut events = client.events();
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
    client.close().await;
    assert!(client.force_reconnect().await.is_err());
}

#[tokio::test]
async fn async_auth_callback_answers_with_a_token() {
    let server = NatsServer::builder().token("s3cret").spawn().unwrap();
    let client = ConnectOptions::with_auth_callback(|_nonce| async {
        let mut auth = Auth::new();
        auth.token = Some("s3cret".to_owned());
        Ok(auth)
    })
    .connect(server.url())
    .await
    .unwrap();
    round_trip(&client).await;

    let err = connect_err(
        ConnectOptions::with_auth_callback(|_nonce| async {
            let mut auth = Auth::new();
            auth.token = Some("wrong".to_owned());
            Ok(auth)
        }),
        server.url(),
    )
    .await;
    assert_eq!(err.kind(), ConnectErrorKind::AuthorizationViolation);
}

#[tokio::test]
async fn skip_subject_validation_still_refuses_what_breaks_framing() {
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .skip_subject_validation(true)
        .connect(server.url())
        .await
        .unwrap();
    client.publish("a.*", "x".into()).await.unwrap();
    let err = client.publish("a b", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::InvalidSubject);
    // Right after a subject of the same length that passed, too.
    client.publish("a.b", "x".into()).await.unwrap();
    let err = client.publish("a\tb", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), PublishErrorKind::InvalidSubject);
    client.publish("a..b", "x".into()).await.unwrap();
    client.flush().await.unwrap();
}

#[tokio::test]
async fn a_header_refused_by_the_map_is_reported_at_publish() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("X-Ok", "fine");
    headers.insert("X-Injected", "a\r\nX-Evil: 1");
    let err = client
        .publish_with_headers("h", headers, "x".into())
        .await
        .unwrap_err();
    assert!(
        matches!(err.cause(), Some(PublishCause::InvalidHeader(_))),
        "{err}"
    );
    client.flush().await.unwrap();
}

#[tokio::test]
async fn set_server_pool_moves_reconnects_to_the_new_servers() {
    let mut first = NatsServer::start();
    let second = NatsServer::start();
    let client = quick()
        .ignore_discovered_servers()
        .connect(first.url())
        .await
        .unwrap();
    let pool = client.server_pool().await.unwrap();
    assert_eq!(pool.len(), 1);
    assert!(pool[0].did_connect && !pool[0].is_discovered);

    let err = client
        .set_server_pool(Vec::<String>::new())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), SetServerPoolErrorKind::EmptyPool);
    let err = client
        .set_server_pool(vec!["nats://127.0.0.1:1", "ws://127.0.0.1:2"])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), SetServerPoolErrorKind::MixedSchemes);

    client.set_server_pool(second.url()).await.unwrap();
    let second_id = server_id_of(&second).await;
    let mut events = client.events();
    let mut sub = client.subscribe("moved").await.unwrap();
    client.flush().await.unwrap();
    first.kill();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert_eq!(client.server_info().server_id, second_id);
    client.publish("moved", "here".into()).await.unwrap();
    assert_eq!(next_payload(&mut sub).await, Bytes::from("here"));
}

#[tokio::test]
async fn reconnect_to_server_callback_picks_the_server() {
    let first = NatsServer::start();
    let second = NatsServer::start();
    let first_addr: rnats_core::ServerAddr = first.url().parse().unwrap();
    let second_addr: rnats_core::ServerAddr = second.url().parse().unwrap();
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let client = quick()
        .retain_servers_order()
        .ignore_discovered_servers()
        .reconnect_to_server_callback({
            let calls = std::sync::Arc::clone(&calls);
            move |servers, _info| {
                // The first connect asks too, as in async-nats: second, then first.
                let chosen = match calls.fetch_add(1, Ordering::SeqCst) {
                    0 => second_addr.clone(),
                    _ => first_addr.clone(),
                };
                async move {
                    assert_eq!(servers.len(), 2);
                    Some(rnats_core::ReconnectToServer {
                        addr: chosen,
                        delay: Some(Duration::ZERO),
                    })
                }
            }
        })
        .connect(vec![first.url(), second.url()])
        .await
        .unwrap();
    assert_eq!(client.server_info().server_id, server_id_of(&second).await);
    let mut events = client.events();
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    assert_eq!(client.server_info().server_id, server_id_of(&first).await);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_callback_choosing_a_stranger_is_reported_and_ignored() {
    let server = NatsServer::start();
    let client = quick()
        .ignore_discovered_servers()
        .reconnect_to_server_callback(|_, _| async {
            Some(rnats_core::ReconnectToServer {
                addr: "nats://127.0.0.1:1".parse().unwrap(),
                delay: None,
            })
        })
        .connect(server.url())
        .await
        .unwrap();
    let mut events = client.events();
    client.force_reconnect().await.unwrap();
    wait_for(&mut events, |e| {
        *e == ConnectionEvent::ClientError(rnats_core::ClientError::ServerNotInPool)
    })
    .await;
    wait_for(&mut events, |e| *e == ConnectionEvent::Reconnected).await;
    round_trip(&client).await;
}

/// The server id a fresh connection to `server` reports.
async fn server_id_of(server: &NatsServer) -> String {
    let client = rnats_core::connect(server.url()).await.unwrap();
    client.server_info().server_id
}
