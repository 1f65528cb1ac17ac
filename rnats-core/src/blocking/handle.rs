//! What every clone of a blocking `Client`, and every `Subscriber`, holds: the connection
//! closes when the last one goes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::state::Inner;
use super::writer::Urgency;
use crate::connection::LinkState;
use crate::error::{FlushCause, FlushError};

/// Closes the connection when the last handle goes.
pub(super) struct Handle {
    inner: Arc<Inner>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        let inner = &*self.inner;
        inner
            .write
            .finish_writes(inner, inner.options.connection_timeout);
        self.inner.close();
    }
}

impl Handle {
    pub(super) fn new(inner: Arc<Inner>) -> Handle {
        Handle { inner }
    }

    pub(super) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// The shared state itself: its count of holders tells a test when a thread ended.
    #[cfg(any(test, feature = "opentelemetry"))]
    pub(super) fn inner_arc(&self) -> &Arc<Inner> {
        &self.inner
    }
}

/// Queues a PING once a link is up and waits for its PONG, until `deadline`
/// (`Client::flush`).
pub(super) fn flush_until(inner: &Inner, deadline: Option<Instant>) -> Result<(), FlushError> {
    let timed_out = || {
        let waited = deadline.map_or(Duration::ZERO, |d| {
            d.saturating_duration_since(Instant::now())
        });
        FlushError::from(FlushCause::TimedOut(waited))
    };
    let ping = loop {
        let connected = inner.wait_for(deadline, |core| match core.state {
            // During a planned move the PING is for the next link, as the publishes
            // before it are.
            LinkState::Connected if core.session.link.moving().is_none() => Some(true),
            LinkState::Closed => Some(false),
            LinkState::Connected | LinkState::Disconnected | LinkState::Pending => None,
        });
        match connected {
            None => return Err(timed_out()),
            Some(false) => return Err(FlushCause::NotSent.into()),
            Some(true) => {}
        }
        if inner.write.is_closed() {
            return Err(FlushCause::NotSent.into());
        }
        // The link may have been lost since; then wait for the next one.
        if let Some(id) = inner.write.push_ping(inner, Urgency::Now) {
            break id;
        }
    };
    match inner.wait_for(deadline, |core| core.session.pings.outcome(ping)) {
        Some(Ok(())) => Ok(()),
        Some(Err(cause)) => Err(cause.into()),
        None => Err(timed_out()),
    }
}
