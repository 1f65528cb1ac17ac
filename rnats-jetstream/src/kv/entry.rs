//! An entry of a bucket: a key's value at one revision, or the marker of its deletion or
//! purge, and the operation headers that tell them apart (ADR-8, ADR-48).

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;
use rnats_core::datetime::DateTime;
use rnats_core::header::{HeaderMap, NATS_MARKER_REASON};

/// The header naming a KV operation other than a put.
pub(crate) const KV_OPERATION: &str = "KV-Operation";

/// A key's value (or deletion marker) at one revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The bucket it is in.
    pub bucket: String,
    /// The key.
    pub key: String,
    /// The value; empty for deletes and purges (and for meta-only watches).
    pub value: Bytes,
    /// The revision: the sequence of the value in the bucket's stream.
    pub revision: u64,
    /// In a watch or history, how many entries the server still had to send after this one.
    pub delta: u64,
    /// When the value was stored.
    pub created: DateTime,
    /// What the entry records: a put, a delete or a purge.
    pub operation: Operation,
    /// In a watch, whether the values that were current when it started have all come.
    pub seen_current: bool,
}

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// A value was put.
    Put,
    /// The key was deleted (earlier values may remain in the history).
    Delete,
    /// The key was purged: its history is gone.
    Purge,
}

impl Operation {
    /// The `KV-Operation` header value (`PUT`, `DEL`, `PURGE`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Operation::Put => "PUT",
            Operation::Delete => "DEL",
            Operation::Purge => "PURGE",
        }
    }

    /// The operation a stored message's headers record: `KV-Operation`, else a server
    /// marker's `Nats-Marker-Reason` (ADR-48: an aged-out or purged key is a purge, a removed
    /// one a delete), else a put.
    pub(crate) fn of_headers(
        headers: Option<&HeaderMap>,
    ) -> Result<Operation, ParseOperationError> {
        let Some(headers) = headers else {
            return Ok(Operation::Put);
        };
        if let Some(operation) = headers.get_last(KV_OPERATION) {
            return operation.as_str().parse();
        }
        match headers.get_last(NATS_MARKER_REASON).map(|r| r.as_str()) {
            None => Ok(Operation::Put),
            Some("MaxAge" | "Purge") => Ok(Operation::Purge),
            Some("Remove") => Ok(Operation::Delete),
            Some(_) => Err(ParseOperationError),
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = ParseOperationError;

    fn from_str(s: &str) -> Result<Operation, ParseOperationError> {
        match s {
            "PUT" => Ok(Operation::Put),
            "DEL" => Ok(Operation::Delete),
            "PURGE" => Ok(Operation::Purge),
            _ => Err(ParseOperationError),
        }
    }
}

/// A `KV-Operation` (or marker reason) that is none of the known ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOperationError;

impl fmt::Display for ParseOperationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid KV operation: expected PUT, DEL or PURGE")
    }
}

impl std::error::Error for ParseOperationError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, *value);
        }
        headers
    }

    #[test]
    fn operations_come_from_headers_or_markers() {
        assert_eq!(Operation::of_headers(None), Ok(Operation::Put));
        let of = |pairs: &[(&str, &str)]| Operation::of_headers(Some(&headers(pairs)));
        assert_eq!(of(&[]), Ok(Operation::Put));
        assert_eq!(of(&[("KV-Operation", "DEL")]), Ok(Operation::Delete));
        assert_eq!(of(&[("KV-Operation", "PURGE")]), Ok(Operation::Purge));
        assert_eq!(of(&[("KV-Operation", "nope")]), Err(ParseOperationError));
        assert_eq!(
            of(&[("Nats-Marker-Reason", "MaxAge")]),
            Ok(Operation::Purge)
        );
        assert_eq!(of(&[("Nats-Marker-Reason", "Purge")]), Ok(Operation::Purge));
        assert_eq!(
            of(&[("Nats-Marker-Reason", "Remove")]),
            Ok(Operation::Delete)
        );
        assert_eq!(of(&[("Nats-Marker-Reason", "?")]), Err(ParseOperationError));
        for operation in [Operation::Put, Operation::Delete, Operation::Purge] {
            assert_eq!(operation.as_str().parse(), Ok(operation));
        }
    }
}
