//! What continuous pull streams put in their pull requests, seen from a second connection
//! subscribed to `$JS.API.CONSUMER.MSG.NEXT.>`: the idle heartbeats they ask for (ADR-37)
//! and when the next request goes out (refill thresholds).
#![allow(clippy::unwrap_used, missing_docs)]

use std::error::Error as _;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};
use rnats_core::{Client, Subscriber};
use rnats_jetstream::consumer::{PullConsumer, pull};
use rnats_jetstream::{Context, stream};
use rnats_test_server::NatsServer;
use serde_json::Value;

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

/// A server, a JetStream context on it, a durable pull consumer on the stream `PULLS`
/// (subjects `pulls.>`) holding `count` messages, and a second connection that sees every
/// pull request.
async fn setup(count: usize) -> (NatsServer, Context, PullConsumer, Subscriber, Client) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let stream = js
        .create_stream(stream::Config {
            name: "PULLS".into(),
            subjects: vec!["pulls.>".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    for i in 0..count {
        js.publish("pulls.a", Bytes::from(i.to_string()))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("puller".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let observer = rnats_core::connect(server.url()).await.unwrap();
    let requests = observer
        .subscribe("$JS.API.CONSUMER.MSG.NEXT.>")
        .await
        .unwrap();
    observer.flush().await.unwrap();
    (server, js, consumer, requests, observer)
}

async fn next<S, T>(items: &mut S) -> T
where
    S: futures_util::Stream<Item = T> + Unpin,
{
    tokio::time::timeout(WAIT, items.next())
        .await
        .expect("timed out waiting for the next item")
        .expect("the stream ended")
}

/// The JSON body of the next pull request.
async fn next_request(requests: &mut Subscriber) -> Value {
    serde_json::from_slice(&next(requests).await.payload).unwrap()
}

/// The next pull request, read while `messages` is read on (its pull goes out as it is
/// polled).
async fn request_while_reading(messages: &mut pull::Stream, requests: &mut Subscriber) -> Value {
    let request = tokio::time::timeout(WAIT, async {
        loop {
            tokio::select! {
                request = requests.next() => break request.expect("the subscription ended"),
                message = messages.next() => { message.unwrap().unwrap(); }
            }
        }
    })
    .await
    .expect("no pull request");
    serde_json::from_slice(&request.payload).unwrap()
}

/// The first pull request of `builder`'s stream.
async fn first_request(
    builder: pull::StreamBuilder<'_>,
    requests: &mut Subscriber,
) -> (pull::Stream, Value) {
    let mut messages = builder.messages().await.unwrap();
    let request = request_while_reading(&mut messages, requests).await;
    (messages, request)
}

#[tokio::test]
async fn stream_requests_ask_for_heartbeats_without_being_told() {
    let (_server, _js, consumer, mut requests, _observer) = setup(0).await;
    let nanos = |seconds: u64| Value::from(seconds * 1_000_000_000);

    // ADR-37: half the expiry...
    let (_first, request) = first_request(consumer.stream(), &mut requests).await;
    assert_eq!(request["expires"], nanos(30), "{request}");
    assert_eq!(request["idle_heartbeat"], nanos(15), "{request}");

    // ... at most 30 s...
    let builder = consumer.stream().expires(Duration::from_secs(120));
    let (_second, request) = first_request(builder, &mut requests).await;
    assert_eq!(request["idle_heartbeat"], nanos(30), "{request}");

    // ... and what the user set, as set.
    let builder = consumer.stream().heartbeat(Duration::from_secs(5));
    let (_third, request) = first_request(builder, &mut requests).await;
    assert_eq!(request["idle_heartbeat"], nanos(5), "{request}");
}

#[tokio::test]
async fn a_missed_heartbeat_nobody_asked_for_only_pulls_again() {
    let (server, js, consumer, _requests, _observer) = setup(1).await;
    // Heartbeats every second, missed after two.
    let mut messages = consumer
        .stream()
        .expires(Duration::from_secs(2))
        .messages()
        .await
        .unwrap();
    next(&mut messages).await.unwrap();

    server.freeze().unwrap();
    let silence = async {
        while messages.recoveries().missed_heartbeats == 0 {
            // Polled so that the stream watches its heartbeats; the pause is only how often
            // the count is looked at.
            tokio::select! {
                item = messages.next() => panic!("the silence gave an item: {item:?}"),
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    };
    tokio::time::timeout(WAIT, silence)
        .await
        .expect("no missed heartbeat counted");
    server.unfreeze().unwrap();

    js.publish("pulls.a", Bytes::from("after"))
        .await
        .unwrap()
        .await
        .unwrap();
    let message = next(&mut messages).await.unwrap();
    assert_eq!(message.payload, Bytes::from("after"));
    assert_eq!(messages.recoveries().missed_heartbeats, 1);
}

#[tokio::test]
async fn the_next_request_goes_out_at_the_message_threshold() {
    let (_server, js, consumer, mut requests, observer) = setup(20).await;
    let client = js.client();
    let mut messages = consumer
        .stream()
        .max_messages_per_batch(10)
        .threshold_messages(3)
        .messages()
        .await
        .unwrap();
    // The first request goes out with the first read; 10 - 7 = 3 are still to come after
    // the seventh message, and the stream pulls again on the read after that.
    for _ in 0..7 {
        next(&mut messages).await.unwrap();
    }
    let first = next_request(&mut requests).await;
    assert_eq!(first["batch"], Value::from(10), "{first}");
    // Whatever the stream published is at the server after its flush, and with the observer
    // after the observer's.
    client.flush().await.unwrap();
    observer.flush().await.unwrap();
    assert!(
        requests.next().now_or_never().is_none(),
        "a second request went out with 4 messages still to come"
    );

    // The eighth read sends it; reading on keeps its publish going.
    next(&mut messages).await.unwrap();
    let second = request_while_reading(&mut messages, &mut requests).await;
    assert_eq!(second["batch"], Value::from(10), "{second}");
}

#[tokio::test]
async fn thresholds_must_be_below_the_request_size() {
    let (_server, _js, consumer, _requests, _observer) = setup(0).await;
    let refused = |result: Result<pull::Stream, _>| {
        let error: rnats_jetstream::consumer::StreamError = result.err().unwrap();
        assert_eq!(
            error.kind(),
            rnats_jetstream::consumer::StreamErrorKind::Other
        );
        *error
            .source()
            .and_then(|source| source.downcast_ref::<pull::InvalidThreshold>())
            .unwrap()
    };
    let messages = consumer
        .stream()
        .max_messages_per_batch(10)
        .threshold_messages(10)
        .messages()
        .await;
    assert_eq!(
        refused(messages),
        pull::InvalidThreshold {
            setting: "threshold_messages",
            threshold: 10,
            request_size: 10,
        }
    );
    // A byte threshold without a byte limit means nothing.
    let messages = consumer.stream().threshold_bytes(1).messages().await;
    assert_eq!(refused(messages).setting, "threshold_bytes");
    assert!(
        consumer
            .stream()
            .max_bytes_per_batch(1024)
            .threshold_bytes(1000)
            .messages()
            .await
            .is_ok()
    );
}
