//! `lat`: one connection publishes, flushes and waits for its own message, over and over.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rnats::ConnectOptions;

use super::Plan;
use super::report::{Figures, Group};
use super::supervisor::Supervisor;
use crate::error::CliError;
use crate::stats::{Latencies, Span};

/// How long one round trip may take before the run is called off.
const ROUND_TRIP_TIMEOUT: Duration = Duration::from_secs(5);

/// Times `plan.msgs` round trips through the server.
pub(super) async fn run(plan: &Plan) -> Result<Figures, CliError> {
    let client = plan
        .connect(ConnectOptions::new(), "rnats-bench-lat".to_owned())
        .await?;
    let mut echoes = client.subscribe(plan.subject.clone()).await?;
    client.flush().await?;

    let mut supervisor = Supervisor::new("round trips", plan.msgs, plan.progress);
    let counter = supervisor.counter();
    let subject = plan.subject.clone();
    let payload = plan.payload.clone();
    let rounds = plan.msgs;
    let flush_each = plan.flush_each;
    let task = tokio::spawn(async move {
        let mut latencies = Latencies::new();
        let start = Instant::now();
        for n in 1..=rounds {
            let sent = Instant::now();
            client.publish(subject.clone(), payload.clone()).await?;
            if flush_each {
                client.flush().await?;
            }
            match tokio::time::timeout(ROUND_TRIP_TIMEOUT, echoes.next()).await {
                Ok(Some(_)) => latencies.record(sent.elapsed()),
                Ok(None) => return Err(CliError::SubscriptionEnded),
                Err(_) => return Err(CliError::ReceiveTimedOut(ROUND_TRIP_TIMEOUT)),
            }
            counter.set(n);
        }
        let span = Span::of(rounds, payload.len(), start, Instant::now());
        Ok((span, latencies))
    });
    let (results, timeline) = supervisor.finish(vec![task]).await;
    let mut results = results?;
    let Some((span, latencies)) = results.pop() else {
        return Ok(Figures::default());
    };
    Ok(Figures {
        round_trips: Group::from_spans(&[span]),
        ..Figures::default()
    }
    .timed(&[latencies])
    .over_time(timeline))
}
