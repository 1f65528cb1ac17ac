//! Connection counters.

use std::sync::atomic::{AtomicU64, Ordering};

/// A client's counters at one moment, shared by all its clones. Bytes count message payloads
/// (and headers on the way in), not protocol overhead, as other NATS clients do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Statistics {
    /// Payload bytes received in messages.
    pub in_bytes: u64,
    /// Payload bytes published.
    pub out_bytes: u64,
    /// Messages received.
    pub in_messages: u64,
    /// Messages published.
    pub out_messages: u64,
    /// Successful connections, the first one included.
    pub connects: u64,
}

/// The counters the engine keeps: updated once per read batch, not per message. The
/// outgoing counters live under the write lock, which every publish takes anyway.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) in_bytes: AtomicU64,
    pub(crate) in_messages: AtomicU64,
    pub(crate) connects: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        if n != 0 {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub(crate) fn read(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
