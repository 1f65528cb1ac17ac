//! A server's general state and configuration: the answer to `VARZ`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::jetstream::JetStreamVarz;
use crate::datetime::{DateTime, rfc3339};

/// A server's general state and configuration (nats-server's `Varz`): the fields most
/// used, the rest in [`extra`](Self::extra).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Varz {
    /// The server's unique ID.
    #[serde(default)]
    pub server_id: String,
    /// Its name (its ID when it was given none).
    #[serde(default)]
    pub server_name: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// The protocol version it speaks.
    #[serde(default)]
    pub proto: i64,
    /// The Go version it was built with (`go` on the wire).
    #[serde(default, rename = "go")]
    pub go_version: String,
    /// The host it listens on for clients.
    #[serde(default)]
    pub host: String,
    /// The port it listens on for clients.
    #[serde(default)]
    pub port: i64,
    /// Whether clients must authenticate.
    #[serde(default)]
    pub auth_required: bool,
    /// Whether clients must use TLS.
    #[serde(default)]
    pub tls_required: bool,
    /// The most client connections it accepts.
    #[serde(default)]
    pub max_connections: i64,
    /// The largest payload it accepts, in bytes.
    #[serde(default)]
    pub max_payload: i64,
    /// Its monitoring port over HTTP; 0 when it serves none.
    #[serde(default)]
    pub http_port: i64,
    /// JetStream's configuration and use; empty when it does not run JetStream.
    #[serde(default)]
    pub jetstream: JetStreamVarz,
    /// When it started.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub start: Option<DateTime>,
    /// Its clock when it answered.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub now: Option<DateTime>,
    /// How long it has run, in Go's words (`1h2m3s`).
    #[serde(default)]
    pub uptime: String,
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
    /// Routes to other servers of its cluster, connected now.
    #[serde(default)]
    pub routes: u64,
    /// Remote servers it routes to (from its configuration and gossip).
    #[serde(default)]
    pub remotes: u64,
    /// Leaf node connections now.
    #[serde(default)]
    pub leafnodes: u64,
    /// Messages received from clients, routes, gateways and leaf nodes.
    #[serde(default)]
    pub in_msgs: u64,
    /// Messages sent to clients, routes, gateways and leaf nodes.
    #[serde(default)]
    pub out_msgs: u64,
    /// Bytes received.
    #[serde(default)]
    pub in_bytes: u64,
    /// Bytes sent.
    #[serde(default)]
    pub out_bytes: u64,
    /// Clients that were slow consumers, since the start.
    #[serde(default)]
    pub slow_consumers: u64,
    /// Subscriptions now.
    #[serde(default)]
    pub subscriptions: u64,
    /// Its tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The system account's name, when it has one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub system_account: String,
    /// Fields this version of rnats does not know (`cluster`, `gateway`, `leaf`, `mqtt`,
    /// `websocket`, `config_load_time`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
