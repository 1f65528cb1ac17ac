//! What the Core scenarios send, where, and how long they wait, shared by every client's
//! implementation (`benches/compare/scenarios.rs` for the async clients, [`crate::raw`] for the
//! raw one) so that all of them run the same workload.

use std::time::Duration;

/// Subject of `pub`; nobody subscribes to it.
pub const PUB_SUBJECT: &str = "bench.pub";
/// Subject of `sub`.
pub const SUB_SUBJECT: &str = "bench.sub";
/// Subject the `req` responder listens on.
pub const REQ_SUBJECT: &str = "bench.req";
/// Subject of `lat` and `lat-idle`, published to and subscribed on by one connection.
pub const LAT_SUBJECT: &str = "bench.lat";
/// Payload bytes of each request and each latency round trip.
pub const SMALL_PAYLOAD: usize = 32;

/// How long a subscriber may take to receive everything before the run counts as invalid.
pub const RECEIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one latency round trip or request may take before the run counts as failed.
pub const ROUND_TRIP_TIMEOUT: Duration = Duration::from_secs(10);
/// Unmeasured round trips before a latency run, so connection setup is not in the samples.
pub const LATENCY_WARM_UP: usize = 10;

/// Room, in messages and bytes, for a subscription to hold a whole receiving run of `count`
/// messages of `size` bytes and some to spare (each message allowed 256 bytes beyond its
/// payload for subject, headers and bookkeeping), so that a run never drops a message for
/// want of room in any client.
pub fn room_for_run(count: usize, size: usize) -> (usize, usize) {
    const PER_MESSAGE_SLACK: usize = 256;
    let messages = count + 1024;
    (messages, messages * (size + PER_MESSAGE_SLACK))
}

/// The payload of every message of a run: `size` bytes of `x`.
pub fn payload(size: usize) -> Vec<u8> {
    vec![b'x'; size]
}
