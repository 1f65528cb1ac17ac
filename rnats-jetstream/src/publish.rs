//! Publishing to streams: the [`PublishMessage`] builder (`context::Publish`), the server's
//! [`PublishAck`], and the [`PublishAckFuture`] a publish returns at once.
//!
//! A publish is a request over the client's one request inbox: `Context::publish` queues it
//! and returns a future for the ack, so many publishes can be in flight (pipelining), bounded
//! by the context's `max_ack_inflight` permits.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use rnats_core::client::PendingReply;
use rnats_core::error::Error;
use rnats_core::header::{
    self, HeaderMap, IntoHeaderName, IntoHeaderValue, NATS_EXPECTED_LAST_MESSAGE_ID,
    NATS_EXPECTED_LAST_SEQUENCE, NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, NATS_EXPECTED_STREAM,
    NATS_MESSAGE_ID,
};
use rnats_core::subject::ToSubject;
use rnats_core::{RequestErrorKind as CoreRequestErrorKind, StatusCode};
use serde::{Deserialize, Serialize};
use tokio::sync::OwnedSemaphorePermit;

use crate::context::Context;
use crate::errors::ErrorCode;
use crate::message::OutboundMessage;
use crate::publish_timing::{AckTiming, wait_ack};

/// Names the subject, or subject filter, that a `Nats-Expected-Last-Subject-Sequence` check
/// looks at instead of the subject published to (nats-server 2.11+).
pub const NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT: &str =
    "Nats-Expected-Last-Subject-Sequence-Subject";

/// What the server answers a stored publish with.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishAck {
    /// The stream that stored the message.
    pub stream: String,
    /// The message's sequence in the stream.
    #[serde(rename = "seq")]
    pub sequence: u64,
    /// The JetStream domain, if any.
    #[serde(default)]
    pub domain: String,
    /// Whether the message was a duplicate (same `Nats-Msg-Id` within the stream's
    /// duplicate window) and so not stored again.
    #[serde(default)]
    pub duplicate: bool,
    /// The counter's value, for streams with counters enabled.
    #[serde(default, rename = "val")]
    pub value: Option<String>,
    /// The batch id, on the last ack of an atomic batch publish.
    #[serde(default, rename = "batch", skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// Messages stored by an atomic batch, on its last ack.
    #[serde(default, rename = "count", skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u64>,
}

/// A message to publish to a stream, with the headers JetStream understands: build it with
/// [`PublishMessage::build`] and send it with `Context::send_publish`.
#[derive(Debug, Clone, Default)]
pub struct PublishMessage {
    pub(crate) payload: Bytes,
    pub(crate) headers: Option<HeaderMap>,
}

impl PublishMessage {
    /// Whether it carries a per-message TTL, which an older server would store and ignore
    /// (ADR-43): a publish asks the server's feature first.
    pub(crate) fn has_ttl(&self) -> bool {
        self.headers
            .as_ref()
            .is_some_and(|headers| headers.get(header::NATS_MESSAGE_TTL).is_some())
    }
}

impl PublishMessage {
    /// An empty message.
    pub fn build() -> PublishMessage {
        PublishMessage::default()
    }

    /// Sets the body.
    pub fn payload(mut self, payload: Bytes) -> PublishMessage {
        self.payload = payload;
        self
    }

    /// Sets every header at once.
    pub fn headers(mut self, headers: HeaderMap) -> PublishMessage {
        self.headers = Some(headers);
        self
    }

    /// Sets one header.
    pub fn header<N: IntoHeaderName, V: IntoHeaderValue>(mut self, name: N, value: V) -> Self {
        self.headers
            .get_or_insert_with(HeaderMap::new)
            .insert(name, value);
        self
    }

    /// The message id the stream deduplicates on (`Nats-Msg-Id`).
    pub fn message_id<T: AsRef<str>>(self, id: T) -> Self {
        self.header(NATS_MESSAGE_ID, id.as_ref())
    }

    /// Stores the message only if the stream's last message has this id.
    pub fn expected_last_message_id<T: AsRef<str>>(self, id: T) -> Self {
        self.header(NATS_EXPECTED_LAST_MESSAGE_ID, id.as_ref())
    }

    /// Stores the message only if the stream's last sequence is this one.
    pub fn expected_last_sequence(self, sequence: u64) -> Self {
        self.header(NATS_EXPECTED_LAST_SEQUENCE, sequence)
    }

    /// Stores the message only if the last message on its subject has this sequence.
    pub fn expected_last_subject_sequence(self, sequence: u64) -> Self {
        self.header(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, sequence)
    }

    /// Stores the message only if the last message on `subject`, rather than on the subject
    /// published to, has `sequence`; `subject` may be a filter with wildcards (`orders.*`),
    /// and then the stream's last message on any subject it matches counts (sequence 0: no
    /// message matches yet). nats.go's `ExpectLastSequenceForSubject`.
    ///
    /// One call sets both headers, `Nats-Expected-Last-Subject-Sequence` and
    /// [`NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT`], because the subject means nothing
    /// without the sequence. nats-server reads the subject from 2.11 on; an older server
    /// ignores it and checks the sequence against the subject published to.
    pub fn expected_last_subject_sequence_for<T: AsRef<str>>(
        self,
        subject: T,
        sequence: u64,
    ) -> Self {
        self.header(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, sequence)
            .header(
                NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT,
                subject.as_ref(),
            )
    }

    /// Stores the message only if the subject belongs to this stream.
    pub fn expected_stream<T: AsRef<str>>(self, stream: T) -> Self {
        self.header(NATS_EXPECTED_STREAM, stream.as_ref())
    }

    /// A time to live for this message (ADR-43; streams with `allow_message_ttl`), sent in
    /// whole seconds as async-nats sends it. The server counts whole seconds too: a fraction
    /// is dropped (1.5 s lives 1 s, as nats.go's `WithMsgTTL` gets from the server), and a
    /// TTL under a second is refused with `invalid per-message TTL` (error code 10165), as
    /// the server refuses nats.go's. For a message that never expires, see
    /// [`ttl_never`](Self::ttl_never).
    pub fn ttl(self, ttl: Duration) -> Self {
        self.header(header::NATS_MESSAGE_TTL, ttl.as_secs())
    }

    /// Keeps this message past the stream's `max_age` (ADR-43 `Nats-TTL: never`; streams with
    /// `allow_message_ttl`): it goes only when removed, purged or pushed out by the stream's
    /// other limits. An rnats extension: nats.go sends `never` for schedules only
    /// (`WithScheduleTTLNever`).
    pub fn ttl_never(self) -> Self {
        self.header(header::NATS_MESSAGE_TTL, "never")
    }

    /// The message as an [`OutboundMessage`] to `subject`.
    pub fn outbound_message<S: ToSubject>(self, subject: S) -> OutboundMessage {
        OutboundMessage::new(subject.to_subject(), self.payload, self.headers)
    }
}

/// The kinds of [`PublishError`] (async-nats' variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PublishErrorKind {
    /// No stream stores the subject (the server answered with no responders).
    StreamNotFound,
    /// An expected-last-message-id check failed.
    WrongLastMessageId,
    /// An expected-last-sequence check failed.
    WrongLastSequence,
    /// No ack came within the ack timeout.
    TimedOut,
    /// The connection closed before the ack came.
    BrokenPipe,
    /// `max_ack_inflight` acks are outstanding and the context does not wait for room.
    MaxAckPending,
    /// The message exceeds the server's `max_payload`.
    MaxPayloadExceeded,
    /// Anything else; the source says what.
    Other,
}

impl fmt::Display for PublishErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PublishErrorKind::StreamNotFound => "no stream found for given subject",
            PublishErrorKind::WrongLastMessageId => "wrong last message id",
            PublishErrorKind::WrongLastSequence => "wrong last sequence",
            PublishErrorKind::TimedOut => "timed out: didn't receive ack in time",
            PublishErrorKind::BrokenPipe => "broken pipe",
            PublishErrorKind::MaxAckPending => "max ack pending reached",
            PublishErrorKind::MaxPayloadExceeded => "max payload size exceeded",
            PublishErrorKind::Other => "publish failed",
        })
    }
}

/// Why a JetStream publish failed. A server refusal has the [`crate::Error`] (with its
/// `error_code()`) as its source: `err.downcast_source::<rnats::jetstream::Error>()`.
pub type PublishError = Error<PublishErrorKind>;

/// How a publish retries when no stream answers (ADR-22): a stream may be between leaders,
/// or just being created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    /// Retries after the first attempt.
    pub(crate) attempts: usize,
    /// Wait between attempts.
    pub(crate) wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        // nats.go's defaults.
        RetryPolicy {
            attempts: 2,
            wait: Duration::from_millis(250),
        }
    }
}

/// The ack of a publish, to await when convenient: `context.publish(..).await?` queues the
/// message, and awaiting the returned future waits for the stream's answer.
///
/// Dropping it without awaiting is fine: its in-flight permit is released once the ack (or
/// the ack timeout) comes, so `Context::wait_for_acks` still covers it.
pub struct PublishAckFuture {
    pub(crate) reply: Option<PendingReply>,
    pub(crate) permit: Option<OwnedSemaphorePermit>,
    pub(crate) timeout: Duration,
    pub(crate) context: Context,
    /// What is needed to send the message again on no responders.
    pub(crate) retry: Option<Retry>,
}

/// The message and where to send it again.
pub(crate) struct Retry {
    pub(crate) subject: String,
    pub(crate) message: PublishMessage,
    pub(crate) policy: RetryPolicy,
}

impl fmt::Debug for PublishAckFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublishAckFuture")
            .field("reply", &self.reply)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl PublishAckFuture {
    async fn ack(mut self) -> Result<PublishAck, PublishError> {
        let Some(reply) = self.reply.take() else {
            return Err(PublishError::new(PublishErrorKind::BrokenPipe));
        };
        let (reply, timing) = wait_ack(reply, self.timeout).await;
        match reply {
            Err(error) if error.kind() == CoreRequestErrorKind::NoResponders => {
                // Kept out of line and boxed: the common path's future stays small (it is
                // boxed and moved once per publish).
                Box::pin(self.retry(timing)).await
            }
            other => {
                let result = finish(other);
                timing.record(&result);
                result
            }
        }
    }

    /// Publishes again while no stream answers, as the retry policy allows (ADR-22); the
    /// publish is timed from its first send (`timing`) to its last answer.
    async fn retry(self, mut timing: AckTiming) -> Result<PublishAck, PublishError> {
        let result = self.retry_sends(&mut timing).await;
        timing.record(&result);
        result
    }

    async fn retry_sends(&self, timing: &mut AckTiming) -> Result<PublishAck, PublishError> {
        let Some(retry) = self.retry.as_ref() else {
            return Err(PublishError::new(PublishErrorKind::StreamNotFound));
        };
        for _ in 0..retry.policy.attempts {
            rnats_core::runtime::sleep(retry.policy.wait).await;
            let reply = self
                .context
                .start_publish(&retry.subject, retry.message.clone())
                .await?;
            let (reply, later) = wait_ack(reply, self.timeout).await;
            *timing = std::mem::replace(timing, AckTiming::none()).then(later);
            match reply {
                Err(error) if error.kind() == CoreRequestErrorKind::NoResponders => continue,
                other => return finish(other),
            }
        }
        Err(PublishError::new(PublishErrorKind::StreamNotFound))
    }
}

/// A reply (or the failure to get one) as the publish's result.
pub(crate) fn finish(
    reply: Result<rnats_core::Message, rnats_core::RequestError>,
) -> Result<PublishAck, PublishError> {
    match reply {
        Ok(message) => decode_ack(&message.payload, message.status),
        Err(error) => {
            let kind = match error.kind() {
                CoreRequestErrorKind::TimedOut => PublishErrorKind::TimedOut,
                CoreRequestErrorKind::NoResponders => PublishErrorKind::StreamNotFound,
                _ => PublishErrorKind::BrokenPipe,
            };
            Err(PublishError::with_source(kind, error))
        }
    }
}

/// A publish reply read in one pass: the server's error, or the ack's fields. (An untagged
/// `Response` enum tries the error shape first and builds a serde error for every ack:
/// measured, a tenth of a pipelined publish's instructions.)
#[derive(Deserialize)]
struct AckReply {
    error: Option<crate::Error>,
    #[serde(default)]
    stream: String,
    seq: Option<u64>,
    #[serde(default)]
    domain: String,
    #[serde(default)]
    duplicate: bool,
    val: Option<String>,
    batch: Option<String>,
    count: Option<u64>,
}

/// The stream's answer to a publish: an ack, or an error whose JetStream code picks the kind.
pub(crate) fn decode_ack(
    payload: &[u8],
    status: Option<StatusCode>,
) -> Result<PublishAck, PublishError> {
    if status == Some(StatusCode::NO_RESPONDERS) {
        return Err(PublishError::new(PublishErrorKind::StreamNotFound));
    }
    if let Some(ack) = plain_ack(payload) {
        return Ok(ack);
    }
    let reply: AckReply = serde_json::from_slice(payload)
        .map_err(|e| PublishError::with_source(PublishErrorKind::Other, e))?;
    if let Some(error) = reply.error {
        let kind = match error.error_code() {
            ErrorCode::STREAM_WRONG_LAST_MESSAGE_ID => PublishErrorKind::WrongLastMessageId,
            // A replicated stream refuses an expectation that a write still being
            // replicated already fails with 10164 (no sequence in it), before 10071.
            ErrorCode::STREAM_WRONG_LAST_SEQUENCE
            | ErrorCode::STREAM_WRONG_LAST_SEQUENCE_CONSTANT => PublishErrorKind::WrongLastSequence,
            ErrorCode::STREAM_NOT_FOUND => PublishErrorKind::StreamNotFound,
            _ => PublishErrorKind::Other,
        };
        return Err(PublishError::with_source(kind, error));
    }
    let Some(sequence) = reply.seq else {
        return Err(PublishError::with_source(
            PublishErrorKind::Other,
            "the publish reply has neither an error nor a sequence",
        ));
    };
    Ok(PublishAck {
        stream: reply.stream,
        sequence,
        domain: reply.domain,
        duplicate: reply.duplicate,
        value: reply.val,
        batch_id: reply.batch,
        batch_size: reply.count,
    })
}

/// Reads the ack nats-server sends for nearly every publish, written in its struct's field
/// order with nothing to escape: `{"stream":"S","seq":N}`, then optionally `"domain"` and
/// `"duplicate":true`. `None` for anything else (errors, counters, batches, escapes, spacing),
/// which serde_json reads instead.
///
/// Written by hand because this is the one JSON document read per publish: serde_json spends
/// about 1,500 instructions on it, a fifth of a pipelined publish's client-side cost, and
/// this reader about a tenth of that. Property tests hold it to serde_json's answers.
pub(crate) fn plain_ack(payload: &[u8]) -> Option<PublishAck> {
    let rest = payload.strip_prefix(br#"{"stream":""#)?;
    let (stream, rest) = plain_string(rest)?;
    let rest = rest.strip_prefix(br#","seq":"#)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let sequence = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let mut rest = &rest[digits..];
    let mut domain = String::new();
    if let Some(after) = rest.strip_prefix(br#","domain":""#) {
        let (text, after) = plain_string(after)?;
        domain = text;
        rest = after;
    }
    let duplicate = match rest.strip_prefix(br#","duplicate":true"#) {
        Some(after) => {
            rest = after;
            true
        }
        None => false,
    };
    if rest != b"}" {
        return None;
    }
    Some(PublishAck {
        stream,
        sequence,
        domain,
        duplicate,
        value: None,
        batch_id: None,
        batch_size: None,
    })
}

/// The text up to the closing quote, when it needs no unescaping and is UTF-8.
fn plain_string(input: &[u8]) -> Option<(String, &[u8])> {
    let end = input
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    if input[end] != b'"' {
        return None;
    }
    let text = std::str::from_utf8(&input[..end]).ok()?.to_owned();
    Some((text, &input[end + 1..]))
}

impl IntoFuture for PublishAckFuture {
    type Output = Result<PublishAck, PublishError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.ack())
    }
}

impl Drop for PublishAckFuture {
    fn drop(&mut self) {
        // Not awaited: hand the reply and its permit to the context's acker, which holds the
        // permit until the ack or the timeout, so the in-flight bound stays true.
        if let (Some(reply), Some(permit)) = (self.reply.take(), self.permit.take()) {
            self.context.hand_to_acker(reply, permit, self.timeout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde_json makes of `payload`, the reference for [`plain_ack`].
    fn serde_ack(payload: &[u8]) -> Option<PublishAck> {
        let reply: AckReply = serde_json::from_slice(payload).ok()?;
        if reply.error.is_some() {
            return None;
        }
        Some(PublishAck {
            stream: reply.stream,
            sequence: reply.seq?,
            domain: reply.domain,
            duplicate: reply.duplicate,
            value: reply.val,
            batch_id: reply.batch,
            batch_size: reply.count,
        })
    }

    #[test]
    fn the_servers_usual_acks_take_the_plain_path() {
        for payload in [
            &br#"{"stream":"ORDERS","seq":1}"#[..],
            br#"{"stream":"ORDERS","seq":18446744073709551615}"#,
            br#"{"stream":"KV_cfg","seq":42,"domain":"hub"}"#,
            br#"{"stream":"S","seq":7,"duplicate":true}"#,
            br#"{"stream":"S","seq":7,"domain":"d","duplicate":true}"#,
        ] {
            let plain = plain_ack(payload).expect("plain path");
            assert_eq!(Some(plain), serde_ack(payload));
        }
        // Left to serde_json: escapes, spacing, other fields, overflow, leading zeros.
        for payload in [
            &br#"{"stream":"a"b","seq":1}"#[..],
            br#"{ "stream":"S","seq":1}"#,
            br#"{"stream":"S","seq":1,"val":"3"}"#,
            br#"{"stream":"S","seq":18446744073709551616}"#,
            br#"{"stream":"S","seq":01}"#,
            br#"{"stream":"S","seq":1}x"#,
            br#"{"error":{"code":503,"description":"x"}}"#,
        ] {
            assert_eq!(
                plain_ack(payload),
                None,
                "{}",
                String::from_utf8_lossy(payload)
            );
        }
    }

    proptest! {
        #[test]
        fn plain_acks_agree_with_serde_json(
            stream in "[a-zA-Z0-9_\\-\"é ]{0,12}",
            seq in any::<u64>(),
            domain in proptest::option::of("[a-z\"\\\\]{0,6}"),
            duplicate in any::<bool>(),
            value in proptest::option::of("[0-9]{1,4}"),
        ) {
            // In the server's field order, with serde_json doing the string escapes.
            let quote = |text: &str| serde_json::to_string(text).unwrap();
            let mut payload = format!(r#"{{"stream":{},"seq":{seq}"#, quote(&stream));
            if let Some(domain) = &domain {
                payload.push_str(&format!(r#","domain":{}"#, quote(domain)));
            }
            if duplicate {
                payload.push_str(r#","duplicate":true"#);
            }
            if let Some(value) = &value {
                payload.push_str(&format!(r#","val":{}"#, quote(value)));
            }
            payload.push('}');
            let plain = plain_ack(payload.as_bytes());
            let needs_escape = |text: &str| text.contains(['"', '\\']);
            let usual = value.is_none()
                && !needs_escape(&stream)
                && !domain.as_deref().is_some_and(needs_escape);
            prop_assert_eq!(plain.is_some(), usual, "{}", payload);
            if let Some(plain) = plain {
                prop_assert_eq!(Some(plain), serde_ack(payload.as_bytes()));
            }
        }

        #[test]
        fn any_bytes_read_plainly_read_the_same_by_serde_json(payload in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Some(plain) = plain_ack(&payload) {
                prop_assert_eq!(Some(plain), serde_ack(&payload));
            }
        }
    }

    #[test]
    fn acks_and_refusals_decode() {
        let ack = decode_ack(br#"{"stream":"S","seq":7,"duplicate":true}"#, None).unwrap();
        assert_eq!(
            (ack.stream.as_str(), ack.sequence, ack.duplicate),
            ("S", 7, true)
        );
        let refused =
            br#"{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"}}"#;
        let error = decode_ack(refused, None).unwrap_err();
        assert_eq!(error.kind(), PublishErrorKind::WrongLastSequence);
        let detail = error.downcast_source::<crate::Error>().unwrap();
        assert_eq!(detail.error_code(), ErrorCode::STREAM_WRONG_LAST_SEQUENCE);
        assert_eq!(detail.code(), 400);
        // A replicated stream's early refusal of the same expectation.
        let refused =
            br#"{"error":{"code":400,"err_code":10164,"description":"wrong last sequence"}}"#;
        let error = decode_ack(refused, None).unwrap_err();
        assert_eq!(error.kind(), PublishErrorKind::WrongLastSequence);
        let error = decode_ack(b"", Some(StatusCode::NO_RESPONDERS)).unwrap_err();
        assert_eq!(error.kind(), PublishErrorKind::StreamNotFound);
        let error = decode_ack(br#"{"stream":"S"}"#, None).unwrap_err();
        assert_eq!(error.kind(), PublishErrorKind::Other);
    }

    #[test]
    fn the_subject_expectation_names_its_subject_or_filter() {
        let message = PublishMessage::build().expected_last_subject_sequence_for("s.*", 7);
        let headers = message.headers.unwrap();
        assert_eq!(
            headers
                .get("Nats-Expected-Last-Subject-Sequence")
                .unwrap()
                .as_str(),
            "7"
        );
        assert_eq!(
            headers
                .get("Nats-Expected-Last-Subject-Sequence-Subject")
                .unwrap()
                .as_str(),
            "s.*"
        );
    }

    #[test]
    fn the_builder_sets_the_headers_jetstream_reads() {
        let message = PublishMessage::build()
            .payload("x".into())
            .message_id("id-1")
            .expected_stream("S")
            .expected_last_sequence(4)
            .expected_last_subject_sequence(2)
            .expected_last_message_id("id-0")
            .ttl(Duration::from_secs(90));
        let headers = message.headers.unwrap();
        assert_eq!(headers.get(NATS_MESSAGE_ID).unwrap().as_str(), "id-1");
        assert_eq!(headers.get("Nats-Expected-Stream").unwrap().as_str(), "S");
        assert_eq!(
            headers.get("Nats-Expected-Last-Sequence").unwrap().as_str(),
            "4"
        );
        assert_eq!(
            headers
                .get("Nats-Expected-Last-Subject-Sequence")
                .unwrap()
                .as_str(),
            "2"
        );
        assert_eq!(
            headers.get("Nats-Expected-Last-Msg-Id").unwrap().as_str(),
            "id-0"
        );
        assert_eq!(headers.get("Nats-TTL").unwrap().as_str(), "90");
    }
}
