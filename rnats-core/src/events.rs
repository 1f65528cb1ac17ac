//! Connection events, delivered on [`Client::events`](crate::Client::events).

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::stream::BoxStream;
use rnats_proto::ServerError;
use tokio::sync::broadcast;

/// Something that happened to the connection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The connection to the server is up.
    Connected,
    /// The connection was lost; the text says why.
    Disconnected {
        /// Why the connection ended.
        reason: String,
    },
    /// The connection is back after a disconnect (subscriptions restored).
    Reconnected,
    /// The cluster advertised servers the pool did not know; they were added to it.
    DiscoveredServers(Vec<String>),
    /// The server reported an error that did not end the connection.
    ServerError(ServerError),
    /// A subscription's queue was full and messages were dropped. Reported once per episode:
    /// again only after the queue has accepted a message in between.
    SlowConsumer {
        /// The subscription's id.
        sid: u64,
        /// Messages dropped on this subscription so far.
        dropped: u64,
    },
    /// The server entered lame duck mode and will close the connection soon.
    LameDuckMode,
    /// Events were produced faster than this listener read them; this many were skipped.
    Lagged(u64),
    /// The client was closed and its connection ended for good.
    Closed,
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Connected => f.write_str("connected"),
            Event::Disconnected { reason } => write!(f, "disconnected: {reason}"),
            Event::Reconnected => f.write_str("reconnected"),
            Event::DiscoveredServers(urls) => write!(f, "discovered servers: {}", urls.join(", ")),
            Event::ServerError(e) => write!(f, "server error: {e}"),
            Event::SlowConsumer { sid, dropped } => {
                write!(f, "slow consumer on sid {sid}: {dropped} messages dropped")
            }
            Event::LameDuckMode => f.write_str("server entered lame duck mode"),
            Event::Lagged(n) => write!(f, "{n} events skipped"),
            Event::Closed => f.write_str("closed"),
        }
    }
}

/// A stream of [`Event`]s. Each call to `Client::events` gets its own copy of every event
/// sent after the call.
pub struct Events {
    inner: BoxStream<'static, Event>,
}

impl Events {
    pub(crate) fn new(rx: broadcast::Receiver<Event>) -> Events {
        let inner = futures_util::stream::unfold(rx, |mut rx| async move {
            match rx.recv().await {
                Ok(event) => Some((event, rx)),
                Err(broadcast::error::RecvError::Lagged(n)) => Some((Event::Lagged(n), rx)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        });
        Events {
            inner: Box::pin(inner),
        }
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Events").finish_non_exhaustive()
    }
}

impl Stream for Events {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.inner.as_mut().poll_next(cx)
    }
}
