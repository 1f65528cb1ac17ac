//! `rnats bench --blocking`: the Core benchmarks (`pub`, `sub`, `pubsub`, `req`, `lat`) with
//! the blocking client, [`rnats::blocking`], on plain threads and no async runtime.
//!
//! Each benchmark does what its async twin does (same connections, subjects, payloads,
//! measuring points and figures); only the workers are threads, watched by a thread-based
//! [`Watch`](watch::Watch) (progress bar, stall detection) instead of the tokio
//! [`Supervisor`](super::supervisor::Supervisor). JetStream has no blocking API, so `js-pub`
//! and `js-fetch` are refused.

mod fanout;
mod latency;
mod request;
mod watch;

use rnats::ConnectOptions;
use rnats::blocking::Client;

use super::fanout::Roles;
use super::report::Figures;
use super::{BenchKind, Plan};
use crate::error::CliError;

/// Why `--blocking` refuses a JetStream benchmark.
pub(super) const NOT_CORE: &str =
    "--blocking covers pub, sub, pubsub, req and lat; the others run on the async client";

/// Whether `kind` has a blocking run.
pub(super) fn supports(kind: BenchKind) -> bool {
    match kind {
        BenchKind::Pub | BenchKind::Sub | BenchKind::Pubsub | BenchKind::Req | BenchKind::Lat => {
            true
        }
        BenchKind::Reply
        | BenchKind::JsPub
        | BenchKind::JsFetch
        | BenchKind::JsConsume
        | BenchKind::JsOrdered
        | BenchKind::JsGet(_)
        | BenchKind::KvPut
        | BenchKind::KvGet
        | BenchKind::Scale => false,
    }
}

/// Runs the benchmark `kind` with blocking clients and returns what it measured.
pub(super) fn run(plan: &Plan, kind: BenchKind) -> Result<Figures, CliError> {
    match kind {
        BenchKind::Pub => fanout::run(plan, Roles::publish_only(plan.clients)),
        BenchKind::Sub => fanout::run(plan, Roles::subscribe_only(plan.clients)),
        BenchKind::Pubsub => fanout::run(plan, Roles::both(plan.clients)),
        BenchKind::Req => request::run(plan),
        BenchKind::Lat => latency::run(plan),
        BenchKind::Reply
        | BenchKind::JsPub
        | BenchKind::JsFetch
        | BenchKind::JsConsume
        | BenchKind::JsOrdered
        | BenchKind::JsGet(_)
        | BenchKind::KvPut
        | BenchKind::KvGet
        | BenchKind::Scale => Err(CliError::Usage(NOT_CORE)),
    }
}

impl Plan {
    /// Connects one blocking client named `name` (shown in the server's monitoring).
    fn connect_blocking(&self, options: ConnectOptions, name: String) -> Result<Client, CliError> {
        self.access
            .apply(self.tuning.apply(options))?
            .name(name)
            .connect_blocking(&self.url)
            .map_err(|source| CliError::Connect {
                url: self.url.clone(),
                source,
            })
    }
}
