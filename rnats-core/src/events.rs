//! Connection events: rnats' detailed [`ConnectionEvent`]s on [`Client::events`], and
//! async-nats' [`Event`]s for [`ConnectOptions::event_callback`].
//!
//! [`Client::events`]: crate::Client::events
//! [`ConnectOptions::event_callback`]: crate::ConnectOptions::event_callback

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rnats_proto::ServerError as ProtocolError;

use crate::subject::Subject;

/// Events a listener may hold unread, in both clients; past this a listener misses the
/// oldest and is told how many (`Lagged`).
pub(crate) const LISTENER_CAPACITY: usize = 256;

/// Something that happened to the connection, as async-nats reports it to an event callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The connection is up: after the first connect and after every reconnect.
    Connected,
    /// The connection was lost.
    Disconnected,
    /// The server entered lame duck mode and will close the connection soon.
    LameDuckMode,
    /// The client started draining.
    Draining,
    /// The client was closed and its connection ended for good.
    Closed,
    /// A subscription's queue was full and a message was dropped (the subscription's sid):
    /// one event per dropped message, as async-nats reports them. [`ConnectionEvent`]s
    /// report a slow consumer once per episode instead.
    SlowConsumer(u64),
    /// The server reported an error.
    ServerError(ServerError),
    /// The client hit a problem of its own (reconnecting gave up, say).
    ClientError(ClientError),
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Connected => f.write_str("connected"),
            Event::Disconnected => f.write_str("disconnected"),
            Event::LameDuckMode => f.write_str("lame duck mode detected"),
            Event::Draining => f.write_str("draining"),
            Event::Closed => f.write_str("closed"),
            Event::SlowConsumer(sid) => write!(f, "slow consumer on subscription {sid}"),
            Event::ServerError(error) => write!(f, "server error: {error}"),
            Event::ClientError(error) => write!(f, "client error: {error}"),
        }
    }
}

/// An error the server reported, in async-nats' three shapes. rnats' finer account (permission
/// violations with their subject, stale connection, ...) is in
/// [`ConnectionEvent::ServerError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    /// The server rejected the credentials.
    #[error("nats: authorization violation")]
    AuthorizationViolation,
    /// A subscription was a slow consumer.
    #[error("nats: subscription {0} is a slow consumer")]
    SlowConsumer(u64),
    /// Any other error, with the server's text.
    #[error("nats: {0}")]
    Other(String),
}

impl From<&ProtocolError> for ServerError {
    fn from(error: &ProtocolError) -> Self {
        match error {
            ProtocolError::AuthorizationViolation => ServerError::AuthorizationViolation,
            other => ServerError::Other(other.to_string()),
        }
    }
}

/// A problem of the client's own, reported as [`Event::ClientError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// Anything else, described.
    #[error("nats: {0}")]
    Other(String),
    /// Reconnecting gave up after `max_reconnects` attempts.
    #[error("nats: max reconnects reached")]
    MaxReconnects,
    /// A reconnect callback chose a server that is not in the pool.
    #[error("nats: reconnect callback returned server not in pool")]
    ServerNotInPool,
}

/// An error reported to a callback: the client's or the server's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// The client's.
    #[error("{0}")]
    Client(ClientError),
    /// The server's.
    #[error("{0}")]
    Server(ServerError),
}

impl From<ClientError> for CallbackError {
    fn from(error: ClientError) -> Self {
        CallbackError::Client(error)
    }
}

impl From<ServerError> for CallbackError {
    fn from(error: ServerError) -> Self {
        CallbackError::Server(error)
    }
}

/// Something that happened to the connection, in rnats' detail: what [`Client::events`]
/// streams. Each maps to at most one async-nats [`Event`] (see [`ConnectionEvent::to_event`]).
///
/// [`Client::events`]: crate::Client::events
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConnectionEvent {
    /// The first connection to the server is up.
    Connected,
    /// The connection was lost; the text says why.
    Disconnected {
        /// Why the connection ended.
        reason: String,
    },
    /// The connection is back after a disconnect (subscriptions restored).
    Reconnected,
    /// A reconnect attempt failed; the client goes on trying (up to `max_reconnects`). The
    /// event callback hears of failures once per try instead, as
    /// `Event::ClientError(ClientError::Other(..))` with the error's kind, as async-nats
    /// tells them.
    ReconnectFailed {
        /// The attempt's number since the connection was lost, from 1.
        attempt: usize,
        /// The server tried.
        server: String,
        /// Why it failed.
        error: String,
    },
    /// The cluster advertised servers the pool did not know; they were added to it.
    DiscoveredServers(Vec<String>),
    /// The server names other cluster peers than before (its INFO's `connect_urls`): a
    /// server joined or left its cluster, or a route between servers was cut or came back.
    /// Requests in flight through such a route may have been lost without a reply; a
    /// JetStream pull consumer asks again on this.
    ClusterChanged,
    /// The server reported an error. The connection stays up after some (a permission
    /// violation, `maximum subscriptions exceeded`); after the ones the server closes the
    /// connection for (authorization and authentication errors, connection limits, a stale
    /// connection, a payload too large), a `Disconnected` follows at once and the client
    /// reconnects as after any other loss.
    ServerError(ProtocolError),
    /// A subscription's queue was full and messages were dropped. Reported once per episode:
    /// again only after the queue has accepted a message in between.
    SlowConsumer {
        /// The subscription's id.
        sid: u64,
        /// The subject the subscription was made with (a wildcard stays a wildcard), so a
        /// report names the subscription without a lookup of its sid. One exception in the
        /// async client: a subscription whose `unsubscribe_after` count ended it in the very
        /// read that overflowed is gone by the time of the report, and is named by the
        /// subject of its last message. async-nats' [`Event::SlowConsumer`] carries the sid
        /// alone.
        subject: Subject,
        /// Messages dropped on this subscription so far.
        dropped: u64,
    },
    /// The server entered lame duck mode and will close the connection soon.
    LameDuckMode,
    /// `drain` started.
    Draining,
    /// The client hit a problem of its own.
    ClientError(ClientError),
    /// Events were produced faster than this listener read them; this many were skipped.
    Lagged(u64),
    /// The client was closed and its connection ended for good.
    Closed,
}

impl ConnectionEvent {
    /// The async-nats event this is reported as to an event callback, if any: a reconnect is
    /// `Connected`; discovered servers, a changed cluster and lag have no async-nats
    /// counterpart, and failed
    /// reconnect attempts are told to the callback once per try, not one by one.
    pub fn to_event(&self) -> Option<Event> {
        Some(match self {
            ConnectionEvent::Connected | ConnectionEvent::Reconnected => Event::Connected,
            ConnectionEvent::Disconnected { .. } => Event::Disconnected,
            ConnectionEvent::ServerError(error) => Event::ServerError(error.into()),
            ConnectionEvent::SlowConsumer { sid, .. } => Event::SlowConsumer(*sid),
            ConnectionEvent::LameDuckMode => Event::LameDuckMode,
            ConnectionEvent::Draining => Event::Draining,
            ConnectionEvent::ClientError(error) => Event::ClientError(error.clone()),
            ConnectionEvent::Closed => Event::Closed,
            ConnectionEvent::DiscoveredServers(_)
            | ConnectionEvent::ClusterChanged
            | ConnectionEvent::Lagged(_)
            | ConnectionEvent::ReconnectFailed { .. } => return None,
        })
    }
}

impl ConnectionEvent {
    /// What the event callback gets for this event, which both clients send it along with
    /// the listeners' copy: [`ConnectionEvent::to_event`], except for slow consumers, which
    /// the callback hears of once per dropped message instead, as in async-nats (the
    /// clients report those apart).
    pub(crate) fn callback_event(&self) -> Option<Event> {
        match self {
            ConnectionEvent::SlowConsumer { .. } => None,
            other => other.to_event(),
        }
    }
}

impl fmt::Display for ConnectionEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectionEvent::Connected => f.write_str("connected"),
            ConnectionEvent::Disconnected { reason } => write!(f, "disconnected: {reason}"),
            ConnectionEvent::Reconnected => f.write_str("reconnected"),
            ConnectionEvent::ReconnectFailed {
                attempt,
                server,
                error,
            } => write!(f, "reconnect attempt {attempt} to {server} failed: {error}"),
            ConnectionEvent::DiscoveredServers(urls) => {
                write!(f, "discovered servers: {}", urls.join(", "))
            }
            ConnectionEvent::ClusterChanged => f.write_str("the server's cluster changed"),
            ConnectionEvent::ServerError(e) => write!(f, "server error: {e}"),
            ConnectionEvent::SlowConsumer {
                sid,
                subject,
                dropped,
            } => write!(
                f,
                "slow consumer on sid {sid} ({subject}): {dropped} messages dropped"
            ),
            ConnectionEvent::LameDuckMode => f.write_str("server entered lame duck mode"),
            ConnectionEvent::Draining => f.write_str("draining"),
            ConnectionEvent::ClientError(e) => write!(f, "client error: {e}"),
            ConnectionEvent::Lagged(n) => write!(f, "{n} events skipped"),
            ConnectionEvent::Closed => f.write_str("closed"),
        }
    }
}

/// The boxed future an event callback returns.
type CallbackFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// An async-nats style event callback, as `ConnectOptions::event_callback` stores it.
#[derive(Clone)]
pub(crate) struct EventCallback(Arc<dyn Fn(Event) -> CallbackFuture + Send + Sync>);

impl EventCallback {
    pub(crate) fn new<F, Fut>(callback: F) -> EventCallback
    where
        F: Fn(Event) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        EventCallback(Arc::new(move |event| Box::pin(callback(event))))
    }

    /// The callback's future for `event`: awaited on the runtime by the tokio client, run
    /// with `block_on` by the blocking client.
    pub(crate) fn call(&self, event: Event) -> CallbackFuture {
        (self.0)(event)
    }
}

impl fmt::Debug for EventCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventCallback")
    }
}
