//! The crate's private decoders of server bytes, reachable for the fuzz targets in `fuzz/`
//! and for regression tests. Not part of the API: nothing here is stable.

use rnats_core::{HeaderMap, StatusCode};

use crate::batch::BatchPublishError;
use crate::counter::{CounterEntry, CounterError};
use crate::publish::{PublishAck, PublishError};

/// The reply to a stored publish, as a publish reads it (`decode_ack`).
pub fn publish_ack(payload: &[u8], status: Option<StatusCode>) -> Result<PublishAck, PublishError> {
    crate::publish::decode_ack(payload, status)
}

/// The hand-written fast path for the server's usual publish ack; `None` leaves the payload
/// to serde_json.
pub fn plain_publish_ack(payload: &[u8]) -> Option<PublishAck> {
    crate::publish::plain_ack(payload)
}

/// The reply to an atomic batch's commit.
pub fn batch_commit(
    payload: &[u8],
    status: Option<StatusCode>,
) -> Result<PublishAck, BatchPublishError> {
    crate::batch::committed(payload, status)
}

/// A counter's state, read from its last message.
pub fn counter_entry(
    subject: String,
    sequence: u64,
    headers: &HeaderMap,
    payload: &[u8],
) -> Result<CounterEntry, CounterError> {
    crate::counter::entry(subject, sequence, headers, payload)
}

/// The operation a Key-Value message's headers record.
#[cfg(feature = "kv")]
pub fn kv_operation(
    headers: Option<&HeaderMap>,
) -> Result<crate::kv::Operation, crate::kv::ParseOperationError> {
    crate::kv::Operation::of_headers(headers)
}

/// The entry a Key-Value watch, history or key listing delivery carries.
#[cfg(feature = "kv")]
pub fn kv_entry(
    message: &rnats_core::Message,
    prefix: &str,
    bucket: &str,
) -> Result<crate::kv::Entry, crate::kv::WatcherError> {
    crate::kv::entry_of(message, prefix, bucket)
}
