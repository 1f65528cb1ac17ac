//! Percentiles of per-operation latencies.

use std::time::Duration;

use serde::Serialize;

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
    /// The slowest sample.
    pub(crate) max_us: f64,
}

impl LatencySummary {
    /// Summarises `samples` (in any order; they are sorted in place). `None` when empty.
    pub(crate) fn from_samples(samples: &mut [Duration]) -> Option<LatencySummary> {
        samples.sort_unstable();
        let (first, last) = (samples.first()?, samples.last()?);
        let total: Duration = samples.iter().sum();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        Some(LatencySummary {
            count: samples.len() as u64,
            min_us: us(*first),
            mean_us: us(total) / samples.len() as f64,
            p50_us: us(percentile(samples, 50.0)?),
            p90_us: us(percentile(samples, 90.0)?),
            p99_us: us(percentile(samples, 99.0)?),
            max_us: us(*last),
        })
    }
}

/// The `p`-th percentile (clamped to 0..=100) of `sorted` by the nearest-rank rule: the
/// smallest sample with at least `p` percent of all samples at or below it.
///
/// Nearest rank never interpolates, so the answer is always a latency that was actually
/// observed. `None` when there are no samples.
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let p = p.clamp(0.0, 100.0);
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|&v| Duration::from_micros(v)).collect()
    }

    #[test]
    fn nearest_rank_on_one_to_hundred() {
        let sorted = micros(&(1..=100).collect::<Vec<_>>());
        assert_eq!(percentile(&sorted, 50.0), Some(Duration::from_micros(50)));
        assert_eq!(percentile(&sorted, 90.0), Some(Duration::from_micros(90)));
        assert_eq!(percentile(&sorted, 99.0), Some(Duration::from_micros(99)));
        assert_eq!(percentile(&sorted, 100.0), Some(Duration::from_micros(100)));
        assert_eq!(percentile(&sorted, 0.0), Some(Duration::from_micros(1)));
    }

    #[test]
    fn percentile_picks_an_observed_value() {
        // With four samples the median by nearest rank is the second one, not 2.5.
        let sorted = micros(&[1, 2, 3, 4]);
        assert_eq!(percentile(&sorted, 50.0), Some(Duration::from_micros(2)));
        assert_eq!(percentile(&sorted, 99.0), Some(Duration::from_micros(4)));
    }

    #[test]
    fn out_of_range_percentiles_are_clamped() {
        let sorted = micros(&[7, 8]);
        assert_eq!(percentile(&sorted, -5.0), Some(Duration::from_micros(7)));
        assert_eq!(percentile(&sorted, 250.0), Some(Duration::from_micros(8)));
    }

    #[test]
    fn empty_input_has_no_percentile() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(LatencySummary::from_samples(&mut []), None);
    }

    #[test]
    fn summary_sorts_and_summarises() {
        let mut samples = micros(&[40, 10, 30, 20]);
        let s = LatencySummary::from_samples(&mut samples).expect("four samples");
        assert_eq!(s.count, 4);
        assert!((s.min_us - 10.0).abs() < 1e-9);
        assert!((s.mean_us - 25.0).abs() < 1e-9);
        assert!((s.p50_us - 20.0).abs() < 1e-9);
        assert!((s.p90_us - 40.0).abs() < 1e-9);
        assert!((s.p99_us - 40.0).abs() < 1e-9);
        assert!((s.max_us - 40.0).abs() < 1e-9);
    }
}
