//! OpenTelemetry for NATS messages (the `opentelemetry` feature): the W3C trace context
//! (`traceparent`, `tracestate`) travels in message headers, and `tracing` spans mark each
//! publish, request and processed message; [`metrics`] reports a client's counters,
//! connection state and request durations as OpenTelemetry instruments.
//!
//! # Sending
//!
//! Every publish and request of the async [`Client`] (`publish*`, `request*`,
//! `send_request`, `start_request`, and so JetStream's publish, which is a request) opens a
//! `tracing` span, a child of the current span:
//!
//! | Span | `otel.kind` | `messaging.operation.type` |
//! |---|---|---|
//! | `publish <subject>` | producer | `send` |
//! | `request <subject>` (it lasts until the reply comes) | client | `send` |
//!
//! (just `publish` for a reply inbox or a JetStream ack, subjects made for one message, which
//! the conventions keep out of span names; `messaging.destination.temporary` marks them)
//!
//! with `messaging.system = "nats"`, `messaging.destination.name`,
//! `messaging.operation.name` and `messaging.message.body.size`, the attributes of
//! OpenTelemetry's messaging conventions. With `tracing-opentelemetry`'s layer installed the
//! spans become OpenTelemetry spans, and the message carries the publish or request span's
//! context in its headers, so whatever the receiver does next is a child of it.
//!
//! Without that layer (or with these spans filtered out: their target is `rnats::otel`,
//! level INFO), the message carries the current OpenTelemetry context instead, if it has a
//! span ([`Context::current`], for applications that use the OpenTelemetry API directly).
//! With no trace active, nothing is added: no header map is made for a message that had
//! none.
//!
//! The headers are W3C trace context, unless the application installed a propagator of its
//! own ([`opentelemetry::global::set_text_map_propagator`]); then that one writes them. A
//! message that already carries one of the propagator's headers (the application set
//! `traceparent` itself) is left as it is. A server without header support gets the
//! message without them.
//!
//! # Receiving
//!
//! Received messages are not wrapped in spans on their own (a span per delivered message
//! would cost every subscriber, traced or not). [`MessageExt`] continues the trace where the
//! application wants it: [`MessageExt::process_span`] gives a `process <subject>` span whose
//! parent is the sender's span, and [`MessageExt::otel_context`] the sender's context
//! itself. JetStream messages deref to a Core [`Message`], so both work on them too.
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use rnats_core::otel::MessageExt;
//! use tracing::Instrument;
//!
//! # async fn run(client: rnats_core::Client) -> Result<(), rnats_core::Error> {
//! let mut requests = client.subscribe("greet").await?;
//! while let Some(request) = requests.next().await {
//!     let span = request.process_span();
//!     async {
//!         // The reply's publish span is a child of the process span, in the caller's trace.
//!         if let Some(reply) = request.reply.clone() {
//!             client.publish(reply, "hello".into()).await?;
//!         }
//!         Ok::<(), rnats_core::Error>(())
//!     }
//!     .instrument(span)
//!     .await?;
//! }
//! # Ok(()) }
//! ```
//!
//! The blocking client and the `Sink` of messages do not add headers on their own; they
//! can carry a trace with [`inject_context`] and `publish_with_headers`.
//!
//! [`Client`]: crate::Client

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::Context;
use opentelemetry::global;
use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::Message;
use crate::header::HeaderMap;

mod durations;
pub mod metrics;

pub(crate) use durations::{
    Arrival, OperationTiming, Recorder, RequestClock, RequestDurations, Timed,
};

/// The W3C header with the trace id, the sender's span id and the sampled flag.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C header with vendors' own trace data, passed on as it came.
pub const TRACESTATE: &str = "tracestate";

/// Continues a trace carried in a received message's headers.
pub trait MessageExt {
    /// The context the sender put in the headers, as a remote parent; an empty context when
    /// the message carries none (or one that does not parse).
    fn otel_context(&self) -> Context;

    /// A new `process <subject>` span (`otel.kind` consumer) whose parent is the sender's
    /// span when the message carries one, and the current span otherwise. Enter it, or
    /// `instrument` a future with it, around the work the message causes.
    fn process_span(&self) -> Span;
}

impl MessageExt for Message {
    fn otel_context(&self) -> Context {
        match &self.headers {
            Some(headers) => extract_context(headers),
            None => Context::new(),
        }
    }

    fn process_span(&self) -> Span {
        let span = tracing::info_span!(
            target: "rnats::otel",
            "process",
            otel.name = %SpanName("process", &self.subject),
            otel.kind = "consumer",
            messaging.system = "nats",
            "messaging.operation.type" = "process",
            messaging.operation.name = "process",
            messaging.destination.name = %self.subject,
            messaging.message.body.size = body_size(self.payload.len()),
        );
        let parent = self.otel_context();
        if parent.span().span_context().is_valid() {
            // Fails only where there is nothing to parent: no OpenTelemetry layer, or the
            // span filtered out. The span is still the caller's to use.
            span.set_parent(parent).ok();
        }
        span
    }
}

/// Writes `cx`'s span context into `headers`, with the installed propagator or W3C trace
/// context. Does nothing when `cx` has no valid span, or when `headers` already holds one
/// of the propagator's headers.
pub fn inject_context(cx: &Context, headers: &mut HeaderMap) {
    if !cx.span().span_context().is_valid() {
        return;
    }
    let installed = global::get_text_map_propagator(|propagator| {
        if propagator.fields().next().is_none() {
            // The global default, which propagates nothing: use W3C below.
            return false;
        }
        if !propagator.fields().any(|field| has_header(headers, field)) {
            propagator.inject_context(cx, &mut HeaderInjector(headers));
        }
        true
    });
    if !installed && !has_header(headers, TRACEPARENT) && !has_header(headers, TRACESTATE) {
        inject_w3c(cx.span().span_context(), headers);
    }
}

/// Reads a context from `headers`, with the installed propagator or W3C trace context; an
/// empty context when they carry none that parses.
pub fn extract_context(headers: &HeaderMap) -> Context {
    let installed = global::get_text_map_propagator(|propagator| {
        (propagator.fields().next().is_some())
            .then(|| propagator.extract_with_context(&Context::new(), &HeaderExtractor(headers)))
    });
    match installed {
        Some(cx) => cx,
        None => match extract_w3c(headers) {
            Some(span_context) => Context::new().with_remote_span_context(span_context),
            None => Context::new(),
        },
    }
}

/// A [`HeaderMap`] as an OpenTelemetry carrier to write into, for a propagator of the
/// application's choosing.
#[derive(Debug)]
pub struct HeaderInjector<'a>(pub &'a mut HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        // A value a propagator made that is not valid header text is left out rather than
        // remembered by the map, which would fail the publish.
        self.0.try_insert(key, value).ok();
    }
}

/// A [`HeaderMap`] as an OpenTelemetry carrier to read from. Names match exactly first and
/// then ignoring ASCII case, since HTTP gateways may spell `traceparent` `Traceparent`.
#[derive(Debug)]
pub struct HeaderExtractor<'a>(pub &'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        header_value(self.0, key)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(name, _)| name.as_str()).collect()
    }
}

/// Which kind of outgoing message a span is for.
#[derive(Clone, Copy)]
enum Operation {
    Publish,
    Request,
}

/// The headers made for a message that had none: the trace context, or nothing.
pub(crate) struct TraceHeaders(Option<HeaderMap>);

impl TraceHeaders {
    pub(crate) fn headers(&self) -> Option<&HeaderMap> {
        self.0.as_ref()
    }
}

/// The hook for a publish without headers: its span, and headers with the trace context.
#[inline]
pub(crate) fn publish_plain(
    header_support: &AtomicBool,
    subject: &str,
    payload_len: usize,
) -> (Span, TraceHeaders) {
    let (span, headers) = outgoing(
        header_support,
        Operation::Publish,
        subject,
        None,
        payload_len,
    );
    (span, TraceHeaders(headers))
}

/// The hook for a publish: its span, and `headers` with the trace context added.
#[inline]
pub(crate) fn publish(
    header_support: &AtomicBool,
    subject: &str,
    headers: Option<HeaderMap>,
    payload_len: usize,
) -> (Span, Option<HeaderMap>) {
    outgoing(
        header_support,
        Operation::Publish,
        subject,
        headers,
        payload_len,
    )
}

/// The hook for a request: its span (kept until the reply comes), and `headers` with the
/// trace context added.
#[inline]
pub(crate) fn request(
    header_support: &AtomicBool,
    subject: &str,
    headers: Option<HeaderMap>,
    payload_len: usize,
) -> (Span, Option<HeaderMap>) {
    outgoing(
        header_support,
        Operation::Request,
        subject,
        headers,
        payload_len,
    )
}

fn outgoing(
    header_support: &AtomicBool,
    operation: Operation,
    subject: &str,
    headers: Option<HeaderMap>,
    payload_len: usize,
) -> (Span, Option<HeaderMap>) {
    let span = match operation {
        Operation::Publish => tracing::info_span!(
            target: "rnats::otel",
            "publish",
            otel.name = %SpanName("publish", subject),
            otel.kind = "producer",
            messaging.system = "nats",
            "messaging.operation.type" = "send",
            messaging.operation.name = "publish",
            messaging.destination.name = subject,
            messaging.destination.temporary = is_temporary(subject),
            messaging.message.body.size = body_size(payload_len),
        ),
        Operation::Request => tracing::info_span!(
            target: "rnats::otel",
            "request",
            otel.name = %SpanName("request", subject),
            otel.kind = "client",
            messaging.system = "nats",
            "messaging.operation.type" = "send",
            messaging.operation.name = "request",
            messaging.destination.name = subject,
            messaging.message.body.size = body_size(payload_len),
        ),
    };
    let Some(cx) = sending_context(&span) else {
        return (span, headers);
    };
    if !header_support.load(Ordering::Relaxed) {
        return (span, headers);
    }
    let mut headers = headers.unwrap_or_default();
    inject_context(&cx, &mut headers);
    (span, Some(headers))
}

/// The context a message goes out in: its own span's when the OpenTelemetry layer made one,
/// otherwise whatever the OpenTelemetry API has current; `None` with no trace active. The
/// untraced case is every publish's: it only checks, and clones nothing.
fn sending_context(span: &Span) -> Option<Context> {
    if !span.is_disabled() {
        let cx = span.context();
        if cx.span().span_context().is_valid() {
            return Some(cx);
        }
    }
    Context::map_current(|cx| cx.span().span_context().is_valid().then(|| cx.clone()))
}

/// A size as OpenTelemetry's integer attribute type: `tracing` hands an unsigned field to the
/// layer as text.
fn body_size(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// A span's name: the operation and, as OpenTelemetry's messaging conventions ask, the
/// subject only where it names a lasting destination. Reply inboxes and JetStream's ack and
/// flow-control subjects are new for each message, and would make a span name per message.
struct SpanName<'a>(&'static str, &'a str);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let SpanName(operation, subject) = self;
        match is_temporary(subject) {
            true => f.write_str(operation),
            false => write!(f, "{operation} {subject}"),
        }
    }
}

/// A subject made for one message or one exchange: a reply inbox (every NATS client's default
/// `_INBOX.` prefix), a JetStream ack or flow-control subject.
fn is_temporary(subject: &str) -> bool {
    ["_INBOX.", "$JS.ACK.", "$JS.FC."]
        .iter()
        .any(|prefix| subject.starts_with(prefix))
}

fn has_header(headers: &HeaderMap, name: &str) -> bool {
    header_value(headers, name).is_some()
}

fn header_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    if let Some(value) = headers.get(name) {
        return Some(value.as_str());
    }
    headers
        .iter()
        .find(|(found, _)| found.as_str().eq_ignore_ascii_case(name))
        .and_then(|(_, values)| values.first())
        .map(|value| value.as_str())
}

/// `traceparent` (version 00: only the sampled flag is defined) and, when there is one,
/// `tracestate`.
fn inject_w3c(span_context: &SpanContext, headers: &mut HeaderMap) {
    let flags = span_context.trace_flags().to_u8() & TraceFlags::SAMPLED.to_u8();
    let traceparent = format!(
        "00-{:032x}-{:016x}-{flags:02x}",
        span_context.trace_id(),
        span_context.span_id()
    );
    headers.insert(TRACEPARENT, traceparent);
    let tracestate = span_context.trace_state().header();
    if !tracestate.is_empty() {
        // Vendors' text the map refuses (a line break) is dropped, not sent.
        headers.try_insert(TRACESTATE, tracestate).ok();
    }
}

/// The remote span context in `traceparent` (and `tracestate`), following the W3C parsing
/// rules: unknown later versions are read for their first four fields, version `ff` and
/// all-zero ids are refused, and a `tracestate` that does not parse is dropped while the
/// `traceparent` is kept.
fn extract_w3c(headers: &HeaderMap) -> Option<SpanContext> {
    let (trace_id, span_id, flags) = parse_traceparent(header_value(headers, TRACEPARENT)?)?;
    let trace_state = tracestate_of(headers)
        .and_then(|text| TraceState::from_str(&text).ok())
        .unwrap_or_default();
    Some(SpanContext::new(
        trace_id,
        span_id,
        flags,
        true,
        trace_state,
    ))
}

fn parse_traceparent(value: &str) -> Option<(TraceId, SpanId, TraceFlags)> {
    let mut fields = value.trim().split('-');
    let version = fields.next()?;
    let trace_id = fields.next()?;
    let span_id = fields.next()?;
    let flags = fields.next()?;
    if !is_lower_hex(version, 2) || version == "ff" {
        return None;
    }
    // Version 00 has exactly four fields; a later one may append more after a dash.
    if version == "00" && fields.next().is_some() {
        return None;
    }
    if !is_lower_hex(trace_id, 32) || !is_lower_hex(span_id, 16) || !is_lower_hex(flags, 2) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    let flags = u8::from_str_radix(flags, 16).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = TraceFlags::new(flags & TraceFlags::SAMPLED.to_u8());
    Some((trace_id, span_id, flags))
}

/// Every `tracestate` value, joined as one list: the header may be split over several lines.
fn tracestate_of(headers: &HeaderMap) -> Option<String> {
    let mut values = headers.get_all(TRACESTATE).map(|value| value.as_str());
    let first = match values.next() {
        Some(first) => first,
        None => header_value(headers, TRACESTATE)?,
    };
    Some(values.fold(first.to_owned(), |mut joined, value| {
        joined.push(',');
        joined.push_str(value);
        joined
    }))
}

fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, *value);
        }
        map
    }

    #[test]
    fn reads_a_traceparent_and_its_tracestate() {
        let map = headers(&[
            (TRACEPARENT, PARENT),
            (TRACESTATE, "rojo=00f067aa0ba902b7"),
            (TRACESTATE, "congo=t61rcWkgMzE"),
        ]);
        let Some(found) = extract_w3c(&map) else {
            panic!("no span context in {map:?}");
        };
        assert_eq!(
            format!("{:032x}", found.trace_id()),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(format!("{:016x}", found.span_id()), "b7ad6b7169203331");
        assert!(found.is_sampled());
        assert!(found.is_remote());
        assert_eq!(found.trace_state().get("rojo"), Some("00f067aa0ba902b7"));
        assert_eq!(found.trace_state().get("congo"), Some("t61rcWkgMzE"));
    }

    #[test]
    fn writes_what_it_reads() {
        let map = headers(&[(TRACEPARENT, PARENT), (TRACESTATE, "rojo=00f067aa0ba902b7")]);
        let Some(found) = extract_w3c(&map) else {
            panic!("no span context in {map:?}");
        };
        let mut written = HeaderMap::new();
        inject_w3c(&found, &mut written);
        assert_eq!(written.get(TRACEPARENT).map(|v| v.as_str()), Some(PARENT));
        assert_eq!(
            written.get(TRACESTATE).map(|v| v.as_str()),
            Some("rojo=00f067aa0ba902b7")
        );
    }

    #[test]
    fn refuses_malformed_traceparents() {
        let bad = [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01",
            "0-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333g-01",
        ];
        for value in bad {
            assert!(parse_traceparent(value).is_none(), "accepted {value:?}");
        }
    }

    #[test]
    fn reads_a_later_version_for_its_first_four_fields() {
        let value = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03-more";
        let Some((_, _, flags)) = parse_traceparent(value) else {
            panic!("refused {value:?}");
        };
        // Only the sampled flag is known; the others are not passed on.
        assert_eq!(flags, TraceFlags::SAMPLED);
    }

    #[test]
    fn finds_names_in_another_case() {
        let map = headers(&[("Traceparent", PARENT)]);
        assert!(extract_w3c(&map).is_some());
    }

    #[test]
    fn keeps_a_traceparent_the_application_set() {
        let Some(found) = extract_w3c(&headers(&[(TRACEPARENT, PARENT)])) else {
            panic!("no span context");
        };
        let other = "00-11111111111111111111111111111111-2222222222222222-00";
        let mut map = headers(&[(TRACEPARENT, other)]);
        let cx = Context::new().with_remote_span_context(found);
        inject_context(&cx, &mut map);
        assert_eq!(map.get(TRACEPARENT).map(|v| v.as_str()), Some(other));
    }

    #[test]
    fn adds_nothing_without_a_span() {
        let mut map = HeaderMap::new();
        inject_context(&Context::new(), &mut map);
        assert!(map.is_empty());
    }

    #[test]
    fn a_bad_tracestate_keeps_the_traceparent() {
        let map = headers(&[(TRACEPARENT, PARENT), (TRACESTATE, "not a list=")]);
        let Some(found) = extract_w3c(&map) else {
            panic!("the traceparent was dropped");
        };
        assert_eq!(found.trace_state().header(), "");
    }
}
