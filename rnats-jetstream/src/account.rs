//! What `Context::query_account` reports: the account's JetStream usage and limits.

use std::collections::HashMap;

use serde::{Deserialize, Deserializer, Serialize};

/// A limit the server sends as -1 for "none".
fn unlimited_as_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    let n = i64::deserialize(deserializer)?;
    Ok((n >= 0).then_some(n))
}

/// The account's JetStream limits; `None` where there is none.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Limits {
    /// Memory storage, in bytes.
    #[serde(deserialize_with = "unlimited_as_none", default)]
    pub max_memory: Option<i64>,
    /// File storage, in bytes.
    #[serde(deserialize_with = "unlimited_as_none", default)]
    pub max_storage: Option<i64>,
    /// Streams.
    #[serde(deserialize_with = "unlimited_as_none", default)]
    pub max_streams: Option<i64>,
    /// Consumers.
    #[serde(deserialize_with = "unlimited_as_none", default)]
    pub max_consumers: Option<i64>,
    /// Whether every stream must set `max_bytes`.
    #[serde(default)]
    pub max_bytes_required: bool,
    /// The largest `max_ack_pending` a consumer may have.
    #[serde(default)]
    pub max_ack_pending: i64,
    /// The largest memory stream, in bytes.
    #[serde(deserialize_with = "unlimited_as_none", default)]
    pub memory_max_stream_bytes: Option<i64>,
    /// The largest file stream, in bytes.
    #[serde(default)]
    pub storage_max_stream_bytes: Option<i64>,
}

/// API requests made by the account.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requests {
    /// All requests.
    pub total: u64,
    /// Requests that failed.
    pub errors: u64,
    /// The API level the server speaks (ADR-44).
    #[serde(default)]
    pub level: usize,
    /// Requests being processed now.
    #[serde(default)]
    pub inflight: u64,
}

/// Usage and limits of one tier (replication level) of the account.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Tier {
    /// Memory used, in bytes.
    pub memory: u64,
    /// File storage used, in bytes.
    pub storage: u64,
    /// Memory reserved, in bytes.
    #[serde(default)]
    pub reserved_memory: u64,
    /// File storage reserved, in bytes.
    #[serde(default)]
    pub reserved_storage: u64,
    /// Streams.
    pub streams: usize,
    /// Consumers.
    pub consumers: usize,
    /// The tier's limits.
    pub limits: Limits,
}

/// The account's JetStream usage and limits.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
pub struct Account {
    /// Memory used, in bytes.
    pub memory: u64,
    /// File storage used, in bytes.
    pub storage: u64,
    /// Memory reserved, in bytes.
    #[serde(default)]
    pub reserved_memory: u64,
    /// File storage reserved, in bytes.
    #[serde(default)]
    pub reserved_storage: u64,
    /// Streams.
    pub streams: usize,
    /// Consumers.
    pub consumers: usize,
    /// The JetStream domain, if any.
    #[serde(default)]
    pub domain: Option<String>,
    /// The account's limits.
    pub limits: Limits,
    /// API requests made.
    #[serde(rename = "api")]
    pub requests: Requests,
    /// Usage per tier, for accounts with tiered limits.
    #[serde(default)]
    pub tiers: HashMap<String, Tier>,
}
