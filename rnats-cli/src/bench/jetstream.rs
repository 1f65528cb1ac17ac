//! `js pub` (`js-pub`): JetStream publishing, each ack awaited, pipelined, or per atomic
//! batch; `js fetch` (`js-fetch`): durable pull consumers fetching from a filled stream.
//!
//! The stream is `--stream` (rnats' own `RNATS_BENCH` by default). One that does not exist
//! is made for the run and deleted after it; one that exists is used as it is (purged first
//! with `--purge`; `js fetch` reads what it holds rather than filling it) and kept, except
//! rnats' own, which is made anew.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rnats::ConnectOptions;
use rnats::jetstream::consumer::{AckPolicy, pull};
use rnats::jetstream::context::Publish;
use rnats::jetstream::response::Response;
use serde_json::json;
use tokio::sync::Barrier;

use super::Plan;
use super::args::{AckMode, DEFAULT_STREAM, JsPubMode};
use super::report::{Figures, Group};
use super::supervisor::{Counter, Supervisor};
use crate::error::CliError;
use crate::stats::{Latencies, Span};

/// How long one fetch waits for messages: short, so a client whose share ran out notices.
const FETCH_EXPIRY: Duration = Duration::from_millis(250);

/// Publishes `plan.msgs` messages from `plan.clients` clients, acks awaited as
/// `plan.js_pub` says.
pub(super) async fn run(plan: &Plan) -> Result<Figures, CliError> {
    let admin = plan
        .connect(ConnectOptions::new(), "rnats-bench-js-admin".to_owned())
        .await?;
    let admin = rnats::jetstream::new(admin);
    let made = prepare_stream(&admin, plan, plan.js_pub).await?;

    let mut publishers = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        let client = plan
            .connect(ConnectOptions::new(), format!("rnats-bench-js-pub-{i}"))
            .await?;
        let window = match plan.js_pub {
            JsPubMode::Window(n) => n,
            JsPubMode::Atomic(_) | JsPubMode::Fast { .. } => 1,
        };
        publishers.push(
            rnats::jetstream::ContextBuilder::new()
                .max_ack_inflight(window)
                .build(client),
        );
    }
    let mut supervisor = Supervisor::new("msgs", plan.msgs, plan.progress);
    let start = Arc::new(Barrier::new(plan.clients));
    let tasks = publishers
        .into_iter()
        .zip(super::split(plan.msgs, plan.clients))
        .enumerate()
        .map(|(i, (context, msgs))| {
            let job = JsPublisher {
                context,
                plan: plan.clone(),
                msgs,
                id_prefix: format!("{}-{i}-", nuid::next()),
                start: Arc::clone(&start),
                counter: supervisor.counter(),
            };
            tokio::spawn(job.run())
        })
        .collect();
    let (results, timeline) = supervisor.finish(tasks).await;
    finish_stream(&admin, &plan.store.stream, made).await?;
    let (spans, latencies): (Vec<Span>, Vec<Latencies>) = results?.into_iter().unzip();
    Ok(Figures {
        publishers: Group::from_spans(&spans),
        ..Figures::default()
    }
    .timed(&latencies)
    .over_time(timeline))
}

/// One publishing client's share of a `js pub` run.
#[derive(Debug)]
struct JsPublisher {
    context: rnats::jetstream::Context,
    plan: Plan,
    msgs: u64,
    /// Message ids are this prefix and a sequence number (`--dedup`).
    id_prefix: String,
    start: Arc<Barrier>,
    counter: Counter,
}

impl JsPublisher {
    /// Publishes its share; the latency of each awaited ack (window 1) or atomic batch.
    async fn run(self) -> Result<(Span, Latencies), CliError> {
        let plan = &self.plan;
        let mut latencies = Latencies::new();
        self.start.wait().await;
        let start = Instant::now();
        match plan.js_pub {
            JsPubMode::Window(window) => self.windowed(window, &mut latencies).await?,
            JsPubMode::Atomic(batch) => self.atomic(batch, &mut latencies).await?,
            JsPubMode::Fast { batch, outstanding } => {
                self.fast(batch, outstanding, &mut latencies).await?;
            }
        }
        let span = Span::of(self.msgs, plan.payload.len(), start, Instant::now());
        Ok((span, latencies))
    }

    /// Up to `window` acks outstanding; with a window of 1 each ack is timed.
    async fn windowed(&self, window: usize, latencies: &mut Latencies) -> Result<(), CliError> {
        let plan = &self.plan;
        let mut pending = VecDeque::with_capacity(window);
        let pacer = (!plan.pace.is_free()).then(|| plan.pace.start());
        for n in 1..=self.msgs {
            let sent = Instant::now();
            let publish = self.message(n);
            pending.push_back(
                self.context
                    .send_publish(self.subject_of(n), publish)
                    .await?,
            );
            if pending.len() >= window {
                if let Some(ack) = pending.pop_front() {
                    ack.await?;
                }
                if window == 1 {
                    latencies.record(sent.elapsed());
                }
            }
            self.counter.set(n);
            if let Some(pacer) = &pacer {
                pacer.after(n).await;
            }
        }
        for ack in pending {
            ack.await?;
        }
        Ok(())
    }

    /// Atomic batches of `batch` messages, each committed and its ack timed.
    async fn atomic(&self, batch: usize, latencies: &mut Latencies) -> Result<(), CliError> {
        let mut n = 0;
        while n < self.msgs {
            let size = (self.msgs - n).min(batch as u64);
            let sent = Instant::now();
            let mut open = self.context.atomic_batch();
            for i in 1..=size {
                let message = self.message(n + i);
                if i == size {
                    open.commit_message(self.subject_of(n + i), message)
                        .await
                        .map_err(|e| CliError::JetStreamConsumer(e.into()))?;
                    break;
                }
                open.add_message(self.subject_of(n + i), message)
                    .await
                    .map_err(|e| CliError::JetStreamConsumer(e.into()))?;
            }
            latencies.record(sent.elapsed());
            n += size;
            self.counter.set(n);
        }
        Ok(())
    }

    /// Fast-ingest batches of `batch` messages, `outstanding` flow acks owed at most, each
    /// batch's final ack timed.
    async fn fast(
        &self,
        batch: usize,
        outstanding: u16,
        latencies: &mut Latencies,
    ) -> Result<(), CliError> {
        let failed = |e: rnats::jetstream::fast_ingest::FastIngestError| {
            CliError::JetStreamConsumer(e.into())
        };
        let mut n = 0;
        while n < self.msgs {
            let size = (self.msgs - n).min(batch as u64);
            let sent = Instant::now();
            let mut open = self
                .context
                .fast_ingest()
                .max_outstanding_acks(outstanding)
                .start()
                .await
                .map_err(failed)?;
            for i in 1..size {
                open.publish_message(self.subject_of(n + i), self.message(n + i))
                    .await
                    .map_err(failed)?;
                self.counter.set(n + i);
            }
            open.commit_message(self.subject_of(n + size), self.message(n + size))
                .await
                .map_err(failed)?;
            latencies.record(sent.elapsed());
            n += size;
            self.counter.set(n);
        }
        Ok(())
    }

    /// The subject of the `n`-th message: the plan's, or one of its own (`--multisubject`,
    /// at random from a state derived from `n`).
    fn subject_of(&self, n: u64) -> String {
        match &self.plan.multi {
            Some(multi) => {
                let mut seed = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                multi.subject(&self.plan.subject, n, &mut seed)
            }
            None => self.plan.subject.to_string(),
        }
    }

    /// The `n`-th message: the payload, the `--header`s and, with `--dedup`, a message id.
    fn message(&self, n: u64) -> Publish {
        let plan = &self.plan;
        let mut publish = Publish::build().payload(plan.payload.clone());
        if let Some(headers) = &plan.headers {
            publish = publish.headers(headers.clone());
        }
        if plan.store.dedup {
            publish = publish.message_id(format!("{}{n}", self.id_prefix));
        }
        publish
    }
}

/// Times `plan.clients` clients fetching from one durable pull consumer, `plan.batch` at a
/// time, acked as `--acks` says. A stream made for the run is first filled with `plan.msgs`
/// messages (pipelined, not timed); an existing stream is read as it is (natscli's way),
/// up to `plan.msgs` of its messages, and the consumer removed afterwards.
pub(super) async fn fetch(plan: &Plan, pull: Pull) -> Result<Figures, CliError> {
    let client = plan
        .connect(ConnectOptions::new(), "rnats-bench-js-fetch".to_owned())
        .await?;
    let js = rnats::jetstream::new(client);
    let made = prepare_stream(&js, plan, JsPubMode::Window(1)).await?;
    if made == Made::ForTheRun {
        fill(&js, plan).await?;
    }
    let stream = js
        .get_stream(plan.store.stream.as_str())
        .await
        .map_err(consumer_error)?;
    let ack_policy = match plan.store.acks {
        AckMode::Explicit => AckPolicy::Explicit,
        AckMode::None => AckPolicy::None,
        AckMode::All => AckPolicy::All,
    };
    // `--filter` as natscli takes it; else a stream made for the run is read on its
    // subject and an existing one whole.
    let (filter_subject, filter_subjects) = match (made, plan.store.filter.as_slice()) {
        (_, [one]) => (one.clone(), Vec::new()),
        (_, [_, _, ..]) => (String::new(), plan.store.filter.clone()),
        (Made::ForTheRun, []) => (plan.subject.to_string(), Vec::new()),
        (Made::Existing, []) => (String::new(), Vec::new()),
    };
    let mut consumer: rnats::jetstream::consumer::PullConsumer = stream
        .create_consumer(pull::Config {
            durable_name: Some(plan.store.consumer.clone()),
            ack_policy,
            filter_subject,
            filter_subjects,
            ..Default::default()
        })
        .await
        .map_err(consumer_error)?;
    let available = consumer.info().await.map_err(consumer_error)?.num_pending;
    let msgs = plan.msgs.min(available);
    if msgs == 0 {
        let _ = stream.delete_consumer(&plan.store.consumer).await;
        return Err(CliError::Usage(
            "the stream has no messages for `js fetch` or `js consume` to read",
        ));
    }
    let result = fetch_with(plan, msgs, pull).await;
    if made == Made::Existing {
        let _ = stream.delete_consumer(&plan.store.consumer).await;
    }
    finish_stream(&js, &plan.store.stream, made).await?;
    result
}

/// `js ordered`: every client reads up to `plan.msgs` messages of the stream (filled first
/// when made for the run) through an ordered consumer of its own, as natscli's does.
pub(super) async fn ordered(plan: &Plan) -> Result<Figures, CliError> {
    let client = plan
        .connect(ConnectOptions::new(), "rnats-bench-js-ordered".to_owned())
        .await?;
    let js = rnats::jetstream::new(client);
    let made = prepare_stream(&js, plan, JsPubMode::Window(1)).await?;
    if made == Made::ForTheRun {
        fill(&js, plan).await?;
    }
    let stream = js
        .get_stream(plan.store.stream.as_str())
        .await
        .map_err(consumer_error)?;
    let msgs = plan.msgs.min(matching(&stream, &plan.store.filter).await?);
    if msgs == 0 {
        finish_stream(&js, &plan.store.stream, made).await?;
        return Err(CliError::Usage(
            "the stream has no messages for `js ordered` to read",
        ));
    }
    let total = msgs.saturating_mul(plan.clients as u64);
    let mut supervisor = Supervisor::new("received", total, plan.progress);
    let mut tasks = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        let client = plan
            .connect(ConnectOptions::new(), format!("rnats-bench-js-ordered-{i}"))
            .await?;
        let handle = rnats::jetstream::new(client)
            .get_stream(plan.store.stream.as_str())
            .await
            .map_err(consumer_error)?;
        let counter = supervisor.counter();
        let size = plan.payload.len();
        let filter = plan.store.filter.clone();
        tasks.push(tokio::spawn(async move {
            let consumer = handle
                .create_consumer(pull::OrderedConfig {
                    filter_subjects: filter,
                    ..Default::default()
                })
                .await
                .map_err(consumer_error)?;
            let mut messages = consumer.messages().await.map_err(consumer_error)?;
            let (mut received, mut first) = (0u64, None);
            while received < msgs {
                let Some(message) = messages.next().await else {
                    break;
                };
                message.map_err(consumer_error)?;
                first.get_or_insert_with(Instant::now);
                received += 1;
                counter.set(received);
            }
            Ok(first.map(|start| Span::of(received, size, start, Instant::now())))
        }));
    }
    let (results, timeline) = supervisor.finish(tasks).await;
    finish_stream(&js, &plan.store.stream, made).await?;
    let spans: Vec<Span> = results?.into_iter().flatten().collect();
    Ok(Figures {
        subscribers: Group::from_spans(&spans),
        ..Figures::default()
    }
    .over_time(timeline))
}

/// How many messages of `stream` match `filters` (all of them when there are none): the
/// pending count of a short-lived consumer with those filters, exact however they overlap.
async fn matching(
    stream: &rnats::jetstream::stream::Stream,
    filters: &[String],
) -> Result<u64, CliError> {
    if filters.is_empty() {
        return Ok(stream.cached_info().state.messages);
    }
    let mut probe: rnats::jetstream::consumer::PullConsumer = stream
        .create_consumer(pull::Config {
            filter_subjects: filters.to_vec(),
            inactive_threshold: Duration::from_secs(10),
            ..Default::default()
        })
        .await
        .map_err(consumer_error)?;
    let info = probe.info().await.map_err(consumer_error)?;
    let (pending, name) = (info.num_pending, info.name.clone());
    let _ = stream.delete_consumer(&name).await;
    Ok(pending)
}

/// Publishes `plan.msgs` messages to the plan's subject, up to 256 acks outstanding.
async fn fill(js: &rnats::jetstream::Context, plan: &Plan) -> Result<(), CliError> {
    let subjects = (0..plan.msgs).map(|_| plan.subject.clone());
    publish_pipelined(js, subjects, &plan.payload).await
}

/// Publishes `payload` once to each of `subjects` (untimed set-up), with up to 256 acks
/// outstanding.
pub(super) async fn publish_pipelined<S: rnats::ToSubject>(
    js: &rnats::jetstream::Context,
    subjects: impl Iterator<Item = S>,
    payload: &bytes::Bytes,
) -> Result<(), CliError> {
    let mut pending = VecDeque::with_capacity(256);
    for subject in subjects {
        pending.push_back(js.publish(subject, payload.clone()).await?);
        if pending.len() >= 256
            && let Some(ack) = pending.pop_front()
        {
            ack.await?;
        }
    }
    for ack in pending {
        ack.await?;
    }
    Ok(())
}

/// Runs the fetching clients until they have `msgs` messages between them.
async fn fetch_with(plan: &Plan, msgs: u64, pull: Pull) -> Result<Figures, CliError> {
    let mut supervisor = Supervisor::new("msgs", msgs, plan.progress);
    let received = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::with_capacity(plan.clients);
    for i in 1..=plan.clients {
        let client = plan
            .connect(ConnectOptions::new(), format!("rnats-bench-js-fetch-{i}"))
            .await?;
        let consumer: rnats::jetstream::consumer::PullConsumer = rnats::jetstream::new(client)
            .get_consumer_from_stream(plan.store.consumer.as_str(), plan.store.stream.as_str())
            .await
            .map_err(consumer_error)?;
        let fetcher = Fetcher {
            consumer,
            plan: plan.clone(),
            pull,
            msgs,
            received: Arc::clone(&received),
            counter: supervisor.counter(),
        };
        tasks.push(tokio::spawn(fetcher.run()));
    }
    let (results, timeline) = supervisor.finish(tasks).await;
    let spans: Vec<Span> = results?.into_iter().flatten().collect();
    Ok(Figures {
        subscribers: Group::from_spans(&spans),
        ..Figures::default()
    }
    .over_time(timeline))
}

/// How the clients of `js fetch` and `js consume` pull.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pull {
    /// One fetch of `--batch` messages after another.
    Fetch,
    /// A continuous stream of pulls (the library's `messages()`).
    Consume,
}

/// One fetching client of a `js fetch` or `js consume` run.
#[derive(Debug)]
struct Fetcher {
    consumer: rnats::jetstream::consumer::PullConsumer,
    plan: Plan,
    pull: Pull,
    /// Messages to receive between all clients.
    msgs: u64,
    /// Messages received by all clients together.
    received: Arc<AtomicU64>,
    counter: Counter,
}

impl Fetcher {
    /// Fetches until all clients together have every message; the span of what this one
    /// got, `None` when it got nothing.
    async fn run(self) -> Result<Option<Span>, CliError> {
        if self.pull == Pull::Consume {
            return self.consume().await;
        }
        let (msgs, batch) = (self.msgs, self.plan.batch);
        let acks = self.plan.store.acks;
        let mut mine = 0;
        let mut first = None;
        while self.received.load(Ordering::Relaxed) < msgs {
            let mut messages = self
                .consumer
                .fetch()
                .max_messages(batch)
                .expires(FETCH_EXPIRY)
                .messages()
                .await
                .map_err(consumer_error)?;
            let mut last = None;
            while let Some(message) = messages.next().await {
                let message = message.map_err(consumer_error)?;
                first.get_or_insert_with(Instant::now);
                match acks {
                    AckMode::Explicit if self.plan.store.double_ack => {
                        message.double_ack().await.map_err(consumer_error)?;
                    }
                    AckMode::Explicit => message.ack().await.map_err(consumer_error)?,
                    AckMode::All => last = Some(message),
                    AckMode::None => {}
                }
                mine += 1;
                self.counter.set(mine);
                self.received.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(message) = last {
                message.ack().await.map_err(consumer_error)?;
            }
        }
        let size = self.plan.payload.len();
        Ok(first.map(|start| Span::of(mine, size, start, Instant::now())))
    }

    /// Consumes until all clients together have every message, acking each (or the last of
    /// every `--batch` with `--acks all`).
    async fn consume(self) -> Result<Option<Span>, CliError> {
        let mut messages = self
            .consumer
            .stream()
            .max_messages_per_batch(self.plan.batch)
            .messages()
            .await
            .map_err(consumer_error)?;
        let acks = self.plan.store.acks;
        let (mut mine, mut first) = (0u64, None);
        while self.received.load(Ordering::Relaxed) < self.msgs {
            // Wake now and then to see whether the other clients finished the job.
            let Ok(next) = tokio::time::timeout(FETCH_EXPIRY, messages.next()).await else {
                continue;
            };
            let Some(message) = next else { break };
            let message = message.map_err(consumer_error)?;
            first.get_or_insert_with(Instant::now);
            mine += 1;
            let last_of_batch = mine % self.plan.batch as u64 == 0;
            match acks {
                AckMode::Explicit if self.plan.store.double_ack => {
                    message.double_ack().await.map_err(consumer_error)?;
                }
                AckMode::Explicit => message.ack().await.map_err(consumer_error)?,
                AckMode::All if last_of_batch => message.ack().await.map_err(consumer_error)?,
                AckMode::All | AckMode::None => {}
            }
            self.counter.set(mine);
            self.received.fetch_add(1, Ordering::Relaxed);
        }
        let size = self.plan.payload.len();
        Ok(first.map(|start| Span::of(mine, size, start, Instant::now())))
    }
}

/// Whether the run made the stream (and so deletes it afterwards).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Made {
    /// Made for the run.
    ForTheRun,
    /// Existed before; kept.
    Existing,
}

/// Makes the run's stream, or takes the existing one as the module doc says.
pub(super) async fn prepare_stream(
    js: &rnats::jetstream::Context,
    plan: &Plan,
    mode: JsPubMode,
) -> Result<Made, CliError> {
    let store = &plan.store;
    let name = store.stream.as_str();
    let info: Response<serde_json::Value> = js.request(format!("STREAM.INFO.{name}"), &()).await?;
    if info.into_result().is_ok() {
        if name != DEFAULT_STREAM {
            if store.purge {
                let purged: Response<serde_json::Value> =
                    js.request(format!("STREAM.PURGE.{name}"), &()).await?;
                purged.into_result().map_err(CliError::JetStreamRefused)?;
            }
            return Ok(Made::Existing);
        }
        let _: serde_json::Value = js.request(format!("STREAM.DELETE.{name}"), &()).await?;
    }
    let subjects = match plan.multi {
        Some(_) => super::multisubject::MultiSubject::filter(&plan.subject),
        None => plan.subject.to_string(),
    };
    let mut config = json!({
        "name": name,
        "subjects": [subjects],
        "storage": store.storage,
        "num_replicas": store.replicas,
        // natscli's bench streams allow direct gets, which `js get` reads with.
        "allow_direct": true,
    });
    if let Some(max_bytes) = store.max_bytes {
        config["max_bytes"] = json!(max_bytes);
    }
    if let Some(window) = store.dedup_window {
        config["duplicate_window"] = json!(window.as_nanos() as u64);
    }
    // As natscli: asynchronous persistence only where the server allows it, on R1 file
    // streams without atomic batches.
    let persistable = store.replicas == 1 && store.storage == "file";
    if store.persist_async && persistable && !matches!(mode, JsPubMode::Atomic(_)) {
        config["persist_mode"] = json!("async");
    }
    match mode {
        JsPubMode::Atomic(_) => config["allow_atomic"] = json!(true),
        JsPubMode::Fast { .. } => config["allow_batched"] = json!(true),
        JsPubMode::Window(_) => {}
    }
    let created: Response<serde_json::Value> =
        js.request(format!("STREAM.CREATE.{name}"), &config).await?;
    created
        .into_result()
        .map(|_| Made::ForTheRun)
        .map_err(CliError::JetStreamRefused)
}

/// Deletes the stream when the run made it.
pub(super) async fn finish_stream(
    js: &rnats::jetstream::Context,
    name: &str,
    made: Made,
) -> Result<(), CliError> {
    if made == Made::ForTheRun {
        let _: serde_json::Value = js.request(format!("STREAM.DELETE.{name}"), &()).await?;
    }
    Ok(())
}

/// Any JetStream consumer-side error, boxed.
fn consumer_error(error: impl Into<rnats::Error>) -> CliError {
    CliError::JetStreamConsumer(error.into())
}
