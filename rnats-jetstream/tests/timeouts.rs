//! How long JetStream waits for the server: API requests are bounded by the context's
//! timeout when it has one, else by the client's request timeout, and wait for ever when
//! neither sets one; recreating an ordered consumer is bounded even then (2 s for the first
//! attempt, 2 s more for each next one, at most 10 s), and a lost create is retried without
//! the caller seeing an error.
//!
//! The contexts under test send their API requests under a relay prefix; a relay task on
//! another connection forwards them to `$JS.API` late, or loses a consumer create.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rnats_core::{Client, ConnectOptions};
use rnats_jetstream::consumer::pull;
use rnats_jetstream::stream;
use rnats_jetstream::{Context, ContextBuilder};
use rnats_test_server::NatsServer;

const RELAY_PREFIX: &str = "$JS.RELAY.API";

/// What the relay does to the next requests.
#[derive(Default)]
struct RelayRules {
    /// How late each request is passed on.
    delay: Duration,
    /// Consumer creates still to lose.
    lose_creates: usize,
}

/// Passes requests on `$JS.RELAY.API.>` to `$JS.API.>` as its rules say.
async fn start_relay(server: &NatsServer) -> Arc<Mutex<RelayRules>> {
    let client = rnats_core::connect(server.url()).await.unwrap();
    let rules = Arc::new(Mutex::new(RelayRules::default()));
    let mut requests = client.subscribe(format!("{RELAY_PREFIX}.>")).await.unwrap();
    client.flush().await.unwrap();
    let shared = Arc::clone(&rules);
    tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            let subject = request.subject.replacen(RELAY_PREFIX, "$JS.API", 1);
            let delay = {
                let mut rules = shared.lock().unwrap();
                if subject.starts_with("$JS.API.CONSUMER.CREATE.") && rules.lose_creates > 0 {
                    rules.lose_creates -= 1;
                    continue;
                }
                rules.delay
            };
            let (client, Some(reply)) = (client.clone(), request.reply) else {
                continue;
            };
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = client
                    .publish_with_reply(subject, reply, request.payload)
                    .await;
            });
        }
    });
    rules
}

/// A client whose requests wait for ever unless told otherwise.
async fn unbounded_client(server: &NatsServer) -> Client {
    ConnectOptions::new()
        .request_timeout(None)
        .connect(server.url())
        .await
        .unwrap()
}

/// A stream `events` with one message, made directly.
async fn events_stream(server: &NatsServer) {
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    js.create_stream(stream::Config {
        name: "events".to_owned(),
        subjects: vec!["events".to_owned()],
        ..Default::default()
    })
    .await
    .unwrap();
    js.publish("events", "first".into())
        .await
        .unwrap()
        .await
        .unwrap();
}

#[tokio::test]
async fn without_any_timeout_api_requests_wait_for_a_late_reply() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    events_stream(&server).await;
    let relay = start_relay(&server).await;
    // Later than the 5 s that once bounded every API request.
    relay.lock().unwrap().delay = Duration::from_millis(5_500);
    let js = rnats_jetstream::with_prefix(unbounded_client(&server).await, RELAY_PREFIX);

    let info = tokio::time::timeout(Duration::from_secs(20), js.get_stream("events"))
        .await
        .expect("the request never ended")
        .unwrap();
    assert_eq!(info.cached_info().state.messages, 1);
}

#[tokio::test]
async fn the_client_request_timeout_bounds_api_requests_of_a_context_without_one() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    events_stream(&server).await;
    let relay = start_relay(&server).await;
    relay.lock().unwrap().delay = Duration::from_secs(3);
    let client = ConnectOptions::new()
        .request_timeout(Some(Duration::from_millis(300)))
        .connect(server.url())
        .await
        .unwrap();
    let js = rnats_jetstream::with_prefix(client.clone(), RELAY_PREFIX);
    assert!(js.get_stream("events").await.is_err());

    // A context timeout replaces it, higher or lower.
    let patient = ContextBuilder::new()
        .api_prefix(RELAY_PREFIX)
        .timeout(Duration::from_secs(10))
        .build(client);
    assert!(patient.get_stream("events").await.is_ok());
}

/// An ordered pull consumer on `events` that has delivered `first`; then the relay is set to
/// lose the next consumer create, the consumer is deleted behind its back and `second`
/// published, so getting `second` takes a recreation whose first create is lost.
async fn ordered_needing_recreation(
    server: &NatsServer,
    js: &Context,
    relay: &Mutex<RelayRules>,
) -> pull::Ordered {
    let consumer = js
        .get_stream("events")
        .await
        .unwrap()
        .create_consumer(pull::OrderedConfig::default())
        .await
        .unwrap();
    let name = consumer.cached_info().name.clone();
    let mut messages = consumer.messages().await.unwrap();
    let first = messages.next().await.unwrap().unwrap();
    assert_eq!(first.payload, "first");

    relay.lock().unwrap().lose_creates = 1;
    let admin = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    admin
        .delete_consumer_from_stream(&name, "events")
        .await
        .unwrap();
    admin
        .publish("events", "second".into())
        .await
        .unwrap()
        .await
        .unwrap();
    messages
}

#[tokio::test]
async fn a_lost_recreate_is_retried_after_the_context_timeout_without_an_error_item() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    events_stream(&server).await;
    let relay = start_relay(&server).await;
    let mut js = rnats_jetstream::with_prefix(unbounded_client(&server).await, RELAY_PREFIX);
    js.set_timeout(Duration::from_secs(1));
    let mut messages = ordered_needing_recreation(&server, &js, &relay).await;

    let start = Instant::now();
    let second = tokio::time::timeout(Duration::from_secs(20), messages.next())
        .await
        .expect("the recreation was never retried")
        .unwrap()
        .unwrap();
    assert_eq!(second.payload, "second");
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn with_no_timeout_anywhere_a_lost_recreate_is_retried_after_two_seconds() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    events_stream(&server).await;
    let relay = start_relay(&server).await;
    let js = rnats_jetstream::with_prefix(unbounded_client(&server).await, RELAY_PREFIX);
    let mut messages = ordered_needing_recreation(&server, &js, &relay).await;

    let start = Instant::now();
    let second = tokio::time::timeout(Duration::from_secs(30), messages.next())
        .await
        .expect("the recreation waited for ever")
        .unwrap()
        .unwrap();
    assert_eq!(second.payload, "second");
    // The first attempt waited out its own bound (2 s), not a whole request timeout (10 s).
    assert!(
        start.elapsed() >= Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn publish_acks_wait_five_seconds_whatever_the_client_request_timeout() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    // Answers publishes on `late` with an ack, a second late.
    let acker = rnats_core::connect(server.url()).await.unwrap();
    let mut publishes = acker.subscribe("late").await.unwrap();
    acker.flush().await.unwrap();
    tokio::spawn(async move {
        while let Some(publish) = publishes.next().await {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let ack = r#"{"stream":"late","seq":1}"#;
            let _ = acker.publish(publish.reply.unwrap(), ack.into()).await;
        }
    });
    let client = ConnectOptions::new()
        .request_timeout(Some(Duration::from_millis(300)))
        .connect(server.url())
        .await
        .unwrap();
    let js = rnats_jetstream::new(client);

    let ack = js.publish("late", "x".into()).await.unwrap().await.unwrap();
    assert_eq!((ack.stream.as_str(), ack.sequence), ("late", 1));
}
