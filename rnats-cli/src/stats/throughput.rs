//! Message and byte rates of one client, or of several clients taken together.

use std::time::Instant;

use serde::Serialize;

/// Bytes in the megabyte of "MB/s": decimal, as network throughput is usually quoted.
const BYTES_PER_MB: f64 = 1_000_000.0;

/// What one client moved, and between which two instants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Messages (or requests) counted.
    pub(crate) msgs: u64,
    /// Payload bytes counted.
    pub(crate) bytes: u64,
    /// When the client started (its first publish, or its first received message).
    pub(crate) start: Instant,
    /// When the client was done (flush returned, or the last message arrived).
    pub(crate) end: Instant,
}

impl Span {
    /// `msgs` messages of `payload_len` bytes each, moved from `start` to `end`.
    pub(crate) fn of(msgs: u64, payload_len: usize, start: Instant, end: Instant) -> Span {
        Span {
            msgs,
            bytes: msgs.saturating_mul(payload_len as u64),
            start,
            end,
        }
    }
}

/// Rates over one span of time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Throughput {
    /// Messages counted.
    pub(crate) msgs: u64,
    /// Payload bytes counted.
    pub(crate) bytes: u64,
    /// Length of the span, in seconds.
    pub(crate) seconds: f64,
    /// Messages per second.
    pub(crate) msgs_per_sec: f64,
    /// Payload megabytes (10^6 bytes) per second.
    pub(crate) mb_per_sec: f64,
}

impl Throughput {
    /// The rates of one client over its own span.
    pub(crate) fn of(span: &Span) -> Throughput {
        let seconds = span.end.saturating_duration_since(span.start).as_secs_f64();
        Throughput::over(span.msgs, span.bytes, seconds)
    }

    /// The rates of several clients taken together: everything they moved, over the time
    /// from the earliest start to the latest end. `None` when there are no spans.
    ///
    /// Summing per-client rates instead would overstate the total whenever the clients did
    /// not run exactly side by side.
    pub(crate) fn aggregate(spans: &[Span]) -> Option<Throughput> {
        let start = spans.iter().map(|s| s.start).min()?;
        let end = spans.iter().map(|s| s.end).max()?;
        let msgs = spans.iter().map(|s| s.msgs).sum();
        let bytes = spans.iter().map(|s| s.bytes).sum();
        let seconds = end.saturating_duration_since(start).as_secs_f64();
        Some(Throughput::over(msgs, bytes, seconds))
    }

    /// Rates for `msgs` and `bytes` over `seconds`; zero when no time passed, so the
    /// figures stay finite (JSON has no infinity).
    fn over(msgs: u64, bytes: u64, seconds: f64) -> Throughput {
        let (msgs_per_sec, mb_per_sec) = if seconds > 0.0 {
            (msgs as f64 / seconds, bytes as f64 / BYTES_PER_MB / seconds)
        } else {
            (0.0, 0.0)
        };
        Throughput {
            msgs,
            bytes,
            seconds,
            msgs_per_sec,
            mb_per_sec,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn span(start: Instant, from_ms: u64, to_ms: u64, msgs: u64, bytes: u64) -> Span {
        Span {
            msgs,
            bytes,
            start: start + Duration::from_millis(from_ms),
            end: start + Duration::from_millis(to_ms),
        }
    }

    #[test]
    fn one_client_rates() {
        let t0 = Instant::now();
        let t = Throughput::of(&span(t0, 0, 500, 1_000, 2_000_000));
        assert!((t.seconds - 0.5).abs() < 1e-9);
        assert!((t.msgs_per_sec - 2_000.0).abs() < 1e-6);
        assert!((t.mb_per_sec - 4.0).abs() < 1e-9);
    }

    #[test]
    fn aggregate_covers_earliest_start_to_latest_end() {
        let t0 = Instant::now();
        let spans = [span(t0, 0, 1_000, 100, 100), span(t0, 500, 2_000, 300, 300)];
        let t = Throughput::aggregate(&spans).expect("two spans");
        assert_eq!(t.msgs, 400);
        assert_eq!(t.bytes, 400);
        assert!((t.seconds - 2.0).abs() < 1e-9);
        assert!((t.msgs_per_sec - 200.0).abs() < 1e-6);
    }

    #[test]
    fn aggregate_of_nothing_is_none() {
        assert_eq!(Throughput::aggregate(&[]), None);
    }

    #[test]
    fn zero_length_span_gives_zero_rates_not_infinity() {
        let t0 = Instant::now();
        let t = Throughput::of(&span(t0, 0, 0, 5, 5));
        assert_eq!(t.msgs_per_sec, 0.0);
        assert_eq!(t.mb_per_sec, 0.0);
    }
}
