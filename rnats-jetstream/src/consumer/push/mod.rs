//! Push consumers: the server sends messages to the consumer's deliver subject; the client
//! subscribes, answers flow control and watches the idle heartbeats (ADR-9).
//!
//! A consumer with [`AckPolicy::FlowControl`]
//! (ADR-60, nats-server 2.14 or later) is acknowledged by those answers: each one names the
//! last message the stream yielded (`Nats-Last-Stream`, `Nats-Last-Consumer`), and the server
//! takes it as an ack of everything up to it, as `AckPolicy::All` would. The server answers
//! an idle consumer's heartbeat with flow control too, so the ack floor moves while nothing
//! new arrives.
//!
//! ```no_run
//! # async fn run(stream: rnats_jetstream::stream::Stream) -> Result<(), rnats_core::Error> {
//! use futures_util::StreamExt;
//! use rnats_jetstream::consumer::{AckPolicy, PushConsumer, push};
//!
//! // The server adds the flow control and the one-second heartbeat the policy needs.
//! let consumer: PushConsumer = stream
//!     .create_consumer(push::Config {
//!         durable_name: Some("copier".to_string()),
//!         deliver_subject: "copier.deliver".to_string(),
//!         ack_policy: AckPolicy::FlowControl,
//!         max_ack_pending: 1000, // the server asks for an answer at the latest here
//!         ..Default::default()
//!     })
//!     .await?;
//! let mut messages = consumer.messages().await?;
//! while let Some(message) = messages.next().await {
//!     let message = message?;
//!     println!("{}", message.subject); // no ack: the next flow-control answer covers it
//! }
//! # Ok(()) }
//! ```

mod config;
mod ordered;
#[cfg(any(feature = "kv", feature = "object-store"))]
pub(crate) mod passes;
#[cfg(any(feature = "kv", feature = "object-store"))]
pub(crate) mod read_end;

use std::fmt;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::error::Error;
use rnats_core::{HeaderMap, PublishError, StatusCode, Subject, Subscriber, UnsubscribeError};

pub use self::config::{Config, OrderedConfig};
pub use self::ordered::Ordered;
use super::heartbeat::Monitor;
use super::{AckPolicy, Consumer, StreamError, StreamErrorKind};
use crate::context::Context;
use crate::message::Message;

/// The header of a heartbeat from a stalled consumer: the subject that unstalls it.
const CONSUMER_STALLED: &str = "Nats-Consumer-Stalled";
/// The stream sequence a flow-control answer acknowledges up to (ADR-60).
const LAST_STREAM: &str = "Nats-Last-Stream";
/// The delivery sequence a flow-control answer acknowledges up to (ADR-60).
const LAST_CONSUMER: &str = "Nats-Last-Consumer";

impl Consumer<Config> {
    /// Subscribes to the deliver subject (in the deliver group, if there is one).
    pub async fn messages(&self) -> Result<Messages, StreamError> {
        let config = &self.info.config;
        let Some(deliver_subject) = config.deliver_subject.clone() else {
            return Err(StreamError::with_source(
                StreamErrorKind::Other,
                "the consumer has no deliver subject",
            ));
        };
        let client = &self.context.client;
        let subscriber = match &config.deliver_group {
            Some(group) => client.queue_subscribe(deliver_subject, group.clone()).await,
            None => client.subscribe(deliver_subject).await,
        }
        .map_err(|error| StreamError::with_source(StreamErrorKind::Other, error))?;
        Ok(Messages {
            context: self.context.clone(),
            subscriber,
            heartbeat: Monitor::new(config.idle_heartbeat),
            control: Control::default(),
            acks_by_flow_control: config.ack_policy == AckPolicy::FlowControl,
            last: None,
            terminated: false,
        })
    }
}

/// A push consumer's messages; from [`Consumer::messages`].
///
/// [`drain`](Self::drain) stops it gracefully, so that every message the server delivered
/// can still be read and acked; dropping it loses what it held until the consumer's
/// `ack_wait` brings it back.
pub struct Messages {
    context: Context,
    subscriber: Subscriber,
    heartbeat: Monitor,
    control: Control,
    /// Whether flow-control answers acknowledge (ADR-60).
    acks_by_flow_control: bool,
    /// The stream and delivery sequences of the last message yielded.
    last: Option<(u64, u64)>,
    terminated: bool,
}

impl Messages {
    /// Stops gracefully (as ADR-37's "Stop and Drain" does for pull consumers): unsubscribes
    /// the deliver subject and waits (a PING/PONG round trip) until every message the server
    /// sent before that has arrived. The stream then yields what it holds, to be acked as
    /// usual, and ends with `None`. A durable consumer stays on the server, inactive until
    /// someone subscribes again; an ephemeral one goes after its inactive threshold.
    ///
    /// On an error (the connection went down or closed) the stream ends after what already
    /// arrived; messages the server sent meanwhile come again after the consumer's
    /// `ack_wait`.
    pub async fn drain(&mut self) -> Result<(), UnsubscribeError> {
        // Heartbeats stop with the interest: their silence means nothing now (nothing resumes
        // the monitor of a push stream).
        self.heartbeat.pause();
        self.subscriber.drain().await
    }
}

impl futures_util::Stream for Messages {
    type Item = Result<Message, MessagesError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.terminated {
            return Poll::Ready(None);
        }
        loop {
            if let Some(error) = this.control.drive(&this.context, cx) {
                return Poll::Ready(Some(Err(error)));
            }
            let message = match this.subscriber.poll_next_unpin(cx) {
                Poll::Ready(Some(message)) => message,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending if this.heartbeat.poll_missed(cx) => {
                    return Poll::Ready(Some(Err(MessagesError::new(
                        MessagesErrorKind::MissingHeartbeat,
                    ))));
                }
                Poll::Pending => return Poll::Pending,
            };
            this.heartbeat.seen();
            match Control::classify(&message) {
                Delivery::Message => {
                    let message = Message {
                        message,
                        context: this.context.clone(),
                    };
                    if this.acks_by_flow_control {
                        // Messages come in order; one whose ack subject does not parse
                        // moves nothing, and is then acked with the next.
                        if let Ok(info) = message.info() {
                            this.last = Some((info.stream_sequence, info.consumer_sequence));
                        }
                    }
                    return Poll::Ready(Some(Ok(message)));
                }
                Delivery::Control(reply) => {
                    // By now the stream was polled past every message before the flow
                    // control: the caller is done with them, and the answer acks them.
                    let headers = this.acks_by_flow_control.then(|| acked_up_to(this.last));
                    this.control.queue(reply, headers);
                }
                Delivery::Heartbeat => {}
                Delivery::ConsumerDeleted => {
                    this.terminated = true;
                    return Poll::Ready(Some(Err(MessagesError::new(
                        MessagesErrorKind::ConsumerDeleted,
                    ))));
                }
            }
        }
    }
}

/// A push subscription's message, classified.
pub(crate) enum Delivery {
    /// A stream message.
    Message,
    /// Flow control, or a heartbeat of a stalled consumer: answer on this subject.
    Control(Subject),
    /// An idle heartbeat (or a status to ignore).
    Heartbeat,
    /// 409 `Consumer Deleted`.
    ConsumerDeleted,
}

/// The headers of a flow-control answer that acknowledges up to `last` (stream and delivery
/// sequences); zeros before any message, which the server takes as no ack.
pub(crate) fn acked_up_to(last: Option<(u64, u64)>) -> HeaderMap {
    let (stream, delivered) = last.unwrap_or_default();
    let mut headers = HeaderMap::new();
    headers.insert(LAST_STREAM, stream.to_string());
    headers.insert(LAST_CONSUMER, delivered.to_string());
    headers
}

/// The answers owed to the server's flow control, sent one at a time without a task. Only
/// the newest waits: the server heeds an answer only on the subject of its latest request
/// (and one that acks, acks everything before it too), as nats.go keeps one reply per
/// subscription. A queue of them would grow with every request a server sends while the
/// answer before is stuck behind a full socket.
#[derive(Default)]
pub(crate) struct Control {
    queued: Option<(Subject, Option<HeaderMap>)>,
    sending: Option<BoxFuture<'static, Result<(), PublishError>>>,
}

impl Control {
    /// Reads a push subscription's message.
    pub(crate) fn classify(message: &rnats_core::Message) -> Delivery {
        match message.status {
            None | Some(StatusCode::OK) => Delivery::Message,
            Some(StatusCode::IDLE_HEARTBEAT) => {
                // Flow control requests carry a reply; heartbeats of a consumer stalled on
                // flow control name the subject to answer in a header.
                let stalled = message
                    .headers
                    .as_ref()
                    .and_then(|headers| headers.get_last(CONSUMER_STALLED))
                    .map(|value| Subject::from(value.as_str()));
                match message.reply.clone().or(stalled) {
                    Some(reply) => Delivery::Control(reply),
                    None => Delivery::Heartbeat,
                }
            }
            Some(StatusCode::CONFLICT)
                if message
                    .description
                    .as_deref()
                    .is_some_and(|d| d.eq_ignore_ascii_case("consumer deleted")) =>
            {
                Delivery::ConsumerDeleted
            }
            Some(_) => Delivery::Heartbeat,
        }
    }

    /// Owes an answer on `reply`, with `headers` if any, in place of one not sent yet.
    pub(crate) fn queue(&mut self, reply: Subject, headers: Option<HeaderMap>) {
        self.queued = Some((reply, headers));
    }

    /// Sends the answer owed; an error if one could not be sent.
    pub(crate) fn drive(
        &mut self,
        context: &Context,
        cx: &mut TaskContext<'_>,
    ) -> Option<MessagesError> {
        loop {
            if self.sending.is_none() {
                let (reply, headers) = self.queued.take()?;
                let client = context.client.clone();
                self.sending = Some(Box::pin(async move {
                    match headers {
                        Some(headers) => {
                            client
                                .publish_with_headers(reply, headers, Bytes::new())
                                .await
                        }
                        None => client.publish(reply, Bytes::new()).await,
                    }
                }));
            }
            let sending = self.sending.as_mut()?;
            match sending.poll_unpin(cx) {
                Poll::Pending => return None,
                Poll::Ready(result) => {
                    self.sending = None;
                    if let Err(error) = result {
                        return Some(MessagesError::with_source(MessagesErrorKind::Other, error));
                    }
                }
            }
        }
    }
}

/// The kinds of [`MessagesError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MessagesErrorKind {
    /// No message or heartbeat for two heartbeat intervals (not terminal).
    MissingHeartbeat,
    /// The consumer was deleted (terminal).
    ConsumerDeleted,
    /// The consumer is a pull consumer.
    PullBasedConsumer,
    /// Anything else.
    Other,
}

impl fmt::Display for MessagesErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MissingHeartbeat => "missed idle heartbeat",
            Self::ConsumerDeleted => "consumer deleted",
            Self::PullBasedConsumer => "cannot use with pull consumer",
            Self::Other => "error",
        })
    }
}

/// An error item of a push consumer's message stream.
pub type MessagesError = Error<MessagesErrorKind>;

/// The kinds of [`OrderedError`].
#[derive(Clone, Debug, PartialEq)]
pub enum OrderedErrorKind {
    /// Heartbeats were missed (the consumer is being recreated).
    MissingHeartbeat,
    /// The consumer was deleted.
    ConsumerDeleted,
    /// The consumer is a pull consumer.
    PullBasedConsumer,
    /// Recreating the consumer failed.
    Recreate,
    /// Anything else.
    Other,
}

impl fmt::Display for OrderedErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MissingHeartbeat => "missed idle heartbeat",
            Self::ConsumerDeleted => "consumer deleted",
            Self::PullBasedConsumer => "cannot use with pull consumer",
            Self::Recreate => "consumer recreation failed",
            Self::Other => "error",
        })
    }
}

/// An error item of an ordered push consumer's message stream.
pub type OrderedError = Error<OrderedErrorKind>;

/// The kinds of [`ConsumerRecreateError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConsumerRecreateErrorKind {
    /// The stream could not be read.
    GetStream,
    /// Subscribing to the new deliver subject failed.
    Subscription,
    /// Creating the new consumer failed.
    Recreate,
    /// No answer in time.
    TimedOut,
}

impl fmt::Display for ConsumerRecreateErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::GetStream => "error getting stream",
            Self::Subscription => "failed to resubscribe",
            Self::Recreate => "consumer creation failed",
            Self::TimedOut => "timed out",
        })
    }
}

/// Why an ordered push consumer could not be recreated.
pub type ConsumerRecreateError = Error<ConsumerRecreateErrorKind>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_flow_control_answer_waits() {
        let mut control = Control::default();
        // Requests keep coming while no answer can be sent (a full socket, say).
        for n in 0..10_000u64 {
            let headers = acked_up_to(Some((n, n)));
            control.queue(Subject::from(format!("$JS.FC.S.C.{n}")), Some(headers));
        }
        let (reply, headers) = control.queued.take().expect("the newest answer");
        assert_eq!(reply.as_str(), "$JS.FC.S.C.9999");
        let headers = headers.unwrap();
        assert_eq!(headers.get(LAST_STREAM).unwrap().as_str(), "9999");
        assert!(control.queued.is_none());
    }
}
