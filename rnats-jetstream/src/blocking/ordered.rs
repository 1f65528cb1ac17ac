//! The ordered push consumer (ADR-17) for the blocking context: every message of a stream
//! (or of its filter) once, in order, without acks. Key-Value watches, histories and key
//! listings read through it too.
//!
//! The consumer delivers to an inbox of this client's. A gap in its delivery sequence, two
//! missed heartbeats or a 409 mean deliveries were lost, and a reconnect may have lost the
//! consumer (a restarted server has none: it lives in memory): the consumer is then made
//! again from the stream sequence after the last one delivered, on a fresh inbox, and the
//! old one deleted. Flow control requests are answered as they come.

use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats_core::blocking::{Subscriber, Woken};

use super::consumer::Consumer;
use super::context::Context;
use super::message::Message;
use super::stream::Stream;
use crate::consumer::push::{Control, Delivery, OrderedConfig, OrderedError, OrderedErrorKind};
use crate::consumer::{DeliverPolicy, Info, StreamError, StreamErrorKind};
use crate::context::ConsumerError;

/// The heartbeat assumed if the server reports none (ordered consumers ask for 5 s).
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);

impl Consumer<OrderedConfig> {
    /// The consumer's messages, in stream order, each once: an iterator that waits for the
    /// next message as long as it takes; [`Ordered::next_timeout`] waits a bounded time.
    ///
    /// ```no_run
    /// # use rnats_jetstream::blocking::{Context, Stream};
    /// # fn run(jetstream: Context, stream: Stream) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::consumer::push::OrderedConfig;
    /// let consumer = stream.create_consumer(OrderedConfig {
    ///     deliver_subject: jetstream.client().new_inbox(),
    ///     ..Default::default()
    /// })?;
    /// for message in consumer.messages()? {
    ///     println!("{:?}", message?.payload);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn messages(&self) -> Result<Ordered, StreamError> {
        let info = self.cached_info();
        let subscriber = self
            .context()
            .client
            .subscribe(self.config().deliver_subject.as_str())
            .map_err(|e| StreamError::with_source(StreamErrorKind::Other, e))?;
        let (context, config) = (self.context().clone(), self.config().clone());
        Ok(Ordered::new(context, config, subscriber, info))
    }
}

impl Stream {
    /// Subscribes to a fresh inbox and makes an ordered consumer delivering there, as
    /// `config` says; its messages.
    #[cfg(any(feature = "kv", feature = "object-store"))]
    pub(super) fn ordered(&self, mut config: OrderedConfig) -> Result<Ordered, ConsumerError> {
        let (subscriber, info) = open(&self.context, &self.name, &mut config)?;
        Ok(Ordered::new(
            self.context.clone(),
            config,
            subscriber,
            &info,
        ))
    }
}

/// An ordered consumer's messages, from [`Consumer::messages`]: each once, in stream order,
/// across lost deliveries and reconnects. An error item (the consumer could not be made
/// again) does not end it: the next call tries again.
pub struct Ordered {
    context: Context,
    stream: String,
    /// What each consumer is made with; its inbox and start change when it is made again.
    config: OrderedConfig,
    subscriber: Subscriber,
    /// The consumer now delivering.
    consumer: String,
    heartbeat: Duration,
    /// The last delivery sequence seen from this consumer (0: none yet).
    consumer_sequence: u64,
    /// The stream sequence a consumer made again starts after: the last one delivered, or
    /// for a consumer of new messages the stream's last when it started; `None` to start as
    /// the first consumer did.
    resume_after: Option<u64>,
    /// Messages the first consumer had to deliver when it was made (for Key-Value).
    #[cfg_attr(not(any(feature = "kv", feature = "object-store")), allow(dead_code))]
    pub(super) pending_at_start: u64,
    /// When the server last sent something (or the consumer was made).
    last_heard: Instant,
    /// Whether the subscription was found empty since the last message read in this call:
    /// silence is judged only then, so what came while the caller was away is read first.
    drained: bool,
    /// The client's connections made when the consumer was made
    /// ([`Statistics::connects`](rnats_core::Statistics::connects)).
    connects: u64,
    /// The subscription ended: the client closed.
    closed: bool,
}

impl Ordered {
    fn new(
        context: Context,
        config: OrderedConfig,
        subscriber: Subscriber,
        info: &Info,
    ) -> Ordered {
        let connects = context.connects();
        Ordered {
            resume_after: match config.deliver_policy {
                // A consumer made again must start where this one did, not at what is new
                // by then.
                DeliverPolicy::New => Some(info.delivered.stream_sequence),
                _ => None,
            },
            context,
            stream: info.stream_name.clone(),
            config,
            subscriber,
            consumer: info.name.clone(),
            heartbeat: match info.config.idle_heartbeat.is_zero() {
                true => DEFAULT_HEARTBEAT,
                false => info.config.idle_heartbeat,
            },
            consumer_sequence: 0,
            pending_at_start: info.num_pending,
            last_heard: Instant::now(),
            drained: false,
            connects,
            closed: false,
        }
    }

    /// The next message, waiting up to `timeout`: `Ok(None)` if none came in time (or the
    /// client closed).
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Message>, OrderedError> {
        let message = self.next_message(Instant::now().checked_add(timeout))?;
        Ok(message.map(|message| Message {
            message,
            context: self.context.clone(),
        }))
    }

    /// Whether the client closed, which ends the messages.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The next stream message, waiting until `deadline` (for ever with none): `Ok(None)`
    /// once it passed or the client closed. Status messages are read here, not returned.
    pub(super) fn next_message(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<rnats_core::Message>, OrderedError> {
        self.drained = false;
        while !self.closed {
            let now = Instant::now();
            // First a look at what is already here.
            let mut until = now;
            if self.drained {
                // Two heartbeats missed since the server was last heard (over as many
                // calls as it takes): the consumer is gone.
                let silence = self.heartbeat.saturating_mul(2);
                let quiet_until = self.last_heard.checked_add(silence).unwrap_or(now);
                if now >= quiet_until {
                    self.last_heard = now;
                    self.recreate()?;
                    continue;
                }
                until = quiet_until;
                if let Some(deadline) = deadline {
                    if deadline <= now {
                        return Ok(None);
                    }
                    until = until.min(deadline);
                }
            }
            let message = match self
                .subscriber
                .next_or_reconnect(Some(until), self.connects)
            {
                Woken::Message(message) => message,
                Woken::Ended => {
                    self.closed = true;
                    break;
                }
                // The deadline and the silence are judged at the top.
                Woken::TimedOut => {
                    self.drained = true;
                    continue;
                }
                // Not asked for (`next_or_reconnect`).
                Woken::ClusterChanged | Woken::Watched => continue,
                // The server may have restarted without the consumer (it lives in memory),
                // as the async ordered consumer and nats.go assume: made again at once. If
                // that fails (the server still recovering), the silence tries again after
                // one heartbeat rather than two.
                Woken::Reconnected => {
                    self.connects = self.context.connects();
                    if self.recreate().is_err() {
                        self.last_heard = Instant::now()
                            .checked_sub(self.heartbeat)
                            .unwrap_or_else(Instant::now);
                    }
                    continue;
                }
            };
            self.drained = false;
            self.last_heard = Instant::now();
            match Control::classify(&message) {
                Delivery::Message => {}
                Delivery::Heartbeat => continue,
                Delivery::Control(reply) => {
                    // Unanswered, the server stops delivering; a lost answer is asked again.
                    let _ = self.context.client.publish(reply, Bytes::new());
                    continue;
                }
                Delivery::ConsumerDeleted => {
                    self.recreate()?;
                    continue;
                }
            }
            let info = crate::message::info_of(&message)
                .map_err(|e| OrderedError::with_source(OrderedErrorKind::Other, e))?;
            let (delivery, sequence) = (info.consumer_sequence, info.stream_sequence);
            if delivery != self.consumer_sequence + 1 {
                // A delivery went missing; an older one comes from a consumer replaced
                // since.
                if delivery > self.consumer_sequence + 1 {
                    self.recreate()?;
                }
                continue;
            }
            self.consumer_sequence = delivery;
            self.resume_after = Some(sequence);
            return Ok(Some(message));
        }
        Ok(None)
    }

    /// Deletes the consumer now delivering, for a reader done with it before its
    /// inactivity threshold would have the server remove it.
    #[cfg(feature = "object-store")]
    pub(super) fn delete_consumer(&self) -> Result<(), ConsumerError> {
        self.context
            .delete_consumer_from_stream(&self.consumer, &self.stream)
            .map(drop)
    }

    /// Asks the server to delete the consumer now delivering without waiting for its answer,
    /// for a reader dropped half-way (see [`Context::delete_consumer_unanswered`]).
    #[cfg(feature = "object-store")]
    pub(super) fn delete_consumer_unanswered(&self) {
        self.context
            .delete_consumer_unanswered(&self.stream, &self.consumer);
    }

    /// Replaces the consumer by one that starts after the last stream sequence delivered.
    /// On failure the old one stays in place, and the next silence tries again.
    fn recreate(&mut self) -> Result<(), OrderedError> {
        let mut config = self.config.clone();
        if let Some(last) = self.resume_after {
            config.deliver_policy = DeliverPolicy::ByStartSequence {
                start_sequence: last + 1,
            };
        }
        let (subscriber, info) = open(&self.context, &self.stream, &mut config)
            .map_err(|e| OrderedError::with_source(OrderedErrorKind::Recreate, e))?;
        // The old one goes after its inactivity threshold anyway; deleting it is tidier.
        let _ = self
            .context
            .delete_consumer_from_stream(&self.consumer, &self.stream);
        self.subscriber = subscriber;
        self.consumer = info.name;
        self.consumer_sequence = 0;
        self.last_heard = Instant::now();
        self.connects = self.context.connects();
        Ok(())
    }
}

impl Iterator for Ordered {
    type Item = Result<Message, OrderedError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_message(None) {
            Ok(Some(message)) => Some(Ok(Message {
                message,
                context: self.context.clone(),
            })),
            // No deadline: only the client closing ends the wait.
            Ok(None) => None,
            Err(error) => Some(Err(error)),
        }
    }
}

impl std::fmt::Debug for Ordered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ordered")
            .field("consumer", &self.consumer)
            .field("resume_after", &self.resume_after)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

/// Subscribes to a fresh inbox, then makes the consumer `config` describes deliver there.
fn open(
    context: &Context,
    stream: &str,
    config: &mut OrderedConfig,
) -> Result<(Subscriber, Info), ConsumerError> {
    let client = &context.client;
    config.deliver_subject = client.new_inbox();
    let subscriber = client
        .subscribe(config.deliver_subject.as_str())
        .map_err(|e| ConsumerError::with_source(crate::context::ConsumerErrorKind::Other, e))?;
    let consumer = context.create_consumer_on_stream(config.clone(), stream)?;
    Ok((subscriber, consumer.cached_info().clone()))
}
