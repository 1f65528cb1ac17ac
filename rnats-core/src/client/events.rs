//! The tokio client's side of connection events: the [`Events`] stream of
//! `Client::events` (a broadcast receiver) and the task that runs an async-nats event
//! callback.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use futures_util::stream::BoxStream;
use tokio::sync::{broadcast, mpsc};

use crate::events::{ConnectionEvent, Event, EventCallback, LISTENER_CAPACITY};
use crate::rt::Rt;

/// A stream of [`ConnectionEvent`]s. Each call to `Client::events` gets its own copy of every
/// event sent after the call.
pub struct Events {
    inner: BoxStream<'static, ConnectionEvent>,
}

impl Events {
    pub(crate) fn new(rx: broadcast::Receiver<ConnectionEvent>) -> Events {
        let inner = futures_util::stream::unfold(rx, |mut rx| async move {
            match rx.recv().await {
                Ok(event) => Some((event, rx)),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    Some((ConnectionEvent::Lagged(n), rx))
                }
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
    type Item = ConnectionEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ConnectionEvent>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// A queue for `callback`'s events and the task that runs the callback for each, one at a
/// time and in order, until the client is gone. Made before the client's first event is
/// sent, so the callback sees the first `Connected`.
pub(crate) fn spawn_callback(rt: Rt, callback: EventCallback) -> mpsc::Sender<Event> {
    let (tx, mut rx) = mpsc::channel(LISTENER_CAPACITY);
    rt.spawn(async move {
        while let Some(event) = rx.recv().await {
            callback.call(event).await;
        }
    });
    tx
}
