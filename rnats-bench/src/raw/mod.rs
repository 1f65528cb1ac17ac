//! The raw baseline: a blocking NATS client written for the bench on [`std::net::TcpStream`],
//! with nothing but the standard library and `memchr`.
//!
//! It is what a careful engineer writes when one workload is all that matters: no
//! subscription bookkeeping, no channels, no hand-offs between threads, no validation beyond
//! the wire format.
//! Publishing copies frames into one big buffer written out in 64 KiB pieces; receiving reads
//! 256 KiB at a time and takes messages as slices of that buffer; a request is a PUB with a
//! reply subject and a read until the MSG. Each connection is driven by the thread that
//! uses it; a responder or subscriber on another connection gets a thread of its own. Its
//! figures are the practical limit of a client on this machine and server, so the compare
//! bench reports every client's ratio to it.
//!
//! Only Core NATS: the `pub`, `sub`, `req`, `lat` and `lat-idle` scenarios
//! ([`scenarios`]), against a server with no authentication and no TLS.
//!
//! [`on_tokio`] runs the same wire handling on a tokio socket, in the shape the async clients
//! run in: the `raw-tokio` column, the floor of that shape, against which rnats' distance from
//! this blocking limit can be split into tokio's share and its own.

pub mod connection;
pub mod on_tokio;
pub mod parser;
pub mod scenarios;

use std::fmt;
use std::io;

pub use connection::{Connection, ReadBuffer, Reader, StopHandle, Writer};
pub use parser::{Msg, Op, ParseError};

/// Why the raw client or one of its scenarios failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum RawError {
    /// The socket failed.
    Io(io::Error),
    /// A read or write waited longer than its timeout.
    Timeout,
    /// The server closed the connection.
    Closed,
    /// The server sent bytes that are not the protocol.
    Protocol(ParseError),
    /// The server sent `-ERR`.
    Server(String),
    /// The server sent something at a point where it makes no sense.
    Unexpected(&'static str),
    /// The server wants something this client does not do (authentication, TLS).
    Unsupported(&'static str),
    /// The URL is not `nats://host:port` without credentials.
    BadUrl(String),
    /// A subscriber received fewer messages than were published: the run measured nothing.
    Dropped {
        /// Messages that arrived.
        received: usize,
        /// Messages published.
        expected: usize,
        /// What ended the wait.
        cause: Box<RawError>,
    },
    /// A helper thread (subscriber, responder) panicked.
    ThreadPanicked,
}

impl RawError {
    fn server(text: &[u8]) -> RawError {
        RawError::Server(String::from_utf8_lossy(text).into_owned())
    }
}

impl fmt::Display for RawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawError::Io(e) => write!(f, "raw client I/O error: {e}"),
            RawError::Timeout => f.write_str("raw client timed out"),
            RawError::Closed => f.write_str("the server closed the raw client's connection"),
            RawError::Protocol(e) => write!(f, "raw client protocol error: {e}"),
            RawError::Server(text) => write!(f, "server error: {text}"),
            RawError::Unexpected(what) => write!(f, "raw client got {what}"),
            RawError::Unsupported(what) => write!(f, "the raw client does not do {what}"),
            RawError::BadUrl(url) => write!(f, "the raw client cannot connect to {url:?}"),
            RawError::Dropped {
                received,
                expected,
                cause,
            } => write!(
                f,
                "DROPPED MESSAGES: received {received} of {expected} ({cause})"
            ),
            RawError::ThreadPanicked => f.write_str("a raw client thread panicked"),
        }
    }
}

impl std::error::Error for RawError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RawError::Io(e) => Some(e),
            RawError::Protocol(e) => Some(e),
            RawError::Dropped { cause, .. } => Some(cause.as_ref()),
            _ => None,
        }
    }
}

impl From<io::Error> for RawError {
    fn from(e: io::Error) -> RawError {
        match e.kind() {
            // A socket timeout shows as either, depending on the platform.
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => RawError::Timeout,
            _ => RawError::Io(e),
        }
    }
}

impl From<ParseError> for RawError {
    fn from(e: ParseError) -> RawError {
        RawError::Protocol(e)
    }
}
