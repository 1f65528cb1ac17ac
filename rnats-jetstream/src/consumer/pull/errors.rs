//! The errors of pull consumption.

use std::fmt;

use rnats_core::error::Error;

/// The kinds of [`MessagesError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MessagesErrorKind {
    /// No message or heartbeat for two heartbeat intervals (not terminal: a new pull request
    /// goes out).
    MissingHeartbeat,
    /// The consumer was deleted (terminal).
    ConsumerDeleted,
    /// A pull request could not be sent.
    Pull,
    /// The consumer is a push consumer (terminal).
    PushBasedConsumer,
    /// Nobody serves the consumer's pull subject.
    NoResponders,
    /// A pull request was over the consumer's limits (`Exceeded MaxRequest...`, terminal)
    /// or too many requests were waiting (`Exceeded MaxWaiting`, retried).
    RequestLimitExceeded,
    /// Anything else (a 400 Bad Request is terminal).
    Other,
}

impl fmt::Display for MessagesErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MissingHeartbeat => "missed idle heartbeat",
            Self::ConsumerDeleted => "consumer deleted",
            Self::Pull => "pull request failed",
            Self::PushBasedConsumer => "cannot use with push consumer",
            Self::NoResponders => "no responders",
            Self::RequestLimitExceeded => "pull request exceeded consumer limits",
            Self::Other => "error",
        })
    }
}

/// An error item of a pull consumer's message stream.
pub type MessagesError = Error<MessagesErrorKind>;

/// The kinds of [`BatchRequestError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BatchRequestErrorKind {
    /// The request could not be published.
    Publish,
    /// Flushing failed.
    Flush,
    /// The request could not be encoded.
    Serialize,
}

impl fmt::Display for BatchRequestErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Publish => "publish failed",
            Self::Flush => "flush failed",
            Self::Serialize => "serialize failed",
        })
    }
}

/// Why a pull request could not be sent.
pub type BatchRequestError = Error<BatchRequestErrorKind>;

/// The kinds of [`BatchError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BatchErrorKind {
    /// The reply subscription failed.
    Subscribe,
    /// The pull request failed.
    Pull,
    /// Flushing failed.
    Flush,
    /// The request could not be encoded.
    Serialize,
    /// A one-shot pull of a `PinnedClient` consumer without `pinned()` on its builder (as in
    /// async-nats, which has no way to keep the pin).
    PinnedClient,
}

impl fmt::Display for BatchErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Subscribe => "subscribe failed",
            Self::Pull => "pull request failed",
            Self::Flush => "flush failed",
            Self::Serialize => "serialize failed",
            Self::PinnedClient => "pinned client consumers need a pull stream",
        })
    }
}

/// Why a fetch or batch could not start.
pub type BatchError = Error<BatchErrorKind>;

/// The kinds of [`OrderedError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OrderedErrorKind {
    /// Heartbeats were missed (the consumer is being recreated).
    MissingHeartbeat,
    /// The consumer was deleted.
    ConsumerDeleted,
    /// A pull request could not be sent.
    Pull,
    /// The consumer is a push consumer.
    PushBasedConsumer,
    /// Recreating the consumer failed.
    Recreate,
    /// Nobody serves the consumer's pull subject.
    NoResponders,
    /// Pull requests are over the consumer's limits even after recreating it.
    RequestLimitExceeded,
    /// Anything else.
    Other,
}

impl fmt::Display for OrderedErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MissingHeartbeat => "missed idle heartbeat",
            Self::ConsumerDeleted => "consumer deleted",
            Self::Pull => "pull request failed",
            Self::PushBasedConsumer => "cannot use with push consumer",
            Self::Recreate => "consumer recreation failed",
            Self::NoResponders => "no responders",
            Self::RequestLimitExceeded => "pull request exceeded consumer limits",
            Self::Other => "error",
        })
    }
}

/// An error item of an ordered pull consumer's message stream.
pub type OrderedError = Error<OrderedErrorKind>;

/// A message stream's error as the ordered stream's (no `From`: both are
/// `rnats_core::error::Error<_>`).
pub(crate) fn ordered_error(error: MessagesError) -> OrderedError {
    {
        let kind = match error.kind() {
            MessagesErrorKind::MissingHeartbeat => OrderedErrorKind::MissingHeartbeat,
            MessagesErrorKind::ConsumerDeleted => OrderedErrorKind::ConsumerDeleted,
            MessagesErrorKind::Pull => OrderedErrorKind::Pull,
            MessagesErrorKind::PushBasedConsumer => OrderedErrorKind::PushBasedConsumer,
            MessagesErrorKind::NoResponders => OrderedErrorKind::NoResponders,
            MessagesErrorKind::RequestLimitExceeded => OrderedErrorKind::RequestLimitExceeded,
            MessagesErrorKind::Other => OrderedErrorKind::Other,
        };
        OrderedError::with_source(kind, error)
    }
}

/// The kinds of [`ConsumerRecreateError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConsumerRecreateErrorKind {
    /// The stream could not be read.
    GetStream,
    /// Creating the new consumer failed.
    Recreate,
    /// No answer in time.
    TimedOut,
}

impl fmt::Display for ConsumerRecreateErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::GetStream => "error getting stream",
            Self::Recreate => "consumer creation failed",
            Self::TimedOut => "timed out",
        })
    }
}

/// Why an ordered consumer could not be recreated.
pub type ConsumerRecreateError = Error<ConsumerRecreateErrorKind>;
