//! `js get sync|batch`: clients reading a stream by gets, as natscli's direct-get bench
//! does. Every client reads the same `--msgs` messages (at most what the stream holds) from
//! its first sequence: `sync` one get per message, each timed; `batch` one batched direct
//! get (ADR-31) of `--batch` messages on `--filter` at a time, each batch timed.
//!
//! A stream made for the run (with direct gets allowed) is filled first, untimed; an
//! existing one is read as it is.

use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use rnats::ConnectOptions;
use tokio::sync::Barrier;

use super::Plan;
use super::args::{JsGetMode, JsPubMode};
use super::jetstream::{Made, finish_stream, prepare_stream, publish_pipelined};
use super::report::{Figures, Group};
use super::supervisor::{Counter, Supervisor};
use crate::error::CliError;
use crate::stats::{Latencies, Span};

/// Runs `plan.clients` getters over the stream, as `mode` says.
pub(super) async fn run(plan: &Plan, mode: JsGetMode) -> Result<Figures, CliError> {
    let filter = match plan.store.filter.as_slice() {
        [] => ">".to_owned(),
        [one] => one.clone(),
        _ => return Err(CliError::Usage("`js get batch` takes one --filter")),
    };
    let client = plan
        .connect(ConnectOptions::new(), "rnats-bench-js-get".to_owned())
        .await?;
    let js = rnats::jetstream::new(client);
    let made = prepare_stream(&js, plan, JsPubMode::Window(1)).await?;
    if made == Made::ForTheRun {
        let subjects = (0..plan.msgs).map(|_| plan.subject.clone());
        publish_pipelined(&js, subjects, &plan.payload).await?;
    }
    let result = get_all(plan, mode, filter).await;
    finish_stream(&js, &plan.store.stream, made).await?;
    result
}

/// Connects the getters, runs them together and gathers what they measured.
async fn get_all(plan: &Plan, mode: JsGetMode, filter: String) -> Result<Figures, CliError> {
    let mut getters = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        let client = plan
            .connect(ConnectOptions::new(), format!("rnats-bench-js-get-{i}"))
            .await?;
        let stream = rnats::jetstream::new(client)
            .get_stream(plan.store.stream.as_str())
            .await
            .map_err(get_error)?;
        getters.push(stream);
    }
    let Some(first) = getters.first() else {
        return Err(CliError::Usage("`js get` needs a client"));
    };
    let state = &first.cached_info().state;
    let msgs = plan.msgs.min(state.messages);
    if msgs == 0 {
        return Err(CliError::Usage(
            "the stream has no messages for `js get` to read",
        ));
    }
    let first_sequence = state.first_sequence;
    let total = msgs.saturating_mul(plan.clients as u64);
    let mut supervisor = Supervisor::new("msgs", total, plan.progress);
    let start = Arc::new(Barrier::new(plan.clients));
    let tasks = getters
        .into_iter()
        .map(|stream| {
            let getter = Getter {
                stream,
                plan: plan.clone(),
                mode,
                filter: filter.clone(),
                msgs,
                first_sequence,
                start: Arc::clone(&start),
                counter: supervisor.counter(),
            };
            tokio::spawn(getter.run())
        })
        .collect();
    let (results, timeline) = supervisor.finish(tasks).await;
    let (spans, latencies): (Vec<Span>, Vec<Latencies>) = results?.into_iter().unzip();
    Ok(Figures {
        getters: Group::from_spans(&spans),
        ..Figures::default()
    }
    .timed(&latencies)
    .over_time(timeline))
}

/// One client of a `js get` run.
#[derive(Debug)]
struct Getter {
    stream: rnats::jetstream::stream::Stream,
    plan: Plan,
    mode: JsGetMode,
    filter: String,
    /// Messages to read.
    msgs: u64,
    /// Where `sync` starts.
    first_sequence: u64,
    start: Arc<Barrier>,
    counter: Counter,
}

impl Getter {
    /// Reads its messages; the span and the latency of each get (or batch).
    async fn run(self) -> Result<(Span, Latencies), CliError> {
        let mut latencies = Latencies::new();
        let direct = self.stream.cached_info().config.allow_direct;
        let pacer = (!self.plan.pace.is_free()).then(|| self.plan.pace.start());
        self.start.wait().await;
        let start = Instant::now();
        match self.mode {
            JsGetMode::Sync => {
                for n in 1..=self.msgs {
                    let sequence = self.first_sequence + n - 1;
                    let sent = Instant::now();
                    if direct {
                        self.stream.direct_get(sequence).await.map_err(get_error)?;
                    } else {
                        self.stream
                            .get_raw_message(sequence)
                            .await
                            .map_err(get_error)?;
                    }
                    latencies.record(sent.elapsed());
                    self.counter.set(n);
                    if let Some(pacer) = &pacer {
                        pacer.after(n).await;
                    }
                }
            }
            JsGetMode::Batch => self.batches(&mut latencies).await?,
        }
        let span = Span::of(self.msgs, self.plan.payload.len(), start, Instant::now());
        Ok((span, latencies))
    }

    /// Batched direct gets of `--batch` messages, each request timed until its last message.
    async fn batches(&self, latencies: &mut Latencies) -> Result<(), CliError> {
        let (mut got, mut next) = (0u64, 1u64);
        while got < self.msgs {
            let size = (self.msgs - got).min(self.plan.batch as u64);
            let sent = Instant::now();
            let mut batch = self
                .stream
                .direct_batch(self.filter.as_str())
                .sequence(next)
                .batch(size as usize)
                .max_messages(size)
                .send()
                .await
                .map_err(get_error)?;
            let before = got;
            while let Some(message) = batch.next().await {
                let message = message.map_err(get_error)?;
                next = message.sequence + 1;
                got += 1;
                self.counter.set(got);
            }
            latencies.record(sent.elapsed());
            if got == before {
                return Err(CliError::Usage(
                    "`js get batch` ran out of messages matching --filter",
                ));
            }
        }
        Ok(())
    }
}

/// Any get error, boxed.
fn get_error(error: impl Into<rnats::Error>) -> CliError {
    CliError::JetStreamConsumer(error.into())
}
