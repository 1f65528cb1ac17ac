//! The result of a run: a JSON object with `--json`, tables and a percentile ladder
//! otherwise.

use std::fmt;

use comfy_table::{CellAlignment, Table, presets};
use serde::Serialize;

use super::BenchKind;
use crate::stats::{self, LADDER, Latencies, LatencySummary, Span, Throughput};

/// The report's `runtime` of a `--blocking` run: no runtime, the blocking client.
pub(super) const BLOCKING: &str = "blocking";
/// A rate over time: (seconds from the start, messages a second over the tick before).
pub(super) type Timeline = Vec<(f64, f64)>;

/// The widest bar of the percentile ladder, in characters.
const BAR_WIDTH: f64 = 40.0;

/// Everything a run measured, and what it was asked to do.
#[derive(Debug, Clone, Serialize)]
pub(super) struct BenchReport {
    /// Which benchmark ran.
    pub(super) kind: BenchKind,
    /// The server's URL.
    pub(super) server: String,
    /// Whether the server was started for this run.
    pub(super) private_server: bool,
    /// The tokio runtime the clients ran on ([`RuntimeFlavor::name`]), or [`BLOCKING`].
    ///
    /// [`RuntimeFlavor::name`]: super::RuntimeFlavor::name
    pub(super) runtime: &'static str,
    /// Payload bytes per message.
    pub(super) msg_size: usize,
    /// The number of messages (`--msgs`, or derived from `--throughput` and `--duration`).
    pub(super) msgs: u64,
    /// The `--clients` value.
    pub(super) clients: usize,
    /// The figures, at the top level of the JSON object.
    #[serde(flatten)]
    pub(super) figures: Figures,
}

/// The figures of one run; each benchmark fills in the parts it measures.
#[derive(Debug, Clone, Default, Serialize)]
pub(super) struct Figures {
    /// Publishing clients (`pub`, `pubsub`, `js-pub`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) publishers: Option<Group>,
    /// Subscribing clients (`sub`, `pubsub`, `js-fetch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) subscribers: Option<Group>,
    /// Requesting clients (`req`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) requesters: Option<Group>,
    /// Responding clients (`reply`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) responders: Option<Group>,
    /// The publish-flush-receive client (`lat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) round_trips: Option<Group>,
    /// Clients putting keys (`kv-put`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) putters: Option<Group>,
    /// Clients getting keys (`kv-get`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) getters: Option<Group>,
    /// Per-operation latency of all clients together (runs that time each operation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) latency: Option<LatencySummary>,
    /// Per-operation latency of each client, in the order of the timed group's clients.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) client_latency: Vec<LatencySummary>,
    /// Every client's latencies together, for the ladder and the plot.
    #[serde(skip)]
    pub(super) histogram: Option<Latencies>,
    /// The rate over time: (seconds from the start, messages a second over the tick before).
    #[serde(skip)]
    pub(super) timeline: Timeline,
}

/// The clients of one role: each on its own, and all together.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Group {
    /// All clients together, from the earliest start to the latest end.
    pub(super) aggregate: Throughput,
    /// Each client, in the order they were connected.
    pub(super) clients: Vec<Throughput>,
}

impl Group {
    /// The group measured by `spans`; `None` when there are none.
    pub(super) fn from_spans(spans: &[Span]) -> Option<Group> {
        Some(Group {
            aggregate: Throughput::aggregate(spans)?,
            clients: spans.iter().map(Throughput::of).collect(),
        })
    }
}

impl Figures {
    /// Sets the latency figures from each client's record.
    pub(super) fn timed(mut self, per_client: &[Latencies]) -> Figures {
        let mut all = Latencies::new();
        for latencies in per_client {
            all.merge(latencies);
        }
        self.latency = all.summary();
        self.client_latency = per_client.iter().filter_map(Latencies::summary).collect();
        self.histogram = (all.count() > 0).then_some(all);
        self
    }

    /// Sets the rate over time.
    pub(super) fn over_time(mut self, timeline: Timeline) -> Figures {
        self.timeline = timeline;
        self
    }

    /// The groups that were measured, with the role each plays.
    pub(super) fn groups(&self) -> impl Iterator<Item = (&'static str, &Group)> {
        [
            ("publishers", &self.publishers),
            ("subscribers", &self.subscribers),
            ("requesters", &self.requesters),
            ("responders", &self.responders),
            ("round trips", &self.round_trips),
            ("putters", &self.putters),
            ("getters", &self.getters),
        ]
        .into_iter()
        .filter_map(|(role, group)| Some((role, group.as_ref()?)))
    }
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clients = if self.clients == 1 {
            "client"
        } else {
            "clients"
        };
        let origin = if self.private_server {
            " (private nats-server)"
        } else {
            ""
        };
        let driver = match self.runtime {
            BLOCKING => "blocking client".to_owned(),
            runtime => format!("{runtime} runtime"),
        };
        writeln!(
            f,
            "rnats bench {}: {} msgs of {}, {} {clients}, {driver}, {}{origin}",
            self.kind.name(),
            stats::count(self.msgs),
            stats::size(self.msg_size),
            self.clients,
            self.server,
        )?;
        writeln!(f)?;
        self.figures.fmt(f)
    }
}

impl fmt::Display for Figures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rates = table(&["role", "client", "msgs", "msgs/s", "MB/s"]);
        for (role, group) in self.groups() {
            let mut row = |client: String, t: &Throughput| {
                rates.add_row(vec![
                    role.to_owned(),
                    client,
                    stats::count(t.msgs),
                    stats::per_sec(t.msgs_per_sec),
                    stats::mb_per_sec(t.mb_per_sec),
                ]);
            };
            if group.clients.len() > 1 {
                for (i, t) in group.clients.iter().enumerate() {
                    row((i + 1).to_string(), t);
                }
            }
            row("all".to_owned(), &group.aggregate);
        }
        writeln!(f, "{}", rates.trim_fmt())?;
        if let Some(l) = &self.latency {
            let mut latency = table(&[
                "latency", "min", "mean", "p50", "p90", "p99", "p99.9", "max",
            ]);
            latency.add_row(vec![
                stats::count(l.count),
                stats::latency_us(l.min_us),
                stats::latency_us(l.mean_us),
                stats::latency_us(l.p50_us),
                stats::latency_us(l.p90_us),
                stats::latency_us(l.p99_us),
                stats::latency_us(l.p99_9_us),
                stats::latency_us(l.max_us),
            ]);
            writeln!(f)?;
            writeln!(f, "{}", latency.trim_fmt())?;
        }
        if let Some(histogram) = &self.histogram {
            writeln!(f)?;
            write!(f, "{}", ladder(histogram))?;
        }
        Ok(())
    }
}

/// A table for people: no borders, the header underlined, every column but the first
/// aligned right (they hold numbers).
fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_preset(presets::NOTHING);
    table.set_style(comfy_table::TableComponent::HeaderLines, '-');
    table.set_style(comfy_table::TableComponent::MiddleHeaderIntersections, ' ');
    table.set_style(comfy_table::TableComponent::LeftHeaderIntersection, ' ');
    table.set_style(comfy_table::TableComponent::RightHeaderIntersection, ' ');
    table.set_header(header.to_vec());
    for (i, column) in table.column_iter_mut().enumerate() {
        if i > 0 {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The percentile ladder: each of [`LADDER`]'s percentiles, its latency and a bar whose
/// length grows with the latency on a log scale from the fastest sample to the slowest, so
/// a long tail shows without flattening the rest.
pub(super) fn ladder(histogram: &Latencies) -> String {
    let min = histogram.quantile_us(0.0).max(1e-3);
    let max = histogram.quantile_us(1.0).max(min);
    let span = (max / min).ln();
    let mut out = String::from("latency percentiles\n");
    for q in LADDER {
        let us = histogram.quantile_us(q);
        let share = if span > 0.0 {
            ((us.max(min) / min).ln() / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let bar = "█".repeat(1 + (share * (BAR_WIDTH - 1.0)).round() as usize);
        out.push_str(&format!(
            "  {:>8} {:>10}  {bar}\n",
            percentile_name(q),
            stats::latency_us(us)
        ));
    }
    out
}

/// `0.999` -> `p99.9`, `1.0` -> `max`.
fn percentile_name(q: f64) -> String {
    if q >= 1.0 {
        return "max".to_owned();
    }
    let text = format!("{:.4}", q * 100.0);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("p{text}")
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn report() -> BenchReport {
        let t0 = Instant::now();
        let span = |ms| Span {
            msgs: 1_000,
            bytes: 128_000,
            start: t0,
            end: t0 + Duration::from_millis(ms),
        };
        let mut a = Latencies::new();
        a.record(Duration::from_micros(10));
        let mut b = Latencies::new();
        b.record(Duration::from_micros(30));
        BenchReport {
            kind: BenchKind::Req,
            server: "nats://127.0.0.1:4222".to_owned(),
            private_server: false,
            runtime: "current-thread",
            msg_size: 128,
            msgs: 2_000,
            clients: 2,
            figures: Figures {
                requesters: Group::from_spans(&[span(500), span(1_000)]),
                ..Figures::default()
            }
            .timed(&[a, b]),
        }
    }

    #[test]
    fn json_has_flat_figures_and_omits_absent_roles() {
        let json = serde_json::to_value(report()).expect("serialisable");
        assert_eq!(json["kind"], "req");
        assert_eq!(json["runtime"], "current-thread");
        assert_eq!(json["requesters"]["aggregate"]["msgs"], 2_000);
        assert_eq!(
            json["requesters"]["clients"].as_array().map(Vec::len),
            Some(2)
        );
        let p99 = json["latency"]["p99_us"].as_f64().expect("p99");
        assert!((p99 - 30.0).abs() < 0.1, "{json}");
        assert_eq!(json["client_latency"].as_array().map(Vec::len), Some(2));
        assert!(json.get("publishers").is_none());
        assert!(json.get("histogram").is_none());
    }

    #[test]
    fn a_blocking_run_says_so() {
        let mut blocking = report();
        blocking.runtime = BLOCKING;
        assert!(blocking.to_string().starts_with(
            "rnats bench req: 2,000 msgs of 128 B, 2 clients, blocking client, \
             nats://127.0.0.1:4222\n"
        ));
        let json = serde_json::to_value(blocking).expect("serialisable");
        assert_eq!(json["runtime"], "blocking");
    }

    #[test]
    fn tables_list_each_client_the_total_and_the_ladder() {
        let text = report().to_string();
        assert!(text.starts_with(
            "rnats bench req: 2,000 msgs of 128 B, 2 clients, current-thread runtime, \
             nats://127.0.0.1:4222\n"
        ));
        let row = |cells: &[&str]| {
            text.lines()
                .any(|line| line.split_whitespace().collect::<Vec<_>>() == cells)
        };
        assert!(
            row(&["requesters", "1", "1,000", "2,000", "0.26"]),
            "{text}"
        );
        assert!(
            row(&["requesters", "all", "2,000", "2,000", "0.26"]),
            "{text}"
        );
        assert!(text.contains("30.0 µs"), "{text}");
        assert!(text.contains("latency percentiles"), "{text}");
        assert!(text.contains("p99.9"), "{text}");
        // The slowest sample gets the widest bar.
        let max_line = text.lines().find(|l| l.trim_start().starts_with("max"));
        assert!(max_line.is_some_and(|l| l.matches('█').count() == BAR_WIDTH as usize));
    }

    #[test]
    fn percentiles_are_named_as_people_write_them() {
        assert_eq!(percentile_name(0.5), "p50");
        assert_eq!(percentile_name(0.999), "p99.9");
        assert_eq!(percentile_name(0.9999), "p99.99");
        assert_eq!(percentile_name(1.0), "max");
    }
}
