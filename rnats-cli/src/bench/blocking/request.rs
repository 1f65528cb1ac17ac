//! `req` with blocking clients: requester threads against one responder thread.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use bytes::Bytes;
use rnats::blocking::{Client, Subscriber};
use rnats::{ConnectOptions, Subject};

use super::super::Plan;
use super::super::report::{Figures, Group, Timeline};
use super::super::supervisor::Counter;
use super::watch::{Job, Watch};
use crate::error::CliError;
use crate::stats::{Latencies, Span};

/// What one requester measured.
struct Requested {
    span: Span,
    latencies: Latencies,
}

/// Starts a responder, runs the requesters, and reports their rates and latencies.
pub(super) fn run(plan: &Plan) -> Result<Figures, CliError> {
    let responder = plan.connect_blocking(ConnectOptions::new(), "rnats-bench-responder".into())?;
    let requests = responder.subscribe(plan.subject.clone())?;
    responder.flush()?;
    let replier = responder.clone();
    let payload = plan.payload.clone();
    let responding = thread::Builder::new()
        .name("rnats-bench-responder".into())
        .spawn(move || respond(&replier, requests, &payload))
        .map_err(CliError::Runtime)?;

    let waited = requesters(plan);
    // Closing ends the subscription, and with it the responder's loop.
    responder.close();
    let responded = responding.join();
    let (results, timeline) = match (waited, responded) {
        (Ok(results), _) => results,
        // A responder that failed explains the requesters' timeouts better than they do.
        (Err(_), Ok(Err(e))) => return Err(e),
        (Err(e), _) => return Err(e),
    };

    let spans: Vec<Span> = results.iter().map(|r| r.span).collect();
    let latencies: Vec<Latencies> = results.into_iter().map(|r| r.latencies).collect();
    Ok(Figures {
        requesters: Group::from_spans(&spans),
        ..Figures::default()
    }
    .timed(&latencies)
    .over_time(timeline))
}

/// Connects the requesters and runs them, each on its own thread; what they measured and
/// the rate over time.
fn requesters(plan: &Plan) -> Result<(Vec<Requested>, Timeline), CliError> {
    let shares = super::super::split(plan.msgs, plan.clients);
    let mut clients = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        clients.push(plan.connect_blocking(ConnectOptions::new(), format!("rnats-bench-req-{i}"))?);
    }
    let mut watch = Watch::new("requests", plan.msgs, plan.progress);
    let start = Arc::new(Barrier::new(plan.clients));
    let jobs: Vec<Job<Requested>> = clients
        .into_iter()
        .zip(shares)
        .map(|(client, requests)| {
            let requester = Requester {
                client,
                subject: plan.subject.clone(),
                payload: plan.payload.clone(),
                requests,
                start: Arc::clone(&start),
                counter: watch.counter(),
            };
            Box::new(move || requester.run()) as Job<Requested>
        })
        .collect();
    let results = watch.wait(jobs)?;
    Ok((results, watch.timeline()))
}

/// Answers every request with `payload` until the subscription ends.
fn respond(client: &Client, requests: Subscriber, payload: &Bytes) -> Result<(), CliError> {
    for request in requests {
        if let Some(reply) = request.reply {
            client.publish(reply, payload.clone())?;
        }
    }
    Ok(())
}

/// One requester's share of the run.
struct Requester {
    client: Client,
    subject: Subject,
    payload: Bytes,
    requests: u64,
    start: Arc<Barrier>,
    counter: Counter,
}

impl Requester {
    /// Makes its requests one after the other, timing each from send to reply.
    fn run(self) -> Result<Requested, CliError> {
        let mut latencies = Latencies::new();
        self.start.wait();
        let start = Instant::now();
        for n in 1..=self.requests {
            let sent = Instant::now();
            self.client
                .request(self.subject.clone(), self.payload.clone())?;
            latencies.record(sent.elapsed());
            self.counter.set(n);
        }
        let span = Span::of(self.requests, self.payload.len(), start, Instant::now());
        self.client.close();
        Ok(Requested { span, latencies })
    }
}
