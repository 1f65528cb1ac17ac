//! A message delivered to a subscriber or returned by a request.

use bytes::Bytes;
use rnats_proto::{HeaderMap, Msg, MsgFrame, StatusCode, Subject};
use serde::{Deserialize, Serialize};

/// A message received from the server.
///
/// Subject, reply and payload are slices of the buffer the message was read into: receiving a
/// message does not copy it. It serializes with serde (for logging or replay), as async-nats'
/// does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// The subject the message was published to.
    pub subject: Subject,
    /// Where the publisher expects a reply, if anywhere.
    pub reply: Option<Subject>,
    /// The message body.
    pub payload: Bytes,
    /// Headers, when the message was published with headers (HMSG).
    pub headers: Option<HeaderMap>,
    /// The status code from the header version line (503 no responders, 408, 404, ...).
    pub status: Option<StatusCode>,
    /// The status description that followed the code, if any.
    pub description: Option<String>,
    /// Header and payload bytes together, as they were sent.
    pub length: usize,
}

impl Message {
    /// The message a queued frame holds, cut where a subscriber hands it out. Always
    /// inlined, as `MsgFrame::into_msg` is: the message is then built in its caller's return
    /// slot, not copied there.
    #[inline(always)]
    pub(crate) fn from_frame(frame: MsgFrame) -> Message {
        Message::from(frame.into_msg())
    }
}

impl From<Msg> for Message {
    fn from(msg: Msg) -> Message {
        Message {
            subject: msg.subject,
            reply: msg.reply,
            payload: msg.payload,
            headers: msg.headers,
            status: msg.status,
            description: msg.description,
            length: msg.length,
        }
    }
}

/// A message to publish, as `Client`'s `Sink` implementation takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboundMessage {
    /// Where to publish.
    pub subject: Subject,
    /// Where the receiver should reply, if anywhere.
    pub reply: Option<Subject>,
    /// The message body.
    pub payload: Bytes,
    /// Headers to send with it.
    pub headers: Option<HeaderMap>,
}
