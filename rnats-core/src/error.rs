//! Errors, one type per failure domain, shaped as async-nats shapes them.
//!
//! Every fallible call returns an [`Error<Kind>`](Error): `err.kind()` gives a small `Copy`
//! enum to match on (the same variants async-nats has, so code matching on them compiles
//! unchanged), `Display` reads "kind: cause", and `source()` is the cause. rnats keeps a finer
//! cause for each domain ([`ConnectCause`], [`PublishCause`], ...), reachable typed through
//! `err.cause()` without downcasting by hand.

use std::fmt::{self, Debug, Display};
use std::io;
use std::time::Duration;

use rnats_proto::{DecodeError, HeaderError, QueueGroupError, ServerError, SubjectCause};

use crate::auth::AuthError;
use crate::proxy::ProxyError;

/// An error of one failure domain: a kind to match on and, usually, the cause behind it.
pub struct Error<Kind>
where
    Kind: Clone + Debug + Display + PartialEq,
{
    kind: Kind,
    source: Option<crate::Error>,
}

impl<Kind> Error<Kind>
where
    Kind: Clone + Debug + Display + PartialEq,
{
    /// An error of this kind with no further cause.
    pub fn new(kind: Kind) -> Self {
        Error { kind, source: None }
    }

    /// An error of this kind caused by `source`.
    pub fn with_source<S: Into<crate::Error>>(kind: Kind, source: S) -> Self {
        Error {
            kind,
            source: Some(source.into()),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> Kind {
        self.kind.clone()
    }

    /// The first error of type `C` in the source chain: how crates above this one
    /// (JetStream) reach the detail they attached, e.g. the server's JetStream error code,
    /// also through an error that wraps another.
    pub fn downcast_source<C: std::error::Error + 'static>(&self) -> Option<&C> {
        let mut next: Option<&(dyn std::error::Error + 'static)> = match &self.source {
            Some(source) => Some(source.as_ref()),
            None => None,
        };
        while let Some(error) = next {
            if let Some(found) = error.downcast_ref::<C>() {
                return Some(found);
            }
            next = error.source();
        }
        None
    }
}

impl<Kind> From<Kind> for Error<Kind>
where
    Kind: Clone + Debug + Display + PartialEq,
{
    fn from(kind: Kind) -> Self {
        Error::new(kind)
    }
}

impl<Kind> Display for Error<Kind>
where
    Kind: Clone + Debug + Display + PartialEq,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.kind),
            None => Display::fmt(&self.kind, f),
        }
    }
}

impl<Kind> Debug for Error<Kind>
where
    Kind: Clone + Debug + Display + PartialEq,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("source", &self.source)
            .finish()
    }
}

impl<Kind> std::error::Error for Error<Kind>
where
    Kind: Clone + Debug + Display + PartialEq,
{
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// Defines a kind enum (async-nats' variants and texts), the error alias over it, and, where
/// rnats has a finer cause enum, ties it to both: `From<Cause>` picks the kind, `cause()`
/// reads it back.
macro_rules! failure_domain {
    (
        $(#[$kind_meta:meta])* kind $kind:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }
        $(#[$alias_meta:meta])* error $alias:ident;
    ) => {
        $(#[$kind_meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $kind {
            $($(#[$vmeta])* $variant,)+
        }

        impl Display for $kind {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    $($kind::$variant => $text,)+
                })
            }
        }

        $(#[$alias_meta])*
        pub type $alias = Error<$kind>;
    };
    (
        $(#[$kind_meta:meta])* kind $kind:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }
        $(#[$alias_meta:meta])* error $alias:ident;
        cause $cause:ident;
    ) => {
        failure_domain! {
            $(#[$kind_meta])* kind $kind { $($(#[$vmeta])* $variant => $text,)+ }
            $(#[$alias_meta])* error $alias;
        }

        impl From<$cause> for $alias {
            fn from(cause: $cause) -> Self {
                Error::with_source(cause.kind(), cause)
            }
        }

        impl Error<$kind> {
            /// rnats' finer account of what went wrong, when it has one.
            pub fn cause(&self) -> Option<&$cause> {
                self.downcast_source::<$cause>()
            }
        }
    };
}

failure_domain! {
    /// The kinds of [`ConnectError`].
    kind ConnectErrorKind {
        /// A server address could not be parsed.
        ServerParse => "failed to parse server or server list",
        /// A host name could not be resolved.
        Dns => "DNS error",
        /// Credentials could not be loaded or could not sign the server's nonce.
        Authentication => "failed signing nonce",
        /// The server rejected the credentials.
        AuthorizationViolation => "authorization violation",
        /// The handshake did not complete within the connection timeout.
        TimedOut => "timed out",
        /// TLS could not be set up.
        Tls => "TLS error",
        /// A socket error or a protocol failure during the handshake.
        Io => "IO error",
        /// Reconnecting gave up after `max_reconnects` attempts.
        MaxReconnects => "reached maximum number of reconnects",
    }
    /// Why connecting failed; match on [`Error::kind`], or see [`ConnectError::cause`].
    error ConnectError;
    cause ConnectCause;
}

failure_domain! {
    /// The kinds of [`PublishError`].
    kind PublishErrorKind {
        /// Payload and headers exceed the server's `max_payload`.
        MaxPayloadExceeded => "max payload size exceeded",
        /// The subject is invalid or has wildcards.
        InvalidSubject => "invalid subject",
        /// The message could not be queued (closed, reconnect buffer full, no header support).
        Send => "failed to send message",
    }
    /// Why a publish was refused.
    error PublishError;
    cause PublishCause;
}

failure_domain! {
    /// The kinds of [`SubscribeError`].
    kind SubscribeErrorKind {
        /// The subject is not a valid subject or pattern.
        InvalidSubject => "invalid subject",
        /// The queue group name is not valid.
        InvalidQueueName => "invalid queue name",
        /// The subscription could not be sent (the client is closed).
        Other => "subscribe failed",
    }
    /// Why a subscription could not be made.
    error SubscribeError;
    cause SubscribeCause;
}

failure_domain! {
    /// The kinds of [`RequestError`].
    kind RequestErrorKind {
        /// No reply came within the timeout.
        TimedOut => "request timed out",
        /// Nobody is subscribed to the subject (status 503).
        NoResponders => "no responders",
        /// The subject is invalid or has wildcards.
        InvalidSubject => "invalid subject",
        /// The request exceeds the server's `max_payload`.
        MaxPayloadExceeded => "max payload size exceeded",
        /// Anything else: not sent, connection closed or lost.
        Other => "request failed",
    }
    /// Why a request got no reply.
    error RequestError;
    cause RequestCause;
}

failure_domain! {
    /// The kinds of [`FlushError`].
    kind FlushErrorKind {
        /// The flush could not be sent: the client is closed.
        SendError => "failed to send flush request",
        /// The server did not answer: the connection ended or the wait timed out.
        FlushError => "flush failed",
    }
    /// Why a flush did not complete.
    error FlushError;
    cause FlushCause;
}

failure_domain! {
    /// The kinds of [`RttError`] (the names of nats.rs PR 1551's `Client::rtt`).
    kind RttErrorKind {
        /// The PING could not be sent: the client is closed, or has no live connection.
        SendError => "failed to send ping",
        /// The PONG did not come: the connection ended first.
        RecvError => "failed to get rtt",
    }
    /// Why `Client::rtt` measured nothing.
    error RttError;
    cause RttCause;
}

failure_domain! {
    /// The kinds of [`SetServerPoolError`].
    kind SetServerPoolErrorKind {
        /// The client is closed.
        Send => "failed to set the server pool: the client is closed",
        /// An address could not be parsed.
        InvalidAddress => "invalid server address",
        /// WebSocket and plain addresses were mixed.
        MixedSchemes => "cannot mix websocket and non-websocket URLs in a server pool",
        /// No address was given.
        EmptyPool => "server pool cannot be empty",
    }
    /// Why `Client::set_server_pool` refused the new pool.
    error SetServerPoolError;
}

failure_domain! {
    /// The kinds of [`ServerPoolError`].
    kind ServerPoolErrorKind {
        /// The client is closed.
        Send => "failed to read the server pool: the client is closed",
    }
    /// Why `Client::server_pool` could not answer.
    error ServerPoolError;
}

impl From<io::Error> for ConnectError {
    fn from(error: io::Error) -> Self {
        ConnectError::with_source(ConnectErrorKind::Io, error)
    }
}

impl From<PublishError> for RequestError {
    fn from(error: PublishError) -> Self {
        let kind = match error.kind() {
            PublishErrorKind::InvalidSubject => RequestErrorKind::InvalidSubject,
            PublishErrorKind::MaxPayloadExceeded => RequestErrorKind::MaxPayloadExceeded,
            PublishErrorKind::Send => RequestErrorKind::Other,
        };
        RequestError::with_source(kind, error)
    }
}

impl From<SubscribeError> for RequestError {
    fn from(error: SubscribeError) -> Self {
        RequestError::with_source(RequestErrorKind::Other, error)
    }
}

/// What went wrong connecting: the cause behind a [`ConnectError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectCause {
    /// The server address could not be understood.
    #[error("invalid server address {url:?}: {reason}")]
    InvalidUrl {
        /// The address as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The custom inbox prefix does not make valid inbox subjects.
    #[error("invalid inbox prefix: {0}")]
    InvalidInboxPrefix(SubjectCause),
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
    #[error("the server rejected the credentials")]
    AuthorizationViolation,
    /// The server refused the connection with another error: among them
    /// `maximum connections exceeded` and `maximum account active connections exceeded`
    /// (reported with the kind `Io`, as async-nats does: the next attempt may get in), and
    /// expired or revoked credentials (reported with the kind `AuthorizationViolation`).
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
    #[error("{0}")]
    Tls(String),
    /// The WebSocket upgrade failed.
    #[error("websocket: {0}")]
    WebSocket(String),
    /// No server address was given.
    #[error("no server address given")]
    NoServers,
    /// Every reconnect attempt allowed by `max_reconnects` failed.
    #[error("gave up after {0} reconnect attempts")]
    MaxReconnects(usize),
    /// No runtime can drive the client: connect from inside a tokio runtime, or build rnats
    /// with its `runtime-neutral` feature to connect from anywhere (smol, any executor).
    #[error(
        "no Tokio runtime is running here, and rnats was built without its `runtime-neutral` \
         feature: connect inside a Tokio runtime, or turn that feature on"
    )]
    NoRuntime,
    /// The proxy ([`ConnectOptions::proxy`](crate::ConnectOptions::proxy)) could not be
    /// used: a bad URL, unreachable, credentials refused, the tunnel refused.
    #[error("proxy: {0}")]
    Proxy(#[from] ProxyError),
}

impl ConnectCause {
    /// The async-nats kind this cause is reported as.
    pub fn kind(&self) -> ConnectErrorKind {
        match self {
            ConnectCause::InvalidUrl { .. }
            | ConnectCause::InvalidInboxPrefix(_)
            | ConnectCause::NoServers => ConnectErrorKind::ServerParse,
            ConnectCause::TimedOut { .. } => ConnectErrorKind::TimedOut,
            ConnectCause::AuthorizationViolation => ConnectErrorKind::AuthorizationViolation,
            // The server's other refusals of the credentials (nats.go's auth errors): a
            // login, not the network, failed, and the reconnect policy treats it as one.
            ConnectCause::Server(
                ServerError::AuthenticationExpired
                | ServerError::AuthenticationRevoked
                | ServerError::AccountAuthenticationExpired,
            ) => ConnectErrorKind::AuthorizationViolation,
            ConnectCause::Auth(_) => ConnectErrorKind::Authentication,
            ConnectCause::Tls(_) => ConnectErrorKind::Tls,
            ConnectCause::MaxReconnects(_) => ConnectErrorKind::MaxReconnects,
            ConnectCause::Proxy(ProxyError::InvalidUrl { .. }) => ConnectErrorKind::ServerParse,
            ConnectCause::Io { .. }
            | ConnectCause::Server(_)
            | ConnectCause::Protocol(_)
            | ConnectCause::UnexpectedOp(_)
            | ConnectCause::ClosedByServer
            | ConnectCause::WebSocket(_)
            | ConnectCause::NoRuntime
            | ConnectCause::Proxy(_) => ConnectErrorKind::Io,
        }
    }
}

impl From<DecodeError> for ConnectError {
    fn from(error: DecodeError) -> Self {
        ConnectCause::Protocol(error).into()
    }
}

impl From<ProxyError> for ConnectError {
    fn from(error: ProxyError) -> Self {
        ConnectCause::Proxy(error).into()
    }
}

impl From<AuthError> for ConnectError {
    fn from(error: AuthError) -> Self {
        ConnectCause::Auth(error).into()
    }
}

/// Why a publish was refused: the cause behind a [`PublishError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PublishCause {
    /// The subject is not a valid subject, or has wildcards (`*`, `>`), which may be
    /// subscribed to but not published to.
    #[error("{0}")]
    InvalidSubject(#[from] SubjectCause),
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
    /// A header name or value was refused when it was put into the map (an infallible
    /// `insert` keeps the map valid by leaving such a pair out; this reports it).
    #[error("invalid header: {0}")]
    InvalidHeader(HeaderError),
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

impl PublishCause {
    /// The async-nats kind this cause is reported as.
    pub fn kind(&self) -> PublishErrorKind {
        match self {
            PublishCause::InvalidSubject(_) => PublishErrorKind::InvalidSubject,
            PublishCause::MaxPayloadExceeded { .. } => PublishErrorKind::MaxPayloadExceeded,
            PublishCause::HeadersNotSupported
            | PublishCause::InvalidHeader(_)
            | PublishCause::Closed
            | PublishCause::ReconnectBufferFull { .. } => PublishErrorKind::Send,
        }
    }
}

impl From<SubjectCause> for PublishError {
    fn from(error: SubjectCause) -> Self {
        PublishCause::InvalidSubject(error).into()
    }
}

/// Why a subscription could not be made: the cause behind a [`SubscribeError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubscribeCause {
    /// The subject is not a valid subject or pattern.
    #[error("{0}")]
    InvalidSubject(#[from] SubjectCause),
    /// The queue group name is not valid.
    #[error("{0}")]
    InvalidQueueGroup(#[from] QueueGroupError),
    /// The client is closed.
    #[error("the connection is closed")]
    Closed,
    /// The client is draining: it closes once the drain is done.
    #[error("the connection is draining")]
    Draining,
}

impl SubscribeCause {
    /// The async-nats kind this cause is reported as.
    pub fn kind(&self) -> SubscribeErrorKind {
        match self {
            SubscribeCause::InvalidSubject(_) => SubscribeErrorKind::InvalidSubject,
            SubscribeCause::InvalidQueueGroup(_) => SubscribeErrorKind::InvalidQueueName,
            SubscribeCause::Closed | SubscribeCause::Draining => SubscribeErrorKind::Other,
        }
    }
}

impl From<SubjectCause> for SubscribeError {
    fn from(error: SubjectCause) -> Self {
        SubscribeCause::InvalidSubject(error).into()
    }
}

impl From<QueueGroupError> for SubscribeError {
    fn from(error: QueueGroupError) -> Self {
        SubscribeCause::InvalidQueueGroup(error).into()
    }
}

/// Why a request got no reply: the cause behind a [`RequestError`]. A request that could not
/// be sent has the [`PublishError`] as its source instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestCause {
    /// No reply came within the timeout.
    #[error("no reply within {0:?}")]
    TimedOut(Duration),
    /// Nobody is subscribed to the subject (the server answered with status 503).
    #[error("nobody is subscribed to the subject")]
    NoResponders,
    /// The connection closed before the reply came.
    #[error("the connection closed before a reply arrived")]
    Closed,
    /// The connection was lost while waiting (with `fail_requests_on_disconnect`).
    #[error("disconnected before a reply arrived")]
    Disconnected,
}

impl RequestCause {
    /// The async-nats kind this cause is reported as.
    pub fn kind(&self) -> RequestErrorKind {
        match self {
            RequestCause::TimedOut(_) => RequestErrorKind::TimedOut,
            RequestCause::NoResponders => RequestErrorKind::NoResponders,
            RequestCause::Closed | RequestCause::Disconnected => RequestErrorKind::Other,
        }
    }
}

/// Why a flush did not complete: the cause behind a [`FlushError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlushCause {
    /// The client was already closed; no PING was sent.
    #[error("the connection is closed")]
    NotSent,
    /// The connection closed before the server answered.
    #[error("the connection closed before the server answered")]
    Closed,
    /// The server did not answer in time (a drain past its drain timeout).
    #[error("no answer from the server within {0:?}")]
    TimedOut(Duration),
    /// The link broke after the PING was queued or sent: it, and maybe frames queued before
    /// it, were lost with the link, so the server may not have what came before the flush.
    #[error("the connection was lost before the server answered; earlier writes may be lost")]
    Disconnected,
    /// The client was closed while the drain was waiting for a reconnect: nothing could be
    /// drained (as nats.go, which refuses to drain while reconnecting).
    #[error("the connection is down; nothing could be drained")]
    NotConnected,
}

impl FlushCause {
    /// The async-nats kind this cause is reported as.
    pub fn kind(&self) -> FlushErrorKind {
        match self {
            FlushCause::NotSent => FlushErrorKind::SendError,
            FlushCause::Closed
            | FlushCause::TimedOut(_)
            | FlushCause::Disconnected
            | FlushCause::NotConnected => FlushErrorKind::FlushError,
        }
    }
}

/// Why a round trip could not be measured: the cause behind an [`RttError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RttCause {
    /// The client is closed; no PING was sent.
    #[error("the connection is closed")]
    Closed,
    /// The client is reconnecting (or has not connected yet): there is no live connection to
    /// measure, and a PING kept for the next one would time the outage, not the network.
    #[error("the client is not connected")]
    NotConnected,
    /// The connection was lost or closed after the PING was queued, before its PONG.
    #[error("the connection ended before the server answered")]
    Disconnected,
    /// The server did not answer within the blocking client's request timeout.
    #[error("no answer from the server within {0:?}")]
    TimedOut(Duration),
}

impl RttCause {
    /// The kind this cause is reported as.
    pub fn kind(&self) -> RttErrorKind {
        match self {
            RttCause::Closed | RttCause::NotConnected => RttErrorKind::SendError,
            RttCause::Disconnected | RttCause::TimedOut(_) => RttErrorKind::RecvError,
        }
    }
}

impl From<FlushCause> for RttCause {
    /// A PING that was queued and then failed: `NotSent` means the client closed before the
    /// queue took it, anything else that the connection ended before the PONG.
    fn from(cause: FlushCause) -> RttCause {
        match cause {
            FlushCause::NotSent => RttCause::Closed,
            FlushCause::NotConnected => RttCause::NotConnected,
            FlushCause::TimedOut(limit) => RttCause::TimedOut(limit),
            FlushCause::Closed | FlushCause::Disconnected => RttCause::Disconnected,
        }
    }
}

/// Why draining the client did not complete cleanly; the source is the [`FlushError`] of the
/// final flush. The client is closed either way.
#[derive(Debug, thiserror::Error)]
#[error("drain failed: {0}")]
pub struct DrainError(#[source] crate::Error);

impl From<FlushError> for DrainError {
    fn from(error: FlushError) -> Self {
        DrainError(Box::new(error))
    }
}

/// Why an unsubscribe (or a subscriber's drain) could not be completed.
#[derive(Debug, thiserror::Error)]
#[error("failed to send unsubscribe: {0}")]
pub struct UnsubscribeError(#[source] crate::Error);

impl UnsubscribeError {
    pub(crate) fn closed() -> Self {
        UnsubscribeError("the connection is closed".into())
    }
}

impl From<FlushError> for UnsubscribeError {
    fn from(error: FlushError) -> Self {
        UnsubscribeError(Box::new(error))
    }
}

/// Why `Client::force_reconnect` could not start a reconnect.
#[derive(Debug, thiserror::Error)]
#[error("failed to reconnect: {0}")]
pub struct ReconnectError(#[source] crate::Error);

impl ReconnectError {
    pub(crate) fn closed() -> Self {
        ReconnectError("the connection is closed".into())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_display_and_cause_survive_the_conversion() {
        let error: PublishError = PublishCause::ReconnectBufferFull { limit: 10 }.into();
        assert_eq!(error.kind(), PublishErrorKind::Send);
        assert_eq!(
            error.cause(),
            Some(&PublishCause::ReconnectBufferFull { limit: 10 })
        );
        assert_eq!(
            error.to_string(),
            "failed to send message: disconnected and the reconnect buffer (10 bytes) is full"
        );
        let source = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(
            source.as_deref(),
            Some("disconnected and the reconnect buffer (10 bytes) is full")
        );
    }

    #[test]
    fn an_error_without_cause_shows_its_kind() {
        let error = RequestError::new(RequestErrorKind::TimedOut);
        assert_eq!(error.to_string(), "request timed out");
        assert!(error.cause().is_none());
        assert!(std::error::Error::source(&error).is_none());
    }

    #[test]
    fn request_errors_keep_the_publish_kind() {
        let publish: PublishError = PublishCause::MaxPayloadExceeded { size: 2, max: 1 }.into();
        let request = RequestError::from(publish);
        assert_eq!(request.kind(), RequestErrorKind::MaxPayloadExceeded);
        let closed: PublishError = PublishCause::Closed.into();
        assert_eq!(RequestError::from(closed).kind(), RequestErrorKind::Other);
    }

    #[test]
    fn errors_box_into_the_crate_error() {
        fn run() -> Result<(), crate::Error> {
            Err(FlushError::from(FlushCause::NotSent))?
        }
        let error = run().unwrap_err();
        assert_eq!(
            error.to_string(),
            "failed to send flush request: the connection is closed"
        );
    }
}
