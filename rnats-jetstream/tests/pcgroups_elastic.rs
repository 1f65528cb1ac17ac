//! Elastic partitioned consumer groups against a real server: members share the partitions
//! of a work queue sourced from the stream, each message going to one member and each key
//! staying in order with one; members joining and leaving move partitions without losing a
//! message or handing an acked one to anyone; the configuration is orbit.go's JSON in its
//! bucket; deleting the group, or changing its partitioning, ends the members.
#![cfg(feature = "kv")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_jetstream::Context;
use rnats_jetstream::consumer::{AckPolicy, PriorityPolicy, pull};
use rnats_jetstream::pcgroups::{self, ElasticConfig, ElasticMember, MemberMapping, PcgErrorKind};
use rnats_jetstream::stream::{
    self, DiscardPolicy, RetentionPolicy, StorageType, SubjectTransform,
};
use rnats_test_server::NatsServer;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long a test waits for the next thing it expects.
const WAIT: Duration = Duration::from_secs(30);

/// What a member instance saw, in the order all instances saw it.
#[derive(Debug, Clone)]
enum Event {
    /// A message, and whether its ack was confirmed by the server.
    Message {
        member: String,
        subject: String,
        payload: String,
        acked: bool,
    },
    /// The instance's stream ended, with the error it ended on.
    Ended {
        member: String,
        error: Option<PcgErrorKind>,
    },
}

struct Group {
    _server: NatsServer,
    js: Context,
    events: mpsc::UnboundedReceiver<Event>,
    sender: mpsc::UnboundedSender<Event>,
    instances: HashMap<String, JoinHandle<()>>,
    log: Vec<Event>,
    published: Vec<String>,
}

/// A stream `ORDERS` on `orders.*` and an elastic group `shipping` on it, six partitions
/// keyed on the order id, with no members yet.
async fn group() -> Group {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    js.create_stream(stream::Config {
        name: "ORDERS".into(),
        subjects: vec!["orders.*".into()],
        storage: StorageType::Memory,
        ..Default::default()
    })
    .await
    .unwrap();
    let config = ElasticConfig::new(6).partitioning_filter("orders.*", [1]);
    pcgroups::create_elastic(&js, "ORDERS", "shipping", &config)
        .await
        .unwrap();
    let (sender, events) = mpsc::unbounded_channel();
    Group {
        _server: server,
        js,
        events,
        sender,
        instances: HashMap::new(),
        log: Vec::new(),
        published: Vec::new(),
    }
}

impl Group {
    /// Starts an instance of `member`: it consumes, double-acks and reports each message.
    async fn join(&mut self, member: &str, ack_wait: Duration) {
        let template = pull::Config {
            ack_wait,
            ..Default::default()
        };
        let instance = pcgroups::join_elastic(&self.js, "ORDERS", "shipping", member, template)
            .await
            .unwrap();
        self.spawn(member, instance);
    }

    /// Runs `instance` of `member`: it consumes, double-acks and reports each message.
    fn spawn(&mut self, member: &str, mut instance: ElasticMember) {
        let sender = self.sender.clone();
        let name = member.to_owned();
        let task = tokio::spawn(async move {
            loop {
                match instance.next().await {
                    Some(Ok(message)) => {
                        let acked = message.double_ack().await.is_ok();
                        let event = Event::Message {
                            member: name.clone(),
                            subject: message.subject.to_string(),
                            payload: String::from_utf8(message.payload.to_vec()).unwrap(),
                            acked,
                        };
                        if sender.send(event).is_err() {
                            return;
                        }
                    }
                    end => {
                        let error = end.and_then(|end| end.err()).map(|error| error.kind());
                        let _ = sender.send(Event::Ended {
                            member: name.clone(),
                            error,
                        });
                        return;
                    }
                }
            }
        });
        self.instances.insert(member.to_owned(), task);
    }

    /// Publishes one message to each of `keys` orders, `<key>-<round>`.
    async fn publish(&mut self, keys: usize, round: usize) {
        for key in 0..keys {
            let payload = format!("{key}-{round}");
            self.js
                .publish(format!("orders.{key}"), Bytes::from(payload.clone()))
                .await
                .unwrap()
                .await
                .unwrap();
            self.published.push(payload);
        }
    }

    /// Takes events until `done` says the log is complete.
    async fn until(&mut self, done: impl Fn(&[Event]) -> bool) {
        while !done(&self.log) {
            let event = tokio::time::timeout(WAIT, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("no event within the wait; so far {:#?}", self.log))
                .unwrap();
            self.log.push(event);
        }
    }

    /// Takes events until every published message was received at least once.
    async fn until_all_received(&mut self) {
        let published: BTreeSet<String> = self.published.iter().cloned().collect();
        self.until(|log| published.is_subset(&received(log))).await;
    }

    /// Every message published was received, and none after a confirmed ack of it.
    fn check_nothing_lost_and_acked_stays_acked(&self) {
        assert!(
            self.published
                .iter()
                .collect::<BTreeSet<_>>()
                .is_subset(&received(&self.log).iter().collect()),
            "a message was lost: {:#?}",
            self.log
        );
        let mut acked: BTreeMap<&str, &str> = BTreeMap::new();
        for event in &self.log {
            if let Event::Message {
                member,
                payload,
                acked: ack,
                ..
            } = event
            {
                if let Some(by) = acked.get(payload.as_str()) {
                    panic!(
                        "{payload} came to {member} after {by} acked it: {:#?}",
                        self.log
                    );
                }
                if *ack {
                    acked.insert(payload, member);
                }
            }
        }
    }
}

fn received(log: &[Event]) -> BTreeSet<String> {
    log.iter()
        .filter_map(|event| match event {
            Event::Message { payload, .. } => Some(payload.clone()),
            Event::Ended { .. } => None,
        })
        .collect()
}

/// The messages `member` received, as (subject, payload), in order.
fn messages_of<'a>(log: &'a [Event], of: &str) -> Vec<(&'a str, &'a str)> {
    log.iter()
        .filter_map(|event| match event {
            Event::Message {
                member,
                subject,
                payload,
                ..
            } if member == of => Some((subject.as_str(), payload.as_str())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn two_members_share_the_partitions_each_message_once_and_in_order() {
    let mut group = group().await;
    // Instances may start before their member is added: they consume once it is.
    group.join("m1", Duration::ZERO).await;
    group.join("m2", Duration::ZERO).await;
    let members = pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m1", "m2"])
        .await
        .unwrap();
    assert_eq!(members, ["m1", "m2"]);
    for round in 0..4 {
        group.publish(12, round).await;
    }
    group.until(|log| log.len() >= 48).await;

    // Each message once.
    let payloads: Vec<&str> = group
        .log
        .iter()
        .map(|event| match event {
            Event::Message { payload, acked, .. } => {
                assert!(acked, "{event:?}");
                payload.as_str()
            }
            Event::Ended { .. } => panic!("{event:?}"),
        })
        .collect();
    assert_eq!(payloads.iter().collect::<BTreeSet<_>>().len(), 48);
    // Each key with one member, its rounds in order; the partition token is off.
    let keys = |member| -> BTreeSet<&str> {
        messages_of(&group.log, member)
            .into_iter()
            .map(|(subject, _)| subject)
            .collect()
    };
    let (k1, k2) = (keys("m1"), keys("m2"));
    assert!(k1.is_disjoint(&k2), "a key went to both: {:#?}", group.log);
    assert_eq!(k1.len() + k2.len(), 12);
    assert!(!k1.is_empty() && !k2.is_empty(), "{:#?}", group.log);
    for member in ["m1", "m2"] {
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (subject, payload) in messages_of(&group.log, member) {
            assert!(subject.starts_with("orders."), "{subject}");
            let (key, round) = payload.split_once('-').unwrap();
            assert_eq!(subject, format!("orders.{key}"));
            let round: usize = round.parse().unwrap();
            if let Some(before) = last.insert(subject, round) {
                assert!(before < round, "{subject} out of order: {:#?}", group.log);
            }
        }
    }

    // The configuration is orbit.go's JSON, and the administration sees the group.
    let store = group
        .js
        .get_key_value(pcgroups::ELASTIC_BUCKET)
        .await
        .unwrap();
    let stored = store.get("ORDERS.shipping").await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&stored).unwrap(),
        serde_json::json!({
            "max_members": 6,
            "partitioning_filters": [{"filter": "orders.*", "partitioning_wildcards": [1]}],
            "members": ["m1", "m2"],
        })
    );
    assert_eq!(
        pcgroups::list_elastic(&group.js, "ORDERS").await.unwrap(),
        ["shipping"]
    );
    // Each member's consumer is the one orbit.go makes: on the work queue, named after the
    // member, filtered on its partitions, pinned, idling out after the ack wait.
    let mut work_queue = group
        .js
        .get_stream(pcgroups::elastic_stream_name("ORDERS", "shipping"))
        .await
        .unwrap();
    let queue = work_queue.info().await.unwrap().config.clone();
    assert_eq!(queue.name, "ORDERS-shipping");
    assert_eq!(queue.retention, RetentionPolicy::WorkQueue);
    assert_eq!(queue.discard, DiscardPolicy::New);
    assert!(queue.allow_direct);
    let sources = queue.sources.unwrap();
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0].name, "ORDERS");
    assert_eq!(
        sources[0].subject_transforms,
        [SubjectTransform {
            source: "orders.*".into(),
            destination: "{{Partition(6,1)}}.orders.{{Wildcard(1)}}".into(),
        }]
    );
    let info = work_queue.consumer_info("m2").await.unwrap();
    assert_eq!(info.name, "m2");
    let consumer = info.config;
    assert_eq!(consumer.durable_name, None);
    assert_eq!(
        consumer.filter_subjects,
        ["3.orders.*", "4.orders.*", "5.orders.*"]
    );
    assert_eq!(consumer.ack_policy, AckPolicy::Explicit);
    assert_eq!(consumer.priority_groups, ["PCG"]);
    assert_eq!(consumer.priority_policy, PriorityPolicy::PinnedClient);
    assert_eq!(consumer.ack_wait, Duration::from_secs(5));
    assert_eq!(consumer.priority_timeout, Duration::from_secs(5));
    assert_eq!(consumer.inactive_threshold, Duration::from_secs(5));
    assert_eq!(
        pcgroups::elastic_active_members(&group.js, "ORDERS", "shipping")
            .await
            .unwrap(),
        ["m1", "m2"]
    );
}

#[tokio::test]
async fn a_joining_member_takes_partitions_over_without_loss() {
    let mut group = group().await;
    let ack_wait = Duration::from_secs(3);
    pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m1", "m2"])
        .await
        .unwrap();
    group.join("m1", ack_wait).await;
    group.join("m2", ack_wait).await;
    group.publish(24, 0).await;
    group.until_all_received().await;

    // A third member, added while two rounds are being consumed: six partitions over
    // three. Rounds go on until it has some of them.
    group.publish(24, 1).await;
    group.publish(24, 2).await;
    pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m3"])
        .await
        .unwrap();
    group.join("m3", ack_wait).await;
    let mut round = 3;
    loop {
        group.publish(24, round).await;
        group.until_all_received().await;
        if !messages_of(&group.log, "m3").is_empty() {
            break;
        }
        round += 1;
        assert!(round < 20, "m3 never consumed: {:#?}", group.log);
    }
    // After m3's first message, one more round: m3's keys are now m3's alone.
    group.publish(24, round + 1).await;
    group.until_all_received().await;
    group.check_nothing_lost_and_acked_stays_acked();
    let last: BTreeMap<&str, &str> = group
        .log
        .iter()
        .filter_map(|event| match event {
            Event::Message {
                member, payload, ..
            } if payload.ends_with(&format!("-{}", round + 1)) => {
                Some((payload.as_str(), member.as_str()))
            }
            _ => None,
        })
        .collect();
    let owners: BTreeSet<&str> = last.values().copied().collect();
    assert_eq!(owners.len(), 3, "the last round: {last:?}");
}

#[tokio::test]
async fn a_message_in_flight_moves_with_its_partition() {
    let mut group = group().await;
    pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m1"])
        .await
        .unwrap();
    let mut m1 = pcgroups::join_elastic(
        &group.js,
        "ORDERS",
        "shipping",
        "m1",
        pull::Config::default(),
    )
    .await
    .unwrap();
    group.publish(24, 0).await;
    // m1 holds one message, unacked, while the partitions are shared out anew.
    let held = tokio::time::timeout(WAIT, m1.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let held_payload = String::from_utf8(held.payload.to_vec()).unwrap();
    pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m2"])
        .await
        .unwrap();
    group.spawn("m1", m1);
    group.join("m2", Duration::ZERO).await;
    // Every message comes, the held one again: to whichever member has its partition now.
    group.until_all_received().await;
    assert!(received(&group.log).contains(&held_payload));
    group.check_nothing_lost_and_acked_stays_acked();
    assert!(
        !messages_of(&group.log, "m2").is_empty(),
        "m2 has half the partitions: {:#?}",
        group.log
    );
    drop(held);
}

#[tokio::test]
async fn a_leaving_member_hands_its_partitions_over() {
    let mut group = group().await;
    let ack_wait = Duration::from_secs(3);
    pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m1", "m2", "m3"])
        .await
        .unwrap();
    for member in ["m1", "m2", "m3"] {
        group.join(member, ack_wait).await;
    }
    group.publish(24, 0).await;
    group.until_all_received().await;
    assert!(
        !messages_of(&group.log, "m3").is_empty(),
        "{:#?}",
        group.log
    );

    // m3 leaves the membership while a round is being consumed; its instance stays and
    // consumes nothing published after that.
    group.publish(24, 1).await;
    let members = pcgroups::drop_members(&group.js, "ORDERS", "shipping", ["m3"])
        .await
        .unwrap();
    assert_eq!(members, ["m1", "m2"]);
    group.publish(24, 2).await;
    group.publish(24, 3).await;
    group.until_all_received().await;
    group.check_nothing_lost_and_acked_stays_acked();
    for event in &group.log {
        if let Event::Message {
            member, payload, ..
        } = event
            && member == "m3"
        {
            assert!(
                payload.ends_with("-0") || payload.ends_with("-1"),
                "{:#?}",
                group.log
            );
        }
    }
    let before = group.log.len();
    assert_eq!(
        pcgroups::elastic_active_members(&group.js, "ORDERS", "shipping")
            .await
            .unwrap(),
        ["m1", "m2"]
    );

    // Added back, it consumes again: a round where all three have keys.
    pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m3"])
        .await
        .unwrap();
    let mut round = 4;
    while messages_of(&group.log[before..], "m3").is_empty() {
        group.publish(24, round).await;
        group.until_all_received().await;
        round += 1;
        assert!(round < 20, "m3 never came back: {:#?}", group.log);
    }
    group.check_nothing_lost_and_acked_stays_acked();
}

#[tokio::test]
async fn a_vanished_members_partitions_come_free_when_its_consumer_idles_out() {
    let mut group = group().await;
    let ack_wait = Duration::from_secs(2);
    pcgroups::add_members(&group.js, "ORDERS", "shipping", ["m1", "m2"])
        .await
        .unwrap();
    let template = pull::Config {
        ack_wait,
        ..Default::default()
    };
    let mut m2 = pcgroups::join_elastic(&group.js, "ORDERS", "shipping", "m2", template)
        .await
        .unwrap();
    group.publish(24, 0).await;
    // m2 consumes one message, then its process vanishes, leaving its consumer behind.
    let message = tokio::time::timeout(WAIT, m2.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    message.double_ack().await.unwrap();
    group.log.push(Event::Message {
        member: "m2".into(),
        subject: message.subject.to_string(),
        payload: String::from_utf8(message.payload.to_vec()).unwrap(),
        acked: true,
    });
    drop(m2);
    // It is dropped from the membership as orbit.go does it, without deleting its
    // consumer: m1's consumer over every partition overlaps it until the server removes it
    // for inactivity, and m1 tries again until then.
    group.join("m1", ack_wait).await;
    let store = group
        .js
        .get_key_value(pcgroups::ELASTIC_BUCKET)
        .await
        .unwrap();
    let go = r#"{"max_members":6,"partitioning_filters":[{"filter":"orders.*","partitioning_wildcards":[1]}],"members":["m1"]}"#;
    store.put("ORDERS.shipping", Bytes::from(go)).await.unwrap();
    group.publish(24, 1).await;
    group.until_all_received().await;
    group.check_nothing_lost_and_acked_stays_acked();
    assert_eq!(
        pcgroups::elastic_active_members(&group.js, "ORDERS", "shipping")
            .await
            .unwrap(),
        ["m1"]
    );
}

#[tokio::test]
async fn deleting_the_group_or_changing_its_partitions_ends_the_members() {
    let mut group = group().await;
    let js = group.js.clone();
    // Administration: the same partitioning again is fine, another is refused; mappings
    // replace members and refuse member changes.
    let same = ElasticConfig::new(6).partitioning_filter("orders.*", [1]);
    pcgroups::create_elastic(&js, "ORDERS", "shipping", &same)
        .await
        .unwrap();
    let other = ElasticConfig::new(4);
    assert_eq!(
        pcgroups::create_elastic(&js, "ORDERS", "shipping", &other)
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::Exists
    );
    let mapping = |member: &str, partitions: &[u32]| MemberMapping {
        member: member.into(),
        partitions: partitions.to_vec(),
    };
    let config = pcgroups::set_member_mappings(
        &js,
        "ORDERS",
        "shipping",
        vec![mapping("m1", &[0, 1, 2, 3]), mapping("m2", &[4, 5])],
    )
    .await
    .unwrap();
    assert_eq!(config.partitions("m2"), [4, 5]);
    assert_eq!(
        pcgroups::add_members(&js, "ORDERS", "shipping", ["m3"])
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::InvalidConfig
    );
    let bad = pcgroups::set_member_mappings(&js, "ORDERS", "shipping", vec![mapping("m1", &[0])]);
    assert_eq!(bad.await.unwrap_err().kind(), PcgErrorKind::InvalidConfig);
    assert!(
        pcgroups::delete_member_mappings(&js, "ORDERS", "shipping")
            .await
            .unwrap()
            .member_mappings
            .is_empty()
    );
    let acks_none = pull::Config {
        ack_policy: AckPolicy::None,
        ..Default::default()
    };
    assert_eq!(
        pcgroups::join_elastic(&js, "ORDERS", "shipping", "m1", acks_none)
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::InvalidConfig
    );
    assert_eq!(
        pcgroups::join_elastic(&js, "ORDERS", "billing", "m1", pull::Config::default())
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::NotFound
    );

    // A change of partitioning ends a member with an error.
    pcgroups::add_members(&js, "ORDERS", "shipping", ["m1", "m2"])
        .await
        .unwrap();
    group.join("m1", Duration::ZERO).await;
    group.publish(24, 0).await;
    group.until(|log| !messages_of(log, "m1").is_empty()).await;
    let store = js.get_key_value(pcgroups::ELASTIC_BUCKET).await.unwrap();
    store
        .put(
            "ORDERS.shipping",
            Bytes::from(r#"{"max_members":3,"partitioning_filters":null,"members":["m1"]}"#),
        )
        .await
        .unwrap();
    group
        .until(|log| log.iter().any(|e| matches!(e, Event::Ended { .. })))
        .await;
    assert!(
        group.log.iter().any(|event| matches!(
            event,
            Event::Ended { member, error: Some(PcgErrorKind::ConfigChanged) } if member == "m1"
        )),
        "{:#?}",
        group.log
    );

    // An instance asked to end when its member is dropped says so.
    store
        .put(
            "ORDERS.shipping",
            Bytes::from(serde_json::to_vec(&same.clone().members(["m1", "m2"])).unwrap()),
        )
        .await
        .unwrap();
    let mut m2 = pcgroups::join_elastic(&js, "ORDERS", "shipping", "m2", pull::Config::default())
        .await
        .unwrap()
        .end_when_dropped();
    pcgroups::drop_members(&js, "ORDERS", "shipping", ["m2"])
        .await
        .unwrap();
    loop {
        // What it consumed before it saw the change it acks as usual (the ack may come after
        // its consumer is gone, and then another member has the message).
        match tokio::time::timeout(WAIT, m2.next())
            .await
            .unwrap()
            .unwrap()
        {
            Ok(message) => drop(message.double_ack().await),
            Err(error) => {
                assert_eq!(error.kind(), PcgErrorKind::NotMember);
                break;
            }
        }
    }
    assert!(m2.next().await.is_none());

    // Deleting the group ends every instance, member or not, and removes its work queue.
    store
        .put(
            "ORDERS.shipping",
            Bytes::from(serde_json::to_vec(&same.members(["m1", "m2"])).unwrap()),
        )
        .await
        .unwrap();
    group.log.clear();
    group.join("m1", Duration::ZERO).await;
    group.join("m2", Duration::ZERO).await;
    group.join("bystander", Duration::ZERO).await;
    pcgroups::delete_elastic(&js, "ORDERS", "shipping")
        .await
        .unwrap();
    group
        .until(|log| {
            log.iter()
                .filter(|e| matches!(e, Event::Ended { error: None, .. }))
                .count()
                == 3
        })
        .await;
    assert_eq!(
        pcgroups::elastic_config(&js, "ORDERS", "shipping")
            .await
            .unwrap_err()
            .kind(),
        PcgErrorKind::NotFound
    );
    assert!(
        js.get_stream(pcgroups::elastic_stream_name("ORDERS", "shipping"))
            .await
            .is_err()
    );
    assert!(
        pcgroups::list_elastic(&js, "ORDERS")
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn one_instance_per_member_consumes_and_a_standby_takes_over() {
    let group = group().await;
    let js = group.js.clone();
    pcgroups::add_members(&js, "ORDERS", "shipping", ["solo"])
        .await
        .unwrap();
    let join =
        || pcgroups::join_elastic(&js, "ORDERS", "shipping", "solo", pull::Config::default());
    let mut first = join().await.unwrap();
    let publish = |payload: &'static str| {
        let js = js.clone();
        async move {
            js.publish("orders.1", Bytes::from(payload))
                .await
                .unwrap()
                .await
                .unwrap();
        }
    };
    publish("a").await;
    assert_eq!(next(&mut first).await, "a");
    assert_eq!(first.partitions(), [0, 1, 2, 3, 4, 5]);
    assert!(first.is_consuming());

    // A second instance of the member stands by while the first holds the pin.
    let mut standby = join().await.unwrap();
    for payload in ["b", "c", "d"] {
        publish(payload).await;
    }
    for payload in ["b", "c", "d"] {
        assert_eq!(next(&mut first).await, payload);
    }
    // The first instance goes; a step-down hands the pin on at once.
    drop(first);
    pcgroups::elastic_step_down(&js, "ORDERS", "shipping", "solo")
        .await
        .unwrap();
    publish("e").await;
    assert_eq!(next(&mut standby).await, "e");
}

/// The next message of `instance` within [`WAIT`], acked: its payload.
async fn next(instance: &mut ElasticMember) -> String {
    let message = tokio::time::timeout(WAIT, instance.next())
        .await
        .expect("a message within the wait")
        .expect("the instance goes on")
        .unwrap();
    message.double_ack().await.unwrap();
    String::from_utf8(message.payload.to_vec()).unwrap()
}
