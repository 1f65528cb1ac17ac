//! The scenarios run with rnats's blocking client ([`rnats_bench::blocking`]). Like the raw
//! client it runs the Core scenarios only ([`ClientKind::supports`](rnats_bench::ClientKind)),
//! on the calling thread and threads of its own, with the same sizes as the other clients.

use rnats_bench::blocking;
use rnats_bench::{Plan, Scenario};

use crate::BenchError;

/// One run of `scenario`; the values in the order of `scenario.metrics()`.
pub(crate) fn run(scenario: Scenario, url: &str, plan: Plan) -> Result<Vec<f64>, BenchError> {
    match scenario {
        Scenario::Pub(size) => {
            let t = blocking::publish(url, size.bytes(), plan.messages(size))?;
            Ok(vec![t.per_sec, t.mb_per_sec])
        }
        Scenario::Sub(size) => {
            let t = blocking::subscribe(url, size.bytes(), plan.messages(size))?;
            Ok(vec![t.per_sec, t.mb_per_sec])
        }
        Scenario::Req => {
            let (t, latency) = blocking::request(url, plan.requests())?;
            Ok(vec![t.per_sec, latency.p50_us, latency.p99_us])
        }
        Scenario::Lat => {
            let latency = blocking::latency(url, plan.latency_iterations(), None)?;
            Ok(vec![latency.p50_us, latency.p99_us])
        }
        Scenario::LatIdle => {
            let gap = Some(plan.idle_gap());
            let latency = blocking::latency(url, plan.idle_latency_iterations(), gap)?;
            Ok(vec![latency.p50_us, latency.p99_us])
        }
        Scenario::Mem
        | Scenario::JsPub(_)
        | Scenario::JsPipe(_)
        | Scenario::JsFetch
        | Scenario::KvPut(_)
        | Scenario::KvGet(_)
        | Scenario::ObjPut
        | Scenario::ObjGet => Err(format!("the blocking client does not run {scenario}").into()),
    }
}
