//! Atomic batch publishing (ADR-50): messages a stream stores all together or not at all.
//!
//! [`Context::atomic_batch`] starts an [`AtomicBatch`]; each [`AtomicBatch::add`] sends one
//! message, which the server stages, and [`AtomicBatch::commit`] (or
//! [`AtomicBatch::commit_eob`]) asks it to check the batch's expectations and store every
//! staged message at once, answering with one [`PublishAck`] that carries the batch id and
//! count. Until the commit nothing is visible in the stream; a batch that fails anywhere is
//! thrown away by the server as a whole.
//!
//! The `Nats-Batch-Id`, `Nats-Batch-Sequence` and `Nats-Batch-Commit` headers are set here.
//! What the server would refuse and the client can know beforehand is refused before the
//! message leaves, with the batch left intact: more messages than the server's batch limit
//! (1,000 by default, [`AtomicBatch::max_messages`] for servers configured otherwise), a batch
//! id over 64 characters, `Nats-Expected-Last-Msg-Id` (which batches do not support),
//! `Nats-Expected-Last-Sequence` past the first message, a per-subject expectation on a
//! subject the batch already wrote, a message id used twice in the batch, a message over the
//! connection's `max_payload`. [`Context::publish_atomic_batch`] checks a whole batch this
//! way before sending any of it.
//!
//! ```no_run
//! # async fn run(js: rnats_jetstream::Context) -> Result<(), rnats_jetstream::batch::BatchPublishError> {
//! let mut batch = js.atomic_batch();
//! batch.add("orders.1.address", "Main St 1".into()).await?;
//! batch.add("orders.1.city", "Springfield".into()).await?;
//! let ack = batch.commit("orders.1.zip", "12345".into()).await?;
//! assert_eq!(ack.batch_size, Some(3));
//! # Ok(()) }
//! ```

use std::collections::HashSet;
use std::fmt;

use bytes::Bytes;
use rnats_core::StatusCode;
use rnats_core::client::PendingReply;
use rnats_core::error::Error;
use rnats_core::header::{
    HeaderMap, NATS_EXPECTED_LAST_MESSAGE_ID, NATS_EXPECTED_LAST_SEQUENCE,
    NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, NATS_MESSAGE_ID,
};
use rnats_core::subject::ToSubject;
use rnats_core::{PublishErrorKind as CorePublishErrorKind, RequestErrorKind};
use serde::Deserialize;

use crate::context::Context;
use crate::errors::ErrorCode;
use crate::features::Feature;
use crate::publish::{PublishAck, PublishMessage};

pub use crate::publish::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT;
pub use rnats_core::header::{NATS_BATCH_COMMIT, NATS_BATCH_ID, NATS_BATCH_SEQUENCE};

/// Messages in one atomic batch that nats-server allows unless configured otherwise
/// (`jetstream.limits.max_batch_size`; ADR-50 rev. 10).
pub const DEFAULT_MAX_MESSAGES: u64 = 1_000;

/// The longest batch id the server takes (ADR-50).
pub const MAX_BATCH_ID_LEN: usize = 64;

/// A batch being published: messages are sent as they are added and staged by the server
/// until the commit. Made by [`Context::atomic_batch`].
///
/// Dropping an uncommitted batch that sent something tells the server to abandon it at once
/// (rather than after its 10 s idle timeout), so it stops counting against the stream's
/// limit of batches in flight.
pub struct AtomicBatch {
    context: Context,
    id: String,
    max_messages: u64,
    ack_every: Option<u64>,
    checker: Checker,
    /// Whether the batch can still take messages: false once committed, abandoned or failed.
    open: bool,
}

impl fmt::Debug for AtomicBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicBatch")
            .field("id", &self.id)
            .field("sent", &self.checker.sent)
            .field("open", &self.open)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Starts an atomic batch with a fresh id (ADR-50; streams with `allow_atomic_publish`,
    /// nats-server 2.12 or later). An rnats extension.
    pub fn atomic_batch(&self) -> AtomicBatch {
        AtomicBatch {
            context: self.clone(),
            id: rnats_core::id::next(),
            max_messages: DEFAULT_MAX_MESSAGES,
            ack_every: None,
            checker: Checker::default(),
            open: true,
        }
    }

    /// Publishes `messages` as one atomic batch, the last one committing it, after checking
    /// all of them against what the server would refuse: a batch the client can tell is bad
    /// is refused before any of it is sent. An rnats extension.
    pub async fn publish_atomic_batch<S, I>(
        &self,
        messages: I,
    ) -> Result<PublishAck, BatchPublishError>
    where
        S: ToSubject,
        I: IntoIterator<Item = (S, PublishMessage)>,
    {
        let messages: Vec<(S, PublishMessage)> = messages.into_iter().collect();
        let mut batch = self.atomic_batch();
        let mut dry_run = Checker::default();
        for (subject, message) in &messages {
            dry_run.check(&subject.subject_text(), message, batch.max_messages)?;
            dry_run.record(&subject.subject_text(), message);
        }
        let mut messages = messages.into_iter();
        let Some((last_subject, last)) = messages.next_back() else {
            return Err(BatchPublishError::new(BatchPublishErrorKind::Empty));
        };
        for (subject, message) in messages {
            batch.add_message(subject, message).await?;
        }
        batch.commit_message(last_subject, last).await
    }
}

impl crate::stream::Stream {
    /// Starts an atomic batch for this stream, refused at once when its configuration (as
    /// last fetched) cannot take one: `allow_atomic_publish` off, or asynchronous
    /// persistence (ADR-50). An rnats extension.
    pub fn atomic_batch(&self) -> Result<AtomicBatch, BatchPublishError> {
        let config = &self.cached_info().config;
        if !config.allow_atomic_publish {
            return Err(BatchPublishError::with_source(
                BatchPublishErrorKind::Disabled,
                format!("stream {} does not allow atomic publishing", config.name),
            ));
        }
        if config.persist_mode == Some(crate::stream::PersistenceMode::Async) {
            return Err(BatchPublishError::with_source(
                BatchPublishErrorKind::Disabled,
                format!(
                    "stream {} persists asynchronously, which atomic batches cannot use",
                    config.name
                ),
            ));
        }
        Ok(self.context.atomic_batch())
    }
}

impl AtomicBatch {
    /// Uses `id` as the batch id instead of a fresh one: at most 64 characters, printable
    /// ASCII without spaces. Only before the first message.
    pub fn with_id<T: Into<String>>(mut self, id: T) -> Result<AtomicBatch, BatchPublishError> {
        let id = id.into();
        let printable = id.bytes().all(|b| b.is_ascii_graphic());
        if id.is_empty() || id.len() > MAX_BATCH_ID_LEN || !printable {
            return Err(BatchPublishError::with_source(
                BatchPublishErrorKind::InvalidId,
                format!("batch id {id:?}: 1 to {MAX_BATCH_ID_LEN} printable ASCII characters"),
            ));
        }
        if self.checker.sent > 0 {
            return Err(BatchPublishError::with_source(
                BatchPublishErrorKind::Closed,
                "the batch id cannot change once a message was sent",
            ));
        }
        self.id = id;
        Ok(self)
    }

    /// The most messages the server takes in one batch (default [`DEFAULT_MAX_MESSAGES`]);
    /// set it to the server's `max_batch_size` when that was configured. Checked before each
    /// message is sent.
    pub fn max_messages(mut self, max: u64) -> AtomicBatch {
        self.max_messages = max.max(1);
        self
    }

    /// Asks the server to confirm every `n`th message and waits for it, so a batch the
    /// server already gave up on stops early and the sender never runs far ahead of the
    /// server. Without it (the default) only the first message and the commit are waited
    /// for.
    pub fn ack_every(mut self, n: u64) -> AtomicBatch {
        self.ack_every = Some(n.max(1));
        self
    }

    /// The batch id (`Nats-Batch-Id`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Messages sent so far.
    pub fn len(&self) -> u64 {
        self.checker.sent
    }

    /// Whether nothing was sent yet.
    pub fn is_empty(&self) -> bool {
        self.checker.sent == 0
    }

    /// Adds a message with `payload` to `subject`. See [`AtomicBatch::add_message`].
    pub async fn add<S: ToSubject>(
        &mut self,
        subject: S,
        payload: Bytes,
    ) -> Result<(), BatchPublishError> {
        self.add_message(subject, PublishMessage::build().payload(payload))
            .await
    }

    /// Adds a message with headers and expectations (built with
    /// [`Publish`](crate::context::Publish)). The first message waits for the server to
    /// accept the batch; the others are sent without waiting unless [`AtomicBatch::ack_every`]
    /// says otherwise. A message refused before sending leaves the batch as it was; a
    /// failure from the server ends it.
    pub async fn add_message<S: ToSubject>(
        &mut self,
        subject: S,
        message: PublishMessage,
    ) -> Result<(), BatchPublishError> {
        let subject = subject.subject_text();
        let next = self.checker.sent + 1;
        let wait = next == 1 || self.ack_every.is_some_and(|n| next.is_multiple_of(n));
        let reply = self.send(&subject, message, None, wait).await?;
        let Some(reply) = reply else {
            return Ok(());
        };
        let timeout = self.context.timeout_or_default();
        let outcome = reply
            .wait(Some(timeout))
            .await
            .map_err(request_failure)
            .and_then(|message| staged(&message.payload, message.status));
        if outcome.is_err() {
            self.open = false;
        }
        outcome
    }

    /// Adds the last message, with `payload` to `subject`, and commits the batch; see
    /// [`AtomicBatch::commit_message`].
    pub async fn commit<S: ToSubject>(
        self,
        subject: S,
        payload: Bytes,
    ) -> Result<PublishAck, BatchPublishError> {
        self.commit_message(subject, PublishMessage::build().payload(payload))
            .await
    }

    /// Adds the last message and commits the batch (`Nats-Batch-Commit: 1`): the server
    /// checks every expectation in the batch and stores all of it, or none of it.
    pub async fn commit_message<S: ToSubject>(
        mut self,
        subject: S,
        message: PublishMessage,
    ) -> Result<PublishAck, BatchPublishError> {
        let subject = subject.subject_text();
        let reply = self.send(&subject, message, Some("1"), true).await?;
        self.finish(reply).await
    }

    /// Commits the messages added so far without adding one (`Nats-Batch-Commit: eob`,
    /// nats-server 2.14 or later). An empty batch cannot be committed.
    pub async fn commit_eob(mut self) -> Result<PublishAck, BatchPublishError> {
        if self.checker.sent == 0 {
            return Err(BatchPublishError::new(BatchPublishErrorKind::Empty));
        }
        self.context
            .require_capability([Feature::AtomicCommitEob])
            .map_err(|e| BatchPublishError::with_source(BatchPublishErrorKind::Unsupported, e))?;
        // The end-of-batch marker is not stored, but must go to a subject of the stream.
        let subject = self.checker.last_subject.clone().unwrap_or_default();
        let reply = self
            .send(&subject, PublishMessage::build(), Some("eob"), true)
            .await?;
        self.finish(reply).await
    }

    /// Tells the server to throw the batch away now: nothing of it is stored.
    pub async fn abandon(mut self) -> Result<(), BatchPublishError> {
        match self.abandon_message() {
            Some((subject, headers)) => {
                self.open = false;
                self.context
                    .client
                    .publish_with_headers(subject, headers, Bytes::new())
                    .await
                    .map_err(|e| {
                        BatchPublishError::with_source(BatchPublishErrorKind::BrokenPipe, e)
                    })
            }
            None => {
                self.open = false;
                Ok(())
            }
        }
    }

    /// A message that skips a batch sequence, which makes the server drop the batch at once
    /// (ADR-50: a gap abandons the batch); `None` when nothing was sent or the batch ended.
    fn abandon_message(&self) -> Option<(String, HeaderMap)> {
        if !self.open {
            return None;
        }
        let subject = self.checker.last_subject.clone()?;
        let mut headers = HeaderMap::new();
        headers.insert(NATS_BATCH_ID, self.id.as_str());
        headers.insert(NATS_BATCH_SEQUENCE, self.checker.sent + 2);
        Some((subject, headers))
    }

    /// Checks, stamps and sends one message; with `wait`, as a request whose reply is
    /// returned.
    async fn send(
        &mut self,
        subject: &str,
        message: PublishMessage,
        commit: Option<&str>,
        wait: bool,
    ) -> Result<Option<PendingReply>, BatchPublishError> {
        if !self.open {
            return Err(BatchPublishError::new(BatchPublishErrorKind::Closed));
        }
        if self.checker.sent == 0 {
            self.context
                .require_capability([Feature::AtomicPublish])
                .map_err(|e| {
                    BatchPublishError::with_source(BatchPublishErrorKind::Unsupported, e)
                })?;
        }
        let eob = commit == Some("eob");
        if !eob {
            self.checker.check(subject, &message, self.max_messages)?;
        }
        let sequence = self.checker.sent + 1;
        let mut headers = message.headers.clone().unwrap_or_default();
        headers.insert(NATS_BATCH_ID, self.id.as_str());
        headers.insert(NATS_BATCH_SEQUENCE, sequence);
        if let Some(commit) = commit {
            headers.insert(NATS_BATCH_COMMIT, commit);
        }
        let client = &self.context.client;
        let reply = if wait {
            let reply = client
                .start_request(subject, Some(headers), message.payload.clone())
                .await
                .map_err(|e| match e.kind() {
                    RequestErrorKind::MaxPayloadExceeded => {
                        BatchPublishError::with_source(BatchPublishErrorKind::MaxPayloadExceeded, e)
                    }
                    RequestErrorKind::InvalidSubject => {
                        BatchPublishError::with_source(BatchPublishErrorKind::InvalidSubject, e)
                    }
                    _ => BatchPublishError::with_source(BatchPublishErrorKind::BrokenPipe, e),
                })?;
            Some(reply)
        } else {
            client
                .publish_with_headers(subject, headers, message.payload.clone())
                .await
                .map_err(|e| match e.kind() {
                    CorePublishErrorKind::MaxPayloadExceeded => {
                        BatchPublishError::with_source(BatchPublishErrorKind::MaxPayloadExceeded, e)
                    }
                    CorePublishErrorKind::InvalidSubject => {
                        BatchPublishError::with_source(BatchPublishErrorKind::InvalidSubject, e)
                    }
                    _ => BatchPublishError::with_source(BatchPublishErrorKind::BrokenPipe, e),
                })?;
            None
        };
        if !eob {
            self.checker.record(subject, &message);
        } else {
            self.checker.sent += 1;
        }
        Ok(reply)
    }

    /// Waits for the commit's ack.
    async fn finish(
        mut self,
        reply: Option<PendingReply>,
    ) -> Result<PublishAck, BatchPublishError> {
        // Committed or failed, the batch is over: no abandon on drop.
        self.open = false;
        let Some(reply) = reply else {
            return Err(BatchPublishError::new(BatchPublishErrorKind::Other));
        };
        let timeout = self.context.timeout_or_default();
        let message = reply.wait(Some(timeout)).await.map_err(request_failure)?;
        committed(&message.payload, message.status)
    }
}

impl Drop for AtomicBatch {
    fn drop(&mut self) {
        let Some((subject, headers)) = self.abandon_message() else {
            return;
        };
        // Without a runtime the server's idle timeout abandons the batch instead.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let client = self.context.client.clone();
            runtime.spawn(async move {
                let _ = client
                    .publish_with_headers(subject, headers, Bytes::new())
                    .await;
            });
        }
    }
}

/// What the client knows of a batch so far, to refuse what the server would refuse.
#[derive(Debug, Default, Clone)]
struct Checker {
    sent: u64,
    last_subject: Option<String>,
    /// Subjects written by the batch: a per-subject expectation on one of them cannot hold
    /// (the server compares with the stream before the batch).
    subjects: HashSet<String>,
    message_ids: HashSet<String>,
}

impl Checker {
    /// Refuses `message` as the batch's next one, for what the server would refuse.
    fn check(
        &self,
        subject: &str,
        message: &PublishMessage,
        max_messages: u64,
    ) -> Result<(), BatchPublishError> {
        let refuse = |kind, why: String| Err(BatchPublishError::with_source(kind, why));
        if self.sent + 1 > max_messages {
            return refuse(
                BatchPublishErrorKind::TooLarge,
                format!("a batch holds at most {max_messages} messages"),
            );
        }
        let Some(headers) = message.headers.as_ref() else {
            return Ok(());
        };
        if headers.get(NATS_EXPECTED_LAST_MESSAGE_ID).is_some() {
            return refuse(
                BatchPublishErrorKind::UnsupportedHeader,
                format!("{NATS_EXPECTED_LAST_MESSAGE_ID} is not supported in batches"),
            );
        }
        if self.sent > 0 && headers.get(NATS_EXPECTED_LAST_SEQUENCE).is_some() {
            return refuse(
                BatchPublishErrorKind::UnsupportedHeader,
                format!("only a batch's first message may carry {NATS_EXPECTED_LAST_SEQUENCE}"),
            );
        }
        let per_subject = headers.get(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE).is_some();
        let checked_subject = headers.get(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT);
        if checked_subject.is_some() && !per_subject {
            return refuse(
                BatchPublishErrorKind::UnsupportedHeader,
                format!(
                    "{NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT} needs {NATS_EXPECTED_LAST_SUBJECT_SEQUENCE}"
                ),
            );
        }
        if per_subject {
            let checked = checked_subject.map_or(subject, |value| value.as_str());
            if self.subjects.contains(checked) {
                return refuse(
                    BatchPublishErrorKind::UnsupportedHeader,
                    format!(
                        "the batch already writes to {checked:?}, so its last sequence cannot be expected"
                    ),
                );
            }
        }
        if let Some(id) = headers.get(NATS_MESSAGE_ID)
            && self.message_ids.contains(id.as_str())
        {
            return refuse(
                BatchPublishErrorKind::DuplicateMessageId,
                format!("message id {:?} is used twice in the batch", id.as_str()),
            );
        }
        Ok(())
    }

    /// Notes `message` as sent.
    fn record(&mut self, subject: &str, message: &PublishMessage) {
        self.sent += 1;
        if self.last_subject.as_deref() != Some(subject) {
            self.last_subject = Some(subject.to_owned());
        }
        self.subjects.insert(subject.to_owned());
        if let Some(id) = message
            .headers
            .as_ref()
            .and_then(|headers| headers.get(NATS_MESSAGE_ID))
        {
            self.message_ids.insert(id.as_str().to_owned());
        }
    }
}

/// The kinds of [`BatchPublishError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BatchPublishErrorKind {
    /// The stream does not allow atomic batches (`allow_atomic_publish` is off; 10174).
    Disabled,
    /// The server abandoned the batch: a message went missing, it sat idle past the
    /// server's batch timeout, or it was abandoned on purpose (10176).
    Incomplete,
    /// More messages than the server takes in one batch (10199, or refused before sending).
    TooLarge,
    /// The batch id is empty, too long or not printable (10179, or refused before sending).
    InvalidId,
    /// A header or expectation batches do not support (10177, 10164, 10193, or refused
    /// before sending).
    UnsupportedHeader,
    /// A message id the stream already holds or the batch uses twice (10201, or refused
    /// before sending).
    DuplicateMessageId,
    /// An expectation (`Nats-Expected-*`) failed when the batch committed; nothing was stored.
    ExpectationFailed,
    /// The stream has as many batches in flight as it (or the server) allows (10210).
    TooManyInflight,
    /// The server speaks a lower API level than a message required (10185).
    RequiredApiLevel,
    /// No stream stores the subject.
    StreamNotFound,
    /// The subject is not a valid publish subject.
    InvalidSubject,
    /// A message exceeds the connection's `max_payload` or the stream's message size.
    MaxPayloadExceeded,
    /// Committing a batch with no message in it.
    Empty,
    /// The batch already committed, was abandoned, or failed.
    Closed,
    /// The connected server is too old for atomic batches (or for this commit form).
    Unsupported,
    /// No answer within the context's timeout; the batch's fate is unknown.
    TimedOut,
    /// The connection closed.
    BrokenPipe,
    /// Anything else; the source says what (a protocol error the server reported, ...).
    Other,
}

impl fmt::Display for BatchPublishErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BatchPublishErrorKind::Disabled => "atomic publish is disabled on the stream",
            BatchPublishErrorKind::Incomplete => "the batch is incomplete and was abandoned",
            BatchPublishErrorKind::TooLarge => "the batch is too large",
            BatchPublishErrorKind::InvalidId => "the batch id is invalid",
            BatchPublishErrorKind::UnsupportedHeader => "a header the batch cannot carry",
            BatchPublishErrorKind::DuplicateMessageId => "the batch contains a duplicate message",
            BatchPublishErrorKind::ExpectationFailed => "an expectation in the batch failed",
            BatchPublishErrorKind::TooManyInflight => "too many batches in flight",
            BatchPublishErrorKind::RequiredApiLevel => "the server's API level is too low",
            BatchPublishErrorKind::StreamNotFound => "no stream found for the subject",
            BatchPublishErrorKind::InvalidSubject => "invalid subject",
            BatchPublishErrorKind::MaxPayloadExceeded => "message too large",
            BatchPublishErrorKind::Empty => "the batch is empty",
            BatchPublishErrorKind::Closed => "the batch is closed",
            BatchPublishErrorKind::Unsupported => "the server does not support atomic batches",
            BatchPublishErrorKind::TimedOut => "timed out",
            BatchPublishErrorKind::BrokenPipe => "broken pipe",
            BatchPublishErrorKind::Other => "batch publish failed",
        })
    }
}

/// Why an atomic batch failed. A server refusal has the [`crate::Error`] as its source
/// (`err.downcast_source::<rnats::jetstream::Error>()`), a client-side refusal a message
/// saying what would have been refused.
pub type BatchPublishError = Error<BatchPublishErrorKind>;

/// The kind a JetStream error code means for a batch.
pub(crate) fn kind_of(code: ErrorCode) -> BatchPublishErrorKind {
    match code {
        ErrorCode::ATOMIC_PUBLISH_DISABLED => BatchPublishErrorKind::Disabled,
        ErrorCode::ATOMIC_PUBLISH_INCOMPLETE_BATCH => BatchPublishErrorKind::Incomplete,
        ErrorCode::ATOMIC_PUBLISH_TOO_LARGE_BATCH => BatchPublishErrorKind::TooLarge,
        ErrorCode::ATOMIC_PUBLISH_INVALID_BATCH_ID => BatchPublishErrorKind::InvalidId,
        ErrorCode::ATOMIC_PUBLISH_UNSUPPORTED_HEADER
        | ErrorCode::STREAM_WRONG_LAST_SEQUENCE_CONSTANT
        | ErrorCode::STREAM_EXPECTED_LAST_SEQ_PER_SUBJECT_INVALID => {
            BatchPublishErrorKind::UnsupportedHeader
        }
        ErrorCode::ATOMIC_PUBLISH_CONTAINS_DUPLICATE_MESSAGE => {
            BatchPublishErrorKind::DuplicateMessageId
        }
        ErrorCode::STREAM_WRONG_LAST_SEQUENCE
        | ErrorCode::STREAM_WRONG_LAST_MESSAGE_ID
        | ErrorCode::STREAM_NOT_MATCH => BatchPublishErrorKind::ExpectationFailed,
        ErrorCode::ATOMIC_PUBLISH_TOO_MANY_INFLIGHT => BatchPublishErrorKind::TooManyInflight,
        ErrorCode::REQUIRED_API_LEVEL => BatchPublishErrorKind::RequiredApiLevel,
        ErrorCode::STREAM_NOT_FOUND => BatchPublishErrorKind::StreamNotFound,
        ErrorCode::STREAM_MESSAGE_EXCEEDS_MAXIMUM => BatchPublishErrorKind::MaxPayloadExceeded,
        _ => BatchPublishErrorKind::Other,
    }
}

fn request_failure(error: rnats_core::RequestError) -> BatchPublishError {
    let kind = match error.kind() {
        RequestErrorKind::TimedOut => BatchPublishErrorKind::TimedOut,
        RequestErrorKind::NoResponders => BatchPublishErrorKind::StreamNotFound,
        _ => BatchPublishErrorKind::BrokenPipe,
    };
    BatchPublishError::with_source(kind, error)
}

/// A server reply that may hold an error.
#[derive(Deserialize)]
struct ErrorReply {
    error: Option<crate::Error>,
}

/// The server's answer to a staged (not committing) message: empty when staged.
fn staged(payload: &[u8], status: Option<StatusCode>) -> Result<(), BatchPublishError> {
    if status == Some(StatusCode::NO_RESPONDERS) {
        return Err(BatchPublishError::new(
            BatchPublishErrorKind::StreamNotFound,
        ));
    }
    if payload.is_empty() {
        return Ok(());
    }
    refusal(payload)?;
    // A full ack for a message that was not the commit: the server took it as an ordinary
    // publish, which only happens when it does not know about batches.
    Err(BatchPublishError::with_source(
        BatchPublishErrorKind::Unsupported,
        "the server stored a batch message on its own (it ignores batch headers)",
    ))
}

/// The server's answer to the commit: the batch's ack.
pub(crate) fn committed(
    payload: &[u8],
    status: Option<StatusCode>,
) -> Result<PublishAck, BatchPublishError> {
    if status == Some(StatusCode::NO_RESPONDERS) {
        return Err(BatchPublishError::new(
            BatchPublishErrorKind::StreamNotFound,
        ));
    }
    refusal(payload)?;
    let ack: PublishAck = serde_json::from_slice(payload)
        .map_err(|e| BatchPublishError::with_source(BatchPublishErrorKind::Other, e))?;
    if ack.batch_id.is_none() {
        return Err(BatchPublishError::with_source(
            BatchPublishErrorKind::Unsupported,
            "the commit was acked as an ordinary publish (the server ignores batch headers)",
        ));
    }
    Ok(ack)
}

/// The server's error in `payload`, if it holds one.
fn refusal(payload: &[u8]) -> Result<(), BatchPublishError> {
    let reply: ErrorReply = serde_json::from_slice(payload)
        .map_err(|e| BatchPublishError::with_source(BatchPublishErrorKind::Other, e))?;
    match reply.error {
        Some(error) => Err(BatchPublishError::with_source(
            kind_of(error.error_code()),
            error,
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_header<N: rnats_core::header::IntoHeaderName>(name: N, value: &str) -> PublishMessage {
        PublishMessage::build().header(name, value)
    }

    #[test]
    fn the_checker_refuses_what_the_server_would() {
        let mut checker = Checker::default();
        let plain = PublishMessage::build();
        assert!(checker.check("a", &plain, 2).is_ok());
        let first = with_header(NATS_EXPECTED_LAST_SEQUENCE, "0").message_id("m1");
        assert!(checker.check("a", &first, 2).is_ok());
        checker.record("a", &first);

        let kind = |result: Result<(), BatchPublishError>| result.unwrap_err().kind();
        let again = with_header(NATS_EXPECTED_LAST_SEQUENCE, "0");
        assert_eq!(
            kind(checker.check("b", &again, 5)),
            BatchPublishErrorKind::UnsupportedHeader
        );
        let last_id = with_header(NATS_EXPECTED_LAST_MESSAGE_ID, "x");
        assert_eq!(
            kind(checker.check("b", &last_id, 5)),
            BatchPublishErrorKind::UnsupportedHeader
        );
        let per_subject = with_header(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, "0");
        assert_eq!(
            kind(checker.check("a", &per_subject, 5)),
            BatchPublishErrorKind::UnsupportedHeader
        );
        assert!(checker.check("b", &per_subject, 5).is_ok());
        let redirected = per_subject
            .clone()
            .header(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT, "a");
        assert_eq!(
            kind(checker.check("b", &redirected, 5)),
            BatchPublishErrorKind::UnsupportedHeader
        );
        let dangling = with_header(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT, "z");
        assert_eq!(
            kind(checker.check("b", &dangling, 5)),
            BatchPublishErrorKind::UnsupportedHeader
        );
        let duplicate = PublishMessage::build().message_id("m1");
        assert_eq!(
            kind(checker.check("b", &duplicate, 5)),
            BatchPublishErrorKind::DuplicateMessageId
        );
        checker.record("b", &plain);
        assert_eq!(
            kind(checker.check("c", &plain, 2)),
            BatchPublishErrorKind::TooLarge
        );
    }

    #[test]
    fn server_codes_become_kinds() {
        assert_eq!(
            kind_of(ErrorCode::ATOMIC_PUBLISH_INCOMPLETE_BATCH),
            BatchPublishErrorKind::Incomplete
        );
        assert_eq!(
            kind_of(ErrorCode::STREAM_WRONG_LAST_SEQUENCE),
            BatchPublishErrorKind::ExpectationFailed
        );
        let refused = br#"{"error":{"code":400,"err_code":10174,"description":"atomic publish is disabled"}}"#;
        let error = staged(refused, None).unwrap_err();
        assert_eq!(error.kind(), BatchPublishErrorKind::Disabled);
        assert_eq!(
            error
                .downcast_source::<crate::Error>()
                .unwrap()
                .error_code(),
            ErrorCode::ATOMIC_PUBLISH_DISABLED
        );
        assert!(staged(b"", None).is_ok());
        assert_eq!(
            staged(b"{", None).unwrap_err().kind(),
            BatchPublishErrorKind::Other
        );
        let ack = committed(br#"{"stream":"S","seq":3,"batch":"b","count":3}"#, None).unwrap();
        assert_eq!((ack.sequence, ack.batch_size), (3, Some(3)));
        assert_eq!(
            committed(br#"{"stream":"S","seq":3}"#, None)
                .unwrap_err()
                .kind(),
            BatchPublishErrorKind::Unsupported
        );
    }
}
