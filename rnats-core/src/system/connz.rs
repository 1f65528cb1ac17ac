//! A server's client connections: the answer to `CONNZ`, and what to ask for.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::datetime::{DateTime, rfc3339};

/// Which connections `CONNZ` lists and what it tells of each (nats-server's
/// `ConnzOptions`). Left at their defaults, the fields are not sent and the server's own
/// defaults hold: open connections by ID, the first 1024.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ConnzOptions {
    /// The order (by ID, ascending, when not set; every other order is descending).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort: Option<ConnzSort>,
    /// Each connection's user and account too (`auth` on the wire).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub auth: bool,
    /// Each connection's subscriptions too.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub subscriptions: bool,
    /// Each subscription's details too (queue group, counts), in `extra`'s
    /// `subscriptions_list_detail`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub subscriptions_detail: bool,
    /// Connections to skip first.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub offset: u64,
    /// Connections at most (the server's default is 1024).
    #[serde(skip_serializing_if = "super::is_zero")]
    pub limit: u64,
    /// Only the connection with this ID.
    #[serde(skip_serializing_if = "super::is_zero")]
    pub cid: u64,
    /// Open connections, closed ones the server still remembers, or both (default: open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<ConnState>,
    /// Only this user's connections (with `auth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Only this account's connections (`acc` on the wire).
    #[serde(rename = "acc", skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// Only connections with interest in this subject (with `account`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_subject: Option<String>,
}

impl ConnzOptions {
    /// The server's defaults.
    pub fn new() -> ConnzOptions {
        ConnzOptions::default()
    }

    /// Sets the `sort` field.
    pub fn sort(mut self, sort: ConnzSort) -> ConnzOptions {
        self.sort = Some(sort);
        self
    }

    /// Sets the `auth` field.
    pub fn auth(mut self, on: bool) -> ConnzOptions {
        self.auth = on;
        self
    }

    /// Sets the `subscriptions` field.
    pub fn subscriptions(mut self, on: bool) -> ConnzOptions {
        self.subscriptions = on;
        self
    }

    /// Sets the `offset` field.
    pub fn offset(mut self, offset: u64) -> ConnzOptions {
        self.offset = offset;
        self
    }

    /// Sets the `limit` field.
    pub fn limit(mut self, limit: u64) -> ConnzOptions {
        self.limit = limit;
        self
    }

    /// Sets the `cid` field.
    pub fn cid(mut self, cid: u64) -> ConnzOptions {
        self.cid = cid;
        self
    }

    /// Sets the `state` field.
    pub fn state(mut self, state: ConnState) -> ConnzOptions {
        self.state = Some(state);
        self
    }

    /// Sets the `user` field.
    pub fn user(mut self, user: impl Into<String>) -> ConnzOptions {
        self.user = Some(user.into());
        self
    }

    /// Sets the `account` field.
    pub fn account(mut self, account: impl Into<String>) -> ConnzOptions {
        self.account = Some(account.into());
        self
    }

    /// Sets the `filter_subject` field.
    pub fn filter_subject(mut self, subject: impl Into<String>) -> ConnzOptions {
        self.filter_subject = Some(subject.into());
        self
    }
}

/// The order of `CONNZ`'s connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConnzSort {
    /// By connection ID, ascending.
    Cid,
    /// By start, the same as by ID.
    Start,
    /// By subscriptions.
    Subs,
    /// By bytes waiting to be sent.
    Pending,
    /// By messages sent to the client.
    MsgsTo,
    /// By messages received from the client.
    MsgsFrom,
    /// By bytes sent to the client.
    BytesTo,
    /// By bytes received from the client.
    BytesFrom,
    /// By last activity.
    Last,
    /// By time without activity.
    Idle,
    /// By time connected.
    Uptime,
    /// By when a closed connection closed.
    Stop,
    /// By why a closed connection closed.
    Reason,
    /// By round trip time.
    Rtt,
}

/// Which connections `CONNZ` lists by state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnState {
    /// Open ones (the default).
    Open,
    /// Closed ones the server still remembers.
    Closed,
    /// Both.
    All,
}

impl Serialize for ConnState {
    /// nats-server reads the state as a number.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(match self {
            ConnState::Open => 0,
            ConnState::Closed => 1,
            ConnState::All => 2,
        })
    }
}

/// A server's client connections (nats-server's `Connz`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Connz {
    /// The server's ID.
    #[serde(default)]
    pub server_id: String,
    /// Its clock when it answered.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub now: Option<DateTime>,
    /// Connections in this answer.
    #[serde(default)]
    pub num_connections: u64,
    /// Connections that match, in all.
    #[serde(default)]
    pub total: u64,
    /// Connections skipped.
    #[serde(default)]
    pub offset: u64,
    /// The most connections an answer holds.
    #[serde(default)]
    pub limit: u64,
    /// The connections.
    #[serde(default)]
    pub connections: Vec<ConnInfo>,
    /// Fields this version of rnats does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One client connection (nats-server's `ConnInfo`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConnInfo {
    /// Its ID on the server.
    #[serde(default)]
    pub cid: u64,
    /// What connected: `Client`, ... (`kind` on the wire).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// How: `nats`, `websocket`, `mqtt`, ... (`type` on the wire).
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub conn_type: String,
    /// The client's address.
    #[serde(default)]
    pub ip: String,
    /// The client's port.
    #[serde(default)]
    pub port: i64,
    /// When it connected.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub start: Option<DateTime>,
    /// When it last did something.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_activity: Option<DateTime>,
    /// When it closed, for a closed connection.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop: Option<DateTime>,
    /// Why it closed, for a closed connection.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Round trip time, in Go's words (`1.2ms`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rtt: String,
    /// How long it has been connected, in Go's words.
    #[serde(default)]
    pub uptime: String,
    /// How long it has been idle, in Go's words.
    #[serde(default)]
    pub idle: String,
    /// Bytes waiting to be sent to it.
    #[serde(default)]
    pub pending_bytes: u64,
    /// Messages received from it.
    #[serde(default)]
    pub in_msgs: u64,
    /// Messages sent to it.
    #[serde(default)]
    pub out_msgs: u64,
    /// Bytes received from it.
    #[serde(default)]
    pub in_bytes: u64,
    /// Bytes sent to it.
    #[serde(default)]
    pub out_bytes: u64,
    /// Its subscriptions, counted.
    #[serde(default)]
    pub subscriptions: u64,
    /// The name it gave.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Its client library's language.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lang: String,
    /// Its client library's version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The TLS version, when it uses TLS.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tls_version: String,
    /// Its user, with `ConnzOptions::auth`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub authorized_user: String,
    /// Its account, with `ConnzOptions::auth`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub account: String,
    /// Its subscriptions' subjects, with `ConnzOptions::subscriptions`
    /// (`subscriptions_list` on the wire).
    #[serde(
        default,
        rename = "subscriptions_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub subscriptions_list: Vec<String>,
    /// Fields this version of rnats does not know (`subscriptions_list_detail`,
    /// `tls_cipher_suite`, `jwt`, `tags`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
