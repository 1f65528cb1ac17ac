//! Per-operation latencies, recorded into an HdrHistogram: constant memory however long the
//! run, every percentile within 0.1% of the exact value.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// The slowest latency told apart from the others: an hour, in nanoseconds. Slower ones
/// are recorded as an hour (a benchmark operation that slow has failed anyway).
const HIGHEST_NS: u64 = 3_600 * 1_000_000_000;
/// Significant digits kept: 3 (values within 0.1%), HdrHistogram's usual precision.
const SIGNIFICANT_DIGITS: u8 = 3;

/// The percentiles of the terminal ladder and the plot, as fractions.
pub(crate) const LADDER: [f64; 8] = [0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0];

/// Latencies recorded one by one, in nanoseconds.
#[derive(Debug, Clone)]
pub(crate) struct Latencies(Histogram<u64>);

impl Default for Latencies {
    fn default() -> Latencies {
        Latencies::new()
    }
}

impl Latencies {
    /// An empty record (about 270 KiB, whatever the number of samples).
    pub(crate) fn new() -> Latencies {
        // The bounds are constants that HdrHistogram accepts (1 <= low, high >= 2 * low,
        // digits <= 5), so this cannot fail; an unbounded one is the fallback regardless.
        let histogram = Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .or_else(|_| Histogram::new(SIGNIFICANT_DIGITS))
            .unwrap_or_else(|_| unreachable!("3 significant digits are always accepted"));
        Latencies(histogram)
    }

    /// Records one latency.
    pub(crate) fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.0.saturating_record(ns.max(1));
    }

    /// Adds every sample of `other`.
    pub(crate) fn merge(&mut self, other: &Latencies) {
        // Both have the same bounds, the only way `add` can fail.
        let _ = self.0.add(&other.0);
    }

    /// How many latencies were recorded.
    pub(crate) fn count(&self) -> u64 {
        self.0.len()
    }

    /// The latency at `quantile` (0.0 to 1.0), in microseconds.
    pub(crate) fn quantile_us(&self, quantile: f64) -> f64 {
        ns_to_us(self.0.value_at_quantile(quantile.clamp(0.0, 1.0)))
    }

    /// The summary: `None` when nothing was recorded.
    pub(crate) fn summary(&self) -> Option<LatencySummary> {
        if self.0.is_empty() {
            return None;
        }
        let h = &self.0;
        Some(LatencySummary {
            count: h.len(),
            min_us: ns_to_us(h.min()),
            mean_us: h.mean() / 1e3,
            p50_us: self.quantile_us(0.5),
            p90_us: self.quantile_us(0.9),
            p99_us: self.quantile_us(0.99),
            p99_9_us: self.quantile_us(0.999),
            max_us: ns_to_us(h.max()),
            stddev_us: h.stdev() / 1e3,
        })
    }

    /// The latency distribution for a plot: (quantile, microseconds) at every percentile
    /// step HdrHistogram reports, halving the distance to 100% five times per decade.
    pub(crate) fn distribution(&self) -> Vec<(f64, f64)> {
        self.0
            .iter_quantiles(5)
            .map(|step| {
                (
                    step.quantile_iterated_to(),
                    ns_to_us(step.value_iterated_to()),
                )
            })
            .collect()
    }
}

/// The distribution of a set of latencies, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct LatencySummary {
    /// How many samples there were.
    pub(crate) count: u64,
    /// The fastest sample.
    pub(crate) min_us: f64,
    /// The arithmetic mean.
    pub(crate) mean_us: f64,
    /// The median.
    pub(crate) p50_us: f64,
    /// The 90th percentile.
    pub(crate) p90_us: f64,
    /// The 99th percentile.
    pub(crate) p99_us: f64,
    /// The 99.9th percentile.
    pub(crate) p99_9_us: f64,
    /// The slowest sample.
    pub(crate) max_us: f64,
    /// The standard deviation.
    pub(crate) stddev_us: f64,
}

/// Nanoseconds as microseconds.
fn ns_to_us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(micros: impl IntoIterator<Item = u64>) -> Latencies {
        let mut latencies = Latencies::new();
        for us in micros {
            latencies.record(Duration::from_micros(us));
        }
        latencies
    }

    /// `a` and `b` agree within HdrHistogram's 0.1%.
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= b.abs() * 1e-3 + 1e-9
    }

    #[test]
    fn percentiles_of_one_to_hundred() {
        let s = recorded(1..=100).summary().expect("samples");
        assert_eq!(s.count, 100);
        assert!(close(s.min_us, 1.0) && close(s.max_us, 100.0), "{s:?}");
        assert!(close(s.p50_us, 50.0), "{s:?}");
        assert!(close(s.p90_us, 90.0), "{s:?}");
        assert!(close(s.p99_us, 99.0), "{s:?}");
        assert!(close(s.mean_us, 50.5), "{s:?}");
    }

    #[test]
    fn memory_does_not_grow_with_samples() {
        let mut latencies = Latencies::new();
        let before = latencies.0.distinct_values();
        for i in 0..1_000_000u64 {
            latencies.record(Duration::from_nanos(1_000 + i % 5_000));
        }
        assert_eq!(latencies.count(), 1_000_000);
        assert_eq!(latencies.0.distinct_values(), before);
    }

    #[test]
    fn merging_adds_the_samples() {
        let mut a = recorded([10, 20]);
        a.merge(&recorded([30, 40]));
        let s = a.summary().expect("samples");
        assert_eq!(s.count, 4);
        assert!(close(s.max_us, 40.0) && close(s.min_us, 10.0), "{s:?}");
    }

    #[test]
    fn empty_has_no_summary_and_extremes_are_clamped() {
        assert_eq!(Latencies::new().summary(), None);
        let s = recorded([0]).summary().expect("one sample");
        assert!(close(s.min_us, 0.001), "{s:?}");
        let mut huge = Latencies::new();
        huge.record(Duration::from_secs(10 * 3600));
        let s = huge.summary().expect("one sample");
        assert!(s.max_us <= 3_600e6 * 1.001, "{s:?}");
    }

    #[test]
    fn distribution_rises_to_the_maximum() {
        let points = recorded(1..=1000).distribution();
        assert!(points.len() > 10);
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
        );
        let last = points.last().expect("points");
        assert!(close(last.0, 1.0) && close(last.1, 1000.0), "{last:?}");
    }
}
