//! The clients that block their calling thread: the raw blocking-socket client
//! ([`rnats_bench::raw`], the practical limit) and rnats' blocking client
//! ([`rnats_bench::blocking`]). Both run the Core scenarios only
//! ([`ClientKind::supports`](rnats_bench::ClientKind)), on the calling thread and threads of
//! their own, with the same sizes as the async clients. Each is a table of its scenario
//! functions, so one match maps scenarios onto either.

use std::time::Duration;

use rnats_bench::{Latency, Plan, Scenario, Throughput};

use crate::BenchError;

/// What a request scenario measures: the rate, and the latency of each request.
type RequestRun<E> = Result<(Throughput, Latency), E>;

/// The scenario functions of one threaded client.
pub(crate) struct Threaded<E> {
    /// The client's name, for errors.
    name: &'static str,
    publish: fn(&str, usize, usize) -> Result<Throughput, E>,
    subscribe: fn(&str, usize, usize) -> Result<Throughput, E>,
    request: fn(&str, usize) -> RequestRun<E>,
    latency: fn(&str, usize, Option<Duration>) -> Result<Latency, E>,
}

/// The raw blocking-socket client.
pub(crate) const RAW: Threaded<rnats_bench::raw::RawError> = Threaded {
    name: "the raw client",
    publish: rnats_bench::raw::scenarios::publish,
    subscribe: rnats_bench::raw::scenarios::subscribe,
    request: rnats_bench::raw::scenarios::request,
    latency: rnats_bench::raw::scenarios::latency,
};

/// rnats' blocking client.
pub(crate) const BLOCKING: Threaded<rnats_bench::blocking::BlockingError> = Threaded {
    name: "the blocking client",
    publish: rnats_bench::blocking::publish,
    subscribe: rnats_bench::blocking::subscribe,
    request: rnats_bench::blocking::request,
    latency: rnats_bench::blocking::latency,
};

impl<E: Into<BenchError>> Threaded<E> {
    /// One run of `scenario`; the values in the order of `scenario.metrics()`.
    pub(crate) fn run(
        &self,
        scenario: Scenario,
        url: &str,
        plan: Plan,
    ) -> Result<Vec<f64>, BenchError> {
        match scenario {
            Scenario::Pub(size) => {
                let t =
                    (self.publish)(url, size.bytes(), plan.messages(size)).map_err(Into::into)?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::Sub(size) => {
                let t =
                    (self.subscribe)(url, size.bytes(), plan.messages(size)).map_err(Into::into)?;
                Ok(vec![t.per_sec, t.mb_per_sec])
            }
            Scenario::Req => {
                let (t, latency) = (self.request)(url, plan.requests()).map_err(Into::into)?;
                Ok(vec![t.per_sec, latency.p50_us, latency.p99_us])
            }
            Scenario::Lat => {
                let latency =
                    (self.latency)(url, plan.latency_iterations(), None).map_err(Into::into)?;
                Ok(vec![latency.p50_us, latency.p99_us])
            }
            Scenario::LatIdle => {
                let gap = Some(plan.idle_gap());
                let latency =
                    (self.latency)(url, plan.idle_latency_iterations(), gap).map_err(Into::into)?;
                Ok(vec![latency.p50_us, latency.p99_us])
            }
            _ => Err(format!("{} does not run {scenario}", self.name).into()),
        }
    }
}
