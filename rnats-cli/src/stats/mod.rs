//! Figures computed from a benchmark run: message rates, latency percentiles, and the way
//! they are written for people.
//!
//! Nothing here touches the network or reads a clock: workers hand in [`Span`]s and record
//! the [`Duration`](std::time::Duration)s they measured, and these types only do arithmetic.

pub(crate) mod human;
mod latency;
mod throughput;

pub(crate) use human::{count, latency_us, mb_per_sec, per_sec, size};
pub(crate) use latency::{LADDER, Latencies, LatencySummary};
pub(crate) use throughput::{Span, Throughput};
