//! The scenarios run with rnats.

use std::sync::OnceLock;
use std::time::Duration;

use crate::{BenchError, Capacity};

/// The linger delay `--linger-ms` asked for, set once before the first run.
pub(crate) static LINGER: OnceLock<Duration> = OnceLock::new();

/// Connects with default options (but `--linger-ms`), or with subscriptions big enough to
/// hold a whole run.
pub(crate) async fn connect(
    url: &str,
    capacity: Option<Capacity>,
) -> Result<rnats::Client, BenchError> {
    let mut options = rnats::ConnectOptions::new();
    if let Some(delay) = LINGER.get() {
        options = options.linger(*delay, 1 << 20);
    }
    if let Some(capacity) = capacity {
        options = options
            .subscription_capacity(capacity.messages)
            .subscription_capacity_bytes(capacity.bytes);
    }
    Ok(options.connect(url).await?)
}

/// The side's JetStream module, for the `js-*` scenarios.
pub(crate) use rnats::jetstream;

// The same file is compiled for each client on purpose; see its module docs.
#[allow(clippy::duplicate_mod)]
#[path = "scenarios.rs"]
pub(crate) mod scenarios;

// The Key-Value scenarios, compiled for each client the same way.
#[allow(clippy::duplicate_mod)]
#[path = "kv.rs"]
pub(crate) mod kv;
