//! The request-duration histograms a client records into while [`observe`] registrations ask
//! for them: held in the client's request table, so that a request learns whether to read
//! the clock under the lock it takes anyway to register. A client without them pays no
//! atomic, no lock and no clock read (a look at an empty `Option`); a timed request takes the
//! table's lock once more at its end, to find the histograms.
//!
//! [`observe`]: super::metrics::observe

use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;

use crate::error::RequestCause;

/// One registration's histogram and the attributes its points carry.
pub(crate) struct Recorder {
    /// The registration's own number, to take it out again.
    pub(crate) id: u64,
    pub(crate) histogram: Histogram<f64>,
    /// The attributes of a request that got its reply; a failed one adds `error.type`.
    pub(crate) attributes: Vec<KeyValue>,
}

/// Every recorder of one client; replaced, never changed, so that it is taken out of the
/// table's lock with one reference count.
pub(crate) type Recorders = Arc<[Arc<Recorder>]>;

/// The recorders of one client, in its request table: `None` without a registration that
/// times requests.
#[derive(Default)]
pub(crate) struct RequestDurations(Option<Recorders>);

impl RequestDurations {
    /// The clock of a request starting now: one that records when some registration asks,
    /// one that does nothing (and read no clock) otherwise.
    #[inline]
    pub(crate) fn start(&self) -> RequestClock {
        RequestClock(self.0.as_ref().map(|_| Instant::now()))
    }

    /// Every recorder of the moment.
    pub(crate) fn recorders(&self) -> Option<Recorders> {
        self.0.clone()
    }

    /// Adds a registration's recorder.
    pub(crate) fn add(&mut self, recorder: Arc<Recorder>) {
        let mut all: Vec<Arc<Recorder>> = self.0.iter().flat_map(|r| r.iter().cloned()).collect();
        all.push(recorder);
        self.0 = Some(all.into());
    }

    /// Takes out registration `id`'s recorder.
    pub(crate) fn remove(&mut self, id: u64) {
        let left: Vec<Arc<Recorder>> = (self.0.iter())
            .flat_map(|r| r.iter().filter(|recorder| recorder.id != id).cloned())
            .collect();
        self.0 = (!left.is_empty()).then(|| left.into());
    }
}

impl std::fmt::Debug for RequestDurations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let recorders = self.0.as_ref().map_or(0, |r| r.len());
        f.debug_struct("RequestDurations")
            .field("recorders", &recorders)
            .finish()
    }
}

/// A request's start, when some registration times it: an `Instant` alone (no drop glue
/// in every request's future); the recorders are looked up again when the request ends.
pub(crate) struct RequestClock(Option<Instant>);

impl RequestClock {
    /// The clock of a request that is not timed.
    pub(crate) fn untimed() -> RequestClock {
        RequestClock(None)
    }

    /// Records the time since the start into the `recorders()` of the moment, with the
    /// `error.type` of `failure()` (the cause, when the request failed). Neither is called
    /// for a request that was not timed. A request dropped before its answer is not recorded
    /// (it has no outcome).
    #[inline(always)]
    pub(crate) fn finish(
        &mut self,
        recorders: impl FnOnce() -> Option<Recorders>,
        failure: impl FnOnce() -> Option<RequestCause>,
    ) {
        if let Some(at) = self.0.take() {
            record(at.elapsed(), recorders, failure());
        }
    }
}

/// Out of line: only a timed request comes here.
#[inline(never)]
fn record(
    elapsed: Duration,
    recorders: impl FnOnce() -> Option<Recorders>,
    failure: Option<RequestCause>,
) {
    // Taken out of the request table (under its lock) before recording, so that the SDK's
    // work does not hold a lock the engine takes for every reply.
    let Some(recorders) = recorders() else {
        return;
    };
    let seconds = elapsed.as_secs_f64();
    for recorder in recorders.iter() {
        match &failure {
            None => recorder.histogram.record(seconds, &recorder.attributes),
            Some(cause) => {
                let mut attributes = recorder.attributes.clone();
                attributes.push(KeyValue::new("error.type", error_type(cause)));
                recorder.histogram.record(seconds, &attributes);
            }
        }
    }
}

/// The conventions' `error.type` for a failed request: a short, low-cardinality name of the
/// cause.
fn error_type(cause: &RequestCause) -> &'static str {
    match cause {
        RequestCause::TimedOut(_) => "timeout",
        RequestCause::NoResponders => "no_responders",
        RequestCause::Closed => "closed",
        RequestCause::Disconnected => "disconnected",
    }
}
