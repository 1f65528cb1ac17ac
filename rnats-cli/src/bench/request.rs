//! `req`: requesters against one responder; request rate and latency.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use rnats::{Client, ConnectOptions, Subject, Subscriber};
use tokio::sync::Barrier;
use tokio::task::JoinHandle;

use super::Plan;
use super::report::{Figures, Group};
use super::supervisor::{Counter, Supervisor};
use crate::error::CliError;
use crate::stats::{LatencySummary, Span};

/// What one requester measured.
#[derive(Debug)]
struct Requested {
    span: Span,
    latencies: Vec<Duration>,
}

/// Starts a responder, runs the requesters, and reports their rates and latencies.
pub(super) async fn run(plan: &Plan) -> Result<Figures, CliError> {
    let responder = plan
        .connect(ConnectOptions::new(), "rnats-bench-responder".to_owned())
        .await?;
    let requests = responder.subscribe(plan.subject.clone()).await?;
    responder.flush().await?;
    let responding = tokio::spawn(respond(responder, requests, plan.payload.clone()));

    let shares = super::split(plan.msgs, plan.clients);
    let mut requesters = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        requesters.push(
            plan.connect(ConnectOptions::new(), format!("rnats-bench-req-{i}"))
                .await?,
        );
    }
    let mut supervisor = Supervisor::new("requests", plan.msgs, plan.progress);
    let start = Arc::new(Barrier::new(plan.clients));
    let tasks = requesters
        .into_iter()
        .zip(shares)
        .map(|(client, n)| {
            let job = Job {
                client,
                subject: plan.subject.clone(),
                payload: plan.payload.clone(),
                requests: n,
                start: Arc::clone(&start),
                counter: supervisor.counter(),
            };
            tokio::spawn(job.run())
        })
        .collect();
    let waited = supervisor.wait(tasks).await;
    drop(supervisor);
    let results = match waited {
        Ok(results) => results,
        // A responder that failed explains the requesters' timeouts better than they do.
        Err(e) => return Err(responder_error(responding).await.unwrap_or(e)),
    };
    responding.abort();

    let spans: Vec<Span> = results.iter().map(|r| r.span).collect();
    let mut latencies: Vec<Duration> = results.into_iter().flat_map(|r| r.latencies).collect();
    Ok(Figures {
        requesters: Group::from_spans(&spans),
        latency: LatencySummary::from_samples(&mut latencies),
        ..Figures::default()
    })
}

/// Answers every request with `payload` until the subscription ends or the task is aborted.
async fn respond(client: Client, mut requests: Subscriber, payload: Bytes) -> Result<(), CliError> {
    while let Some(request) = requests.next().await {
        if let Some(reply) = request.reply {
            client.publish(reply, payload.clone()).await?;
        }
    }
    Ok(())
}

/// The responder's error, if it has already stopped with one.
async fn responder_error(responding: JoinHandle<Result<(), CliError>>) -> Option<CliError> {
    if !responding.is_finished() {
        responding.abort();
        return None;
    }
    match responding.await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(e) => Some(e.into()),
    }
}

/// One requester's share of the run.
#[derive(Debug)]
struct Job {
    client: Client,
    subject: Subject,
    payload: Bytes,
    requests: u64,
    start: Arc<Barrier>,
    counter: Counter,
}

impl Job {
    /// Makes its requests one after the other, timing each from send to reply.
    async fn run(self) -> Result<Requested, CliError> {
        let capacity = usize::try_from(self.requests).unwrap_or(usize::MAX);
        let mut latencies = Vec::with_capacity(capacity);
        self.start.wait().await;
        let start = Instant::now();
        for n in 1..=self.requests {
            let sent = Instant::now();
            self.client
                .request(self.subject.clone(), self.payload.clone())
                .await?;
            latencies.push(sent.elapsed());
            self.counter.set(n);
        }
        let span = Span::of(self.requests, self.payload.len(), start, Instant::now());
        Ok(Requested { span, latencies })
    }
}
