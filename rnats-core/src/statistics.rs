//! Connection counters, as a live handle (async-nats' `Arc<Statistics>` of atomics).

use std::sync::atomic::{AtomicU64, Ordering};

/// A client's counters, shared by all its clones and updated as the connection works: read
/// each field with `.load(Ordering::Relaxed)`. Bytes count message payloads (and headers on
/// the way in), not protocol overhead, as other NATS clients do.
///
/// The engine adds to them once per read batch and once per write batch, never per message,
/// so a publish does not pay for a shared atomic; a published message shows up here once it is
/// handed to the socket (or kept for after a reconnect and then sent).
#[derive(Debug, Default)]
pub struct Statistics {
    /// Payload bytes received in messages.
    pub in_bytes: AtomicU64,
    /// Payload bytes published.
    pub out_bytes: AtomicU64,
    /// Messages received.
    pub in_messages: AtomicU64,
    /// Messages published.
    pub out_messages: AtomicU64,
    /// Successful connections, the first one included.
    pub connects: AtomicU64,
}

impl Statistics {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        if n != 0 {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }
}
