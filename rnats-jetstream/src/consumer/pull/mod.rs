//! Pull consumers: the client asks for messages with pull requests (ADR-13) to
//! `CONSUMER.MSG.NEXT.<stream>.<consumer>`, one at a time ([`fetch`](Consumer::fetch),
//! [`batch`](Consumer::batch)) or continuously ([`messages`](Consumer::messages), ADR-37).

pub(crate) mod batch;
mod builders;
mod config;
mod errors;
pub(crate) mod lost;
pub(crate) mod ordered;
pub(crate) mod pending;
pub(crate) mod recovery;
mod stream;

use std::time::Duration;

use bytes::Bytes;
use rnats_core::Subject;

pub use self::batch::{Batch, Sequence};
pub use self::builders::{
    BatchBuilder, BatchConfig, FetchBuilder, InvalidThreshold, StreamBuilder,
};
pub use self::config::{Config, OrderedConfig};
pub use self::errors::{
    BatchError, BatchErrorKind, BatchRequestError, BatchRequestErrorKind, ConsumerRecreateError,
    ConsumerRecreateErrorKind, MessagesError, MessagesErrorKind, OrderedError, OrderedErrorKind,
};
pub use self::ordered::Ordered;
pub use self::recovery::Recoveries;
pub use self::stream::Stream;
use super::{Consumer, StreamError};
use crate::consumer_errors::ConsumerError;

/// Messages per pull request of `messages()` when not set.
const DEFAULT_BATCH: usize = 200;
/// `batch` of each request when only a byte limit is set (ADR-37): the bytes decide.
const BYTES_ONLY_BATCH: usize = 1_000_000;
/// How long a pull request of `messages()` waits on the server when not set.
const DEFAULT_EXPIRES: Duration = Duration::from_secs(30);
/// The idle heartbeat of `messages()`.
const DEFAULT_IDLE_HEARTBEAT: Duration = Duration::from_secs(15);
/// The batch of an ordered consumer's pull requests.
const ORDERED_BATCH: usize = 500;

impl Consumer<Config> {
    /// A continuous stream of the consumer's messages (ADR-37), with 200 messages per pull
    /// request, 30 s expiry and 15 s idle heartbeats (within the consumer's limits).
    pub async fn messages(&self) -> Result<Stream, StreamError> {
        self.stream()
            .heartbeat(DEFAULT_IDLE_HEARTBEAT)
            .messages()
            .await
    }

    /// A builder for a continuous message stream with other settings.
    pub fn stream(&self) -> StreamBuilder<'_> {
        StreamBuilder::new(self)
    }

    /// Sends one pull request with replies to `inbox` (for callers with their own
    /// subscription).
    pub async fn request_batch<I: Into<BatchConfig>>(
        &self,
        batch: I,
        inbox: Subject,
    ) -> Result<(), BatchRequestError> {
        let payload = serde_json::to_vec(&batch.into()).map_err(|error| {
            BatchRequestError::with_source(BatchRequestErrorKind::Serialize, error)
        })?;
        self.context
            .client
            .publish_with_reply(self.next_subject(), inbox, Bytes::from(payload))
            .await
            .map_err(|error| BatchRequestError::with_source(BatchRequestErrorKind::Publish, error))
    }

    /// A builder for one pull request that returns at once with what is there (`no_wait`).
    pub fn fetch(&self) -> FetchBuilder<'_> {
        FetchBuilder::new(self)
    }

    /// A builder for one pull request that waits for its messages (up to its expiry).
    pub fn batch(&self) -> BatchBuilder<'_> {
        BatchBuilder::new(self)
    }

    /// Batches of `batch` messages, one pull request each, for as long as it is read.
    pub fn sequence(&self, batch: usize) -> Result<Sequence, BatchError> {
        self.check_one_shot()?;
        let request = BatchConfig {
            batch,
            expires: Some(Duration::from_secs(60)),
            ..Default::default()
        };
        Ok(Sequence::new(self.clone(), request))
    }

    /// `<prefix>.CONSUMER.MSG.NEXT.<stream>.<consumer>`.
    pub(crate) fn next_subject(&self) -> String {
        format!(
            "{}.CONSUMER.MSG.NEXT.{}.{}",
            self.context.prefix(),
            self.info.stream_name,
            self.info.name
        )
    }

    /// One-shot pulls would take a pin they never renew and hold every other client of a
    /// pinned-client group on standby until the pin times out, so they are refused, as
    /// async-nats refuses them, unless the builder's `pinned()` keeps the pin on the handle.
    pub(crate) fn check_one_shot(&self) -> Result<(), BatchError> {
        match self.config.priority_policy {
            super::PriorityPolicy::PinnedClient => {
                Err(BatchError::new(BatchErrorKind::PinnedClient))
            }
            _ => Ok(()),
        }
    }

    /// The pin id the server gave this handle's fetches and batches (ADR-42 `PinnedClient`
    /// policy), if it holds one; clones of the handle share it. Continuous streams keep
    /// their own.
    pub fn pin_id(&self) -> Option<String> {
        self.pin.lock().ok().and_then(|pin| pin.clone())
    }

    /// Unpins the client pinned in priority group `group` (ADR-42): the next pull of any
    /// client in the group gets the pin. This handle forgets its own pin too.
    pub async fn unpin<G: AsRef<str>>(&self, group: G) -> Result<(), ConsumerError> {
        let stream = crate::stream::Stream {
            info: (),
            context: self.context.clone(),
            name: self.info.stream_name.clone(),
        };
        stream
            .unpin_consumer(&self.info.name, group.as_ref())
            .await?;
        if let Ok(mut pin) = self.pin.lock() {
            *pin = None;
        }
        Ok(())
    }
}

/// `batch`, at most the consumer's `max_batch` (if it has one).
fn clamp_batch(batch: usize, max_batch: i64) -> usize {
    match usize::try_from(max_batch) {
        Ok(max) if max > 0 => batch.min(max),
        _ => batch,
    }
}

/// `expires`, at most the consumer's `max_expires` (if it has one).
fn clamp_expires(expires: Duration, max_expires: Duration) -> Duration {
    if max_expires.is_zero() {
        expires
    } else {
        expires.min(max_expires)
    }
}

/// A heartbeat the server accepts for `expires`: at most half of it (ADR-37 also caps it at
/// 30 s and floors it at 500 ms where the expiry allows).
fn clamp_heartbeat(heartbeat: Duration, expires: Duration) -> Duration {
    heartbeat.min(expires / 2).min(Duration::from_secs(30))
}
