//! Collected results: one row per scenario metric, printed as a markdown table or JSON.
//!
//! The columns follow the clients of the run ([`ClientKind::ALL`] unless `--clients` chose
//! fewer): a median per client, then the ratios: rnats / async-nats (the headline ratio, with
//! its target), rnats-blocking / async-nats, rnats / raw-tokio (how far rnats is from the
//! floor of its tokio shape), and every other client / raw (the raw blocking-socket limit;
//! rnats / raw and rnats-blocking / raw have targets of their own). With
//! the blocking client in the run the table leaves async-nats / raw to the JSON, to stay
//! readable. A client that cannot run a scenario shows `-` in its cells.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::scenario::{
    Better, COST, ClientKind, Metric, Runtime, SERVER_COST, Scenario, Shape, Unit,
};
use crate::stats::median;

/// The results of a whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Whether the run used `--quick` sizes.
    pub quick: bool,
    /// Rounds per scenario.
    pub rounds: usize,
    /// The server every client talked to.
    pub server: String,
    /// The tokio runtime the async clients ran on.
    pub runtime: Runtime,
    /// Where the async clients' code ran: in `block_on` (the default) or a spawned task.
    pub shape: Shape,
    /// The clients of the run, in column order.
    pub clients: Vec<ClientKind>,
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
    /// Samples per client, one per valid round. A client that supports the scenario has an
    /// entry, empty when all its runs failed.
    pub samples: BTreeMap<ClientKind, Vec<f64>>,
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
    /// An empty report for a run of `clients` on `runtime`.
    pub fn new(
        quick: bool,
        rounds: usize,
        server: impl Into<String>,
        runtime: Runtime,
        clients: &[ClientKind],
    ) -> Report {
        Report {
            quick,
            rounds,
            server: server.into(),
            runtime,
            shape: Shape::default(),
            clients: clients.to_vec(),
            rows: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Records one run's values, given in the order of `scenario.metrics()`.
    pub fn record(&mut self, scenario: Scenario, client: ClientKind, values: &[f64]) {
        for (metric, value) in scenario.metrics().iter().zip(values) {
            let row = self.row_mut(scenario, *metric);
            row.samples.entry(client).or_default().push(*value);
        }
    }

    /// Records what one run cost the process per operation, in the order of [`COST`].
    pub fn record_cost(&mut self, scenario: Scenario, client: ClientKind, per_op: [f64; 3]) {
        for (metric, value) in COST.iter().zip(per_op) {
            let row = self.row_mut(scenario, *metric);
            row.samples.entry(client).or_default().push(value);
        }
    }

    /// Records what one run cost the server per operation ([`SERVER_COST`]).
    pub fn record_server_cost(&mut self, scenario: Scenario, client: ClientKind, cpu_us: f64) {
        let row = self.row_mut(scenario, SERVER_COST);
        row.samples.entry(client).or_default().push(cpu_us);
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

    /// The ratios of the JSON, as (numerator, denominator): rnats / async-nats and
    /// rnats-blocking / async-nats when both ran, rnats / raw-tokio (rnats' own share of the
    /// distance to raw, tokio's taken out) when both ran, then each other client / raw when
    /// raw ran.
    pub fn ratio_pairs(&self) -> Vec<(ClientKind, ClientKind)> {
        let has = |c: ClientKind| self.clients.contains(&c);
        let mut pairs = Vec::new();
        for client in [ClientKind::Rnats, ClientKind::RnatsBlocking] {
            if has(client) && has(ClientKind::AsyncNats) {
                pairs.push((client, ClientKind::AsyncNats));
            }
        }
        if has(ClientKind::Rnats) && has(ClientKind::RawTokio) {
            pairs.push((ClientKind::Rnats, ClientKind::RawTokio));
        }
        if has(ClientKind::Raw) {
            pairs.extend(
                self.clients
                    .iter()
                    .filter(|&&c| c != ClientKind::Raw)
                    .map(|&c| (c, ClientKind::Raw)),
            );
        }
        pairs
    }

    /// The ratio columns of the table: [`Report::ratio_pairs`], less async-nats / raw when
    /// the blocking client ran (it is in the JSON).
    pub fn table_pairs(&self) -> Vec<(ClientKind, ClientKind)> {
        let mut pairs = self.ratio_pairs();
        if self.has_blocking() {
            pairs.retain(|&pair| pair != (ClientKind::AsyncNats, ClientKind::Raw));
        }
        pairs
    }

    /// Whether the blocking client is in the run.
    fn has_blocking(&self) -> bool {
        self.clients.contains(&ClientKind::RnatsBlocking)
    }

    /// The target columns whose two clients both ran.
    fn target_columns(&self) -> Vec<TargetColumn> {
        [
            TargetColumn::RnatsVsAsyncNats,
            TargetColumn::RnatsVsRaw,
            TargetColumn::BlockingVsRaw,
        ]
        .into_iter()
        .filter(|column| {
            let (num, den) = column.pair();
            self.clients.contains(&num) && self.clients.contains(&den)
        })
        .collect()
    }

    /// The table: scenario | metric | a median per client | the ratios | the targets.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let mode = if self.quick {
            "quick sizes"
        } else {
            "full sizes"
        };
        let names: Vec<&str> = self.clients.iter().map(|c| c.name()).collect();
        let pairs = self.table_pairs();
        let raw_note = match self.clients.contains(&ClientKind::Raw) {
            true => "; raw = the blocking-socket baseline, the practical limit",
            false => "",
        };
        let shape = match self.shape {
            Shape::BlockOn => "",
            Shape::Spawn => " in spawned tasks",
        };
        let _ = writeln!(
            out,
            "{} on {} ({mode}, async clients on the {} tokio runtime{shape}, median of {} round(s){raw_note})\n",
            names.join(" vs "),
            self.server,
            self.runtime,
            self.rounds
        );
        out.push_str("| scenario | metric |");
        for name in &names {
            let _ = write!(out, " {name} |");
        }
        for (num, den) in &pairs {
            let _ = write!(out, " {num} / {den} |");
        }
        let targets = self.target_columns();
        for column in &targets {
            let (num, den) = column.pair();
            let _ = write!(out, " target ({num} / {den}) |");
        }
        out.push_str("\n|---|---|");
        out.push_str(&"---:|".repeat(names.len() + pairs.len()));
        out.push_str(&"---|".repeat(targets.len()));
        out.push('\n');
        for row in &self.rows {
            self.write_row(&mut out, row, &pairs);
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

    /// Everything, samples included, as JSON. Per row: each client's samples under its
    /// [`ClientKind::json_key`] and their median under `<key>_median` (absent when the client
    /// cannot run the scenario), `ratio` (rnats / async-nats) with `target` and `met`, every
    /// ratio column as `<num>_vs_<den>`, and the raw target as `raw_target` and `raw_met`.
    pub fn to_json(&self) -> Value {
        let pairs = self.ratio_pairs();
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| self.row_json(row, &pairs))
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
        let clients: Vec<&str> = self.clients.iter().map(|c| c.name()).collect();
        json!({
            "server": self.server,
            "quick": self.quick,
            "rounds": self.rounds,
            "runtime": self.runtime.name(),
            "shape": self.shape.name(),
            "clients": clients,
            "valid": self.is_valid(),
            "rows": rows,
            "failures": failures,
        })
    }

    /// One table line: the scenario and metric, each client's median, the ratios, the
    /// verdicts.
    fn write_row(&self, out: &mut String, row: &Row, pairs: &[(ClientKind, ClientKind)]) {
        let better = match row.metric.better {
            Better::Higher => "higher",
            Better::Lower => "lower",
        };
        let _ = write!(
            out,
            "| {} | {} ({better} is better) |",
            row.scenario, row.metric.name
        );
        for &client in &self.clients {
            let cell = match row.samples.contains_key(&client) {
                true => format_value(row.metric.unit, row.median(client)),
                false => "-".to_owned(),
            };
            let _ = write!(out, " {cell} |");
        }
        for &(num, den) in pairs {
            let cell = match row.samples.contains_key(&num) && row.samples.contains_key(&den) {
                true => row
                    .ratio(num, den)
                    .map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}x")),
                false => "-".to_owned(),
            };
            let _ = write!(out, " {cell} |");
        }
        for column in self.target_columns() {
            let verdict = match column {
                TargetColumn::RnatsVsAsyncNats => self.verdict(row),
                TargetColumn::RnatsVsRaw => self.raw_verdict(row),
                TargetColumn::BlockingVsRaw => self.blocking_verdict(row),
            };
            let _ = write!(out, " {verdict} |");
        }
        out.push('\n');
    }

    /// One row of [`Report::to_json`].
    fn row_json(&self, row: &Row, pairs: &[(ClientKind, ClientKind)]) -> Value {
        let ratio = row.ratio(ClientKind::Rnats, ClientKind::AsyncNats);
        let raw_ratio = row.ratio(ClientKind::Rnats, ClientKind::Raw);
        let mut fields = Map::new();
        fields.insert("scenario".into(), json!(row.scenario.name()));
        fields.insert("metric".into(), json!(row.metric.name));
        fields.insert("unit".into(), json!(format!("{:?}", row.metric.unit)));
        let better = match row.metric.better {
            Better::Higher => "higher",
            Better::Lower => "lower",
        };
        fields.insert("better".into(), json!(better));
        for (client, samples) in &row.samples {
            let key = client.json_key();
            fields.insert(key.into(), json!(samples));
            fields.insert(format!("{key}_median"), json!(row.median(*client)));
        }
        for &(num, den) in pairs {
            let key = format!("{}_vs_{}", num.json_key(), den.json_key());
            fields.insert(key, json!(row.ratio(num, den)));
        }
        fields.insert("ratio".into(), json!(ratio));
        fields.insert("target".into(), json!(row.metric.target));
        fields.insert(
            "met".into(),
            json!(ratio.and_then(|r| row.metric.meets_target(r))),
        );
        let raw_target = row.metric.vs_raw;
        fields.insert("raw_target".into(), json!(raw_target.map(|t| t.ratio)));
        fields.insert(
            "raw_target_runtime".into(),
            json!(raw_target.and_then(|t| t.runtime).map(Runtime::name)),
        );
        fields.insert(
            "raw_met".into(),
            json!(raw_ratio.and_then(|r| row.metric.meets_raw_target(r, self.runtime))),
        );
        let blocking_ratio = row.ratio(ClientKind::RnatsBlocking, ClientKind::Raw);
        fields.insert(
            "blocking_raw_target".into(),
            json!(row.metric.blocking_vs_raw),
        );
        fields.insert(
            "blocking_raw_met".into(),
            json!(blocking_ratio.and_then(|r| row.metric.meets_blocking_target(r))),
        );
        fields.insert("valid".into(), json!(!self.has_failure(row.scenario)));
        Value::Object(fields)
    }

    fn row_mut(&mut self, scenario: Scenario, metric: Metric) -> &mut Row {
        let at = self
            .rows
            .iter()
            .position(|r| r.scenario == scenario && r.metric == metric);
        let at = at.unwrap_or_else(|| {
            let samples = scenario
                .clients(&self.clients)
                .into_iter()
                .map(|c| (c, Vec::new()))
                .collect();
            self.rows.push(Row {
                scenario,
                metric,
                samples,
            });
            self.rows.len() - 1
        });
        &mut self.rows[at]
    }

    fn has_failure(&self, scenario: Scenario) -> bool {
        self.failures.iter().any(|f| f.scenario == scenario)
    }

    /// The rnats / async-nats target and whether it was met.
    fn verdict(&self, row: &Row) -> String {
        let Some(target) = row.metric.target else {
            return "-".to_owned();
        };
        let met = row
            .ratio(ClientKind::Rnats, ClientKind::AsyncNats)
            .and_then(|r| row.metric.meets_target(r));
        self.judge(row, bound(row.metric.better, target), met)
    }

    /// The rnats / raw target and whether it was met; a target set for the other runtime
    /// is shown but not judged.
    fn raw_verdict(&self, row: &Row) -> String {
        let Some(target) = row.metric.vs_raw else {
            return "-".to_owned();
        };
        let bound = bound(row.metric.better, target.ratio);
        if !target.applies_to(self.runtime) {
            let only = target.runtime.map_or("", Runtime::name);
            return format!("{bound} ({only} only)");
        }
        let met = row
            .ratio(ClientKind::Rnats, ClientKind::Raw)
            .and_then(|r| row.metric.meets_raw_target(r, self.runtime));
        self.judge(row, bound, met)
    }

    /// The rnats-blocking / raw target and whether it was met.
    fn blocking_verdict(&self, row: &Row) -> String {
        let Some(target) = row.metric.blocking_vs_raw else {
            return "-".to_owned();
        };
        let met = row
            .ratio(ClientKind::RnatsBlocking, ClientKind::Raw)
            .and_then(|r| row.metric.meets_blocking_target(r));
        self.judge(row, bound(row.metric.better, target), met)
    }

    fn judge(&self, row: &Row, bound: String, met: Option<bool>) -> String {
        if self.has_failure(row.scenario) {
            return format!("{bound}: INVALID");
        }
        match met {
            Some(true) => format!("{bound}: met"),
            Some(false) => format!("{bound}: not met"),
            None => format!("{bound}: n/a"),
        }
    }
}

/// A column of the table that judges one ratio against its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TargetColumn {
    /// rnats / async-nats, the first performance issue's targets.
    RnatsVsAsyncNats,
    /// rnats / raw, issue 11.
    RnatsVsRaw,
    /// rnats-blocking / raw, issue 11.
    BlockingVsRaw,
}

impl TargetColumn {
    /// The ratio the column judges.
    fn pair(self) -> (ClientKind, ClientKind) {
        match self {
            TargetColumn::RnatsVsAsyncNats => (ClientKind::Rnats, ClientKind::AsyncNats),
            TargetColumn::RnatsVsRaw => (ClientKind::Rnats, ClientKind::Raw),
            TargetColumn::BlockingVsRaw => (ClientKind::RnatsBlocking, ClientKind::Raw),
        }
    }
}

impl Row {
    /// Median of `client`'s samples; `None` without any.
    pub fn median(&self, client: ClientKind) -> Option<f64> {
        median(self.samples.get(&client)?)
    }

    /// `num`'s median / `den`'s median; `None` if either is missing or the divisor is zero.
    pub fn ratio(&self, num: ClientKind, den: ClientKind) -> Option<f64> {
        let reference = self.median(den)?;
        if reference == 0.0 {
            return None;
        }
        Some(self.median(num)? / reference)
    }
}

/// `>= 1.35x` or `<= 0.80x`, as the metric's direction says.
fn bound(better: Better, ratio: f64) -> String {
    match better {
        Better::Higher => format!(">= {ratio:.2}x"),
        Better::Lower => format!("<= {ratio:.2}x"),
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
        // CPU per small message is a fraction of a microsecond: keep three figures of it.
        Unit::Micros if v.abs() < 1.0 => format!("{v:.3} µs"),
        Unit::Micros => format!("{v:.1} µs"),
        Unit::MiB => format!("{v:.1} MiB"),
        Unit::Bytes => format!("{} B", group_thousands(v.round() as u64)),
        Unit::Count => format!("{v:.2}"),
    }
}

/// `1234567` -> `1,234,567`.
fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
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

    fn sample_report(runtime: Runtime) -> Report {
        use ClientKind::{AsyncNats, Raw, Rnats};
        let clients = [Rnats, AsyncNats, Raw];
        let mut report = Report::new(false, 3, "nats://127.0.0.1:4222", runtime, &clients);
        for (rnats, async_nats, raw) in [
            (3.0e6, 2.0e6, 4.0e6),
            (2.8e6, 2.1e6, 3.9e6),
            (3.2e6, 1.9e6, 4.1e6),
        ] {
            report.record(PUB32, ClientKind::Rnats, &[rnats, rnats * 32.0 / 1e6]);
            report.record(
                PUB32,
                ClientKind::AsyncNats,
                &[async_nats, async_nats * 32.0 / 1e6],
            );
            report.record(PUB32, ClientKind::Raw, &[raw, raw * 32.0 / 1e6]);
        }
        report.record(Scenario::Req, ClientKind::Rnats, &[30_000.0, 40.0, 90.0]);
        report.record(
            Scenario::Req,
            ClientKind::AsyncNats,
            &[20_000.0, 50.0, 100.0],
        );
        report.record(Scenario::Req, ClientKind::Raw, &[32_000.0, 30.0, 60.0]);
        report.record(Scenario::Lat, ClientKind::Rnats, &[60.0, 200.0]);
        report.record(Scenario::Lat, ClientKind::AsyncNats, &[80.0, 300.0]);
        report.record(Scenario::Lat, ClientKind::Raw, &[50.0, 100.0]);
        report.record(Scenario::KvGet(1), ClientKind::Rnats, &[10_000.0, 100.0]);
        report.record(Scenario::KvGet(1), ClientKind::AsyncNats, &[8_000.0, 125.0]);
        report
    }

    #[test]
    fn rows_take_medians_and_ratios() {
        let report = sample_report(Runtime::MultiThread);
        assert_eq!(report.rows.len(), 9);
        let msgs = &report.rows[0];
        assert_eq!(msgs.median(ClientKind::Rnats), Some(3.0e6));
        assert_eq!(msgs.median(ClientKind::AsyncNats), Some(2.0e6));
        assert_eq!(msgs.median(ClientKind::Raw), Some(4.0e6));
        assert_eq!(
            msgs.ratio(ClientKind::Rnats, ClientKind::AsyncNats),
            Some(1.5)
        );
        assert_eq!(msgs.ratio(ClientKind::Rnats, ClientKind::Raw), Some(0.75));
        assert_eq!(
            msgs.ratio(ClientKind::AsyncNats, ClientKind::Raw),
            Some(0.5)
        );
        let p50 = &report.rows[3];
        assert_eq!(p50.metric.name, "p50 latency");
        assert_eq!(
            p50.ratio(ClientKind::Rnats, ClientKind::AsyncNats),
            Some(0.8)
        );
        // The raw client runs no Key-Value scenario.
        let kv = &report.rows[7];
        assert!(!kv.samples.contains_key(&ClientKind::Raw));
        assert_eq!(kv.ratio(ClientKind::Rnats, ClientKind::Raw), None);
    }

    #[test]
    fn ratio_columns_follow_the_clients() {
        let report = sample_report(Runtime::MultiThread);
        use ClientKind::{AsyncNats, Raw, RawTokio, Rnats, RnatsBlocking};
        assert_eq!(
            report.ratio_pairs(),
            vec![(Rnats, AsyncNats), (Rnats, Raw), (AsyncNats, Raw)]
        );
        let two = Report::new(true, 1, "x", Runtime::MultiThread, &[Rnats, AsyncNats]);
        assert_eq!(two.ratio_pairs(), vec![(Rnats, AsyncNats)]);
        assert!(two.to_markdown().starts_with(
            "rnats vs async-nats on x (quick sizes, async clients on the multi-thread tokio \
             runtime, median of 1 round(s))\n"
        ));
        assert!(two.to_markdown().contains(
            "| scenario | metric | rnats | async-nats | rnats / async-nats | \
             target (rnats / async-nats) |\n"
        ));
        let raw_only = Report::new(true, 1, "x", Runtime::MultiThread, &[Rnats, Raw]);
        assert_eq!(raw_only.ratio_pairs(), vec![(Rnats, Raw)]);
        let floor = Report::new(true, 1, "x", Runtime::MultiThread, &[Rnats, RawTokio, Raw]);
        assert_eq!(
            floor.ratio_pairs(),
            vec![(Rnats, RawTokio), (Rnats, Raw), (RawTokio, Raw)]
        );
        assert!(floor.to_markdown().contains(
            "| scenario | metric | rnats | raw-tokio | raw | rnats / raw-tokio | rnats / raw | \
             raw-tokio / raw | target (rnats / raw) |\n"
        ));
        let blocking = Report::new(true, 1, "x", Runtime::MultiThread, &[RnatsBlocking, Raw]);
        assert!(blocking.to_markdown().contains(
            "| scenario | metric | rnats-blocking | raw | rnats-blocking / raw | \
             target (rnats-blocking / raw) |\n|---|---|---:|---:|---:|---|\n"
        ));
    }

    #[test]
    fn markdown_marks_targets() {
        let table = sample_report(Runtime::MultiThread).to_markdown();
        assert!(table.starts_with(
            "rnats vs async-nats vs raw on nats://127.0.0.1:4222 (full sizes, async clients on \
             the multi-thread tokio runtime, median of 3 round(s); raw = the blocking-socket \
             baseline, the practical limit)\n"
        ));
        assert!(table.contains(
            "| scenario | metric | rnats | async-nats | raw | rnats / async-nats | rnats / raw | \
             async-nats / raw | target (rnats / async-nats) | target (rnats / raw) |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---|---|\n"
        ));
        assert!(table.contains(
            "| pub32 | msgs/s (higher is better) | 3,000,000 | 2,000,000 | 4,000,000 | 1.50x | \
             0.75x | 0.50x | >= 1.35x: met | >= 0.85x: not met |"
        ));
        assert!(table.contains(
            "| req | p50 latency (lower is better) | 40.0 µs | 50.0 µs | 30.0 µs | 0.80x | 1.33x | \
             1.67x | <= 0.65x: not met | - |"
        ));
        assert!(table.contains(
            "| req | p99 latency (lower is better) | 90.0 µs | 100.0 µs | 60.0 µs | 0.90x | 1.50x | \
             1.67x | - | - |"
        ));
        // The lat target against raw is set for the current-thread runtime only.
        assert!(table.contains(
            "| 0.75x | 1.20x | 1.60x | <= 0.80x: met | <= 1.30x (current-thread only) |"
        ));
        assert!(table.contains(
            "| kv-get | ops/s (higher is better) | 10,000 | 8,000 | - | 1.25x | - | - | >= 1.00x: met | - |"
        ));
        assert!(!table.contains("INVALID"));
        let current = sample_report(Runtime::CurrentThread).to_markdown();
        assert!(current.contains("current-thread tokio runtime"));
        assert!(current.contains("| <= 0.80x: met | <= 1.30x: met |"));
    }

    #[test]
    fn failures_make_the_run_invalid() {
        let mut report = sample_report(Runtime::MultiThread);
        assert!(report.is_valid());
        report.record_failure(
            Scenario::Sub(PayloadSize::K1),
            ClientKind::Raw,
            2,
            "received 10 of 12",
        );
        assert!(!report.is_valid());
        let table = report.to_markdown();
        assert!(table.contains(
            "| sub1k | msgs/s (higher is better) | n/a | n/a | n/a | n/a | n/a | n/a | \
             >= 1.20x: INVALID | >= 0.90x: INVALID |"
        ));
        assert!(table.contains("sub1k / raw / round 2: received 10 of 12"));
        let json = report.to_json();
        assert_eq!(json["valid"], false);
        assert_eq!(json["failures"][0]["client"], "raw");
    }

    #[test]
    fn json_has_samples_and_every_ratio() {
        let json = sample_report(Runtime::CurrentThread).to_json();
        assert_eq!(json["rounds"], 3);
        assert_eq!(json["runtime"], "current-thread");
        assert_eq!(json["clients"], json!(["rnats", "async-nats", "raw"]));
        let pub32 = &json["rows"][0];
        assert_eq!(pub32["scenario"], "pub32");
        assert_eq!(pub32["rnats"].as_array().map(Vec::len), Some(3));
        assert_eq!(pub32["raw"].as_array().map(Vec::len), Some(3));
        assert_eq!(pub32["raw_median"], 4.0e6);
        assert_eq!(pub32["ratio"], 1.5);
        assert_eq!(pub32["rnats_vs_async_nats"], 1.5);
        assert_eq!(pub32["rnats_vs_raw"], 0.75);
        assert_eq!(pub32["async_nats_vs_raw"], 0.5);
        assert_eq!(pub32["met"], true);
        assert_eq!(pub32["raw_target"], 0.85);
        assert_eq!(pub32["raw_met"], false);
        let lat = &json["rows"][5];
        assert_eq!(lat["scenario"], "lat");
        assert_eq!(lat["raw_target_runtime"], "current-thread");
        assert_eq!(lat["raw_met"], true);
        let kv = &json["rows"][7];
        assert_eq!(kv["scenario"], "kv-get");
        assert!(kv.get("raw").is_none());
        assert_eq!(kv["rnats_vs_raw"], Value::Null);
    }

    #[test]
    fn blocking_client_has_its_ratios_and_targets() {
        use ClientKind::{AsyncNats, Raw, Rnats, RnatsBlocking};
        let clients = [Rnats, AsyncNats, RnatsBlocking, Raw];
        let mut report = Report::new(false, 1, "x", Runtime::MultiThread, &clients);
        report.record(PUB32, Rnats, &[3.0e6, 96.0]);
        report.record(PUB32, AsyncNats, &[2.0e6, 64.0]);
        report.record(PUB32, RnatsBlocking, &[3.8e6, 121.6]);
        report.record(PUB32, Raw, &[4.0e6, 128.0]);
        report.record(Scenario::Lat, Rnats, &[60.0, 200.0]);
        report.record(Scenario::Lat, AsyncNats, &[80.0, 300.0]);
        report.record(Scenario::Lat, RnatsBlocking, &[60.0, 90.0]);
        report.record(Scenario::Lat, Raw, &[50.0, 100.0]);
        report.record(Scenario::KvGet(1), Rnats, &[10_000.0, 100.0]);
        report.record(Scenario::KvGet(1), AsyncNats, &[8_000.0, 125.0]);
        assert_eq!(
            report.ratio_pairs(),
            vec![
                (Rnats, AsyncNats),
                (RnatsBlocking, AsyncNats),
                (Rnats, Raw),
                (AsyncNats, Raw),
                (RnatsBlocking, Raw)
            ]
        );
        assert_eq!(
            report.table_pairs(),
            vec![
                (Rnats, AsyncNats),
                (RnatsBlocking, AsyncNats),
                (Rnats, Raw),
                (RnatsBlocking, Raw)
            ]
        );
        let table = report.to_markdown();
        assert!(table.contains(
            "| scenario | metric | rnats | async-nats | rnats-blocking | raw | rnats / async-nats | \
             rnats-blocking / async-nats | rnats / raw | rnats-blocking / raw | \
             target (rnats / async-nats) | target (rnats / raw) | target (rnats-blocking / raw) |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n"
        ));
        assert!(table.contains(
            "| pub32 | msgs/s (higher is better) | 3,000,000 | 2,000,000 | 3,800,000 | 4,000,000 | \
             1.50x | 1.90x | 0.75x | 0.95x | >= 1.35x: met | >= 0.85x: not met | >= 0.90x: met |"
        ));
        assert!(table.contains(
            "| lat | p50 latency (lower is better) | 60.0 µs | 80.0 µs | 60.0 µs | 50.0 µs | 0.75x | \
             0.75x | 1.20x | 1.20x | <= 0.80x: met | <= 1.30x (current-thread only) | \
             <= 1.15x: not met |"
        ));
        assert!(table.contains(
            "| kv-get | ops/s (higher is better) | 10,000 | 8,000 | - | - | 1.25x | - | - | - | \
             >= 1.00x: met | - | - |"
        ));
        let json = report.to_json();
        let pub32 = &json["rows"][0];
        assert_eq!(pub32["rnats_blocking_median"], 3.8e6);
        assert_eq!(pub32["rnats_blocking_vs_raw"], 0.95);
        assert_eq!(pub32["rnats_blocking_vs_async_nats"], 1.9);
        assert_eq!(pub32["async_nats_vs_raw"], 0.5);
        assert_eq!(pub32["blocking_raw_target"], 0.9);
        assert_eq!(pub32["blocking_raw_met"], true);
        assert_eq!(json["rows"][2]["blocking_raw_met"], false);
    }

    #[test]
    fn server_cost_is_a_row_of_its_own_after_the_process_costs() {
        use ClientKind::{Raw, Rnats};
        let mut report = Report::new(false, 2, "x", Runtime::MultiThread, &[Rnats, Raw]);
        for (rnats, raw) in [(3.0e6, 4.0e6), (3.2e6, 4.2e6)] {
            report.record(PUB32, Rnats, &[rnats, rnats * 32.0 / 1e6]);
            report.record(PUB32, Raw, &[raw, raw * 32.0 / 1e6]);
            report.record_cost(PUB32, Rnats, [0.01, 0.0, 0.06]);
            report.record_cost(PUB32, Raw, [0.0, 0.0, 0.03]);
        }
        report.record_server_cost(PUB32, Rnats, 0.20);
        report.record_server_cost(PUB32, Rnats, 0.24);
        report.record_server_cost(PUB32, Raw, 0.25);
        let metrics: Vec<&str> = report.rows.iter().map(|r| r.metric.name).collect();
        assert_eq!(
            metrics,
            [
                "msgs/s",
                "MB/s",
                "vol. switches/op",
                "invol. switches/op",
                "CPU µs/op",
                "server CPU µs/op"
            ]
        );
        let table = report.to_markdown();
        assert!(
            table.contains(
                "| pub32 | server CPU µs/op (lower is better) | 0.220 µs | 0.250 µs | 0.88x |"
            ),
            "{table}"
        );
        let json = report.to_json();
        assert_eq!(json["rows"][5]["rnats"], json!([0.20, 0.24]));
        assert_eq!(json["rows"][5]["raw_median"], 0.25);
    }

    #[test]
    fn value_formats() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
        assert_eq!(format_value(Unit::Micros, Some(12.34)), "12.3 µs");
        assert_eq!(format_value(Unit::Micros, Some(0.0634)), "0.063 µs");
        assert_eq!(format_value(Unit::Bytes, Some(1536.0)), "1,536 B");
        assert_eq!(format_value(Unit::PerSec, None), "n/a");
    }
}
