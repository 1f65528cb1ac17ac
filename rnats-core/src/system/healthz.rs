//! Whether a server is healthy: the answer to `HEALTHZ`, and what it checks.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What `HEALTHZ` checks (nats-server's `HealthzOptions`); by default the server and, where
/// it runs JetStream, JetStream with every stream and consumer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HealthzOptions {
    /// Only whether JetStream is enabled, not the health of its assets.
    #[serde(
        rename = "js-enabled-only",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub js_enabled_only: bool,
    /// Only the server's JetStream, not its streams and consumers.
    #[serde(
        rename = "js-server-only",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub js_server_only: bool,
    /// Only the JetStream meta group.
    #[serde(
        rename = "js-meta-only",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub js_meta_only: bool,
    /// Only this account's assets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// Only this stream (with [`account`](Self::account)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Only this consumer (with [`stream`](Self::stream)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<String>,
    /// Every problem in [`Healthz::errors`], not only the first in [`Healthz::error`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub details: bool,
}

impl HealthzOptions {
    /// Every check (the default).
    pub fn new() -> HealthzOptions {
        HealthzOptions::default()
    }

    /// Only whether JetStream is enabled.
    pub fn js_enabled_only(mut self, on: bool) -> HealthzOptions {
        self.js_enabled_only = on;
        self
    }

    /// Only the server's JetStream, not its assets.
    pub fn js_server_only(mut self, on: bool) -> HealthzOptions {
        self.js_server_only = on;
        self
    }

    /// Every problem, not only the first.
    pub fn details(mut self, on: bool) -> HealthzOptions {
        self.details = on;
        self
    }
}

/// A server's health (nats-server's `HealthStatus`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Healthz {
    /// `ok`, or what is wrong (`unavailable`, `error`, ...).
    #[serde(default)]
    pub status: String,
    /// An HTTP-like status when not healthy (503, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
    /// The first problem found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every problem found, with `HealthzOptions::details`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<HealthzError>,
    /// Fields this version of rnats does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Healthz {
    /// Whether the server said it is healthy.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// One problem `HEALTHZ` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HealthzError {
    /// What is unhealthy: `CONNECTION`, `BAD_REQUEST`, `JETSTREAM`, `ACCOUNT`, `STREAM` or
    /// `CONSUMER` (`type` on the wire).
    #[serde(default, rename = "type")]
    pub kind: String,
    /// The account concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The stream concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// The consumer concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<String>,
    /// What is wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
