//! The client's OpenTelemetry hooks without the `opentelemetry` feature: they hand the headers
//! back untouched and hold no span, so each call site compiles to nothing.

use rnats_proto::HeaderMap;

use crate::Client;

/// Stands where the feature keeps its span alive; holds nothing.
pub(crate) struct NoSpan;

/// A publish leaves as it came.
#[inline(always)]
pub(crate) fn publish(
    _client: &Client,
    _subject: &str,
    headers: Option<HeaderMap>,
    _payload_len: usize,
) -> (NoSpan, Option<HeaderMap>) {
    (NoSpan, headers)
}

/// A request leaves as it came.
#[inline(always)]
pub(crate) fn request(
    _client: &Client,
    _subject: &str,
    headers: Option<HeaderMap>,
    _payload_len: usize,
) -> (NoSpan, Option<HeaderMap>) {
    (NoSpan, headers)
}
