//! The ops a server sends, as produced by [`Parser`](crate::Parser).

use bytes::{Buf, Bytes, BytesMut};

use crate::headers::{HeaderBlock, HeaderMap, StatusCode};
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

/// A `MSG` or `HMSG` checked but not yet cut into its parts: the frame as received (control
/// line, header block and payload, a view into the read buffer) and where each part lies in
/// it. It takes 80 bytes where a [`Msg`] takes 176, for a caller that stores messages for a
/// while before they are used: each move of a stored message, and its first read on another
/// core, touches a cache line and a quarter instead of three. [`MsgFrame::into_msg`] cuts it.
/// Produced by [`Parser::decode_frame_with`](crate::Parser::decode_frame_with).
#[derive(Debug, Clone)]
pub struct MsgFrame(Parts<Box<HeaderBlock>>);

impl MsgFrame {
    /// Subscription id the message is delivered for.
    pub fn sid(&self) -> u64 {
        self.0.sid
    }

    /// Header plus payload bytes, as announced on the wire.
    pub fn length(&self) -> usize {
        self.0.length
    }

    /// The subject the message was published to (a view into the frame).
    pub fn subject(&self) -> Subject {
        let (start, end) = self.0.subject;
        Subject::from_checked(self.0.frame.slice(start as usize..end as usize))
    }

    /// The bytes the message holds: the frame as received (control line, header block and
    /// payload, without the closing `\r\n`), or once [detached](MsgFrame::detach) its subject,
    /// reply and payload.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0.frame
    }

    /// Copies subject, reply and payload out of the buffer the frame shares with other
    /// messages, into one allocation of their own, so that holding the message no longer
    /// keeps that buffer alive. (The header block is decoded already.)
    pub fn detach(&mut self) {
        let parts = &mut self.0;
        let part = |(start, end): (u32, u32)| &parts.frame[start as usize..end as usize];
        let (subject, reply) = (part(parts.subject), part(parts.reply));
        let payload = &parts.frame[parts.payload_start..];
        let mut own = BytesMut::with_capacity(subject.len() + reply.len() + payload.len());
        own.extend_from_slice(subject);
        own.extend_from_slice(reply);
        own.extend_from_slice(payload);
        // Both lengths are within the old control line's, so they fit.
        let subject_end = subject.len() as u32;
        let reply_end = subject_end + reply.len() as u32;
        parts.subject = (0, subject_end);
        parts.reply = if reply.is_empty() {
            (0, 0)
        } else {
            (subject_end, reply_end)
        };
        parts.payload_start = reply_end as usize;
        parts.frame = own.freeze();
    }

    /// Cuts the frame into a [`Msg`]: subject and reply are views into it, and it becomes
    /// the payload. Always inlined: a caller that turns the result into a message of its
    /// own and returns it then builds that in its return slot, where a call left a copy of
    /// 152 bytes a message to make (in rnats' `Subscriber::poll_next`, 9% of the CPU
    /// receiving 32-byte messages).
    #[inline(always)]
    pub fn into_msg(self) -> Msg {
        self.0.map_header(|block| *block).into_msg()
    }
}

/// A `MSG` or `HMSG` checked, its header block decoded (`H`: kept as it is, or boxed in a
/// [`MsgFrame`]): the frame and where each part lies in it.
#[derive(Debug, Clone)]
pub(crate) struct Parts<H> {
    pub(crate) frame: Bytes,
    pub(crate) sid: u64,
    pub(crate) length: usize,
    pub(crate) payload_start: usize,
    /// The subject's range in the frame (it lies in the control line, which the parser keeps
    /// under `u32::MAX` bytes).
    pub(crate) subject: (u32, u32),
    /// The reply's range; empty when there is none (a reply is never empty).
    pub(crate) reply: (u32, u32),
    /// The decoded header block of an `HMSG`.
    pub(crate) header: Option<H>,
}

/// What the parser makes a [`Msg`] or a [`MsgFrame`] of: a [`Msg`] made straight from it
/// allocates nothing for the header block's place.
pub(crate) type MsgParts = Parts<HeaderBlock>;

impl<H> Parts<H> {
    #[inline(always)]
    fn map_header<G>(self, f: impl FnOnce(H) -> G) -> Parts<G> {
        Parts {
            frame: self.frame,
            sid: self.sid,
            length: self.length,
            payload_start: self.payload_start,
            subject: self.subject,
            reply: self.reply,
            header: self.header.map(f),
        }
    }
}

impl MsgParts {
    /// Keeps the message whole.
    #[inline(always)]
    pub(crate) fn into_frame(self) -> MsgFrame {
        MsgFrame(self.map_header(Box::new))
    }

    /// Cuts the frame into a [`Msg`] (see [`MsgFrame::into_msg`]).
    #[inline(always)]
    pub(crate) fn into_msg(self) -> Msg {
        let view = |(start, end): (u32, u32)| self.frame.slice(start as usize..end as usize);
        // Both were checked when the frame was decoded (`check_received`), or copied exactly
        // from such a frame (`MsgFrame::detach`).
        let subject = Subject::from_checked(view(self.subject));
        let reply = (self.reply.1 > self.reply.0).then(|| Subject::from_checked(view(self.reply)));
        let (headers, status, description) = match self.header {
            Some(block) => (Some(block.headers), block.status, block.description),
            None => (None, None, None),
        };
        // The frame itself becomes the payload: narrowing it costs no reference count, where
        // slicing would take one and dropping the frame give it back.
        let mut payload = self.frame;
        payload.advance(self.payload_start);
        Msg {
            subject,
            sid: self.sid,
            reply,
            headers,
            status,
            description,
            payload,
            length: self.length,
        }
    }
}
