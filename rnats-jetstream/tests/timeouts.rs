//! How long JetStream waits for the server: API requests are bounded by the context's
//! timeout when it has one, else by the client's request timeout, and wait for ever when
//! neither sets one; recreating an ordered consumer sends its create again every second
//! while unanswered, so a lost create is made up for without the caller seeing an error, and
//! a late one does not make a second consumer.
//!
//! The contexts under test send their API requests under a relay prefix; a relay task on
//! another connection forwards them to `$JS.API` late, or loses a consumer create, and
//! records the server's answers to the creates it passed on.
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
    /// Consumer creates still to pass on late, and how late.
    late_creates: (usize, Duration),
}

/// The relay: its rules, the consumer creates it has seen (lost or passed on), and the
/// server's answers to those it passed on.
struct Relay {
    rules: Arc<Mutex<RelayRules>>,
    creates_seen: tokio::sync::watch::Receiver<usize>,
    create_answers: tokio::sync::watch::Receiver<Vec<serde_json::Value>>,
}

impl std::ops::Deref for Relay {
    type Target = Mutex<RelayRules>;

    fn deref(&self) -> &Mutex<RelayRules> {
        &self.rules
    }
}

/// Passes requests on `$JS.RELAY.API.>` to `$JS.API.>` as its rules say. A consumer create
/// is passed on as a request of the relay's own, whose answer it records and forwards.
async fn start_relay(server: &NatsServer) -> Relay {
    let client = rnats_core::connect(server.url()).await.unwrap();
    let rules = Arc::new(Mutex::new(RelayRules::default()));
    let (answers_tx, create_answers) = tokio::sync::watch::channel(Vec::new());
    let (seen_tx, creates_seen) = tokio::sync::watch::channel(0);
    let answers_tx = Arc::new(answers_tx);
    let mut requests = client.subscribe(format!("{RELAY_PREFIX}.>")).await.unwrap();
    client.flush().await.unwrap();
    let shared = Arc::clone(&rules);
    tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            let subject = request.subject.replacen(RELAY_PREFIX, "$JS.API", 1);
            let create = subject.starts_with("$JS.API.CONSUMER.CREATE.");
            if create {
                seen_tx.send_modify(|seen| *seen += 1);
            }
            let delay = {
                let mut rules = shared.lock().unwrap();
                if create && rules.lose_creates > 0 {
                    rules.lose_creates -= 1;
                    continue;
                }
                match rules.late_creates {
                    (late @ 1.., delay) if create => {
                        rules.late_creates = (late - 1, delay);
                        delay
                    }
                    _ => rules.delay,
                }
            };
            let (client, Some(reply)) = (client.clone(), request.reply) else {
                continue;
            };
            let answers = Arc::clone(&answers_tx);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                if !create {
                    let _ = client
                        .publish_with_reply(subject, reply, request.payload)
                        .await;
                    return;
                }
                let Ok(answer) = client.request(subject, request.payload).await else {
                    return;
                };
                let _ = client.publish(reply, answer.payload.clone()).await;
                let answer = serde_json::from_slice(&answer.payload).unwrap();
                answers.send_modify(|answers| answers.push(answer));
            });
        }
    });
    Relay {
        rules,
        creates_seen,
        create_answers,
    }
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
    ordered_needing_recreation_with(server, js, relay, |rules| rules.lose_creates = 1).await
}

/// As [`ordered_needing_recreation`], with `rules` set for the recreation instead of losing
/// its first create.
async fn ordered_needing_recreation_with(
    server: &NatsServer,
    js: &Context,
    relay: &Mutex<RelayRules>,
    rules: impl FnOnce(&mut RelayRules),
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

    rules(&mut relay.lock().unwrap());
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
async fn with_no_timeout_anywhere_a_lost_recreate_is_sent_again_after_ten_seconds() {
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
    // Nothing told of a change that could have lost it, so the second send waited for the
    // first one's bound: 10 s when nothing else bounds it, as in async-nats.
    assert!(
        start.elapsed() >= Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

/// Once the relay has seen `creates` consumer creates, the client reconnects: news after
/// which a recreation sends its create again at once.
async fn reconnect_after_creates(relay: &mut Relay, client: &Client, creates: usize) {
    let seen = relay.creates_seen.borrow().to_owned();
    relay
        .creates_seen
        .wait_for(|n| *n >= seen + creates)
        .await
        .unwrap();
    client.force_reconnect().await.unwrap();
}

/// A recreation whose create was lost sends it again as soon as the connection tells of a
/// change that may have lost it (here a reconnect; a route cut or healed between servers is
/// another), without waiting out the create's bound (a minute here).
#[tokio::test]
async fn a_lost_recreate_is_sent_again_at_once_when_the_connection_moves() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    events_stream(&server).await;
    let mut relay = start_relay(&server).await;
    let client = unbounded_client(&server).await;
    let mut js = rnats_jetstream::with_prefix(client.clone(), RELAY_PREFIX);
    js.set_timeout(Duration::from_secs(60));
    let mut messages = ordered_needing_recreation(&server, &js, &relay).await;

    let next = tokio::spawn(async move {
        let second = messages.next().await;
        (second, messages)
    });
    reconnect_after_creates(&mut relay, &client, 1).await;
    let (second, messages) = tokio::time::timeout(Duration::from_secs(30), next)
        .await
        .expect("the lost create waited out its bound")
        .unwrap();
    assert_eq!(second.unwrap().unwrap().payload, "second");
    assert_eq!(messages.recoveries().recreations, 1);
}

/// A create answered only after the next send went out: both reach the server, with the same
/// name and configuration, and whichever comes second finds the consumer the other made. One
/// consumer, and nothing more to recover from.
#[tokio::test]
async fn a_late_recreate_and_its_second_send_make_one_consumer() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    events_stream(&server).await;
    let mut relay = start_relay(&server).await;
    let client = unbounded_client(&server).await;
    let js = rnats_jetstream::with_prefix(client.clone(), RELAY_PREFIX);
    let mut messages = ordered_needing_recreation_with(&server, &js, &relay, |rules| {
        rules.late_creates = (1, Duration::from_secs(5));
    })
    .await;

    // The first create is on its way (late); a reconnect sends it again meanwhile.
    let next = tokio::spawn(async move {
        let second = messages.next().await;
        (second, messages)
    });
    reconnect_after_creates(&mut relay, &client, 1).await;
    let (second, mut messages) = tokio::time::timeout(Duration::from_secs(30), next)
        .await
        .expect("the recreation waited for ever")
        .unwrap();
    assert_eq!(second.unwrap().unwrap().payload, "second");
    let recreations = messages.recoveries().recreations;
    // Both sends of the recreation (the first one, `<name>_1`) answered, without an error.
    let recreation = |answer: &&serde_json::Value| {
        answer.get("error").is_some() || answer["name"].as_str().is_some_and(|n| n.ends_with("_1"))
    };
    let answers: Vec<serde_json::Value> = tokio::time::timeout(
        Duration::from_secs(30),
        relay
            .create_answers
            .wait_for(|answers| answers.iter().filter(recreation).count() == 2),
    )
    .await
    .expect("the late create was never answered")
    .unwrap()
    .iter()
    .filter(recreation)
    .cloned()
    .collect();
    for answer in &answers {
        assert!(answer.get("error").is_none(), "{answer}");
    }
    let info = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap())
        .get_stream("events")
        .await
        .unwrap()
        .get_info()
        .await
        .unwrap();
    assert_eq!(info.state.consumer_count, 1);

    js.publish("events", "third".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let third = tokio::time::timeout(Duration::from_secs(30), messages.next())
        .await
        .expect("the consumer stalled")
        .unwrap()
        .unwrap();
    assert_eq!(third.payload, "third");
    // The second create changed nothing the ordered consumer had to recover from.
    assert_eq!(messages.recoveries().recreations, recreations);
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

/// Durations past what the clock holds (`Duration::MAX`), given for a pull's expiry and
/// heartbeat, wait as good as for ever instead of panicking where a deadline is computed.
#[tokio::test]
async fn pulls_given_durations_past_the_clock_s_range_still_deliver() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    events_stream(&server).await;
    let js = rnats_jetstream::new(rnats_core::connect(server.url()).await.unwrap());
    let stream = js.get_stream("events").await.unwrap();
    let consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("far".to_owned()),
            ..Default::default()
        })
        .await
        .unwrap();
    let within = Duration::from_secs(10);
    let mut batch = consumer
        .batch()
        .expires(Duration::MAX)
        .heartbeat(Duration::MAX)
        .max_messages(1)
        .messages()
        .await
        .unwrap();
    let first = tokio::time::timeout(within, batch.next()).await.unwrap();
    assert_eq!(first.unwrap().unwrap().payload, "first");
    let mut messages = consumer
        .stream()
        .expires(Duration::MAX)
        .heartbeat(Duration::MAX)
        .messages()
        .await
        .unwrap();
    js.publish("events", "second".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let next = tokio::time::timeout(within, messages.next()).await.unwrap();
    assert_eq!(next.unwrap().unwrap().payload, "second");
}
