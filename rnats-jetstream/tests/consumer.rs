//! Consumers against a real nats-server with JetStream: management, fetch and batch,
//! continuous pull consumption (ADR-37) through heartbeats, deletion and restarts, acks and
//! message metadata, push consumers with flow control, ordered consumers (ADR-17).
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_core::ConnectOptions;
use rnats_jetstream::consumer::{self, AckPolicy, DeliverPolicy, PullConsumer, pull, push};
use rnats_jetstream::context::{
    ConsumerCreateStrictErrorKind, ConsumerInfoErrorKind, ConsumerUpdateErrorKind,
};
use rnats_jetstream::stream::{self, StorageType};
use rnats_jetstream::{AckKind, Context, datetime};
use rnats_test_server::{NatsServer, Proxy, ServerBuilder};

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

/// Whether the test servers run with ADR-53's v2 ack and flow-control subjects
/// (`RNATS_TEST_FEATURE_FLAGS=js_ack_fc_v2`).
fn server_has_v2_acks() -> bool {
    ServerBuilder::new()
        .feature_flags()
        .iter()
        .any(|flag| flag == "js_ack_fc_v2")
}

fn jetstream_server() -> NatsServer {
    NatsServer::builder().jetstream(true).spawn().unwrap()
}

/// A client that reconnects at once (the default backs off for seconds).
async fn connect(url: &str) -> rnats_core::Client {
    ConnectOptions::new()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .ignore_discovered_servers()
        .connect(url)
        .await
        .unwrap()
}

async fn add_stream(
    js: &Context,
    name: &str,
    subjects: &[&str],
    storage: StorageType,
) -> stream::Stream {
    js.create_stream(stream::Config {
        name: name.to_owned(),
        subjects: subjects.iter().map(|s| s.to_string()).collect(),
        storage,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Publishes `count` messages to `subject` and waits for all their acks, pipelined in
/// rounds below the context's in-flight limit.
async fn publish(js: &Context, subject: &str, count: usize) {
    for round in (0..count).collect::<Vec<_>>().chunks(1000) {
        let mut acks = Vec::with_capacity(round.len());
        for i in round {
            acks.push(
                js.publish(subject.to_owned(), Bytes::from(i.to_string()))
                    .await
                    .unwrap(),
            );
        }
        for ack in acks {
            ack.await.unwrap();
        }
    }
}

async fn next<S, T, E>(messages: &mut S) -> Result<T, E>
where
    S: futures_util::Stream<Item = Result<T, E>> + Unpin,
{
    tokio::time::timeout(WAIT, messages.next())
        .await
        .expect("timed out waiting for the next item")
        .expect("the stream ended")
}

/// Restarts `server` (same port and store) and waits until `client` is reconnected.
async fn restart_and_reconnect(server: &mut NatsServer, client: &rnats_core::Client) {
    let mut events = client.events();
    server.restart().unwrap();
    reconnected(&mut events).await;
}

/// Waits (bounded by [`WAIT`]) until `events` tells of a reconnect.
async fn reconnected(events: &mut rnats_core::Events) {
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if event == rnats_core::ConnectionEvent::Reconnected {
                break;
            }
        }
    })
    .await
    .unwrap();
}

/// Publishes `count` messages, each until its stream acks it: after a restart JetStream
/// answers again only once it has recovered. Bounded by [`WAIT`].
async fn publish_until_stored(js: &Context, subject: &str, count: usize) {
    let attempts = async {
        let mut stored = 0;
        while stored < count {
            if let Ok(ack) = js.publish(subject.to_owned(), Bytes::from("after")).await
                && ack.await.is_ok()
            {
                stored += 1;
            }
        }
    };
    tokio::time::timeout(WAIT, attempts)
        .await
        .expect("the stream did not store the messages in time");
}

/// Takes the next messages of `messages` and checks they carry exactly the stream
/// sequences `expected`, in order.
async fn expect_sequences<S, E>(messages: &mut S, expected: std::ops::RangeInclusive<u64>)
where
    S: futures_util::Stream<Item = Result<rnats_jetstream::Message, E>> + Unpin,
    E: std::fmt::Debug,
{
    for sequence in expected {
        let message = next(messages).await.unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, sequence);
    }
}

/// Waits until `consumer` counts `count` messages pending. A fetch that does not wait sees
/// what the consumer has taken in by then, which on a busy server can lag the publish acks for
/// a moment.
async fn wait_for_pending(consumer: &mut PullConsumer, count: u64) {
    tokio::time::timeout(WAIT, async {
        while consumer.info().await.unwrap().num_pending < count {}
    })
    .await
    .unwrap();
}

async fn durable(stream: &stream::Stream, name: &str) -> PullConsumer {
    stream
        .create_consumer(pull::Config {
            durable_name: Some(name.to_owned()),
            ..Default::default()
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn consumers_are_created_found_listed_paused_and_deleted() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "MGMT", &["mgmt.>"], StorageType::Memory).await;

    let created = stream
        .create_consumer(pull::Config {
            durable_name: Some("worker".into()),
            description: Some("the worker".into()),
            filter_subject: "mgmt.a".into(),
            ack_wait: Duration::from_secs(7),
            max_ack_pending: 100,
            metadata: [("team".to_string(), "core".to_string())].into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let info = created.cached_info();
    assert_eq!(
        (info.stream_name.as_str(), info.name.as_str()),
        ("MGMT", "worker")
    );
    assert_eq!(info.config.ack_wait, Duration::from_secs(7));
    assert_eq!(info.config.filter_subject, "mgmt.a");
    assert_eq!(
        info.config.metadata.get("team").map(String::as_str),
        Some("core")
    );

    let mut found: PullConsumer = stream.get_consumer("worker").await.unwrap();
    assert_eq!(found.info().await.unwrap().config.max_ack_pending, 100);
    let from_context: PullConsumer = js.get_consumer_from_stream("worker", "MGMT").await.unwrap();
    assert_eq!(from_context.cached_info().name, "worker");
    // A pull consumer is not a push one.
    assert!(stream.get_consumer::<push::Config>("worker").await.is_err());

    // Strict create with another configuration, update of a missing consumer.
    let strict = stream
        .create_consumer_strict(pull::Config {
            durable_name: Some("worker".into()),
            description: Some("changed".into()),
            filter_subject: "mgmt.a".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(strict.kind(), ConsumerCreateStrictErrorKind::AlreadyExists);
    let update = stream
        .update_consumer(pull::Config {
            durable_name: Some("nobody".into()),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(update.kind(), ConsumerUpdateErrorKind::DoesNotExist);
    let updated = stream
        .update_consumer(pull::Config {
            durable_name: Some("worker".into()),
            description: Some("updated".into()),
            filter_subject: "mgmt.a".into(),
            ack_wait: Duration::from_secs(7),
            max_ack_pending: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        updated.cached_info().config.description.as_deref(),
        Some("updated")
    );

    let other = stream
        .get_or_create_consumer(
            "other",
            pull::Config {
                durable_name: Some("other".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(other.cached_info().name, "other");

    let mut names: Vec<String> = stream.consumer_names().try_collect().await.unwrap();
    names.sort();
    assert_eq!(names, ["other", "worker"]);
    let infos: Vec<consumer::Info> = stream.consumers().try_collect().await.unwrap();
    assert_eq!(infos.len(), 2);

    let until = datetime::add_std_duration(datetime::now(), Duration::from_secs(3600)).unwrap();
    let paused = stream.pause_consumer("worker", until).await.unwrap();
    assert!(paused.paused);
    assert!(stream.consumer_info("worker").await.unwrap().paused);
    let resumed = stream.resume_consumer("worker").await.unwrap();
    assert!(!resumed.paused);

    assert!(stream.delete_consumer("worker").await.unwrap().success);
    let gone = stream.consumer_info("worker").await.unwrap_err();
    assert_eq!(gone.kind(), ConsumerInfoErrorKind::NotFound);
    assert!(
        js.delete_consumer_from_stream("other", "MGMT")
            .await
            .unwrap()
            .success
    );
    let invalid = stream.consumer_info("a.b").await.unwrap_err();
    assert_eq!(invalid.kind(), ConsumerInfoErrorKind::InvalidName);
}

#[tokio::test]
async fn consumer_listings_page_through_every_consumer() {
    // More than a page of infos (256 each); the names come in one page (1024).
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "MANY", &["many.>"], StorageType::Memory).await;
    let count = 300;
    futures_util::stream::iter(0..count)
        .map(|i| {
            let stream = stream.clone();
            async move {
                stream
                    .create_consumer(pull::Config {
                        durable_name: Some(format!("c{i}")),
                        ..Default::default()
                    })
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(32)
        .collect::<()>()
        .await;

    let names: HashSet<String> = stream.consumer_names().try_collect().await.unwrap();
    assert_eq!(names.len(), count);
    let infos: Vec<consumer::Info> = stream.consumers().try_collect().await.unwrap();
    assert_eq!(infos.len(), count);
    let names: HashSet<String> = infos.into_iter().map(|info| info.name).collect();
    assert_eq!(names.len(), count);
    assert!(names.contains("c0") && names.contains("c299"));
}

#[tokio::test]
async fn fetch_takes_what_is_there_and_batch_waits_until_expiry() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "FETCH", &["fetch.>"], StorageType::Memory).await;
    let mut consumer = durable(&stream, "f").await;
    publish(&js, "fetch.a", 10).await;
    wait_for_pending(&mut consumer, 10).await;

    let first: Vec<_> = consumer
        .fetch()
        .max_messages(4)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(first.len(), 4);
    for message in &first {
        message.ack().await.unwrap();
    }
    // No waiting: the 6 left, then the end (404), though 100 were asked for.
    let rest: Vec<_> = consumer
        .fetch()
        .max_messages(100)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rest.len(), 6);
    assert_eq!(rest[0].payload, "4");
    for message in &rest {
        message.double_ack().await.unwrap();
    }
    let nothing: Vec<_> = consumer
        .fetch()
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(nothing.is_empty());

    // A batch waits: it ends when full, or when its request expires on the server.
    publish(&js, "fetch.b", 3).await;
    let full: Vec<_> = consumer
        .batch()
        .max_messages(3)
        .expires(Duration::from_secs(30))
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(full.len(), 3);
    for message in &full {
        message.ack().await.unwrap();
    }
    publish(&js, "fetch.c", 2).await;
    let expired: Vec<_> = tokio::time::timeout(
        WAIT,
        consumer
            .batch()
            .max_messages(50)
            .expires(Duration::from_millis(500))
            .messages()
            .await
            .unwrap()
            .try_collect::<Vec<_>>(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(expired.len(), 2);
}

#[tokio::test]
async fn messages_delivers_a_hundred_thousand_pipelined_messages_exactly_once_with_acks() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "BULK", &["bulk.>"], StorageType::Memory).await;
    let mut consumer = durable(&stream, "bulk").await;
    const COUNT: u64 = 100_000;
    publish(&js, "bulk.x", COUNT as usize).await;

    let mut messages = consumer
        .stream()
        .max_messages_per_batch(300)
        .messages()
        .await
        .unwrap();
    let mut seen = HashSet::new();
    while (seen.len() as u64) < COUNT {
        let message = next(&mut messages).await.unwrap();
        let info = message.info().unwrap();
        assert_eq!(info.delivered, 1, "no redelivery");
        assert!(seen.insert(info.stream_sequence), "delivered twice");
        if seen.len() as u64 == COUNT {
            // Confirmed by the server: every ack before it is processed too.
            message.double_ack().await.unwrap();
        } else {
            message.ack().await.unwrap();
        }
    }
    assert_eq!(seen, (1..=COUNT).collect());
    let info = consumer.info().await.unwrap();
    assert_eq!(info.num_ack_pending, 0);
    assert_eq!(info.num_pending, 0);
    assert_eq!(info.ack_floor.stream_sequence, COUNT);
}

#[tokio::test]
async fn acks_nak_term_progress_and_message_info() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "ACKS", &["acks.>"], StorageType::Memory).await;
    // Stored before the consumer exists, and counted by it before the first pull: a consumer
    // that existed first, on a loaded machine, once delivered the first message with a
    // pending count of 0 where 2 is checked (it counts new messages as it hears of them).
    publish(&js, "acks.one", 3).await;
    let mut consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("acker".into()),
            ack_policy: AckPolicy::Explicit,
            ack_wait: Duration::from_secs(30),
            ..Default::default()
        })
        .await
        .unwrap();
    while consumer.info().await.unwrap().num_pending < 3 {}
    let mut messages = consumer.messages().await.unwrap();

    let first = next(&mut messages).await.unwrap();
    let info = first.info().unwrap();
    assert_eq!((info.stream, info.consumer), ("ACKS", "acker"));
    assert_eq!(
        (info.stream_sequence, info.consumer_sequence, info.delivered),
        (1, 1, 1)
    );
    assert_eq!(info.pending, 2);
    let age_nanos = datetime::to_nanos(&datetime::now()) - datetime::to_nanos(&info.published);
    assert!(age_nanos.abs() < 60_000_000_000, "{age_nanos} ns");
    assert_eq!(first.subject.as_str(), "acks.one");
    // A nak comes back at once, as a second delivery.
    first.double_ack_with(AckKind::Nak(None)).await.unwrap();

    let mut redelivered = None;
    let mut others = Vec::new();
    while redelivered.is_none() || others.len() < 2 {
        let message = next(&mut messages).await.unwrap();
        match message.info().unwrap().stream_sequence {
            1 => redelivered = Some(message),
            _ => others.push(message),
        }
    }
    let again = redelivered.unwrap();
    assert_eq!(again.info().unwrap().delivered, 2);
    again.ack_with(AckKind::Progress).await.unwrap();
    again.double_ack().await.unwrap();
    // Term: never again; a delayed nak: again only after its delay.
    others[0].double_ack_with(AckKind::Term).await.unwrap();
    let delayed_at = std::time::Instant::now();
    others[1]
        .double_ack_with(AckKind::Nak(Some(Duration::from_millis(300))))
        .await
        .unwrap();
    let back = next(&mut messages).await.unwrap();
    assert!(delayed_at.elapsed() >= Duration::from_millis(300));
    let info = back.info().unwrap();
    assert_eq!((info.stream_sequence, info.delivered), (3, 2));
    back.double_ack().await.unwrap();

    let (core, acker) = back.split();
    assert!(core.reply.is_none());
    // The ack subject went with the acker.
    acker.double_ack().await.unwrap();
    let not_js = rnats_jetstream::Message {
        message: core,
        context: js.clone(),
    };
    assert!(not_js.info().is_err());
    assert!(not_js.ack().await.is_err());
}

/// Work longer than the ack wait, run with progress acks, is not redelivered meanwhile; the
/// same work without them is.
#[tokio::test]
async fn work_run_with_progress_outlasts_the_ack_wait_without_a_redelivery() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "SLOW", &["slow.>"], StorageType::Memory).await;
    // Progress every tenth of the ack wait: a busy machine would have to hold the task up
    // for most of the wait (1.8 s) before one came late.
    let ack_wait = Duration::from_secs(2);
    let mut consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("renderer".into()),
            ack_policy: AckPolicy::Explicit,
            ack_wait,
            ..Default::default()
        })
        .await
        .unwrap();
    publish(&js, "slow.job", 1).await;
    wait_for_pending(&mut consumer, 1).await;
    // The stream keeps a pull open, so a lapsed ack wait redelivers at once.
    let mut messages = consumer.messages().await.unwrap();
    let long_work = || tokio::time::sleep(ack_wait * 5 / 2);

    let first = next(&mut messages).await.unwrap();
    let done = first
        .with_progress(ack_wait / 10, async {
            long_work().await;
            "rendered"
        })
        .await;
    assert_eq!(done, "rendered");
    first.double_ack().await.unwrap();
    let info = consumer.info().await.unwrap();
    assert_eq!(info.num_redelivered, 0, "{info:?}");

    publish(&js, "slow.job", 1).await;
    let second = next(&mut messages).await.unwrap();
    assert_eq!(second.info().unwrap().stream_sequence, 2);
    long_work().await;
    let again = next(&mut messages).await.unwrap();
    let again_info = again.info().unwrap();
    assert_eq!((again_info.stream_sequence, again_info.delivered), (2, 2));
    again.double_ack().await.unwrap();
}

#[tokio::test]
async fn a_term_with_reason_reaches_the_advisory_and_is_not_redelivered() {
    let server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let stream = add_stream(&js, "TERMS", &["terms.>"], StorageType::Memory).await;
    let ack_wait = Duration::from_millis(500);
    let mut consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("judge".into()),
            ack_policy: AckPolicy::Explicit,
            ack_wait,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut advisories = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.TERMS.judge")
        .await
        .unwrap();
    client.flush().await.unwrap();
    publish(&js, "terms.a", 1).await;
    wait_for_pending(&mut consumer, 1).await;

    let fetched: Vec<_> = consumer
        .fetch()
        .max_messages(1)
        .messages()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let message = &fetched[0];
    let reason = "payload failed validation: missing field `id`";
    message.term_with_reason(reason).await.unwrap();

    let advisory = tokio::time::timeout(WAIT, advisories.next())
        .await
        .expect("no termination advisory")
        .unwrap();
    let advisory: serde_json::Value = serde_json::from_slice(&advisory.payload).unwrap();
    assert_eq!(advisory["type"], "io.nats.jetstream.advisory.v1.terminated");
    assert_eq!(advisory["stream_seq"], 1);
    assert_eq!(advisory["reason"], reason);

    // Terminated, so no longer waiting for an ack; after more than an ack wait only the
    // next message comes, not the terminated one again.
    let info = consumer.info().await.unwrap();
    assert_eq!((info.num_ack_pending, info.num_redelivered), (0, 0));
    publish(&js, "terms.b", 1).await;
    let mut later = consumer
        .batch()
        .max_messages(2)
        .expires(ack_wait * 4)
        .messages()
        .await
        .unwrap();
    let mut sequences = Vec::new();
    while let Some(message) = tokio::time::timeout(WAIT, later.next()).await.unwrap() {
        let message = message.unwrap();
        sequences.push(message.info().unwrap().stream_sequence);
        message.double_ack().await.unwrap();
    }
    assert_eq!(sequences, [2]);
}

#[tokio::test]
async fn a_stalled_link_surfaces_missed_heartbeats_and_consumption_resumes() {
    let server = jetstream_server();
    let proxy = Proxy::start(&server.url()).unwrap();
    let js = rnats_jetstream::new(connect(&proxy.url()).await);
    let publisher = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "HB", &["hb.>"], StorageType::Memory).await;
    let consumer = durable(&stream, "hb").await;
    let mut messages = consumer
        .stream()
        .heartbeat(Duration::from_millis(500))
        .expires(Duration::from_secs(5))
        .messages()
        .await
        .unwrap();
    publish(&publisher, "hb.a", 1).await;
    next(&mut messages).await.unwrap().ack().await.unwrap();

    proxy.stall();
    let error = next(&mut messages).await.unwrap_err();
    assert_eq!(error.kind(), pull::MessagesErrorKind::MissingHeartbeat);
    proxy.resume();

    publish(&publisher, "hb.a", 1).await;
    loop {
        match next(&mut messages).await {
            Ok(message) => {
                assert_eq!(message.info().unwrap().stream_sequence, 2);
                break;
            }
            // More misses may be reported while the link catches up.
            Err(error) => assert_eq!(error.kind(), pull::MessagesErrorKind::MissingHeartbeat),
        }
    }
}

#[tokio::test]
async fn deleting_the_consumer_ends_its_stream_with_an_error() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "DEL", &["del.>"], StorageType::Memory).await;
    let consumer = durable(&stream, "doomed").await;
    publish(&js, "del.a", 1).await;
    let mut messages = consumer.messages().await.unwrap();
    next(&mut messages).await.unwrap().ack().await.unwrap();

    stream.delete_consumer("doomed").await.unwrap();
    let error = next(&mut messages).await.unwrap_err();
    assert_eq!(error.kind(), pull::MessagesErrorKind::ConsumerDeleted);
    let end = tokio::time::timeout(WAIT, messages.next()).await.unwrap();
    assert!(end.is_none());
}

#[tokio::test]
async fn a_pull_stream_without_a_consumer_retries_quietly_then_reports_no_responders_once() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "GONE", &["gone.>"], StorageType::Memory).await;
    let consumer = durable(&stream, "gone").await;
    stream.delete_consumer("gone").await.unwrap();
    let mut messages = consumer
        .stream()
        .heartbeat(Duration::from_secs(1))
        .expires(Duration::from_secs(2))
        .messages()
        .await
        .unwrap();

    // Nobody serves the pulls: they are retried with a backoff and counted, and only once
    // that has lasted two heartbeats (as long as a missed heartbeat takes) is it an item.
    let error = tokio::time::timeout(WAIT, messages.next()).await.unwrap();
    assert_eq!(
        error.unwrap().unwrap_err().kind(),
        pull::MessagesErrorKind::NoResponders
    );
    let recoveries = messages.recoveries();
    assert!(recoveries.no_responders >= 2, "{recoveries:?}");
    // Told once: while it lasts, the next item is the heartbeat that no pull at the server
    // sends, as async-nats reports it.
    let error = tokio::time::timeout(WAIT, messages.next()).await.unwrap();
    assert_eq!(
        error.unwrap().unwrap_err().kind(),
        pull::MessagesErrorKind::MissingHeartbeat
    );

    // With the consumer back, a retry delivers.
    durable(&stream, "gone").await;
    publish(&js, "gone.a", 1).await;
    loop {
        match tokio::time::timeout(WAIT, messages.next())
            .await
            .unwrap()
            .unwrap()
        {
            Ok(message) => break assert_eq!(message.payload, "0"),
            Err(error) => assert_eq!(
                error.kind(),
                pull::MessagesErrorKind::MissingHeartbeat,
                "{error}"
            ),
        }
    }
}

#[tokio::test]
async fn a_stream_told_to_end_if_its_consumer_is_missing_ends_after_a_reconnect_without_it() {
    let server = jetstream_server();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = connect(&proxy.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let admin = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&admin, "MISSING", &["missing.>"], StorageType::Memory).await;
    // Read through the proxied connection, managed through the direct one.
    let consumer = durable(&js.get_stream("MISSING").await.unwrap(), "missing").await;
    // The heartbeats of the default stream (15 s) are far longer than the wait below: the
    // end must come from the question, not from missed heartbeats.
    let mut messages = consumer
        .stream()
        .end_if_consumer_missing()
        .messages()
        .await
        .unwrap();
    publish(&admin, "missing.a", 1).await;
    next(&mut messages).await.unwrap().ack().await.unwrap();

    // The consumer goes while the stream's connection is down, so no request waits at the
    // server to be told of it.
    let mut events = client.events();
    proxy.refuse(true);
    proxy.cut();
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if matches!(event, rnats_core::ConnectionEvent::Disconnected { .. }) {
                break;
            }
        }
    })
    .await
    .unwrap();
    stream.delete_consumer("missing").await.unwrap();
    proxy.refuse(false);
    reconnected(&mut events).await;

    // Told at the second unserved pull, not after two missed heartbeats (30 s, past `WAIT`).
    let error = next(&mut messages).await.unwrap_err();
    assert_eq!(error.kind(), pull::MessagesErrorKind::ConsumerDeleted);
    let unserved = messages.recoveries().no_responders;
    assert!((2..=3).contains(&unserved), "{unserved}");
    let end = tokio::time::timeout(WAIT, messages.next()).await.unwrap();
    assert!(end.is_none());
}

#[tokio::test]
async fn a_stream_told_to_end_if_its_stream_is_missing_ends_without_waiting_for_heartbeats() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "MISSING2", &["missing2.>"], StorageType::Memory).await;
    let consumer = durable(&stream, "gone").await;
    js.delete_stream("MISSING2").await.unwrap();
    let mut messages = consumer
        .stream()
        .heartbeat(Duration::from_secs(10))
        .expires(Duration::from_secs(30))
        .end_if_consumer_missing()
        .messages()
        .await
        .unwrap();
    let error = next(&mut messages).await.unwrap_err();
    assert_eq!(error.kind(), pull::MessagesErrorKind::ConsumerDeleted);
    // Asked after the second unserved request (250 ms on), not after two missed heartbeats
    // (20 s): a waiting stream would have sent a dozen by then.
    let unserved = messages.recoveries().no_responders;
    assert!((2..=3).contains(&unserved), "{unserved}");
    assert!(
        tokio::time::timeout(WAIT, messages.next())
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn no_responders_after_a_probe_starts_is_still_told_after_two_heartbeats() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "GONE3", &["gone3.>"], StorageType::Memory).await;
    let consumer = durable(&stream, "gone").await;
    stream.delete_consumer("gone").await.unwrap();
    // A heartbeat long enough that the requests after a fault probe (see `pull::Recoveries`'
    // `lost_pulls`), whose 4 s of silence must not shorten the two heartbeats (6 s) that
    // no responders waits out before it is an item.
    let heartbeat = Duration::from_secs(3);
    let mut messages = consumer
        .stream()
        .heartbeat(heartbeat)
        .expires(Duration::from_secs(30))
        .messages()
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let error = tokio::time::timeout(WAIT, messages.next()).await.unwrap();
    let waited = started.elapsed();
    assert_eq!(
        error.unwrap().unwrap_err().kind(),
        pull::MessagesErrorKind::NoResponders
    );
    assert!(waited >= heartbeat * 2, "told after {waited:?}");
    assert_eq!(messages.recoveries().missed_heartbeats, 0);
}

#[tokio::test]
async fn messages_continue_after_a_server_restart() {
    let mut server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let stream = add_stream(&js, "DURABLE", &["durable.>"], StorageType::File).await;
    let consumer = durable(&stream, "survivor").await;
    let mut messages = consumer.messages().await.unwrap();
    publish(&js, "durable.a", 3).await;
    for _ in 0..3 {
        next(&mut messages)
            .await
            .unwrap()
            .double_ack()
            .await
            .unwrap();
    }

    restart_and_reconnect(&mut server, &client).await;
    publish_until_stored(&js, "durable.b", 3).await;
    let mut after = HashSet::new();
    while after.len() < 3 {
        match next(&mut messages).await {
            Ok(message) => {
                let info = message.info().unwrap();
                let sequence = info.stream_sequence;
                // The server syncs consumer state to disk on its own schedule, so an ack made
                // just before the restart may be lost and its message delivered again
                // (at-least-once); what counts is that every new message comes.
                if sequence > 3 {
                    after.insert(sequence);
                }
                message.ack().await.unwrap();
            }
            Err(error) => assert!(
                matches!(
                    error.kind(),
                    pull::MessagesErrorKind::MissingHeartbeat
                        | pull::MessagesErrorKind::NoResponders
                ),
                "{error}"
            ),
        }
    }
    assert_eq!(after, HashSet::from([4, 5, 6]));
}

#[tokio::test]
async fn push_consumers_answer_flow_control_and_see_heartbeats() {
    let server = jetstream_server();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = connect(&proxy.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let publisher = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "PUSH", &["push.>"], StorageType::Memory).await;
    let consumer: consumer::PushConsumer = stream
        .create_consumer(push::Config {
            deliver_subject: client.new_inbox(),
            durable_name: Some("pusher".into()),
            ack_policy: AckPolicy::None,
            flow_control: true,
            idle_heartbeat: Duration::from_millis(500),
            ..Default::default()
        })
        .await
        .unwrap();
    // Well past the server's flow control window: delivery stalls unless it is answered.
    const COUNT: usize = 3000;
    let payload = Bytes::from(vec![b'x'; 8 * 1024]);
    for _ in 0..COUNT / 500 {
        let mut acks = Vec::new();
        for _ in 0..500 {
            acks.push(
                publisher
                    .publish("push.big", payload.clone())
                    .await
                    .unwrap(),
            );
        }
        for ack in acks {
            ack.await.unwrap();
        }
    }
    let mut messages = consumer.messages().await.unwrap();
    for expected in 1..=COUNT as u64 {
        let message = next(&mut messages).await.unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, expected);
    }
    // Idle now: heartbeats keep it quiet; a stalled link is a missed heartbeat.
    proxy.stall();
    let error = next(&mut messages).await.unwrap_err();
    assert_eq!(error.kind(), push::MessagesErrorKind::MissingHeartbeat);
    proxy.resume();
}

#[tokio::test]
async fn ordered_pull_consumer_survives_its_deletion_without_gaps() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "ORDER", &["order.>"], StorageType::Memory).await;
    publish(&js, "order.a", 100).await;
    let consumer = stream
        .create_consumer(pull::OrderedConfig {
            filter_subject: "order.>".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let name = consumer.cached_info().name.clone();
    assert_eq!(consumer.cached_info().config.ack_policy, AckPolicy::None);
    let mut messages = consumer.messages().await.unwrap();
    expect_sequences(&mut messages, 1..=50).await;
    stream.delete_consumer(&name).await.unwrap();
    publish(&js, "order.b", 50).await;
    expect_sequences(&mut messages, 51..=150).await;
}

/// An ordered stream dropped by its owner deletes its consumer then, rather than leaving it
/// to deliver heartbeats to nobody until its 30 s inactive threshold: pull and push alike.
#[tokio::test]
async fn dropped_ordered_streams_delete_their_consumers() {
    let server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let stream = add_stream(&js, "GONE", &["gone.>"], StorageType::Memory).await;
    publish(&js, "gone.a", 3).await;
    let mut deleted = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.DELETED.GONE.*")
        .await
        .unwrap();
    client.flush().await.unwrap();
    let deleted_name = async |deleted: &mut rnats_core::Subscriber| {
        let advisory = tokio::time::timeout(Duration::from_secs(10), deleted.next())
            .await
            .expect("no deletion within 10 s (the inactive threshold is 30 s)")
            .unwrap();
        let advisory: serde_json::Value = serde_json::from_slice(&advisory.payload).unwrap();
        advisory["consumer"].as_str().unwrap().to_owned()
    };

    let pull = stream
        .create_consumer(pull::OrderedConfig::default())
        .await
        .unwrap();
    let name = pull.cached_info().name.clone();
    let mut messages = pull.messages().await.unwrap();
    expect_sequences(&mut messages, 1..=1).await;
    drop(messages);
    assert_eq!(deleted_name(&mut deleted).await, name);

    let push = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            ..Default::default()
        })
        .await
        .unwrap();
    let name = push.cached_info().name.clone();
    let mut messages = push.messages().await.unwrap();
    expect_sequences(&mut messages, 1..=3).await;
    drop(messages);
    assert_eq!(deleted_name(&mut deleted).await, name);
    assert_eq!(stream.clone().info().await.unwrap().state.consumer_count, 0);

    // A durable read as an ordered consumer is not the stream's to delete: dropped first,
    // it is still there once an ephemeral one dropped after it is gone.
    stream
        .create_consumer(consumer::Config {
            durable_name: Some("keeper".into()),
            ack_policy: AckPolicy::None,
            ..Default::default()
        })
        .await
        .unwrap();
    let durable = stream
        .get_consumer::<pull::OrderedConfig>("keeper")
        .await
        .unwrap();
    let mut messages = durable.messages().await.unwrap();
    expect_sequences(&mut messages, 1..=1).await;
    drop(messages);
    let ephemeral = stream
        .create_consumer(pull::OrderedConfig::default())
        .await
        .unwrap();
    let name = ephemeral.cached_info().name.clone();
    drop(ephemeral.messages().await.unwrap());
    assert_eq!(deleted_name(&mut deleted).await, name);
    let names: Vec<String> = stream.consumer_names().try_collect().await.unwrap();
    assert_eq!(names, ["keeper"]);
}

/// A stream `name` with three messages on `<name>.old` and none on `<name>.new`.
async fn stream_with_old_messages(js: &Context, name: &str) -> stream::Stream {
    let subjects = format!("{name}.>");
    let stream = add_stream(js, name, &[subjects.as_str()], StorageType::Memory).await;
    publish(js, &format!("{name}.old"), 3).await;
    stream
}

#[tokio::test]
async fn an_ordered_pull_consumer_recreated_before_its_first_message_starts_where_it_was_made() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    // The last of each subject of `.new` (none: nothing pending), and the last of the
    // stream (the third `.old`); each then gets three `.new` messages.
    let cases = [
        (
            "PERSUBJECT",
            "PERSUBJECT.new",
            DeliverPolicy::LastPerSubject,
            4..=6,
        ),
        ("LAST", "LAST.>", DeliverPolicy::Last, 3..=6),
    ];
    for (name, filter, deliver_policy, expected) in cases {
        let stream = stream_with_old_messages(&js, name).await;
        let consumer = stream
            .create_consumer(pull::OrderedConfig {
                filter_subject: filter.into(),
                deliver_policy,
                ..Default::default()
            })
            .await
            .unwrap();
        let consumer_name = consumer.cached_info().name.clone();
        let mut messages = consumer.messages().await.unwrap();
        // Deleted and three messages stored before the stream is first polled, so the
        // recreation comes after them: made again with its own policy, it would deliver only
        // the last of them.
        stream.delete_consumer(&consumer_name).await.unwrap();
        publish(&js, &format!("{name}.new"), 3).await;
        expect_sequences(&mut messages, expected).await;
        assert_eq!(messages.recoveries().recreations, 1, "{name}");
    }
}

#[tokio::test]
async fn an_ordered_push_consumer_recreated_before_its_first_message_starts_where_it_was_made() {
    let server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let stream = stream_with_old_messages(&js, "FRESH").await;
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            filter_subject: "FRESH.new".into(),
            deliver_policy: DeliverPolicy::LastPerSubject,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(consumer.cached_info().num_pending, 0);
    let mut messages = consumer.messages().await.unwrap();
    // Three messages stored, then a reconnect, before the stream is first polled: it
    // recreates the consumer first (what the old one delivered is dropped with its inbox),
    // which as the last per subject would deliver only the third.
    publish(&js, "FRESH.new", 3).await;
    let mut events = client.events();
    client.force_reconnect().await.unwrap();
    reconnected(&mut events).await;
    expect_sequences(&mut messages, 4..=6).await;
}

/// An ordered consumer whose server sends nothing though its heartbeats say it is in step
/// (as on a replica left behind by a partition; here a paused consumer gives the same signs)
/// asks the stream leader once it has been idle for 10 s (8-12 s), asks again a second later,
/// and is recreated after its last message: the pull one with several filters, the push one
/// with none.
#[tokio::test]
async fn ordered_consumers_in_step_but_behind_their_stream_are_recreated() {
    let server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let stream = add_stream(&js, "STUCK", &["stuck.>"], StorageType::Memory).await;
    publish(&js, "stuck.a", 3).await;
    let pull = stream
        .create_consumer(pull::OrderedConfig {
            filter_subjects: vec!["stuck.a".into(), "stuck.b".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    let push = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            ..Default::default()
        })
        .await
        .unwrap();
    let names = [
        pull.cached_info().name.clone(),
        push.cached_info().name.clone(),
    ];
    let mut pulled = pull.messages().await.unwrap();
    let mut pushed = push.messages().await.unwrap();
    expect_sequences(&mut pulled, 1..=3).await;
    expect_sequences(&mut pushed, 1..=3).await;
    let paused_until =
        datetime::add_std_duration(datetime::now(), Duration::from_secs(3600)).unwrap();
    for name in &names {
        let paused = stream.pause_consumer(name, paused_until).await.unwrap();
        assert!(paused.paused, "{name}");
    }
    // The paused consumers keep heartbeating in step and send nothing; once idle long
    // enough, both ask, are recreated, and deliver the message, and the next.
    publish(&js, "stuck.b", 1).await;
    tokio::join!(
        expect_sequences(&mut pulled, 4..=4),
        expect_sequences(&mut pushed, 4..=4)
    );
    publish(&js, "stuck.a", 1).await;
    tokio::join!(
        expect_sequences(&mut pulled, 5..=5),
        expect_sequences(&mut pushed, 5..=5)
    );
    assert_eq!(pulled.recoveries().recreations, 1);
    // The question, not a missed heartbeat, made the pull consumer again.
    assert_eq!(pulled.recoveries().missed_heartbeats, 0);
    let consumers: Vec<String> = stream.consumer_names().try_collect().await.unwrap();
    for name in &names {
        assert!(!consumers.contains(name), "{name} was not replaced");
    }
}

/// A user who may not send `STREAM.MSG.GET` hears so once, from the idle ordered consumer's
/// first question, and the consumer goes on delivering (it stops asking; see
/// `consumer/stale.rs`).
#[tokio::test]
async fn an_ordered_consumer_not_allowed_to_ask_is_refused_once_and_keeps_delivering() {
    let server = NatsServer::builder()
        .jetstream(true)
        .append_config(
            r#"accounts: { APP: { jetstream: enabled, users: [{ user: watcher, password: w,
                permissions: { publish: { allow: ">", deny: "$JS.API.STREAM.MSG.GET.>" } } }] } }"#,
        )
        .spawn()
        .unwrap();
    let client = ConnectOptions::new()
        .user_and_password("watcher".into(), "w".into())
        .connect(server.url())
        .await
        .unwrap();
    let js = rnats_jetstream::new(client.clone());
    let stream = add_stream(&js, "DENY", &["deny.>"], StorageType::Memory).await;
    publish(&js, "deny.a", 1).await;
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    expect_sequences(&mut messages, 1..=1).await;
    // The question comes once the consumer has been idle for 8-12 s; its refusal is the
    // server's word on the connection. The stream is polled meanwhile, as a reader would.
    let mut events = client.events();
    let mut refused = async || {
        while let Some(event) = events.next().await {
            if let rnats_core::ConnectionEvent::ServerError(error) = event {
                return error.to_string();
            }
        }
        panic!("the events ended");
    };
    let mut idle = async || {
        let item = messages.next().await;
        panic!("an item while idle: {item:?}");
    };
    let error = tokio::select! {
        error = tokio::time::timeout(WAIT, refused()) => error.expect("no question was refused"),
        () = idle() => unreachable!(),
    };
    assert!(error.contains("STREAM.MSG.GET.DENY"), "{error}");
    // Refused, it asks no more: treated as unanswered, the next question would come 1.6-2.4 s
    // later and be refused at once, so 8 s without a second refusal tells the two apart.
    let again = tokio::select! {
        again = tokio::time::timeout(Duration::from_secs(8), refused()) => again,
        () = idle() => unreachable!(),
    };
    assert!(again.is_err(), "asked again after a refusal: {again:?}");
    publish(&js, "deny.b", 1).await;
    expect_sequences(&mut messages, 2..=2).await;
}

#[tokio::test]
async fn ordered_push_consumer_delivers_in_order_from_a_start_sequence() {
    let server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let stream = add_stream(&js, "OPUSH", &["opush.>"], StorageType::Memory).await;
    publish(&js, "opush.a", 20).await;
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: client.new_inbox(),
            deliver_policy: DeliverPolicy::ByStartSequence { start_sequence: 5 },
            ..Default::default()
        })
        .await
        .unwrap();
    let name = consumer.cached_info().name.clone();
    let mut messages = consumer.messages().await.unwrap();
    expect_sequences(&mut messages, 5..=12).await;
    stream.delete_consumer(&name).await.unwrap();
    // What was delivered before the deletion comes first; the rest needs a new consumer.
    publish(&js, "opush.b", 10).await;
    expect_sequences(&mut messages, 13..=30).await;
}

#[tokio::test]
async fn reset_moves_a_consumer_back_so_it_redelivers() {
    let server = jetstream_server();
    let js = rnats_jetstream::new(connect(&server.url()).await);
    let stream = add_stream(&js, "RESET", &["reset.>"], StorageType::Memory).await;
    let mut consumer = durable(&stream, "again").await;
    publish(&js, "reset.x", 5).await;
    wait_for_pending(&mut consumer, 5).await;
    let mut batch = consumer.fetch().max_messages(5).messages().await.unwrap();
    let mut last = None;
    while let Some(message) = batch.next().await {
        let message = message.unwrap();
        last = Some(message.info().unwrap().stream_sequence);
        message.double_ack().await.unwrap();
    }
    assert_eq!(last, Some(5));

    let reset = consumer.reset(Some(3)).await.unwrap();
    assert_eq!(reset.info.name, "again");
    let mut batch = consumer.fetch().max_messages(1).messages().await.unwrap();
    let again = next(&mut batch).await.unwrap();
    assert_eq!(
        again.info().unwrap().stream_sequence,
        3,
        "redelivered from the reset point"
    );
    // The stream-level form answers for the same consumer.
    let reset = stream.reset_consumer("again", None).await.unwrap();
    assert_eq!(reset.info.stream_name, "RESET");
}

#[tokio::test]
async fn ordered_pull_consumer_keeps_order_across_a_server_restart() {
    let mut server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    let stream = add_stream(&js, "ORDERED", &["ordered.>"], StorageType::File).await;
    publish(&js, "ordered.a", 20).await;
    let consumer = stream
        .create_consumer(pull::OrderedConfig {
            filter_subject: "ordered.>".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    let mut last = 0;
    while last < 10 {
        let message = next(&mut messages).await.unwrap();
        let sequence = message.info().unwrap().stream_sequence;
        assert_eq!(sequence, last + 1, "in order, no gaps, no repeats");
        last = sequence;
    }

    restart_and_reconnect(&mut server, &client).await;
    publish_until_stored(&js, "ordered.b", 10).await;
    // The rest of the stream, in order, each once; recreation errors may come in between.
    while last < 30 {
        match next(&mut messages).await {
            Ok(message) => {
                let sequence = message.info().unwrap().stream_sequence;
                assert_eq!(sequence, last + 1, "in order, no gaps, no repeats");
                last = sequence;
            }
            Err(error) => println!("while recovering: {error}"),
        }
    }
}

#[tokio::test]
async fn a_flow_control_ack_policy_consumer_is_acked_by_its_flow_control_answers() {
    let server = jetstream_server();
    let client = connect(&server.url()).await;
    let js = rnats_jetstream::new(client.clone());
    // A work queue drops what is acked: the stream empties only if the answers ack.
    let stream = js
        .create_stream(stream::Config {
            name: "FCACK".into(),
            subjects: vec!["fc.>".into()],
            storage: StorageType::Memory,
            retention: stream::RetentionPolicy::WorkQueue,
            ..Default::default()
        })
        .await
        .unwrap();
    // ADR-60: a pull consumer cannot have the policy.
    let error = stream
        .create_consumer(pull::Config {
            durable_name: Some("puller".into()),
            ack_policy: AckPolicy::FlowControl,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), stream::ConsumerErrorKind::JetStream(e)
            if e.error_code() == rnats_jetstream::ErrorCode::CONSUMER_ACK_FC_REQUIRES_PUSH),
        "{error:?}"
    );
    // The server fills in flow control and the one-second heartbeat the policy needs.
    let consumer: consumer::PushConsumer = stream
        .create_consumer(push::Config {
            deliver_subject: client.new_inbox(),
            durable_name: Some("fc".into()),
            ack_policy: AckPolicy::FlowControl,
            max_ack_pending: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let config = &consumer.cached_info().config;
    assert_eq!(config.ack_policy, AckPolicy::FlowControl);
    assert!(config.flow_control);
    assert_eq!(config.idle_heartbeat, Duration::from_secs(1));

    // Past max_ack_pending: delivery goes on only because the answers ack. The client's
    // answers go to `$JS.FC.<stream>.<consumer>.*` (with ADR-53's `js_ack_fc_v2`:
    // `$JS.FC.<domain>.<account hash>.<stream>.<consumer>.*`), where this test reads them too.
    let answers_subject = if server_has_v2_acks() {
        "$JS.FC.*.*.FCACK.fc.>"
    } else {
        "$JS.FC.FCACK.fc.>"
    };
    let mut answers = client.subscribe(answers_subject).await.unwrap();
    client.flush().await.unwrap();
    const COUNT: u64 = 250;
    publish(&js, "fc.work", COUNT as usize).await;
    let mut messages = consumer.messages().await.unwrap();
    for expected in 1..=COUNT {
        let message = next(&mut messages).await.unwrap();
        assert_eq!(message.info().unwrap().stream_sequence, expected);
    }
    // The tail is acked by the flow control the idle heartbeat brings: keep the stream
    // polled (answering) until an answer names the last message.
    let drain = tokio::spawn(async move { while messages.next().await.is_some() {} });
    let mut floors = Vec::new();
    loop {
        let answer = tokio::time::timeout(WAIT, answers.next())
            .await
            .unwrap()
            .unwrap();
        let header = |name| {
            let headers = answer.headers.as_ref().unwrap();
            headers
                .get_last(name)
                .unwrap()
                .as_str()
                .parse::<u64>()
                .unwrap()
        };
        let (stream_seq, delivered) = (header("Nats-Last-Stream"), header("Nats-Last-Consumer"));
        assert_eq!(stream_seq, delivered, "one delivery per message here");
        floors.push(stream_seq);
        if stream_seq == COUNT {
            break;
        }
    }
    assert!(floors.windows(2).all(|w| w[0] <= w[1]), "{floors:?}");
    assert!(
        floors.len() >= 2,
        "max_ack_pending made the server ask mid-way: {floors:?}"
    );
    // Sent after that answer on the same connection, the info request sees it applied.
    let info = consumer.get_info().await.unwrap();
    assert_eq!(info.ack_floor.stream_sequence, COUNT);
    assert_eq!(info.num_ack_pending, 0);
    let state = js
        .get_stream("FCACK")
        .await
        .unwrap()
        .cached_info()
        .state
        .clone();
    assert_eq!(state.messages, 0, "the work queue dropped what was acked");
    drain.abort();
}
