//! The scale probes run with rnats; `rnats bench scale` runs them through [`run_axis`].

use std::time::Duration;

use super::{Axis, Curve, ScaleError};

/// The side's header map, for the headers axis.
pub use rnats::HeaderMap;
/// The side's JetStream module, for the KV and Object Store axes.
pub use rnats::jetstream;

/// How long one point may take before it counts as a hang.
pub const POINT_LIMIT: Duration = Duration::from_secs(300);

/// Connects with subscriptions that hold `messages` messages of up to 64 KiB each (rnats
/// bounds bytes too; async-nats counts messages only, so this matches what it allows).
/// The bound is a limit, not an allocation.
pub async fn connect(url: &str, messages: usize) -> Result<rnats::Client, ScaleError> {
    Ok(rnats::ConnectOptions::new()
        .subscription_capacity(messages)
        .subscription_capacity_bytes(messages.saturating_mul(64 * 1024))
        .connect(url)
        .await?)
}

// The same file is compiled for each client on purpose; see its module docs.
#[allow(clippy::duplicate_mod)]
#[path = "probes.rs"]
pub mod probes;

/// Runs `axis` at `points` with rnats, each point bounded by [`POINT_LIMIT`]; a failed point
/// keeps its error and the next one still runs.
pub async fn run_axis(axis: Axis, url: &str, points: &[usize]) -> Curve {
    let mut curve = Curve {
        client: "rnats".to_owned(),
        points: Vec::with_capacity(points.len()),
    };
    for &n in points {
        let result = match tokio::time::timeout(POINT_LIMIT, probes::measure(axis, url, n)).await {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(_) => Err(format!("HANG: no result within {POINT_LIMIT:?}")),
        };
        curve.points.push((n, result));
    }
    curve
}
