//! `rnats bench`: publish, subscribe, request and round-trip benchmarks, in the manner of
//! `nats bench`.
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

mod blocking;
mod fanout;
mod jetstream;
mod latency;
mod publisher;
mod report;
mod request;
mod runtime;
mod scale;
mod subscriber;
mod supervisor;
mod target;

use std::io::IsTerminal;

use bytes::Bytes;
use clap::{Args, ValueEnum};
use rnats::{Client, ConnectOptions, Subject};
use serde::Serialize;

use crate::error::CliError;
use report::{BenchReport, Figures};
pub(crate) use runtime::RuntimeFlavor;
use target::Target;

/// Options of `rnats bench`.
#[derive(Debug, Clone, Args)]
pub(crate) struct BenchArgs {
    /// Which benchmark to run.
    #[arg(value_enum)]
    pub(crate) kind: BenchKind,
    /// scale only: the axis to grow along (subs, requests, servers, connections, headers,
    /// kv-keys, objects).
    #[arg(value_name = "AXIS", value_parser = scale::parse_axis)]
    pub(crate) axis: Option<rnats_bench::scale::Axis>,
    /// scale only: also draw the curve as an SVG line chart into this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) svg: Option<std::path::PathBuf>,
    /// scale only: run the smallest point of the axis only.
    #[arg(long)]
    pub(crate) smallest: bool,
    /// Payload size of every message, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 128)]
    pub(crate) size: usize,
    /// Messages to publish (pub, sub, pubsub), requests to make (req) or round trips (lat).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100_000,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub(crate) msgs: u64,
    /// Concurrent publisher, subscriber or requester connections, each on its own task.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
    )]
    pub(crate) clients: usize,
    /// Subject to publish, subscribe and request on.
    #[arg(long, value_name = "SUBJECT", default_value = "bench", value_parser = parse_subject)]
    pub(crate) subject: Subject,
    /// Print one JSON object with every figure instead of a progress bar and a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// lat only: do not flush after each publish, so the client's write policy (linger)
    /// decides when the message leaves.
    #[arg(long)]
    pub(crate) no_flush: bool,
    /// js-pub only: publish acks outstanding at once (1: each ack awaited before the next
    /// publish; more: pipelined).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
    )]
    pub(crate) in_flight: usize,
    /// js-fetch only: messages per fetch request.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 500,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
    )]
    pub(crate) batch: usize,
    /// The tokio runtime the clients run on: multi-thread (a worker per core, as
    /// #[tokio::main] gives) or current-thread (everything on one thread, no cross-thread
    /// wake-ups).
    #[arg(long, value_enum, value_name = "FLAVOR", default_value_t = RuntimeFlavor::MultiThread)]
    pub(crate) runtime: RuntimeFlavor,
    /// Run with the blocking client (rnats::blocking) on plain threads instead of the async
    /// client on a tokio runtime: pub, sub, pubsub, req and lat only.
    #[arg(long, conflicts_with = "runtime")]
    pub(crate) blocking: bool,
    /// Client tuning knobs, to measure them (see docs/performance.md).
    #[command(flatten)]
    pub(crate) tuning: Tuning,
}

/// Connection options under test; unset ones keep the client defaults.
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct Tuning {
    /// Hold publishes up to this many milliseconds to batch them (the linger policy).
    #[arg(long, value_name = "MS")]
    pub(crate) linger_ms: Option<f64>,
    /// With --linger-ms: write as soon as this many bytes are queued.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024)]
    pub(crate) linger_bytes: usize,
    /// Bytes of unwritten frames after which publishing waits.
    #[arg(long, value_name = "BYTES")]
    pub(crate) write_buffer_limit: Option<usize>,
    /// Bytes read from the socket at once.
    #[arg(long, value_name = "BYTES")]
    pub(crate) read_buffer_capacity: Option<usize>,
}

impl Tuning {
    /// Applies the knobs that were given to `options`.
    fn apply(&self, mut options: ConnectOptions) -> ConnectOptions {
        if let Some(ms) = self.linger_ms.filter(|ms| *ms > 0.0) {
            let delay = std::time::Duration::from_secs_f64(ms / 1000.0);
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

/// The benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum BenchKind {
    /// `--clients` publishers share `--msgs` messages; publish rate.
    Pub,
    /// `--clients` subscribers each receive `--msgs` messages from one publisher.
    Sub,
    /// `--clients` publishers and `--clients` subscribers at once.
    Pubsub,
    /// `--clients` requesters share `--msgs` requests to one responder; rate and latency.
    Req,
    /// One connection: publish, flush, receive, `--msgs` times; round-trip latency.
    Lat,
    /// JetStream: publish `--msgs` messages to a memory stream on `--subject`, with
    /// `--in-flight` acks outstanding; rate and publish-to-ack latency.
    JsPub,
    /// JetStream: fill a memory stream with `--msgs` messages, then time a pull consumer
    /// fetching them `--batch` at a time, acking each one.
    JsFetch,
    /// How a cost grows along AXIS, at 4 or more points (see docs/performance.md, "How costs
    /// grow"); side by side with async-nats in `cargo bench -p rnats-bench --bench scale`.
    Scale,
}

/// Runs a benchmark against `server` (a private nats-server when `None`) and prints its report.
pub(crate) fn run(args: BenchArgs, server: Option<&str>) -> Result<(), CliError> {
    args.check()?;
    if let (BenchKind::Scale, Some(axis)) = (args.kind, args.axis) {
        return scale::run(&args, axis, server);
    }
    let jetstream = matches!(args.kind, BenchKind::JsPub | BenchKind::JsFetch);
    let target = Target::resolve(server, jetstream)?;
    let plan = Plan {
        url: target.url(),
        subject: args.subject.clone(),
        payload: Bytes::from(vec![b'x'; args.size]),
        msgs: args.msgs,
        clients: args.clients,
        progress: !args.json && std::io::stderr().is_terminal(),
        tuning: args.tuning,
        flush_each: !args.no_flush,
        in_flight: args.in_flight,
        batch: args.batch,
    };
    let figures = if args.blocking {
        blocking::run(&plan, args.kind)
    } else {
        plan.execute_on(args.runtime, args.kind)
    };
    let report = BenchReport {
        kind: args.kind,
        server: plan.url,
        private_server: target.is_private(),
        runtime: if args.blocking {
            report::BLOCKING
        } else {
            args.runtime.name()
        },
        msg_size: args.size,
        msgs: args.msgs,
        clients: args.clients,
        figures: figures?,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{report}");
    }
    Ok(())
}

impl BenchArgs {
    /// Rejects combinations clap cannot check on its own.
    fn check(&self) -> Result<(), CliError> {
        if (self.kind == BenchKind::Scale) != self.axis.is_some() {
            return Err(CliError::Usage(scale::NEEDS_AXIS));
        }
        if self.blocking && !blocking::supports(self.kind) {
            return Err(CliError::Usage(blocking::NOT_CORE));
        }
        let shared_out = matches!(
            self.kind,
            BenchKind::Pub | BenchKind::Pubsub | BenchKind::Req
        );
        if shared_out && self.clients as u64 > self.msgs {
            return Err(CliError::TooManyClients {
                clients: self.clients,
                msgs: self.msgs,
            });
        }
        Ok(())
    }
}

/// What every benchmark needs once the arguments are settled and a server is up.
#[derive(Debug, Clone)]
struct Plan {
    /// The server to connect to.
    url: String,
    /// The subject everything happens on.
    subject: Subject,
    /// The payload of every message and request.
    payload: Bytes,
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
    /// js-pub: acks outstanding at once.
    in_flight: usize,
    /// js-fetch: messages per fetch.
    batch: usize,
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
            BenchKind::Lat => latency::run(self).await,
            BenchKind::JsPub => jetstream::run(self).await,
            BenchKind::JsFetch => jetstream::fetch(self).await,
            BenchKind::Scale => Err(CliError::Usage(scale::NEEDS_AXIS)),
        }
    }

    /// Connects one client named `name` (shown in the server's monitoring).
    async fn connect(&self, options: ConnectOptions, name: String) -> Result<Client, CliError> {
        self.tuning
            .apply(options)
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

/// Parses `--subject`: a valid subject without wildcards, since it is published to.
fn parse_subject(text: &str) -> Result<Subject, String> {
    let subject: Subject = text.parse().map_err(|e| format!("{e}"))?;
    if subject.has_wildcards() {
        return Err("wildcards cannot be published to".to_owned());
    }
    Ok(subject)
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

    #[test]
    fn subject_must_be_publishable() {
        assert!(parse_subject("bench.a").is_ok());
        assert!(parse_subject("bench.*").is_err());
        assert!(parse_subject("bench.>").is_err());
        assert!(parse_subject("bad subject").is_err());
        assert!(parse_subject("").is_err());
    }
}
