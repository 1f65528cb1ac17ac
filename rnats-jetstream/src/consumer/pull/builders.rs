//! Pull requests (ADR-13) and the builders of the three ways to send them: [`FetchBuilder`]
//! (one request, no waiting), [`BatchBuilder`] (one request that waits) and
//! [`StreamBuilder`] (continuous, ADR-37). The builders share one set of options.

use std::time::Duration;

use serde::Serialize;

use super::batch::Batch;
use super::pending::Pending;
use super::stream::{Heartbeats, Stream};
use super::{
    BYTES_ONLY_BATCH, BatchError, Config, DEFAULT_BATCH, DEFAULT_EXPIRES, clamp_batch,
    clamp_expires, clamp_heartbeat,
};
use crate::consumer::config::is_default;
use crate::consumer::{Consumer, StreamError, StreamErrorKind};

/// One pull request, as sent to `CONSUMER.MSG.NEXT`.
#[derive(Debug, Default, Serialize, Clone, PartialEq, Eq)]
pub struct BatchConfig {
    /// Messages to deliver at most.
    pub batch: usize,
    /// How long the server keeps the request open; `None` for as long as it likes.
    #[serde(skip_serializing_if = "Option::is_none", with = "crate::nanos::option")]
    pub expires: Option<Duration>,
    /// Answer at once with what is there (404 if nothing) instead of waiting.
    #[serde(skip_serializing_if = "is_default")]
    pub no_wait: bool,
    /// Bytes to deliver at most (0: no limit).
    #[serde(skip_serializing_if = "is_default")]
    pub max_bytes: usize,
    /// How often the server sends a heartbeat while the request is open (0: never).
    #[serde(with = "crate::nanos", skip_serializing_if = "is_default")]
    pub idle_heartbeat: Duration,
    /// Overflow policy: deliver only while the consumer has at least this many pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_pending: Option<usize>,
    /// Overflow policy: deliver only while at least this many acks are outstanding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ack_pending: Option<usize>,
    /// The priority group the request belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Prioritized policy: lower numbers are served first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<usize>,
}

/// A pull request with the client's pin id (`PinnedClient` policy) next to its fields.
#[derive(Serialize)]
pub(crate) struct PullRequest<'a> {
    #[serde(flatten)]
    pub(crate) batch: &'a BatchConfig,
    #[serde(rename = "id", skip_serializing_if = "Option::is_none")]
    pub(crate) pin_id: Option<&'a str>,
}

/// The options every builder has.
#[derive(Debug, Clone, Default)]
struct Options {
    batch: Option<usize>,
    max_bytes: usize,
    heartbeat: Option<Duration>,
    expires: Option<Duration>,
    min_pending: Option<usize>,
    min_ack_pending: Option<usize>,
    group: Option<String>,
    priority: Option<usize>,
}

impl Options {
    fn request(self, batch: usize, expires: Option<Duration>, no_wait: bool) -> BatchConfig {
        BatchConfig {
            batch,
            expires,
            no_wait,
            max_bytes: self.max_bytes,
            idle_heartbeat: self.heartbeat.unwrap_or_default(),
            min_pending: self.min_pending,
            min_ack_pending: self.min_ack_pending,
            group: self.group,
            priority: self.priority,
        }
    }
}

/// Defines the setters the builders share.
macro_rules! pull_options {
    ($builder:ident) => {
        impl<'a> $builder<'a> {
            /// Makes the consumer deliver only while it has at least `min_pending` messages
            /// pending (`Overflow` priority policy).
            pub fn min_pending(mut self, min_pending: usize) -> Self {
                self.options.min_pending = Some(min_pending);
                self
            }

            /// Makes the consumer deliver only while at least `min_ack_pending` acks are
            /// outstanding (`Overflow` priority policy).
            pub fn min_ack_pending(mut self, min_ack_pending: usize) -> Self {
                self.options.min_ack_pending = Some(min_ack_pending);
                self
            }

            /// The priority group the requests belong to.
            pub fn group<T: Into<String>>(mut self, group: T) -> Self {
                self.options.group = Some(group.into());
                self
            }

            /// How often the server sends a heartbeat while a request is open.
            pub fn heartbeat(mut self, heartbeat: Duration) -> Self {
                self.options.heartbeat = Some(heartbeat);
                self
            }

            /// How long the server keeps a request open.
            pub fn expires(mut self, expires: Duration) -> Self {
                self.options.expires = Some(expires);
                self
            }
        }
    };
}

/// A continuous message stream's settings; from [`Consumer::stream`].
///
/// Without [`heartbeat`](Self::heartbeat), the pull requests still ask for idle heartbeats
/// (ADR-37: half the expiry, at most 30 s, as nats.go does), but a missed one is only acted
/// on, never reported: the stream pulls again quietly, as async-nats' stream without
/// heartbeats would after the request's expiry. A heartbeat set here is reported when
/// missed ([`MissingHeartbeat`](super::MessagesErrorKind::MissingHeartbeat)).
#[derive(Debug, Clone)]
pub struct StreamBuilder<'a> {
    consumer: &'a Consumer<Config>,
    options: Options,
    threshold_messages: Option<usize>,
    threshold_bytes: Option<usize>,
    end_if_missing: bool,
}

pull_options!(StreamBuilder);

impl<'a> StreamBuilder<'a> {
    /// Settings for a stream of `consumer`'s messages, with the defaults.
    pub fn new(consumer: &'a Consumer<Config>) -> StreamBuilder<'a> {
        StreamBuilder {
            consumer,
            options: Options::default(),
            threshold_messages: None,
            threshold_bytes: None,
            end_if_missing: false,
        }
    }

    /// Bytes per pull request; the buffer is refilled when half of them arrived (see
    /// [`threshold_bytes`](Self::threshold_bytes)). Without
    /// [`max_messages_per_batch`](Self::max_messages_per_batch), only bytes count.
    pub fn max_bytes_per_batch(mut self, max_bytes: usize) -> Self {
        self.options.max_bytes = max_bytes;
        self
    }

    /// Messages per pull request (default 200); the buffer is refilled when half of them
    /// arrived (see [`threshold_messages`](Self::threshold_messages)).
    pub fn max_messages_per_batch(mut self, batch: usize) -> Self {
        self.options.batch = Some(batch);
        self
    }

    /// The next pull request goes out once at most this many messages asked for are still
    /// to come (ADR-37 `threshold_messages`, nats.go's `PullThresholdMessages`; an rnats
    /// extension). Default: half the messages per request. Must be below the messages per
    /// request, or [`messages`](Self::messages) fails with
    /// [`StreamErrorKind::Other`](crate::consumer::StreamErrorKind::Other) and an
    /// [`InvalidThreshold`] source.
    pub fn threshold_messages(mut self, messages: usize) -> Self {
        self.threshold_messages = Some(messages);
        self
    }

    /// The next pull request goes out once at most this many bytes asked for are still to
    /// come (ADR-37 `threshold_bytes`, nats.go's `PullThresholdBytes`; an rnats extension).
    /// Default: half the bytes per request. Needs
    /// [`max_bytes_per_batch`](Self::max_bytes_per_batch) and must be below it, or
    /// [`messages`](Self::messages) fails as for
    /// [`threshold_messages`](Self::threshold_messages).
    pub fn threshold_bytes(mut self, bytes: usize) -> Self {
        self.threshold_bytes = Some(bytes);
        self
    }

    /// Prioritized policy: lower numbers are served first.
    pub fn priority(mut self, priority: usize) -> Self {
        self.options.priority = Some(priority);
        self
    }

    /// Ends the stream when its consumer is gone for good, as it ends when the consumer is
    /// deleted under a waiting request (an rnats extension, nats.js's
    /// `abort_on_missing_resource`). Without it, a stream whose consumer was deleted while
    /// no request waited (the connection was down, or the server restarted without it; an
    /// ephemeral consumer past its `inactive_threshold`) goes on asking, as async-nats' and
    /// nats.go's do, and delivers again if the consumer is made anew under the same name.
    ///
    /// With it, when nobody serves two requests in a row (and again after four, eight...),
    /// the stream asks `$JS.API.CONSUMER.INFO`; if the server answers that the consumer or
    /// its stream does not exist, the stream yields
    /// [`ConsumerDeleted`](super::MessagesErrorKind::ConsumerDeleted) and ends. A consumer
    /// whose leader is being elected is not missing: in a cluster only the meta leader
    /// answers so, and only for a consumer it has no record of.
    pub fn end_if_consumer_missing(mut self) -> Self {
        self.end_if_missing = true;
        self
    }

    /// Subscribes and starts pulling.
    pub async fn messages(self) -> Result<Stream, StreamError> {
        let limits = &self.consumer.info.config;
        let default_batch = match self.options.max_bytes {
            0 => DEFAULT_BATCH,
            _ => BYTES_ONLY_BATCH,
        };
        let batch = self
            .options
            .batch
            .unwrap_or_else(|| clamp_batch(default_batch, limits.max_batch))
            .max(1);
        let expires = self
            .options
            .expires
            .unwrap_or_else(|| clamp_expires(DEFAULT_EXPIRES, limits.max_expires));
        let (heartbeat, heartbeats) = match (self.options.heartbeat, self.options.expires) {
            // Both chosen by the user: the server judges the pair.
            (Some(heartbeat), Some(_)) => (heartbeat, Heartbeats::Reported),
            (Some(heartbeat), None) => (clamp_heartbeat(heartbeat, expires), Heartbeats::Reported),
            // ADR-37: a continuous stream always asks for heartbeats. async-nats asks for
            // none here, so a program written for it expects no error from a silence: a
            // miss only makes the stream pull again.
            (None, _) => (clamp_heartbeat(expires / 2, expires), Heartbeats::Quiet),
        };
        let max_bytes = self.options.max_bytes;
        let pending = Pending::new(batch, max_bytes).with_thresholds(
            check_threshold(self.threshold_messages, batch, "threshold_messages")?,
            check_threshold(self.threshold_bytes, max_bytes, "threshold_bytes")?,
        );
        let mut options = self.options;
        options.heartbeat = Some(heartbeat);
        let request = options.request(batch, Some(expires), false);
        let stream = Stream::start_with(self.consumer, request, pending, heartbeats).await?;
        Ok(match self.end_if_missing {
            true => stream.end_if_consumer_missing(self.consumer),
            false => stream,
        })
    }
}

/// A refill threshold set on a [`StreamBuilder`] that is not below the request size it
/// belongs to (a pull request would go out after every message, or never stop going out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidThreshold {
    /// `threshold_messages` or `threshold_bytes`.
    pub setting: &'static str,
    /// The threshold set.
    pub threshold: usize,
    /// The messages or bytes per pull request (0: no byte limit).
    pub request_size: usize,
}

impl std::fmt::Display for InvalidThreshold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} must be below the pull request's size {}",
            self.setting, self.threshold, self.request_size
        )
    }
}

impl std::error::Error for InvalidThreshold {}

/// The threshold `setting` if it is below `request_size`; `None` if not set.
fn check_threshold(
    threshold: Option<usize>,
    request_size: usize,
    setting: &'static str,
) -> Result<Option<usize>, StreamError> {
    match threshold {
        Some(threshold) if threshold >= request_size => Err(StreamError::with_source(
            StreamErrorKind::Other,
            InvalidThreshold {
                setting,
                threshold,
                request_size,
            },
        )),
        threshold => Ok(threshold),
    }
}

/// A one-shot pull that takes what is there; from [`Consumer::fetch`].
#[derive(Debug, Clone)]
pub struct FetchBuilder<'a> {
    consumer: &'a Consumer<Config>,
    options: Options,
    keep_pin: bool,
}

pull_options!(FetchBuilder);

impl<'a> FetchBuilder<'a> {
    /// A fetch from `consumer`, with the defaults (up to 200 messages).
    pub fn new(consumer: &'a Consumer<Config>) -> FetchBuilder<'a> {
        FetchBuilder {
            consumer,
            options: Options::default(),
            keep_pin: false,
        }
    }

    /// Pulls from a `PinnedClient` priority group (ADR-42; an rnats extension, async-nats
    /// refuses one-shot pulls there with
    /// [`BatchErrorKind::PinnedClient`](super::BatchErrorKind::PinnedClient)): this handle, and
    /// its clones, keep the pin id the server gives across their fetches and batches, and
    /// forget it when the server answers `423` (another client holds the pin now).
    pub fn pinned(mut self) -> Self {
        self.keep_pin = true;
        self
    }

    /// Bytes to fetch at most.
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.options.max_bytes = max_bytes;
        self
    }

    /// Messages to fetch at most (default 200).
    pub fn max_messages(mut self, batch: usize) -> Self {
        self.options.batch = Some(batch);
        self
    }

    /// Prioritized policy: lower numbers are served first.
    pub fn priority(mut self, priority: usize) -> Self {
        self.options.priority = Some(priority);
        self
    }

    /// Sends the request; the batch ends when the messages there are delivered.
    pub async fn messages(self) -> Result<Batch, BatchError> {
        let batch = self.options.batch.unwrap_or(DEFAULT_BATCH);
        let expires = self.options.expires;
        Batch::start(
            self.consumer,
            self.options.request(batch, expires, true),
            self.keep_pin,
        )
        .await
    }
}

/// A one-shot pull that waits for its messages; from [`Consumer::batch`].
#[derive(Debug, Clone)]
pub struct BatchBuilder<'a> {
    consumer: &'a Consumer<Config>,
    options: Options,
    keep_pin: bool,
}

pull_options!(BatchBuilder);

impl<'a> BatchBuilder<'a> {
    /// A batch from `consumer`, with the defaults (up to 200 messages).
    pub fn new(consumer: &'a Consumer<Config>) -> BatchBuilder<'a> {
        BatchBuilder {
            consumer,
            options: Options::default(),
            keep_pin: false,
        }
    }

    /// Pulls from a `PinnedClient` priority group (ADR-42; an rnats extension, async-nats
    /// refuses one-shot pulls there with
    /// [`BatchErrorKind::PinnedClient`](super::BatchErrorKind::PinnedClient)): this handle, and
    /// its clones, keep the pin id the server gives across their fetches and batches, and
    /// forget it when the server answers `423` (another client holds the pin now).
    pub fn pinned(mut self) -> Self {
        self.keep_pin = true;
        self
    }

    /// Bytes to receive at most.
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.options.max_bytes = max_bytes;
        self
    }

    /// Messages to receive at most (default 200).
    pub fn max_messages(mut self, batch: usize) -> Self {
        self.options.batch = Some(batch);
        self
    }
    /// The request's priority, 0 (first) to 9, for a consumer with the `Prioritized` policy
    /// (ADR-42): the server serves the lowest number first.
    pub fn priority(mut self, priority: usize) -> Self {
        self.options.priority = Some(priority);
        self
    }

    /// Sends the request; the batch ends when it is full or expires.
    pub async fn messages(self) -> Result<Batch, BatchError> {
        let batch = self.options.batch.unwrap_or(DEFAULT_BATCH);
        let expires = Some(self.options.expires.unwrap_or(Duration::ZERO));
        Batch::start(
            self.consumer,
            self.options.request(batch, expires, false),
            self.keep_pin,
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_request_encodes_only_what_is_set() {
        let request = BatchConfig {
            batch: 10,
            expires: Some(Duration::from_secs(1)),
            idle_heartbeat: Duration::from_millis(500),
            ..Default::default()
        };
        let json = serde_json::to_string(&PullRequest {
            batch: &request,
            pin_id: Some("pin"),
        })
        .unwrap();
        assert_eq!(
            json,
            r#"{"batch":10,"expires":1000000000,"idle_heartbeat":500000000,"id":"pin"}"#
        );
        let fetch = BatchConfig {
            batch: 1,
            no_wait: true,
            max_bytes: 64,
            group: Some("A".into()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&fetch).unwrap(),
            r#"{"batch":1,"no_wait":true,"max_bytes":64,"group":"A"}"#
        );
    }
}
