//! The envelope every server's answer comes in: who answered, the data, or an error; and
//! what a gathering of them yields.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::AnswerDecodeError;
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
    /// What the server answered with; `None` when it answered with an error, or when
    /// its data did not decode (then [`decode_error`](Self::decode_error) says why).
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
    /// Why this answer holds no data although the server sent some: its data did not decode
    /// as `T` (the rest of the answer did), or the whole answer is not a server's answer
    /// (then [`server`](Self::server) is empty too, as nobody can tell who sent it). A
    /// gathering keeps such an answer among the others rather than failing. Not part of
    /// the JSON.
    #[serde(skip)]
    pub decode_error: Option<AnswerDecodeError>,
}

impl<T> ServerAnswer<T> {
    /// The data; or the server's error when it sent one instead, or the decode error when
    /// its data did not decode (an answer with none of them is a server error with code 0
    /// and no description).
    pub fn into_result(self) -> Result<T, AnswerError> {
        match (self.data, self.error, self.decode_error) {
            (_, Some(error), _) => Err(AnswerError::Server(error)),
            (_, None, Some(error)) => Err(AnswerError::Decode(error)),
            (Some(data), None, None) => Ok(data),
            (None, None, None) => Err(AnswerError::Server(ApiError::default())),
        }
    }

    /// An answer that did not decode at all: from nobody known, with nothing but the
    /// error.
    pub(crate) fn undecoded(error: AnswerDecodeError) -> ServerAnswer<T> {
        ServerAnswer {
            server: ServerIdentity::default(),
            data: None,
            error: None,
            rtt: None,
            decode_error: Some(error),
        }
    }
}

impl ServerAnswer<Value> {
    /// The envelope of one answer, its data left as JSON: the first of the two steps a
    /// gathering decodes each answer in, so that data of an unexpected shape costs that
    /// answer's data, not the answer (see the [module](super)).
    pub(crate) fn decode_envelope(
        payload: &[u8],
    ) -> Result<ServerAnswer<Value>, AnswerDecodeError> {
        serde_json::from_slice(payload).map_err(|e| AnswerDecodeError::new(payload, e))
    }

    /// The same answer with its data decoded as `T`; without data, with the decode error,
    /// when it does not decode.
    pub(crate) fn decode_data<T: DeserializeOwned>(self) -> ServerAnswer<T> {
        let (data, decode_error) = match self.data.map(|data| (T::deserialize(&data), data)) {
            None => (None, self.decode_error),
            Some((Ok(data), _)) => (Some(data), self.decode_error),
            Some((Err(e), data)) => (None, Some(AnswerDecodeError::of_data(&data, e))),
        };
        ServerAnswer {
            server: self.server,
            data,
            error: self.error,
            rtt: self.rtt,
            decode_error,
        }
    }
}

/// What one gathering yields: the answers, and how many of the servers it waited for did
/// not answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Gathered<T> {
    /// The answers, in the order they arrived; one that did not decode holds its
    /// [`decode_error`](ServerAnswer::decode_error).
    pub answers: Vec<ServerAnswer<T>>,
    /// The servers waited for that did not answer before the timeout: short of
    /// [`System::expect`](super::System::expect)'s count; of a ping, short of the most
    /// servers its answers count up; of any other request, the servers its ping found
    /// that stayed silent, and those counted up beyond every server heard. A filtered
    /// ping, and a request to the user's own account without a count, have no count of
    /// servers to miss: 0.
    pub missing: usize,
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

/// Why an answer holds no data: the error of [`ServerAnswer::into_result`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// The server answered with an error instead of data (an answer with neither is one
    /// with code 0 and no description).
    #[error(transparent)]
    Server(ApiError),
    /// The server sent data, or an answer, that did not decode as the type asked for.
    #[error("the answer did not decode: {0}")]
    Decode(AnswerDecodeError),
}
