//! The duration of a JetStream publish, from sending to the stream's ack (or its failure),
//! recorded into the client's `messaging.client.operation.duration` histograms (rnats-core's
//! `otel::metrics`) with the `opentelemetry` feature, and compiled to nothing without it.
//!
//! The core times the publish's request from sending to the ack's arrival (stamped when it
//! comes, so an ack awaited late is not timed late) and hands the timing back instead of
//! recording it as a request; this records it as a publish, with the stream the ack names.
//! Only a client with a registration that times operations reads a clock: otherwise the
//! timing is `None`, and a publish pays one look at it.

use std::time::Duration;

use rnats_core::client::PendingReply;

use crate::publish::{PublishAck, PublishError};

#[cfg(feature = "opentelemetry")]
use crate::publish::PublishErrorKind;
#[cfg(feature = "opentelemetry")]
use opentelemetry::KeyValue;
#[cfg(feature = "opentelemetry")]
use rnats_core::otel::metrics::OperationTiming;

/// A publish's timing: `None` when no registration times the client's operations (and an
/// empty type without the `opentelemetry` feature).
pub(crate) struct AckTiming(#[cfg(feature = "opentelemetry")] Option<OperationTiming>);

/// Waits for the ack of one publish, up to `timeout`, with its timing.
#[inline]
pub(crate) async fn wait_ack(
    reply: PendingReply,
    timeout: Duration,
) -> (
    Result<rnats_core::Message, rnats_core::RequestError>,
    AckTiming,
) {
    #[cfg(feature = "opentelemetry")]
    {
        let (reply, timing) = reply.wait_timed(Some(timeout)).await;
        (reply, AckTiming(timing))
    }
    #[cfg(not(feature = "opentelemetry"))]
    (reply.wait(Some(timeout)).await, AckTiming())
}

impl AckTiming {
    /// No timing: the stand-in while a retried publish's is being replaced.
    #[inline(always)]
    pub(crate) fn none() -> AckTiming {
        #[cfg(feature = "opentelemetry")]
        return AckTiming(None);
        #[cfg(not(feature = "opentelemetry"))]
        AckTiming()
    }

    /// Whether the publish is timed: its result is worth decoding for the record.
    #[inline(always)]
    pub(crate) fn is_timed(&self) -> bool {
        #[cfg(feature = "opentelemetry")]
        return self.0.is_some();
        #[cfg(not(feature = "opentelemetry"))]
        false
    }

    /// The timing of a publish sent again (`later`), counted from this first send.
    #[inline(always)]
    pub(crate) fn then(self, later: AckTiming) -> AckTiming {
        #[cfg(feature = "opentelemetry")]
        return match (self.0, later.0) {
            (Some(first), Some(later)) => AckTiming(Some(later.since_start_of(&first))),
            (first, later) => AckTiming(later.or(first)),
        };
        #[cfg(not(feature = "opentelemetry"))]
        {
            let _ = self;
            later
        }
    }

    /// Records the publish with its outcome, if it is timed.
    #[inline(always)]
    pub(crate) fn record(self, result: &Result<PublishAck, PublishError>) {
        #[cfg(feature = "opentelemetry")]
        if let Some(timing) = self.0 {
            record(timing, result);
        }
        #[cfg(not(feature = "opentelemetry"))]
        let _ = (self, result);
    }
}

/// Out of line: only a timed publish comes here.
#[cfg(feature = "opentelemetry")]
#[inline(never)]
fn record(timing: OperationTiming, result: &Result<PublishAck, PublishError>) {
    let mut operation = vec![
        KeyValue::new("messaging.operation.name", "publish"),
        KeyValue::new("messaging.operation.type", "send"),
    ];
    match result {
        Ok(ack) => {
            // The stream is the destination that stored the message, and has the low
            // cardinality the conventions ask of `messaging.destination.name` on a metric
            // (the subject may not: one per order, per device...).
            if !ack.stream.is_empty() {
                operation.push(KeyValue::new(
                    "messaging.destination.name",
                    ack.stream.clone(),
                ));
            }
            timing.record(&operation, None);
        }
        Err(error) => timing.record(&operation, Some(error_type(error.kind()))),
    }
}

/// The conventions' `error.type` of a failed publish: a short, low-cardinality name of its
/// kind.
#[cfg(feature = "opentelemetry")]
fn error_type(kind: PublishErrorKind) -> &'static str {
    match kind {
        PublishErrorKind::StreamNotFound => "stream_not_found",
        PublishErrorKind::WrongLastMessageId => "wrong_last_message_id",
        PublishErrorKind::WrongLastSequence => "wrong_last_sequence",
        PublishErrorKind::TimedOut => "timeout",
        PublishErrorKind::BrokenPipe => "broken_pipe",
        PublishErrorKind::MaxAckPending => "max_ack_pending",
        PublishErrorKind::MaxPayloadExceeded => "max_payload_exceeded",
        PublishErrorKind::Other => "_OTHER",
    }
}
