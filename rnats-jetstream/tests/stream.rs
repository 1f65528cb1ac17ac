//! Streams against a real nats-server with JetStream: create, get, update, delete, listing
//! with paging, finding by subject, purge (ADR-10), reading messages from the leader and by
//! direct get (ADR-31), deleting messages, info details, and the server's refusals.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_core::StatusCode;
use rnats_jetstream::context::{
    CreateStreamErrorKind, GetStreamByNameErrorKind, GetStreamErrorKind, RequestErrorKind,
};
use rnats_jetstream::stream::{
    Config, DeleteMessageErrorKind, DirectGetErrorKind, DiscardPolicy, LastRawMessageErrorKind,
    RawMessageErrorKind, StorageType, Stream, SubjectOverlap,
};
use rnats_jetstream::{Context, ErrorCode};
use rnats_test_server::NatsServer;

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

fn memory_config(name: &str, subjects: &[&str]) -> Config {
    Config {
        name: name.to_owned(),
        subjects: subjects.iter().map(|s| s.to_string()).collect(),
        storage: StorageType::Memory,
        ..Default::default()
    }
}

/// Publishes and waits for the stream's ack; the sequence.
async fn publish(js: &Context, subject: &str, payload: &str) -> u64 {
    let ack = js.publish(subject.to_owned(), Bytes::from(payload.to_owned()));
    ack.await.unwrap().await.unwrap().sequence
}

#[tokio::test]
async fn streams_are_created_fetched_updated_and_deleted() {
    let (_server, js) = jetstream().await;
    let stream = js
        .create_stream(Config {
            description: Some("orders".into()),
            max_messages: 100,
            max_age: Duration::from_secs(3600),
            discard: DiscardPolicy::New,
            ..memory_config("ORDERS", &["orders.>"])
        })
        .await
        .unwrap();
    let info = stream.cached_info();
    assert_eq!(info.config.name, "ORDERS");
    assert_eq!(info.config.subjects, ["orders.>"]);
    assert_eq!(info.config.max_messages, 100);
    assert_eq!(info.config.max_age, Duration::from_secs(3600));
    assert_eq!(info.config.discard, DiscardPolicy::New);
    assert_eq!(info.config.storage, StorageType::Memory);
    assert_eq!(info.config.num_replicas, 1);
    // The server fills in its defaults.
    assert_eq!(info.config.max_bytes, -1);
    assert_eq!(info.config.duplicate_window, Duration::from_secs(120));
    assert_eq!(info.state.messages, 0);

    publish(&js, "orders.new", "1").await;
    let mut stream = js.get_stream("ORDERS").await.unwrap();
    assert_eq!(stream.cached_info().state.messages, 1);
    publish(&js, "orders.new", "2").await;
    assert_eq!(stream.cached_info().state.messages, 1);
    assert_eq!(stream.info().await.unwrap().state.messages, 2);
    assert_eq!(stream.cached_info().state.last_sequence, 2);

    let mut config = stream.cached_info().config.clone();
    config.max_messages = 5;
    let updated = js.update_stream(&config).await.unwrap();
    assert_eq!(updated.config.max_messages, 5);
    let no_info = js.get_stream_no_info("ORDERS").await.unwrap();
    assert_eq!(no_info.get_info().await.unwrap().config.max_messages, 5);

    let status = js.delete_stream("ORDERS").await.unwrap();
    assert!(status.success);
    let error = js.get_stream("ORDERS").await.unwrap_err();
    match error.kind() {
        GetStreamErrorKind::JetStream(error) => {
            assert_eq!(error.error_code(), ErrorCode::STREAM_NOT_FOUND);
            assert_eq!(error.code(), 404);
        }
        other => panic!("unexpected {other:?}"),
    }
    let error = js.delete_stream("ORDERS").await.unwrap_err();
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_NOT_FOUND);
}

#[tokio::test]
async fn get_or_create_and_create_or_update() {
    let (_server, js) = jetstream().await;
    let created = js
        .get_or_create_stream(memory_config("EVENTS", &["events.>"]))
        .await
        .unwrap();
    assert_eq!(created.cached_info().config.max_messages, -1);
    // An existing stream is returned as it is, whatever the config asks for.
    let existing = js
        .get_or_create_stream(Config {
            max_messages: 7,
            ..memory_config("EVENTS", &["events.>"])
        })
        .await
        .unwrap();
    assert_eq!(existing.cached_info().config.max_messages, -1);
    assert_eq!(
        existing.cached_info().created,
        created.cached_info().created
    );

    // A plain name is a config too.
    let by_name = js.create_stream("PLAIN").await.unwrap();
    assert_eq!(by_name.cached_info().config.subjects, ["PLAIN"]);

    let missing = js
        .update_stream(memory_config("NEW", &["new.>"]))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), CreateStreamErrorKind::NotFound);
    let info = js
        .create_or_update_stream(memory_config("NEW", &["new.>"]))
        .await
        .unwrap();
    assert_eq!(info.config.name, "NEW");
    let info = js
        .create_or_update_stream(Config {
            max_messages: 9,
            ..memory_config("NEW", &["new.>"])
        })
        .await
        .unwrap();
    assert_eq!(info.config.max_messages, 9);
}

#[tokio::test]
async fn bad_names_and_configs_are_refused() {
    let (_server, js) = jetstream().await;
    for name in ["", "a.b", "a b", "a*", "a>", "a/b"] {
        let error = js.create_stream(name).await.unwrap_err();
        let expected = match name {
            "" => CreateStreamErrorKind::EmptyStreamName,
            _ => CreateStreamErrorKind::InvalidStreamName,
        };
        assert_eq!(error.kind(), expected, "{name:?}");
        let error = js.get_stream(name).await.unwrap_err();
        assert!(matches!(
            error.kind(),
            GetStreamErrorKind::EmptyName | GetStreamErrorKind::InvalidStreamName
        ));
        assert!(js.get_stream_no_info(name).await.is_err());
        assert!(js.delete_stream(name).await.is_err());
    }

    // The server checks what only it can: max age must be at least 100 ms.
    let error = js
        .create_stream(Config {
            max_age: Duration::from_millis(10),
            ..memory_config("SHORT", &["short"])
        })
        .await
        .unwrap_err();
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_INVALID_CONFIG);
    assert!(matches!(error.kind(), CreateStreamErrorKind::JetStream(e) if e == *refusal));

    js.create_stream(memory_config("ONE", &["shared.>"]))
        .await
        .unwrap();
    let error = js
        .create_stream(memory_config("TWO", &["shared.a"]))
        .await
        .unwrap_err();
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_SUBJECT_OVERLAP);
    // The same name with another config is a different refusal.
    let error = js
        .create_stream(memory_config("ONE", &["other.>"]))
        .await
        .unwrap_err();
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_NAME_EXIST);
}

#[tokio::test]
async fn callers_racing_to_get_or_create_a_stream_all_get_it() {
    let (_server, js) = jetstream().await;
    // Their lookups all reach the server before any create does: the first create wins,
    // the others are refused as the name exists with another config, and get the winner.
    let callers = (1..=8).map(|i| {
        js.get_or_create_stream(Config {
            max_messages: i,
            ..memory_config("RACE", &["race"])
        })
    });
    let mut limits = Vec::new();
    for stream in futures_util::future::join_all(callers).await {
        limits.push(stream.unwrap().cached_info().config.max_messages);
    }
    limits.dedup();
    assert_eq!(limits.len(), 1, "{limits:?}");
}

/// The overlap a create or update was refused for: the server's refusal kept as the kind and
/// as the source of the error's source, untouched, and the streams it overlaps named.
fn refused_overlap(error: &rnats_jetstream::context::CreateStreamError) -> &SubjectOverlap {
    let CreateStreamErrorKind::JetStream(kind) = error.kind() else {
        panic!("not a refusal: {error}");
    };
    assert_eq!(
        kind.error_code(),
        ErrorCode::STREAM_SUBJECT_OVERLAP,
        "{error}"
    );
    assert_eq!(kind.error_code(), ErrorCode(10065));
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(*refusal, kind);
    assert_eq!(refusal.code(), 400);
    assert_eq!(
        refusal.description(),
        Some("subjects overlap with an existing stream")
    );
    let overlap = error.downcast_source::<SubjectOverlap>().unwrap();
    assert_eq!(*overlap.refusal(), kind);
    overlap
}

#[tokio::test]
async fn an_overlap_refusal_names_the_streams_it_clashes_with() {
    let (_server, js) = jetstream().await;
    js.create_stream(memory_config("A", &["a.>"]))
        .await
        .unwrap();
    js.create_stream(memory_config("C", &["c.*"]))
        .await
        .unwrap();

    // A narrower subject inside another stream's wildcard.
    let error = js
        .create_stream(memory_config("B", &["a.x"]))
        .await
        .unwrap_err();
    let overlap = refused_overlap(&error);
    assert_eq!(overlap.stream(), "B");
    assert_eq!(overlap.subjects(), ["a.x"]);
    assert_eq!(overlap.streams(), ["A"]);
    assert!(overlap.is_complete());
    assert_eq!(
        error.to_string(),
        "JetStream error: subjects overlap with an existing stream (code 400, error code 10065): \
         stream `B` (subjects `a.x`) overlaps stream `A` on `a.x`"
    );

    // A wider one over two streams' subjects, and one that overlaps none.
    js.create_stream(memory_config("E", &["w.e.>"]))
        .await
        .unwrap();
    js.create_stream(memory_config("F", &["w.f.*"]))
        .await
        .unwrap();
    let error = js
        .create_stream(memory_config("WIDE", &["free.x", "w.*.y"]))
        .await
        .unwrap_err();
    let overlap = refused_overlap(&error);
    assert_eq!(overlap.streams(), ["E", "F"]);
    let clashes: Vec<(&str, &str)> = overlap
        .clashes()
        .iter()
        .map(|c| (c.subject.as_str(), c.stream.as_str()))
        .collect();
    assert_eq!(clashes, [("w.*.y", "E"), ("w.*.y", "F")]);

    // An update that adds an overlapping subject: the stream itself is not named.
    let error = js
        .update_stream(memory_config("C", &["c.*", "a.z"]))
        .await
        .unwrap_err();
    let overlap = refused_overlap(&error);
    assert_eq!(overlap.stream(), "C");
    assert_eq!(overlap.streams(), ["A"]);
    assert!(
        error.to_string().ends_with("overlaps stream `A` on `a.z`"),
        "{error}"
    );
    let error = js
        .create_or_update_stream(memory_config("C", &["c.*", "a.z"]))
        .await
        .unwrap_err();
    assert_eq!(refused_overlap(&error).streams(), ["A"]);
    let error = js
        .get_or_create_stream(memory_config("D", &["a.d"]))
        .await
        .unwrap_err();
    assert_eq!(refused_overlap(&error).streams(), ["A"]);

    // Other refusals are as they were: the server's error is the source itself.
    let error = js
        .create_stream(memory_config("A", &["other.>"]))
        .await
        .unwrap_err();
    let source = std::error::Error::source(&error).unwrap();
    let refusal = source.downcast_ref::<rnats_jetstream::Error>().unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_NAME_EXIST);
}

#[tokio::test]
async fn listings_page_through_every_stream() {
    let (_server, js) = jetstream().await;
    // More than a page of names (1024) and several pages of infos (256 each).
    let count = 1100;
    futures_util::stream::iter(0..count)
        .map(|i| {
            let js = js.clone();
            async move {
                let subject = format!("list.{i}");
                js.create_stream(memory_config(&format!("S{i}"), &[&subject]))
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(64)
        .collect::<()>()
        .await;

    let mut names: Vec<String> = js.stream_names().try_collect().await.unwrap();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count);
    assert!(names.contains(&"S0".to_owned()) && names.contains(&"S1099".to_owned()));

    let infos: Vec<_> = js.streams().try_collect().await.unwrap();
    assert_eq!(infos.len(), count);
    let mut names: Vec<_> = infos.into_iter().map(|info| info.config.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count);
}

#[tokio::test]
async fn an_empty_account_lists_nothing_and_subjects_find_their_stream() {
    let (_server, js) = jetstream().await;
    assert_eq!(js.stream_names().count().await, 0);
    assert_eq!(js.streams().count().await, 0);

    js.create_stream(memory_config("A", &["a.>"]))
        .await
        .unwrap();
    js.create_stream(memory_config("B", &["b.*"]))
        .await
        .unwrap();
    assert_eq!(js.stream_by_subject("a.x.y").await.unwrap(), "A");
    assert_eq!(js.stream_by_subject("b.x").await.unwrap(), "B");
    let error = js.stream_by_subject("c.x").await.unwrap_err();
    assert_eq!(error.kind(), GetStreamByNameErrorKind::NotFound);
    let error = js.stream_by_subject("a..b").await.unwrap_err();
    assert_eq!(error.kind(), GetStreamByNameErrorKind::InvalidSubject);
}

/// A stream with 3 messages on `p.a` and 3 on `p.b`, interleaved (a at odd sequences).
async fn purge_stream(js: &Context) -> Stream {
    let stream = js
        .create_stream(memory_config("PURGE", &["p.*"]))
        .await
        .unwrap();
    for i in 0..3 {
        publish(js, "p.a", &format!("a{i}")).await;
        publish(js, "p.b", &format!("b{i}")).await;
    }
    stream
}

#[tokio::test]
async fn purges_narrow_by_filter_keep_and_sequence() {
    let (_server, js) = jetstream().await;
    let mut stream = purge_stream(&js).await;

    let response = stream.purge().filter("p.a").keep(1).await.unwrap();
    assert!(response.success);
    assert_eq!(response.purged, 2);
    let info = stream.info().await.unwrap();
    assert_eq!(info.state.messages, 4);
    let last_a = stream.get_last_raw_message_by_subject("p.a").await.unwrap();
    assert_eq!(last_a.payload, Bytes::from("a2"));

    // Below sequence 4: only b0 (2) is left there.
    let response = stream.purge().sequence(4).await.unwrap();
    assert_eq!(response.purged, 1);
    let response = stream.purge().filter("p.b").sequence(6).await.unwrap();
    assert_eq!(response.purged, 1);
    assert_eq!(stream.info().await.unwrap().state.messages, 2);

    let response = stream.purge().keep(1).await.unwrap();
    assert_eq!(response.purged, 1);
    let response = stream.purge().await.unwrap();
    assert_eq!(response.purged, 1);
    let info = stream.info().await.unwrap();
    assert_eq!(info.state.messages, 0);
    assert_eq!(info.state.last_sequence, 6);

    let sealed = js
        .create_stream(Config {
            deny_purge: true,
            ..memory_config("NOPURGE", &["np"])
        })
        .await
        .unwrap();
    let error = sealed.purge().await.unwrap_err();
    assert!(error.downcast_source::<rnats_jetstream::Error>().is_some());
}

#[tokio::test]
async fn messages_are_read_from_the_leader() {
    let (_server, js) = jetstream().await;
    let stream = purge_stream(&js).await;
    let mut headers = rnats_core::HeaderMap::new();
    headers.insert("X-Kind", "special");
    let ack = js
        .publish_with_headers("p.a", headers, Bytes::from("with headers"))
        .await
        .unwrap()
        .await
        .unwrap();

    let message = stream.get_raw_message(ack.sequence).await.unwrap();
    assert_eq!(message.sequence, 7);
    assert_eq!(message.subject.as_str(), "p.a");
    assert_eq!(message.payload, Bytes::from("with headers"));
    assert_eq!(message.headers.get("X-Kind").unwrap().as_str(), "special");
    let plain = stream.get_raw_message(2).await.unwrap();
    assert_eq!(plain.payload, Bytes::from("b0"));
    assert!(plain.headers.is_empty());

    let last = stream.get_last_raw_message_by_subject("p.b").await.unwrap();
    assert_eq!((last.sequence, last.payload), (6, Bytes::from("b2")));
    let next = stream
        .get_first_raw_message_by_subject("p.b", 3)
        .await
        .unwrap();
    assert_eq!(next.sequence, 4);
    let first = stream.get_next_raw_message_by_subject("p.b").await.unwrap();
    assert_eq!(first.sequence, 2);
    let value = stream
        .raw_message_builder()
        .without_headers()
        .sequence(3)
        .send()
        .await
        .unwrap();
    assert_eq!(value.data, Bytes::from("a1"));

    let error = stream.get_raw_message(100).await.unwrap_err();
    assert_eq!(error.kind(), RawMessageErrorKind::NoMessageFound);
    let error = stream
        .get_last_raw_message_by_subject("p.none")
        .await
        .unwrap_err();
    assert_eq!(error.kind(), LastRawMessageErrorKind::NoMessageFound);
    let error = stream
        .get_last_raw_message_by_subject("bad subject")
        .await
        .unwrap_err();
    assert_eq!(error.kind(), LastRawMessageErrorKind::InvalidSubject);
}

#[tokio::test]
async fn direct_gets_read_from_any_replica() {
    let (_server, js) = jetstream().await;
    let stream = js
        .create_stream(Config {
            allow_direct: true,
            ..memory_config("DIRECT", &["d.*"])
        })
        .await
        .unwrap();
    for i in 1..=4 {
        let subject = if i % 2 == 1 { "d.odd" } else { "d.even" };
        publish(&js, subject, &format!("m{i}")).await;
    }
    let mut headers = rnats_core::HeaderMap::new();
    headers.insert("X-Kind", "direct");
    js.publish_with_headers("d.odd", headers, Bytes::from("m5"))
        .await
        .unwrap()
        .await
        .unwrap();

    let message = stream.direct_get(2).await.unwrap();
    assert_eq!(message.sequence, 2);
    assert_eq!(message.subject.as_str(), "d.even");
    assert_eq!(message.payload, Bytes::from("m2"));
    assert!(
        message.time >= rnats_jetstream::datetime::parse_rfc3339("2024-01-01T00:00:00Z").unwrap()
    );

    let last = stream.direct_get_last_for_subject("d.odd").await.unwrap();
    assert_eq!(last.sequence, 5);
    assert_eq!(last.headers.get("X-Kind").unwrap().as_str(), "direct");
    let first = stream.direct_get_first_for_subject("d.odd").await.unwrap();
    assert_eq!(first.sequence, 1);
    let next = stream
        .direct_get_next_for_subject("d.odd", Some(2))
        .await
        .unwrap();
    assert_eq!(next.sequence, 3);
    let next = stream
        .direct_get_next_for_subject("d.*", None)
        .await
        .unwrap();
    assert_eq!(next.sequence, 1);
    let value = stream
        .direct_get_builder()
        .without_headers()
        .sequence(4)
        .send()
        .await
        .unwrap();
    assert_eq!(value.data, Bytes::from("m4"));

    let error = stream.direct_get(99).await.unwrap_err();
    assert_eq!(error.kind(), DirectGetErrorKind::NotFound);
    let error = stream
        .direct_get_last_for_subject("d.none")
        .await
        .unwrap_err();
    assert_eq!(error.kind(), DirectGetErrorKind::NotFound);
    let error = stream
        .direct_get_first_for_subject("not valid")
        .await
        .unwrap_err();
    assert_eq!(error.kind(), DirectGetErrorKind::InvalidSubject);

    // Without allow_direct nobody answers direct gets.
    let plain = js
        .create_stream(memory_config("PLAIN", &["plain"]))
        .await
        .unwrap();
    publish(&js, "plain", "x").await;
    let error = plain.direct_get(1).await.unwrap_err();
    assert!(matches!(
        error.kind(),
        DirectGetErrorKind::ErrorResponse(StatusCode::NO_RESPONDERS, _)
    ));
}

#[tokio::test]
async fn deleted_messages_are_gone_and_listed() {
    let (_server, js) = jetstream().await;
    let stream = purge_stream(&js).await;
    assert!(stream.delete_message(2).await.unwrap());
    assert!(stream.erase_message(3).await.unwrap());
    for sequence in [2, 3] {
        let error = stream.get_raw_message(sequence).await.unwrap_err();
        assert_eq!(error.kind(), RawMessageErrorKind::NoMessageFound);
    }
    let error = stream.delete_message(2).await.unwrap_err();
    match error.kind() {
        DeleteMessageErrorKind::JetStream(refusal) => {
            assert_eq!(refusal.error_code(), ErrorCode::SEQUENCE_NOT_FOUND)
        }
        other => panic!("unexpected {other:?}"),
    }

    let details = stream
        .info_builder()
        .with_deleted(true)
        .fetch()
        .await
        .unwrap();
    let state = &details.info.state;
    assert_eq!(state.messages, 4);
    assert_eq!(state.deleted_count, Some(2));
    let mut deleted = state.deleted.clone().unwrap();
    deleted.sort_unstable();
    assert_eq!(deleted, [2, 3]);
    let plain = stream.get_info().await.unwrap();
    assert_eq!(plain.state.deleted, None);

    let denied = js
        .create_stream(Config {
            deny_delete: true,
            ..memory_config("NODELETE", &["nd"])
        })
        .await
        .unwrap();
    publish(&js, "nd", "x").await;
    let error = denied.delete_message(1).await.unwrap_err();
    assert!(matches!(error.kind(), DeleteMessageErrorKind::JetStream(_)));
}

#[tokio::test]
async fn info_counts_messages_per_subject() {
    let (_server, js) = jetstream().await;
    let stream = js
        .create_stream(memory_config("SUBJECTS", &["s.>"]))
        .await
        .unwrap();
    let mut expected = HashMap::new();
    for i in 0..50 {
        let subject = format!("s.{}", i % 7);
        publish(&js, &subject, "x").await;
        *expected.entry(subject).or_insert(0) += 1;
    }
    let counts: HashMap<String, usize> = stream
        .info_with_subjects(">")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(counts, expected);

    let some: HashMap<String, usize> = stream
        .info_builder()
        .subjects("s.1")
        .fetch()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(some, HashMap::from([("s.1".to_owned(), expected["s.1"])]));
    let none = stream.info_with_subjects("t.>").await.unwrap();
    assert_eq!(none.info.state.subjects_count, 7);
    assert_eq!(none.count().await, 0);

    // A stream that is gone: the server's refusal is reachable from the info error.
    js.delete_stream("SUBJECTS").await.unwrap();
    let error = stream.get_info().await.unwrap_err();
    assert_eq!(error.kind(), RequestErrorKind::Other);
    let refusal = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(refusal.error_code(), ErrorCode::STREAM_NOT_FOUND);
}

#[tokio::test]
async fn subject_counts_page_past_the_servers_limit() {
    // One info reply carries at most 100,000 subjects, a page of about 2 MB: more than the
    // server's default 1 MiB max_payload, which binds what clients publish, not the server's
    // own replies. The client reads the page, and the rest come in a second page.
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    let stream = js
        .create_stream(memory_config("MANY", &["m.>"]))
        .await
        .unwrap();
    let subjects = 100_010;
    for i in 0..subjects {
        client
            .publish(format!("m.{i}"), Bytes::new())
            .await
            .unwrap();
    }
    // The stream stores one connection's messages in order: once this one is acked, all are in.
    publish(&js, "m.last", "").await;
    let counts: HashMap<String, usize> = stream
        .info_with_subjects(">")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(counts.len(), subjects + 1);
    assert!(counts.values().all(|&count| count == 1));
    assert!(counts.contains_key("m.0") && counts.contains_key("m.last"));
}

#[tokio::test]
async fn without_jetstream_creating_says_unavailable() {
    let server = NatsServer::builder().spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let error = js.create_stream("X").await.unwrap_err();
    assert_eq!(error.kind(), CreateStreamErrorKind::JetStreamUnavailable);
}
