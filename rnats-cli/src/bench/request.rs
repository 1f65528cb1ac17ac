//! `req`: requesters against one responder; request rate and latency.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats::{Client, ConnectOptions, Subject, Subscriber};
use tokio::sync::Barrier;
use tokio::task::JoinHandle;

use super::Plan;
use super::pace::Pace;
use super::report::{Figures, Group};
use super::supervisor::{Counter, Supervisor};
use crate::error::CliError;
use crate::stats::{Latencies, Span};

/// What one requester measured.
#[derive(Debug)]
struct Requested {
    span: Span,
    latencies: Latencies,
}

/// Starts a responder, runs the requesters, and reports their rates and latencies.
pub(super) async fn run(plan: &Plan) -> Result<Figures, CliError> {
    // natscli's `service request` against a named server asks a `serve` elsewhere.
    let responding = if plan.own_responder {
        let responder = plan
            .connect(ConnectOptions::new(), "rnats-bench-responder".to_owned())
            .await?;
        let requests = responder
            .queue_subscribe(plan.subject.clone(), super::reply::QUEUE.to_owned())
            .await?;
        responder.flush().await?;
        Some(tokio::spawn(respond(
            responder,
            requests,
            plan.payload.clone(),
        )))
    } else {
        None
    };

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
                pace: plan.pace,
            };
            tokio::spawn(job.run())
        })
        .collect();
    let (waited, supervisor_timeline) = supervisor.finish(tasks).await;
    let results = match waited {
        Ok(results) => results,
        // A responder that failed explains the requesters' timeouts better than they do.
        Err(e) => match responding {
            Some(responding) => return Err(responder_error(responding).await.unwrap_or(e)),
            None => return Err(e),
        },
    };
    if let Some(responding) = responding {
        responding.abort();
    }
    let timeline = supervisor_timeline;

    let spans: Vec<Span> = results.iter().map(|r| r.span).collect();
    let latencies: Vec<Latencies> = results.into_iter().map(|r| r.latencies).collect();
    Ok(Figures {
        requesters: Group::from_spans(&spans),
        ..Figures::default()
    }
    .timed(&latencies)
    .over_time(timeline))
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
    pace: Pace,
}

impl Job {
    /// Makes its requests one after the other, timing each from send to reply.
    async fn run(self) -> Result<Requested, CliError> {
        let mut latencies = Latencies::new();
        self.start.wait().await;
        let start = Instant::now();
        let pacer = (!self.pace.is_free()).then(|| self.pace.start());
        for n in 1..=self.requests {
            let sent = Instant::now();
            self.client
                .request(self.subject.clone(), self.payload.clone())
                .await?;
            latencies.record(sent.elapsed());
            self.counter.set(n);
            if let Some(pacer) = &pacer {
                pacer.after(n).await;
            }
        }
        let span = Span::of(self.requests, self.payload.len(), start, Instant::now());
        Ok(Requested { span, latencies })
    }
}
