//! The command line of `rnats bench`: natscli's shape (`bench pub foo`, `bench js pub async
//! foo`, `bench kv put`, `bench service request foo`) next to rnats' own benchmark names
//! (`pubsub`, `req`, `lat`, `js-pub`, `js-fetch`, `scale`).
//!
//! Every flag is global to the `bench` subtree, so it goes before or after the subcommand
//! words, as natscli's do.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use rnats::{ConnectOptions, Subject};

use super::BenchKind;
use super::runtime::RuntimeFlavor;
use crate::error::CliError;

/// The subject natscli's forms use when none is given, and rnats' `--subject` default.
const DEFAULT_SUBJECT: &str = "bench";
/// The stream the JetStream benchmarks make for themselves (and delete) unless `--stream`
/// names another.
pub(super) const DEFAULT_STREAM: &str = "RNATS_BENCH";
/// The bucket of the Key-Value benchmarks unless `--bucket` names another.
pub(super) const DEFAULT_BUCKET: &str = "RNATS_BENCH";

/// Options of `rnats bench`.
#[derive(Debug, Clone, Args)]
pub(crate) struct BenchArgs {
    /// Which benchmark to run.
    #[command(subcommand)]
    pub(crate) command: BenchCommand,
    /// What every benchmark takes.
    #[command(flatten)]
    pub(crate) flags: BenchFlags,
}

/// The benchmarks, in natscli's names and rnats' own.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum BenchCommand {
    /// Core publishers: `--clients` of them share `--msgs` messages; publish rate.
    ///
    /// Example: rnats bench pub foo --clients 10 --msgs 10000 --size 512
    Pub(SubjectArg),
    /// Core subscribers: `--clients` of them each receive `--msgs` messages, fed by one
    /// publisher of the run's own.
    ///
    /// Example: rnats bench sub foo --clients 5 --msgs 10000
    Sub(SubjectArg),
    /// `--clients` publishers and `--clients` subscribers at once.
    Pubsub(SubjectArg),
    /// Requesters: `--clients` of them share `--msgs` requests to a responder of the run's
    /// own; request rate and latency.
    ///
    /// Example: rnats bench request foo --clients 4 --msgs 20000
    #[command(visible_alias = "request")]
    Req(SubjectArg),
    /// Answers `--msgs` requests on SUBJECT (in queue group `q`, as natscli's service does),
    /// for requesters elsewhere (`rnats bench service request --server URL`, or natscli's).
    #[command(visible_alias = "serve")]
    Reply(SubjectArg),
    /// natscli's `service request` and `service serve`.
    Service(ServiceArgs),
    /// One connection publishes, flushes and receives its own message, `--msgs` times;
    /// round-trip latency.
    Lat(SubjectArg),
    /// JetStream benchmarks in natscli's form: `js pub [sync|async|atomic|fast] SUBJECT`,
    /// `js fetch`, `js consume`, `js ordered`, `js get sync|batch`.
    Js(JsArgs),
    /// JetStream publishing to a memory stream with `--in-flight` acks outstanding.
    #[command(name = "js-pub")]
    JsPub(SubjectArg),
    /// JetStream: fill a stream, then time a pull consumer fetching `--batch` at a time.
    #[command(name = "js-fetch")]
    JsFetch(SubjectArg),
    /// Key-Value benchmarks: `kv put`, `kv get`.
    Kv(KvArgs),
    /// How a cost grows along AXIS, at 4 or more points (see docs/performance.md, "How costs
    /// grow"); side by side with async-nats in `cargo bench -p rnats-bench --bench scale`.
    Scale(ScaleArgs),
}

/// The optional SUBJECT of natscli's forms.
#[derive(Debug, Clone, Args)]
pub(crate) struct SubjectArg {
    /// Subject to use [default: --subject, else `bench`].
    #[arg(id = "subject_word", value_name = "SUBJECT", value_parser = parse_subject)]
    subject: Option<Subject>,
}

/// `bench service request|serve`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServiceArgs {
    /// Which side.
    #[command(subcommand)]
    mode: ServiceMode,
}

/// The two sides of natscli's service benchmark.
#[derive(Debug, Clone, Subcommand)]
enum ServiceMode {
    /// Sends requests and waits for each reply (as `bench request`).
    Request(SubjectArg),
    /// Answers requests (as `bench reply`).
    Serve(SubjectArg),
}

/// `bench js ...`.
#[derive(Debug, Clone, Args)]
pub(crate) struct JsArgs {
    /// Which JetStream benchmark.
    #[command(subcommand)]
    command: JsCommand,
}

/// natscli's JetStream benchmarks that rnats has.
#[derive(Debug, Clone, Subcommand)]
enum JsCommand {
    /// Publishes to a stream: `sync` awaits each ack, `async` keeps `--batch` acks
    /// outstanding (the default), `atomic` commits `--batch` messages per atomic batch,
    /// `fast` sends `--batch` messages per fast-ingest batch (ADR-50).
    ///
    /// Example: rnats bench js pub async foo --batch 1000 --storage memory
    Pub(JsPubArgs),
    /// Fills a stream, then a durable pull consumer fetches `--batch` at a time.
    ///
    /// Example: rnats bench js fetch --clients 4 --acks none --batch 1000
    Fetch,
    /// As `fetch`, the clients consuming the durable consumer as a continuous stream of
    /// pulls of `--batch` messages.
    ///
    /// Example: rnats bench js consume --clients 4
    Consume,
    /// Fills a stream, then every client reads it through an ordered consumer of its own.
    ///
    /// Example: rnats bench js ordered --clients 2
    Ordered,
    /// Reads a stream (filled first when the run makes it) by gets: `sync` times one
    /// get per message from the first sequence, `batch` one batched direct get (ADR-31) of
    /// `--batch` messages on `--filter` at a time.
    ///
    /// Example: rnats bench js get batch --batch 100 --filter 'bench.>'
    Get(JsGetArgs),
}

/// `bench js get sync|batch`.
#[derive(Debug, Clone, Args)]
pub(crate) struct JsGetArgs {
    /// How to get.
    #[command(subcommand)]
    mode: JsGetMode,
}

/// natscli's two ways of reading a stream by gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
pub(crate) enum JsGetMode {
    /// One get per message, each awaited and timed (a direct get where the stream allows
    /// them, else from the leader).
    Sync,
    /// Batched direct gets of `--batch` messages matching `--filter`, each batch timed.
    Batch,
}

/// `bench js pub [MODE] [SUBJECT]`.
#[derive(Debug, Clone, Args)]
pub(crate) struct JsPubArgs {
    /// `sync`, `async`, `atomic` (alias `batch`) or `fast`, then the subject; or the subject
    /// alone (async).
    #[arg(value_name = "MODE|SUBJECT", num_args = 0..=2)]
    words: Vec<String>,
}

/// `bench kv put|get`.
#[derive(Debug, Clone, Args)]
pub(crate) struct KvArgs {
    /// Which Key-Value benchmark.
    #[command(subcommand)]
    command: KvCommand,
}

/// natscli's Key-Value benchmarks.
#[derive(Debug, Clone, Subcommand)]
enum KvCommand {
    /// `--clients` clients share `--msgs` puts of `--size` bytes, each awaited.
    ///
    /// Example: rnats bench kv put --clients 10 --msgs 10000
    Put,
    /// Fills the bucket, then `--clients` clients share `--msgs` gets, each awaited.
    ///
    /// Example: rnats bench kv get --randomize 1000 --clients 10
    Get,
}

/// `bench scale AXIS`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ScaleArgs {
    /// The axis to grow along (subs, requests, servers, connections, headers, kv-keys,
    /// objects).
    #[arg(value_name = "AXIS", value_parser = super::scale::parse_axis)]
    pub(crate) axis: rnats_bench::scale::Axis,
    /// Also draw the curve as an SVG line chart into this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) svg: Option<PathBuf>,
    /// Run the smallest point of the axis only.
    #[arg(long)]
    pub(crate) smallest: bool,
}

/// The flags of every benchmark (natscli's names), global to `rnats bench`.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Benchmark")]
pub(crate) struct BenchFlags {
    /// Payload size of every message: 128, 128B, 1KB, 1MiB, ...
    #[arg(long, value_name = "SIZE", default_value = "128", value_parser = parse_message_size, global = true)]
    pub(crate) size: usize,
    /// Messages to publish, requests to make, round trips, puts or gets.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100_000,
        value_parser = clap::value_parser!(u64).range(1..),
        global = true
    )]
    pub(crate) msgs: u64,
    /// Concurrent clients, each on its own connection and task.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        global = true
    )]
    pub(crate) clients: usize,
    /// Subject to use when the command line gives none.
    #[arg(long, value_name = "SUBJECT", default_value = DEFAULT_SUBJECT, value_parser = parse_subject, global = true)]
    pub(crate) subject: Subject,
    /// Print one JSON object with every figure instead of a progress bar and tables.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Also write each client's figures to FILE as CSV, in natscli's columns.
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) csv: Option<PathBuf>,
    /// Also draw the run as an SVG chart into FILE: the latency distribution (runs that time
    /// each operation) and the rate over time.
    #[arg(long, value_name = "FILE.svg", global = true)]
    pub(crate) plot: Option<PathBuf>,
    /// Draw a progress bar on a terminal (the default; never when piped).
    #[arg(long, overrides_with = "no_progress", global = true)]
    progress: bool,
    /// No progress bar.
    #[arg(long, global = true)]
    no_progress: bool,
    /// Pause this long after each publish, request or put (e.g. 100us, 1ms).
    #[arg(long, value_name = "DURATION", value_parser = crate::conn::parse_duration, global = true)]
    pub(crate) sleep: Option<Duration>,
    /// Cap the rate of all clients together at about N messages a second (0: no cap).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) throughput: Option<u64>,
    /// With --throughput: run about this long, deriving --msgs from the rate.
    #[arg(long, value_name = "DURATION", value_parser = crate::conn::parse_duration, global = true)]
    pub(crate) duration: Option<Duration>,
    /// Header added to every published message, as Key:Value (repeatable).
    #[arg(long = "header", short = 'H', value_name = "K:V", global = true)]
    pub(crate) headers: Vec<String>,
    /// Publish each message on a subject of its own: SUBJECT.N (natscli's multi-subject
    /// mode; subscribers and streams take SUBJECT.*).
    #[arg(long, global = true)]
    pub(crate) multisubject: bool,
    /// With --multisubject: use this many subjects at most, N going round (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 100_000, global = true)]
    pub(crate) multisubjectmax: u64,
    /// With --multisubject: pick each message's subject at random.
    #[arg(long, global = true)]
    pub(crate) multisubjectrandomize: bool,
    /// Publish the contents of FILE instead of --size bytes.
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) payload: Option<PathBuf>,
    /// lat only: do not flush after each publish, so the client's write policy (linger)
    /// decides when the message leaves.
    #[arg(long, global = true)]
    pub(crate) no_flush: bool,
    /// js-pub only: publish acks outstanding at once (1: each ack awaited before the next
    /// publish; more: pipelined).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        global = true
    )]
    pub(crate) in_flight: Option<usize>,
    /// Messages per fetch (js fetch), acks outstanding (js pub async) or messages per
    /// atomic batch (js pub atomic).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 500,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        global = true
    )]
    pub(crate) batch: usize,
    /// js pub fast: flow acks the server may owe before publishing waits.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u16).range(1..),
        global = true
    )]
    pub(crate) max_outstanding_acks: u16,
    /// JetStream: the stream to use; one that exists is used as it is and kept, one that
    /// does not is made for the run and deleted after it.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_STREAM, global = true)]
    pub(crate) stream: String,
    /// JetStream and Key-Value: storage of a stream or bucket the run makes.
    #[arg(long, value_enum, value_name = "TYPE", default_value_t = Storage::Memory, global = true)]
    pub(crate) storage: Storage,
    /// JetStream and Key-Value: replicas of a stream or bucket the run makes.
    #[arg(long, value_name = "N", default_value_t = 1, global = true)]
    pub(crate) replicas: usize,
    /// JetStream and Key-Value: byte limit of a stream or bucket the run makes (e.g. 1GB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, global = true)]
    pub(crate) maxbytes: Option<usize>,
    /// JetStream: purge an existing stream before the run.
    #[arg(long, global = true)]
    pub(crate) purge: bool,
    /// JetStream: make the stream when it does not exist (rnats always does; accepted for
    /// natscli's command lines).
    #[arg(long, global = true)]
    pub(crate) create: bool,
    /// JetStream publish: set a message id on each message (the stream deduplicates).
    #[arg(long, global = true)]
    pub(crate) dedup: bool,
    /// js fetch: the durable consumer's name.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "rnats-bench",
        global = true
    )]
    pub(crate) consumer: String,
    /// js fetch: the consumer's ack policy.
    #[arg(long, value_enum, value_name = "MODE", default_value_t = AckMode::Explicit, global = true)]
    pub(crate) acks: AckMode,
    /// js fetch: wait for the server to confirm each ack.
    #[arg(long, global = true)]
    pub(crate) doubleack: bool,
    /// js fetch, consume and ordered: the consumer reads only these subjects (repeatable);
    /// js get batch: the subject filter of the gets (one; default `>`).
    #[arg(long, value_name = "SUBJECTS", global = true)]
    pub(crate) filter: Vec<String>,
    /// JetStream publish: the deduplication window of a stream the run makes (server
    /// default: 2m).
    #[arg(long, value_name = "DURATION", value_parser = crate::conn::parse_duration, global = true)]
    pub(crate) dedupwindow: Option<Duration>,
    /// JetStream publish: make the stream with asynchronous persistence (R1 streams only,
    /// not with atomic batches; nats-server 2.12+).
    #[arg(long, global = true)]
    pub(crate) persistasync: bool,
    /// Key-Value: the bucket to use (made for the run when it does not exist).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_BUCKET, global = true)]
    pub(crate) bucket: String,
    /// kv put: history kept per key in a bucket the run makes.
    #[arg(long, value_name = "N", default_value_t = 1, global = true)]
    pub(crate) history: u8,
    /// kv put and get: pick keys at random below N instead of in order (0: in order).
    #[arg(long, value_name = "N", default_value_t = 0, global = true)]
    pub(crate) randomize: u64,
    /// The tokio runtime the clients run on: multi-thread (a worker per core, as
    /// #[tokio::main] gives) or current-thread (everything on one thread, no cross-thread
    /// wake-ups).
    #[arg(long, value_enum, value_name = "FLAVOR", default_value_t = RuntimeFlavor::MultiThread, global = true)]
    pub(crate) runtime: RuntimeFlavor,
    /// Run with the blocking client (rnats::blocking) on plain threads instead of the async
    /// client on a tokio runtime: pub, sub, pubsub, req and lat only.
    #[arg(long, conflicts_with = "runtime", global = true)]
    pub(crate) blocking: bool,
    /// Client tuning knobs, to measure them (see docs/performance.md).
    #[command(flatten)]
    pub(crate) tuning: Tuning,
}

/// Storage of a stream or bucket a benchmark makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Storage {
    /// In memory (rnats' default: it measures the client, not the disk).
    Memory,
    /// On disk (natscli's default).
    File,
}

impl Storage {
    /// The name the JetStream API uses.
    pub(super) fn api_name(self) -> &'static str {
        match self {
            Storage::Memory => "memory",
            Storage::File => "file",
        }
    }
}

/// The ack policy of the fetch benchmark's consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AckMode {
    /// Each message acked.
    Explicit,
    /// No acks.
    None,
    /// The last message of each batch acked, acking everything before it.
    All,
}

/// Connection options under test; unset ones keep the client defaults.
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct Tuning {
    /// Hold publishes up to this many milliseconds to batch them (the linger policy).
    #[arg(long, value_name = "MS", global = true, value_parser = parse_linger_ms)]
    pub(crate) linger_ms: Option<Duration>,
    /// With --linger-ms: write as soon as this many bytes are queued.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024, global = true)]
    pub(crate) linger_bytes: usize,
    /// Bytes of unwritten frames after which publishing waits.
    #[arg(long, value_name = "BYTES", global = true)]
    pub(crate) write_buffer_limit: Option<usize>,
    /// Bytes read from the socket at once.
    #[arg(long, value_name = "BYTES", global = true)]
    pub(crate) read_buffer_capacity: Option<usize>,
}

impl Tuning {
    /// Applies the knobs that were given to `options`.
    pub(super) fn apply(&self, mut options: ConnectOptions) -> ConnectOptions {
        if let Some(delay) = self.linger_ms.filter(|delay| !delay.is_zero()) {
            options = options.linger(delay, self.linger_bytes);
        }
        if let Some(bytes) = self.write_buffer_limit {
            options = options.write_buffer_limit(bytes);
        }
        if let Some(bytes) = self.read_buffer_capacity {
            options = options.read_buffer_size(bytes);
        }
        options
    }
}

/// How JetStream publishing waits for acks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JsPubMode {
    /// Up to N acks outstanding (1: each awaited before the next publish).
    Window(usize),
    /// Atomic batches of N messages, each committed and its ack awaited.
    Atomic(usize),
    /// Fast-ingest batches of `batch` messages, `outstanding` flow acks owed at most.
    Fast {
        /// Messages per batch.
        batch: usize,
        /// Flow acks owed before publishing waits.
        outstanding: u16,
    },
}

/// What the command line asks for, settled: which benchmark, on which subject.
#[derive(Debug, Clone)]
pub(super) struct Chosen {
    /// The benchmark.
    pub(super) kind: BenchKind,
    /// The subject it runs on.
    pub(super) subject: Subject,
    /// js pub: how acks are awaited.
    pub(super) js_pub: JsPubMode,
    /// req: whether the run brings its own responder even against a named server (all
    /// forms but natscli's `service request`, which asks a `service serve` elsewhere).
    pub(super) own_responder: bool,
}

impl BenchArgs {
    /// The benchmark and subject the words of the command line name.
    pub(super) fn chosen(&self) -> Result<Chosen, CliError> {
        let flags = &self.flags;
        let subject = |arg: &SubjectArg| arg.subject.clone().unwrap_or(flags.subject.clone());
        let window = JsPubMode::Window(flags.in_flight.unwrap_or(1));
        let (kind, subject, js_pub) = match &self.command {
            BenchCommand::Pub(s) => (BenchKind::Pub, subject(s), window),
            BenchCommand::Sub(s) => (BenchKind::Sub, subject(s), window),
            BenchCommand::Pubsub(s) => (BenchKind::Pubsub, subject(s), window),
            BenchCommand::Req(s)
            | BenchCommand::Service(ServiceArgs {
                mode: ServiceMode::Request(s),
            }) => (BenchKind::Req, subject(s), window),
            BenchCommand::Reply(s)
            | BenchCommand::Service(ServiceArgs {
                mode: ServiceMode::Serve(s),
            }) => (BenchKind::Reply, subject(s), window),
            BenchCommand::Lat(s) => (BenchKind::Lat, subject(s), window),
            BenchCommand::JsPub(s) => (BenchKind::JsPub, subject(s), window),
            BenchCommand::JsFetch(s) => (BenchKind::JsFetch, subject(s), window),
            BenchCommand::Js(JsArgs {
                command: JsCommand::Pub(words),
            }) => {
                let (mode, subject) = words.settle(flags)?;
                (BenchKind::JsPub, subject, mode)
            }
            BenchCommand::Js(JsArgs {
                command: JsCommand::Fetch,
            }) => (BenchKind::JsFetch, flags.subject.clone(), window),
            BenchCommand::Js(JsArgs {
                command: JsCommand::Consume,
            }) => (BenchKind::JsConsume, flags.subject.clone(), window),
            BenchCommand::Js(JsArgs {
                command: JsCommand::Ordered,
            }) => (BenchKind::JsOrdered, flags.subject.clone(), window),
            BenchCommand::Js(JsArgs {
                command: JsCommand::Get(JsGetArgs { mode }),
            }) => (BenchKind::JsGet(*mode), flags.subject.clone(), window),
            BenchCommand::Kv(KvArgs {
                command: KvCommand::Put,
            }) => (BenchKind::KvPut, flags.subject.clone(), window),
            BenchCommand::Kv(KvArgs {
                command: KvCommand::Get,
            }) => (BenchKind::KvGet, flags.subject.clone(), window),
            BenchCommand::Scale(_) => (BenchKind::Scale, flags.subject.clone(), window),
        };
        let own_responder = !matches!(
            self.command,
            BenchCommand::Service(ServiceArgs {
                mode: ServiceMode::Request(_)
            })
        );
        Ok(Chosen {
            kind,
            subject,
            js_pub,
            own_responder,
        })
    }

    /// Whether a progress bar may be drawn (it is only where stderr is a terminal).
    pub(super) fn wants_progress(&self) -> bool {
        !self.flags.json && !self.flags.no_progress
    }

    /// The number of messages: `--msgs`, or `--throughput` × `--duration` when both are
    /// given, as natscli derives it.
    pub(super) fn msgs(&self) -> Result<u64, CliError> {
        let flags = &self.flags;
        match (flags.duration, flags.throughput.filter(|rate| *rate > 0)) {
            (None, _) => Ok(flags.msgs),
            (Some(_), None) => Err(CliError::Usage("--duration needs --throughput")),
            (Some(duration), Some(rate)) => {
                let msgs = (rate as f64 * duration.as_secs_f64()).round() as u64;
                if msgs == 0 {
                    Err(CliError::Usage(
                        "--throughput × --duration gives no messages: raise either",
                    ))
                } else {
                    Ok(msgs)
                }
            }
        }
    }
}

impl JsPubArgs {
    /// The mode and subject of `js pub [MODE] [SUBJECT]`.
    fn settle(&self, flags: &BenchFlags) -> Result<(JsPubMode, Subject), CliError> {
        let (mode, subject) = match self.words.as_slice() {
            [] => (None, None),
            [one] if is_mode(one) => (Some(one.as_str()), None),
            [one] => (None, Some(one)),
            [mode, subject, ..] => (Some(mode.as_str()), Some(subject)),
        };
        let mode = match mode {
            None | Some("async") => JsPubMode::Window(flags.in_flight.unwrap_or(flags.batch)),
            Some("sync") => JsPubMode::Window(1),
            Some("atomic" | "batch") => JsPubMode::Atomic(flags.batch),
            Some("fast") => JsPubMode::Fast {
                batch: flags.batch,
                outstanding: flags.max_outstanding_acks,
            },
            Some(_) => {
                return Err(CliError::Usage(
                    "js pub takes a mode (sync, async or atomic) and then a subject",
                ));
            }
        };
        let subject = match subject {
            Some(text) => parse_subject(text).map_err(|reason| CliError::InvalidArgument {
                what: "subject",
                given: text.clone(),
                reason,
            })?,
            None => flags.subject.clone(),
        };
        Ok((mode, subject))
    }
}

/// Whether `word` is one of `js pub`'s modes.
fn is_mode(word: &str) -> bool {
    matches!(word, "sync" | "async" | "atomic" | "batch" | "fast")
}

/// Parses a subject that is published to: valid and without wildcards.
pub(super) fn parse_subject(text: &str) -> Result<Subject, String> {
    let subject: Subject = text.parse().map_err(|e| format!("{e}"))?;
    if subject.has_wildcards() {
        return Err("wildcards cannot be published to".to_owned());
    }
    Ok(subject)
}

/// Parses a payload or byte size: a number, with natscli's units (`1KB` is 1024 bytes).
fn parse_size(text: &str) -> Result<usize, String> {
    let bytes = crate::parse::size(text).map_err(|e| e.to_string())?;
    usize::try_from(bytes).map_err(|_| format!("{text} is not a size in bytes"))
}

/// Parses `--linger-ms`: milliseconds, fractions allowed, 0 for no linger. Read here rather
/// than where the delay is used, so that a value no `Duration` holds (negative, NaN,
/// `inf`, `1e300`) is refused with the other flags instead of panicking later.
fn parse_linger_ms(text: &str) -> Result<Duration, String> {
    let bad = |reason: &str| {
        CliError::InvalidArgument {
            what: "--linger-ms",
            given: text.to_owned(),
            reason: reason.to_owned(),
        }
        .to_string()
    };
    let ms: f64 = text
        .trim()
        .parse()
        .map_err(|_| bad("expected a number of milliseconds"))?;
    Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| {
        bad(if ms >= 0.0 {
            "too long for a duration"
        } else {
            "expected 0 or more milliseconds"
        })
    })
}

/// Parses `--size`: a [`parse_size`] no larger than a server takes in one message, so
/// the payload is never a buffer too large to allocate.
fn parse_message_size(text: &str) -> Result<usize, String> {
    crate::parse::message_size(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_must_be_publishable() {
        assert!(parse_subject("bench.a").is_ok());
        assert!(parse_subject("bench.*").is_err());
        assert!(parse_subject("bench.>").is_err());
        assert!(parse_subject("bad subject").is_err());
        assert!(parse_subject("").is_err());
    }

    #[test]
    fn lingers_a_duration_cannot_hold_are_refused() {
        for bad in ["inf", "1e300", "-5", "NaN"] {
            // Accepting the flag is the fault: before the fix, using it panicked.
            assert!(
                bench(&["pub", "foo", "--linger-ms", bad]).is_err(),
                "--linger-ms {bad} was accepted"
            );
        }
        let args = bench(&["pub", "foo", "--linger-ms", "2.5"]).expect("a linger");
        assert_eq!(
            args.flags.tuning.linger_ms,
            Some(Duration::from_micros(2500))
        );
    }

    /// The bench arguments of `argv`, as the whole command line parses them.
    fn bench(argv: &[&str]) -> Result<BenchArgs, clap::Error> {
        use clap::Parser;
        let mut full = vec!["rnats", "bench"];
        full.extend_from_slice(argv);
        match crate::cli::Cli::try_parse_from(full)?.command {
            crate::cli::Command::Bench(args) => Ok(args),
            other => panic!("not a bench command: {other:?}"),
        }
    }

    /// The benchmark and subject `argv` chooses.
    fn chosen(argv: &[&str]) -> Chosen {
        bench(argv)
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
            .chosen()
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
    }

    #[test]
    fn natscli_forms_parse_to_rnats_benchmarks() {
        let c = chosen(&[
            "pub",
            "foo",
            "--clients",
            "10",
            "--msgs",
            "10000",
            "--size",
            "512",
        ]);
        assert_eq!((c.kind, c.subject.as_str()), (BenchKind::Pub, "foo"));
        let c = chosen(&["sub", "foo", "--clients", "5", "--msgs", "10000"]);
        assert_eq!((c.kind, c.subject.as_str()), (BenchKind::Sub, "foo"));
        let c = chosen(&[
            "service",
            "request",
            "--clients",
            "4",
            "svc",
            "--msgs",
            "20000",
        ]);
        assert_eq!((c.kind, c.own_responder), (BenchKind::Req, false));
        let c = chosen(&["service", "serve", "--clients", "4", "svc"]);
        assert_eq!((c.kind, c.subject.as_str()), (BenchKind::Reply, "svc"));
        let c = chosen(&["request", "foo"]);
        assert_eq!((c.kind, c.own_responder), (BenchKind::Req, true));
        let c = chosen(&["js", "pub", "foo", "--create", "--batch", "1000"]);
        assert_eq!(
            (c.kind, c.js_pub),
            (BenchKind::JsPub, JsPubMode::Window(1000))
        );
        let c = chosen(&["js", "pub", "foo", "--purge", "--batch=1", "--clients=10"]);
        assert_eq!(c.js_pub, JsPubMode::Window(1));
        let c = chosen(&["js", "pub", "sync", "foo"]);
        assert_eq!(
            (c.subject.as_str(), c.js_pub),
            ("foo", JsPubMode::Window(1))
        );
        let c = chosen(&["js", "pub", "batch", "foo", "--batch", "50"]);
        assert_eq!(c.js_pub, JsPubMode::Atomic(50));
        let c = chosen(&[
            "js",
            "fetch",
            "--clients",
            "4",
            "--acks=none",
            "--batch=1000",
        ]);
        assert_eq!(c.kind, BenchKind::JsFetch);
        assert_eq!(
            chosen(&["kv", "put", "--clients", "10"]).kind,
            BenchKind::KvPut
        );
        assert_eq!(
            chosen(&["js", "ordered", "--no-progress"]).kind,
            BenchKind::JsOrdered
        );
        assert_eq!(
            chosen(&["js", "consume", "--clients", "4"]).kind,
            BenchKind::JsConsume
        );
        let args = bench(&["js", "fetch", "--filter", "a.>", "--filter", "b.>"]).expect("parses");
        assert_eq!(args.flags.filter, ["a.>", "b.>"]);
        assert_eq!(
            chosen(&["js", "get", "sync"]).kind,
            BenchKind::JsGet(JsGetMode::Sync)
        );
        let args =
            bench(&["js", "get", "batch", "--batch", "100", "--filter", "x.>"]).expect("parses");
        assert_eq!(
            args.chosen().expect("get").kind,
            BenchKind::JsGet(JsGetMode::Batch)
        );
        assert!(bench(&["js", "get"]).is_err());
        let args = bench(&[
            "js",
            "pub",
            "sync",
            "foo",
            "--dedup",
            "--dedupwindow",
            "5m",
            "--persistasync",
        ])
        .expect("parses");
        assert_eq!(args.flags.dedupwindow, Some(Duration::from_secs(300)));
        assert!(args.flags.persistasync);
        let args = bench(&["kv", "get", "--randomize=100000", "--clients", "10"]).expect("parses");
        assert_eq!(args.flags.randomize, 100_000);
        let args = bench(&["pub", "foo", "--sleep=100ns", "--no-progress"]).expect("parses");
        assert_eq!(args.flags.sleep, Some(Duration::from_nanos(100)));
        assert!(!args.wants_progress());
        let args = bench(&[
            "pub",
            "foo",
            "--clients",
            "4",
            "--throughput",
            "50000",
            "--duration",
            "30s",
        ])
        .expect("parses");
        assert_eq!(args.msgs().expect("derived"), 1_500_000);
    }

    #[test]
    fn rnats_forms_keep_working() {
        let c = chosen(&["pub", "--size", "32", "--msgs", "1000000"]);
        assert_eq!((c.kind, c.subject.as_str()), (BenchKind::Pub, "bench"));
        let c = chosen(&["js-pub", "--in-flight", "256", "--subject", "x.y"]);
        assert_eq!((c.kind, c.subject.as_str()), (BenchKind::JsPub, "x.y"));
        assert_eq!(c.js_pub, JsPubMode::Window(256));
        assert_eq!(
            chosen(&["js-fetch", "--batch", "300"]).kind,
            BenchKind::JsFetch
        );
        assert_eq!(
            chosen(&["lat", "--runtime", "current-thread"]).kind,
            BenchKind::Lat
        );
        let args = bench(&["scale", "kv-keys", "--smallest"]).expect("parses");
        assert!(matches!(&args.command, BenchCommand::Scale(s) if s.smallest));
        assert!(bench(&["scale"]).is_err());
        assert!(bench(&["scale", "bogus"]).is_err());
        assert!(bench(&["pub", "subs", "extra"]).is_err());
    }

    #[test]
    fn bad_forms_are_refused() {
        let fast =
            bench(&["js", "pub", "fast", "foo", "--max-outstanding-acks", "3"]).expect("parses");
        assert_eq!(
            fast.chosen().expect("fast").js_pub,
            JsPubMode::Fast {
                batch: 500,
                outstanding: 3
            }
        );
        assert!(
            bench(&["js", "pub", "bogus", "foo"])
                .expect("parses")
                .chosen()
                .is_err()
        );
        assert!(bench(&["pub", "foo.*"]).is_err());
        let args = bench(&["pub", "--duration", "5s"]).expect("parses");
        assert!(args.msgs().is_err());
    }

    #[test]
    fn sizes_take_natscli_units() {
        assert_eq!(parse_size("128"), Ok(128));
        assert_eq!(parse_size("128B"), Ok(128));
        assert_eq!(parse_size("1KB"), Ok(1024));
        assert!(parse_size("-1").is_err());
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn message_sizes_past_what_a_server_takes_are_refused() {
        // Before the fix this parsed, and the run aborted allocating a 1 TiB payload.
        assert!(bench(&["pub", "foo", "--size", "1TB"]).is_err());
        assert!(bench(&["pub", "foo", "--size", "65MiB"]).is_err());
        let args = bench(&["pub", "foo", "--size", "64MiB"]).expect("the largest size");
        assert_eq!(args.flags.size, 64 << 20);
    }
}
