//! The ops a server sends, as produced by [`Parser`](crate::Parser).

use bytes::Bytes;

use crate::headers::{HeaderMap, StatusCode};
use crate::info::ServerInfo;
use crate::server_error::ServerError;
use crate::subject::Subject;

/// One decoded server op.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerOp {
    /// `INFO {json}`: server details, sent on connect and on cluster changes.
    Info(Box<ServerInfo>),
    /// `MSG` or `HMSG`: a message delivered to a subscription.
    Msg(Msg),
    /// `PING`: the server checks the client is alive; answer with `PONG`.
    Ping,
    /// `PONG`: the answer to a client `PING`.
    Pong,
    /// `+OK`: acknowledgement sent in verbose mode.
    Ok,
    /// `-ERR '<text>'`: the server reports an error.
    Err(ServerError),
}

/// A message delivered by `MSG` (no headers) or `HMSG` (with headers).
///
/// `subject`, `reply` and `payload` share one buffer holding the received
/// frame; no bytes are copied.
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    /// Subject the message was published to.
    pub subject: Subject,
    /// Subscription id the message is delivered for.
    pub sid: u64,
    /// Subject to send a reply to, if the publisher asked for one.
    pub reply: Option<Subject>,
    /// Headers: `Some` (possibly empty) for `HMSG`, `None` for `MSG`.
    pub headers: Option<HeaderMap>,
    /// Status code from the header block's version line, e.g. 503.
    pub status: Option<StatusCode>,
    /// Status description from the header block's version line.
    pub description: Option<String>,
    /// Message body.
    pub payload: Bytes,
    /// Header plus payload bytes, as announced on the wire.
    pub length: usize,
}
