//! `rnats bench`: publish, subscribe, request, round-trip, JetStream and Key-Value
//! benchmarks, in natscli's command-line shape (`bench pub foo --clients 10`, `bench js pub
//! async foo`, `bench kv get --randomize 1000`; [`args`]) and rnats' own names.
//!
//! Runs are self-contained: `sub` brings its publisher, `request` its responder, `js fetch`
//! and `kv get` fill their stream or bucket first; only natscli's `service request` against
//! a named server asks a `service serve` elsewhere. Latencies go into HdrHistograms
//! ([`crate::stats::Latencies`]); `--csv` writes natscli's columns ([`csv`]) and `--plot`
//! an SVG chart ([`plot`], drawn by `rnats_bench::plot`, the scale curves' code).
//!
//! Every run follows the same shape: connect all clients, subscribe and flush where
//! messages are to be received, release the workers together, watch them through a
//! [`Supervisor`](supervisor::Supervisor) (progress bar, stall detection), then turn what
//! they measured into a [`BenchReport`](report::BenchReport).
//!
//! The clients run on the tokio runtime chosen with `--runtime` ([`RuntimeFlavor`]), built
//! by `Plan::execute_on`; with `--blocking`, [`run`] hands the [`Plan`] to the [`blocking`]
//! module instead (`rnats::blocking` clients on threads, watched by a thread-based
//! progress/stall watch), and the report says `blocking` where it names the runtime.

mod args;
mod blocking;
mod csv;
mod fanout;
mod jetstream;
mod js_get;
mod kv;
mod latency;
mod multisubject;
mod pace;
mod plot;
mod publisher;
mod reply;
mod report;
mod request;
mod runtime;
mod scale;
mod subscriber;
mod supervisor;
mod target;

use std::io::IsTerminal;

use bytes::Bytes;
use rnats::{Client, ConnectOptions, HeaderMap, Subject};
use serde::Serialize;

use crate::error::CliError;
pub(crate) use args::BenchArgs;
use args::{AckMode, BenchCommand, BenchFlags, JsGetMode, JsPubMode, Tuning};
use multisubject::MultiSubject;
use pace::Pace;
use report::{BenchReport, Figures};
pub(crate) use runtime::RuntimeFlavor;
use target::{Access, Target};

use crate::conn::ConnArgs;

/// The benchmarks, as the report names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BenchKind {
    /// `--clients` publishers share `--msgs` messages; publish rate.
    Pub,
    /// `--clients` subscribers each receive `--msgs` messages from one publisher.
    Sub,
    /// `--clients` publishers and `--clients` subscribers at once.
    Pubsub,
    /// `--clients` requesters share `--msgs` requests to one responder; rate and latency.
    Req,
    /// `--clients` responders answer `--msgs` requests between them.
    Reply,
    /// One connection: publish, flush, receive, `--msgs` times; round-trip latency.
    Lat,
    /// JetStream publishing, acks awaited one by one, pipelined or per atomic batch.
    JsPub,
    /// JetStream: a durable pull consumer fetching from a filled stream.
    JsFetch,
    /// JetStream: a durable pull consumer consumed as a continuous stream.
    JsConsume,
    /// JetStream: every client reads the stream through an ordered consumer.
    JsOrdered,
    /// JetStream: every client reads the stream by gets, one by one or batched.
    JsGet(JsGetMode),
    /// Key-Value puts, each awaited.
    KvPut,
    /// Key-Value gets from a filled bucket, each awaited.
    KvGet,
    /// How a cost grows along an axis.
    Scale,
}

impl BenchKind {
    /// The name in the report's first line and in JSON.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BenchKind::Pub => "pub",
            BenchKind::Sub => "sub",
            BenchKind::Pubsub => "pubsub",
            BenchKind::Req => "req",
            BenchKind::Reply => "reply",
            BenchKind::Lat => "lat",
            BenchKind::JsPub => "js-pub",
            BenchKind::JsFetch => "js-fetch",
            BenchKind::JsConsume => "js-consume",
            BenchKind::JsOrdered => "js-ordered",
            BenchKind::JsGet(JsGetMode::Sync) => "js-get-sync",
            BenchKind::JsGet(JsGetMode::Batch) => "js-get-batch",
            BenchKind::KvPut => "kv-put",
            BenchKind::KvGet => "kv-get",
            BenchKind::Scale => "scale",
        }
    }

    /// Whether the benchmark needs JetStream on the server.
    fn needs_jetstream(self) -> bool {
        matches!(
            self,
            BenchKind::JsPub
                | BenchKind::JsFetch
                | BenchKind::JsConsume
                | BenchKind::JsOrdered
                | BenchKind::JsGet(_)
                | BenchKind::KvPut
                | BenchKind::KvGet
        )
    }
}

impl Serialize for BenchKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Runs a benchmark against the server `conn` names (a private nats-server when it names
/// none) and prints its report.
pub(crate) fn run(args: BenchArgs, conn: &ConnArgs) -> Result<(), CliError> {
    if let BenchCommand::Scale(scale) = &args.command {
        return scale::run(&args.flags, scale, conn);
    }
    let chosen = args.chosen()?;
    let kind = chosen.kind;
    let msgs = args.msgs()?;
    let flags = &args.flags;
    check(flags, kind, msgs)?;
    let payload = match &flags.payload {
        Some(path) => Bytes::from(std::fs::read(path).map_err(|source| CliError::ReadFile {
            what: "payload file",
            path: path.clone(),
            source,
        })?),
        None => Bytes::from(vec![b'x'; flags.size]),
    };
    let target = Target::resolve(conn, kind.needs_jetstream())?;
    let plan = Plan {
        url: target.url(),
        access: target.access(),
        subject: chosen.subject,
        msg_size: payload.len(),
        payload,
        headers: crate::parse::headers(&flags.headers)?,
        msgs,
        clients: flags.clients,
        progress: args.wants_progress() && std::io::stderr().is_terminal(),
        tuning: flags.tuning,
        flush_each: !flags.no_flush,
        js_pub: chosen.js_pub,
        own_responder: chosen.own_responder || target.is_private(),
        batch: flags.batch,
        pace: Pace::new(flags.sleep, flags.throughput, flags.clients),
        multi: flags
            .multisubject
            .then(|| MultiSubject::new(flags.multisubjectmax, flags.multisubjectrandomize)),
        store: Store::from_flags(flags),
    };
    let figures = if flags.blocking {
        blocking::run(&plan, kind)
    } else {
        plan.execute_on(flags.runtime, kind)
    };
    let report = BenchReport {
        kind,
        server: plan.url,
        private_server: target.is_private(),
        runtime: if flags.blocking {
            report::BLOCKING
        } else {
            flags.runtime.name()
        },
        msg_size: plan.msg_size,
        msgs,
        clients: flags.clients,
        figures: figures?,
    };
    if let Some(path) = &flags.csv {
        write_file(path, csv::render(&report))?;
    }
    if let Some(path) = &flags.plot {
        let svg = plot::render(&report).map_err(|e| CliError::Plot(e.to_string()))?;
        write_file(path, svg)?;
    }
    if flags.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{report}");
    }
    Ok(())
}

/// Rejects combinations clap cannot check on its own.
fn check(flags: &BenchFlags, kind: BenchKind, msgs: u64) -> Result<(), CliError> {
    if flags.blocking && !blocking::supports(kind) {
        return Err(CliError::Usage(blocking::NOT_CORE));
    }
    if flags.blocking && (!flags.headers.is_empty() || flags.multisubject) {
        return Err(CliError::Usage(
            "--header and --multisubject are not supported with --blocking",
        ));
    }
    let spreads = matches!(
        kind,
        BenchKind::Pub | BenchKind::Sub | BenchKind::Pubsub | BenchKind::JsPub
    );
    if flags.multisubject && !spreads {
        return Err(CliError::Usage(
            "--multisubject applies to pub, sub, pubsub and js pub",
        ));
    }
    let shared_out = matches!(
        kind,
        BenchKind::Pub
            | BenchKind::Pubsub
            | BenchKind::Req
            | BenchKind::Reply
            | BenchKind::KvPut
            | BenchKind::KvGet
    );
    if shared_out && flags.clients as u64 > msgs {
        return Err(CliError::TooManyClients {
            clients: flags.clients,
            msgs,
        });
    }
    Ok(())
}

/// Writes `contents` to `path`.
fn write_file(path: &std::path::Path, contents: String) -> Result<(), CliError> {
    std::fs::write(path, contents).map_err(|source| CliError::WriteFile {
        path: path.to_path_buf(),
        source,
    })
}

/// Where the JetStream and Key-Value benchmarks keep their messages.
#[derive(Debug, Clone)]
struct Store {
    /// The stream (JetStream benchmarks).
    stream: String,
    /// The bucket (Key-Value benchmarks).
    bucket: String,
    /// Storage of what the run makes: `memory` or `file`.
    storage: &'static str,
    /// Replicas of what the run makes.
    replicas: usize,
    /// Byte limit of what the run makes.
    max_bytes: Option<usize>,
    /// Purge an existing stream first.
    purge: bool,
    /// Set a message id on each published message.
    dedup: bool,
    /// The fetch consumer's durable name.
    consumer: String,
    /// The fetch consumer's ack policy.
    acks: AckMode,
    /// Await the server's confirmation of each ack.
    double_ack: bool,
    /// The consumers' subject filters (`js get batch`: its one filter).
    filter: Vec<String>,
    /// Deduplication window of a stream the run makes.
    dedup_window: Option<std::time::Duration>,
    /// Make the stream with asynchronous persistence.
    persist_async: bool,
    /// History per key of a bucket the run makes.
    history: u8,
    /// Keys picked at random below this (0: in order).
    randomize: u64,
}

impl Store {
    /// The store settings the flags give.
    fn from_flags(flags: &BenchFlags) -> Store {
        Store {
            stream: flags.stream.clone(),
            bucket: flags.bucket.clone(),
            storage: flags.storage.api_name(),
            replicas: flags.replicas,
            max_bytes: flags.maxbytes,
            purge: flags.purge,
            dedup: flags.dedup,
            consumer: flags.consumer.clone(),
            acks: flags.acks,
            double_ack: flags.doubleack,
            filter: flags.filter.clone(),
            dedup_window: flags.dedupwindow,
            persist_async: flags.persistasync,
            history: flags.history,
            randomize: flags.randomize,
        }
    }
}

/// What every benchmark needs once the arguments are settled and a server is up.
#[derive(Debug, Clone)]
struct Plan {
    /// The server to connect to.
    url: String,
    /// Credentials and TLS settings of every connection.
    access: Access,
    /// The subject everything happens on.
    subject: Subject,
    /// The payload of every message and request.
    payload: Bytes,
    /// Its length.
    msg_size: usize,
    /// Headers of every published message (`--header`).
    headers: Option<HeaderMap>,
    /// Messages, requests or round trips in all.
    msgs: u64,
    /// Clients per role.
    clients: usize,
    /// Whether to draw a progress bar.
    progress: bool,
    /// Connection options under test, applied to every connection.
    tuning: Tuning,
    /// lat: flush after each publish.
    flush_each: bool,
    /// js-pub: how acks are awaited.
    js_pub: JsPubMode,
    /// req: start a responder for the requesters.
    own_responder: bool,
    /// js-fetch: messages per fetch.
    batch: usize,
    /// How each client is held back (`--sleep`, `--throughput`).
    pace: Pace,
    /// `--multisubject`: each message on a subject of its own.
    multi: Option<MultiSubject>,
    /// Stream and bucket settings.
    store: Store,
}

impl Plan {
    /// Runs the benchmark `kind` on a fresh tokio runtime of flavour `runtime`.
    fn execute_on(&self, runtime: RuntimeFlavor, kind: BenchKind) -> Result<Figures, CliError> {
        let runtime = runtime.build()?;
        let figures = runtime.block_on(self.execute(kind));
        // Stop every connection task before the private server (dropped after us) goes away.
        drop(runtime);
        figures
    }

    /// Runs the benchmark `kind` and returns what it measured.
    async fn execute(&self, kind: BenchKind) -> Result<Figures, CliError> {
        match kind {
            BenchKind::Pub => fanout::run(self, fanout::Roles::publish_only(self.clients)).await,
            BenchKind::Sub => fanout::run(self, fanout::Roles::subscribe_only(self.clients)).await,
            BenchKind::Pubsub => fanout::run(self, fanout::Roles::both(self.clients)).await,
            BenchKind::Req => request::run(self).await,
            BenchKind::Reply => reply::run(self).await,
            BenchKind::Lat => latency::run(self).await,
            BenchKind::JsPub => jetstream::run(self).await,
            BenchKind::JsFetch => jetstream::fetch(self, jetstream::Pull::Fetch).await,
            BenchKind::JsConsume => jetstream::fetch(self, jetstream::Pull::Consume).await,
            BenchKind::JsOrdered => jetstream::ordered(self).await,
            BenchKind::JsGet(mode) => js_get::run(self, mode).await,
            BenchKind::KvPut => kv::put(self).await,
            BenchKind::KvGet => kv::get(self).await,
            BenchKind::Scale => Err(CliError::Usage("`bench scale` runs on its own")),
        }
    }

    /// Connects one client named `name` (shown in the server's monitoring).
    async fn connect(&self, options: ConnectOptions, name: String) -> Result<Client, CliError> {
        self.access
            .apply(self.tuning.apply(options))?
            .name(name)
            .connect(&self.url)
            .await
            .map_err(|source| CliError::Connect {
                url: self.url.clone(),
                source,
            })
    }
}

/// Shares `total` out over `parts` as evenly as possible, the first ones taking one more
/// when it does not divide.
fn split(total: u64, parts: usize) -> Vec<u64> {
    let parts_u64 = parts.max(1) as u64;
    let (base, extra) = (total / parts_u64, total % parts_u64);
    (0..parts_u64)
        .map(|i| base + u64::from(i < extra))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_even_and_complete() {
        assert_eq!(split(10, 3), vec![4, 3, 3]);
        assert_eq!(split(9, 3), vec![3, 3, 3]);
        assert_eq!(split(1, 1), vec![1]);
        assert_eq!(split(100_000, 7).iter().sum::<u64>(), 100_000);
    }
}
