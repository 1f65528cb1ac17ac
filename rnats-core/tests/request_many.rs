//! Request-many (ADR-47) against a real nats-server: every limit that ends a gathering, for
//! the tokio client's stream and the blocking client's iterator.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::{Client, HeaderMap, ManyEnd, ManyLimits, RequestErrorKind};
use rnats_test_server::NatsServer;

/// Subscribes `count` responders to `subject`; each answers every request with the replies
/// `answers(i)` gives, in order, then stops (it stays subscribed).
async fn responders(
    client: &Client,
    subject: &str,
    count: usize,
    answers: fn(usize) -> Vec<&'static str>,
) {
    for i in 0..count {
        let mut sub = client.subscribe(subject.to_owned()).await.unwrap();
        let client = client.clone();
        tokio::spawn(async move {
            while let Some(request) = sub.next().await {
                let Some(reply) = request.reply else { continue };
                let mut headers = request.headers.unwrap_or_default();
                headers.insert("Responder", i.to_string().as_str());
                for answer in answers(i) {
                    client
                        .publish_with_headers(reply.clone(), headers.clone(), answer.into())
                        .await
                        .unwrap();
                }
                client.flush().await.unwrap();
            }
        });
    }
    client.flush().await.unwrap();
}

async fn gather(replies: &mut rnats_core::Replies) -> Vec<Bytes> {
    let mut got = Vec::new();
    while let Some(reply) = replies.next().await {
        got.push(reply.unwrap().payload);
    }
    got
}

#[tokio::test]
async fn max_messages_gathers_every_responder_without_waiting_for_the_timeout() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    responders(&service, "scatter.count", 3, |_| vec!["one"]).await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut replies = client
        .request_many("scatter.count", "q".into())
        .timeout(Duration::from_secs(30))
        .max_messages(3)
        .await
        .unwrap();
    assert_eq!(gather(&mut replies).await.len(), 3);
    // Ended at the count, not at the 30 s timeout (that would be `ManyEnd::Timeout`).
    assert_eq!(replies.ended(), Some(ManyEnd::MaxMessages));
}

#[tokio::test]
async fn a_stall_after_the_last_reply_ends_the_gathering() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    responders(&service, "scatter.stall", 2, |_| vec!["a", "b"]).await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut replies = client
        .request_many("scatter.stall", "q".into())
        .timeout(Duration::from_secs(30))
        .stall_wait(Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(gather(&mut replies).await.len(), 4);
    // Ended by the stall, not by the 30 s total (that would be `ManyEnd::Timeout`).
    assert_eq!(replies.ended(), Some(ManyEnd::Stalled));
}

#[tokio::test]
async fn the_total_timeout_ends_a_gathering_with_no_other_limit() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    responders(&service, "scatter.total", 2, |_| vec!["x"]).await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let started = Instant::now();
    let mut replies = client
        .request_many("scatter.total", "q".into())
        .timeout(Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(gather(&mut replies).await.len(), 2);
    assert_eq!(replies.ended(), Some(ManyEnd::Timeout));
    // A lower bound only: a timer never fires early, however loaded the machine.
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[tokio::test]
async fn the_standard_sentinel_stops_at_an_empty_reply() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    responders(&service, "scatter.sentinel", 1, |_| {
        vec!["a", "b", "", "late"]
    })
    .await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut replies = client
        .request_many("scatter.sentinel", "q".into())
        .timeout(Duration::from_secs(30))
        .sentinel_empty()
        .await
        .unwrap();
    assert_eq!(gather(&mut replies).await, ["a", "b"]);
    assert_eq!(replies.ended(), Some(ManyEnd::Sentinel));
}

#[tokio::test]
async fn a_custom_sentinel_and_headers_reach_the_responders() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    responders(&service, "scatter.custom", 1, |_| {
        vec!["1", "2", "stop", "3"]
    })
    .await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("Trace", "t-1");
    let mut replies = client
        .request_many("scatter.custom", "q".into())
        .headers(headers)
        .timeout(Duration::from_secs(30))
        .sentinel(|message| message.payload != "stop")
        .await
        .unwrap();
    let first = replies.next().await.unwrap().unwrap();
    let echoed = first.headers.unwrap();
    assert_eq!(echoed.get("Trace").unwrap().as_str(), "t-1");
    assert_eq!(replies.next().await.unwrap().unwrap().payload, "2");
    assert!(replies.next().await.is_none());
    assert_eq!(replies.ended(), Some(ManyEnd::Sentinel));
}

#[tokio::test]
async fn no_responders_is_one_error_then_the_end() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut replies = client
        .request_many("scatter.nobody", "q".into())
        .timeout(Duration::from_secs(30))
        .await
        .unwrap();
    let err = replies.next().await.unwrap().unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::NoResponders);
    assert!(replies.next().await.is_none());
    assert_eq!(replies.ended(), Some(ManyEnd::NoResponders));
}

#[tokio::test]
async fn cancel_ends_the_stream_and_unsubscribes() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    responders(&service, "scatter.cancel", 1, |_| vec!["a"]).await;
    let client = rnats_core::connect(server.url()).await.unwrap();
    let mut replies = client
        .request_many("scatter.cancel", "q".into())
        .timeout(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(replies.next().await.unwrap().unwrap().payload, "a");
    replies.cancel();
    assert!(replies.next().await.is_none());
    assert_eq!(replies.ended(), Some(ManyEnd::Closed));
}

#[tokio::test]
async fn an_invalid_subject_is_refused_before_anything_is_sent() {
    let server = NatsServer::start();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let err = client
        .request_many("bad subject", "q".into())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::InvalidSubject);
    let err = client.request_many("wild.*", "q".into()).await.unwrap_err();
    assert_eq!(err.kind(), RequestErrorKind::InvalidSubject);
}

#[tokio::test]
async fn the_blocking_client_gathers_with_the_same_limits() {
    let server = NatsServer::start();
    let service = rnats_core::connect(server.url()).await.unwrap();
    responders(&service, "scatter.blocking", 2, |i| {
        if i == 0 { vec!["a", ""] } else { vec!["b"] }
    })
    .await;
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        let client = rnats_core::blocking::connect(url).unwrap();
        // Both responders answer; with a stall and no sentinel every reply comes through.
        let mut replies = client
            .request_many("scatter.blocking", "q".into())
            .limits(
                ManyLimits::default()
                    .timeout(Duration::from_secs(30))
                    .stall_wait(Duration::from_secs(1)),
            )
            .send()
            .unwrap();
        let mut got: Vec<Bytes> = replies.by_ref().map(|r| r.unwrap().payload).collect();
        got.sort();
        assert_eq!(got, ["", "a", "b"]);
        assert_eq!(replies.ended(), Some(ManyEnd::Stalled));

        let mut replies = client
            .request_many("scatter.blocking", "q".into())
            .limits(
                ManyLimits::default()
                    .timeout(Duration::from_secs(30))
                    .max_messages(2),
            )
            .send()
            .unwrap();
        assert_eq!(replies.by_ref().count(), 2);
        assert_eq!(replies.ended(), Some(ManyEnd::MaxMessages));

        let mut replies = client
            .request_many("scatter.nobody", "q".into())
            .limits(ManyLimits::default().timeout(Duration::from_secs(30)))
            .send()
            .unwrap();
        let err = replies.next().unwrap().unwrap_err();
        assert_eq!(err.kind(), RequestErrorKind::NoResponders);
        assert!(replies.next().is_none());
        assert_eq!(replies.ended(), Some(ManyEnd::NoResponders));
    })
    .await
    .unwrap();
}
