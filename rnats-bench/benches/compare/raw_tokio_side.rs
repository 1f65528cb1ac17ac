//! The raw client on tokio ([`rnats_bench::raw::on_tokio`]): the Core scenarios only, run on
//! the runtime in the shape the async clients run in, so its figures are that shape's floor.

use rnats_bench::raw::on_tokio;
use rnats_bench::{Plan, Scenario};

use crate::BenchError;

/// One run of `scenario`; the values in the order of `scenario.metrics()`.
pub(crate) async fn run(scenario: Scenario, url: &str, plan: Plan) -> Result<Vec<f64>, BenchError> {
    match scenario {
        Scenario::Pub(size) => {
            let t = on_tokio::publish(url, size.bytes(), plan.messages(size)).await?;
            Ok(vec![t.per_sec, t.mb_per_sec])
        }
        Scenario::Sub(size) => {
            let t = on_tokio::subscribe(url, size.bytes(), plan.messages(size)).await?;
            Ok(vec![t.per_sec, t.mb_per_sec])
        }
        Scenario::Req => {
            let (t, latency) = on_tokio::request(url, plan.requests()).await?;
            Ok(vec![t.per_sec, latency.p50_us, latency.p99_us])
        }
        Scenario::Lat => {
            let latency = on_tokio::latency(url, plan.latency_iterations(), None).await?;
            Ok(vec![latency.p50_us, latency.p99_us])
        }
        Scenario::LatIdle => {
            let gap = Some(plan.idle_gap());
            let latency = on_tokio::latency(url, plan.idle_latency_iterations(), gap).await?;
            Ok(vec![latency.p50_us, latency.p99_us])
        }
        _ => Err(format!("the raw client on tokio does not run {scenario}").into()),
    }
}
