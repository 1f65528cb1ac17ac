//! `js-pub`: JetStream publishing to a memory stream, each ack awaited or pipelined;
//! `js-fetch`: a pull consumer fetching from a filled memory stream.

use std::collections::VecDeque;
use std::time::Instant;

use futures_util::StreamExt;
use rnats::ConnectOptions;
use rnats::jetstream::consumer::{AckPolicy, pull};
use rnats::jetstream::response::Response;
use serde_json::json;

use super::Plan;
use super::report::{Figures, Group};
use super::supervisor::Supervisor;
use crate::error::CliError;
use crate::stats::{LatencySummary, Span};

/// The stream the benchmark makes for itself and deletes afterwards.
const STREAM: &str = "RNATS_BENCH";

/// Publishes `plan.msgs` messages with up to `plan.in_flight` acks outstanding.
pub(super) async fn run(plan: &Plan) -> Result<Figures, CliError> {
    let client = plan
        .connect(ConnectOptions::new(), "rnats-bench-js-pub".to_owned())
        .await?;
    let js = rnats::jetstream::ContextBuilder::new()
        .max_ack_inflight(plan.in_flight)
        .build(client);
    recreate_stream(&js, plan.subject.as_str()).await?;

    let mut supervisor = Supervisor::new("msgs", plan.msgs, plan.progress);
    let counter = supervisor.counter();
    let (subject, payload, msgs, in_flight) = (
        plan.subject.clone(),
        plan.payload.clone(),
        plan.msgs,
        plan.in_flight,
    );
    let context = js.clone();
    let task = tokio::spawn(async move {
        let each_ack = in_flight == 1;
        let mut latencies = Vec::new();
        let mut pending = VecDeque::with_capacity(in_flight);
        let start = Instant::now();
        for n in 1..=msgs {
            let sent = Instant::now();
            pending.push_back(context.publish(subject.clone(), payload.clone()).await?);
            if pending.len() >= in_flight {
                if let Some(ack) = pending.pop_front() {
                    ack.await?;
                }
                if each_ack {
                    latencies.push(sent.elapsed());
                }
            }
            counter.set(n);
        }
        for ack in pending {
            ack.await?;
        }
        let span = Span::of(msgs, payload.len(), start, Instant::now());
        Ok((span, latencies))
    });
    let mut results = supervisor.wait(vec![task]).await?;
    drop(supervisor);
    let _: serde_json::Value = js.request(format!("STREAM.DELETE.{STREAM}"), &()).await?;
    let Some((span, mut latencies)) = results.pop() else {
        return Ok(Figures::default());
    };
    Ok(Figures {
        publishers: Group::from_spans(&[span]),
        latency: LatencySummary::from_samples(&mut latencies),
        ..Figures::default()
    })
}

/// Fills the bench stream with `plan.msgs` messages (pipelined, not timed), then times a
/// durable pull consumer fetching them `plan.batch` at a time and acking each one.
pub(super) async fn fetch(plan: &Plan) -> Result<Figures, CliError> {
    let client = plan
        .connect(ConnectOptions::new(), "rnats-bench-js-fetch".to_owned())
        .await?;
    let js = rnats::jetstream::new(client);
    recreate_stream(&js, plan.subject.as_str()).await?;
    let mut pending = VecDeque::with_capacity(256);
    for _ in 0..plan.msgs {
        pending.push_back(
            js.publish(plan.subject.clone(), plan.payload.clone())
                .await?,
        );
        if pending.len() >= 256 {
            if let Some(ack) = pending.pop_front() {
                ack.await?;
            }
        }
    }
    for ack in pending {
        ack.await?;
    }
    let stream = js.get_stream(STREAM).await.map_err(consumer_error)?;
    let consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("rnats-bench".to_owned()),
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        })
        .await
        .map_err(consumer_error)?;

    let mut supervisor = Supervisor::new("msgs", plan.msgs, plan.progress);
    let counter = supervisor.counter();
    let (msgs, batch, size) = (plan.msgs, plan.batch, plan.payload.len());
    let task = tokio::spawn(async move {
        let start = Instant::now();
        let mut received = 0;
        while received < msgs {
            let mut messages = consumer
                .fetch()
                .max_messages(batch)
                .messages()
                .await
                .map_err(consumer_error)?;
            while let Some(message) = messages.next().await {
                let message = message.map_err(consumer_error)?;
                message.ack().await.map_err(CliError::JetStreamConsumer)?;
                received += 1;
                counter.set(received);
            }
        }
        Ok(Span::of(msgs, size, start, Instant::now()))
    });
    let spans = supervisor.wait(vec![task]).await?;
    drop(supervisor);
    let _: serde_json::Value = js.request(format!("STREAM.DELETE.{STREAM}"), &()).await?;
    Ok(Figures {
        subscribers: Group::from_spans(&spans),
        ..Figures::default()
    })
}

/// Makes the bench stream anew (a failed earlier run may have left one).
async fn recreate_stream(js: &rnats::jetstream::Context, subject: &str) -> Result<(), CliError> {
    let _: serde_json::Value = js.request(format!("STREAM.DELETE.{STREAM}"), &()).await?;
    let config = json!({ "name": STREAM, "subjects": [subject], "storage": "memory" });
    let created: Response<serde_json::Value> = js
        .request(format!("STREAM.CREATE.{STREAM}"), &config)
        .await?;
    created
        .into_result()
        .map(drop)
        .map_err(CliError::JetStreamRefused)
}

/// Any JetStream consumer-side error, boxed.
fn consumer_error(error: impl Into<rnats::Error>) -> CliError {
    CliError::JetStreamConsumer(error.into())
}
