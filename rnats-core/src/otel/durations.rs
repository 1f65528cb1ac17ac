//! The operation-duration histograms a client records into while [`observe`] registrations
//! ask for them: held in the client's request table, so that a request learns whether to
//! read the clock under the lock it takes anyway to register. A client without them pays no
//! atomic, no lock and no clock read on a request through the table (a look at an empty
//! `Option`, and at a `bool` in the request's entry when its reply comes); a request with an
//! inbox of its own and a request-many, which subscribe and unsubscribe anyway, take the
//! table's lock once to learn it. A timed request reads the clock when it starts,
//! when its reply comes (in the engine, so that a reply awaited late is not timed late) and
//! takes the table's lock once more at its end, to find the histograms.
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
    /// The registration's attributes, on every point.
    pub(crate) common: Vec<KeyValue>,
    /// The attributes of a request that got its reply (`common` and the request's
    /// operation); a failed one adds `error.type`.
    pub(crate) request: Vec<KeyValue>,
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

/// Whether a request in the table is timed: its reply is stamped with the time it came.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Timed(bool);

impl Timed {
    /// The mark of a request that is not timed.
    #[cfg(test)]
    pub(crate) fn untimed() -> Timed {
        Timed(false)
    }

    /// The time a reply came, read only for a timed request.
    #[inline(always)]
    pub(crate) fn arrival(self) -> Arrival {
        Arrival(self.0.then(Instant::now))
    }
}

/// When a timed request's reply came; `None` for an untimed one, or an answer that is not a
/// reply (its waiter's clock reads the time then).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Arrival(Option<Instant>);

impl Arrival {
    /// No arrival: the answer is not a reply, or the request is not timed.
    #[inline(always)]
    pub(crate) fn none() -> Arrival {
        Arrival(None)
    }
}

/// A request's start, when some registration times it: an `Instant` alone (no drop glue
/// in every request's future); the recorders are looked up again when the request ends.
pub(crate) struct RequestClock(Option<Instant>);

impl RequestClock {
    /// What the request's entry in the table keeps: whether its reply is stamped.
    #[inline(always)]
    pub(crate) fn timed(&self) -> Timed {
        Timed(self.0.is_some())
    }

    /// Records the time from the start to `arrival` (or now) into the `recorders()` of the
    /// moment, as a request, with the `error.type` of `failure()` (the cause, when the request
    /// failed). Neither is called for a request that was not timed. A request dropped before
    /// its answer is not recorded (it has no outcome).
    #[inline(always)]
    pub(crate) fn finish(
        &mut self,
        arrival: Arrival,
        recorders: impl FnOnce() -> Option<Recorders>,
        failure: impl FnOnce() -> Option<RequestCause>,
    ) {
        if let Some(timing) = self.stop(arrival, recorders) {
            timing.record_request(failure().as_ref());
        }
    }

    /// Records as [`RequestClock::finish`] does, as operation `name` (`messaging.operation.name`;
    /// its type is `send`) instead of a request, up to now.
    #[inline(always)]
    pub(crate) fn finish_as(
        &mut self,
        name: &'static str,
        recorders: impl FnOnce() -> Option<Recorders>,
        failure: impl FnOnce() -> Option<RequestCause>,
    ) {
        if let Some(timing) = self.stop(Arrival::default(), recorders) {
            let operation = [
                KeyValue::new("messaging.operation.name", name),
                KeyValue::new("messaging.operation.type", "send"),
            ];
            timing.record(&operation, failure().as_ref().map(error_type));
        }
    }

    /// The request's timing, to record as the caller's operation: `None` when it was not
    /// timed (`recorders` is not called then).
    #[inline(always)]
    pub(crate) fn stop(
        &mut self,
        arrival: Arrival,
        recorders: impl FnOnce() -> Option<Recorders>,
    ) -> Option<OperationTiming> {
        let started = self.0.take()?;
        stopped(started, arrival, recorders)
    }
}

/// Out of line: only a timed request comes here.
#[inline(never)]
fn stopped(
    started: Instant,
    arrival: Arrival,
    recorders: impl FnOnce() -> Option<Recorders>,
) -> Option<OperationTiming> {
    let ended = arrival.0.unwrap_or_else(Instant::now);
    // Taken out of the request table (under its lock) before recording, so that the SDK's
    // work does not hold a lock the engine takes for every reply.
    let recorders = recorders()?;
    Some(OperationTiming {
        started,
        ended,
        recorders,
    })
}

/// How long one operation of an observed client took, from sending to its answer, for the
/// [`OPERATION_DURATION`](super::metrics::OPERATION_DURATION) histograms of the client's
/// registrations: what [`PendingReply::wait_timed`](crate::client::PendingReply::wait_timed)
/// hands back, for a layer above the client (JetStream's publish) to record as its own
/// operation once it knows the outcome. There is one only while some registration of the
/// client records durations; recording it is the caller's choice (dropped, nothing is
/// recorded).
pub struct OperationTiming {
    started: Instant,
    ended: Instant,
    recorders: Recorders,
}

impl OperationTiming {
    /// The time from sending to the answer.
    pub fn duration(&self) -> Duration {
        self.ended.saturating_duration_since(self.started)
    }

    /// This timing, from the start of `first` instead: for an operation that took several
    /// requests (a publish sent again while no stream answered).
    pub fn since_start_of(mut self, first: &OperationTiming) -> OperationTiming {
        self.started = self.started.min(first.started);
        self
    }

    /// Records the duration into every registration's histogram, with the registration's
    /// attributes, then `operation` (`messaging.operation.name`, `messaging.operation.type`,
    /// a low-cardinality `messaging.destination.name`, ...), then `error.type` when
    /// `error_type` names the failure (a short, low-cardinality name, as the conventions
    /// ask).
    pub fn record(self, operation: &[KeyValue], error_type: Option<&str>) {
        let seconds = self.duration().as_secs_f64();
        for recorder in self.recorders.iter() {
            let mut attributes = recorder.common.clone();
            attributes.extend_from_slice(operation);
            if let Some(error_type) = error_type {
                attributes.push(KeyValue::new("error.type", error_type.to_owned()));
            }
            recorder.histogram.record(seconds, &attributes);
        }
    }

    /// Records the duration as a request's, with the cause of its failure if it failed.
    pub(crate) fn record_request(self, failure: Option<&RequestCause>) {
        let seconds = self.duration().as_secs_f64();
        for recorder in self.recorders.iter() {
            match failure {
                None => recorder.histogram.record(seconds, &recorder.request),
                Some(cause) => {
                    let mut attributes = recorder.request.clone();
                    attributes.push(KeyValue::new("error.type", error_type(cause)));
                    recorder.histogram.record(seconds, &attributes);
                }
            }
        }
    }
}

impl std::fmt::Debug for OperationTiming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperationTiming")
            .field("duration", &self.duration())
            .field("recorders", &self.recorders.len())
            .finish()
    }
}

/// The conventions' `error.type` for a failed request: a short, low-cardinality name of the
/// cause.
pub(crate) fn error_type(cause: &RequestCause) -> &'static str {
    match cause {
        RequestCause::TimedOut(_) => "timeout",
        RequestCause::NoResponders => "no_responders",
        RequestCause::Closed => "closed",
        RequestCause::Disconnected => "disconnected",
    }
}
