//! A bucket's status: its configuration and state, read from the stream behind it.

use std::collections::HashMap;
use std::time::Duration;

use crate::stream::{Info, Placement, Republish, Source, StorageType};

/// A bucket's status, as [`Store::status`](super::Store::status) fetched it.
#[derive(Debug, Clone)]
pub struct Status {
    /// The info of the stream behind the bucket.
    pub info: Info,
    /// The bucket's name.
    pub bucket: String,
}

impl Status {
    /// The bucket's name.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// Entries stored, with the history and the delete markers.
    pub fn values(&self) -> u64 {
        self.info.state.messages
    }

    /// Values kept per key.
    pub fn history(&self) -> i64 {
        self.info.config.max_messages_per_subject
    }

    /// How long a value is kept (zero: for ever).
    pub fn max_age(&self) -> Duration {
        self.info.config.max_age
    }

    /// The same as [`Status::max_age`] (nats.go calls it the TTL).
    pub fn ttl(&self) -> Duration {
        self.info.config.max_age
    }

    /// Bytes stored.
    pub fn bytes(&self) -> u64 {
        self.info.state.bytes
    }

    /// What stores the bucket: always `"JetStream"`.
    pub fn backing_store(&self) -> &'static str {
        "JetStream"
    }

    /// The name of the stream behind the bucket (`KV_<bucket>`).
    pub fn stream_name(&self) -> &str {
        &self.info.config.name
    }

    /// Whether the values are stored compressed.
    pub fn is_compressed(&self) -> bool {
        matches!(
            self.info.config.compression,
            Some(crate::stream::Compression::S2)
        )
    }

    /// File or memory storage.
    pub fn storage(&self) -> StorageType {
        self.info.config.storage
    }

    /// Copies of each value in a cluster.
    pub fn replicas(&self) -> usize {
        self.info.config.num_replicas
    }

    /// Where the bucket is placed, if it was placed.
    pub fn placement(&self) -> Option<&Placement> {
        self.info.config.placement.as_ref()
    }

    /// Where stored values are republished, if they are.
    pub fn republish(&self) -> Option<&Republish> {
        self.info.config.republish.as_ref()
    }

    /// The bucket this one mirrors, if it is a mirror.
    pub fn mirror(&self) -> Option<&Source> {
        self.info.config.mirror.as_ref()
    }

    /// The buckets this one sources values from.
    pub fn sources(&self) -> &[Source] {
        self.info.config.sources.as_deref().unwrap_or_default()
    }

    /// How long the server keeps the markers of aged-out or purged keys (ADR-48), if the
    /// bucket has limit markers.
    pub fn limit_markers(&self) -> Option<Duration> {
        self.info.config.subject_delete_marker_ttl
    }

    /// The same as [`Status::limit_markers`], under ADR-48's name (`LimitMarkerTTL`).
    pub fn limit_marker_ttl(&self) -> Option<Duration> {
        self.limit_markers()
    }

    /// The bucket's metadata: the user's entries, and the server's own (`_nats.*`, such as
    /// the API level the bucket needs).
    pub fn metadata(&self) -> &HashMap<String, String> {
        &self.info.config.metadata
    }

    /// The description given at creation, if any.
    pub fn description(&self) -> Option<&str> {
        self.info.config.description.as_deref()
    }
}
