//! `reply` (natscli's `service serve`): `--clients` responders in one queue group answer
//! `--msgs` requests between them, for requesters elsewhere.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use rnats::{Client, ConnectOptions, Subscriber};
use tokio::sync::watch;

use super::Plan;
use super::pace::Pace;
use super::report::{Figures, Group};
use super::supervisor::{Counter, Supervisor};
use crate::error::CliError;
use crate::stats::Span;

/// The queue group of the bench's responders: the Service API's default one, the group
/// natscli's `bench service serve` answers in, so either tool's requesters reach either
/// tool's responders.
pub(super) const QUEUE: &str = "q";

/// Subscribes `plan.clients` responders, answers `plan.msgs` requests between them, and
/// reports each one's rate (from its first request to its last).
pub(super) async fn run(plan: &Plan) -> Result<Figures, CliError> {
    let mut responders = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        let client = plan
            .connect(ConnectOptions::new(), format!("rnats-bench-reply-{i}"))
            .await?;
        let requests = client
            .queue_subscribe(plan.subject.clone(), QUEUE.to_owned())
            .await?;
        client.flush().await?;
        responders.push((client, requests));
    }
    // The readiness line: requesters started after it are answered.
    eprintln!(
        "answering {} requests on {} (queue group {QUEUE})",
        plan.msgs, plan.subject
    );
    let mut supervisor = Supervisor::new("answered", plan.msgs, plan.progress);
    let answered = Arc::new(AtomicU64::new(0));
    let (done, finished) = watch::channel(false);
    let done = Arc::new(done);
    let tasks = responders
        .into_iter()
        .map(|(client, requests)| {
            let responder = Responder {
                client,
                requests,
                payload: plan.payload.clone(),
                goal: plan.msgs,
                answered: Arc::clone(&answered),
                done: Arc::clone(&done),
                finished: finished.clone(),
                counter: supervisor.counter(),
                pace: plan.pace,
            };
            tokio::spawn(responder.run())
        })
        .collect();
    let (spans, timeline) = supervisor.finish(tasks).await;
    let spans = spans?;
    let spans: Vec<Span> = spans.into_iter().flatten().collect();
    Ok(Figures {
        responders: Group::from_spans(&spans),
        ..Figures::default()
    }
    .over_time(timeline))
}

/// One responder's connection and share of the work.
#[derive(Debug)]
struct Responder {
    client: Client,
    requests: Subscriber,
    payload: bytes::Bytes,
    /// Requests to answer between all responders.
    goal: u64,
    /// Requests answered by all responders so far.
    answered: Arc<AtomicU64>,
    /// Raised by the responder that answers the last request.
    done: Arc<watch::Sender<bool>>,
    finished: watch::Receiver<bool>,
    counter: Counter,
    pace: Pace,
}

impl Responder {
    /// Answers requests until all responders together answered the goal; the span of
    /// those it answered, `None` when it answered none.
    async fn run(mut self) -> Result<Option<Span>, CliError> {
        let mut mine = 0;
        let mut first = None;
        let pacer = (!self.pace.is_free()).then(|| self.pace.start());
        loop {
            let request = tokio::select! {
                request = self.requests.next() => request,
                _ = self.finished.wait_for(|done| *done) => None,
            };
            let Some(request) = request else { break };
            first.get_or_insert_with(Instant::now);
            if let Some(pacer) = &pacer {
                pacer.after(mine + 1).await;
            }
            if let Some(reply) = request.reply {
                self.client.publish(reply, self.payload.clone()).await?;
            }
            mine += 1;
            self.counter.set(mine);
            if self.answered.fetch_add(1, Ordering::Relaxed) + 1 >= self.goal {
                self.client.flush().await?;
                self.done.send_replace(true);
                break;
            }
        }
        self.client.flush().await?;
        Ok(first.map(|start| Span::of(mine, self.payload.len(), start, Instant::now())))
    }
}
