//! The client's OpenTelemetry hooks without the `opentelemetry` feature: they hand the headers
//! back untouched and hold no span, so each call site compiles to nothing.

use std::sync::atomic::AtomicBool;

use rnats_proto::HeaderMap;

use crate::error::RequestCause;

/// Stands where the feature keeps its span alive; holds nothing.
pub(crate) struct NoSpan;

/// Stands where the feature keeps the headers it made for a message that had none; holds
/// nothing, so an `async fn` keeps nothing for it across an await.
pub(crate) struct NoHeaders;

impl NoHeaders {
    #[inline(always)]
    pub(crate) fn headers(&self) -> Option<&HeaderMap> {
        None
    }
}

/// A publish without headers leaves without them.
#[inline(always)]
pub(crate) fn publish_plain(
    _header_support: &AtomicBool,
    _subject: &str,
    _payload_len: usize,
) -> (NoSpan, NoHeaders) {
    (NoSpan, NoHeaders)
}

/// A publish leaves as it came.
#[inline(always)]
pub(crate) fn publish(
    _header_support: &AtomicBool,
    _subject: &str,
    headers: Option<HeaderMap>,
    _payload_len: usize,
) -> (NoSpan, Option<HeaderMap>) {
    (NoSpan, headers)
}

/// A request leaves as it came.
#[inline(always)]
pub(crate) fn request(
    _header_support: &AtomicBool,
    _subject: &str,
    headers: Option<HeaderMap>,
    _payload_len: usize,
) -> (NoSpan, Option<HeaderMap>) {
    (NoSpan, headers)
}

/// Stands where the feature keeps a client's request-duration histograms; holds nothing.
#[derive(Debug, Default)]
pub(crate) struct RequestDurations;

impl RequestDurations {
    /// A clock that reads no time.
    #[inline(always)]
    pub(crate) fn start(&self) -> RequestClock {
        RequestClock
    }

    /// Nothing to record into (never called: the clock records nothing).
    #[inline(always)]
    pub(crate) fn recorders(&self) {}
}

/// Stands where the feature marks a request in the table as timed; holds nothing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Timed;

impl Timed {
    /// The mark of a request that is not timed.
    #[cfg(test)]
    pub(crate) fn untimed() -> Timed {
        Timed
    }

    /// A reply's arrival, never read.
    #[inline(always)]
    pub(crate) fn arrival(self) -> Arrival {
        Arrival
    }
}

/// Stands where the feature keeps the time a reply came; holds nothing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Arrival;

impl Arrival {
    /// No arrival.
    #[inline(always)]
    pub(crate) fn none() -> Arrival {
        Arrival
    }
}

/// Stands where the feature keeps a request's start; holds nothing.
pub(crate) struct RequestClock;

impl RequestClock {
    /// The clock of a request that is not timed.
    #[inline(always)]
    pub(crate) fn untimed() -> RequestClock {
        RequestClock
    }

    /// Nothing to mark.
    #[inline(always)]
    pub(crate) fn timed(&self) -> Timed {
        Timed
    }

    /// Records nothing, and calls neither closure.
    #[inline(always)]
    pub(crate) fn finish<R>(
        &mut self,
        _arrival: Arrival,
        _recorders: impl FnOnce() -> R,
        _failure: impl FnOnce() -> Option<RequestCause>,
    ) {
    }

    /// Records nothing, and calls neither closure.
    #[inline(always)]
    pub(crate) fn finish_as<R>(
        &mut self,
        _name: &'static str,
        _recorders: impl FnOnce() -> R,
        _failure: impl FnOnce() -> Option<RequestCause>,
    ) {
    }
}
