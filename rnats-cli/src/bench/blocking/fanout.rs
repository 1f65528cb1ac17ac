//! `pub`, `sub` and `pubsub` with blocking clients: publisher and subscriber threads on one
//! subject, as [`super::super::fanout`] runs them on tasks.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats::ConnectOptions;
use rnats::Subject;
use rnats::blocking::{Client, Subscriber};

use super::super::Plan;
use super::super::fanout::{Outcome, Roles, STALL_LIMIT, figures, subscriber_options};
use super::super::report::Figures;
use super::super::subscriber::Reception;
use super::super::supervisor::Counter;
use super::watch::{Job, StopFlag, Watch};
use crate::error::CliError;
use crate::stats::Span;

/// How long a subscriber waits for a message before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(100);

/// Runs publishers and subscribers as `roles` says and measures both sides.
pub(super) fn run(plan: &Plan, roles: Roles) -> Result<Figures, CliError> {
    // Subscribers first, each flushed, so the server knows them before the first publish.
    let mut subscriptions = Vec::with_capacity(roles.subscribers);
    for i in 1..=roles.subscribers {
        let name = format!("rnats-bench-sub-{i}");
        let client = plan.connect_blocking(subscriber_options(plan), name)?;
        let subscription = client.subscribe(plan.subject.clone())?;
        client.flush()?;
        subscriptions.push((client, subscription));
    }
    let mut publishers = Vec::with_capacity(roles.publishers);
    for i in 1..=roles.publishers {
        let name = format!("rnats-bench-pub-{i}");
        publishers.push(plan.connect_blocking(ConnectOptions::new(), name)?);
    }

    // Progress follows what is received when anything is, what is published otherwise.
    let receiving = roles.subscribers > 0;
    let mut watch = if receiving {
        let total = plan.msgs.saturating_mul(roles.subscribers as u64);
        Watch::new("received", total, plan.progress).stall_limit(STALL_LIMIT)
    } else {
        Watch::new("published", plan.msgs, plan.progress)
    };

    let mut jobs: Vec<Job<Outcome>> = Vec::with_capacity(roles.subscribers + roles.publishers);
    for (client, subscription) in subscriptions {
        let counter = watch.counter();
        let stop = watch.stop_flag();
        let expected = plan.msgs;
        jobs.push(Box::new(move || {
            Ok(Outcome::Received(receive(
                client,
                subscription,
                expected,
                &counter,
                &stop,
            )))
        }));
    }
    let start = Arc::new(Barrier::new(roles.publishers));
    for (client, msgs) in publishers
        .into_iter()
        .zip(super::super::split(plan.msgs, roles.publishers))
    {
        let publisher = Publisher {
            client,
            subject: plan.subject.clone(),
            payload: plan.payload.clone(),
            pace: plan.pace,
            msgs,
            start: Arc::clone(&start),
            counter: if receiving {
                Counter::default()
            } else {
                watch.counter()
            },
        };
        jobs.push(Box::new(move || publisher.run().map(Outcome::Published)));
    }

    let outcomes = watch.wait(jobs)?;
    let timeline = watch.timeline();
    drop(watch);
    Ok(figures(roles, outcomes)?.over_time(timeline))
}

/// One publishing thread's work.
struct Publisher {
    client: Client,
    subject: Subject,
    payload: Bytes,
    pace: super::super::pace::Pace,
    msgs: u64,
    start: Arc<Barrier>,
    counter: Counter,
}

impl Publisher {
    /// Publishes every message, then flushes: the span ends when the server has them all.
    fn run(self) -> Result<Span, CliError> {
        self.start.wait();
        let start = Instant::now();
        let pacer = (!self.pace.is_free()).then(|| self.pace.start());
        for n in 1..=self.msgs {
            self.client
                .publish(self.subject.clone(), self.payload.clone())?;
            self.counter.set(n);
            if let Some(pacer) = &pacer {
                pacer.after_blocking(n);
            }
        }
        self.client.flush()?;
        let end = Instant::now();
        self.client.close();
        Ok(Span::of(self.msgs, self.payload.len(), start, end))
    }
}

/// Reads messages until all expected ones arrived, the subscription ended, or the watch
/// said stop. Timing runs from the first message to the last, as in `nats bench`.
fn receive(
    client: Client,
    mut subscription: Subscriber,
    expected: u64,
    counter: &Counter,
    stop: &StopFlag,
) -> Reception {
    let mut received = 0;
    let mut bytes = 0u64;
    let mut first = None;
    let mut end = None;
    while received < expected {
        match subscription.next_timeout(POLL) {
            Ok(Some(message)) => {
                if received == 0 {
                    first = Some(Instant::now());
                }
                received += 1;
                bytes += message.payload.len() as u64;
                counter.set(received);
                if received == expected {
                    end = Some(Instant::now());
                }
            }
            Ok(None) => break,
            Err(_) if stop.is_raised() => break,
            Err(_) => {}
        }
    }
    let span = first.zip(end).map(|(start, end)| Span {
        msgs: received,
        bytes,
        start,
        end,
    });
    let dropped = subscription.dropped();
    drop(subscription);
    client.close();
    Reception {
        received,
        expected,
        dropped,
        span,
    }
}
