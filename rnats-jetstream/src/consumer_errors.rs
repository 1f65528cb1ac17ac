//! The error types of consumer management, re-exported from `context` (and, for the ones
//! async-nats keeps there, from `stream`).
//!
//! Each kind that can carry the server's refusal has a `JetStream(crate::Error)` variant with
//! its `code`/`err_code`. A `RequestError` becomes one of these through the small functions
//! at the bottom: both are `rnats_core::error::Error<_>`, so no `From` impl can join them.

use std::fmt;

use crate::context::{RequestError, RequestErrorKind};
use crate::errors::ErrorCode;

/// The kinds of [`ConsumerInfoError`].
#[derive(Clone, Debug, PartialEq)]
pub enum ConsumerInfoErrorKind {
    /// The consumer name is not valid.
    InvalidName,
    /// The consumer is offline.
    Offline,
    /// There is no such consumer.
    NotFound,
    /// There is no such stream.
    StreamNotFound,
    /// The request failed.
    Request,
    /// The server refused, with this error.
    JetStream(crate::Error),
    /// No answer in time.
    TimedOut,
    /// Nobody answered: JetStream is not enabled.
    NoResponders,
}

impl fmt::Display for ConsumerInfoErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidName => f.write_str("invalid consumer name"),
            Self::Offline => f.write_str("consumer is offline"),
            Self::NotFound => f.write_str("consumer not found"),
            Self::StreamNotFound => f.write_str("stream not found"),
            Self::Request => f.write_str("request error"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
            Self::TimedOut => f.write_str("timed out"),
            Self::NoResponders => f.write_str("no responders"),
        }
    }
}

/// Why a consumer's info could not be had.
pub type ConsumerInfoError = rnats_core::error::Error<ConsumerInfoErrorKind>;

impl From<crate::Error> for ConsumerInfoError {
    fn from(error: crate::Error) -> ConsumerInfoError {
        ConsumerInfoError::new(match error.error_code() {
            ErrorCode::CONSUMER_NOT_FOUND => ConsumerInfoErrorKind::NotFound,
            ErrorCode::STREAM_NOT_FOUND => ConsumerInfoErrorKind::StreamNotFound,
            ErrorCode::CONSUMER_OFFLINE => ConsumerInfoErrorKind::Offline,
            _ => ConsumerInfoErrorKind::JetStream(error),
        })
    }
}

/// The kinds of [`ConsumerError`].
#[derive(Clone, Debug, PartialEq)]
pub enum ConsumerErrorKind {
    /// No answer in time.
    TimedOut,
    /// The request failed.
    Request,
    /// The consumer is not of the type asked for (pull vs push).
    InvalidConsumerType,
    /// The consumer (or stream) name is not valid.
    InvalidName,
    /// The server refused, with this error.
    JetStream(crate::Error),
    /// Anything else.
    Other,
}

impl fmt::Display for ConsumerErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut => f.write_str("timed out"),
            Self::Request => f.write_str("request failed"),
            Self::InvalidConsumerType => f.write_str("invalid consumer type"),
            Self::InvalidName => f.write_str("invalid consumer name"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
            Self::Other => f.write_str("consumer error"),
        }
    }
}

/// Why creating, getting or deleting a consumer failed.
pub type ConsumerError = rnats_core::error::Error<ConsumerErrorKind>;

impl From<crate::Error> for ConsumerError {
    fn from(error: crate::Error) -> ConsumerError {
        ConsumerError::new(ConsumerErrorKind::JetStream(error))
    }
}

/// The kinds of [`ConsumerUpdateError`].
#[derive(Clone, Debug, PartialEq)]
pub enum ConsumerUpdateErrorKind {
    /// No answer in time.
    TimedOut,
    /// The request failed.
    Request,
    /// The consumer is not of the type asked for.
    InvalidConsumerType,
    /// The consumer name is not valid.
    InvalidName,
    /// There is no such consumer to update.
    DoesNotExist,
    /// The server refused, with this error.
    JetStream(crate::Error),
    /// Anything else.
    Other,
}

impl fmt::Display for ConsumerUpdateErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut => f.write_str("timed out"),
            Self::Request => f.write_str("request failed"),
            Self::InvalidConsumerType => f.write_str("invalid consumer type"),
            Self::InvalidName => f.write_str("invalid consumer name"),
            Self::DoesNotExist => f.write_str("consumer does not exist"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
            Self::Other => f.write_str("consumer error"),
        }
    }
}

/// Why updating a consumer failed.
pub type ConsumerUpdateError = rnats_core::error::Error<ConsumerUpdateErrorKind>;

impl From<crate::Error> for ConsumerUpdateError {
    fn from(error: crate::Error) -> ConsumerUpdateError {
        ConsumerUpdateError::new(match error.error_code() {
            ErrorCode::CONSUMER_DOES_NOT_EXIST => ConsumerUpdateErrorKind::DoesNotExist,
            _ => ConsumerUpdateErrorKind::JetStream(error),
        })
    }
}

/// The kinds of [`ConsumerCreateStrictError`].
#[derive(Clone, Debug, PartialEq)]
pub enum ConsumerCreateStrictErrorKind {
    /// No answer in time.
    TimedOut,
    /// The request failed.
    Request,
    /// The consumer is not of the type asked for.
    InvalidConsumerType,
    /// The consumer name is not valid.
    InvalidName,
    /// A consumer of that name exists already (with another configuration).
    AlreadyExists,
    /// The server refused, with this error.
    JetStream(crate::Error),
    /// Anything else.
    Other,
}

impl fmt::Display for ConsumerCreateStrictErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut => f.write_str("timed out"),
            Self::Request => f.write_str("request failed"),
            Self::InvalidConsumerType => f.write_str("invalid consumer type"),
            Self::InvalidName => f.write_str("invalid consumer name"),
            Self::AlreadyExists => f.write_str("consumer already exists"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
            Self::Other => f.write_str("consumer error"),
        }
    }
}

/// Why creating a consumer that must not exist yet failed.
pub type ConsumerCreateStrictError = rnats_core::error::Error<ConsumerCreateStrictErrorKind>;

impl From<crate::Error> for ConsumerCreateStrictError {
    fn from(error: crate::Error) -> ConsumerCreateStrictError {
        ConsumerCreateStrictError::new(match error.error_code() {
            ErrorCode::CONSUMER_ALREADY_EXISTS => ConsumerCreateStrictErrorKind::AlreadyExists,
            _ => ConsumerCreateStrictErrorKind::JetStream(error),
        })
    }
}

/// A failed API request as a [`ConsumerInfoError`].
pub(crate) fn info_request_error(error: RequestError) -> ConsumerInfoError {
    match error.kind() {
        RequestErrorKind::TimedOut => ConsumerInfoError::new(ConsumerInfoErrorKind::TimedOut),
        RequestErrorKind::NoResponders => {
            ConsumerInfoError::new(ConsumerInfoErrorKind::NoResponders)
        }
        RequestErrorKind::InvalidSubject => {
            ConsumerInfoError::with_source(ConsumerInfoErrorKind::InvalidName, error)
        }
        RequestErrorKind::Other => {
            ConsumerInfoError::with_source(ConsumerInfoErrorKind::Request, error)
        }
    }
}

/// A failed API request as a [`ConsumerError`].
pub(crate) fn consumer_request_error(error: RequestError) -> ConsumerError {
    match error.kind() {
        RequestErrorKind::TimedOut => ConsumerError::new(ConsumerErrorKind::TimedOut),
        _ => ConsumerError::with_source(ConsumerErrorKind::Request, error),
    }
}

/// A [`ConsumerError`] as a [`ConsumerUpdateError`].
pub(crate) fn update_error(error: ConsumerError) -> ConsumerUpdateError {
    let kind = match error.kind() {
        ConsumerErrorKind::JetStream(error) => return error.into(),
        ConsumerErrorKind::TimedOut => ConsumerUpdateErrorKind::TimedOut,
        ConsumerErrorKind::Request => ConsumerUpdateErrorKind::Request,
        ConsumerErrorKind::InvalidConsumerType => ConsumerUpdateErrorKind::InvalidConsumerType,
        ConsumerErrorKind::InvalidName => ConsumerUpdateErrorKind::InvalidName,
        ConsumerErrorKind::Other => ConsumerUpdateErrorKind::Other,
    };
    ConsumerUpdateError::with_source(kind, error)
}

/// A [`ConsumerError`] as a [`ConsumerCreateStrictError`].
pub(crate) fn create_strict_error(error: ConsumerError) -> ConsumerCreateStrictError {
    let kind = match error.kind() {
        ConsumerErrorKind::JetStream(error) => return error.into(),
        ConsumerErrorKind::TimedOut => ConsumerCreateStrictErrorKind::TimedOut,
        ConsumerErrorKind::Request => ConsumerCreateStrictErrorKind::Request,
        ConsumerErrorKind::InvalidConsumerType => {
            ConsumerCreateStrictErrorKind::InvalidConsumerType
        }
        ConsumerErrorKind::InvalidName => ConsumerCreateStrictErrorKind::InvalidName,
        ConsumerErrorKind::Other => ConsumerCreateStrictErrorKind::Other,
    };
    ConsumerCreateStrictError::with_source(kind, error)
}
