//! The ordered pull consumer (ADR-17) for the blocking context: every message of a stream
//! (or of its filter) once, in order, without acks, read with pull requests.
//!
//! It reads through the blocking [`Messages`], which already pulls again after a reconnect,
//! a leader change or no responders. What `Messages` cannot mend is a consumer that lost
//! deliveries or is gone: a gap in the delivery sequence, missed heartbeats, the consumer
//! deleted, or nobody serving it (an ordered consumer is R1 and in memory, so a restarted
//! server has none). Then the consumer is made again from the stream sequence after the last
//! one delivered, and the old one deleted, as the async [`Ordered`](crate::consumer::pull::Ordered)
//! does.

use std::time::{Duration, Instant};

use super::consumer::Consumer;
use super::context::Context;
use super::message::Message;
use super::messages::Messages;
use crate::consumer::StreamError;
use crate::consumer::pull::ordered::ordered_request;
use crate::consumer::pull::recovery::retry_wait;
use crate::consumer::pull::{
    Config as PullConfig, MessagesError, MessagesErrorKind, OrderedConfig, OrderedError,
    OrderedErrorKind, Recoveries,
};
use crate::consumer::recreate::{first_start, restart_at};

impl Consumer<OrderedConfig> {
    /// The consumer's messages, in stream order, each once, the consumer made again as
    /// needed: an iterator that waits for the next message as long as it takes;
    /// [`OrderedPull::next_timeout`] waits a bounded time. A consumer made again starts
    /// after the last message delivered; before the first, where this one started.
    ///
    /// ```no_run
    /// # use rnats_jetstream::blocking::Stream;
    /// # fn run(stream: Stream) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::consumer::pull::OrderedConfig;
    /// let consumer = stream.create_consumer(OrderedConfig::default())?;
    /// for message in consumer.messages()? {
    ///     println!("{:?}", message?.payload);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn messages(&self) -> Result<OrderedPull, StreamError> {
        let info = self.cached_info().clone();
        let mut config = self.config().clone();
        // A consumer made again before the first delivery starts where this one did.
        config.deliver_policy = first_start(config.deliver_policy, &info);
        let messages = as_pull(self)
            .messages_with(ordered_request(&info))?
            .eager_no_responders();
        Ok(OrderedPull {
            context: self.context().clone(),
            stream: info.stream_name.clone(),
            config,
            consumer: info.name.clone(),
            name_prefix: info.name,
            serial: 0,
            first_is_ephemeral: info.config.durable_name.is_none(),
            messages: Some(messages),
            consumer_sequence: 0,
            stream_sequence: 0,
            recovered: Recoveries::default(),
            failed_recreations: 0,
            retry_at: None,
            closed: false,
        })
    }
}

/// The same consumer handled as a pull consumer, to read it with [`Messages`].
fn as_pull(consumer: &Consumer<OrderedConfig>) -> Consumer<PullConfig> {
    Consumer::from_parts(
        consumer.context().clone(),
        PullConfig::from(consumer.config().clone()),
        consumer.cached_info().clone(),
    )
}

/// An ordered pull consumer's messages, from [`Consumer<OrderedConfig>::messages`]: each
/// once, in stream order, across lost deliveries, reconnects and restarts. A consumer that
/// cannot be made again (the server still recovering) is tried again after 250 ms, doubling
/// to 2 s, without an error item, as the async ordered consumer does; each try waits up to
/// the context's timeout. Dropping it deletes the consumer it reads (unless the first one
/// was a durable).
pub struct OrderedPull {
    context: Context,
    stream: String,
    /// What each consumer is made with; its start and name change when it is made again.
    config: OrderedConfig,
    /// The consumer now delivering.
    consumer: String,
    /// Consumers made again are named `<prefix>_<serial>`.
    name_prefix: String,
    serial: u64,
    /// Whether the first consumer is ephemeral, so that it goes when this is dropped.
    first_is_ephemeral: bool,
    /// The current consumer's messages; `None` after a failed recreation, until the next
    /// call makes it again.
    messages: Option<Messages>,
    /// The last delivery sequence seen from the current consumer (0: none yet).
    consumer_sequence: u64,
    /// The stream sequence of the last message delivered (0: none yet).
    stream_sequence: u64,
    /// What the consumers replaced so far recovered from, and the recreations.
    recovered: Recoveries,
    /// Recreations that failed in a row.
    failed_recreations: u32,
    /// No recreation before this (after one failed).
    retry_at: Option<Instant>,
    /// The client closed: no more messages.
    closed: bool,
}

impl OrderedPull {
    /// The next message, waiting up to `timeout`: `Ok(None)` if none came in time or the
    /// client closed.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Message>, OrderedError> {
        self.next_message(Instant::now().checked_add(timeout))
    }

    /// Whether the client closed, which ends the messages.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// What this iteration recovered from without an error item, recreations included.
    pub fn recoveries(&self) -> Recoveries {
        let current = self.messages.as_ref().map(Messages::recoveries);
        self.recovered.add(current.unwrap_or_default())
    }

    /// The next message, waiting until `deadline` (for ever with none): `Ok(None)` once it
    /// passed or the client closed.
    fn next_message(&mut self, deadline: Option<Instant>) -> Result<Option<Message>, OrderedError> {
        while !self.closed {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Ok(None);
            }
            let Some(messages) = self.messages.as_mut() else {
                self.recreate_when_due(deadline);
                continue;
            };
            let message = match messages.next_until(deadline) {
                None => {
                    // The subscription ended: the client closed.
                    self.closed = true;
                    return Ok(None);
                }
                Some(Ok(None)) => return Ok(None),
                Some(Ok(Some(message))) => message,
                Some(Err(error)) if lost(&error) => {
                    self.replace();
                    continue;
                }
                Some(Err(error)) => return Err(ordered(error)),
            };
            let info = message
                .info()
                .map_err(|e| OrderedError::with_source(OrderedErrorKind::Other, e))?;
            let (delivery, sequence) = (info.consumer_sequence, info.stream_sequence);
            if delivery != self.consumer_sequence + 1 {
                // A delivery went missing; an older one comes from a consumer replaced since.
                if delivery > self.consumer_sequence + 1 {
                    self.replace();
                }
                continue;
            }
            self.consumer_sequence = delivery;
            self.stream_sequence = sequence;
            return Ok(Some(message));
        }
        Ok(None)
    }

    /// Lets the current consumer go (asking the server to delete it) and makes the next one
    /// at once.
    fn replace(&mut self) {
        if let Some(old) = self.messages.take() {
            self.recovered = self.recovered.add(old.recoveries());
            self.delete_current();
        }
        self.retry_at = None;
        self.recreate_when_due(None);
    }

    /// Makes the next consumer once a failed try's backoff is over, waiting for it (not past
    /// `deadline`).
    fn recreate_when_due(&mut self, deadline: Option<Instant>) {
        if let Some(at) = self.retry_at {
            let until = deadline.map_or(at, |deadline| deadline.min(at));
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            if Instant::now() < at {
                return;
            }
        }
        match self.recreate() {
            Ok(()) => {
                self.failed_recreations = 0;
                self.retry_at = None;
            }
            Err(_) => {
                let wait = retry_wait(self.failed_recreations, Duration::ZERO);
                self.failed_recreations = self.failed_recreations.saturating_add(1);
                self.retry_at = Instant::now().checked_add(wait);
            }
        }
    }

    /// Makes a consumer that starts after the last message delivered, as the current one.
    fn recreate(&mut self) -> Result<(), OrderedError> {
        // A new name for every try: a try whose answer was lost may have made its consumer.
        self.serial += 1;
        let mut config = self.config.clone();
        config.deliver_policy = restart_at(config.deliver_policy, self.stream_sequence);
        config.name = Some(format!("{}_{}", self.name_prefix, self.serial));
        let consumer = self
            .context
            .create_consumer_on_stream(config, self.stream.as_str())
            .map_err(|e| OrderedError::with_source(OrderedErrorKind::Recreate, e))?;
        let info = consumer.cached_info().clone();
        self.consumer = info.name.clone();
        let messages = match as_pull(&consumer).messages_with(ordered_request(&info)) {
            Ok(messages) => messages.eager_no_responders(),
            Err(error) => {
                // Made but not read: no reason to keep it until its inactivity threshold.
                self.delete_current();
                return Err(OrderedError::with_source(OrderedErrorKind::Recreate, error));
            }
        };
        self.consumer_sequence = 0;
        self.messages = Some(messages);
        self.recovered.recreations += 1;
        Ok(())
    }

    /// Asks the server to delete the consumer now read, without waiting for the answer: it
    /// may be gone already, and one whose server is down goes after its inactivity
    /// threshold anyway. The first consumer stays when it is a durable.
    fn delete_current(&self) {
        if self.serial == 0 && !self.first_is_ephemeral {
            return;
        }
        self.context
            .delete_consumer_unanswered(&self.stream, &self.consumer);
    }
}

/// Whether an error item of the current consumer's messages means deliveries were lost or
/// the consumer is gone, which making it again mends.
fn lost(error: &MessagesError) -> bool {
    matches!(
        error.kind(),
        MessagesErrorKind::MissingHeartbeat
            | MessagesErrorKind::ConsumerDeleted
            | MessagesErrorKind::NoResponders
    )
}

/// Another error item of the current consumer's messages, as the ordered consumer's.
fn ordered(error: MessagesError) -> OrderedError {
    let kind = match error.kind() {
        MessagesErrorKind::Pull => OrderedErrorKind::Pull,
        MessagesErrorKind::PushBasedConsumer => OrderedErrorKind::PushBasedConsumer,
        MessagesErrorKind::RequestLimitExceeded => OrderedErrorKind::RequestLimitExceeded,
        _ => OrderedErrorKind::Other,
    };
    OrderedError::with_source(kind, error)
}

impl Iterator for OrderedPull {
    type Item = Result<Message, OrderedError>;

    fn next(&mut self) -> Option<Self::Item> {
        // No deadline: only the client closing ends the wait.
        self.next_message(None).transpose()
    }
}

impl Drop for OrderedPull {
    fn drop(&mut self) {
        if self.messages.is_some() {
            self.delete_current();
        }
    }
}

impl std::fmt::Debug for OrderedPull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderedPull")
            .field("consumer", &self.consumer)
            .field("stream_sequence", &self.stream_sequence)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lost_deliveries_or_a_gone_consumer_are_mended_by_making_it_again() {
        for kind in [
            MessagesErrorKind::MissingHeartbeat,
            MessagesErrorKind::ConsumerDeleted,
            MessagesErrorKind::NoResponders,
        ] {
            assert!(lost(&MessagesError::new(kind)), "{kind:?}");
        }
        for kind in [
            MessagesErrorKind::Pull,
            MessagesErrorKind::PushBasedConsumer,
            MessagesErrorKind::RequestLimitExceeded,
            MessagesErrorKind::Other,
        ] {
            assert!(!lost(&MessagesError::new(kind)), "{kind:?}");
            assert_ne!(
                ordered(MessagesError::new(kind)).kind(),
                OrderedErrorKind::Recreate
            );
        }
    }
}
