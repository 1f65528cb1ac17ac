//! The envelope every server's answer comes in: who answered, the data, or an error.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::datetime::{DateTime, rfc3339};

/// One server's answer to a system request: nats-server's `ServerAPIResponse`
/// (`{"server": {...}, "data": {...}, "error": {...}}`), with the data decoded as `T`.
///
/// A ping's answer carries its statistics under `statsz` instead of `data`; both land in
/// [`data`](Self::data) (and serialize as `data`). An answer holds the server's data only:
/// the order of a gathering's answers is the order they arrived in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerAnswer<T> {
    /// The server that answered.
    #[serde(default)]
    pub server: ServerIdentity,
    /// What the server answered with; `None` when it answered with an error.
    #[serde(
        default = "none",
        alias = "statsz",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<T>,
    /// Why the server could not answer (a request body it could not read, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
    /// How long after the request went out this answer came in (the round trip natscli's
    /// `server ping` shows); `None` for an answer decoded from text. Not part of the JSON.
    #[serde(skip)]
    pub rtt: Option<Duration>,
}

impl<T> ServerAnswer<T> {
    /// The data, or the server's error when it sent one instead (an answer with neither is an
    /// error with code 0 and no description).
    pub fn into_result(self) -> Result<T, ApiError> {
        match (self.data, self.error) {
            (_, Some(error)) => Err(error),
            (Some(data), None) => Ok(data),
            (None, None) => Err(ApiError::default()),
        }
    }
}

/// `Option::None` for any `T`: serde's `default` would ask `T: Default` of the generic field.
fn none<T>() -> Option<T> {
    None
}

/// Who answered: nats-server's `ServerInfo` of the system events (not the `INFO` a client
/// gets on connect, [`crate::ServerInfo`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ServerIdentity {
    /// The server's name (its ID when it was given none).
    #[serde(default)]
    pub name: String,
    /// The host it listens on for clients.
    #[serde(default)]
    pub host: String,
    /// Its unique ID, which [`System::server`](super::System::server) asks by.
    #[serde(default)]
    pub id: String,
    /// The name of its cluster; empty outside one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster: String,
    /// Its JetStream domain; empty when it has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// Its version (`ver` on the wire).
    #[serde(default, rename = "ver")]
    pub version: String,
    /// Its tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Whether it runs JetStream.
    #[serde(default)]
    pub jetstream: bool,
    /// Its capabilities as bits (1: JetStream, 2: binary stream snapshots, 4: account NRG).
    #[serde(default)]
    pub flags: u64,
    /// The sequence of this message among the server's system messages.
    #[serde(default)]
    pub seq: u64,
    /// When the server sent the answer.
    #[serde(
        default,
        with = "rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub time: Option<DateTime>,
    /// Fields this version of rnats does not know (`metadata`, `feature_flags`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The error a server answers with instead of data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("the server answered {code}: {description}")]
#[non_exhaustive]
pub struct ApiError {
    /// An HTTP-like status: 400 for a request body the server could not read, 500 when
    /// gathering the data failed.
    #[serde(default)]
    pub code: u16,
    /// NATS' own error code, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err_code: Option<u16>,
    /// What went wrong, in the server's words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}
