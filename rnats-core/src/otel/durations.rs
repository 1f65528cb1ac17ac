//! The request-duration histograms a client records into while [`observe`] registrations ask
//! for them: held in the client's request table, so that a request picks them up under the
//! lock it takes anyway to register, and a client without metrics pays no atomic and no lock
//! for them (only a look at an empty `Option`).
//!
//! [`observe`]: super::metrics::observe

use std::sync::Arc;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;

use crate::Message;
use crate::error::{RequestCause, RequestError};

/// One registration's histogram and the attributes its points carry.
pub(crate) struct Recorder {
    /// The registration's own number, to take it out again.
    pub(crate) id: u64,
    pub(crate) histogram: Histogram<f64>,
    /// The attributes of a request that got its reply; a failed one adds `error.type`.
    pub(crate) attributes: Vec<KeyValue>,
}

/// Every recorder of one client; replaced, never changed, so that a request in flight keeps
/// the set it started with.
type Recorders = Arc<[Arc<Recorder>]>;

/// The recorders of one client, in its request table: `None` without a registration that
/// times requests.
#[derive(Default)]
pub(crate) struct RequestDurations(Option<Recorders>);

impl RequestDurations {
    /// The clock of a request starting now: one that records when some registration asks,
    /// one that does nothing (and read no clock) otherwise.
    #[inline]
    pub(crate) fn start(&self) -> RequestClock {
        RequestClock(
            self.0
                .as_ref()
                .map(|recorders| (Arc::clone(recorders), Instant::now())),
        )
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

/// A request's start, for the registrations timing it; empty when none is.
#[derive(Default)]
pub(crate) struct RequestClock(Option<(Recorders, Instant)>);

impl RequestClock {
    /// The clock of a request that is not timed.
    pub(crate) fn untimed() -> RequestClock {
        RequestClock(None)
    }

    /// Records the time since the start into every recorder, with the outcome's `error.type`
    /// when it failed. A request dropped before its answer is not recorded (it has no outcome).
    #[inline]
    pub(crate) fn finish(self, outcome: &Result<Message, RequestError>) {
        if let Some((recorders, start)) = self.0 {
            record(&recorders, start.elapsed().as_secs_f64(), outcome);
        }
    }
}

fn record(recorders: &[Arc<Recorder>], seconds: f64, outcome: &Result<Message, RequestError>) {
    for recorder in recorders {
        match outcome {
            Ok(_) => recorder.histogram.record(seconds, &recorder.attributes),
            Err(error) => {
                let mut attributes = recorder.attributes.clone();
                attributes.push(KeyValue::new("error.type", error_type(error)));
                recorder.histogram.record(seconds, &attributes);
            }
        }
    }
}

/// The conventions' `error.type` for a failed request: a short, low-cardinality name of the
/// cause, `_OTHER` (the conventions' fallback) for one that could not be sent.
fn error_type(error: &RequestError) -> &'static str {
    match error.cause() {
        Some(RequestCause::TimedOut(_)) => "timeout",
        Some(RequestCause::NoResponders) => "no_responders",
        Some(RequestCause::Closed) => "closed",
        Some(RequestCause::Disconnected) => "disconnected",
        _ => "_OTHER",
    }
}
