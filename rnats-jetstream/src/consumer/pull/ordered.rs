//! The ordered pull consumer (ADR-17): messages in stream order without gaps, kept so by
//! recreating the consumer from the last stream sequence seen whenever a delivery goes
//! missing, heartbeats stop, the consumer disappears, or it idles while the stream leader
//! holds a message it owes (its replica fell behind; see `consumer/stale.rs`). The create is
//! sent again every second while unanswered (see `consumer/recreate.rs`), and a recreation
//! the server refuses is retried with a backoff until one succeeds.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::UnsubscribeError;

use super::builders::BatchConfig;
use super::errors::ordered_error;
use super::recovery::Recoveries;
use super::stream::Stream;
use super::{
    Config, ConsumerRecreateError, ConsumerRecreateErrorKind, DEFAULT_EXPIRES,
    DEFAULT_IDLE_HEARTBEAT, MessagesErrorKind, ORDERED_BATCH, OrderedConfig, OrderedError,
    OrderedErrorKind, clamp_batch, clamp_expires, clamp_heartbeat,
};
use crate::consumer::recreate::{
    create_resending, delete_replaced, delete_when_dropped, first_start, restart_at,
};
use crate::consumer::stale::StaleCheck;
use crate::consumer::{Consumer, Info, IntoConsumerConfig, StreamError};
use crate::context::Context;
use crate::message::Message;

impl Consumer<OrderedConfig> {
    /// The consumer's messages, in order, recreating the consumer as needed. A recreation
    /// starts after the last message delivered; before the first, where this consumer
    /// started, judged from its cached info (see `Consumer::cached_info`), which for a
    /// consumer just made is the server's answer to the create.
    pub async fn messages(self) -> Result<Ordered, StreamError> {
        let stream = Stream::start(&self.as_pull(), ordered_request(&self.info))
            .await?
            .eager_no_responders();
        let mut config = self.config;
        // A recreation before the first delivery starts where this consumer did.
        config.deliver_policy = first_start(config.deliver_policy, &self.info);
        let server_config = config.clone().into_consumer_config();
        let stale = StaleCheck::for_consumer(self.info.stream_name.clone(), &server_config);
        Ok(Ordered {
            context: self.context,
            stream_name: self.info.stream_name,
            consumer_name: self.info.name.clone(),
            name_prefix: self.info.name,
            serial: 0,
            // A durable given as an ordered consumer stays; see `Drop`.
            first_is_ephemeral: self.info.config.durable_name.is_none(),
            config,
            stream: Some(stream),
            recreate: None,
            attempt: 0,
            consumer_sequence: 0,
            stream_sequence: 0,
            limit_exceeded: false,
            recovered: Recoveries::default(),
            draining: false,
            stale,
        })
    }

    fn as_pull(&self) -> Consumer<Config> {
        Consumer::new(
            Config::from(self.config.clone()),
            self.info.clone(),
            self.context.clone(),
        )
    }
}

/// The pull requests of an ordered consumer, within its limits.
pub(crate) fn ordered_request(info: &Info) -> BatchConfig {
    let expires = clamp_expires(DEFAULT_EXPIRES, info.config.max_expires);
    BatchConfig {
        batch: clamp_batch(ORDERED_BATCH, info.config.max_batch),
        expires: Some(expires),
        idle_heartbeat: clamp_heartbeat(DEFAULT_IDLE_HEARTBEAT, expires),
        ..Default::default()
    }
}

/// An ordered consumer's messages; from [`Consumer<OrderedConfig>::messages`].
pub struct Ordered {
    context: Context,
    stream_name: String,
    config: OrderedConfig,
    /// The consumer in use now.
    consumer_name: String,
    /// Recreated consumers are named `<prefix>_<serial>`.
    name_prefix: String,
    serial: u64,
    /// Whether the consumer the stream started with is ephemeral, so it goes when the stream
    /// is dropped.
    first_is_ephemeral: bool,
    stream: Option<Stream>,
    recreate: Option<BoxFuture<'static, Result<Stream, ConsumerRecreateError>>>,
    /// Failed recreations in a row.
    attempt: u32,
    consumer_sequence: u64,
    stream_sequence: u64,
    /// A request over the limits right after recreating is not going to get better.
    limit_exceeded: bool,
    /// What the consumers replaced so far recovered from, and the recreations.
    recovered: Recoveries,
    /// Draining: the stream ends after the current consumer's last message, and a gap
    /// ends it too (nothing is recreated to fill it).
    draining: bool,
    /// Notices a consumer on a replica left behind (see `consumer/stale.rs`).
    stale: StaleCheck,
}

impl Ordered {
    /// What this stream recovered from without an error item, recreations included.
    pub fn recoveries(&self) -> Recoveries {
        let current = self.stream.as_ref().map(Stream::recoveries);
        self.recovered.add(current.unwrap_or_default())
    }

    /// Stops gracefully, as [`Stream::drain`] does: no more pull requests, and the stream
    /// ends with `None` after the messages the server already sent. A recreation under way
    /// is abandoned, and a gap found while draining ends the stream rather than recreating
    /// the consumer. Dropping the stream deletes the consumer in use.
    pub async fn drain(&mut self) -> Result<(), UnsubscribeError> {
        self.draining = true;
        self.recreate = None;
        match self.stream.as_mut() {
            Some(stream) => stream.drain().await,
            None => Ok(()),
        }
    }

    /// Replaces the consumer with one that starts after the last message delivered; while
    /// draining, only lets the current one go.
    fn start_recreate(&mut self) {
        self.stale.restart();
        if let Some(stream) = self.stream.take() {
            self.recovered = self.recovered.add(stream.recoveries());
        }
        if self.draining {
            return;
        }
        self.recovered.recreations += 1;
        self.consumer_sequence = 0;
        self.serial += 1;
        let name = format!("{}_{}", self.name_prefix, self.serial);
        let old = std::mem::replace(&mut self.consumer_name, name.clone());
        let deliver_policy = restart_at(self.config.deliver_policy, self.stream_sequence);
        let config = OrderedConfig {
            name: Some(name),
            deliver_policy,
            ..self.config.clone()
        };
        // Bounded even when nothing else bounds requests: a lost create is sent again.
        let context = self.context.recovery_context();
        let stream_name = self.stream_name.clone();
        let delay = backoff(self.attempt);
        self.recreate = Some(Box::pin(async move {
            if !delay.is_zero() {
                rnats_core::runtime::sleep(delay).await;
            }
            delete_replaced(&context, &stream_name, &old).await;
            let consumer = create_resending(&context, &config, &stream_name)
                .await
                .map_err(|e| {
                    ConsumerRecreateError::with_source(ConsumerRecreateErrorKind::Recreate, e)
                })?;
            // The consumer's own requests (acks, info) are bounded as usual.
            let consumer = Consumer::new(consumer.config, consumer.info, context);
            Stream::start(&consumer.as_pull(), ordered_request(&consumer.info))
                .await
                .map(Stream::eager_no_responders)
                .map_err(|e| {
                    ConsumerRecreateError::with_source(ConsumerRecreateErrorKind::Recreate, e)
                })
        }));
    }

    /// Checks a delivery's place: the next consumer sequence, or a gap.
    fn handle_message(&mut self, message: &Message) -> Result<bool, OrderedError> {
        let info = message
            .info()
            .map_err(|e| OrderedError::with_source(OrderedErrorKind::Other, e))?;
        if info.consumer_sequence != self.consumer_sequence + 1 {
            return Ok(false);
        }
        self.consumer_sequence = info.consumer_sequence;
        self.stream_sequence = info.stream_sequence;
        self.limit_exceeded = false;
        Ok(true)
    }
}

/// The wait before recreation attempt `attempt` (0 for the first): a few quick retries, then
/// one every 2 s, so that a consumer comes back soon after an election ends (issue 32).
fn backoff(attempt: u32) -> Duration {
    match attempt {
        0 => Duration::ZERO,
        1..=4 => Duration::from_millis(250 * u64::from(attempt)),
        _ => Duration::from_secs(2),
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
            if let Some(recreate) = this.recreate.as_mut() {
                let result = std::task::ready!(recreate.poll_unpin(cx));
                this.recreate = None;
                match result {
                    Ok(stream) => {
                        this.attempt = 0;
                        this.stale.restart();
                        this.stream = Some(stream);
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
            let Some(stream) = this.stream.as_mut() else {
                if this.draining {
                    return Poll::Ready(None);
                }
                this.start_recreate();
                continue;
            };
            let next = match stream.poll_next_unpin(cx) {
                Poll::Ready(next) => next,
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
            match next {
                None => return Poll::Ready(None),
                Some(Ok(message)) => match this.handle_message(&message) {
                    Ok(true) => {
                        this.stale.delivered();
                        return Poll::Ready(Some(Ok(message)));
                    }
                    Ok(false) => this.start_recreate(),
                    Err(error) => return Poll::Ready(Some(Err(error))),
                },
                Some(Err(error)) => match error.kind() {
                    MessagesErrorKind::MissingHeartbeat
                    | MessagesErrorKind::ConsumerDeleted
                    | MessagesErrorKind::NoResponders => this.start_recreate(),
                    // Recreating reads the consumer's limits afresh; a second time in a row
                    // it is the user's setting.
                    MessagesErrorKind::RequestLimitExceeded if !this.limit_exceeded => {
                        this.limit_exceeded = true;
                        this.start_recreate();
                    }
                    _ => return Poll::Ready(Some(Err(ordered_error(error)))),
                },
            }
        }
    }
}
