//! Order statistics over samples: medians across rounds, percentiles across requests.

use std::time::Duration;

/// The median of `values`, or `None` when there are none. With an even count it is the mean of
/// the two middle values. NaNs sort last, so one bad sample cannot poison the middle.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let sorted = sorted(values);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        Some(sorted[mid])
    } else {
        Some((sorted[mid - 1] + sorted[mid]) / 2.0)
    }
}

/// The `p`-th percentile (0..=100) by the nearest-rank rule: the smallest sample with at least
/// `p` percent of the samples at or below it. Nearest rank always returns a value that was
/// actually observed, which is what a latency percentile should be.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let sorted = sorted(values);
    let p = p.clamp(0.0, 100.0);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Latency percentiles of one run, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
}

impl Latency {
    /// Summarises per-operation timings; `None` when there are none.
    pub fn from_durations(samples: &[Duration]) -> Option<Latency> {
        let micros: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        Some(Latency {
            p50_us: percentile(&micros, 50.0)?,
            p99_us: percentile(&micros, 99.0)?,
        })
    }
}

/// Operations per second and payload megabytes (10^6 bytes) per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    /// Messages (or requests) per second.
    pub per_sec: f64,
    /// Payload bytes per second, in MB/s.
    pub mb_per_sec: f64,
}

impl Throughput {
    /// `count` operations of `payload_len` bytes each, done in `elapsed`.
    pub fn new(count: usize, payload_len: usize, elapsed: Duration) -> Throughput {
        // A zero elapsed time only happens with a count of zero or one; avoid dividing by zero.
        let secs = elapsed.as_secs_f64().max(1e-9);
        Throughput {
            per_sec: count as f64 / secs,
            mb_per_sec: (count * payload_len) as f64 / secs / 1e6,
        }
    }
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn median_ignores_input_order() {
        assert_eq!(median(&[10.0, 50.0, 30.0, 20.0, 40.0]), Some(30.0));
    }

    #[test]
    fn percentile_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 50.0), Some(50.0));
        assert_eq!(percentile(&values, 99.0), Some(99.0));
        assert_eq!(percentile(&values, 100.0), Some(100.0));
        assert_eq!(percentile(&values, 0.0), Some(1.0));
        // With few samples p99 is the largest one.
        assert_eq!(percentile(&[5.0, 1.0, 3.0], 99.0), Some(5.0));
        assert_eq!(percentile(&[5.0, 1.0, 3.0], 50.0), Some(3.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn latency_in_microseconds() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        let latency = Latency::from_durations(&samples).expect("samples");
        assert!((latency.p50_us - 50.0).abs() < 1e-9);
        assert!((latency.p99_us - 99.0).abs() < 1e-9);
        assert_eq!(Latency::from_durations(&[]), None);
    }

    #[test]
    fn throughput_rates() {
        let t = Throughput::new(1_000_000, 32, Duration::from_secs(2));
        assert!((t.per_sec - 500_000.0).abs() < 1e-6);
        assert!((t.mb_per_sec - 16.0).abs() < 1e-9);
        let zero = Throughput::new(0, 32, Duration::ZERO);
        assert_eq!(zero.per_sec, 0.0);
    }
}
