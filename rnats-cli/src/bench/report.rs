//! The result of a run: a JSON object with `--json`, a table otherwise.

use std::fmt;

use serde::Serialize;

use super::BenchKind;
use crate::stats::{self, LatencySummary, Span, Throughput};

/// The report's `runtime` of a `--blocking` run: no runtime, the blocking client.
pub(super) const BLOCKING: &str = "blocking";

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
    /// The `--msgs` value.
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
    /// Publishing clients (`pub`, `pubsub`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) publishers: Option<Group>,
    /// Subscribing clients (`sub`, `pubsub`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) subscribers: Option<Group>,
    /// Requesting clients (`req`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) requesters: Option<Group>,
    /// The publish-flush-receive client (`lat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) round_trips: Option<Group>,
    /// Per-operation latency (`req`, `lat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) latency: Option<LatencySummary>,
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

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            BenchKind::Pub => "pub",
            BenchKind::Sub => "sub",
            BenchKind::Pubsub => "pubsub",
            BenchKind::Req => "req",
            BenchKind::Lat => "lat",
            BenchKind::JsPub => "js-pub",
            BenchKind::JsFetch => "js-fetch",
            BenchKind::Scale => "scale",
        };
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
            "rnats bench {kind}: {} msgs of {}, {} {clients}, {driver}, {}{origin}",
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
        let groups = [
            ("publishers", &self.publishers),
            ("subscribers", &self.subscribers),
            ("requesters", &self.requesters),
            ("round trips", &self.round_trips),
        ];
        writeln!(
            f,
            "{:<12} {:>6} {:>13} {:>13} {:>10}",
            "role", "client", "msgs", "msgs/s", "MB/s"
        )?;
        for (role, group) in groups {
            if let Some(group) = group {
                group.write_rows(f, role)?;
            }
        }
        if let Some(l) = &self.latency {
            writeln!(f)?;
            writeln!(
                f,
                "{:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
                "latency", "min", "mean", "p50", "p90", "p99", "max"
            )?;
            writeln!(
                f,
                "{:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
                stats::count(l.count),
                stats::latency_us(l.min_us),
                stats::latency_us(l.mean_us),
                stats::latency_us(l.p50_us),
                stats::latency_us(l.p90_us),
                stats::latency_us(l.p99_us),
                stats::latency_us(l.max_us),
            )?;
        }
        Ok(())
    }
}

impl Group {
    /// One row per client when there are several, then the total.
    fn write_rows(&self, f: &mut fmt::Formatter<'_>, role: &str) -> fmt::Result {
        if self.clients.len() > 1 {
            for (i, t) in self.clients.iter().enumerate() {
                write_row(f, role, &(i + 1).to_string(), t)?;
            }
        }
        write_row(f, role, "all", &self.aggregate)
    }
}

/// One line of the throughput table.
fn write_row(f: &mut fmt::Formatter<'_>, role: &str, client: &str, t: &Throughput) -> fmt::Result {
    writeln!(
        f,
        "{role:<12} {client:>6} {:>13} {:>13} {:>10}",
        stats::count(t.msgs),
        stats::per_sec(t.msgs_per_sec),
        stats::mb_per_sec(t.mb_per_sec),
    )
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
        let mut latencies = vec![Duration::from_micros(10), Duration::from_micros(30)];
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
                latency: LatencySummary::from_samples(&mut latencies),
                ..Figures::default()
            },
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
        assert_eq!(json["latency"]["p99_us"], 30.0);
        assert!(json.get("publishers").is_none());
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
    fn table_lists_each_client_and_the_total() {
        let text = report().to_string();
        assert!(text.starts_with(
            "rnats bench req: 2,000 msgs of 128 B, 2 clients, current-thread runtime, \
             nats://127.0.0.1:4222\n"
        ));
        assert!(text.contains("requesters        1         1,000         2,000"));
        assert!(text.contains("requesters      all         2,000         2,000"));
        assert!(text.contains("30.0 µs"));
    }
}
