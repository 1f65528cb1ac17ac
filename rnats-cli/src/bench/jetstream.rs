//! `js-pub`: JetStream publishing to a memory stream, each ack awaited or pipelined.

use std::collections::VecDeque;
use std::time::Instant;

use rnats::ConnectOptions;
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
        let span = Span {
            msgs,
            bytes: msgs.saturating_mul(payload.len() as u64),
            start,
            end: Instant::now(),
        };
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
