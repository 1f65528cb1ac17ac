//! Scheduled messages (ADR-51) against a real nats-server: `@at` fires on time, a cancelled
//! schedule never fires, `@every`, cron in a time zone, sampling a source, and the refusals.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_jetstream::consumer::pull;
use rnats_jetstream::context::Publish;
use rnats_jetstream::datetime::{self, DateTime};
use rnats_jetstream::schedule::{Schedule, ScheduleErrorKind, ScheduledMessage};
use rnats_jetstream::stream::{Config, StorageType, Stream};
use rnats_jetstream::{Context, Message};
use rnats_test_server::NatsServer;

const WAIT: Duration = Duration::from_secs(15);

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

async fn schedule_stream(js: &Context, name: &str, schedules: bool) -> Stream {
    js.create_stream(Config {
        name: name.to_owned(),
        subjects: vec!["sched.>".into(), "orders.>".into(), "sensors.>".into()],
        storage: StorageType::Memory,
        allow_message_schedules: schedules,
        ..Default::default()
    })
    .await
    .unwrap()
}

/// The messages stored on `subject` from now on, in order.
async fn watch(
    stream: &Stream,
    subject: &str,
) -> impl futures_util::Stream<Item = Message> + Unpin {
    let consumer = stream
        .create_consumer(pull::OrderedConfig {
            filter_subject: subject.to_owned(),
            ..Default::default()
        })
        .await
        .unwrap();
    consumer
        .messages()
        .await
        .unwrap()
        .map(|message| message.unwrap())
}

async fn next(messages: &mut (impl futures_util::Stream<Item = Message> + Unpin)) -> Message {
    tokio::time::timeout(WAIT, messages.next())
        .await
        .expect("timed out waiting for a scheduled message")
        .expect("the consumer ended")
}

const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// A whole second `seconds` from now.
fn in_seconds(seconds: i64) -> DateTime {
    let now = datetime::to_nanos(&datetime::now()).div_euclid(NANOS_PER_SECOND);
    datetime::from_nanos((now + i128::from(seconds)) * NANOS_PER_SECOND).unwrap()
}

#[tokio::test]
async fn an_at_schedule_fires_on_time_and_a_cancelled_one_never_does() {
    let (_server, js) = jetstream().await;
    let stream = schedule_stream(&js, "SCHED", true).await;
    let mut fired = watch(&stream, "orders.a").await;
    let at = in_seconds(2);
    js.publish_schedule(
        "sched.a",
        ScheduledMessage::new(Schedule::at(at), "orders.a")
            .payload("due".into())
            .header("X-Order", "17"),
    )
    .await
    .unwrap();
    let message = next(&mut fired).await;
    assert_eq!(message.payload, Bytes::from("due"));
    let published = message.info().unwrap().published;
    let late = (datetime::to_nanos(&published) - datetime::to_nanos(&at)).abs();
    assert!(late <= NANOS_PER_SECOND, "fired {late} ns off");
    let headers = message.headers.as_ref().unwrap();
    assert_eq!(headers.get("Nats-Scheduler").unwrap().as_str(), "sched.a");
    assert_eq!(headers.get("Nats-Schedule-Next").unwrap().as_str(), "purge");
    assert_eq!(headers.get("X-Order").unwrap().as_str(), "17");

    // Cancel one, then schedule a later one to the same target: the first message the
    // target gets must be the later one's.
    let mut target = watch(&stream, "orders.b").await;
    let doomed = js
        .publish_schedule(
            "sched.b",
            ScheduledMessage::new(Schedule::at(in_seconds(2)), "orders.b").payload("b".into()),
        )
        .await
        .unwrap();
    js.cancel_schedule(
        "sched.cancelled.b",
        "sched.b",
        Publish::build()
            .payload("cancelled".into())
            .expected_last_subject_sequence_for("sched.b", doomed.sequence),
    )
    .await
    .unwrap();
    // The schedule is gone, so the same cancellation no longer holds.
    let err = js
        .cancel_schedule(
            "sched.cancelled.b",
            "sched.b",
            Publish::build().expected_last_subject_sequence_for("sched.b", doomed.sequence),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::ExpectationFailed);
    js.publish_schedule(
        "sched.c",
        ScheduledMessage::new(Schedule::at(in_seconds(3)), "orders.b").payload("c".into()),
    )
    .await
    .unwrap();
    let first = next(&mut target).await;
    assert_eq!(first.payload, Bytes::from("c"));

    // A cancellation on the schedule's own subject is refused before sending.
    let err = js
        .cancel_schedule("sched.c", "sched.c", Publish::build())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::InvalidScheduler);
}

#[tokio::test]
async fn every_cron_in_a_time_zone_and_sampling_fire() {
    let (_server, js) = jetstream().await;
    let stream = schedule_stream(&js, "REPEAT", true).await;

    let mut ticks = watch(&stream, "orders.tick").await;
    js.publish_schedule(
        "sched.tick",
        ScheduledMessage::new(
            Schedule::every(Duration::from_secs(1)).unwrap(),
            "orders.tick",
        )
        .payload("tick".into()),
    )
    .await
    .unwrap();
    for _ in 0..2 {
        let tick = next(&mut ticks).await;
        assert_eq!(tick.payload, Bytes::from("tick"));
        let headers = tick.headers.as_ref().unwrap();
        assert_ne!(headers.get("Nats-Schedule-Next").unwrap().as_str(), "purge");
    }
    stream.purge().filter("sched.tick").await.unwrap();

    let mut zoned = watch(&stream, "orders.zoned").await;
    let every_second = Schedule::cron("* * * * * *")
        .unwrap()
        .time_zone("Europe/Amsterdam")
        .unwrap();
    js.publish_schedule(
        "sched.zoned",
        ScheduledMessage::new(every_second, "orders.zoned").rollup_subject(),
    )
    .await
    .unwrap();
    let message = next(&mut zoned).await;
    let headers = message.headers.as_ref().unwrap();
    assert_eq!(headers.get("Nats-Rollup").unwrap().as_str(), "sub");
    stream.purge().filter("sched.zoned").await.unwrap();

    js.publish("sensors.temp", "21.5".into())
        .await
        .unwrap()
        .await
        .unwrap();
    let mut sampled = watch(&stream, "orders.sampled").await;
    js.publish_schedule(
        "sched.sample",
        ScheduledMessage::new(Schedule::at(in_seconds(1)), "orders.sampled")
            .source("sensors.temp")
            .payload("no reading".into()),
    )
    .await
    .unwrap();
    assert_eq!(next(&mut sampled).await.payload, Bytes::from("21.5"));
}

#[tokio::test]
async fn the_server_refuses_what_the_client_cannot_know() {
    let (_server, js) = jetstream().await;
    schedule_stream(&js, "NOSCHED", false).await;
    let soon = || Schedule::at(in_seconds(60));
    let err = js
        .publish_schedule("sched.x", ScheduledMessage::new(soon(), "orders.x"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::Disabled);
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(
        detail.error_code(),
        rnats_jetstream::ErrorCode::MESSAGE_SCHEDULES_DISABLED
    );
    js.delete_stream("NOSCHED").await.unwrap();

    schedule_stream(&js, "SCHED", true).await;
    let err = js
        .publish_schedule("sched.x", ScheduledMessage::new(soon(), "elsewhere"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::InvalidTarget);
    // No per-message TTLs on this stream.
    let err = js
        .publish_schedule(
            "sched.x",
            ScheduledMessage::new(soon(), "orders.x").ttl(Duration::from_secs(60)),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::InvalidTtl);
    let unknown_zone = Schedule::cron("@daily")
        .unwrap()
        .time_zone("Nowhere/Atlantis")
        .unwrap();
    let err = js
        .publish_schedule("sched.x", ScheduledMessage::new(unknown_zone, "orders.x"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::InvalidTimeZone);
    // Refused before sending.
    let err = js
        .publish_schedule("sched.x", ScheduledMessage::new(soon(), "orders.>"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ScheduleErrorKind::InvalidTarget);
    let stream = js.get_stream("SCHED").await.unwrap();
    assert_eq!(stream.get_info().await.unwrap().state.messages, 0);
}

#[tokio::test]
async fn a_schedule_with_ttl_never_publishes_messages_that_outlive_max_age() {
    let (_server, js) = jetstream().await;
    let stream = js
        .create_stream(Config {
            name: "NEVER".into(),
            subjects: vec!["sched.>".into(), "orders.>".into()],
            storage: StorageType::Memory,
            allow_message_schedules: true,
            allow_message_ttl: true,
            max_age: Duration::from_secs(1),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut fired = watch(&stream, "orders.n").await;
    js.publish_schedule(
        "sched.n",
        ScheduledMessage::new(Schedule::at(in_seconds(1)), "orders.n")
            .payload("kept".into())
            .ttl_never(),
    )
    .await
    .unwrap();
    let message = next(&mut fired).await;
    let headers = message.headers.as_ref().unwrap();
    assert_eq!(headers.get("Nats-TTL").unwrap().as_str(), "never");
    let kept = message.info().unwrap().stream_sequence;
    // A plain message stored after it goes with max_age, and the fired one stays.
    let plain = js
        .publish("orders.plain", "aged".into())
        .await
        .unwrap()
        .await
        .unwrap()
        .sequence;
    tokio::time::timeout(WAIT, async {
        while stream.get_raw_message(plain).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("max_age removed nothing");
    assert!(stream.get_raw_message(kept).await.is_ok());
}

#[tokio::test]
async fn ordinary_publishes_take_the_subject_expectation() {
    let (_server, js) = jetstream().await;
    schedule_stream(&js, "EXPECT", false).await;
    let first = js
        .publish("orders.x", "1".into())
        .await
        .unwrap()
        .await
        .unwrap();
    // Publish to orders.y only while orders.x is still at its first sequence.
    js.send_publish(
        "orders.y",
        Publish::build().expected_last_subject_sequence_for("orders.x", first.sequence),
    )
    .await
    .unwrap()
    .await
    .unwrap();
    let err = js
        .send_publish(
            "orders.y",
            Publish::build().expected_last_subject_sequence_for("orders.x", first.sequence + 5),
        )
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        rnats_jetstream::context::PublishErrorKind::WrongLastSequence
    );
}
