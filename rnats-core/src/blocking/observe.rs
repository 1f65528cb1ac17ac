//! What an OpenTelemetry metrics registration (`otel::metrics`) reads of a blocking client:
//! its counters, its connection state and server, and where its request durations go. Held
//! weakly, so that a registration does not keep the connection open.

use std::sync::{Arc, Weak};

use super::client::Client;
use super::state::Inner;
use crate::connection::LinkState;
use crate::floor::sync::lock;
use crate::otel::Recorder;
use crate::otel::metrics::sealed::{Sealed, Target};
use crate::otel::metrics::{Observable, ObservedClient};
use crate::server_addr::ServerAddr;
use crate::statistics::Statistics;

/// A blocking client as a registration sees it.
struct Observed(Weak<Inner>);

impl Client {
    /// The client, for a metrics registration.
    fn observed(&self) -> Observed {
        Observed(Arc::downgrade(self.inner_arc()))
    }
}

impl Observable for Client {}

impl Sealed for Client {
    fn target(&self) -> Target {
        Target(Box::new(self.observed()))
    }
}

impl ObservedClient for Observed {
    fn statistics(&self) -> Option<Arc<Statistics>> {
        Observed::statistics(self)
    }

    fn state(&self) -> Option<LinkState> {
        Observed::state(self)
    }

    fn server(&self) -> Option<ServerAddr> {
        Observed::server(self)
    }

    fn name(&self) -> Option<String> {
        Observed::name(self)
    }

    fn add_recorder(&self, recorder: Arc<Recorder>) {
        Observed::add_recorder(self, recorder);
    }

    fn remove_recorder(&self, id: u64) {
        Observed::remove_recorder(self, id);
    }
}

impl Observed {
    /// The client's counters, while it lives.
    pub(crate) fn statistics(&self) -> Option<Arc<Statistics>> {
        Some(Arc::clone(&self.0.upgrade()?.statistics))
    }

    /// The connection's state, while the client lives.
    pub(crate) fn state(&self) -> Option<LinkState> {
        Some(self.0.upgrade()?.core().state)
    }

    /// The server the connection is up to, if it is.
    pub(crate) fn server(&self) -> Option<ServerAddr> {
        let inner = self.0.upgrade()?;
        if inner.core().state != LinkState::Connected {
            return None;
        }
        lock(&inner.pool).current().cloned()
    }

    /// The name the client connected with.
    pub(crate) fn name(&self) -> Option<String> {
        self.0.upgrade()?.options.name.clone()
    }

    /// Times the client's requests into `recorder` too.
    pub(crate) fn add_recorder(&self, recorder: Arc<Recorder>) {
        if let Some(inner) = self.0.upgrade() {
            inner.core().durations.add(recorder);
        }
    }

    /// Stops timing into registration `id`'s recorder.
    pub(crate) fn remove_recorder(&self, id: u64) {
        if let Some(inner) = self.0.upgrade() {
            inner.core().durations.remove(id);
        }
    }
}
