//! Connection counters.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters for one client, shared by all its clones. Bytes count message payloads (and
/// headers on the way in), not protocol overhead, as other NATS clients do.
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

/// A copy of [`Statistics`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatisticsSnapshot {
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

impl Statistics {
    /// Reads every counter.
    pub fn snapshot(&self) -> StatisticsSnapshot {
        StatisticsSnapshot {
            in_bytes: self.in_bytes.load(Ordering::Relaxed),
            out_bytes: self.out_bytes.load(Ordering::Relaxed),
            in_messages: self.in_messages.load(Ordering::Relaxed),
            out_messages: self.out_messages.load(Ordering::Relaxed),
            connects: self.connects.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        if n != 0 {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }
}
