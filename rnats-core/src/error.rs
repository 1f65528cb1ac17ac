//! Errors, one enum per failure domain.

use std::io;
use std::time::Duration;

use rnats_proto::{DecodeError, QueueGroupError, ServerError, SubjectError};

use crate::auth::AuthError;

/// Why connecting failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The server address could not be understood.
    #[error("invalid server address {url:?}: {reason}")]
    InvalidUrl {
        /// The address as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The custom inbox prefix does not make valid inbox subjects.
    #[error("invalid inbox prefix: {0}")]
    InvalidInboxPrefix(SubjectError),
    /// The TCP connection could not be made.
    #[error("could not reach {addr}: {source}")]
    Io {
        /// The address tried.
        addr: String,
        /// The socket error.
        #[source]
        source: io::Error,
    },
    /// Nothing completed the handshake within the connection timeout.
    #[error("connection to {addr} timed out after {timeout:?}")]
    TimedOut {
        /// The address tried.
        addr: String,
        /// The configured connection timeout.
        timeout: Duration,
    },
    /// The server rejected the credentials ("Authorization Violation").
    #[error("authorization violation: the server rejected the credentials")]
    AuthorizationViolation,
    /// The server refused the connection with another error.
    #[error("server refused the connection: {0}")]
    Server(ServerError),
    /// The server sent bytes that are not valid NATS protocol.
    #[error("protocol error during handshake: {0}")]
    Protocol(#[from] DecodeError),
    /// The server sent a valid op that makes no sense at this point of the handshake.
    #[error("unexpected {0} during handshake")]
    UnexpectedOp(&'static str),
    /// The server closed the connection during the handshake.
    #[error("the server closed the connection during the handshake")]
    ClosedByServer,
    /// The credentials could not be loaded or could not sign the server's nonce.
    #[error("credentials: {0}")]
    Auth(#[from] AuthError),
    /// TLS could not be set up: bad certificate files, an untrusted or mismatched server
    /// certificate, or a server without TLS when it is required.
    #[error("TLS: {0}")]
    Tls(String),
    /// No server address was given.
    #[error("no server address given")]
    NoServers,
}

/// Why a publish was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// The subject is not a valid subject, or has wildcards (`*`, `>`), which may be
    /// subscribed to but not published to.
    #[error("invalid subject: {0}")]
    InvalidSubject(#[from] SubjectError),
    /// Payload and headers together exceed the server's `max_payload`.
    #[error("message of {size} bytes exceeds the server's max_payload of {max} bytes")]
    MaxPayloadExceeded {
        /// Header and payload bytes of the message.
        size: usize,
        /// The server's limit.
        max: usize,
    },
    /// The server does not support headers.
    #[error("the server does not support headers")]
    HeadersNotSupported,
    /// The client is closed or draining; nothing more can be sent.
    #[error("the connection is closed")]
    Closed,
    /// Disconnected, and the publishes kept for after the reconnect already fill the
    /// reconnect buffer.
    #[error("disconnected and the reconnect buffer ({limit} bytes) is full")]
    ReconnectBufferFull {
        /// The configured reconnect buffer size.
        limit: usize,
    },
}

/// Why a subscription could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubscribeError {
    /// The subject is not a valid subject or pattern.
    #[error("invalid subject: {0}")]
    InvalidSubject(#[from] SubjectError),
    /// The queue group name is not valid.
    #[error("invalid queue group: {0}")]
    InvalidQueueGroup(#[from] QueueGroupError),
    /// The client is closed or draining.
    #[error("the connection is closed")]
    Closed,
}

/// Why a request got no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// No reply came within the timeout.
    #[error("request timed out after {0:?}")]
    TimedOut(Duration),
    /// Nobody is subscribed to the subject (the server answered with status 503).
    #[error("no responders for the request")]
    NoResponders,
    /// The request could not be sent.
    #[error("request not sent: {0}")]
    Publish(#[from] PublishError),
    /// The connection closed before the reply came.
    #[error("the connection closed before a reply arrived")]
    Closed,
    /// The connection was lost while waiting (with `fail_requests_on_disconnect`).
    #[error("disconnected before a reply arrived")]
    Disconnected,
}

/// Why a flush did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlushError {
    /// The connection closed before the server answered.
    #[error("the connection closed before the flush completed")]
    Closed,
    /// The server did not answer in time (a drain past its drain timeout).
    #[error("no answer from the server within {0:?}")]
    TimedOut(Duration),
}

/// Why an unsubscribe could not be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsubscribeError {
    /// The connection is closed; the server has dropped the subscription with it.
    #[error("the connection is closed")]
    Closed,
}

/// Why a subscription ended early; see [`Subscriber::take_error`](crate::Subscriber::take_error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubscriberError {
    /// The server refused the subscription for lack of permission.
    #[error("permission violation: not allowed to subscribe to {subject:?}")]
    PermissionViolation {
        /// The subject refused.
        subject: String,
    },
    /// The connection closed under the subscription.
    #[error("the connection closed: {0}")]
    ConnectionClosed(String),
}
