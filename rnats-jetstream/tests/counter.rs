//! Distributed counters (ADR-49) against a real nats-server: adds, reads, multi-gets over
//! wildcards, sourced counters' breakdown, values past 2^63, a restart, and the refusals.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::Context;
use rnats_jetstream::consumer::pull;
use rnats_jetstream::counter::{CounterErrorKind, CounterValue};
use rnats_jetstream::stream::{Config, Source, StorageType, SubjectTransform};
use rnats_test_server::NatsServer;

const WAIT: Duration = Duration::from_secs(10);

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

fn counter_config(name: &str, subjects: &[&str]) -> Config {
    Config {
        name: name.to_owned(),
        subjects: subjects.iter().map(|s| s.to_string()).collect(),
        storage: StorageType::Memory,
        allow_message_counter: true,
        allow_direct: true,
        ..Default::default()
    }
}

#[tokio::test]
async fn adds_return_the_total_and_reads_agree() {
    let (_server, js) = jetstream().await;
    js.create_stream(counter_config("HITS", &["hits.>"]))
        .await
        .unwrap();
    let hits = js.counter("HITS").await.unwrap();
    assert_eq!(
        hits.add("hits.home", 5).await.unwrap(),
        CounterValue::from(5)
    );
    assert_eq!(
        hits.add("hits.home", -2).await.unwrap(),
        CounterValue::from(3)
    );
    assert_eq!(
        hits.add("hits.home", 0).await.unwrap(),
        CounterValue::from(3)
    );
    let entry = hits.get("hits.home").await.unwrap();
    assert_eq!(entry.subject, "hits.home");
    assert_eq!(entry.value, CounterValue::from(3));
    assert_eq!(entry.increment, Some(CounterValue::from(0)));
    assert!(entry.sources.is_empty());
    assert_eq!(entry.sequence, 3);

    let err = hits.get("hits.never").await.unwrap_err();
    assert_eq!(err.kind(), CounterErrorKind::NotFound);
    assert_eq!(
        hits.value("hits.never").await.unwrap(),
        CounterValue::zero()
    );
    let err = hits.add("nowhere", 1).await.unwrap_err();
    assert_eq!(err.kind(), CounterErrorKind::InvalidSubject);
}

#[tokio::test]
async fn a_counter_is_exact_past_2_pow_63_and_survives_a_restart() {
    let mut server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    js.create_stream(Config {
        storage: StorageType::File,
        ..counter_config("BIG", &["big.>"])
    })
    .await
    .unwrap();
    let big = js.counter("BIG").await.unwrap();
    big.add("big.n", i64::MAX).await.unwrap();
    let total = big.add("big.n", i64::MAX).await.unwrap();
    assert_eq!(total.to_string(), "18446744073709551614");
    let huge: CounterValue = "340282366920938463463374607431768211456".parse().unwrap();
    let total = big.add("big.n", huge.clone()).await.unwrap();
    assert_eq!(total.to_string(), "340282366920938463481821351505477763070");
    assert_eq!(total.to_i128(), None);

    let mut events = client.events();
    server.restart().unwrap();
    tokio::time::timeout(WAIT, async {
        while let Some(event) = events.next().await {
            if event == rnats_core::ConnectionEvent::Reconnected {
                break;
            }
        }
    })
    .await
    .unwrap();
    // JetStream answers once it has recovered the stream.
    let after = tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(entry) = big.get("big.n").await {
                return entry;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(after.value, total);
    let total = big.add("big.n", -huge).await.unwrap();
    assert_eq!(total.to_string(), "18446744073709551614");
}

#[tokio::test]
async fn get_many_reads_every_matching_counter() {
    let (_server, js) = jetstream().await;
    js.create_stream(counter_config("MANY", &["many.>"]))
        .await
        .unwrap();
    let many = js.counter("MANY").await.unwrap();
    for (subject, delta) in [
        ("many.a", 1),
        ("many.b", 2),
        ("many.x.c", 3),
        ("many.a", 10),
    ] {
        many.add(subject, delta).await.unwrap();
    }
    let entries: Vec<_> = many.get_many(["many.*"]).try_collect().await.unwrap();
    let seen: Vec<(String, i64)> = entries
        .iter()
        .map(|e| (e.subject.clone(), e.value.to_i64().unwrap()))
        .collect();
    assert_eq!(seen, [("many.b".to_owned(), 2), ("many.a".to_owned(), 11)]);
    let all: Vec<_> = many.get_many(["many.>"]).try_collect().await.unwrap();
    assert_eq!(all.len(), 3);
    let none: Vec<_> = many.get_many(["many.none.*"]).try_collect().await.unwrap();
    assert!(none.is_empty());

    // More than one page: 1,100 counters, read in pages of 1,024.
    let mut acks = Vec::new();
    for i in 0..1_100 {
        let mut headers = rnats_core::HeaderMap::new();
        headers.insert("Nats-Incr", "+1");
        acks.push(
            js.publish_with_headers(format!("many.p.{i}"), headers, "".into())
                .await
                .unwrap(),
        );
    }
    for ack in acks {
        ack.await.unwrap();
    }
    let paged = many.get_many(["many.p.*"]);
    let err = paged.try_collect::<Vec<_>>().await.unwrap_err();
    assert_eq!(err.kind(), CounterErrorKind::TooManyResults);
}

#[tokio::test]
async fn a_sourced_counter_reports_each_sources_share() {
    let (_server, js) = jetstream().await;
    for region in ["EU", "US"] {
        let subject = format!("{}.hits", region.to_lowercase());
        js.create_stream(counter_config(region, &[subject.as_str()]))
            .await
            .unwrap();
    }
    let source = |name: &str| Source {
        name: name.to_owned(),
        subject_transforms: vec![SubjectTransform {
            source: format!("{}.hits", name.to_lowercase()),
            destination: "hits".to_owned(),
        }],
        ..Default::default()
    };
    let total = js
        .create_stream(Config {
            sources: Some(vec![source("EU"), source("US")]),
            ..counter_config("TOTAL", &[])
        })
        .await
        .unwrap();
    let eu = js.counter("EU").await.unwrap();
    let us = js.counter("US").await.unwrap();
    eu.add("eu.hits", 5).await.unwrap();
    us.add("us.hits", 7).await.unwrap();
    eu.add("eu.hits", 1).await.unwrap();

    // Wait for the three sourced updates to land, by consuming them.
    let consumer = total
        .create_consumer(pull::Config {
            durable_name: Some("watch".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.messages().await.unwrap();
    for _ in 0..3 {
        let message = tokio::time::timeout(WAIT, messages.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        message.ack().await.unwrap();
    }
    let counter = js.counter("TOTAL").await.unwrap();
    let entry = counter.get("hits").await.unwrap();
    assert_eq!(entry.value, CounterValue::from(13));
    assert_eq!(entry.sources["EU"]["eu.hits"], CounterValue::from(6));
    assert_eq!(entry.sources["US"]["us.hits"], CounterValue::from(7));
    let sum = entry
        .sources
        .values()
        .flat_map(|subjects| subjects.values())
        .fold(CounterValue::zero(), |sum, value| &sum + value);
    assert_eq!(sum, entry.value);
}

#[tokio::test]
async fn streams_that_cannot_count_are_refused() {
    let (_server, js) = jetstream().await;
    js.create_stream(Config {
        allow_message_counter: false,
        ..counter_config("PLAIN", &["plain.>"])
    })
    .await
    .unwrap();
    let err = js.counter("PLAIN").await.unwrap_err();
    assert_eq!(err.kind(), CounterErrorKind::NotCounterStream);
    js.create_stream(Config {
        allow_direct: false,
        ..counter_config("NODIRECT", &["nodirect.>"])
    })
    .await
    .unwrap();
    let err = js.counter("NODIRECT").await.unwrap_err();
    assert_eq!(err.kind(), CounterErrorKind::DirectGetDisabled);
    let err = js.counter("MISSING").await.unwrap_err();
    assert_eq!(err.kind(), CounterErrorKind::StreamNotFound);

    // A counter publish that bypasses the check is refused by the server.
    js.create_stream(counter_config("C", &["c.>"]))
        .await
        .unwrap();
    let counter = js.counter("C").await.unwrap();
    let mut headers = rnats_core::HeaderMap::new();
    headers.insert("Nats-Incr", "+1");
    let err = js
        .publish_with_headers("plain.x", headers, "".into())
        .await
        .unwrap()
        .await
        .unwrap_err();
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(
        detail.error_code(),
        rnats_jetstream::ErrorCode::MESSAGE_INCR_DISABLED
    );
    counter.add("c.ok", 1).await.unwrap();
}
