//! `pub`, `sub` and `pubsub`: publishers and subscribers on one subject.

use std::sync::Arc;
use std::time::Duration;

use rnats::{Client, ConnectOptions, Subscriber};
use tokio::sync::Barrier;

use super::Plan;
use super::multisubject::MultiSubject;
use super::publisher::Publisher;
use super::report::{Figures, Group};
use super::subscriber::{Receiver, Reception};
use super::supervisor::{Counter, Supervisor};
use crate::error::{CliError, Shortfall, Shortfalls};
use crate::stats::Span;

/// How long subscribers may go without a single message before the run is called off.
pub(super) const STALL_LIMIT: Duration = Duration::from_secs(5);

/// The client's default subscription queue bounds, used as a floor when sizing queues.
const DEFAULT_QUEUE_MSGS: u64 = 64 * 1024;
/// See [`DEFAULT_QUEUE_MSGS`].
const DEFAULT_QUEUE_BYTES: u64 = 64 * 1024 * 1024;
/// A rough per-message allowance on top of the payload when sizing queues in bytes.
const PER_MESSAGE_OVERHEAD: u64 = 64;

/// How many clients play each role.
#[derive(Debug, Clone, Copy)]
pub(super) struct Roles {
    /// Publishing clients.
    pub(super) publishers: usize,
    /// Subscribing clients.
    pub(super) subscribers: usize,
    /// Whether publisher figures belong in the report: not for `sub`, whose lone publisher
    /// only feeds the subscribers being measured.
    report_publishers: bool,
}

impl Roles {
    /// `pub`: publishers only.
    pub(super) fn publish_only(clients: usize) -> Roles {
        Roles {
            publishers: clients,
            subscribers: 0,
            report_publishers: true,
        }
    }

    /// `sub`: subscribers, fed by one extra publisher.
    pub(super) fn subscribe_only(clients: usize) -> Roles {
        Roles {
            publishers: 1,
            subscribers: clients,
            report_publishers: false,
        }
    }

    /// `pubsub`: as many publishers as subscribers.
    pub(super) fn both(clients: usize) -> Roles {
        Roles {
            publishers: clients,
            subscribers: clients,
            report_publishers: true,
        }
    }
}

/// The result of one worker task.
#[derive(Debug)]
pub(super) enum Outcome {
    /// A publisher's span.
    Published(Span),
    /// What a subscriber got.
    Received(Reception),
}

/// Runs publishers and subscribers as `roles` says and measures both sides.
pub(super) async fn run(plan: &Plan, roles: Roles) -> Result<Figures, CliError> {
    // Subscribers first, each flushed, so the server knows them before the first publish.
    let subscriptions = subscribe_all(plan, roles.subscribers).await?;
    let mut publishers = Vec::with_capacity(roles.publishers);
    for i in 1..=roles.publishers {
        let name = format!("rnats-bench-pub-{i}");
        publishers.push(plan.connect(ConnectOptions::new(), name).await?);
    }

    // Progress follows what is received when anything is, what is published otherwise.
    let receiving = roles.subscribers > 0;
    let mut supervisor = if receiving {
        let total = plan.msgs.saturating_mul(roles.subscribers as u64);
        Supervisor::new("received", total, plan.progress).stall_limit(STALL_LIMIT)
    } else {
        Supervisor::new("published", plan.msgs, plan.progress)
    };

    let mut tasks = Vec::with_capacity(roles.subscribers + roles.publishers);
    for (client, subscription) in subscriptions {
        let receiver = Receiver {
            client,
            subscription,
            expected: plan.msgs,
            counter: supervisor.counter(),
            stop: supervisor.stop_signal(),
        };
        tasks.push(tokio::spawn(async move {
            receiver.run().await.map(Outcome::Received)
        }));
    }
    let start = Arc::new(Barrier::new(roles.publishers));
    for (client, msgs) in publishers
        .into_iter()
        .zip(super::split(plan.msgs, roles.publishers))
    {
        let publisher = Publisher {
            client,
            subject: plan.subject.clone(),
            payload: plan.payload.clone(),
            headers: plan.headers.clone(),
            pace: plan.pace,
            multi: plan.multi,
            msgs,
            start: Arc::clone(&start),
            counter: if receiving {
                Counter::default()
            } else {
                supervisor.counter()
            },
        };
        tasks.push(tokio::spawn(async move {
            publisher.run().await.map(Outcome::Published)
        }));
    }

    let (outcomes, timeline) = supervisor.finish(tasks).await;
    let outcomes = outcomes?;
    Ok(figures(roles, outcomes)?.over_time(timeline))
}

/// Sorts the workers' outcomes by role and checks every subscriber got everything.
pub(super) fn figures(roles: Roles, outcomes: Vec<Outcome>) -> Result<Figures, CliError> {
    let mut published = Vec::new();
    let mut receptions = Vec::new();
    for outcome in outcomes {
        match outcome {
            Outcome::Published(span) => published.push(span),
            Outcome::Received(reception) => receptions.push(reception),
        }
    }
    let received = complete_spans(&receptions)?;
    Ok(Figures {
        publishers: if roles.report_publishers {
            Group::from_spans(&published)
        } else {
            None
        },
        subscribers: Group::from_spans(&received),
        ..Figures::default()
    })
}

/// Connects `n` subscribers and subscribes each to the plan's subject, flushed.
async fn subscribe_all(plan: &Plan, n: usize) -> Result<Vec<(Client, Subscriber)>, CliError> {
    let mut subscriptions = Vec::with_capacity(n);
    for i in 1..=n {
        let name = format!("rnats-bench-sub-{i}");
        let client = plan.connect(subscriber_options(plan), name).await?;
        let subscription = match plan.multi {
            Some(_) => {
                client
                    .subscribe(MultiSubject::filter(&plan.subject))
                    .await?
            }
            None => client.subscribe(plan.subject.clone()).await?,
        };
        client.flush().await?;
        subscriptions.push((client, subscription));
    }
    Ok(subscriptions)
}

/// Subscription queues big enough for the whole run, as `nats bench` lifts its pending
/// limits: the benchmark measures throughput, not the default slow-consumer policy.
pub(super) fn subscriber_options(plan: &Plan) -> ConnectOptions {
    let msgs = plan.msgs.max(DEFAULT_QUEUE_MSGS);
    let per_message = plan.payload.len() as u64 + plan.subject.len() as u64 + PER_MESSAGE_OVERHEAD;
    let bytes = plan
        .msgs
        .saturating_mul(per_message)
        .max(DEFAULT_QUEUE_BYTES);
    ConnectOptions::new()
        .subscription_capacity(usize::try_from(msgs).unwrap_or(usize::MAX))
        .subscription_capacity_bytes(usize::try_from(bytes).unwrap_or(usize::MAX))
}

/// The spans of the subscribers, or the list of those that came up short.
fn complete_spans(receptions: &[Reception]) -> Result<Vec<Span>, CliError> {
    let mut spans = Vec::with_capacity(receptions.len());
    let mut short = Vec::new();
    for (i, r) in receptions.iter().enumerate() {
        match r.span {
            Some(span) if r.received >= r.expected => spans.push(span),
            _ => short.push(Shortfall {
                client: i + 1,
                received: r.received,
                expected: r.expected,
                dropped: r.dropped,
            }),
        }
    }
    if short.is_empty() {
        Ok(spans)
    } else {
        Err(CliError::Incomplete(Shortfalls(short)))
    }
}
