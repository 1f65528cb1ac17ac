//! Connection counters, as a live handle (async-nats' `Arc<Statistics>` of atomics).

use std::sync::atomic::{AtomicU64, Ordering};

/// A client's counters, shared by all its clones and updated as the connection works: read
/// each field with `.load(Ordering::Relaxed)`. Bytes are every protocol byte read from and
/// written to the server (INFO, CONNECT, PING/PONG, SUB, every frame in full; plaintext under
/// TLS and WebSocket), as async-nats counts them; messages are MSG/HMSG frames received and
/// messages published (requests included).
///
/// The engine adds to them once per read and once per write, never per message, so a publish
/// does not pay for a shared atomic; a published message shows up here once it is handed to
/// the socket (or kept for after a reconnect and then sent).
#[derive(Debug, Default)]
pub struct Statistics {
    /// Protocol bytes read from the server.
    pub in_bytes: AtomicU64,
    /// Protocol bytes written to the server.
    pub out_bytes: AtomicU64,
    /// Messages received.
    pub in_messages: AtomicU64,
    /// Messages published.
    pub out_messages: AtomicU64,
    /// Successful connections, the first one included.
    pub connects: AtomicU64,
    /// Messages the client dropped because a subscription's queue was full (a slow
    /// consumer), over all its subscriptions: the sum of every `Subscriber::dropped`, those
    /// of subscriptions since gone included. Not in async-nats' `Statistics`.
    pub dropped_messages: AtomicU64,
}

impl Statistics {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        if n != 0 {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }
}
