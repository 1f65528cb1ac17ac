//! `lat` with a blocking client: one connection publishes, flushes and waits for its own
//! message, over and over, on one thread.

use std::time::{Duration, Instant};

use rnats::ConnectOptions;

use super::super::Plan;
use super::super::report::{Figures, Group};
use super::watch::{Job, Watch};
use crate::error::CliError;
use crate::stats::{Latencies, Span};

/// How long one round trip may take before the run is called off.
const ROUND_TRIP_TIMEOUT: Duration = Duration::from_secs(5);

/// Times `plan.msgs` round trips through the server.
pub(super) fn run(plan: &Plan) -> Result<Figures, CliError> {
    let client = plan.connect_blocking(ConnectOptions::new(), "rnats-bench-lat".to_owned())?;
    let mut echoes = client.subscribe(plan.subject.clone())?;
    client.flush()?;

    let mut watch = Watch::new("round trips", plan.msgs, plan.progress);
    let counter = watch.counter();
    let subject = plan.subject.clone();
    let payload = plan.payload.clone();
    let rounds = plan.msgs;
    let flush_each = plan.flush_each;
    let job: Job<(Span, Latencies)> = Box::new(move || {
        let mut latencies = Latencies::new();
        let start = Instant::now();
        for n in 1..=rounds {
            let sent = Instant::now();
            client.publish(subject.clone(), payload.clone())?;
            if flush_each {
                client.flush()?;
            }
            match echoes.next_timeout(ROUND_TRIP_TIMEOUT) {
                Ok(Some(_)) => latencies.record(sent.elapsed()),
                Ok(None) => return Err(CliError::SubscriptionEnded),
                Err(_) => return Err(CliError::ReceiveTimedOut(ROUND_TRIP_TIMEOUT)),
            }
            counter.set(n);
        }
        let span = Span::of(rounds, payload.len(), start, Instant::now());
        client.close();
        Ok((span, latencies))
    });
    let mut results = watch.wait(vec![job])?;
    let timeline = watch.timeline();
    drop(watch);
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
