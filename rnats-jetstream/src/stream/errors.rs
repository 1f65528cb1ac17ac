//! The errors of a [`Stream`](super::Stream) handle's calls, with async-nats' kinds. Where the
//! server refused, its [`crate::Error`] is in the kind and is the error's source too, so
//! `err.downcast_source::<rnats_jetstream::Error>()` reaches the code.

use std::fmt;

use rnats_core::StatusCode;
use rnats_core::error::Error;

use crate::context::{RequestError, RequestErrorKind};

/// Why fetching a stream's info failed; a server refusal has kind `Other` and the
/// [`crate::Error`] as its source.
pub type InfoError = RequestError;

/// The kinds of [`DirectGetError`].
#[derive(Clone, Debug, PartialEq)]
pub enum DirectGetErrorKind {
    /// No message matches.
    NotFound,
    /// The subject is not valid, or the server found the request malformed.
    InvalidSubject,
    /// No answer within the timeout.
    TimedOut,
    /// The request could not be made.
    Request,
    /// The server answered with this status and description.
    ErrorResponse(StatusCode, String),
    /// Anything else, e.g. a reply missing the headers a stream message has.
    Other,
}

impl fmt::Display for DirectGetErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DirectGetErrorKind::NotFound => f.write_str("no message matches"),
            DirectGetErrorKind::InvalidSubject => f.write_str("invalid subject"),
            DirectGetErrorKind::TimedOut => f.write_str("timed out"),
            DirectGetErrorKind::Request => f.write_str("request failed"),
            DirectGetErrorKind::ErrorResponse(status, description) => {
                write!(f, "direct get refused: {status} {description}")
            }
            DirectGetErrorKind::Other => f.write_str("direct get failed"),
        }
    }
}

/// Why a direct get (ADR-31) failed.
pub type DirectGetError = Error<DirectGetErrorKind>;

/// The kinds of [`DeleteMessageError`].
#[derive(Clone, Debug, PartialEq)]
pub enum DeleteMessageErrorKind {
    /// The request could not be made.
    Request,
    /// No answer within the timeout.
    TimedOut,
    /// The server refused, with this error.
    JetStream(crate::Error),
}

impl fmt::Display for DeleteMessageErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeleteMessageErrorKind::Request => f.write_str("request failed"),
            DeleteMessageErrorKind::TimedOut => f.write_str("timed out"),
            DeleteMessageErrorKind::JetStream(error) => write!(f, "JetStream error: {error}"),
        }
    }
}

/// Why deleting (or erasing) a message failed.
pub type DeleteMessageError = Error<DeleteMessageErrorKind>;

/// The kinds of [`PurgeError`].
#[derive(Clone, Debug, PartialEq)]
pub enum PurgeErrorKind {
    /// The request could not be made.
    Request,
    /// No answer within the timeout.
    TimedOut,
    /// The server refused, with this error.
    JetStream(crate::Error),
}

impl fmt::Display for PurgeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PurgeErrorKind::Request => f.write_str("request failed"),
            PurgeErrorKind::TimedOut => f.write_str("timed out"),
            PurgeErrorKind::JetStream(error) => write!(f, "JetStream error: {error}"),
        }
    }
}

/// Why a purge failed.
pub type PurgeError = Error<PurgeErrorKind>;

/// The kinds of [`LastRawMessageError`] (and [`RawMessageError`]).
#[derive(Clone, Debug, PartialEq)]
pub enum LastRawMessageErrorKind {
    /// No message matches.
    NoMessageFound,
    /// The subject is not valid.
    InvalidSubject,
    /// The server refused, with this error.
    JetStream(crate::Error),
    /// Anything else: the request failed, or the message could not be decoded.
    Other,
}

impl fmt::Display for LastRawMessageErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LastRawMessageErrorKind::NoMessageFound => f.write_str("no message matches"),
            LastRawMessageErrorKind::InvalidSubject => f.write_str("invalid subject"),
            LastRawMessageErrorKind::JetStream(error) => write!(f, "JetStream error: {error}"),
            LastRawMessageErrorKind::Other => f.write_str("getting the message failed"),
        }
    }
}

/// Why getting a subject's last message from the leader failed.
pub type LastRawMessageError = Error<LastRawMessageErrorKind>;
/// The kinds of [`RawMessageError`]; the same as [`LastRawMessageErrorKind`].
pub type RawMessageErrorKind = LastRawMessageErrorKind;
/// Why getting a message from the leader (`STREAM.MSG.GET`) failed.
pub type RawMessageError = LastRawMessageError;

/// A failed API request as a purge or delete error: timeouts keep their kind.
pub(crate) fn timed_out_or_request<K>(error: RequestError, timed_out: K, request: K) -> Error<K>
where
    K: Clone + fmt::Debug + fmt::Display + PartialEq,
{
    match error.kind() {
        RequestErrorKind::TimedOut => Error::with_source(timed_out, error),
        _ => Error::with_source(request, error),
    }
}
