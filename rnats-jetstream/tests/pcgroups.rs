//! Static partitioned consumer groups against a real server: members share a partitioned
//! stream with no message going to two members and every key staying with one, the pin makes
//! one instance per member consume while another stands by and takes over on a step-down, a
//! group's configuration is orbit.go's JSON in its bucket, and deleting or changing it ends
//! the members' consumption.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use rnats_jetstream::Context;
use rnats_jetstream::consumer::pull;
use rnats_jetstream::pcgroups::{self, PcgErrorKind, StaticConfig, StaticMember};
use rnats_jetstream::stream::{self, StorageType, SubjectTransform};
use rnats_test_server::NatsServer;

const WAIT: Duration = Duration::from_secs(20);

/// A stream that stores `orders.<id>` as `<partition>.orders.<id>`, over 4 partitions.
async fn partitioned() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    js.create_stream(stream::Config {
        name: "ORDERS".into(),
        subjects: vec!["orders.*".into()],
        subject_transform: Some(SubjectTransform {
            source: "orders.*".into(),
            destination: "{{partition(4,1)}}.orders.{{wildcard(1)}}".into(),
        }),
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    (server, js)
}

async fn publish(js: &Context, subject: &str, payload: &str) {
    js.publish(subject.to_owned(), Bytes::from(payload.to_owned()))
        .await
        .unwrap()
        .await
        .unwrap();
}

async fn join(js: &Context, member: &str) -> StaticMember {
    pcgroups::join_static(js, "ORDERS", "shipping", member, pull::Config::default())
        .await
        .unwrap()
}

/// The next message of `member` within [`WAIT`], acked: its subject and payload.
async fn next(member: &mut StaticMember) -> (String, String) {
    let message = tokio::time::timeout(WAIT, member.next())
        .await
        .expect("a message within the wait")
        .expect("the member goes on")
        .unwrap();
    message.ack().await.unwrap();
    (
        message.subject.to_string(),
        String::from_utf8(message.payload.to_vec()).unwrap(),
    )
}

#[tokio::test]
async fn members_share_the_partitions_and_each_key_stays_with_one_in_order() {
    let (_server, js) = partitioned().await;
    let config = StaticConfig::balanced(4, ["m1", "m2"]);
    pcgroups::create_static(&js, "ORDERS", "shipping", &config)
        .await
        .unwrap();
    // Again with the same configuration: fine; with another: refused.
    pcgroups::create_static(&js, "ORDERS", "shipping", &config)
        .await
        .unwrap();
    let other = StaticConfig::balanced(4, ["m1"]);
    assert_eq!(
        pcgroups::create_static(&js, "ORDERS", "shipping", &other)
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::Exists
    );
    assert_eq!(
        pcgroups::list_static(&js, "ORDERS").await.unwrap(),
        ["shipping"]
    );
    assert_eq!(
        pcgroups::join_static(&js, "ORDERS", "shipping", "m9", pull::Config::default())
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::NotMember
    );

    let mut m1 = join(&js, "m1").await;
    let mut m2 = join(&js, "m2").await;
    // Two messages per key, in order.
    for round in 0..2 {
        for id in 0..12 {
            publish(&js, &format!("orders.{id}"), &format!("{id}-{round}")).await;
        }
    }
    // Each member reads until the other has what is left: 24 in all. `next` of a stream
    // can be cancelled without losing anything; the ack comes after the choice.
    let mut got: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for _ in 0..24 {
        let (member, message) = tokio::time::timeout(WAIT, async {
            tokio::select! {
                message = m1.next() => ("m1", message),
                message = m2.next() => ("m2", message),
            }
        })
        .await
        .expect("a message within the wait");
        let message = message.expect("the member goes on").unwrap();
        message.ack().await.unwrap();
        got.entry(member).or_default().push((
            message.subject.to_string(),
            String::from_utf8(message.payload.to_vec()).unwrap(),
        ));
    }
    let keys = |member: &str| -> BTreeSet<String> {
        got.get(member)
            .map(|messages| {
                messages
                    .iter()
                    .map(|(subject, _)| subject.clone())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (k1, k2) = (keys("m1"), keys("m2"));
    assert!(k1.is_disjoint(&k2), "a key went to both members: {got:?}");
    assert_eq!(k1.len() + k2.len(), 12, "{got:?}");
    assert!(
        !k1.is_empty() && !k2.is_empty(),
        "12 keys over 4 partitions: {got:?}"
    );
    // The partition token is off the subject, and each key's two messages came in order.
    for messages in got.values() {
        for (subject, payload) in messages {
            assert!(subject.starts_with("orders."), "{subject}");
            let id = subject.trim_start_matches("orders.");
            let first = messages.iter().position(|(s, _)| s == subject).unwrap();
            if payload.ends_with("-1") {
                assert_eq!(messages[first].1, format!("{id}-0"), "{messages:?}");
            }
        }
    }
    let mut active = pcgroups::static_active_members(&js, "ORDERS", "shipping")
        .await
        .unwrap();
    active.sort();
    assert_eq!(active, ["m1", "m2"]);
}

#[tokio::test]
async fn one_instance_per_member_consumes_and_a_standby_takes_over() {
    let (_server, js) = partitioned().await;
    let config = StaticConfig::balanced(4, ["solo"]);
    pcgroups::create_static(&js, "ORDERS", "shipping", &config)
        .await
        .unwrap();
    let mut first = join(&js, "solo").await;
    publish(&js, "orders.1", "a").await;
    let (subject, _) = next(&mut first).await;
    assert_eq!(subject, "orders.1");

    // A second instance of the same member stands by while the first holds the pin: it
    // pulls too, and yet everything goes to the first.
    let mut standby = join(&js, "solo").await;
    for i in 0..5 {
        publish(&js, &format!("orders.{i}"), &format!("b{i}")).await;
    }
    for i in 0..5 {
        assert_eq!(next(&mut first).await.1, format!("b{i}"));
    }
    // The first instance leaves; a step-down hands the pin on at once.
    drop(first);
    pcgroups::static_step_down(&js, "ORDERS", "shipping", "solo")
        .await
        .unwrap();
    publish(&js, "orders.3", "c").await;
    assert_eq!(
        next(&mut standby).await,
        ("orders.3".to_owned(), "c".to_owned())
    );
}

#[tokio::test]
async fn the_configuration_is_orbits_json_and_its_end_ends_the_members() {
    let (_server, js) = partitioned().await;
    let config = StaticConfig::balanced(4, ["m1", "m2"]).filters(["orders.>"]);
    pcgroups::create_static(&js, "ORDERS", "shipping", &config)
        .await
        .unwrap();
    let store = js.get_key_value(pcgroups::STATIC_BUCKET).await.unwrap();
    let stored = store.get("ORDERS.shipping").await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&stored).unwrap(),
        serde_json::json!({"max_members": 4, "filters": ["orders.>"], "members": ["m1", "m2"]})
    );
    assert_eq!(
        pcgroups::static_config(&js, "ORDERS", "shipping")
            .await
            .unwrap(),
        config
    );

    // A change to a static group's configuration ends its members with an error.
    let mut m1 = join(&js, "m1").await;
    store
        .put(
            "ORDERS.shipping",
            Bytes::from(r#"{"max_members":4,"members":["m1"]}"#),
        )
        .await
        .unwrap();
    let end = tokio::time::timeout(WAIT, m1.next()).await.unwrap();
    assert_eq!(
        end.unwrap().unwrap_err().kind(),
        PcgErrorKind::ConfigChanged
    );
    assert!(m1.next().await.is_none());

    // Deleting the group ends its members' streams and removes their consumers.
    store
        .put(
            "ORDERS.shipping",
            Bytes::from(serde_json::to_vec(&config).unwrap()),
        )
        .await
        .unwrap();
    let mut m2 = join(&js, "m2").await;
    pcgroups::delete_static(&js, "ORDERS", "shipping")
        .await
        .unwrap();
    assert!(
        tokio::time::timeout(WAIT, m2.next())
            .await
            .unwrap()
            .is_none()
    );
    let on = js.get_stream("ORDERS").await.unwrap();
    let names: Vec<String> = on.consumer_names().try_collect().await.unwrap();
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(
        pcgroups::static_config(&js, "ORDERS", "shipping")
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::NotFound
    );
}
