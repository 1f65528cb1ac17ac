//! JetStream's advisories and metrics read typed from a real nats-server: what a stream's
//! and a consumer's life makes the server announce (actions, naks, terminations, a message
//! out of deliveries, sampled acks, a pause, the API audit).
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use futures_util::StreamExt;
use rnats_jetstream::advisory::{self, Action, Advisories, Advisory};
use rnats_jetstream::consumer::{PullConsumer, pull};
use rnats_jetstream::message::AckKind;
use rnats_jetstream::stream;
use rnats_test_server::NatsServer;

/// How long any single wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

/// The next event of `events` that `pick` takes, skipping the others (the API audit of each
/// request comes in between).
async fn next_of<T>(events: &mut Advisories, pick: impl Fn(Advisory) -> Option<T>) -> T {
    tokio::time::timeout(WAIT, async {
        loop {
            let event = events.next().await.expect("ended").expect("readable");
            if let Some(found) = pick(event) {
                return found;
            }
        }
    })
    .await
    .expect("no such event")
}

/// The next message a fetch of one gets.
async fn fetch_one(consumer: &PullConsumer) -> rnats_jetstream::Message {
    let mut batch = consumer
        .fetch()
        .max_messages(1)
        .expires(Duration::from_secs(5))
        .messages()
        .await
        .unwrap();
    tokio::time::timeout(WAIT, batch.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_stream_and_consumer_life_reads_as_typed_advisories() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    let mut events = js.advisories().await.unwrap();
    // The API audit of a request and the advisory of what it did come in either order: the
    // audit is read from a subscription of its own.
    let mut audits = js
        .advisories_on(advisory::subjects::API_AUDIT)
        .await
        .unwrap();
    client.flush().await.unwrap();

    let orders = js
        .create_stream(stream::Config {
            name: "ORDERS".into(),
            subjects: vec!["orders.>".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    let created = next_of(&mut events, |e| match e {
        Advisory::StreamAction(a) => Some(a),
        _ => None,
    })
    .await;
    assert_eq!(
        (created.stream.as_str(), created.action),
        ("ORDERS", Action::Create)
    );
    assert_eq!(
        created.header.kind,
        "io.nats.jetstream.advisory.v1.stream_action"
    );
    let audit = next_of(&mut audits, |e| match e {
        Advisory::ApiAudit(a) if a.subject == "$JS.API.STREAM.CREATE.ORDERS" => Some(a),
        _ => None,
    })
    .await;
    assert!(
        audit.response.contains("stream_create_response"),
        "{audit:?}"
    );

    let consumer: PullConsumer = orders
        .create_consumer(pull::Config {
            durable_name: Some("worker".into()),
            max_deliver: 2,
            sample_frequency: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let made = next_of(&mut events, |e| match e {
        Advisory::ConsumerAction(a) => Some(a),
        _ => None,
    })
    .await;
    assert_eq!(
        (made.stream.as_str(), made.consumer.as_str(), made.action),
        ("ORDERS", "worker", Action::Create)
    );

    for payload in ["declined", "refused", "done"] {
        js.publish("orders.new", payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    // The first message: declined twice, and then out of deliveries.
    for delivery in 1..=2 {
        let message = fetch_one(&consumer).await;
        assert_eq!(message.payload, "declined");
        message.ack_with(AckKind::Nak(None)).await.unwrap();
        let nak = next_of(&mut events, |e| match e {
            Advisory::Nak(a) => Some(a),
            _ => None,
        })
        .await;
        assert_eq!((nak.stream_seq, nak.deliveries), (1, delivery));
    }
    // The server gives up on it when it next looks for a message to deliver: for the next
    // pull, which gets the second message.
    let message = fetch_one(&consumer).await;
    assert_eq!(message.payload, "refused");
    let gave_up = next_of(&mut events, |e| match e {
        Advisory::MaxDeliveries(a) => Some(a),
        _ => None,
    })
    .await;
    assert_eq!(
        (
            gave_up.consumer.as_str(),
            gave_up.stream_seq,
            gave_up.deliveries
        ),
        ("worker", 1, 2)
    );
    // The second: terminated with a reason.
    message.term_with_reason("unparsable").await.unwrap();
    let terminated = next_of(&mut events, |e| match e {
        Advisory::Terminated(a) => Some(a),
        _ => None,
    })
    .await;
    assert_eq!(
        (terminated.stream_seq, terminated.reason.as_deref()),
        (2, Some("unparsable"))
    );
    // The third: acked, and with a sample frequency of 100% its ack is sampled.
    let message = fetch_one(&consumer).await;
    message.double_ack().await.unwrap();
    let sampled = next_of(&mut events, |e| match e {
        Advisory::ConsumerAck(a) => Some(a),
        _ => None,
    })
    .await;
    assert_eq!((sampled.stream_seq, sampled.deliveries), (3, 1));

    let until = rnats_core::datetime::add_std_duration(
        rnats_core::datetime::now(),
        Duration::from_secs(3600),
    )
    .unwrap();
    orders.pause_consumer("worker", until).await.unwrap();
    let paused = next_of(&mut events, |e| match e {
        Advisory::ConsumerPause(a) => Some(a),
        _ => None,
    })
    .await;
    assert!(paused.paused);
    assert!(paused.pause_until.is_some());

    orders.delete_consumer("worker").await.unwrap();
    let deleted = next_of(&mut events, |e| match e {
        Advisory::ConsumerAction(a) => Some(a),
        _ => None,
    })
    .await;
    assert_eq!(deleted.action, Action::Delete);
}

#[tokio::test]
async fn a_narrower_subject_reads_only_its_events() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    let mut actions = js
        .advisories_on(advisory::subjects::stream_actions("*"))
        .await
        .unwrap();
    client.flush().await.unwrap();
    for name in ["A", "B"] {
        js.create_stream(stream::Config {
            name: name.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    js.delete_stream("A").await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let event = tokio::time::timeout(WAIT, actions.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let Advisory::StreamAction(action) = event else {
            panic!("only stream actions come on this subject: {event:?}");
        };
        seen.push((action.stream, action.action));
    }
    // The server sends each stream's advisories in order, but not one stream's in order with
    // another's: B's create can come after A's delete (seen once in CI).
    let of = |name: &str| -> Vec<Action> {
        seen.iter()
            .filter(|(stream, _)| stream == name)
            .map(|(_, action)| *action)
            .collect()
    };
    assert_eq!(of("A"), [Action::Create, Action::Delete], "{seen:?}");
    assert_eq!(of("B"), [Action::Create], "{seen:?}");
}
