//! JetStream's part of the monitoring data, shared by `VARZ`, `STATSZ` and `JSZ`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// JetStream on one server, as `VARZ` and a ping tell it (nats-server's `JetStreamVarz`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JetStreamVarz {
    /// Its configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<JetStreamConfig>,
    /// Its use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<JetStreamStats>,
    /// The meta group, in a cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaCluster>,
    /// Fields this version of rnats does not know (`limits`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A server's JetStream configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JetStreamConfig {
    /// Memory that streams may use, in bytes.
    #[serde(default)]
    pub max_memory: i64,
    /// Storage that streams may use, in bytes.
    #[serde(default)]
    pub max_storage: i64,
    /// Where file streams are stored.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub store_dir: String,
    /// The JetStream domain; empty when there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// Fields this version of rnats does not know (`sync_interval`, `unique_tag`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What JetStream uses on a server (nats-server's `JetStreamStats`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JetStreamStats {
    /// Memory used, in bytes.
    #[serde(default)]
    pub memory: u64,
    /// Storage used, in bytes.
    #[serde(default)]
    pub storage: u64,
    /// Memory reserved by streams' limits, in bytes.
    #[serde(default)]
    pub reserved_memory: u64,
    /// Storage reserved by streams' limits, in bytes.
    #[serde(default)]
    pub reserved_storage: u64,
    /// Accounts with JetStream.
    #[serde(default)]
    pub accounts: u64,
    /// Replicated assets (streams and consumers with a RAFT group).
    #[serde(default)]
    pub ha_assets: u64,
    /// The API's counters.
    #[serde(default)]
    pub api: JetStreamApiStats,
    /// Fields this version of rnats does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The JetStream API's counters on a server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JetStreamApiStats {
    /// The API level the server implements.
    #[serde(default)]
    pub level: i64,
    /// Requests since the start.
    #[serde(default)]
    pub total: u64,
    /// Requests that failed since the start.
    #[serde(default)]
    pub errors: u64,
    /// Requests being served now.
    #[serde(default)]
    pub inflight: u64,
    /// Fields this version of rnats does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// JetStream's meta group, as one server sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetaCluster {
    /// The cluster's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The name of the leader's server; empty while there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub leader: String,
    /// The leader's peer ID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub peer: String,
    /// The peers the group knows.
    #[serde(default)]
    pub cluster_size: u64,
    /// Fields this version of rnats does not know (`replicas`, `pending`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
