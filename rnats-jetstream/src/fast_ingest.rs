//! Fast-ingest batches (ADR-50 revisions 7 to 10): many messages into a stream with
//! `allow_batch_publish`, acknowledged by the server every N messages instead of one by one,
//! with the server setting N (flow control). nats-server 2.14 or later (API level 4).
//!
//! Each message goes out with a reply subject that carries the batch's state,
//! `<inbox>.<batch id>.<max flow>.<gap mode>.<batch sequence>.<operation>.$FI`, and the
//! server answers on the batch's inbox with flow acks (`{"type":"ack","seq":..,"msgs":..}`),
//! gap reports, per-message errors, and the final [`PublishAck`]. [`FastIngest::publish`]
//! returns as soon as the message is queued unless `max_outstanding_acks` flow acks are
//! owed, then waits: the pipe stays full while the client holds no per-message state, so
//! memory stays bounded whatever the batch's length. [`FastIngest::into_sink`] gives the same
//! as a [`futures_util::Sink`].
//!
//! Gap mode [`GapMode::Fail`] (the default) makes the server end the batch at the first lost
//! message, so what it stored is a prefix without holes; [`GapMode::Ok`] lets the batch go
//! on and reports the gap ([`FastIngest::gaps`]).
//!
//! ```no_run
//! # async fn run(js: rnats_jetstream::Context) -> Result<(), rnats_jetstream::fast_ingest::FastIngestError> {
//! let mut ingest = js.fast_ingest().start().await?;
//! for i in 0..100_000 {
//!     ingest.publish("metrics.cpu", format!("{i}").into()).await?;
//! }
//! let ack = ingest.finish().await?;
//! assert_eq!(ack.batch_size, Some(100_000));
//! # Ok(()) }
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{FutureExt, Sink, StreamExt};
use rnats_core::error::Error;
use rnats_core::subject::ToSubject;
use rnats_core::{PublishErrorKind as CorePublishErrorKind, StatusCode, Subscriber};
use serde::Deserialize;

use crate::context::Context;
use crate::errors::ErrorCode;
use crate::features::Feature;
use crate::publish::{PublishAck, PublishMessage};

/// What the server does when a message of the batch goes missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GapMode {
    /// End the batch at the gap: everything stored is the batch's beginning, without holes.
    #[default]
    Fail,
    /// Report the gap and go on.
    Ok,
}

impl GapMode {
    fn token(self) -> &'static str {
        match self {
            GapMode::Fail => "fail",
            GapMode::Ok => "ok",
        }
    }
}

/// Settings of a fast-ingest batch; made by [`Context::fast_ingest`].
#[derive(Debug, Clone)]
pub struct FastIngestBuilder {
    context: Context,
    max_flow: u16,
    gap_mode: GapMode,
    max_outstanding_acks: u16,
    ack_timeout: Option<Duration>,
}

impl FastIngestBuilder {
    /// The most messages per flow ack the client allows (default 500, the most the server
    /// uses); the server picks the actual number, at most this.
    pub fn max_flow(mut self, messages: u16) -> FastIngestBuilder {
        self.max_flow = messages.max(1);
        self
    }

    /// What happens at a lost message (default [`GapMode::Fail`]).
    pub fn gap_mode(mut self, mode: GapMode) -> FastIngestBuilder {
        self.gap_mode = mode;
        self
    }

    /// Flow acks that may be owed before a publish waits (default 2, which ADR-50 calls
    /// generally optimal: the server works on one window while the next is sent).
    pub fn max_outstanding_acks(mut self, acks: u16) -> FastIngestBuilder {
        self.max_outstanding_acks = acks.max(1);
        self
    }

    /// How long a publish waits for an owed flow ack before pinging the batch, and again
    /// before failing with [`FastIngestErrorKind::TimedOut`] (default: the context's
    /// timeout).
    pub fn ack_timeout(mut self, timeout: Duration) -> FastIngestBuilder {
        self.ack_timeout = Some(timeout);
        self
    }

    /// Opens the batch's inbox; the first publish starts the batch on the server.
    pub async fn start(self) -> Result<FastIngest, FastIngestError> {
        self.context
            .require_capability([Feature::BatchPublish])
            .map_err(|e| FastIngestError::with_source(FastIngestErrorKind::Unsupported, e))?;
        let client = &self.context.client;
        let id = rnats_core::id::next();
        let inbox = format!("{}.{id}", client.new_inbox());
        let replies = client
            .subscribe(format!("{inbox}.>"))
            .await
            .map_err(|e| FastIngestError::with_source(FastIngestErrorKind::BrokenPipe, e))?;
        let timeout = self
            .ack_timeout
            .unwrap_or_else(|| self.context.timeout_or_default());
        Ok(FastIngest {
            reply_prefix: format!("{inbox}.{}.{}", self.max_flow, self.gap_mode.token()),
            context: self.context,
            replies,
            id,
            sequence: 0,
            acked: 0,
            flow: 1,
            started: false,
            gap_mode: self.gap_mode,
            committed: false,
            ending: false,
            max_outstanding_acks: u64::from(self.max_outstanding_acks),
            timeout,
            last_subject: None,
            gaps: 0,
            last_gap: None,
            rejected: None,
            failure: None,
            final_ack: None,
        })
    }
}

impl Context {
    /// Settings for a fast-ingest batch (ADR-50; streams with `allow_batch_publish`,
    /// nats-server 2.14 or later). An rnats extension.
    pub fn fast_ingest(&self) -> FastIngestBuilder {
        FastIngestBuilder {
            context: self.clone(),
            max_flow: 500,
            gap_mode: GapMode::Fail,
            max_outstanding_acks: 2,
            ack_timeout: None,
        }
    }
}

impl crate::stream::Stream {
    /// Settings for a fast-ingest batch into this stream, refused at once when its
    /// configuration (as last fetched) does not allow batch publishing. An rnats extension.
    pub fn fast_ingest(&self) -> Result<FastIngestBuilder, FastIngestError> {
        let config = &self.cached_info().config;
        if !config.allow_batch_publish {
            return Err(FastIngestError::with_source(
                FastIngestErrorKind::Disabled,
                format!("stream {} does not allow batch publishing", config.name),
            ));
        }
        Ok(self.context.fast_ingest())
    }
}

/// Where a published message stands: its place in the batch, and how far the server has
/// acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastPubAck {
    /// The message's sequence in the batch, from 1.
    pub batch_sequence: u64,
    /// The highest batch sequence the server acknowledged so far: with [`GapMode::Fail`],
    /// every message up to it is stored.
    pub ack_sequence: u64,
}

/// Messages the server reported lost (with [`GapMode::Ok`]): from `expected` up to, not
/// including, `received`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// The batch sequence the server expected next.
    pub expected: u64,
    /// The batch sequence that arrived instead.
    pub received: u64,
}

/// A message the server refused inside the batch (a failed expectation, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The refused message's batch sequence.
    pub batch_sequence: u64,
    /// What the server said.
    pub error: crate::Error,
}

/// A fast-ingest batch in progress; see the module documentation.
pub struct FastIngest {
    context: Context,
    replies: Subscriber,
    id: String,
    /// `<inbox>.<id>.<max flow>.<gap mode>`: the reply subject up to the sequence.
    reply_prefix: String,
    /// Messages sent.
    sequence: u64,
    /// The highest sequence flow-acked.
    acked: u64,
    /// Messages per flow ack, as the server last said.
    flow: u64,
    /// Whether the server answered the first message.
    started: bool,
    gap_mode: GapMode,
    /// Whether the commit was sent.
    committed: bool,
    /// Whether the server ended the batch before the commit (Fail mode).
    ending: bool,
    max_outstanding_acks: u64,
    timeout: Duration,
    last_subject: Option<String>,
    gaps: u64,
    last_gap: Option<Gap>,
    /// The first message the server refused, if any.
    rejected: Option<Rejected>,
    /// What ended the batch early.
    failure: Option<(FastIngestErrorKind, Option<crate::Error>)>,
    /// The final ack, once it came.
    final_ack: Option<PublishAck>,
}

impl fmt::Debug for FastIngest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FastIngest")
            .field("id", &self.id)
            .field("sequence", &self.sequence)
            .field("acked", &self.acked)
            .field("flow", &self.flow)
            .finish_non_exhaustive()
    }
}

/// The operations of the reply subject (ADR-50).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Start = 0,
    Append = 1,
    Commit = 2,
    CommitEob = 3,
    Ping = 4,
}

impl FastIngest {
    /// The batch id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Messages sent so far.
    pub fn len(&self) -> u64 {
        self.sequence
    }

    /// Whether nothing was sent yet.
    pub fn is_empty(&self) -> bool {
        self.sequence == 0
    }

    /// The highest batch sequence the server acknowledged.
    pub fn ack_sequence(&self) -> u64 {
        self.acked
    }

    /// Messages per flow ack, as the server last set it.
    pub fn flow(&self) -> u64 {
        self.flow
    }

    /// Gaps the server reported, and the last of them.
    pub fn gaps(&self) -> (u64, Option<Gap>) {
        (self.gaps, self.last_gap)
    }

    /// The first message the server refused, if any.
    pub fn rejected(&self) -> Option<&Rejected> {
        self.rejected.as_ref()
    }

    /// Publishes `payload` to `subject` as the batch's next message.
    pub async fn publish<S: ToSubject>(
        &mut self,
        subject: S,
        payload: Bytes,
    ) -> Result<FastPubAck, FastIngestError> {
        self.publish_message(subject, PublishMessage::build().payload(payload))
            .await
    }

    /// Publishes a message with headers and expectations as the batch's next message.
    /// Returns once it is queued, unless the flow acks owed reach the limit: then once the
    /// server caught up.
    pub async fn publish_message<S: ToSubject>(
        &mut self,
        subject: S,
        message: PublishMessage,
    ) -> Result<FastPubAck, FastIngestError> {
        self.check_open()?;
        let op = if self.sequence == 0 {
            Op::Start
        } else {
            Op::Append
        };
        self.send(&subject.subject_text(), message, op).await?;
        if op == Op::Start {
            // The server answers the first message at once: the flow to start with, or why
            // the batch cannot be (ADR-50: wait for it before sending more).
            self.wait_until(|ingest| ingest.started).await?;
        } else {
            self.read_ready()?;
            let window = self.flow * self.max_outstanding_acks;
            if owes_the_limit(self.acked, window, self.sequence) {
                let acked = self.acked;
                self.wait_until(|ingest| ingest.acked > acked).await?;
            }
        }
        self.check_open()?;
        Ok(FastPubAck {
            batch_sequence: self.sequence,
            ack_sequence: self.acked,
        })
    }

    /// Publishes the last message and ends the batch; the final ack counts every message.
    pub async fn commit<S: ToSubject>(
        self,
        subject: S,
        payload: Bytes,
    ) -> Result<PublishAck, FastIngestError> {
        self.commit_message(subject, PublishMessage::build().payload(payload))
            .await
    }

    /// Publishes the last message, with headers, and ends the batch.
    pub async fn commit_message<S: ToSubject>(
        mut self,
        subject: S,
        message: PublishMessage,
    ) -> Result<PublishAck, FastIngestError> {
        if !self.ending {
            self.check_open()?;
            self.send(&subject.subject_text(), message, Op::Commit)
                .await?;
        }
        self.wait_for_final().await
    }

    /// Ends the batch without another message (`eob`) and returns the final ack. An empty
    /// batch cannot be ended this way.
    pub async fn finish(mut self) -> Result<PublishAck, FastIngestError> {
        if !self.ending {
            self.check_open()?;
            let Some(subject) = self.last_subject.clone() else {
                return Err(FastIngestError::new(FastIngestErrorKind::Empty));
            };
            self.send(&subject, PublishMessage::build(), Op::CommitEob)
                .await?;
        }
        self.wait_for_final().await
    }

    /// The batch as a [`Sink`] of `(subject, message)`; closing it ends the batch, after
    /// which [`FastIngestSink::final_ack`] has the final ack.
    pub fn into_sink(self) -> FastIngestSink {
        FastIngestSink {
            state: SinkState::Idle(Box::new(self)),
            final_ack: None,
        }
    }

    fn check_open(&self) -> Result<(), FastIngestError> {
        if let Some((kind, error)) = &self.failure {
            return Err(match error {
                Some(error) => FastIngestError::with_source(*kind, error.clone()),
                None => FastIngestError::new(*kind),
            });
        }
        if self.ending {
            return Err(FastIngestError::with_source(
                FastIngestErrorKind::Ended,
                EndedEarly {
                    ack: self.final_ack.clone(),
                    rejected: self.rejected.clone(),
                    gap: self.last_gap,
                },
            ));
        }
        if self.final_ack.is_some() {
            return Err(FastIngestError::new(FastIngestErrorKind::Closed));
        }
        Ok(())
    }

    /// Sends one message (or a ping) with the reply subject carrying the batch state.
    async fn send(
        &mut self,
        subject: &str,
        message: PublishMessage,
        op: Op,
    ) -> Result<(), FastIngestError> {
        let sequence = if op == Op::Ping {
            self.sequence
        } else {
            self.sequence + 1
        };
        let reply = format!("{}.{sequence}.{}.$FI", self.reply_prefix, op as u8);
        let client = &self.context.client;
        let sent = match message.headers {
            Some(headers) => {
                client
                    .publish_with_reply_and_headers(subject, reply, headers, message.payload)
                    .await
            }
            None => {
                client
                    .publish_with_reply(subject, reply, message.payload)
                    .await
            }
        };
        sent.map_err(|e| {
            let kind = match e.kind() {
                CorePublishErrorKind::MaxPayloadExceeded => FastIngestErrorKind::MaxPayloadExceeded,
                CorePublishErrorKind::InvalidSubject => FastIngestErrorKind::InvalidSubject,
                _ => FastIngestErrorKind::BrokenPipe,
            };
            FastIngestError::with_source(kind, e)
        })?;
        if matches!(op, Op::Commit | Op::CommitEob) {
            self.committed = true;
        }
        if op != Op::Ping {
            self.sequence = sequence;
            if self.last_subject.as_deref() != Some(subject) {
                self.last_subject = Some(subject.to_owned());
            }
        }
        Ok(())
    }

    /// Handles the replies that have arrived, without waiting.
    fn read_ready(&mut self) -> Result<(), FastIngestError> {
        while let Some(next) = self.replies.next().now_or_never() {
            let Some(message) = next else {
                return self.fail(FastIngestErrorKind::BrokenPipe, None);
            };
            self.handle(&message)?;
        }
        Ok(())
    }

    /// Waits for replies until `done` holds (or the batch ends), pinging once when an ack
    /// is late, since acks can be lost (ADR-50).
    async fn wait_until(
        &mut self,
        done: impl Fn(&FastIngest) -> bool,
    ) -> Result<(), FastIngestError> {
        let mut pinged = false;
        let mut wait = Wait::new(self);
        while !done(self) && self.final_ack.is_none() && self.failure.is_none() && !self.ending {
            match rnats_core::runtime::timeout_at(wait.deadline, self.replies.next()).await {
                Ok(Some(message)) => {
                    self.handle(&message)?;
                    wait.after_reply(self);
                }
                Ok(None) => return self.fail(FastIngestErrorKind::BrokenPipe, None),
                Err(_) if !pinged && self.sequence > 1 => {
                    pinged = true;
                    let subject = self.last_subject.clone().unwrap_or_default();
                    self.send(&subject, PublishMessage::build(), Op::Ping)
                        .await?;
                    wait.restart(self);
                }
                Err(_) => return self.fail(FastIngestErrorKind::TimedOut, None),
            }
        }
        self.check_open()
    }

    /// Waits for the final ack after a commit.
    async fn wait_for_final(mut self) -> Result<PublishAck, FastIngestError> {
        let mut pinged = false;
        let mut wait = Wait::new(&self);
        loop {
            if self.final_ack.is_some() && self.ending {
                // Ended before the commit (Fail mode): an error that carries the ack.
                self.check_open()?;
            }
            if let Some(ack) = self.final_ack.take() {
                return Ok(ack);
            }
            if let Some((kind, error)) = &self.failure {
                return Err(match error {
                    Some(error) => FastIngestError::with_source(*kind, error.clone()),
                    None => FastIngestError::new(*kind),
                });
            }
            match rnats_core::runtime::timeout_at(wait.deadline, self.replies.next()).await {
                Ok(Some(message)) => {
                    self.handle(&message)?;
                    wait.after_reply(&self);
                }
                Ok(None) => return self.fail(FastIngestErrorKind::BrokenPipe, None),
                Err(_) if !pinged => {
                    pinged = true;
                    let subject = self.last_subject.clone().unwrap_or_default();
                    self.send(&subject, PublishMessage::build(), Op::Ping)
                        .await?;
                    wait.restart(&self);
                }
                Err(_) => return self.fail(FastIngestErrorKind::TimedOut, None),
            }
        }
    }

    /// Applies one reply from the server.
    fn handle(&mut self, message: &rnats_core::Message) -> Result<(), FastIngestError> {
        if message.status == Some(StatusCode::NO_RESPONDERS) {
            return self.fail(FastIngestErrorKind::StreamNotFound, None);
        }
        let reply: Reply = match serde_json::from_slice(&message.payload) {
            Ok(reply) => reply,
            Err(e) => {
                return Err(FastIngestError::with_source(FastIngestErrorKind::Other, e));
            }
        };
        match reply.kind.as_deref() {
            Some("ack") => {
                self.started = true;
                // An ack for 30 implies every earlier one, lost or not (ADR-50).
                self.acked = self.acked.max(reply.seq.unwrap_or(0));
                if let Some(flow) = reply.msgs {
                    self.flow = u64::from(flow.max(1));
                }
                Ok(())
            }
            Some("gap") => {
                // Informational only: it says nothing of what was stored (ADR-50).
                self.gaps += 1;
                self.last_gap = Some(Gap {
                    expected: reply.last_seq.unwrap_or(0),
                    received: reply.seq.unwrap_or(0),
                });
                // With Fail, the server ends the batch here and sends its final ack.
                self.ending |= self.gap_mode == GapMode::Fail;
                Ok(())
            }
            Some("err") => {
                if self.rejected.is_none()
                    && let Some(error) = reply.error
                {
                    self.rejected = Some(Rejected {
                        batch_sequence: reply.seq.unwrap_or(0),
                        error,
                    });
                }
                self.ending |= self.gap_mode == GapMode::Fail;
                Ok(())
            }
            _ => {
                if let Some(error) = reply.error {
                    let kind = kind_of(error.error_code());
                    return self.fail(kind, Some(error));
                }
                let Some(sequence) = reply.seq else {
                    return Err(FastIngestError::with_source(
                        FastIngestErrorKind::Other,
                        "a batch reply with neither a type, an error nor a sequence",
                    ));
                };
                self.final_ack = Some(PublishAck {
                    stream: reply.stream.unwrap_or_default(),
                    sequence,
                    domain: reply.domain.unwrap_or_default(),
                    duplicate: reply.duplicate,
                    value: reply.val,
                    batch_id: reply.batch,
                    batch_size: reply.count,
                });
                self.acked = self.acked.max(reply.count.unwrap_or(0));
                // A final ack before the commit means the server ended the batch.
                self.ending |= !self.committed;
                Ok(())
            }
        }
    }

    fn fail<T>(
        &mut self,
        kind: FastIngestErrorKind,
        error: Option<crate::Error>,
    ) -> Result<T, FastIngestError> {
        self.failure = Some((kind, error));
        self.check_open()?;
        Err(FastIngestError::new(kind))
    }
}

/// Why and where the server ended a batch before its commit ([`GapMode::Fail`]): the source
/// of a [`FastIngestErrorKind::Ended`] error. Everything up to `ack.batch_size` is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedEarly {
    /// The final ack, when it had come.
    pub ack: Option<PublishAck>,
    /// The refused message that ended it, if that was the reason.
    pub rejected: Option<Rejected>,
    /// The gap that ended it, if that was the reason.
    pub gap: Option<Gap>,
}

impl fmt::Display for EndedEarly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the server ended the batch early")?;
        if let Some(rejected) = &self.rejected {
            write!(
                f,
                ": message {} refused: {}",
                rejected.batch_sequence, rejected.error
            )?;
        }
        if let Some(gap) = &self.gap {
            write!(f, ": messages {} to {} lost", gap.expected, gap.received)?;
        }
        if let Some(count) = self.ack.as_ref().and_then(|ack| ack.batch_size) {
            write!(f, "; {count} messages stored")?;
        }
        Ok(())
    }
}

impl std::error::Error for EndedEarly {
    /// The server's refusal, when a refused message ended the batch.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.rejected
            .as_ref()
            .map(|rejected| &rejected.error as &(dyn std::error::Error + 'static))
    }
}

/// Any message the server sends on the batch's inbox.
#[derive(Deserialize)]
struct Reply {
    #[serde(rename = "type")]
    kind: Option<String>,
    seq: Option<u64>,
    msgs: Option<u16>,
    last_seq: Option<u64>,
    error: Option<crate::Error>,
    stream: Option<String>,
    domain: Option<String>,
    #[serde(default)]
    duplicate: bool,
    val: Option<String>,
    batch: Option<String>,
    count: Option<u64>,
}

type Pending = Pin<Box<dyn Future<Output = Result<Box<FastIngest>, FastIngestError>> + Send>>;
type Finishing = Pin<Box<dyn Future<Output = Result<PublishAck, FastIngestError>> + Send>>;

enum SinkState {
    Idle(Box<FastIngest>),
    Sending(Pending),
    Closing(Finishing),
    Done,
}

/// A fast-ingest batch as a [`Sink`] of `(subject, message)`: `poll_ready` waits while the
/// server owes flow acks, closing ends the batch (`eob`). Made by [`FastIngest::into_sink`].
pub struct FastIngestSink {
    state: SinkState,
    final_ack: Option<PublishAck>,
}

impl fmt::Debug for FastIngestSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FastIngestSink")
            .field("final_ack", &self.final_ack)
            .finish_non_exhaustive()
    }
}

impl FastIngestSink {
    /// The final ack, once the sink was closed.
    pub fn final_ack(&self) -> Option<&PublishAck> {
        self.final_ack.as_ref()
    }

    fn poll_sending(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), FastIngestError>> {
        if let SinkState::Sending(pending) = &mut self.state {
            match pending.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(ingest)) => self.state = SinkState::Idle(ingest),
                Poll::Ready(Err(e)) => {
                    self.state = SinkState::Done;
                    return Poll::Ready(Err(e));
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl Sink<(String, PublishMessage)> for FastIngestSink {
    type Error = FastIngestError;

    fn poll_ready(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Result<(), FastIngestError>> {
        let this = self.get_mut();
        match this.poll_sending(cx) {
            Poll::Ready(Ok(())) if matches!(this.state, SinkState::Idle(_)) => Poll::Ready(Ok(())),
            Poll::Ready(Ok(())) => {
                Poll::Ready(Err(FastIngestError::new(FastIngestErrorKind::Closed)))
            }
            other => other,
        }
    }

    fn start_send(
        self: Pin<&mut Self>,
        (subject, message): (String, PublishMessage),
    ) -> Result<(), FastIngestError> {
        let this = self.get_mut();
        let SinkState::Idle(mut ingest) = std::mem::replace(&mut this.state, SinkState::Done)
        else {
            return Err(FastIngestError::new(FastIngestErrorKind::Closed));
        };
        this.state = SinkState::Sending(Box::pin(async move {
            ingest.publish_message(subject, message).await?;
            Ok(ingest)
        }));
        Ok(())
    }

    fn poll_flush(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Result<(), FastIngestError>> {
        self.get_mut().poll_sending(cx)
    }

    fn poll_close(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Result<(), FastIngestError>> {
        let this = self.get_mut();
        if let Poll::Ready(Err(e)) = this.poll_sending(cx) {
            return Poll::Ready(Err(e));
        }
        if matches!(this.state, SinkState::Sending(_)) {
            return Poll::Pending;
        }
        if let SinkState::Idle(_) = this.state {
            let SinkState::Idle(ingest) = std::mem::replace(&mut this.state, SinkState::Done)
            else {
                return Poll::Ready(Ok(()));
            };
            this.state = SinkState::Closing(Box::pin(ingest.finish()));
        }
        if let SinkState::Closing(finishing) = &mut this.state {
            let outcome = match finishing.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(outcome) => outcome,
            };
            this.state = SinkState::Done;
            return Poll::Ready(outcome.map(|ack| {
                this.final_ack = Some(ack);
            }));
        }
        Poll::Ready(Ok(()))
    }
}

/// The kinds of [`FastIngestError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FastIngestErrorKind {
    /// The stream does not allow batch publishing (10205).
    Disabled,
    /// The server read the reply subject as malformed (10206).
    InvalidPattern,
    /// The batch id is invalid (10207).
    InvalidId,
    /// The server no longer knows the batch: it was idle too long, or the server restarted
    /// (10208).
    UnknownBatch,
    /// The stream or server has as many batches in flight as it allows (10211).
    TooManyInflight,
    /// The server ended the batch early (a gap or a refused message with
    /// [`GapMode::Fail`]); its source is the server's error when it sent one.
    Ended,
    /// No stream stores the subject.
    StreamNotFound,
    /// The subject is not a valid publish subject.
    InvalidSubject,
    /// A message exceeds the connection's `max_payload`.
    MaxPayloadExceeded,
    /// Ending a batch that has no message.
    Empty,
    /// The batch already ended.
    Closed,
    /// The connected server is too old for fast ingest.
    Unsupported,
    /// An owed ack did not come, even after a ping.
    TimedOut,
    /// The connection closed.
    BrokenPipe,
    /// Anything else; the source says what.
    Other,
}

impl fmt::Display for FastIngestErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FastIngestErrorKind::Disabled => "batch publish is disabled on the stream",
            FastIngestErrorKind::InvalidPattern => "invalid batch reply pattern",
            FastIngestErrorKind::InvalidId => "invalid batch id",
            FastIngestErrorKind::UnknownBatch => "the server does not know the batch",
            FastIngestErrorKind::TooManyInflight => "too many batches in flight",
            FastIngestErrorKind::Ended => "the server ended the batch",
            FastIngestErrorKind::StreamNotFound => "no stream found for the subject",
            FastIngestErrorKind::InvalidSubject => "invalid subject",
            FastIngestErrorKind::MaxPayloadExceeded => "message too large",
            FastIngestErrorKind::Empty => "the batch is empty",
            FastIngestErrorKind::Closed => "the batch is closed",
            FastIngestErrorKind::Unsupported => "the server does not support fast ingest",
            FastIngestErrorKind::TimedOut => "timed out waiting for a flow ack",
            FastIngestErrorKind::BrokenPipe => "broken pipe",
            FastIngestErrorKind::Other => "fast ingest failed",
        })
    }
}

/// Why a fast-ingest batch failed; a server refusal has the [`crate::Error`] as its source.
pub type FastIngestError = Error<FastIngestErrorKind>;

fn kind_of(code: ErrorCode) -> FastIngestErrorKind {
    match code {
        ErrorCode::BATCH_PUBLISH_DISABLED => FastIngestErrorKind::Disabled,
        ErrorCode::BATCH_PUBLISH_INVALID_PATTERN => FastIngestErrorKind::InvalidPattern,
        ErrorCode::BATCH_PUBLISH_INVALID_BATCH_ID => FastIngestErrorKind::InvalidId,
        ErrorCode::BATCH_PUBLISH_UNKNOWN_BATCH_ID => FastIngestErrorKind::UnknownBatch,
        ErrorCode::BATCH_PUBLISH_TOO_MANY_INFLIGHT => FastIngestErrorKind::TooManyInflight,
        ErrorCode::STREAM_NOT_FOUND => FastIngestErrorKind::StreamNotFound,
        _ => FastIngestErrorKind::Ended,
    }
}

/// The limit on a wait for the server, which only an answer that moves the batch on (a
/// later ack, the start, the end) puts off: replies that change nothing (a repeated ack, a
/// gap notice), however often they come, do not keep a wait going past its timeout.
struct Wait {
    deadline: std::time::Instant,
    seen: Progress,
}

/// Where the server's answers have got a batch.
#[derive(PartialEq, Eq, Clone, Copy)]
struct Progress {
    acked: u64,
    started: bool,
    over: bool,
}

impl Progress {
    fn of(ingest: &FastIngest) -> Progress {
        Progress {
            acked: ingest.acked,
            started: ingest.started,
            over: ingest.final_ack.is_some() || ingest.failure.is_some() || ingest.ending,
        }
    }
}

impl Wait {
    fn new(ingest: &FastIngest) -> Wait {
        Wait {
            deadline: rnats_core::runtime::deadline_after(ingest.timeout),
            seen: Progress::of(ingest),
        }
    }

    /// A reply came: the limit starts over only if it moved the batch on.
    fn after_reply(&mut self, ingest: &FastIngest) {
        let now = Progress::of(ingest);
        if now != self.seen {
            *self = Wait::new(ingest);
        }
    }

    /// A ping went out: its answer gets a whole timeout.
    fn restart(&mut self, ingest: &FastIngest) {
        *self = Wait::new(ingest);
    }
}

/// Whether a batch that sent `sent` messages, flow-acked up to `acked`, owes the most flow
/// acks it may (`window` messages, the flow times the acks allowed outstanding). `acked` is
/// the server's word, so the sum saturates: an ack past every sequence owes nothing.
fn owes_the_limit(acked: u64, window: u64, sent: u64) -> bool {
    acked.saturating_add(window) <= sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_publish_waits_once_the_window_past_the_last_ack_is_sent() {
        assert!(!owes_the_limit(10, 1000, 1009));
        assert!(owes_the_limit(10, 1000, 1010));
        // An ack at the top of the sequence range (a broken or hostile server).
        assert!(!owes_the_limit(u64::MAX, 1000, 5));
        assert!(owes_the_limit(u64::MAX - 1, 1, u64::MAX));
    }

    #[test]
    fn server_codes_become_kinds() {
        assert_eq!(
            kind_of(ErrorCode::BATCH_PUBLISH_DISABLED),
            FastIngestErrorKind::Disabled
        );
        assert_eq!(
            kind_of(ErrorCode::BATCH_PUBLISH_UNKNOWN_BATCH_ID),
            FastIngestErrorKind::UnknownBatch
        );
        assert_eq!(
            kind_of(ErrorCode::STREAM_WRONG_LAST_SEQUENCE),
            FastIngestErrorKind::Ended
        );
    }

    #[test]
    fn every_reply_shape_reads() {
        let read = |json: &str| serde_json::from_str::<Reply>(json).unwrap();
        let ack = read(r#"{"type":"ack","seq":10,"msgs":15}"#);
        assert_eq!(
            (ack.kind.as_deref(), ack.seq, ack.msgs),
            (Some("ack"), Some(10), Some(15))
        );
        let gap = read(r#"{"type":"gap","last_seq":10,"seq":15}"#);
        assert_eq!((gap.last_seq, gap.seq), (Some(10), Some(15)));
        let err = read(
            r#"{"type":"err","seq":10,"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 1"}}"#,
        );
        assert_eq!(
            err.error.unwrap().error_code(),
            ErrorCode::STREAM_WRONG_LAST_SEQUENCE
        );
        let done = read(r#"{"stream":"S","seq":99,"batch":"b","count":50}"#);
        assert_eq!((done.seq, done.count), (Some(99), Some(50)));
    }
}
