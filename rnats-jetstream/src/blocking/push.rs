//! Push consumers for the blocking context: the server sends messages to the consumer's
//! deliver subject, this client subscribes to it (in the deliver group, if there is one),
//! answers flow control and watches the idle heartbeats (ADR-9).

use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats_core::UnsubscribeError;
use rnats_core::blocking::Subscriber;

use super::consumer::Consumer;
use super::context::Context;
use super::message::Message;
use crate::consumer::push::{
    Config, Control, Delivery, MessagesError, MessagesErrorKind, acked_up_to,
};
use crate::consumer::{AckPolicy, StreamError, StreamErrorKind};

impl Consumer<Config> {
    /// Subscribes to the deliver subject (in the deliver group, if there is one): the
    /// consumer's messages, as an iterator that waits for the next as long as it takes;
    /// [`PushMessages::next_timeout`] waits a bounded time.
    pub fn messages(&self) -> Result<PushMessages, StreamError> {
        let config = &self.cached_info().config;
        let Some(deliver_subject) = config.deliver_subject.as_deref() else {
            return Err(StreamError::with_source(
                StreamErrorKind::Other,
                "the consumer has no deliver subject",
            ));
        };
        let client = &self.context().client;
        let subscriber = match &config.deliver_group {
            Some(group) => client.queue_subscribe(deliver_subject, group.clone()),
            None => client.subscribe(deliver_subject),
        }
        .map_err(|error| StreamError::with_source(StreamErrorKind::Other, error))?;
        Ok(PushMessages {
            context: self.context().clone(),
            subscriber,
            silence: (!config.idle_heartbeat.is_zero())
                .then(|| config.idle_heartbeat.saturating_mul(2)),
            last_heard: Instant::now(),
            acks_by_flow_control: config.ack_policy == AckPolicy::FlowControl,
            last: None,
            done: false,
        })
    }
}

/// A push consumer's messages, from [`Consumer::messages`]. Missed heartbeats are an error
/// item the iteration goes on after; a deleted consumer ends it with an error.
/// [`drain`](Self::drain) stops it so that every message the server sent can still be read
/// and acked.
pub struct PushMessages {
    context: Context,
    subscriber: Subscriber,
    /// Two heartbeat intervals, when the consumer sends heartbeats.
    silence: Option<Duration>,
    /// When the server last sent something.
    last_heard: Instant,
    /// Whether flow-control answers acknowledge (ADR-60).
    acks_by_flow_control: bool,
    /// The stream and delivery sequences of the last message handed out.
    last: Option<(u64, u64)>,
    done: bool,
}

impl PushMessages {
    /// The next message, waiting up to `timeout`: `Ok(None)` if none came in time or the
    /// iteration ended (a terminal error is returned first).
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Message>, MessagesError> {
        let deadline = Instant::now().checked_add(timeout);
        self.next_until(deadline).transpose().map(Option::flatten)
    }

    /// Unsubscribes and waits (up to the client's drain timeout) until every message the
    /// server sent before has arrived; those are handed out, then the iteration ends. A
    /// durable consumer stays on the server; an ephemeral one goes after its inactive
    /// threshold.
    pub fn drain(&mut self) -> Result<(), UnsubscribeError> {
        // Heartbeats stop with the interest: their silence means nothing now.
        self.silence = None;
        self.subscriber.drain()
    }

    /// The next message or error; `Some(Ok(None))` when `deadline` passed first, `None`
    /// when the iteration is over.
    fn next_until(
        &mut self,
        deadline: Option<Instant>,
    ) -> Option<Result<Option<Message>, MessagesError>> {
        // What came while the caller was away is read before any silence is judged.
        let mut drained = false;
        while !self.done {
            let now = Instant::now();
            let quiet_until = self
                .silence
                .and_then(|silence| self.last_heard.checked_add(silence));
            if drained && quiet_until.is_some_and(|quiet_until| now >= quiet_until) {
                self.last_heard = now;
                return Some(Err(MessagesError::new(MessagesErrorKind::MissingHeartbeat)));
            }
            let wait = match (quiet_until, deadline) {
                // First a look at what is already here.
                _ if !drained => Some(now),
                (Some(quiet), Some(deadline)) => Some(quiet.min(deadline)),
                (quiet, deadline) => quiet.or(deadline),
            };
            let message = match wait {
                None => self.subscriber.next(),
                Some(until) => match self
                    .subscriber
                    .next_timeout(until.saturating_duration_since(now))
                {
                    Ok(message) => message,
                    Err(_) if deadline.is_some_and(|d| Instant::now() >= d) => {
                        return Some(Ok(None));
                    }
                    // The silence is judged at the top.
                    Err(_) => {
                        drained = true;
                        continue;
                    }
                },
            };
            drained = false;
            let Some(message) = message else {
                self.done = true;
                return None;
            };
            self.last_heard = Instant::now();
            match Control::classify(&message) {
                Delivery::Message => {
                    let message = Message {
                        message,
                        context: self.context.clone(),
                    };
                    if self.acks_by_flow_control
                        && let Ok(info) = message.info()
                    {
                        self.last = Some((info.stream_sequence, info.consumer_sequence));
                    }
                    return Some(Ok(Some(message)));
                }
                Delivery::Control(reply) => {
                    // Every message before the request was handed out: the answer may ack
                    // them (ADR-60). Unanswered, the server stops delivering.
                    let client = &self.context.client;
                    let sent = match self.acks_by_flow_control {
                        true => {
                            client.publish_with_headers(reply, acked_up_to(self.last), Bytes::new())
                        }
                        false => client.publish(reply, Bytes::new()),
                    };
                    if let Err(error) = sent {
                        let error = MessagesError::with_source(MessagesErrorKind::Other, error);
                        return Some(Err(error));
                    }
                }
                Delivery::Heartbeat => {}
                Delivery::ConsumerDeleted => {
                    self.done = true;
                    let error = MessagesError::new(MessagesErrorKind::ConsumerDeleted);
                    return Some(Err(error));
                }
            }
        }
        None
    }
}

impl Iterator for PushMessages {
    type Item = Result<Message, MessagesError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_until(None)? {
                Ok(Some(message)) => return Some(Ok(message)),
                // No deadline: nothing else ends a wait early.
                Ok(None) => continue,
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

impl std::fmt::Debug for PushMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushMessages")
            .field("last", &self.last)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
