//! Request/reply over the multiplexed inbox, against a real nats-server.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use rnats_core::{Client, ConnectOptions, HeaderMap, RequestCause, RequestErrorKind};
use rnats_test_server::NatsServer;

/// Answers every request on `subject` with "re:" + payload, echoing one header.
async fn responder(client: &Client, subject: &str) -> tokio::task::JoinHandle<()> {
    let mut sub = client.subscribe(subject.to_owned()).await.unwrap();
    client.flush().await.unwrap();
    let client = client.clone();
    tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            let Some(reply) = m.reply else { continue };
            let mut body = b"re:".to_vec();
            body.extend_from_slice(&m.payload);
            match m.headers {
                Some(headers) => client
                    .publish_with_headers(reply, headers, body.into())
                    .await
                    .unwrap(),
                None => client.publish(reply, body.into()).await.unwrap(),
            }
        }
    })
}

#[tokio::test]
async fn request_gets_the_reply() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    let _task = responder(&service, "svc.echo").await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let reply = client.request("svc.echo", "hi".into()).await.unwrap();
    assert_eq!(reply.payload, Bytes::from("re:hi"));

    let mut headers = HeaderMap::new();
    headers.insert("Id", "7");
    let reply = client
        .request_with_headers("svc.echo", headers, "h".into())
        .await
        .unwrap();
    assert_eq!(reply.headers.unwrap().get("Id").unwrap().as_str(), "7");
}

#[tokio::test]
async fn request_without_responders_fails_fast() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let err = client.request("nobody", "x".into()).await.unwrap_err();
    // Not `TimedOut`: the server's no-responders status ended it, not the request timeout.
    assert_eq!(err.kind(), RequestErrorKind::NoResponders);
}

#[tokio::test]
async fn request_times_out_when_nobody_answers() {
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .request_timeout(Some(Duration::from_millis(200)))
        .connect(server.url())
        .await
        .unwrap();
    // A subscriber that never answers keeps the server from replying "no responders".
    let _silent = client.subscribe("silent").await.unwrap();
    client.flush().await.unwrap();
    let err = client.request("silent", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::TimedOut);
    assert_eq!(
        err.cause(),
        Some(&RequestCause::TimedOut(Duration::from_millis(200)))
    );
    // The connection keeps working afterwards.
    client.flush().await.unwrap();
}

#[tokio::test]
async fn a_short_timeout_ends_on_time_behind_a_long_one() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let _silent = client.subscribe("silent").await.unwrap();
    client.flush().await.unwrap();
    // The long request's deadline is watched first; the short one, in flight beside it,
    // must move the watch earlier rather than wait behind it.
    let long = client.request_with_timeout("silent", "long".into(), Some(Duration::from_secs(60)));
    let mut long = Box::pin(long);
    assert!((&mut long).now_or_never().is_none(), "registered, no reply");
    let limits = [300, 100, 200].map(Duration::from_millis);
    let shorts = limits.map(|limit| {
        let client = client.clone();
        async move {
            let started = Instant::now();
            let err = client
                .request_with_timeout("silent", "short".into(), Some(limit))
                .await
                .unwrap_err();
            (limit, started.elapsed(), err)
        }
    });
    let ended = tokio::time::timeout(
        Duration::from_secs(30),
        futures_util::future::join_all(shorts),
    )
    .await
    .expect("the short requests ended long before the long one's deadline");
    for (limit, elapsed, err) in ended {
        assert_eq!(err.cause(), Some(&RequestCause::TimedOut(limit)));
        assert!(elapsed >= limit, "{limit:?} ended early, after {elapsed:?}");
    }
    // The long one still waits, and requests made after the timeouts still get replies.
    assert!((&mut long).now_or_never().is_none());
    let _task = responder(&client, "late").await;
    let reply = client
        .request_with_timeout("late", "x".into(), Some(Duration::from_secs(60)))
        .await
        .unwrap();
    assert_eq!(reply.payload, Bytes::from("re:x"));
}

#[tokio::test]
async fn a_thousand_concurrent_requests_are_all_answered() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    let _task = responder(&service, "svc.many").await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let requests = (0..1000).map(|i| {
        let client = client.clone();
        async move {
            let reply = client
                .request("svc.many", Bytes::from(i.to_string()))
                .await
                .unwrap();
            assert_eq!(reply.payload, Bytes::from(format!("re:{i}")));
        }
    });
    tokio::time::timeout(
        Duration::from_secs(30),
        futures_util::future::join_all(requests),
    )
    .await
    .expect("all requests answered");
}

#[tokio::test]
async fn dropped_request_futures_free_their_slot() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let _silent = client.subscribe("slow.svc").await.unwrap();
    client.flush().await.unwrap();
    // Abandon many requests mid-flight (each polled once, so it is registered and sent,
    // then dropped); a later one still works and nothing leaks into it. That the slots are
    // freed is checked inside the crate (`request::tests`), where the table is visible.
    for _ in 0..100 {
        let pending = client.request("slow.svc", "x".into());
        assert!(pending.now_or_never().is_none(), "no reply yet");
    }
    let service = rnats_core::connect(server.url()).await.unwrap();
    let _task = responder(&service, "svc.after").await;
    let reply = client.request("svc.after", "ok".into()).await.unwrap();
    assert_eq!(reply.payload, Bytes::from("re:ok"));
}

#[tokio::test]
async fn custom_inbox_prefix_is_used_for_replies() {
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        .custom_inbox_prefix("_MY_INBOX")
        .connect(server.url())
        .await
        .unwrap();
    assert!(client.new_inbox().starts_with("_MY_INBOX."));
    let mut sub = client.subscribe("who").await.unwrap();
    client.flush().await.unwrap();
    let requester = client.clone();
    let request = tokio::spawn(async move { requester.request("who", "?".into()).await });
    let m = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap()
        .unwrap();
    let reply = m.reply.unwrap();
    assert!(reply.as_str().starts_with("_MY_INBOX."), "{reply}");
    client.publish(reply, "me".into()).await.unwrap();
    assert_eq!(request.await.unwrap().unwrap().payload, Bytes::from("me"));
}
