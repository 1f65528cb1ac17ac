//! Batched and multi-subject direct gets (ADR-31 revision 2) against a real nats-server:
//! paging past one batch by `Nats-Num-Pending`/`Nats-Last-Sequence`, start sequence and time,
//! `max_bytes`, `multi_last` at a past sequence or time, a last-per-subject view over 100k
//! subjects (past the server's 1024-subject limit), and the refusals.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_core::StatusCode;
use rnats_jetstream::Context;
use rnats_jetstream::stream::{Config, DirectGetErrorKind, StorageType, Stream};
use rnats_test_server::NatsServer;

async fn jetstream() -> (NatsServer, rnats_core::Client, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, client.clone(), rnats_jetstream::new(client))
}

async fn direct_stream(js: &Context, name: &str, subjects: &str) -> Stream {
    js.create_stream(Config {
        name: name.to_owned(),
        subjects: vec![subjects.to_owned()],
        storage: StorageType::Memory,
        allow_direct: true,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// Publishes and waits for the stream's ack; the sequence.
async fn publish(js: &Context, subject: &str, payload: &str) -> u64 {
    let ack = js.publish(subject.to_owned(), Bytes::from(payload.to_owned()));
    ack.await.unwrap().await.unwrap().sequence
}

fn payloads(messages: &[rnats_jetstream::message::StreamMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| String::from_utf8(m.payload.to_vec()).unwrap())
        .collect()
}

#[tokio::test]
async fn a_batch_pages_past_one_request_in_order() {
    let (_server, _client, js) = jetstream().await;
    let stream = direct_stream(&js, "B", "b.>").await;
    for i in 0..50 {
        let subject = if i % 2 == 0 { "b.even" } else { "b.odd" };
        publish(&js, subject, &i.to_string()).await;
    }

    // 25 matches, seven per request: four pages follow the first.
    let evens: Vec<_> = stream
        .direct_batch("b.even")
        .batch(7)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let expected: Vec<String> = (0..50).step_by(2).map(|i| i.to_string()).collect();
    assert_eq!(payloads(&evens), expected);
    let sequences: Vec<u64> = evens.iter().map(|m| m.sequence).collect();
    assert_eq!(sequences, (1..=49).step_by(2).collect::<Vec<u64>>());
    assert!(evens.iter().all(|m| m.subject.as_str() == "b.even"));

    // From a sequence, limited in total.
    let some: Vec<_> = stream
        .direct_batch("b.>")
        .sequence(40)
        .batch(3)
        .max_messages(5)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(payloads(&some), ["39", "40", "41", "42", "43"]);

    // A byte cap per request smaller than one message still reads everything, one a page.
    let all: Vec<_> = stream
        .direct_batch("b.odd")
        .max_bytes(1)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(all.len(), 25);
    assert_eq!(all.last().unwrap().sequence, 50);
}

#[tokio::test]
async fn a_batch_starts_at_a_time() {
    let (_server, _client, js) = jetstream().await;
    let stream = direct_stream(&js, "T", "t.>").await;
    for i in 0..5 {
        publish(&js, "t.a", &format!("old{i}")).await;
    }
    let cut = one_nanosecond_after(&stream.direct_get(5).await.unwrap().time);
    // The stored times are the server's; wait on them, not on a clock here.
    let mut i = 0;
    loop {
        let sequence = publish(&js, "t.a", &format!("new{i}")).await;
        i += 1;
        if stream.direct_get(sequence).await.unwrap().time >= cut && i >= 3 {
            break;
        }
    }
    let newer: Vec<_> = stream
        .direct_batch("t.a")
        .start_time(cut)
        .batch(2)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(!newer.is_empty());
    assert!(newer.iter().all(|m| m.time >= cut));
    assert!(payloads(&newer).iter().all(|p| p.starts_with("new")));
    assert_eq!(newer.last().unwrap().sequence, 5 + i);
}

#[tokio::test]
async fn multi_last_reads_a_past_snapshot_page_by_page() {
    let (_server, _client, js) = jetstream().await;
    let stream = direct_stream(&js, "USERS", "u.>").await;
    publish(&js, "u.1234.name", "Bob").await;
    publish(&js, "u.1234.surname", "Smith").await;
    let at = publish(&js, "u.1234.address", "1 Main Street").await;
    let before = stream.direct_get(at).await.unwrap().time;
    publish(&js, "u.1234.address", "10 Oak Lane").await;
    publish(&js, "u.9.name", "Eve").await;

    let now: Vec<_> = stream
        .direct_multi_last(["u.1234.>"])
        .batch(1)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(payloads(&now), ["Bob", "Smith", "10 Oak Lane"]);

    let then: Vec<_> = stream
        .direct_multi_last(["u.1234.>"])
        .up_to_sequence(at)
        .batch(2)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(payloads(&then), ["Bob", "Smith", "1 Main Street"]);

    // Named subjects from two filters, as of the time of the third write.
    let by_time: Vec<_> = stream
        .direct_multi_last(["u.1234.address", "u.9.name"])
        .up_to_time(one_nanosecond_after(&before))
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(payloads(&by_time), ["1 Main Street"]);

    let limited: Vec<_> = stream
        .direct_multi_last([">"])
        .batch(1)
        .max_messages(2)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(payloads(&limited), ["Bob", "Smith"]);
}

#[tokio::test]
async fn last_per_subject_over_100k_subjects_is_complete_and_one_snapshot() {
    const SUBJECTS: usize = 100_000;
    let (_server, client, js) = jetstream().await;
    let stream = direct_stream(&js, "WIDE", "w.>").await;
    for i in 0..SUBJECTS {
        client
            .publish(format!("w.{i}"), Bytes::from(format!("v1-{i}")))
            .await
            .unwrap();
    }
    for i in (0..SUBJECTS).step_by(1000) {
        client
            .publish(format!("w.{i}"), Bytes::from(format!("v2-{i}")))
            .await
            .unwrap();
    }
    client.flush().await.unwrap();
    let total = (SUBJECTS + SUBJECTS / 1000) as u64;
    let mut stream = stream;
    while stream.info().await.unwrap().state.messages < total {
        client.flush().await.unwrap();
    }

    let mut view = stream.direct_multi_last(["w.>"]).await.unwrap();
    let mut seen = HashMap::with_capacity(SUBJECTS);
    let mut first = true;
    while let Some(message) = view.next().await {
        let message = message.unwrap();
        if first {
            // Written after the read began: outside its snapshot.
            publish(&js, "w.late", "late").await;
            publish(&js, "w.0", "v3-0").await;
            first = false;
        }
        assert!(message.sequence <= total);
        let payload = String::from_utf8(message.payload.to_vec()).unwrap();
        assert!(
            seen.insert(message.subject.to_string(), payload).is_none(),
            "{} twice",
            message.subject
        );
    }
    assert_eq!(seen.len(), SUBJECTS);
    assert_eq!(seen["w.0"], "v2-0");
    assert_eq!(seen["w.1"], "v1-1");
    assert_eq!(seen["w.99000"], "v2-99000");
    assert_eq!(seen["w.99999"], "v1-99999");
}

#[tokio::test]
async fn batches_report_the_servers_refusals() {
    let (_server, _client, js) = jetstream().await;
    let stream = direct_stream(&js, "R", "r.>").await;
    publish(&js, "r.a", "1").await;

    // Nothing matches: an empty stream, not an error.
    let none: Vec<_> = stream
        .direct_batch("r.none")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(none.is_empty());
    let none: Vec<_> = stream
        .direct_multi_last(["r.none.>"])
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(none.is_empty());

    let error = stream.direct_batch("r..a").await.unwrap_err();
    assert_eq!(error.kind(), DirectGetErrorKind::InvalidSubject);
    let error = stream
        .direct_multi_last(Vec::<String>::new())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), DirectGetErrorKind::InvalidSubject);

    // A stream without allow_direct has no responder.
    js.create_stream(Config {
        name: "NODIRECT".into(),
        subjects: vec!["nd.>".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    let no_direct = js.get_stream("NODIRECT").await.unwrap();
    let error = no_direct.direct_batch(">").await.unwrap_err();
    assert!(matches!(
        error.kind(),
        DirectGetErrorKind::ErrorResponse(status, _) if status == StatusCode::NO_RESPONDERS
    ));
}

/// The instant just after `at`, whichever date type the `chrono` feature chose.
fn one_nanosecond_after(
    at: &rnats_jetstream::datetime::DateTime,
) -> rnats_jetstream::datetime::DateTime {
    let datetime_nanos = rnats_jetstream::datetime::to_nanos(at);
    rnats_jetstream::datetime::from_nanos(datetime_nanos + 1).unwrap()
}
