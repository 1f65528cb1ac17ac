//! JetStream on a server: the answer to `JSZ`, and what to ask for.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::jetstream::{JetStreamApiStats, JetStreamConfig, MetaCluster};
use crate::datetime::{DateTime, rfc3339};

/// How much `JSZ` tells (nats-server's `JSzOptions`); by default only the server's
/// totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JszOptions {
    /// Only this account's details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// Each account's usage too, in [`Jsz::account_details`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accounts: bool,
    /// Each stream too (turns on `accounts`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub streams: bool,
    /// Each consumer too (turns on `streams`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub consumer: bool,
    /// Each stream's configuration too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub config: bool,
    /// Only the meta group's leader answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leader_only: bool,
    /// Accounts to skip first.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub offset: u64,
    /// Accounts at most.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub limit: u64,
    /// Each stream's and consumer's RAFT group too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raft: bool,
    /// Only the streams this server leads.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream_leader_only: bool,
}

impl JszOptions {
    /// Only the totals (the default).
    pub fn new() -> JszOptions {
        JszOptions::default()
    }

    /// Each account's usage too.
    pub fn accounts(mut self, on: bool) -> JszOptions {
        self.accounts = on;
        self
    }

    /// Each stream too.
    pub fn streams(mut self, on: bool) -> JszOptions {
        self.streams = on;
        self
    }

    /// Each consumer too.
    pub fn consumer(mut self, on: bool) -> JszOptions {
        self.consumer = on;
        self
    }

    /// Only the details of `account`.
    pub fn account(mut self, account: impl Into<String>) -> JszOptions {
        self.account = Some(account.into());
        self
    }

    /// Whether only the meta group's leader answers.
    pub fn leader_only(mut self, on: bool) -> JszOptions {
        self.leader_only = on;
        self
    }
}

/// JetStream on one server (nats-server's `JSInfo`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Jsz {
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
    /// Whether JetStream is off on this server.
    #[serde(default)]
    pub disabled: bool,
    /// Its JetStream configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<JetStreamConfig>,
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
    /// Replicated assets.
    #[serde(default)]
    pub ha_assets: u64,
    /// The API's counters.
    #[serde(default)]
    pub api: JetStreamApiStats,
    /// Streams (on this server).
    #[serde(default)]
    pub streams: u64,
    /// Consumers (on this server).
    #[serde(default)]
    pub consumers: u64,
    /// Messages stored.
    #[serde(default)]
    pub messages: u64,
    /// Bytes stored.
    #[serde(default)]
    pub bytes: u64,
    /// The meta group, in a cluster (`meta_cluster` on the wire).
    #[serde(
        default,
        rename = "meta_cluster",
        skip_serializing_if = "Option::is_none"
    )]
    pub meta: Option<MetaCluster>,
    /// Each account, with `JszOptions::accounts`, `JszOptions::streams` or
    /// `JszOptions::account`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub account_details: Vec<AccountDetail>,
    /// Accounts in all, of which `account_details` is a page.
    #[serde(default)]
    pub total: u64,
    /// Fields this version of rnats does not know (`limits`, `streams_leader`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One account's JetStream (nats-server's `AccountDetail`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AccountDetail {
    /// The account's name.
    #[serde(default)]
    pub name: String,
    /// Its ID (its name too, outside operator mode).
    #[serde(default)]
    pub id: String,
    /// Memory used, in bytes.
    #[serde(default)]
    pub memory: u64,
    /// Storage used, in bytes.
    #[serde(default)]
    pub storage: u64,
    /// Its streams, with `JszOptions::streams` (`stream_detail` on the wire).
    #[serde(
        default,
        rename = "stream_detail",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub streams: Vec<StreamDetail>,
    /// Fields this version of rnats does not know (`api`, `reserved_memory`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One stream of an account's JetStream (nats-server's `StreamDetail`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StreamDetail {
    /// The stream's name.
    #[serde(default)]
    pub name: String,
    /// When it was created.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created: Option<DateTime>,
    /// What it holds.
    #[serde(default)]
    pub state: StreamDetailState,
    /// Fields this version of rnats does not know (`cluster`, `config`,
    /// `consumer_detail`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a stream holds (part of nats-server's `StreamState`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StreamDetailState {
    /// Messages stored.
    #[serde(default)]
    pub messages: u64,
    /// Bytes stored.
    #[serde(default)]
    pub bytes: u64,
    /// The first message's sequence.
    #[serde(default)]
    pub first_seq: u64,
    /// The last message's sequence.
    #[serde(default)]
    pub last_seq: u64,
    /// Consumers.
    #[serde(default)]
    pub consumer_count: u64,
    /// Fields this version of rnats does not know (`first_ts`, `num_deleted`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
