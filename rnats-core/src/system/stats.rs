//! A server's statistics: the answer to a ping (`STATSZ`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::jetstream::JetStreamVarz;
use crate::datetime::{DateTime, rfc3339};

/// A server's statistics (nats-server's `ServerStats`), what every server answers a ping
/// with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerStats {
    /// When the server started.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub start: Option<DateTime>,
    /// Resident memory, in bytes.
    #[serde(default)]
    pub mem: i64,
    /// The cores the process may use.
    #[serde(default)]
    pub cores: i64,
    /// CPU use, in percent of one core.
    #[serde(default)]
    pub cpu: f64,
    /// Client connections now.
    #[serde(default)]
    pub connections: u64,
    /// Client connections since the start.
    #[serde(default)]
    pub total_connections: u64,
    /// Accounts with at least one connection or import.
    #[serde(default)]
    pub active_accounts: u64,
    /// Subscriptions now.
    #[serde(default)]
    pub subscriptions: u64,
    /// Everything sent.
    #[serde(default)]
    pub sent: DataStats,
    /// Everything received.
    #[serde(default)]
    pub received: DataStats,
    /// Clients that were slow consumers, since the start.
    #[serde(default)]
    pub slow_consumers: u64,
    /// Each route's traffic.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteStat>,
    /// Each gateway's traffic.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gateways: Vec<GatewayStat>,
    /// The servers this one knows to be up, itself included: how many answers a ping to
    /// every server may expect (0 when the server did not say).
    #[serde(default)]
    pub active_servers: u64,
    /// JetStream's configuration and statistics, on a server that runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jetstream: Option<JetStreamVarz>,
    /// Fields this version of rnats does not know (`sent_to_clients`, `gomaxprocs`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Messages and bytes, in total and, where the server counts them apart, per kind of peer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DataStats {
    /// Messages.
    #[serde(default)]
    pub msgs: u64,
    /// Bytes.
    #[serde(default)]
    pub bytes: u64,
    /// Fields this version of rnats does not know (`routes`, `gateways`, `leafs`: the
    /// share of each kind of peer).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One route's traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RouteStat {
    /// The route's ID on this server.
    #[serde(default)]
    pub rid: u64,
    /// The name of the server at the other end.
    #[serde(default)]
    pub name: String,
    /// Sent on it.
    #[serde(default)]
    pub sent: DataStats,
    /// Received on it.
    #[serde(default)]
    pub received: DataStats,
    /// Bytes waiting to be sent.
    #[serde(default)]
    pub pending: u64,
    /// Fields this version of rnats does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One gateway's traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GatewayStat {
    /// The gateway's ID on this server.
    #[serde(default)]
    pub gwid: u64,
    /// The name of the cluster at the other end.
    #[serde(default)]
    pub name: String,
    /// Sent on it.
    #[serde(default)]
    pub sent: DataStats,
    /// Received on it.
    #[serde(default)]
    pub received: DataStats,
    /// Connections in from that cluster.
    #[serde(default)]
    pub inbound_connections: u64,
    /// Fields this version of rnats does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
