//! Draining consumer message streams (ADR-37 "Stop and Drain") against a real nats-server:
//! after `drain` the streams yield every message the server delivered, so all of them can be
//! acked, and then end; nothing is left pending for `ack_wait` to bring back.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt, StreamExt, TryStreamExt};
use rnats_jetstream::consumer::{self, AckPolicy, pull, push};
use rnats_jetstream::{Context, stream};
use rnats_test_server::NatsServer;

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);
/// Long enough that no message comes again while a test runs, however slow the machine:
/// anything still unacked at the end was lost by the drain, not redelivered.
const ACK_WAIT: Duration = Duration::from_secs(600);
/// Messages stored before consuming.
const STORED: u64 = 1000;
/// Messages per pull request, and the push consumer's `max_ack_pending`: what the server
/// delivers before it waits for the client.
const WINDOW: u64 = 100;

fn jetstream_server() -> NatsServer {
    NatsServer::builder().jetstream(true).spawn().unwrap()
}

/// A JetStream context on a fresh server, with `STORED` messages on `drain.<n>`.
async fn stored_messages(server: &NatsServer) -> (rnats_core::Client, stream::Stream) {
    let client = rnats_core::connect(server.client_url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    let stream = js
        .create_stream(stream::Config {
            name: "DRAIN".to_owned(),
            subjects: vec!["drain.>".to_owned()],
            ..Default::default()
        })
        .await
        .unwrap();
    publish(&js, STORED).await;
    (client, stream)
}

async fn publish(js: &Context, count: u64) {
    let mut acks = Vec::new();
    for i in 0..count {
        let ack = js.publish(format!("drain.{i}"), Bytes::from(i.to_string()));
        acks.push(ack.await.unwrap());
    }
    for ack in acks {
        ack.await.unwrap();
    }
}

async fn next<S, T, E>(messages: &mut S) -> Option<Result<T, E>>
where
    S: futures_util::Stream<Item = Result<T, E>> + Unpin,
{
    tokio::time::timeout(WAIT, messages.next())
        .await
        .expect("timed out waiting for the next item")
}

/// Reads the first ten messages of an ordered stream, drains it and reads the rest: in
/// order, without gaps, until it ends.
async fn drain_after_ten_in_order<S, E>(messages: &mut S)
where
    S: futures_util::Stream<Item = Result<rnats_jetstream::Message, E>> + Drain + Unpin,
    E: std::fmt::Debug,
{
    for sequence in 1..=10 {
        let message = next(messages).await.unwrap().unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, sequence);
    }
    messages.drain().await.unwrap();
    let mut last = 10;
    while let Some(message) = next(messages).await {
        let sequence = message.unwrap().info().unwrap().stream_sequence;
        assert_eq!(sequence, last + 1, "in order, without gaps");
        last = sequence;
    }
    assert!(last <= STORED);
}

/// The ordered streams' `drain`, for [`drain_after_ten_in_order`].
trait Drain {
    async fn drain(&mut self) -> Result<(), rnats_core::UnsubscribeError>;
}

impl Drain for pull::Ordered {
    async fn drain(&mut self) -> Result<(), rnats_core::UnsubscribeError> {
        pull::Ordered::drain(self).await
    }
}

impl Drain for push::Ordered {
    async fn drain(&mut self) -> Result<(), rnats_core::UnsubscribeError> {
        push::Ordered::drain(self).await
    }
}

/// A second subscription on the consumer's connection that sees each message the server
/// delivers to it (`subject`: the push consumer's deliver subject, or every inbox for a pull
/// consumer's). The server writes a message to every matching subscription of a connection
/// in one step, so once the witness has one, the stream's copy is on its way too: a drain
/// after [`Witness::wait_for_window`] races no delivery. The consumer's own delivered count
/// is no such proof: it counts what the consumer handed to the server's internal queue.
struct Witness(rnats_core::Subscriber);

impl Witness {
    async fn subscribe(client: &rnats_core::Client, subject: String) -> Self {
        let subscriber = client.subscribe(subject).await.unwrap();
        client.flush().await.unwrap();
        Self(subscriber)
    }

    /// Waits until the witness has seen the consumer's first `WINDOW` messages (those with
    /// an ack subject: heartbeats and API replies have none), all the server sends before
    /// the client asks again (pull) or acks (push); then unsubscribes, leaving the stream
    /// the consumer's only interest.
    async fn wait_for_window(mut self) {
        let mut seen = 0;
        while seen < WINDOW {
            let message = tokio::time::timeout(WAIT, self.0.next())
                .await
                .expect("timed out waiting for the window")
                .expect("the witness's subscription ended");
            if message
                .reply
                .as_ref()
                .is_some_and(|reply| reply.starts_with("$JS.ACK."))
            {
                seen += 1;
            }
        }
        self.0.unsubscribe().await.unwrap();
    }
}

/// Reads and acks (with the server's confirmation) until the stream ends; how many.
async fn ack_until_end<S, E>(messages: &mut S, mut sequence: u64) -> u64
where
    S: futures_util::Stream<Item = Result<rnats_jetstream::Message, E>> + Unpin,
    E: std::fmt::Debug,
{
    let mut count = 0;
    while let Some(message) = next(messages).await {
        let message = message.expect("no error item while draining");
        sequence += 1;
        assert_eq!(message.info().unwrap().stream_sequence, sequence);
        message.double_ack().await.unwrap();
        count += 1;
    }
    count
}

/// What the server says is left once everything the drained stream yielded was acked:
/// nothing pending an ack, nothing redelivered, and no more taken than the first window.
async fn assert_all_acked<C: consumer::IntoConsumerConfig>(consumer: &mut consumer::Consumer<C>) {
    let info = consumer.info().await.unwrap();
    assert_eq!(info.num_ack_pending, 0, "delivered but never yielded");
    assert_eq!(info.num_redelivered, 0);
    assert_eq!(info.delivered.consumer_sequence, WINDOW);
    assert_eq!(info.ack_floor.stream_sequence, WINDOW);
    assert_eq!(info.num_pending, STORED - WINDOW);
}

#[tokio::test]
async fn a_drained_pull_stream_yields_every_delivered_message_then_ends() {
    let server = jetstream_server();
    let (client, stream) = stored_messages(&server).await;
    let mut consumer: consumer::PullConsumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("worker".to_owned()),
            ack_policy: AckPolicy::Explicit,
            ack_wait: ACK_WAIT,
            ..Default::default()
        })
        .await
        .unwrap();
    let witness = Witness::subscribe(&client, "_INBOX.>".to_owned()).await;
    let mut messages = consumer
        .stream()
        .max_messages_per_batch(WINDOW as usize)
        .heartbeat(Duration::from_secs(1))
        .messages()
        .await
        .unwrap();
    // A tenth of the first request: the stream asks again only at half, so one is open.
    for sequence in 1..=10 {
        let message = next(&mut messages).await.unwrap().unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, sequence);
        message.double_ack().await.unwrap();
    }
    witness.wait_for_window().await;

    messages.drain().await.unwrap();
    let rest = ack_until_end(&mut messages, 10).await;
    assert_eq!(rest, WINDOW - 10);
    assert!(
        next(&mut messages).await.is_none(),
        "a drained stream stays ended"
    );
    assert_all_acked(&mut consumer).await;
}

#[tokio::test]
async fn draining_an_idle_pull_stream_ends_it_without_an_error() {
    let server = jetstream_server();
    let client = rnats_core::connect(server.client_url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let stream = js
        .create_stream(stream::Config {
            name: "IDLE".to_owned(),
            subjects: vec!["idle".to_owned()],
            ..Default::default()
        })
        .await
        .unwrap();
    let mut consumer: consumer::PullConsumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("idle".to_owned()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer
        .stream()
        .heartbeat(Duration::from_secs(1))
        .messages()
        .await
        .unwrap();
    // The first poll sends the pull request; wait until the server holds it.
    assert!(
        messages.next().now_or_never().is_none(),
        "nothing is stored"
    );
    tokio::time::timeout(WAIT, async {
        while consumer.info().await.unwrap().num_waiting == 0 {}
    })
    .await
    .unwrap();

    messages.drain().await.unwrap();
    assert!(next(&mut messages).await.is_none());
}

#[tokio::test]
async fn a_drained_ordered_pull_stream_ends_after_what_was_delivered_in_order() {
    let server = jetstream_server();
    let (_client, stream) = stored_messages(&server).await;
    let consumer = stream
        .create_consumer(pull::OrderedConfig::default())
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    drain_after_ten_in_order(&mut messages).await;
}

#[tokio::test]
async fn a_drained_push_stream_yields_every_delivered_message_then_ends() {
    let server = jetstream_server();
    let (client, stream) = stored_messages(&server).await;
    // Paused until both subscriptions are in place, so that the witness sees every message.
    let paused_until = rnats_core::datetime::add_std_duration(
        rnats_core::datetime::now(),
        Duration::from_secs(3600),
    )
    .unwrap();
    let deliver_subject = client.new_inbox();
    let mut consumer: consumer::PushConsumer = stream
        .create_consumer(push::Config {
            durable_name: Some("pusher".to_owned()),
            deliver_subject: deliver_subject.clone(),
            pause_until: Some(paused_until),
            ack_policy: AckPolicy::Explicit,
            ack_wait: ACK_WAIT,
            max_ack_pending: WINDOW as i64,
            idle_heartbeat: Duration::from_secs(1),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let witness = Witness::subscribe(&client, deliver_subject).await;
    stream.resume_consumer("pusher").await.unwrap();
    // Held unacked until the drain: the server sends the window and waits for acks.
    let mut first = Vec::new();
    for sequence in 1..=10 {
        let message = next(&mut messages).await.unwrap().unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, sequence);
        first.push(message);
    }
    witness.wait_for_window().await;

    messages.drain().await.unwrap();
    for message in first {
        message.double_ack().await.unwrap();
    }
    let rest = ack_until_end(&mut messages, 10).await;
    assert_eq!(rest, WINDOW - 10);
    // Acks freed the window, but nobody listens any more: nothing more was sent.
    assert_all_acked(&mut consumer).await;
}

#[tokio::test]
async fn a_drained_ordered_push_stream_ends_after_what_was_delivered_in_order() {
    let server = jetstream_server();
    let (client, stream) = stored_messages(&server).await;
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            ..Default::default()
        })
        .await
        .unwrap();
    let name = consumer.cached_info().name.clone();
    let mut messages = consumer.messages().await.unwrap();
    drain_after_ten_in_order(&mut messages).await;
    // Ended for good: no consumer made again, and the one drained is the only one.
    assert!(matches!(messages.next().now_or_never(), Some(None)));
    let names: Vec<String> = stream.consumer_names().try_collect().await.unwrap();
    assert_eq!(names, [name]);
}

#[tokio::test]
async fn draining_an_ordered_push_stream_while_it_recreates_its_consumer_ends_it() {
    let server = jetstream_server();
    let (client, stream) = stored_messages(&server).await;
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let first = next(&mut messages).await.unwrap().unwrap();
    assert_eq!(first.info().unwrap().stream_sequence, 1);
    let mut events = client.events();
    client.force_reconnect().await.unwrap();
    tokio::time::timeout(WAIT, async {
        while events.next().await != Some(rnats_core::ConnectionEvent::Reconnected) {}
    })
    .await
    .expect("no reconnect");
    // One poll: the stream hears of the reconnect and starts making its consumer again.
    assert!(messages.next().now_or_never().is_none());

    messages.drain().await.unwrap();
    assert!(
        next(&mut messages).await.is_none(),
        "ended, no consumer made again"
    );
}
