//! The scenarios run with async-nats, the reference client.

use crate::{BenchError, Capacity};

/// Connects with default options, or with subscriptions big enough to hold a whole run.
/// async-nats bounds subscriptions by message count only, so `capacity.bytes` has no
/// counterpart here.
pub(crate) async fn connect(
    url: &str,
    capacity: Option<Capacity>,
) -> Result<async_nats::Client, BenchError> {
    let mut options = async_nats::ConnectOptions::new();
    if let Some(capacity) = capacity {
        options = options.subscription_capacity(capacity.messages);
    }
    Ok(options.connect(url).await?)
}

/// The side's JetStream module, for the `js-*` scenarios.
pub(crate) use async_nats::jetstream;

// The same file is compiled for each client on purpose; see its module docs.
#[allow(clippy::duplicate_mod)]
#[path = "scenarios.rs"]
pub(crate) mod scenarios;

// The Key-Value scenarios, compiled for each client the same way.
#[allow(clippy::duplicate_mod)]
#[path = "kv.rs"]
pub(crate) mod kv;
