//! Fast-ingest batches (ADR-50 rev. 7-10) against a real nats-server: flow-controlled
//! publishing, the final ack, the Sink, refused messages in both gap modes, the refusals.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use rnats_jetstream::Context;
use rnats_jetstream::context::Publish;
use rnats_jetstream::fast_ingest::{EndedEarly, FastIngestErrorKind, GapMode};
use rnats_jetstream::stream::{Config, StorageType};
use rnats_test_server::NatsServer;

async fn jetstream() -> (NatsServer, Context) {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    (server, rnats_jetstream::new(client))
}

async fn batched_stream(js: &Context, name: &str, batched: bool) {
    js.create_stream(Config {
        name: name.to_owned(),
        subjects: vec![format!("{}.>", name.to_lowercase())],
        storage: StorageType::Memory,
        allow_batch_publish: batched,
        ..Default::default()
    })
    .await
    .unwrap();
}

async fn stored(js: &Context, name: &str) -> u64 {
    let stream = js.get_stream(name).await.unwrap();
    stream.get_info().await.unwrap().state.messages
}

#[tokio::test]
async fn a_long_batch_is_flow_controlled_and_acked_at_the_end() {
    let (_server, js) = jetstream().await;
    batched_stream(&js, "INGEST", true).await;
    let mut ingest = js.fast_ingest().start().await.unwrap();
    let mut last = None;
    for i in 0..20_000u64 {
        let ack = ingest
            .publish("ingest.data", Bytes::from(i.to_string()))
            .await
            .unwrap();
        assert_eq!(ack.batch_sequence, i + 1);
        // Never more than the allowed windows ahead of the server.
        assert!(ack.batch_sequence - ack.ack_sequence <= 2 * ingest.flow().max(500));
        last = Some(ack);
    }
    assert!(last.unwrap().ack_sequence > 0);
    let ack = ingest.finish().await.unwrap();
    assert_eq!(ack.stream, "INGEST");
    assert_eq!(ack.batch_size, Some(20_000));
    assert_eq!(ack.sequence, 20_000);
    assert_eq!(stored(&js, "INGEST").await, 20_000);
    let stream = js.get_stream("INGEST").await.unwrap();
    let last = stream.get_raw_message(20_000).await.unwrap();
    assert_eq!(last.payload, Bytes::from("19999"));

    // A commit with a message stores that message too.
    let mut ingest = js.fast_ingest().max_flow(10).start().await.unwrap();
    for _ in 0..99 {
        ingest.publish("ingest.more", "x".into()).await.unwrap();
    }
    let ack = ingest.commit("ingest.more", "last".into()).await.unwrap();
    assert_eq!(ack.batch_size, Some(100));
    assert_eq!(stored(&js, "INGEST").await, 20_100);

    // A one-message batch is acked like a publish.
    let ingest = js.fast_ingest().start().await.unwrap();
    let ack = ingest.commit("ingest.one", "1".into()).await.unwrap();
    assert_eq!(ack.sequence, 20_101);
}

#[tokio::test]
async fn the_sink_feeds_a_batch_and_reports_the_final_ack() {
    let (_server, js) = jetstream().await;
    batched_stream(&js, "SINK", true).await;
    let mut sink = js.fast_ingest().start().await.unwrap().into_sink();
    let messages = futures_util::stream::iter(0..5_000).map(|i| {
        Ok((
            "sink.x".to_owned(),
            Publish::build().payload(Bytes::from(format!("{i}"))),
        ))
    });
    let mut messages = Box::pin(messages);
    sink.send_all(&mut messages).await.unwrap();
    sink.close().await.unwrap();
    let ack = sink.final_ack().unwrap();
    assert_eq!(ack.batch_size, Some(5_000));
    assert_eq!(stored(&js, "SINK").await, 5_000);
    let err = sink
        .send(("sink.x".to_owned(), Publish::build()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FastIngestErrorKind::Closed);
}

#[tokio::test]
async fn a_refused_message_ends_a_fail_batch_and_is_reported_in_an_ok_batch() {
    let (_server, js) = jetstream().await;
    batched_stream(&js, "CHECKED", true).await;
    let mut ingest = js.fast_ingest().max_flow(1).start().await.unwrap();
    for _ in 0..5 {
        ingest.publish("checked.a", "x".into()).await.unwrap();
    }
    let refused = ingest
        .publish_message(
            "checked.a",
            Publish::build().expected_last_subject_sequence(1),
        )
        .await;
    // Either this publish or the end of the batch says the server ended it.
    let err = match refused {
        Err(err) => err,
        Ok(_) => ingest.finish().await.unwrap_err(),
    };
    assert_eq!(err.kind(), FastIngestErrorKind::Ended, "{err}");
    let early = err.downcast_source::<EndedEarly>().unwrap();
    let rejected = early.rejected.as_ref().unwrap();
    assert_eq!(rejected.batch_sequence, 6);
    assert_eq!(
        rejected.error.error_code(),
        rnats_jetstream::ErrorCode::STREAM_WRONG_LAST_SEQUENCE
    );
    assert_eq!(stored(&js, "CHECKED").await, 5);

    let mut ingest = js
        .fast_ingest()
        .gap_mode(GapMode::Ok)
        .max_flow(1)
        .start()
        .await
        .unwrap();
    ingest.publish("checked.b", "1".into()).await.unwrap();
    ingest
        .publish_message(
            "checked.b",
            Publish::build().expected_last_subject_sequence(1),
        )
        .await
        .unwrap();
    ingest.publish("checked.b", "3".into()).await.unwrap();
    let rejected = ingest.rejected().unwrap().batch_sequence;
    assert_eq!(rejected, 2);
    let ack = ingest.commit("checked.b", "4".into()).await.unwrap();
    assert_eq!(ack.batch_size, Some(4));
    // The refused message is not stored; the batch went on past it.
    assert_eq!(stored(&js, "CHECKED").await, 8);
}

#[tokio::test]
async fn streams_without_batching_are_refused() {
    let (_server, js) = jetstream().await;
    batched_stream(&js, "PLAIN", false).await;
    let mut ingest = js.fast_ingest().start().await.unwrap();
    let err = ingest.publish("plain.a", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), FastIngestErrorKind::Disabled);
    let detail = err.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(
        detail.error_code(),
        rnats_jetstream::ErrorCode::BATCH_PUBLISH_DISABLED
    );
    let err = ingest.publish("plain.a", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), FastIngestErrorKind::Disabled);
    assert_eq!(stored(&js, "PLAIN").await, 0);

    let stream = js.get_stream("PLAIN").await.unwrap();
    let err = stream.fast_ingest().unwrap_err();
    assert_eq!(err.kind(), FastIngestErrorKind::Disabled);

    let mut ingest = js.fast_ingest().start().await.unwrap();
    let err = ingest.publish("nowhere.a", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), FastIngestErrorKind::StreamNotFound);

    let empty = js.fast_ingest().start().await.unwrap();
    assert_eq!(
        empty.finish().await.unwrap_err().kind(),
        FastIngestErrorKind::Empty
    );
}

#[tokio::test]
async fn a_restart_loses_nothing_that_was_acknowledged() {
    const WAIT: std::time::Duration = std::time::Duration::from_secs(20);
    let mut server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client.clone());
    js.create_stream(Config {
        name: "DURABLE".into(),
        subjects: vec!["durable.>".into()],
        storage: StorageType::File,
        allow_batch_publish: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let mut ingest = js
        .fast_ingest()
        .max_flow(100)
        .ack_timeout(std::time::Duration::from_secs(2))
        .start()
        .await
        .unwrap();
    for i in 0..5_000u64 {
        ingest
            .publish("durable.x", Bytes::from(i.to_string()))
            .await
            .unwrap();
    }
    let acked = ingest.ack_sequence();
    assert!(acked > 0);

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
    // The restarted server no longer knows the batch: going on fails, with a typed error.
    let err = tokio::time::timeout(WAIT, async {
        loop {
            if let Err(err) = ingest.publish("durable.x", "after".into()).await {
                return err;
            }
        }
    })
    .await
    .unwrap();
    assert!(
        matches!(
            err.kind(),
            FastIngestErrorKind::UnknownBatch
                | FastIngestErrorKind::StreamNotFound
                | FastIngestErrorKind::TimedOut
                | FastIngestErrorKind::Ended
        ),
        "{err}"
    );
    // Everything acknowledged before the restart is stored, in order.
    let stream = tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(stream) = js.get_stream("DURABLE").await {
                return stream;
            }
        }
    })
    .await
    .unwrap();
    let stored = stream.get_info().await.unwrap().state.messages;
    assert!(stored >= acked, "{stored} stored, {acked} acknowledged");
    let last_acked = stream.get_raw_message(acked).await.unwrap();
    assert_eq!(last_acked.payload, Bytes::from((acked - 1).to_string()));
}

/// A peer on the batch's subject answers in the server's place with acks that move nothing
/// on, again and again, more often than the ack timeout: the wait still ends at its limit.
#[tokio::test]
async fn acks_that_move_nothing_do_not_keep_a_wait_going() {
    let (server, js) = jetstream().await;
    let peer = rnats_core::connect(server.url()).await.unwrap();
    let mut seen = peer.subscribe("nostream.>").await.unwrap();
    peer.flush().await.unwrap();
    let answering = tokio::spawn(async move {
        let mut first = true;
        while let Some(message) = seen.next().await {
            let Some(reply) = message.reply else { continue };
            // The start gets a real-looking answer (flow 1); then nothing but repeats.
            let body = if first {
                r#"{"type":"ack","seq":0,"msgs":1}"#
            } else {
                r#"{"type":"ack","seq":0}"#
            };
            first = false;
            let peer = peer.clone();
            tokio::spawn(async move {
                // Every 50 ms: the pace of the scenario, faster than the ack timeout.
                let mut every = tokio::time::interval(Duration::from_millis(50));
                loop {
                    every.tick().await;
                    if peer.publish(reply.clone(), body.into()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    const WAIT: Duration = Duration::from_secs(20);
    let limit = Duration::from_millis(300);
    let mut ingest = js
        .fast_ingest()
        .max_outstanding_acks(1)
        .ack_timeout(limit)
        .start()
        .await
        .unwrap();
    ingest.publish("nostream.a", "1".into()).await.unwrap();
    let started = Instant::now();
    // The second publish owes an ack (flow 1, one outstanding) that never comes.
    let outcome = tokio::time::timeout(WAIT, async {
        loop {
            if let Err(error) = ingest.publish("nostream.a", "2".into()).await {
                return error;
            }
        }
    })
    .await
    .expect("the wait ended");
    assert_eq!(outcome.kind(), FastIngestErrorKind::TimedOut, "{outcome}");
    // One limit before the ping, one after it.
    assert!(started.elapsed() >= 2 * limit, "{:?}", started.elapsed());
    answering.abort();
}
