//! The error types of stream management (`create_stream`, `get_stream`, ...) and the stream
//! listings, re-exported from `context` where async-nats has them. Where the server refused,
//! its [`crate::Error`] is in the kind and is the error's source too, so
//! `err.downcast_source::<rnats_jetstream::Error>()` reaches the code.

use std::fmt;

use rnats_core::error::Error;

use crate::context::{RequestError, RequestErrorKind};
use crate::errors::ErrorCode;

pub use crate::stream::list::{StreamNames, Streams};

/// The kinds of [`CreateStreamError`] (and [`UpdateStreamError`]).
#[derive(Clone, Debug, PartialEq)]
pub enum CreateStreamErrorKind {
    /// The config has no name.
    EmptyStreamName,
    /// The name has a character streams cannot have (` `, `.`, `*`, `>`, `/`, `\`, control).
    InvalidStreamName,
    /// A mirror or source sets both `domain` and `external`.
    DomainAndExternalSet,
    /// Nobody answered: JetStream is not enabled.
    JetStreamUnavailable,
    /// The server refused, with this error. A refusal for subjects that overlap another
    /// stream's has a [`SubjectOverlap`](crate::stream::SubjectOverlap) naming that stream
    /// as the error's source.
    JetStream(crate::Error),
    /// No answer within the timeout.
    TimedOut,
    /// The request failed or its reply could not be read.
    Response,
    /// The stream does not exist (an update of a missing stream).
    NotFound,
    /// The reply could not be parsed.
    ResponseParse,
}

impl fmt::Display for CreateStreamErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyStreamName => f.write_str("the stream name is empty"),
            Self::InvalidStreamName => f.write_str(
                "the stream name may not contain spaces, `.`, `*`, `>`, path separators \
                 or control characters",
            ),
            Self::DomainAndExternalSet => {
                f.write_str("a source sets both a domain and an external prefix")
            }
            Self::JetStreamUnavailable => f.write_str("JetStream is not available"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
            Self::TimedOut => f.write_str("timed out"),
            Self::Response => f.write_str("request failed"),
            Self::NotFound => f.write_str("stream not found"),
            Self::ResponseParse => f.write_str("the reply could not be parsed"),
        }
    }
}

/// Why creating a stream failed.
pub type CreateStreamError = Error<CreateStreamErrorKind>;
/// Why updating a stream failed.
pub type UpdateStreamError = CreateStreamError;
/// The kinds of [`UpdateStreamError`].
pub type UpdateStreamErrorKind = CreateStreamErrorKind;

impl From<crate::Error> for CreateStreamError {
    fn from(error: crate::Error) -> Self {
        let kind = match error.error_code() {
            ErrorCode::STREAM_NOT_FOUND => CreateStreamErrorKind::NotFound,
            _ => CreateStreamErrorKind::JetStream(error.clone()),
        };
        CreateStreamError::with_source(kind, error)
    }
}

/// The kinds of [`GetStreamError`] (and [`DeleteStreamError`]).
#[derive(Clone, Debug, PartialEq)]
pub enum GetStreamErrorKind {
    /// The name is empty.
    EmptyName,
    /// The request failed; the source says why.
    Request,
    /// The name has a character streams cannot have.
    InvalidStreamName,
    /// The server refused, with this error (e.g. the stream does not exist).
    JetStream(crate::Error),
}

impl fmt::Display for GetStreamErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyName => f.write_str("the stream name is empty"),
            Self::Request => f.write_str("request failed"),
            Self::InvalidStreamName => f.write_str("invalid stream name"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
        }
    }
}

/// Why getting a stream failed.
pub type GetStreamError = Error<GetStreamErrorKind>;
/// Why deleting a stream failed.
pub type DeleteStreamError = GetStreamError;
/// The kinds of [`DeleteStreamError`].
pub type DeleteStreamErrorKind = GetStreamErrorKind;

/// The kinds of [`GetStreamByNameError`].
#[derive(Clone, Debug, PartialEq)]
pub enum GetStreamByNameErrorKind {
    /// The request failed; the source says why.
    Request,
    /// No stream holds the subject.
    NotFound,
    /// The subject is not valid.
    InvalidSubject,
    /// The server refused, with this error.
    JetStream(crate::Error),
}

impl fmt::Display for GetStreamByNameErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Request => f.write_str("request failed"),
            Self::NotFound => f.write_str("no stream holds the subject"),
            Self::InvalidSubject => f.write_str("invalid subject"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
        }
    }
}

/// Why `stream_by_subject` failed.
pub type GetStreamByNameError = Error<GetStreamByNameErrorKind>;

/// The kinds of [`StreamsError`]: those of a request.
pub type StreamsErrorKind = RequestErrorKind;
/// Why a page of a stream (or consumer) listing could not be fetched; a server refusal has
/// kind `Other` and the [`crate::Error`] as its source.
pub type StreamsError = RequestError;

/// The server's refusal as a request error: kind `Other`, the error as its source.
pub(crate) fn server_request_error(error: crate::Error) -> RequestError {
    RequestError::with_source(RequestErrorKind::Other, error)
}

/// A failed request as a create or update error.
pub(crate) fn create_request_error(error: RequestError) -> CreateStreamError {
    let kind = match error.kind() {
        RequestErrorKind::NoResponders => CreateStreamErrorKind::JetStreamUnavailable,
        RequestErrorKind::TimedOut => CreateStreamErrorKind::TimedOut,
        RequestErrorKind::InvalidSubject => CreateStreamErrorKind::InvalidStreamName,
        RequestErrorKind::Other => CreateStreamErrorKind::Response,
    };
    CreateStreamError::with_source(kind, error)
}

/// The server's refusal as a get or delete error.
pub(crate) fn get_stream_server_error(error: crate::Error) -> GetStreamError {
    GetStreamError::with_source(GetStreamErrorKind::JetStream(error.clone()), error)
}
