//! Collected results: one row per scenario metric, printed as a markdown table or JSON.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::scenario::{Better, ClientKind, Metric, Scenario, Unit};
use crate::stats::median;

/// The results of a whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Whether the run used `--quick` sizes.
    pub quick: bool,
    /// Rounds per scenario.
    pub rounds: usize,
    /// The server both clients talked to.
    pub server: String,
    /// One row per metric of each scenario run, in run order.
    pub rows: Vec<Row>,
    /// Runs that did not produce valid numbers, with why. Any entry makes the run invalid.
    pub failures: Vec<Failure>,
}

/// The samples of one metric of one scenario, one per round and client.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The scenario.
    pub scenario: Scenario,
    /// The metric.
    pub metric: Metric,
    /// rnats samples, one per valid round.
    pub rnats: Vec<f64>,
    /// async-nats samples, one per valid round.
    pub async_nats: Vec<f64>,
}

/// A scenario run that failed or produced invalid numbers (dropped messages, timeout, error).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The scenario.
    pub scenario: Scenario,
    /// The client that failed.
    pub client: ClientKind,
    /// The round, from 1.
    pub round: usize,
    /// What went wrong.
    pub reason: String,
}

impl Report {
    /// An empty report.
    pub fn new(quick: bool, rounds: usize, server: impl Into<String>) -> Report {
        Report {
            quick,
            rounds,
            server: server.into(),
            rows: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Records one run's values, given in the order of `scenario.metrics()`.
    pub fn record(&mut self, scenario: Scenario, client: ClientKind, values: &[f64]) {
        for (metric, value) in scenario.metrics().iter().zip(values) {
            let row = self.row_mut(scenario, *metric);
            match client {
                ClientKind::Rnats => row.rnats.push(*value),
                ClientKind::AsyncNats => row.async_nats.push(*value),
            }
        }
    }

    /// Records a run that produced no valid numbers.
    pub fn record_failure(
        &mut self,
        scenario: Scenario,
        client: ClientKind,
        round: usize,
        reason: impl Into<String>,
    ) {
        // Make sure the scenario still shows up in the table.
        for metric in scenario.metrics() {
            self.row_mut(scenario, *metric);
        }
        self.failures.push(Failure {
            scenario,
            client,
            round,
            reason: reason.into(),
        });
    }

    /// True when every run produced valid numbers.
    pub fn is_valid(&self) -> bool {
        self.failures.is_empty()
    }

    /// The table: scenario | metric | rnats median | async-nats median | ratio | target.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let mode = if self.quick {
            "quick sizes"
        } else {
            "full sizes"
        };
        let _ = writeln!(
            out,
            "rnats vs async-nats on {} ({mode}, median of {} round(s); ratio = rnats / async-nats)\n",
            self.server, self.rounds
        );
        out.push_str("| scenario | metric | rnats median | async-nats median | ratio | target |\n");
        out.push_str("|---|---|---:|---:|---:|---|\n");
        for row in &self.rows {
            let _ = writeln!(
                out,
                "| {} | {} ({} is better) | {} | {} | {} | {} |",
                row.scenario,
                row.metric.name,
                match row.metric.better {
                    Better::Higher => "higher",
                    Better::Lower => "lower",
                },
                format_value(row.metric.unit, row.rnats_median()),
                format_value(row.metric.unit, row.async_nats_median()),
                row.ratio()
                    .map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}x")),
                self.verdict(row),
            );
        }
        if !self.failures.is_empty() {
            out.push_str("\n**INVALID RUN** - these runs failed and are not in the medians:\n");
            for f in &self.failures {
                let _ = writeln!(
                    out,
                    "- {} / {} / round {}: {}",
                    f.scenario, f.client, f.round, f.reason
                );
            }
        }
        out
    }

    /// Everything, samples included, as JSON.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let ratio = row.ratio();
                json!({
                    "scenario": row.scenario.name(),
                    "metric": row.metric.name,
                    "unit": format!("{:?}", row.metric.unit),
                    "better": match row.metric.better {
                        Better::Higher => "higher",
                        Better::Lower => "lower",
                    },
                    "rnats": row.rnats,
                    "async_nats": row.async_nats,
                    "rnats_median": row.rnats_median(),
                    "async_nats_median": row.async_nats_median(),
                    "ratio": ratio,
                    "target": row.metric.target,
                    "met": ratio.and_then(|r| row.metric.meets_target(r)),
                    "valid": !self.has_failure(row.scenario),
                })
            })
            .collect();
        let failures: Vec<Value> = self
            .failures
            .iter()
            .map(|f| {
                json!({
                    "scenario": f.scenario.name(),
                    "client": f.client.name(),
                    "round": f.round,
                    "reason": f.reason,
                })
            })
            .collect();
        json!({
            "server": self.server,
            "quick": self.quick,
            "rounds": self.rounds,
            "valid": self.is_valid(),
            "rows": rows,
            "failures": failures,
        })
    }

    fn row_mut(&mut self, scenario: Scenario, metric: Metric) -> &mut Row {
        let at = self
            .rows
            .iter()
            .position(|r| r.scenario == scenario && r.metric == metric);
        let at = at.unwrap_or_else(|| {
            self.rows.push(Row {
                scenario,
                metric,
                rnats: Vec::new(),
                async_nats: Vec::new(),
            });
            self.rows.len() - 1
        });
        &mut self.rows[at]
    }

    fn has_failure(&self, scenario: Scenario) -> bool {
        self.failures.iter().any(|f| f.scenario == scenario)
    }

    fn verdict(&self, row: &Row) -> String {
        let Some(target) = row.metric.target else {
            return "-".to_owned();
        };
        let bound = match row.metric.better {
            Better::Higher => format!(">= {target:.2}x"),
            Better::Lower => format!("<= {target:.2}x"),
        };
        if self.has_failure(row.scenario) {
            return format!("{bound}: INVALID");
        }
        match row.ratio().and_then(|r| row.metric.meets_target(r)) {
            Some(true) => format!("{bound}: met"),
            Some(false) => format!("{bound}: not met"),
            None => format!("{bound}: n/a"),
        }
    }
}

impl Row {
    /// Median of the rnats samples.
    pub fn rnats_median(&self) -> Option<f64> {
        median(&self.rnats)
    }

    /// Median of the async-nats samples.
    pub fn async_nats_median(&self) -> Option<f64> {
        median(&self.async_nats)
    }

    /// rnats median / async-nats median; `None` if either is missing or the divisor is zero.
    pub fn ratio(&self) -> Option<f64> {
        let reference = self.async_nats_median()?;
        if reference == 0.0 {
            return None;
        }
        Some(self.rnats_median()? / reference)
    }
}

/// Prints a value in its unit; `n/a` when there is none.
pub fn format_value(unit: Unit, value: Option<f64>) -> String {
    let Some(v) = value else {
        return "n/a".to_owned();
    };
    match unit {
        Unit::PerSec => group_thousands(v.round() as u64),
        Unit::MbPerSec => format!("{v:.1}"),
        Unit::Micros => format!("{v:.1} µs"),
        Unit::MiB => format!("{v:.1} MiB"),
        Unit::Bytes => format!("{} B", group_thousands(v.round() as u64)),
    }
}

/// `1234567` -> `1,234,567`.
fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::PayloadSize;

    const PUB32: Scenario = Scenario::Pub(PayloadSize::B32);

    fn sample_report() -> Report {
        let mut report = Report::new(false, 3, "nats://127.0.0.1:4222");
        for (rnats, async_nats) in [(3.0e6, 2.0e6), (2.8e6, 2.1e6), (3.2e6, 1.9e6)] {
            report.record(PUB32, ClientKind::Rnats, &[rnats, rnats * 32.0 / 1e6]);
            report.record(
                PUB32,
                ClientKind::AsyncNats,
                &[async_nats, async_nats * 32.0 / 1e6],
            );
        }
        report.record(Scenario::Req, ClientKind::Rnats, &[30_000.0, 40.0, 90.0]);
        report.record(
            Scenario::Req,
            ClientKind::AsyncNats,
            &[20_000.0, 50.0, 100.0],
        );
        report
    }

    #[test]
    fn rows_take_medians_and_ratios() {
        let report = sample_report();
        assert_eq!(report.rows.len(), 5);
        let msgs = &report.rows[0];
        assert_eq!(msgs.rnats_median(), Some(3.0e6));
        assert_eq!(msgs.async_nats_median(), Some(2.0e6));
        assert_eq!(msgs.ratio(), Some(1.5));
        let p50 = &report.rows[3];
        assert_eq!(p50.metric.name, "p50 latency");
        assert_eq!(p50.ratio(), Some(0.8));
    }

    #[test]
    fn markdown_marks_targets() {
        let table = sample_report().to_markdown();
        assert!(
            table.contains(
                "| scenario | metric | rnats median | async-nats median | ratio | target |"
            )
        );
        assert!(table.contains(
            "| pub32 | msgs/s (higher is better) | 3,000,000 | 2,000,000 | 1.50x | >= 1.35x: met |"
        ));
        assert!(table.contains("| req | p50 latency (lower is better) | 40.0 µs | 50.0 µs | 0.80x | <= 0.65x: not met |"));
        assert!(
            table.contains(
                "| req | p99 latency (lower is better) | 90.0 µs | 100.0 µs | 0.90x | - |"
            )
        );
        assert!(!table.contains("INVALID"));
    }

    #[test]
    fn failures_make_the_run_invalid() {
        let mut report = sample_report();
        assert!(report.is_valid());
        report.record_failure(
            Scenario::Sub(PayloadSize::K1),
            ClientKind::Rnats,
            2,
            "received 10 of 12",
        );
        assert!(!report.is_valid());
        let table = report.to_markdown();
        assert!(table.contains(
            "| sub1k | msgs/s (higher is better) | n/a | n/a | n/a | >= 1.20x: INVALID |"
        ));
        assert!(table.contains("sub1k / rnats / round 2: received 10 of 12"));
        let json = report.to_json();
        assert_eq!(json["valid"], false);
        assert_eq!(json["failures"][0]["client"], "rnats");
    }

    #[test]
    fn json_has_samples() {
        let json = sample_report().to_json();
        assert_eq!(json["rounds"], 3);
        assert_eq!(json["rows"][0]["scenario"], "pub32");
        assert_eq!(json["rows"][0]["rnats"].as_array().map(Vec::len), Some(3));
        assert_eq!(json["rows"][0]["ratio"], 1.5);
        assert_eq!(json["rows"][0]["met"], true);
    }

    #[test]
    fn value_formats() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
        assert_eq!(format_value(Unit::Micros, Some(12.34)), "12.3 µs");
        assert_eq!(format_value(Unit::Bytes, Some(1536.0)), "1,536 B");
        assert_eq!(format_value(Unit::PerSec, None), "n/a");
    }
}
