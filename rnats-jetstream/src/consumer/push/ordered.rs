//! The ordered push consumer (ADR-17): a flow-controlled ephemeral consumer on a fresh inbox,
//! recreated from the last stream sequence seen when a delivery goes missing (a gap, or a
//! message its subscription dropped as a slow consumer), the heartbeats'
//! `Nats-Last-Consumer` disagrees, heartbeats stop, the consumer disappears, the client
//! reconnects (the server may have restarted without the consumer, as nats.go assumes too),
//! or it idles while the stream leader holds a message it owes (its replica fell behind; see
//! `consumer/stale.rs`).
//! The create is sent again every second while unanswered (see `consumer/recreate.rs`), and
//! a recreation the server refuses is retried with a backoff until one succeeds.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::header::NATS_LAST_CONSUMER;
use rnats_core::{ConnectionEvent, Events, Subscriber, UnsubscribeError};

use super::config::ORDERED_IDLE_HEARTBEAT;
use super::{
    ConsumerRecreateError, ConsumerRecreateErrorKind, Control, Delivery, OrderedConfig,
    OrderedError, OrderedErrorKind,
};
use crate::consumer::heartbeat::Monitor;
use crate::consumer::recreate::{
    create_resending, delete_replaced, delete_when_dropped, first_start, restart_at,
};
use crate::consumer::stale::StaleCheck;
use crate::consumer::{Consumer, IntoConsumerConfig, StreamError, StreamErrorKind};
use crate::context::Context;
use crate::message::Message;

/// The largest flow-control window nats-server gives a push consumer
/// (`JsFlowControlMaxPending`). It starts at a sixteenth of this, sends no more until the
/// client answers its flow control, and doubles the window with each answer.
const LARGEST_WINDOW: usize = 32 * 1024 * 1024;

/// The bounds of an ordered consumer's subscription queue, whatever the client's
/// [`subscription_capacity`](rnats_core::ConnectOptions::subscription_capacity): a reader
/// that keeps up takes each read's deliveries long before these fill, however small the
/// client's capacity (each loss costs a recreation of the consumer, and a lost flow-control
/// request stalled the consumer until its next heartbeat); a reader that lags further loses
/// what does not fit, and the consumer is recreated after what it took, with the first
/// window again, rather than the queue growing with the server's window (up to 32 MiB). A
/// queued message holds several times its wire size on the heap, so the count is what bounds
/// the memory: 4,096 KV key deliveries (about 130 bytes on the wire each) measured about
/// 5 MiB of peak heap while listing (issue 22).
const QUEUE_MESSAGES: usize = 4096;
/// See [`QUEUE_MESSAGES`]. In bytes the server's window is the bound: twice the largest,
/// as the server checks it before each delivery, not after, so large messages are not lost
/// to a client capacity made for small ones.
const QUEUE_BYTES: usize = 2 * LARGEST_WINDOW;

impl Consumer<OrderedConfig> {
    /// The consumer's messages, in order, recreating the consumer as needed. A recreation
    /// starts after the last message delivered; before the first, where this consumer
    /// started, judged from its cached info (see `Consumer::cached_info`), which for a
    /// consumer just made is the server's answer to the create.
    pub async fn messages(self) -> Result<Ordered, StreamError> {
        let deliver_subject = self.info.config.deliver_subject.clone().ok_or_else(|| {
            StreamError::with_source(StreamErrorKind::Other, "no deliver subject")
        })?;
        let subscriber = self
            .context
            .client
            .subscribe_with_capacity(deliver_subject, QUEUE_MESSAGES, QUEUE_BYTES)
            .await
            .map_err(|error| StreamError::with_source(StreamErrorKind::Other, error))?;
        let events = Some(self.context.client.events());
        // The heartbeat the consumer was made with (a KV watch may choose its own), kept for
        // the consumers that replace it.
        let idle_heartbeat = match self.info.config.idle_heartbeat {
            heartbeat if heartbeat.is_zero() => ORDERED_IDLE_HEARTBEAT,
            heartbeat => heartbeat,
        };
        let mut config = self.config;
        // A recreation before the first delivery starts where this consumer did.
        config.deliver_policy = first_start(config.deliver_policy, &self.info);
        let server_config = config.clone().into_consumer_config();
        let stale = StaleCheck::for_consumer(self.info.stream_name.clone(), &server_config);
        Ok(Ordered {
            events,
            context: self.context,
            stream_name: self.info.stream_name,
            consumer_name: self.info.name.clone(),
            name_prefix: self.info.name,
            serial: 0,
            // A durable given as an ordered consumer stays; see `Drop`.
            first_is_ephemeral: self.info.config.durable_name.is_none(),
            config,
            subscriber: Some(subscriber),
            recreate: None,
            attempt: 0,
            idle_heartbeat,
            heartbeat: Monitor::new(idle_heartbeat),
            stale,
            control: Control::default(),
            consumer_sequence: 0,
            stream_sequence: 0,
            draining: false,
        })
    }
}

#[cfg(feature = "kv")]
impl<I> crate::stream::Stream<I> {
    /// Creates an ordered push consumer that sends idle heartbeats every `idle_heartbeat`
    /// rather than every 5 s (`OrderedConfig`, async-nats' type, has no field for it). Its
    /// stream watches for that heartbeat and asks the same of the consumers replacing it.
    pub(crate) async fn create_ordered_push(
        &self,
        config: OrderedConfig,
        idle_heartbeat: Duration,
    ) -> Result<Consumer<OrderedConfig>, crate::consumer_errors::ConsumerError> {
        let mut server_config = config.clone().into_consumer_config();
        server_config.idle_heartbeat = idle_heartbeat;
        let consumer = self.create_consumer(server_config).await?;
        Ok(Consumer::new(config, consumer.info, consumer.context))
    }
}

/// An ordered push consumer's messages; from [`Consumer<OrderedConfig>::messages`].
pub struct Ordered {
    /// The client's connection events, until they end: a reconnect recreates the consumer.
    events: Option<Events>,
    context: Context,
    stream_name: String,
    config: OrderedConfig,
    consumer_name: String,
    name_prefix: String,
    serial: u64,
    /// Whether the consumer the stream started with is ephemeral, so it goes when the stream
    /// is dropped.
    first_is_ephemeral: bool,
    subscriber: Option<Subscriber>,
    recreate: Option<BoxFuture<'static, Result<Subscriber, ConsumerRecreateError>>>,
    attempt: u32,
    /// The consumer's idle heartbeat, asked of every consumer made again.
    idle_heartbeat: Duration,
    heartbeat: Monitor,
    /// Notices a consumer on a replica left behind (see `consumer/stale.rs`).
    stale: StaleCheck,
    control: Control,
    consumer_sequence: u64,
    stream_sequence: u64,
    /// Draining (ADR-37): no recreation, nothing owed to flow control or heartbeats; the
    /// stream ends after the last message of the subscription, or at a gap.
    draining: bool,
}

impl Ordered {
    /// Stops gracefully (ADR-37 "Stop and Drain"), as the push consumer's
    /// [`Messages::drain`](super::Messages::drain) does: unsubscribes the delivery inbox and
    /// waits (a PING/PONG round trip) until every message the server sent before has
    /// arrived; the stream then yields those, in order, and ends with `None`. A recreation
    /// under way is abandoned; heartbeats and flow control are ignored while draining; and a
    /// gap, a message the subscription dropped or the consumer's deletion ends the stream
    /// rather than recreating the consumer. The ephemeral consumer stays until the stream is
    /// dropped, which deletes it.
    ///
    /// ```no_run
    /// # async fn run(stream: rnats_jetstream::stream::Stream) -> Result<(), rnats_core::Error> {
    /// use futures_util::StreamExt;
    /// use rnats_jetstream::consumer::push::OrderedConfig;
    /// let consumer = stream
    ///     .create_consumer(OrderedConfig {
    ///         deliver_subject: "deliver.orders".into(),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// let mut messages = consumer.messages().await?;
    /// if let Some(message) = messages.next().await {
    ///     println!("first: {:?}", message?.payload);
    /// }
    /// messages.drain().await?;
    /// while let Some(message) = messages.next().await {
    ///     println!("left: {:?}", message?.payload);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn drain(&mut self) -> Result<(), UnsubscribeError> {
        self.draining = true;
        self.recreate = None;
        self.events = None;
        self.heartbeat.pause();
        self.stale.pause();
        match self.subscriber.as_mut() {
            Some(subscriber) => subscriber.drain().await,
            None => Ok(()),
        }
    }

    /// The name of the consumer delivering now (it changes when the consumer is recreated).
    #[cfg_attr(not(feature = "kv"), allow(dead_code))]
    pub(crate) fn consumer_name(&self) -> &str {
        &self.consumer_name
    }

    /// Whether `info`, the server's view of the consumer delivering now, shows that it has
    /// nothing left and that everything it sent has arrived. The consumer sequence is the
    /// measure, not the stream sequence: a purge moves the consumer's stream position past
    /// messages it never sent.
    #[cfg_attr(not(feature = "kv"), allow(dead_code))]
    pub(crate) fn delivered_all(&self, info: &crate::consumer::Info) -> bool {
        self.subscriber.is_some()
            && self.recreate.is_none()
            && info.name == self.consumer_name
            && info.num_pending == 0
            && info.delivered.consumer_sequence == self.consumer_sequence
    }

    /// Replaces the consumer with one on a fresh inbox, starting after the last message.
    fn start_recreate(&mut self) {
        self.subscriber = None;
        self.stale.restart();
        self.consumer_sequence = 0;
        self.serial += 1;
        let name = format!("{}_{}", self.name_prefix, self.serial);
        let old = std::mem::replace(&mut self.consumer_name, name.clone());
        let deliver_policy = restart_at(self.config.deliver_policy, self.stream_sequence);
        let mut config = OrderedConfig {
            name: Some(name),
            deliver_policy,
            ..self.config.clone()
        }
        .into_consumer_config();
        config.idle_heartbeat = self.idle_heartbeat;
        // Bounded even when nothing else bounds requests: a lost create is sent again.
        let context = self.context.recovery_context();
        let stream_name = self.stream_name.clone();
        let delay = match self.attempt {
            0 => Duration::ZERO,
            n @ 1..=4 => Duration::from_millis(250 * u64::from(n)),
            _ => Duration::from_secs(2),
        };
        self.recreate = Some(Box::pin(async move {
            if !delay.is_zero() {
                rnats_core::runtime::sleep(delay).await;
            }
            delete_replaced(&context, &stream_name, &old).await;
            let deliver_subject = context.client.new_inbox();
            config.deliver_subject = Some(deliver_subject.clone());
            // Subscribe before creating, so the first messages find the subscription.
            let subscriber = context
                .client
                .subscribe_with_capacity(deliver_subject, QUEUE_MESSAGES, QUEUE_BYTES)
                .await
                .map_err(|e| {
                    ConsumerRecreateError::with_source(ConsumerRecreateErrorKind::Subscription, e)
                })?;
            create_resending(&context, &config, &stream_name)
                .await
                .map_err(|e| {
                    ConsumerRecreateError::with_source(ConsumerRecreateErrorKind::Recreate, e)
                })?;
            Ok(subscriber)
        }));
    }

    /// Follows the connection: no heartbeat is missed while it is down, and once it is back
    /// the consumer is recreated after the last message, as the server may have lost it.
    fn drive_events(&mut self, cx: &mut TaskContext<'_>) {
        while let Some(events) = self.events.as_mut() {
            match events.poll_next_unpin(cx) {
                Poll::Ready(Some(ConnectionEvent::Disconnected { .. })) => {
                    self.heartbeat.pause();
                    self.stale.pause();
                }
                Poll::Ready(Some(ConnectionEvent::Reconnected)) => {
                    self.heartbeat.resume();
                    self.stale.resume();
                    self.start_recreate();
                }
                Poll::Ready(Some(_)) => {}
                Poll::Ready(None) => self.events = None,
                Poll::Pending => break,
            }
        }
    }

    /// Whether a heartbeat's last consumer sequence matches what was delivered.
    fn heartbeat_in_step(&self, message: &rnats_core::Message) -> bool {
        let last = message
            .headers
            .as_ref()
            .and_then(|headers| headers.get_last(NATS_LAST_CONSUMER))
            .and_then(|value| value.as_str().parse::<u64>().ok());
        last.is_none_or(|last| last == self.consumer_sequence)
    }

    /// Checks a delivery's place: the next consumer sequence, or a gap.
    fn in_order(&mut self, message: &Message) -> Result<bool, OrderedError> {
        let info = message
            .info()
            .map_err(|e| OrderedError::with_source(OrderedErrorKind::Other, e))?;
        if info.consumer_sequence != self.consumer_sequence + 1 {
            return Ok(false);
        }
        self.consumer_sequence = info.consumer_sequence;
        self.stream_sequence = info.stream_sequence;
        Ok(true)
    }
}

impl Ordered {
    /// Replaces the consumer, or ends the stream while draining: `None` to go on.
    fn recreate_or_end(&mut self) -> Option<Poll<Option<Result<Message, OrderedError>>>> {
        if self.draining {
            self.subscriber = None;
            return Some(Poll::Ready(None));
        }
        self.start_recreate();
        None
    }
}

impl Drop for Ordered {
    /// Deletes the consumer in use, in the background (see `recreate::delete_when_dropped`):
    /// one this stream made again, or the ephemeral one it started with. A durable consumer
    /// read as an ordered one (`get_consumer::<OrderedConfig>`) is left as it is. Dropped
    /// while a recreation is under way, the one deleted is the replacement; the consumer it
    /// replaces, if the recreation had not deleted it yet, lapses at the server.
    fn drop(&mut self) {
        if self.serial > 0 || self.first_is_ephemeral {
            delete_when_dropped(&self.context, &self.stream_name, &self.consumer_name);
        }
    }
}

impl futures_util::Stream for Ordered {
    type Item = Result<Message, OrderedError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            this.drive_events(cx);
            if let Some(recreate) = this.recreate.as_mut() {
                let result = std::task::ready!(recreate.poll_unpin(cx));
                this.recreate = None;
                match result {
                    Ok(subscriber) => {
                        this.attempt = 0;
                        this.heartbeat.seen();
                        this.stale.restart();
                        this.subscriber = Some(subscriber);
                    }
                    // Not an item, as in async-nats: the attempts go on (backing off) until
                    // one succeeds, and the caller sees the next message when it comes.
                    Err(error) => {
                        tracing::debug!(%error, attempt = this.attempt, "recreating an ordered consumer failed");
                        this.attempt = this.attempt.saturating_add(1);
                        this.start_recreate();
                        continue;
                    }
                }
            }
            if let Some(error) = this.control.drive(&this.context, cx) {
                return Poll::Ready(Some(Err(OrderedError::with_source(
                    OrderedErrorKind::Other,
                    error,
                ))));
            }
            let Some(subscriber) = this.subscriber.as_mut() else {
                if let Some(end) = this.recreate_or_end() {
                    return end;
                }
                continue;
            };
            let message = match subscriber.poll_next_unpin(cx) {
                Poll::Ready(Some(message)) => message,
                Poll::Ready(None) => return Poll::Ready(None),
                // The subscription's queue overflowed (a slow consumer): what it dropped may
                // be the tail of the deliveries, which no later gap would reveal, or a flow
                // control request, whose answer the server then waits for until its next
                // idle heartbeat (5 s). Everything queued before the drop has been taken by
                // now; go on after it at once.
                Poll::Pending if subscriber.dropped() > 0 => {
                    tracing::debug!(
                        dropped = subscriber.dropped(),
                        "an ordered consumer's subscription dropped messages; recreating it"
                    );
                    if let Some(end) = this.recreate_or_end() {
                        return end;
                    }
                    continue;
                }
                Poll::Pending if this.heartbeat.poll_missed(cx) => {
                    this.start_recreate();
                    continue;
                }
                Poll::Pending
                    if !this.draining
                        && this
                            .stale
                            .poll_behind(cx, &this.context, this.stream_sequence) =>
                {
                    this.start_recreate();
                    continue;
                }
                Poll::Pending => return Poll::Pending,
            };
            this.heartbeat.seen();
            match Control::classify(&message) {
                Delivery::Message => {
                    let context = this.context.clone();
                    let message = Message { message, context };
                    match this.in_order(&message) {
                        Ok(true) => {
                            this.stale.delivered();
                            return Poll::Ready(Some(Ok(message)));
                        }
                        Ok(false) => {
                            if let Some(end) = this.recreate_or_end() {
                                return end;
                            }
                        }
                        Err(error) => return Poll::Ready(Some(Err(error))),
                    }
                }
                // Nothing more comes to a drained inbox: flow control is owed nothing.
                Delivery::Control(_) if this.draining => {}
                Delivery::Control(reply) => {
                    // Flow control from a consumer about to be replaced is owed nothing.
                    if message.reply.is_none() && !this.heartbeat_in_step(&message) {
                        this.start_recreate();
                    } else {
                        this.control.queue(reply, None);
                    }
                }
                Delivery::Heartbeat if this.draining => {}
                Delivery::Heartbeat if !this.heartbeat_in_step(&message) => this.start_recreate(),
                Delivery::Heartbeat => {}
                Delivery::ConsumerDeleted => {
                    if let Some(end) = this.recreate_or_end() {
                        return end;
                    }
                }
            }
        }
    }
}
