//! Blocking JetStream (`rnats_jetstream::blocking`) against a real nats-server, with no async
//! runtime: publish with acks and expectations, stream management and message reads, pull
//! consumers (fetch, continuous messages, the server's status messages) and acks.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use rnats_core::HeaderMap;
use rnats_jetstream::ErrorCode;
use rnats_jetstream::blocking::{self, Context, PullConsumer, Stream};
use rnats_jetstream::consumer::pull::{self, BatchConfig, MessagesErrorKind};
use rnats_jetstream::consumer::{AckPolicy, push};
use rnats_jetstream::context::{CreateStreamErrorKind, GetStreamErrorKind, PublishErrorKind};
use rnats_jetstream::publish::PublishMessage;
use rnats_jetstream::stream::{self, DirectGetErrorKind, PurgeRequest, RawMessageErrorKind};
use rnats_test_server::NatsServer;

/// How long any single wait in these tests may take before the test fails.
const WAIT: Duration = Duration::from_secs(10);

fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::with_jetstream();
    let client = rnats_core::blocking::connect(server.url()).unwrap();
    let mut context = blocking::new(client);
    context.set_timeout(WAIT);
    (server, context)
}

/// The stream `name` on `name.>`, with direct gets allowed.
fn stream(js: &Context, name: &str) -> Stream {
    js.create_stream(stream::Config {
        name: name.to_owned(),
        subjects: vec![format!("{name}.>")],
        allow_direct: true,
        ..Default::default()
    })
    .unwrap()
}

fn durable(stream: &Stream, name: &str) -> PullConsumer {
    stream
        .create_consumer(pull::Config {
            durable_name: Some(name.to_owned()),
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        })
        .unwrap()
}

#[test]
fn publish_then_fetch_gives_those_messages_in_order() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "ORDERS");
    for (i, payload) in ["one", "two", "three"].into_iter().enumerate() {
        let ack = js.publish("ORDERS.new", payload.into()).unwrap();
        assert_eq!(ack.stream, "ORDERS");
        assert_eq!(ack.sequence, i as u64 + 1);
        assert!(!ack.duplicate);
    }
    let consumer = durable(&stream, "worker");
    let mut seen = Vec::new();
    for message in consumer.fetch(3, WAIT).unwrap() {
        let message = message.unwrap();
        let info = message.info().unwrap();
        assert_eq!((info.stream, info.consumer), ("ORDERS", "worker"));
        seen.push((info.stream_sequence, message.payload.clone()));
        message.ack().unwrap();
    }
    let want: Vec<(u64, Bytes)> = vec![(1, "one".into()), (2, "two".into()), (3, "three".into())];
    assert_eq!(seen, want);
}

/// Readers slower than the silences their consumers judge: each waits seconds (as long as
/// it must outlast), so they run side by side and cost the suite one wait, not four.
#[test]
fn slow_readers_get_what_came_while_they_were_away() {
    let readers: [fn(); 4] = [
        a_batch_read_past_its_request_end_hands_out_what_came,
        a_slow_caller_after_a_fault_is_not_taken_for_silence,
        an_ordered_consumer_read_slowly_is_not_made_again,
        a_push_consumer_read_slowly_misses_no_heartbeat,
    ];
    std::thread::scope(|scope| {
        for reader in readers {
            scope.spawn(reader);
        }
    });
}

/// A caller that reads a fetched batch slowly, past the request's end: the messages that
/// came are all still handed out before the batch ends.
fn a_batch_read_past_its_request_end_hands_out_what_came() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "LATE");
    for i in 0..3 {
        js.publish("LATE.a", format!("{i}").into()).unwrap();
    }
    let consumer = durable(&stream, "late");
    // Asks for more than there is, for 1 s: the request ends 1 s (plus the client's 5 s
    // slack for a lost end) from now, the three messages already here.
    let mut batch = consumer.fetch(10, Duration::from_secs(1)).unwrap();
    let first = batch.next().unwrap().unwrap();
    assert_eq!(first.payload, "0");
    std::thread::sleep(Duration::from_secs(7));
    let rest: Vec<Bytes> = batch.map(|m| m.unwrap().payload.clone()).collect();
    assert_eq!(rest, [Bytes::from("1"), Bytes::from("2")]);
}

#[test]
fn an_expired_fetch_ends_without_a_message() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "EVENTS");
    js.publish("EVENTS.a", "only".into()).unwrap();
    let consumer = durable(&stream, "reader");
    // Asks for more than there is: the server ends the request with a 408 at its expiry.
    let items: Vec<_> = consumer
        .fetch(10, Duration::from_millis(300))
        .unwrap()
        .collect();
    assert_eq!(items.len(), 1, "only the stored message: {items:?}");
    assert_eq!(items[0].as_ref().unwrap().payload, "only");
}

#[test]
fn a_no_wait_fetch_of_nothing_ends_on_the_404() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "EMPTY");
    let consumer = durable(&stream, "reader");
    let mut batch = consumer.fetch_no_wait(5).unwrap();
    assert!(batch.next().is_none());
    // The fetch with a message first ends the same way, after it.
    js.publish("EMPTY.x", "x".into()).unwrap();
    let items: Vec<_> = consumer.fetch_no_wait(5).unwrap().collect();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].as_ref().unwrap().payload, "x");
}

#[test]
fn a_repeated_message_id_is_reported_duplicate() {
    let (_server, js) = jetstream();
    let _stream = stream(&js, "DEDUP");
    let publish = || {
        js.send_publish(
            "DEDUP.a",
            PublishMessage::build()
                .payload("once".into())
                .message_id("id-1"),
        )
        .unwrap()
    };
    let first = publish();
    let second = publish();
    assert!(!first.duplicate);
    assert!(second.duplicate);
    assert_eq!(second.sequence, first.sequence);
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Msg-Id", "id-1");
    let third = js
        .publish_with_headers("DEDUP.a", headers, "again".into())
        .unwrap();
    assert!(third.duplicate);
}

#[test]
fn a_stale_expected_sequence_is_refused() {
    let (_server, js) = jetstream();
    let _stream = stream(&js, "SEQ");
    let first = js.publish("SEQ.a", "1".into()).unwrap();
    let second = js
        .send_publish(
            "SEQ.a",
            PublishMessage::build()
                .payload("2".into())
                .expected_last_sequence(first.sequence),
        )
        .unwrap();
    let stale = js
        .send_publish(
            "SEQ.a",
            PublishMessage::build()
                .payload("3".into())
                .expected_last_subject_sequence(first.sequence),
        )
        .unwrap_err();
    assert_eq!(stale.kind(), PublishErrorKind::WrongLastSequence);
    assert_eq!(second.sequence, 2);
}

#[test]
fn a_publish_no_stream_stores_fails_as_stream_not_found() {
    let (_server, js) = jetstream();
    let error = js.publish("nowhere", "lost".into()).unwrap_err();
    assert_eq!(error.kind(), PublishErrorKind::StreamNotFound);
}

#[test]
fn streams_are_created_read_updated_and_deleted() {
    let (_server, js) = jetstream();
    let mut stream = stream(&js, "MANAGED");
    assert_eq!(stream.cached_info().config.name, "MANAGED");
    // Another config for the same name: the existing stream, unchanged.
    let existing = js
        .get_or_create_stream(stream::Config {
            name: "MANAGED".to_owned(),
            subjects: vec!["other.>".to_owned()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(existing.cached_info().config.subjects, ["MANAGED.>"]);
    // The same name with a different config through create is refused.
    let refused = js
        .create_stream(stream::Config {
            name: "MANAGED".to_owned(),
            subjects: vec!["other.>".to_owned()],
            ..Default::default()
        })
        .unwrap_err();
    assert!(matches!(
        refused.kind(),
        CreateStreamErrorKind::JetStream(e) if e.error_code() == ErrorCode::STREAM_NAME_EXIST
    ));

    let mut config = stream.cached_info().config.clone();
    config.max_messages = 100;
    let info = js.update_stream(&config).unwrap();
    assert_eq!(info.config.max_messages, 100);

    js.publish("MANAGED.a", "a".into()).unwrap();
    js.publish("MANAGED.b", "b".into()).unwrap();
    assert_eq!(stream.info().unwrap().state.messages, 2);
    assert_eq!(
        js.get_stream("MANAGED")
            .unwrap()
            .cached_info()
            .state
            .messages,
        2
    );

    let status = js.delete_stream("MANAGED").unwrap();
    assert!(status.success);
    let missing = js.get_stream("MANAGED").unwrap_err();
    assert!(matches!(
        missing.kind(),
        GetStreamErrorKind::JetStream(e) if e.error_code() == ErrorCode::STREAM_NOT_FOUND
    ));
    let missing = js.update_stream(&config).unwrap_err();
    assert_eq!(missing.kind(), CreateStreamErrorKind::NotFound);
}

#[test]
fn messages_are_read_deleted_and_purged() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "STORE");
    let mut headers = HeaderMap::new();
    headers.insert("X-Kind", "first");
    js.publish_with_headers("STORE.a", headers, "a1".into())
        .unwrap();
    js.publish("STORE.b", "b1".into()).unwrap();
    js.publish("STORE.a", "a2".into()).unwrap();

    let raw = stream.get_raw_message(1).unwrap();
    assert_eq!((raw.sequence, raw.payload.clone()), (1, "a1".into()));
    assert_eq!(raw.headers.get("X-Kind").unwrap().as_str(), "first");
    let direct = stream.direct_get(2).unwrap();
    assert_eq!(
        (direct.subject.as_str(), direct.payload.clone()),
        ("STORE.b", "b1".into())
    );
    let last = stream.get_last_raw_message_by_subject("STORE.a").unwrap();
    assert_eq!((last.sequence, last.payload.clone()), (3, "a2".into()));
    let last = stream.direct_get_last_for_subject("STORE.a").unwrap();
    assert_eq!((last.sequence, last.payload.clone()), (3, "a2".into()));

    assert!(stream.delete_message(2).unwrap());
    let gone = stream.get_raw_message(2).unwrap_err();
    assert_eq!(gone.kind(), RawMessageErrorKind::NoMessageFound);
    let gone = stream.direct_get(2).unwrap_err();
    assert_eq!(gone.kind(), DirectGetErrorKind::NotFound);

    let purged = stream
        .purge_with(PurgeRequest {
            filter: Some("STORE.a".to_owned()),
            keep: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(purged.purged, 1);
    let purged = stream.purge().unwrap();
    assert!(purged.success);
    assert_eq!(purged.purged, 1);
    assert_eq!(stream.get_info().unwrap().state.messages, 0);
}

#[test]
fn consumers_are_created_found_and_deleted() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "CONS");
    let created = durable(&stream, "durable");
    assert_eq!(created.cached_info().name, "durable");
    let mut found: PullConsumer = stream.get_consumer("durable").unwrap();
    js.publish("CONS.a", "a".into()).unwrap();
    // The stored message reaches the consumer's count a moment after the ack: asked until
    // it does (bounded), then read both ways.
    let deadline = std::time::Instant::now() + WAIT;
    while found.info().unwrap().num_pending == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the consumer never counted it"
        );
    }
    assert_eq!(found.info().unwrap().num_pending, 1);
    assert_eq!(stream.consumer_info("durable").unwrap().num_pending, 1);
    assert!(stream.delete_consumer("durable").unwrap().success);
    assert!(stream.get_consumer::<pull::Config>("durable").is_err());
    // A push consumer is not a pull consumer.
    stream
        .create_consumer(rnats_jetstream::consumer::push::Config {
            durable_name: Some("pushed".to_owned()),
            deliver_subject: "deliver.here".to_owned(),
            ..Default::default()
        })
        .unwrap();
    assert!(stream.get_consumer::<pull::Config>("pushed").is_err());
}

#[test]
fn nak_redelivers_term_does_not_and_double_ack_waits_for_the_server() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "ACKS");
    js.publish("ACKS.a", "nak me".into()).unwrap();
    js.publish("ACKS.b", "term me".into()).unwrap();
    js.publish("ACKS.c", "ack me".into()).unwrap();
    let mut consumer = durable(&stream, "acker");

    let first: Vec<_> = consumer
        .fetch(3, WAIT)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(first.len(), 3);
    first[0].nak().unwrap();
    first[1].in_progress().unwrap();
    first[1].term().unwrap();
    first[2].double_ack().unwrap();

    // Only the nak'd one comes back, as its second delivery.
    let again: Vec<_> = consumer
        .fetch(3, Duration::from_millis(500))
        .unwrap()
        .collect();
    assert_eq!(again.len(), 1, "{again:?}");
    let again = again.into_iter().next().unwrap().unwrap();
    assert_eq!(again.payload, "nak me");
    assert_eq!(again.info().unwrap().delivered, 2);
    again.double_ack().unwrap();
    let info = consumer.info().unwrap();
    assert_eq!((info.num_ack_pending, info.num_pending), (0, 0));
}

#[test]
fn messages_pulls_again_and_skips_heartbeats() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "FLOW");
    for i in 0..5 {
        js.publish("FLOW.a", format!("{i}").into()).unwrap();
    }
    let consumer = durable(&stream, "flow");
    // Small requests with frequent heartbeats: many pulls and heartbeats in this test.
    let mut messages = consumer
        .messages_with(BatchConfig {
            batch: 2,
            expires: Some(Duration::from_millis(600)),
            idle_heartbeat: Duration::from_millis(200),
            ..Default::default()
        })
        .unwrap();
    let mut payloads = Vec::new();
    for _ in 0..5 {
        let message = messages.next_timeout(WAIT).unwrap().expect("a message");
        message.ack().unwrap();
        payloads.push(message.payload.clone());
    }
    // Past an expiry and a few heartbeats with nothing to deliver: no message, no error.
    assert!(
        messages
            .next_timeout(Duration::from_millis(900))
            .unwrap()
            .is_none()
    );
    for i in 5..8 {
        js.publish("FLOW.a", format!("{i}").into()).unwrap();
    }
    for _ in 5..8 {
        let message = messages.next().unwrap().unwrap();
        message.ack().unwrap();
        payloads.push(message.payload.clone());
    }
    let want: Vec<Bytes> = (0..8).map(|i| Bytes::from(format!("{i}"))).collect();
    assert_eq!(payloads, want);
}

/// A leader elected for the consumer or its stream (announced on their advisory subjects)
/// holds none of the old leader's requests: the iteration pulls again at once, once for
/// both announcements, as after a 409 leader change, counts them, and yields no error item.
/// The announcements come from a second connection here, so that no election has to be
/// timed; a third one sees the pull requests go out.
#[test]
fn messages_pull_again_when_a_new_consumer_leader_is_announced() {
    let (server, js) = jetstream();
    let stream = stream(&js, "ELECT");
    let consumer = durable(&stream, "elect");
    let watcher = rnats_core::blocking::connect(server.url()).unwrap();
    let mut pulls = watcher
        .subscribe("$JS.API.CONSUMER.MSG.NEXT.ELECT.elect")
        .unwrap();
    watcher.flush().unwrap();
    let mut messages = consumer.messages().unwrap();
    // The first pull goes out, and nothing comes for it.
    assert!(
        messages
            .next_timeout(Duration::from_millis(200))
            .unwrap()
            .is_none()
    );
    pulls.next_timeout(WAIT).expect("the first pull");
    let announcer = rnats_core::blocking::connect(server.url()).unwrap();
    for subject in [
        "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.ELECT.elect",
        "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.ELECT",
    ] {
        announcer
            .publish(subject, Bytes::from_static(b"{}"))
            .unwrap();
    }
    announcer.flush().unwrap();
    // Both are in this client's queues once its own flush is answered.
    js.client().flush().unwrap();
    assert!(
        messages
            .next_timeout(Duration::from_millis(300))
            .unwrap()
            .is_none()
    );
    let recoveries = messages.recoveries();
    assert_eq!(recoveries.leader_changes, 2, "{recoveries:?}");
    pulls
        .next_timeout(WAIT)
        .expect("the pull after the elections");
    assert!(
        pulls.next_timeout(Duration::from_millis(200)).is_err(),
        "one pull for both announcements"
    );
    js.publish("ELECT.a", "after".into()).unwrap();
    let message = messages.next_timeout(WAIT).unwrap().expect("a message");
    assert_eq!(message.payload, "after");
}

#[test]
fn a_deleted_consumer_ends_its_messages_with_an_error() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "GONE");
    let consumer = durable(&stream, "doomed");
    let mut messages = consumer.messages().unwrap();
    // The pull request goes out with the first wait; nothing is stored yet.
    assert!(
        messages
            .next_timeout(Duration::from_millis(100))
            .unwrap()
            .is_none()
    );
    // Wait until the server holds the pull request, then delete the consumer under it.
    let mut waiting = 0;
    for _ in 0..200 {
        waiting = stream.consumer_info("doomed").unwrap().num_waiting;
        if waiting > 0 {
            break;
        }
    }
    assert_eq!(waiting, 1);
    stream.delete_consumer("doomed").unwrap();
    let error = messages.next().unwrap().unwrap_err();
    assert_eq!(error.kind(), MessagesErrorKind::ConsumerDeleted);
    assert!(messages.next().is_none());
}

/// A server to restart, and a context whose client reconnects at once (the default backs
/// off for seconds).
fn restartable() -> (NatsServer, Context) {
    let server = NatsServer::with_jetstream();
    let client = rnats_core::ConnectOptions::new()
        .reconnect_delay_callback(|_| Duration::from_millis(20))
        .connect_blocking(server.url())
        .unwrap();
    let mut js = blocking::new(client);
    js.set_timeout(WAIT);
    (server, js)
}

/// Restarts `server` (same port and store) and waits until `js`'s client is back.
fn reconnect_after_restart(server: &mut NatsServer, js: &Context) {
    let mut events = js.client().events();
    server.restart().unwrap();
    loop {
        match events.next_timeout(WAIT).unwrap() {
            Some(rnats_core::ConnectionEvent::Reconnected) => break,
            Some(_) => {}
            None => panic!("the client closed"),
        }
    }
}

#[test]
fn messages_pull_again_at_once_after_a_server_restart() {
    let (mut server, js) = restartable();
    let stream = stream(&js, "RESTART");
    let consumer = durable(&stream, "restart");
    // The default heartbeats (15 s): two of them missed would take longer than `WAIT`.
    let mut messages = consumer.messages().unwrap();
    js.publish("RESTART.a", "before".into()).unwrap();
    let message = messages.next_timeout(WAIT).unwrap().expect("a message");
    assert_eq!(message.payload, "before");
    message.ack().unwrap();

    reconnect_after_restart(&mut server, &js);
    // JetStream answers once it has recovered the stream.
    let deadline = std::time::Instant::now() + WAIT;
    while js.publish("RESTART.a", "after".into()).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "no publish was stored"
        );
    }
    // The server may not have stored the first ack before it was killed: that message
    // may come again first.
    loop {
        let message = messages
            .next_timeout(WAIT)
            .expect("no error item")
            .expect("the message after the restart");
        if message.payload == "after" {
            break;
        }
        assert_eq!(message.payload, "before");
    }
    let recoveries = messages.recoveries();
    assert!(recoveries.reconnects >= 1, "{recoveries:?}");
    assert_eq!(recoveries.missed_heartbeats, 0, "{recoveries:?}");
}

/// A caller slower than the probe's four seconds after a fault: what came meanwhile (the
/// messages, the probe's heartbeats) is read before any silence is judged, so nothing is
/// taken for a lost request and pulled again.
fn a_slow_caller_after_a_fault_is_not_taken_for_silence() {
    let (mut server, js) = restartable();
    let stream = stream(&js, "SLOW");
    let consumer = durable(&stream, "slow");
    let mut messages = consumer
        .messages_with(BatchConfig {
            batch: 10,
            expires: Some(Duration::from_secs(60)),
            idle_heartbeat: Duration::from_secs(15),
            ..Default::default()
        })
        .unwrap();
    js.publish("SLOW.a", "first".into()).unwrap();
    let first = messages.next_timeout(WAIT).unwrap().expect("a message");
    first.ack().unwrap();

    // A reconnect: the requests after it ask for a heartbeat a second for a while.
    reconnect_after_restart(&mut server, &js);
    let deadline = std::time::Instant::now() + WAIT;
    while js.publish("SLOW.a", "second".into()).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "no publish was stored"
        );
    }
    js.publish("SLOW.a", "third".into()).unwrap();
    let mut read = |what: &str| loop {
        let message = messages.next_timeout(WAIT).unwrap().expect(what);
        message.ack().unwrap();
        // "first" may come again: the server may not have stored its ack.
        if message.payload != "first" {
            return message.payload.clone();
        }
    };
    assert_eq!(read("second"), "second");
    // The caller is busy for longer than the probe's silence; the third message and the
    // probe's heartbeats wait in the subscription meanwhile.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(read("third"), "third");
    let recoveries = messages.recoveries();
    assert_eq!(recoveries.lost_pulls, 0, "{recoveries:?}");
    assert_eq!(recoveries.missed_heartbeats, 0, "{recoveries:?}");
}

#[test]
fn messages_without_a_consumer_retry_then_deliver_once_it_is_made_again() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "AGAIN");
    durable(&stream, "again");
    let consumer = stream.get_consumer::<pull::Config>("again").unwrap();
    stream.delete_consumer("again").unwrap();
    let mut messages = consumer
        .messages_with(BatchConfig {
            batch: 10,
            expires: Some(Duration::from_secs(2)),
            idle_heartbeat: Duration::from_millis(500),
            ..Default::default()
        })
        .unwrap();
    // Nobody serves the pulls: retried with a backoff, and told once it lasted two
    // heartbeats; the iteration goes on.
    let error = messages.next_timeout(WAIT).unwrap_err();
    assert_eq!(error.kind(), MessagesErrorKind::NoResponders);
    // Asked again after 250 ms, then 500 ms (the heartbeat caps the wait): a handful of
    // times in the second it takes, not once a round trip.
    let asked = messages.recoveries().no_responders;
    assert!((2..=10).contains(&asked), "{asked}");

    durable(&stream, "again");
    js.publish("AGAIN.a", "back".into()).unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    let message = loop {
        match messages.next_timeout(WAIT) {
            Ok(Some(message)) => break message,
            Ok(None) => panic!("no message within {WAIT:?}"),
            Err(error) => assert_eq!(error.kind(), MessagesErrorKind::MissingHeartbeat),
        }
        assert!(std::time::Instant::now() < deadline);
    };
    assert_eq!(message.payload, "back");
}

#[test]
fn messages_told_to_end_if_the_consumer_is_missing_end_when_it_is() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "ABSENT");
    let consumer = durable(&stream, "absent");
    stream.delete_consumer("absent").unwrap();
    let mut messages = consumer.messages().unwrap().end_if_consumer_missing();
    let error = messages.next_timeout(WAIT).unwrap_err();
    assert_eq!(error.kind(), MessagesErrorKind::ConsumerDeleted);
    // Asked after the second unserved pull (250 ms on), not after two missed heartbeats
    // (30 s, past `WAIT`).
    let unserved = messages.recoveries().no_responders;
    assert!((2..=3).contains(&unserved), "{unserved}");
    assert!(messages.next().is_none());
}

#[test]
fn a_domain_context_talks_to_that_domain() {
    let server = NatsServer::builder()
        .jetstream(true)
        .config("jetstream { domain: hub }")
        .spawn()
        .unwrap();
    let client = rnats_core::blocking::connect(server.url()).unwrap();
    let js = blocking::with_domain(client.clone(), "hub");
    assert_eq!(js.prefix(), "$JS.hub.API");
    let stream = stream(&js, "DOMAIN");
    assert_eq!(js.publish("DOMAIN.a", "a".into()).unwrap().domain, "hub");
    assert_eq!(stream.get_info().unwrap().state.messages, 1);
    let elsewhere = blocking::with_domain(client, "nowhere");
    assert!(elsewhere.get_stream("DOMAIN").is_err());
}

#[test]
fn an_ordered_consumer_delivers_the_filtered_messages_in_order() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "ORDERED");
    for i in 0..5 {
        js.publish(format!("ORDERED.{}", i % 2), format!("{i}").into())
            .unwrap();
    }
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: js.client().new_inbox(),
            filter_subject: "ORDERED.0".to_owned(),
            ..Default::default()
        })
        .unwrap();
    let mut messages = consumer.messages().unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let message = messages.next_timeout(WAIT).unwrap().expect("a message");
        seen.push((
            message.info().unwrap().stream_sequence,
            message.payload.clone(),
        ));
    }
    let want: Vec<(u64, Bytes)> = vec![(1, "0".into()), (3, "2".into()), (5, "4".into())];
    assert_eq!(seen, want);
    js.publish("ORDERED.1", "skipped".into()).unwrap();
    js.publish("ORDERED.0", "later".into()).unwrap();
    let later = messages.next().unwrap().unwrap();
    assert_eq!(
        (later.info().unwrap().stream_sequence, later.payload.clone()),
        (7, "later".into())
    );
}

/// A caller of an ordered push consumer slower than two of its heartbeats: what came
/// meanwhile is read before any silence is judged, so the consumer is not made again.
fn an_ordered_consumer_read_slowly_is_not_made_again() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "LEISURE");
    for i in 0..3 {
        js.publish("LEISURE.a", format!("{i}").into()).unwrap();
    }
    let consumer = stream
        .create_consumer(push::OrderedConfig {
            deliver_subject: js.client().new_inbox(),
            ..Default::default()
        })
        .unwrap();
    let names = || -> Vec<String> { stream.consumer_names().map(Result::unwrap).collect() };
    let mut messages = consumer.messages().unwrap();
    let first = messages.next_timeout(WAIT).unwrap().expect("a message");
    assert_eq!(first.payload, "0");
    let made = names();
    // Busy for longer than two of its heartbeats (5 s each), the other messages and the
    // heartbeats waiting meanwhile.
    std::thread::sleep(Duration::from_secs(11));
    for want in ["1", "2"] {
        let message = messages.next_timeout(WAIT).unwrap().expect("a message");
        assert_eq!(message.payload, want);
    }
    assert_eq!(names(), made, "the consumer was made again");
}

/// The stream sequences of the next `count` messages of an ordered pull consumer, letting
/// a failed recreation (the server still recovering) go by as the iterator allows.
fn ordered_sequences(messages: &mut blocking::OrderedPull, count: usize) -> Vec<u64> {
    let deadline = std::time::Instant::now() + WAIT;
    let mut sequences = Vec::new();
    while sequences.len() < count {
        assert!(std::time::Instant::now() < deadline, "only {sequences:?}");
        match messages.next_timeout(WAIT) {
            Ok(Some(message)) => sequences.push(message.info().unwrap().stream_sequence),
            Ok(None) => panic!("no message within {WAIT:?} after {sequences:?}"),
            Err(error) => assert_eq!(error.kind(), pull::OrderedErrorKind::Recreate),
        }
    }
    sequences
}

#[test]
fn an_ordered_pull_consumer_is_made_again_after_the_next_message_when_deleted() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "OPULL");
    for i in 0..10 {
        js.publish(format!("OPULL.{}", i % 2), format!("{i}").into())
            .unwrap();
    }
    let consumer = stream
        .create_consumer(pull::OrderedConfig {
            filter_subject: "OPULL.0".to_owned(),
            ..Default::default()
        })
        .unwrap();
    let mut messages = consumer.messages().unwrap();
    assert_eq!(ordered_sequences(&mut messages, 5), [1, 3, 5, 7, 9]);

    // The consumer goes under its waiting pull: the server's 409 makes it again, starting
    // after the last message delivered.
    let names: Vec<String> = stream.consumer_names().map(Result::unwrap).collect();
    assert_eq!(names.len(), 1);
    stream.delete_consumer(&names[0]).unwrap();
    for i in 10..14 {
        js.publish(format!("OPULL.{}", i % 2), format!("{i}").into())
            .unwrap();
    }
    assert_eq!(ordered_sequences(&mut messages, 2), [11, 13]);
    assert!(messages.recoveries().recreations >= 1);
    let names: Vec<String> = stream.consumer_names().map(Result::unwrap).collect();
    assert_eq!(names, [format!("{}_1", consumer.cached_info().name)]);

    // Dropped, it deletes the consumer it reads.
    drop(messages);
    let deadline = std::time::Instant::now() + WAIT;
    while stream.consumer_names().count() > 0 {
        assert!(std::time::Instant::now() < deadline, "the consumer stayed");
    }
}

#[test]
fn an_ordered_pull_consumer_reads_on_after_a_server_restart_lost_it() {
    let (mut server, js) = restartable();
    let stream = stream(&js, "OLOST");
    for i in 0..3 {
        js.publish("OLOST.a", format!("{i}").into()).unwrap();
    }
    let consumer = stream
        .create_consumer(pull::OrderedConfig::default())
        .unwrap();
    let mut messages = consumer.messages().unwrap();
    assert_eq!(ordered_sequences(&mut messages, 3), [1, 2, 3]);

    // An ordered consumer lives in memory: the restarted server has none, and nobody
    // serves the pull the reconnect sends.
    reconnect_after_restart(&mut server, &js);
    let deadline = std::time::Instant::now() + WAIT;
    while js.publish("OLOST.a", "after".into()).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "no publish was stored"
        );
    }
    assert_eq!(ordered_sequences(&mut messages, 1), [4]);
    assert!(messages.recoveries().recreations >= 1);
}

#[test]
fn streams_and_consumers_are_listed() {
    let (_server, js) = jetstream();
    let first = stream(&js, "LIST_A");
    stream(&js, "LIST_B");
    let mut names: Vec<String> = js.stream_names().map(Result::unwrap).collect();
    names.sort();
    assert_eq!(names, ["LIST_A", "LIST_B"]);
    let found: Vec<String> = js
        .stream_names_for_subject("LIST_B.x")
        .map(Result::unwrap)
        .collect();
    assert_eq!(found, ["LIST_B"]);
    assert_eq!(js.streams().count(), 2);

    durable(&first, "one");
    durable(&first, "two");
    let mut consumers: Vec<String> = first.consumer_names().map(Result::unwrap).collect();
    consumers.sort();
    assert_eq!(consumers, ["one", "two"]);
    let infos: Vec<_> = first.consumers().map(Result::unwrap).collect();
    assert_eq!(infos.len(), 2);
    assert!(infos.iter().all(|info| info.stream_name == "LIST_A"));
    let mut names = js.stream_names();
    while names.next().is_some() {}
    assert!(names.missing().is_empty() && names.offline().is_empty());
}

/// A caller of a push consumer slower than two of its heartbeats: what came meanwhile is
/// read first, so the wait is no missed heartbeat.
fn a_push_consumer_read_slowly_misses_no_heartbeat() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "SLOWPUSH");
    for i in 0..2 {
        js.publish("SLOWPUSH.a", format!("{i}").into()).unwrap();
    }
    let consumer = stream
        .create_consumer(push::Config {
            durable_name: Some("slowpush".to_owned()),
            deliver_subject: js.client().new_inbox(),
            ack_policy: AckPolicy::None,
            idle_heartbeat: Duration::from_millis(500),
            ..Default::default()
        })
        .unwrap();
    let mut messages = consumer.messages().unwrap();
    let first = messages.next_timeout(WAIT).unwrap().expect("a message");
    assert_eq!(first.payload, "0");
    // Busy for longer than two heartbeats (1 s), the second message waiting meanwhile.
    std::thread::sleep(Duration::from_millis(1_500));
    let second = messages.next_timeout(WAIT).expect("no missed heartbeat");
    assert_eq!(second.expect("a message").payload, "1");
}

#[test]
fn a_push_consumer_delivers_answers_flow_control_and_drains() {
    let (_server, js) = jetstream();
    let stream = stream(&js, "PUSHED");
    for i in 0..3 {
        js.publish("PUSHED.a", format!("{i}").into()).unwrap();
    }
    let consumer = stream
        .create_consumer(push::Config {
            durable_name: Some("pushed".to_owned()),
            deliver_subject: js.client().new_inbox(),
            ack_policy: AckPolicy::Explicit,
            flow_control: true,
            idle_heartbeat: Duration::from_millis(200),
            ..Default::default()
        })
        .unwrap();
    let mut messages = consumer.messages().unwrap();
    for i in 0..3 {
        let message = messages.next_timeout(WAIT).unwrap().expect("a message");
        assert_eq!(message.payload, format!("{i}"));
        message.double_ack().unwrap();
    }
    // Heartbeats come while idle: no message, no error.
    assert!(
        messages
            .next_timeout(Duration::from_millis(700))
            .unwrap()
            .is_none()
    );
    js.publish("PUSHED.a", "last".into()).unwrap();
    let last = messages.next().unwrap().unwrap();
    assert_eq!(last.payload, "last");
    last.double_ack().unwrap();
    messages.drain().unwrap();
    assert!(messages.next().is_none());
    assert_eq!(stream.consumer_info("pushed").unwrap().num_ack_pending, 0);
}
