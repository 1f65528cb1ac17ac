//! What is measured: the scenarios, their sizes and counts, their metrics and targets.

use std::fmt;
use std::time::Duration;

/// One of the clients under comparison.
///
/// Matches on this type are exhaustive on purpose: a new client is added here, and the
/// compiler then points at every place that must learn about it ([`ClientKind::supports`],
/// the harness's dispatch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClientKind {
    /// This project's async client.
    Rnats,
    /// The reference client, async-nats.
    AsyncNats,
    /// This project's async client on its runtime-neutral backend (the `runtime-neutral`
    /// feature): Core scenarios only, in `async_io::block_on` on the calling thread with no
    /// tokio runtime around.
    RnatsNeutral,
    /// This project's blocking client, [`rnats::blocking`]: Core scenarios only, on plain
    /// threads ([`crate::blocking`]).
    RnatsBlocking,
    /// The raw client's wire handling on tokio ([`crate::raw::on_tokio`]): Core scenarios
    /// only, run on the tokio runtime in the same shape as the async clients. The floor of
    /// that shape: what a client pays for tokio's wake-ups with no library in between.
    RawTokio,
    /// The raw blocking-socket client written for the bench ([`crate::raw`]): the practical
    /// limit for the Core scenarios.
    Raw,
}

impl ClientKind {
    /// Every client, in column order: rnats first, the raw limit last, the raw client on
    /// tokio and the blocking client before it.
    pub const ALL: [ClientKind; 6] = [
        ClientKind::Rnats,
        ClientKind::AsyncNats,
        ClientKind::RnatsNeutral,
        ClientKind::RnatsBlocking,
        ClientKind::RawTokio,
        ClientKind::Raw,
    ];

    /// The name used on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Rnats => "rnats",
            ClientKind::AsyncNats => "async-nats",
            ClientKind::RnatsNeutral => "rnats-neutral",
            ClientKind::RnatsBlocking => "rnats-blocking",
            ClientKind::RawTokio => "raw-tokio",
            ClientKind::Raw => "raw",
        }
    }

    /// The client's key in the JSON output: [`ClientKind::name`] with `_` for `-`.
    pub fn json_key(self) -> &'static str {
        match self {
            ClientKind::Rnats => "rnats",
            ClientKind::AsyncNats => "async_nats",
            ClientKind::RnatsNeutral => "rnats_neutral",
            ClientKind::RnatsBlocking => "rnats_blocking",
            ClientKind::RawTokio => "raw_tokio",
            ClientKind::Raw => "raw",
        }
    }

    /// Parses [`ClientKind::name`].
    pub fn from_name(name: &str) -> Option<ClientKind> {
        ClientKind::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether this client runs on the tokio runtime chosen with `--runtime` (the others
    /// block the calling thread).
    pub fn is_async(self) -> bool {
        match self {
            ClientKind::Rnats | ClientKind::AsyncNats | ClientKind::RawTokio => true,
            ClientKind::RnatsNeutral | ClientKind::RnatsBlocking | ClientKind::Raw => false,
        }
    }

    /// Whether this client can run `scenario`. The raw client speaks Core NATS only and is not
    /// a library whose memory is worth measuring, so it has no JetStream, KV, Object Store or
    /// `mem` figures; the blocking client runs the same Core scenarios, to be compared with it.
    pub fn supports(self, scenario: Scenario) -> bool {
        match self {
            ClientKind::Rnats | ClientKind::AsyncNats => true,
            ClientKind::RnatsNeutral
            | ClientKind::RnatsBlocking
            | ClientKind::RawTokio
            | ClientKind::Raw => scenario.is_core_messaging(),
        }
    }

    /// The order in which `clients` run in round `round`: rotated by one place every round,
    /// so no client always gets the warmer server or the quieter machine.
    pub fn order_for_round(clients: &[ClientKind], round: usize) -> Vec<ClientKind> {
        let mut order = clients.to_vec();
        if !order.is_empty() {
            let len = order.len();
            order.rotate_left(round % len);
        }
        order
    }
}

impl fmt::Display for ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The tokio runtime the async clients run on (`--runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runtime {
    /// Everything on the thread that calls `block_on`: no cross-thread wake-ups.
    CurrentThread,
    /// A worker per core, as `#[tokio::main]` gives.
    #[default]
    MultiThread,
}

impl Runtime {
    /// Both flavours.
    pub const ALL: [Runtime; 2] = [Runtime::CurrentThread, Runtime::MultiThread];

    /// The name used on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::CurrentThread => "current-thread",
            Runtime::MultiThread => "multi-thread",
        }
    }

    /// Parses [`Runtime::name`].
    pub fn from_name(name: &str) -> Option<Runtime> {
        Runtime::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Builds a runtime of this flavour with I/O and timers enabled.
    pub fn build(self) -> std::io::Result<tokio::runtime::Runtime> {
        let mut builder = match self {
            Runtime::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            Runtime::MultiThread => tokio::runtime::Builder::new_multi_thread(),
        };
        builder.enable_all().build()
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the async clients' scenario code runs (`--shape`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// In the future given to `Runtime::block_on`: what `#[tokio::main]` code is, and on the
    /// multi-threaded runtime a thread that is not one of the runtime's workers.
    #[default]
    BlockOn,
    /// In a task spawned on the runtime, awaited from `block_on`: on the multi-threaded
    /// runtime the code runs on a worker.
    Spawn,
}

impl Shape {
    /// Both shapes.
    pub const ALL: [Shape; 2] = [Shape::BlockOn, Shape::Spawn];

    /// The name used on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Shape::BlockOn => "block-on",
            Shape::Spawn => "spawn",
        }
    }

    /// Parses [`Shape::name`].
    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Payload sizes of the throughput scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadSize {
    /// 32 bytes: measures per-message overhead.
    B32,
    /// 1 KiB.
    K1,
    /// 8 KiB: measures copying.
    K8,
}

impl PayloadSize {
    /// The payload length in bytes.
    pub fn bytes(self) -> usize {
        match self {
            PayloadSize::B32 => 32,
            PayloadSize::K1 => 1024,
            PayloadSize::K8 => 8 * 1024,
        }
    }

    /// Messages per run in a full run; bigger payloads use fewer so each run takes similar time.
    fn full_count(self) -> usize {
        match self {
            PayloadSize::B32 => 1_000_000,
            PayloadSize::K1 => 300_000,
            PayloadSize::K8 => 100_000,
        }
    }
}

/// A benchmark scenario. Each runs for every client that supports it
/// ([`ClientKind::supports`]) against the same server.
///
/// JetStream publish (`js-pub`, awaited one by one and pipelined) belongs here once rnats has
/// JetStream; it is left out until then rather than stubbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Publish N messages on one connection with no subscribers, then flush.
    Pub(PayloadSize),
    /// Receive N messages published by a second connection.
    Sub(PayloadSize),
    /// Sequential request/reply against a responder on another connection.
    Req,
    /// publish -> flush -> receive on one connection, back to back.
    Lat,
    /// publish -> flush -> receive after an idle gap.
    LatIdle,
    /// Peak RSS while publishing (Core, then JetStream with unawaited acks bounded by the
    /// in-flight limit), and the RSS cost of idle subscriptions (child processes).
    Mem,
    /// JetStream publish to a memory stream, each ack awaited before the next publish.
    JsPub(PayloadSize),
    /// JetStream publish with up to [`JS_IN_FLIGHT`] acks outstanding.
    JsPipe(PayloadSize),
    /// A pull consumer fetching batches of [`JS_FETCH_BATCH`] from a filled memory stream,
    /// acking each message.
    JsFetch,
    /// Key-Value puts to a memory bucket, each awaited, from this many tasks at once.
    KvPut(usize),
    /// Key-Value gets (direct gets of the last value) from a memory bucket, from this many
    /// tasks at once.
    KvGet(usize),
    /// Object Store put of one [`Plan::object_size`] object into a memory bucket.
    ObjPut,
    /// Object Store get of one [`Plan::object_size`] object, read to the end (digest checked).
    ObjGet,
}

/// Tasks at once in the concurrent Key-Value scenarios (`kv-put16`, `kv-get16`).
pub const KV_TASKS: usize = 16;

/// Messages per fetch in the `js-fetch` scenario.
pub const JS_FETCH_BATCH: usize = 500;

/// Acks outstanding in the pipelined JetStream scenarios.
pub const JS_IN_FLIGHT: usize = 256;

impl Scenario {
    /// Every scenario, in the order a default run goes through them.
    pub const ALL: [Scenario; 21] = [
        Scenario::Pub(PayloadSize::B32),
        Scenario::Pub(PayloadSize::K1),
        Scenario::Pub(PayloadSize::K8),
        Scenario::Sub(PayloadSize::B32),
        Scenario::Sub(PayloadSize::K1),
        Scenario::Sub(PayloadSize::K8),
        Scenario::Req,
        Scenario::Lat,
        Scenario::LatIdle,
        Scenario::Mem,
        Scenario::JsPub(PayloadSize::B32),
        Scenario::JsPub(PayloadSize::K1),
        Scenario::JsPipe(PayloadSize::B32),
        Scenario::JsPipe(PayloadSize::K1),
        Scenario::JsFetch,
        Scenario::KvPut(1),
        Scenario::KvPut(KV_TASKS),
        Scenario::KvGet(1),
        Scenario::KvGet(KV_TASKS),
        Scenario::ObjPut,
        Scenario::ObjGet,
    ];

    /// The name used on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Pub(PayloadSize::B32) => "pub32",
            Scenario::Pub(PayloadSize::K1) => "pub1k",
            Scenario::Pub(PayloadSize::K8) => "pub8k",
            Scenario::Sub(PayloadSize::B32) => "sub32",
            Scenario::Sub(PayloadSize::K1) => "sub1k",
            Scenario::Sub(PayloadSize::K8) => "sub8k",
            Scenario::Req => "req",
            Scenario::Lat => "lat",
            Scenario::LatIdle => "lat-idle",
            Scenario::Mem => "mem",
            Scenario::JsPub(PayloadSize::B32) => "js-pub32",
            Scenario::JsPub(_) => "js-pub1k",
            Scenario::JsPipe(PayloadSize::B32) => "js-pipe32",
            Scenario::JsPipe(_) => "js-pipe1k",
            Scenario::JsFetch => "js-fetch",
            Scenario::KvPut(1) => "kv-put",
            Scenario::KvPut(_) => "kv-put16",
            Scenario::KvGet(1) => "kv-get",
            Scenario::KvGet(_) => "kv-get16",
            Scenario::ObjPut => "obj-put",
            Scenario::ObjGet => "obj-get",
        }
    }

    /// Parses [`Scenario::name`].
    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether this is a Core NATS messaging scenario (`pub`, `sub`, `req`, `lat`,
    /// `lat-idle`): plain PUB/SUB/MSG traffic that any client, the raw one included, can run.
    pub fn is_core_messaging(self) -> bool {
        match self {
            Scenario::Pub(_)
            | Scenario::Sub(_)
            | Scenario::Req
            | Scenario::Lat
            | Scenario::LatIdle => true,
            Scenario::Mem
            | Scenario::JsPub(_)
            | Scenario::JsPipe(_)
            | Scenario::JsFetch
            | Scenario::KvPut(_)
            | Scenario::KvGet(_)
            | Scenario::ObjPut
            | Scenario::ObjGet => false,
        }
    }

    /// The clients among `wanted` that can run this scenario, in the order of `wanted`.
    pub fn clients(self, wanted: &[ClientKind]) -> Vec<ClientKind> {
        wanted
            .iter()
            .copied()
            .filter(|c| c.supports(self))
            .collect()
    }

    /// What one run of this scenario reports, in the order the run returns the values.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Scenario::Pub(PayloadSize::B32) => PUB_32,
            Scenario::Pub(PayloadSize::K1) => PUB_1K,
            Scenario::Pub(PayloadSize::K8) => PUB_LARGE,
            Scenario::Sub(PayloadSize::B32) => SUB_SMALL,
            Scenario::Sub(PayloadSize::K1 | PayloadSize::K8) => SUB_LARGE,
            Scenario::Req => REQ,
            Scenario::Lat => LAT,
            Scenario::LatIdle => LAT_IDLE,
            Scenario::Mem => MEM,
            Scenario::JsPub(_) => JS_PUB,
            Scenario::JsPipe(_) => JS_PIPE,
            Scenario::JsFetch => JS_FETCH,
            Scenario::KvPut(_) | Scenario::KvGet(_) => KV,
            Scenario::ObjPut | Scenario::ObjGet => OBJ,
        }
    }
}

/// What every run costs the process per operation, shown under each scenario's own metrics:
/// voluntary and involuntary context switches and CPU time (user plus system), from
/// `getrusage` around the run, divided by the run's operations. Process-wide, so a tokio
/// runtime's workers count as much as the calling thread; the server is another process.
pub const COST: [Metric; 3] = [
    cost("vol. switches/op", Unit::Count),
    cost("invol. switches/op", Unit::Count),
    cost("CPU µs/op", Unit::Micros),
];

/// What every run costs the server, when the harness knows its process (it started the server,
/// or was given `--server-pid`): its CPU time per operation. Times a row's rate, it is the cores
/// the server kept busy; the server reads a connection on one thread, so a publishing row that
/// keeps it about one core busy is bound by the server, whatever the client does. Connecting
/// and setting up are inside the run, as for [`COST`].
pub const SERVER_COST: Metric = cost("server CPU µs/op", Unit::Micros);

/// A cost per operation: lower is better, shown for context (no target).
const fn cost(name: &'static str, unit: Unit) -> Metric {
    Metric {
        name,
        unit,
        better: Better::Lower,
        target: None,
        vs_raw: None,
        blocking_vs_raw: None,
    }
}

// The targets come from the project issues that set rnats's performance goals: ratios to
// async-nats from the first, ratios of rnats and of the blocking client to the raw
// blocking-socket limit from issue 11.
const PUB_32: &[Metric] = &[
    rate("msgs/s", Some(1.35))
        .with_raw_target(0.85, None)
        .with_blocking_target(0.9),
    MB_PER_SEC,
];
const PUB_1K: &[Metric] = &[
    rate("msgs/s", Some(1.35)).with_raw_target(0.85, None),
    MB_PER_SEC,
];
const PUB_LARGE: &[Metric] = &[rate("msgs/s", Some(1.05)), MB_PER_SEC];
const SUB_SMALL: &[Metric] = &[
    rate("msgs/s", Some(1.3)).with_raw_target(0.9, None),
    MB_PER_SEC,
];
const SUB_LARGE: &[Metric] = &[
    rate("msgs/s", Some(1.2)).with_raw_target(0.9, None),
    MB_PER_SEC,
];
const REQ: &[Metric] = &[
    rate("req/s", Some(1.5))
        .with_raw_target(0.9, None)
        .with_blocking_target(0.9),
    p50(Some(0.65)),
    P99,
];
// Issue 11 sets the raw target of the busy round trip for the current-thread runtime only.
const LAT: &[Metric] = &[
    p50(Some(0.8))
        .with_raw_target(1.3, Some(Runtime::CurrentThread))
        .with_blocking_target(1.15),
    P99,
];
const LAT_IDLE: &[Metric] = &[p50(Some(0.75)).with_blocking_target(1.15), P99];
const JS_PUB: &[Metric] = &[rate("msgs/s", Some(1.25)), MEAN_ACK];
const JS_PIPE: &[Metric] = &[rate("msgs/s", Some(1.2)), MB_PER_SEC];
const JS_FETCH: &[Metric] = &[rate("msgs/s", Some(1.2)), MB_PER_SEC];
// The Object Store must be no slower than async-nats.
const OBJ: &[Metric] = &[
    Metric {
        name: "MB/s",
        unit: Unit::MbPerSec,
        better: Better::Higher,
        target: Some(1.0),
        vs_raw: None,
        blocking_vs_raw: None,
    },
    Metric {
        name: "time per object",
        unit: Unit::Micros,
        better: Better::Lower,
        target: None,
        vs_raw: None,
        blocking_vs_raw: None,
    },
];
const KV: &[Metric] = &[rate("ops/s", Some(1.0)), MEAN_OP];
const MEAN_OP: Metric = Metric {
    name: "mean operation time",
    unit: Unit::Micros,
    better: Better::Lower,
    target: None,
    vs_raw: None,
    blocking_vs_raw: None,
};
const MEAN_ACK: Metric = Metric {
    name: "mean publish-to-ack time",
    unit: Unit::Micros,
    better: Better::Lower,
    target: None,
    vs_raw: None,
    blocking_vs_raw: None,
};
const MEM: &[Metric] = &[
    Metric {
        name: "peak RSS, publishing",
        unit: Unit::MiB,
        better: Better::Lower,
        target: Some(1.0),
        vs_raw: None,
        blocking_vs_raw: None,
    },
    Metric {
        name: "peak RSS, publishing 8 KiB",
        unit: Unit::MiB,
        better: Better::Lower,
        target: Some(1.0),
        vs_raw: None,
        blocking_vs_raw: None,
    },
    Metric {
        name: "RSS per idle subscription",
        unit: Unit::Bytes,
        better: Better::Lower,
        target: None,
        vs_raw: None,
        blocking_vs_raw: None,
    },
    Metric {
        name: "peak RSS, JetStream pipelined",
        unit: Unit::MiB,
        better: Better::Lower,
        target: Some(1.0),
        vs_raw: None,
        blocking_vs_raw: None,
    },
];
const MB_PER_SEC: Metric = Metric {
    name: "MB/s",
    unit: Unit::MbPerSec,
    better: Better::Higher,
    target: None,
    vs_raw: None,
    blocking_vs_raw: None,
};
const P99: Metric = Metric {
    name: "p99 latency",
    unit: Unit::Micros,
    better: Better::Lower,
    target: None,
    vs_raw: None,
    blocking_vs_raw: None,
};

const fn rate(name: &'static str, target: Option<f64>) -> Metric {
    Metric {
        name,
        unit: Unit::PerSec,
        better: Better::Higher,
        target,
        vs_raw: None,
        blocking_vs_raw: None,
    }
}

const fn p50(target: Option<f64>) -> Metric {
    Metric {
        name: "p50 latency",
        unit: Unit::Micros,
        better: Better::Lower,
        target,
        vs_raw: None,
        blocking_vs_raw: None,
    }
}

impl Metric {
    /// This metric with a target for rnats / raw as well.
    const fn with_raw_target(mut self, ratio: f64, runtime: Option<Runtime>) -> Metric {
        self.vs_raw = Some(RawTarget { ratio, runtime });
        self
    }

    /// This metric with a target for rnats-blocking / raw as well (on any runtime: neither
    /// client runs on it).
    const fn with_blocking_target(mut self, ratio: f64) -> Metric {
        self.blocking_vs_raw = Some(ratio);
        self
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which direction of a metric is the good one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Throughput: more is better.
    Higher,
    /// Latency and memory: less is better.
    Lower,
}

/// How a metric's values are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Operations per second.
    PerSec,
    /// Megabytes (10^6 bytes) of payload per second.
    MbPerSec,
    /// Microseconds.
    Micros,
    /// Mebibytes.
    MiB,
    /// Bytes.
    Bytes,
    /// A count per operation (context switches), to two decimals.
    Count,
}

/// One number a scenario reports, with the ratio it should reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    /// What is measured, e.g. "msgs/s".
    pub name: &'static str,
    /// How the values are printed.
    pub unit: Unit,
    /// Which direction is better.
    pub better: Better,
    /// The rnats/async-nats ratio to reach: at least this when higher is better, at most this
    /// when lower is better. `None` for metrics shown for context only.
    pub target: Option<f64>,
    /// The rnats/raw ratio to reach, read the same way; `None` without one.
    pub vs_raw: Option<RawTarget>,
    /// The rnats-blocking/raw ratio to reach, read the same way; `None` without one.
    pub blocking_vs_raw: Option<f64>,
}

/// A target for the ratio of rnats to the raw blocking-socket limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawTarget {
    /// The ratio: at least this when higher is better, at most this when lower is better.
    pub ratio: f64,
    /// The runtime the target is set for; `None` for both.
    pub runtime: Option<Runtime>,
}

impl RawTarget {
    /// Whether the target applies to a run on `runtime`.
    pub fn applies_to(&self, runtime: Runtime) -> bool {
        self.runtime.is_none_or(|r| r == runtime)
    }
}

impl Metric {
    /// Whether `ratio` (rnats / async-nats) meets the target; `None` without a target.
    pub fn meets_target(&self, ratio: f64) -> Option<bool> {
        Some(self.meets(ratio, self.target?))
    }

    /// Whether `ratio` (rnats / raw) meets the raw target on `runtime`; `None` without a
    /// target that applies there.
    pub fn meets_raw_target(&self, ratio: f64, runtime: Runtime) -> Option<bool> {
        let target = self.vs_raw.filter(|t| t.applies_to(runtime))?;
        Some(self.meets(ratio, target.ratio))
    }

    /// Whether `ratio` (rnats-blocking / raw) meets its target; `None` without one.
    pub fn meets_blocking_target(&self, ratio: f64) -> Option<bool> {
        Some(self.meets(ratio, self.blocking_vs_raw?))
    }

    /// `ratio` against `bound` in this metric's direction.
    fn meets(&self, ratio: f64, bound: f64) -> bool {
        match self.better {
            Better::Higher => ratio >= bound,
            Better::Lower => ratio <= bound,
        }
    }
}

/// How much work each scenario does: the full sizes, or about 1/50 of them with `--quick`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Smoke-test sizes.
    pub quick: bool,
}

impl Plan {
    /// The operations a run of `scenario` makes, to divide its costs by: messages, requests
    /// or round trips; `None` for `mem`, which runs in child processes.
    pub fn operations(&self, scenario: Scenario) -> Option<usize> {
        Some(match scenario {
            Scenario::Pub(size) | Scenario::Sub(size) => self.messages(size),
            Scenario::Req => self.requests(),
            Scenario::Lat => self.latency_iterations(),
            Scenario::LatIdle => self.idle_latency_iterations(),
            Scenario::Mem => return None,
            Scenario::JsPub(_) => self.js_messages(false),
            Scenario::JsPipe(_) | Scenario::JsFetch => self.js_messages(true),
            Scenario::KvPut(_) | Scenario::KvGet(_) => self.kv_operations(),
            // Per object moved.
            Scenario::ObjPut | Scenario::ObjGet => 1,
        })
    }

    /// Messages per `pub`/`sub` run.
    pub fn messages(&self, size: PayloadSize) -> usize {
        self.scale(size.full_count())
    }

    /// Sequential requests per `req` run.
    pub fn requests(&self) -> usize {
        self.scale(20_000)
    }

    /// Iterations per `lat` run (quick mode keeps enough for a p99 to mean something).
    pub fn latency_iterations(&self) -> usize {
        if self.quick { 200 } else { 2_000 }
    }

    /// Iterations per `lat-idle` run; each costs one idle gap of wall time.
    pub fn idle_latency_iterations(&self) -> usize {
        if self.quick { 20 } else { 200 }
    }

    /// The pause before each `lat-idle` iteration.
    pub fn idle_gap(&self) -> Duration {
        Duration::from_millis(20)
    }

    /// Messages of [`Plan::memory_payload`] bytes published in the peak-RSS probe.
    pub fn memory_messages(&self) -> usize {
        self.scale(1_000_000)
    }

    /// Messages per JetStream publish run: each-ack runs cost a round trip per message.
    pub fn js_messages(&self, pipelined: bool) -> usize {
        self.scale(if pipelined { 100_000 } else { 10_000 })
    }

    /// Bytes of the object in the `obj-*` scenarios: 64 MiB (4 MiB with `--quick`).
    pub fn object_size(&self) -> usize {
        if self.quick { 4 << 20 } else { 64 << 20 }
    }

    /// Operations per Key-Value run, over all its tasks.
    pub fn kv_operations(&self) -> usize {
        self.scale(20_000)
    }

    /// Payload size of the peak-RSS probe.
    pub fn memory_payload(&self) -> usize {
        1024
    }

    /// Messages per large-payload (8 KiB) peak-RSS probe: a burst of 800 MB in a full run.
    pub fn memory_large_messages(&self) -> usize {
        self.scale(100_000)
    }

    /// Idle subscriptions made in the RSS-per-subscription probe.
    pub fn idle_subscriptions(&self) -> usize {
        if self.quick { 1_000 } else { 10_000 }
    }

    fn scale(&self, full: usize) -> usize {
        if self.quick { (full / 50).max(1) } else { full }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for scenario in Scenario::ALL {
            assert_eq!(Scenario::from_name(scenario.name()), Some(scenario));
        }
        for client in ClientKind::ALL {
            assert_eq!(ClientKind::from_name(client.name()), Some(client));
        }
        assert_eq!(Scenario::from_name("js-pub"), None);
        assert_eq!(
            Scenario::from_name("kv-get16"),
            Some(Scenario::KvGet(KV_TASKS))
        );
        assert_eq!(
            Scenario::from_name("js-pipe1k"),
            Some(Scenario::JsPipe(PayloadSize::K1))
        );
    }

    #[test]
    fn target_direction_follows_the_metric() {
        let msgs = Scenario::Pub(PayloadSize::B32).metrics()[0];
        assert_eq!(msgs.meets_target(1.35), Some(true));
        assert_eq!(msgs.meets_target(1.2), Some(false));
        let p50 = Scenario::Req.metrics()[1];
        assert_eq!(p50.meets_target(0.6), Some(true));
        assert_eq!(p50.meets_target(0.7), Some(false));
        let p99 = Scenario::Req.metrics()[2];
        assert_eq!(p99.meets_target(5.0), None);
    }

    #[test]
    fn quick_plan_is_about_a_fiftieth() {
        let full = Plan { quick: false };
        let quick = Plan { quick: true };
        assert_eq!(full.messages(PayloadSize::B32), 1_000_000);
        assert_eq!(quick.messages(PayloadSize::B32), 20_000);
        assert_eq!(quick.messages(PayloadSize::K8), 2_000);
        assert_eq!(quick.requests(), 400);
    }

    #[test]
    fn clients_rotate_between_rounds() {
        use ClientKind::{AsyncNats, Raw, Rnats};
        // Each of all the clients runs first equally often.
        for client in ClientKind::ALL {
            let firsts = (0..2 * ClientKind::ALL.len())
                .filter(|&r| ClientKind::order_for_round(&ClientKind::ALL, r)[0] == client)
                .count();
            assert_eq!(firsts, 2, "{client}");
        }
        let all = [Rnats, AsyncNats, Raw];
        assert_eq!(
            ClientKind::order_for_round(&all, 0),
            vec![Rnats, AsyncNats, Raw]
        );
        assert_eq!(
            ClientKind::order_for_round(&all, 1),
            vec![AsyncNats, Raw, Rnats]
        );
        assert_eq!(
            ClientKind::order_for_round(&all, 2),
            vec![Raw, Rnats, AsyncNats]
        );
        assert_eq!(
            ClientKind::order_for_round(&all, 3),
            vec![Rnats, AsyncNats, Raw]
        );
        // Each client runs first equally often.
        for client in all {
            let firsts = (0..6)
                .filter(|&r| ClientKind::order_for_round(&all, r)[0] == client)
                .count();
            assert_eq!(firsts, 2, "{client}");
        }
        let two = [Rnats, AsyncNats];
        assert_eq!(ClientKind::order_for_round(&two, 1), vec![AsyncNats, Rnats]);
        assert_eq!(ClientKind::order_for_round(&[], 1), Vec::new());
    }

    #[test]
    fn raw_and_blocking_run_core_scenarios_only() {
        let all = ClientKind::ALL;
        for scenario in Scenario::ALL {
            let clients = scenario.clients(&all);
            assert!(clients.starts_with(&[ClientKind::Rnats, ClientKind::AsyncNats]));
            for client in [
                ClientKind::RnatsBlocking,
                ClientKind::RawTokio,
                ClientKind::Raw,
            ] {
                assert_eq!(
                    clients.contains(&client),
                    scenario.is_core_messaging(),
                    "{scenario} / {client}"
                );
            }
        }
        assert!(!ClientKind::RnatsBlocking.is_async());
        assert!(ClientKind::RawTokio.is_async());
        assert!(!ClientKind::RnatsBlocking.supports(Scenario::JsPub(PayloadSize::B32)));
        assert!(ClientKind::Raw.supports(Scenario::LatIdle));
        assert!(!ClientKind::Raw.supports(Scenario::Mem));
        assert!(!ClientKind::Raw.supports(Scenario::KvGet(KV_TASKS)));
    }

    #[test]
    fn raw_targets_follow_the_runtime() {
        let pub32 = Scenario::Pub(PayloadSize::B32).metrics()[0];
        assert_eq!(
            pub32.meets_raw_target(0.9, Runtime::MultiThread),
            Some(true)
        );
        assert_eq!(
            pub32.meets_raw_target(0.8, Runtime::CurrentThread),
            Some(false)
        );
        assert_eq!(
            Scenario::Pub(PayloadSize::K8).metrics()[0].meets_raw_target(0.5, Runtime::MultiThread),
            None
        );
        let lat = Scenario::Lat.metrics()[0];
        assert_eq!(
            lat.meets_raw_target(1.2, Runtime::CurrentThread),
            Some(true)
        );
        assert_eq!(
            lat.meets_raw_target(1.4, Runtime::CurrentThread),
            Some(false)
        );
        assert_eq!(lat.meets_raw_target(1.2, Runtime::MultiThread), None);
    }

    #[test]
    fn blocking_targets_are_issue_11s() {
        let target = |scenario: Scenario, metric: usize| scenario.metrics()[metric].blocking_vs_raw;
        assert_eq!(target(Scenario::Pub(PayloadSize::B32), 0), Some(0.9));
        assert_eq!(target(Scenario::Pub(PayloadSize::K1), 0), None);
        assert_eq!(target(Scenario::Req, 0), Some(0.9));
        assert_eq!(target(Scenario::Lat, 0), Some(1.15));
        assert_eq!(target(Scenario::LatIdle, 0), Some(1.15));
        assert_eq!(target(Scenario::LatIdle, 1), None);
        let lat = Scenario::Lat.metrics()[0];
        assert_eq!(lat.meets_blocking_target(1.1), Some(true));
        assert_eq!(lat.meets_blocking_target(1.2), Some(false));
        let req = Scenario::Req.metrics()[0];
        assert_eq!(req.meets_blocking_target(0.95), Some(true));
        assert_eq!(req.meets_blocking_target(0.85), Some(false));
    }

    #[test]
    fn runtime_names_round_trip() {
        for runtime in Runtime::ALL {
            assert_eq!(Runtime::from_name(runtime.name()), Some(runtime));
        }
        assert_eq!(Runtime::default(), Runtime::MultiThread);
        assert_eq!(Runtime::from_name("threaded"), None);
    }
}
