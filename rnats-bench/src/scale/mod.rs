//! The scale family: how a cost grows with the work (issue 22). Each [`Axis`] is one kind of
//! growth (subscriptions, requests in flight, servers announced, connections, headers, KV
//! keys, object size), measured at 4 or more points; a [`Curve`] is one client's figures at
//! every point, printed as a table ([`to_markdown`]), drawn as an SVG line chart
//! ([`svg::chart`]) and written as JSON ([`to_json`]).
//!
//! The probes are written once, in `probes.rs`, against the API rnats and async-nats share,
//! and compiled once per client: here for rnats ([`rnats_side`], which the `rnats bench scale`
//! command uses too), and in `benches/scale.rs` for async-nats (a dev-dependency only).

pub mod args;
pub mod blocking_probes;
pub mod fake_server;
pub mod heap;
pub mod pattern;
pub mod responder;
pub mod rnats_side;
pub mod svg;

use std::fmt;

/// Any failure of a probe; its message ends up in the report.
pub type ScaleError = Box<dyn std::error::Error + Send + Sync>;

/// One kind of growth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// Subscriptions on one connection, each on its own subject.
    Subs,
    /// Requests in flight at once on one connection.
    Requests,
    /// Cluster members announced in the server's INFO (`connect_urls`).
    Servers,
    /// Connections in one process, each with a subscription.
    Connections,
    /// Headers on every message.
    Headers,
    /// Keys in a Key-Value bucket, listed with `keys()`.
    KvKeys,
    /// Size of one Object Store object, in MiB.
    Objects,
}

/// One figure an axis reports at every point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// What is measured.
    pub name: &'static str,
    /// Its unit, per item where it is a per-item cost.
    pub unit: &'static str,
    /// Whether a larger value is better (rates); most figures are costs.
    pub higher_is_better: bool,
}

const fn cost(name: &'static str, unit: &'static str) -> Metric {
    Metric {
        name,
        unit,
        higher_is_better: false,
    }
}

const fn rate(name: &'static str, unit: &'static str) -> Metric {
    Metric {
        name,
        unit,
        higher_is_better: true,
    }
}

impl Axis {
    /// Every axis, in the order of value (issue 22).
    pub const ALL: [Axis; 7] = [
        Axis::Subs,
        Axis::Requests,
        Axis::Servers,
        Axis::Connections,
        Axis::Headers,
        Axis::KvKeys,
        Axis::Objects,
    ];

    /// The name on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Subs => "subs",
            Axis::Requests => "requests",
            Axis::Servers => "servers",
            Axis::Connections => "connections",
            Axis::Headers => "headers",
            Axis::KvKeys => "kv-keys",
            Axis::Objects => "objects",
        }
    }

    /// Parses [`Axis::name`].
    pub fn from_name(name: &str) -> Option<Axis> {
        Axis::ALL.into_iter().find(|a| a.name() == name)
    }

    /// What the point number counts, for the table header and the chart's x axis.
    pub fn unit(self) -> &'static str {
        match self {
            Axis::Subs => "subscriptions",
            Axis::Requests => "requests in flight",
            Axis::Servers => "servers announced",
            Axis::Connections => "connections",
            Axis::Headers => "headers per message",
            Axis::KvKeys => "keys",
            Axis::Objects => "object MiB",
        }
    }

    /// The points of a full run, smallest first.
    pub fn points(self) -> &'static [usize] {
        match self {
            Axis::Subs => &[1, 1_000, 10_000, 100_000],
            Axis::Requests => &[1, 100, 10_000, 100_000],
            Axis::Servers => &[1, 100, 1_000, 10_000],
            Axis::Connections => &[1, 10, 100, 1_000],
            Axis::Headers => &[0, 10, 100, 1_000],
            Axis::KvKeys => &[1_000, 10_000, 100_000, 1_000_000],
            Axis::Objects => &[1, 16, 64, 1024],
        }
    }

    /// The points to run: all, or with `quick` (CI) the smallest only.
    pub fn plan(self, quick: bool) -> &'static [usize] {
        let points = self.points();
        if quick { &points[..1] } else { points }
    }

    /// Whether the blocking client runs this axis: it has no JetStream API (KV, Object
    /// Store), and the servers axis measures the async engine's INFO handling.
    pub fn blocking_applies(self) -> bool {
        matches!(
            self,
            Axis::Subs | Axis::Requests | Axis::Connections | Axis::Headers
        )
    }

    /// The figures reported at each point, in the order the probes return them.
    pub fn metrics(self) -> &'static [Metric] {
        const SUBS: [Metric; 3] = [
            cost("subscribe", "µs/sub"),
            cost("publish→deliver", "µs/msg"),
            cost("memory", "B/sub"),
        ];
        const REQUESTS: [Metric; 2] = [cost("request", "µs/req"), cost("peak memory", "B/req")];
        const SERVERS: [Metric; 2] = [
            cost("connect", "µs"),
            cost("message after INFO update", "µs"),
        ];
        const CONNECTIONS: [Metric; 3] = [
            cost("connect", "µs/conn"),
            cost("memory", "KiB/conn"),
            cost("threads", "/conn"),
        ];
        const HEADERS: [Metric; 2] = [
            cost("publish→deliver", "µs/msg"),
            cost("per header byte", "ns/B"),
        ];
        const KV_KEYS: [Metric; 2] = [cost("keys()", "µs/key"), cost("peak memory", "KiB")];
        const OBJECTS: [Metric; 3] = [
            rate("put", "MB/s"),
            rate("get", "MB/s"),
            cost("peak memory", "MiB"),
        ];
        match self {
            Axis::Subs => &SUBS,
            Axis::Requests => &REQUESTS,
            Axis::Servers => &SERVERS,
            Axis::Connections => &CONNECTIONS,
            Axis::Headers => &HEADERS,
            Axis::KvKeys => &KV_KEYS,
            Axis::Objects => &OBJECTS,
        }
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One client's figures along one axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The client's name.
    pub client: String,
    /// `(point, figures in the order of [`Axis::metrics`])`; a failed point has no figures.
    pub points: Vec<(usize, Result<Vec<f64>, String>)>,
}

impl Curve {
    /// The figure of metric `metric` at each point that has one.
    pub fn series(&self, metric: usize) -> Vec<(usize, f64)> {
        self.points
            .iter()
            .filter_map(|(n, values)| {
                let v = *values.as_ref().ok()?.get(metric)?;
                v.is_finite().then_some((*n, v))
            })
            .collect()
    }

    /// Largest point's figure over the smallest's, for metric `metric` (skipping points with
    /// no figure): 1.0 is flat.
    pub fn growth(&self, metric: usize) -> Option<f64> {
        let series = self.series(metric);
        let (first, last) = (series.first()?.1, series.last()?.1);
        (series.len() > 1 && first > 0.0).then(|| last / first)
    }
}

/// The figures of several rounds of one point as one: each figure's median (of those
/// rounds that have it; `NaN` where none has). Any failed round fails the point, with the
/// first round's error.
pub fn median_of(rounds: Vec<Result<Vec<f64>, String>>) -> Result<Vec<f64>, String> {
    let rounds: Vec<Vec<f64>> = rounds.into_iter().collect::<Result<_, _>>()?;
    let width = rounds.iter().map(Vec::len).max().unwrap_or(0);
    Ok((0..width)
        .map(|m| {
            let mut values: Vec<f64> = rounds
                .iter()
                .filter_map(|r| r.get(m).copied())
                .filter(|v| v.is_finite())
                .collect();
            values.sort_by(f64::total_cmp);
            match values.len() {
                0 => f64::NAN,
                n if n % 2 == 1 => values[n / 2],
                n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
            }
        })
        .collect())
}

/// A figure as a table cell: three significant digits, "-" for none.
pub fn format_value(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_owned();
    }
    let magnitude = value.abs();
    if magnitude >= 100.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// The curves of one axis as a markdown table: a row per point, a column per metric and
/// client, and a last row with each column's growth (largest point over smallest).
pub fn to_markdown(axis: Axis, curves: &[Curve]) -> String {
    let metrics = axis.metrics();
    let mut header = format!("| {} |", axis.unit());
    let mut rule = String::from("|---:|");
    for metric in metrics {
        for curve in curves {
            header.push_str(&format!(
                " {} {} ({}) |",
                curve.client, metric.name, metric.unit
            ));
            rule.push_str("---:|");
        }
    }
    let mut out = format!("{header}\n{rule}\n");
    let mut points: Vec<usize> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|(n, _)| *n))
        .collect();
    points.sort_unstable();
    points.dedup();
    for n in points {
        out.push_str(&format!("| {n} |"));
        for m in 0..metrics.len() {
            for curve in curves {
                let cell = match curve.points.iter().find(|(p, _)| *p == n) {
                    Some((_, Ok(values))) => values.get(m).map_or("-".into(), |v| format_value(*v)),
                    Some((_, Err(_))) => "FAILED".to_owned(),
                    None => "-".to_owned(),
                };
                out.push_str(&format!(" {cell} |"));
            }
        }
        out.push('\n');
    }
    out.push_str("| growth |");
    for m in 0..metrics.len() {
        for curve in curves {
            let cell = curve
                .growth(m)
                .map_or("-".to_owned(), |g| format!("{g:.2}x"));
            out.push_str(&format!(" {cell} |"));
        }
    }
    out.push('\n');
    for curve in curves {
        for (n, result) in &curve.points {
            if let Err(e) = result {
                out.push_str(&format!("\nFAILED: {} at {n}: {e}", curve.client));
            }
        }
    }
    out
}

/// The raw points of one axis as JSON.
pub fn to_json(axis: Axis, curves: &[Curve]) -> serde_json::Value {
    let metrics: Vec<_> = axis
        .metrics()
        .iter()
        .map(|m| serde_json::json!({"name": m.name, "unit": m.unit}))
        .collect();
    let clients: Vec<_> = curves
        .iter()
        .map(|curve| {
            let points: Vec<_> = curve
                .points
                .iter()
                .map(|(n, result)| match result {
                    Ok(values) => serde_json::json!({
                        "n": n,
                        "values": values.iter().map(|v| v.is_finite().then_some(*v)).collect::<Vec<_>>(),
                    }),
                    Err(e) => serde_json::json!({"n": n, "error": e}),
                })
                .collect();
            serde_json::json!({"client": curve.client, "points": points})
        })
        .collect();
    serde_json::json!({
        "axis": axis.name(),
        "unit": axis.unit(),
        "memory_basis": heap::basis(),
        "metrics": metrics,
        "clients": clients,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(client: &str, points: &[(usize, f64)]) -> Curve {
        Curve {
            client: client.to_owned(),
            points: points
                .iter()
                .map(|&(n, v)| (n, Ok(vec![v, v * 2.0])))
                .collect(),
        }
    }

    #[test]
    fn names_round_trip_and_every_axis_has_four_points() {
        for axis in Axis::ALL {
            assert_eq!(Axis::from_name(axis.name()), Some(axis));
            assert!(axis.points().len() >= 4, "{axis}");
            assert!(axis.points().windows(2).all(|w| w[0] < w[1]), "{axis}");
            assert_eq!(axis.plan(true), &axis.points()[..1]);
            assert!(!axis.metrics().is_empty());
        }
        assert_eq!(Axis::from_name("nope"), None);
    }

    #[test]
    fn growth_is_last_over_first_skipping_gaps() {
        let mut c = curve("rnats", &[(1, 2.0), (10, 3.0), (100, 4.0)]);
        assert_eq!(c.growth(0), Some(2.0));
        c.points.push((1000, Err("boom".into())));
        assert_eq!(c.growth(1), Some(2.0));
        assert_eq!(curve("x", &[(1, 2.0)]).growth(0), None);
        let gap = Curve {
            client: "x".into(),
            points: vec![
                (0, Ok(vec![f64::NAN])),
                (1, Ok(vec![2.0])),
                (2, Ok(vec![3.0])),
            ],
        };
        assert_eq!(gap.series(0), vec![(1, 2.0), (2, 3.0)]);
        assert_eq!(gap.growth(0), Some(1.5));
    }

    #[test]
    fn table_has_a_row_per_point_and_a_growth_row() {
        let mut rnats = curve("rnats", &[(1, 1.0), (1000, 1.5)]);
        rnats.points.push((10_000, Err("timeout".into())));
        let other = curve("async-nats", &[(1, 1.0), (1000, 30.0)]);
        let table = to_markdown(Axis::Requests, &[rnats, other]);
        assert!(table.starts_with("| requests in flight | rnats request (µs/req) |"));
        assert!(
            table.contains("| 1000 | 1.50 | 30.0 | 3.00 | 60.0 |"),
            "{table}"
        );
        assert!(table.contains("| 10000 | FAILED | - |"), "{table}");
        assert!(table.contains("| growth | 1.50x | 30.00x |"), "{table}");
        assert!(table.contains("FAILED: rnats at 10000: timeout"));
    }

    #[test]
    fn rounds_become_each_figures_median() {
        let rounds = vec![
            Ok(vec![3.0, 10.0]),
            Ok(vec![1.0, f64::NAN]),
            Ok(vec![2.0, 30.0]),
        ];
        assert_eq!(median_of(rounds), Ok(vec![2.0, 20.0]));
        assert_eq!(
            median_of(vec![Ok(vec![1.0]), Err("boom".into())]),
            Err("boom".to_owned())
        );
        let none = median_of(vec![Ok(vec![f64::NAN])]).unwrap();
        assert!(none[0].is_nan());
    }

    #[test]
    fn values_print_with_three_significant_digits() {
        assert_eq!(format_value(1234.5), "1234");
        assert_eq!(format_value(12.345), "12.3");
        assert_eq!(format_value(1.2345), "1.23");
        assert_eq!(format_value(0.12345), "0.123");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(f64::NAN), "-");
    }

    #[test]
    fn json_keeps_every_point() {
        let json = to_json(Axis::Subs, &[curve("rnats", &[(1, 1.0), (1000, f64::NAN)])]);
        assert_eq!(json["axis"], "subs");
        assert_eq!(json["clients"][0]["points"][1]["n"], 1000);
        assert!(json["clients"][0]["points"][1]["values"][0].is_null());
        assert_eq!(json["metrics"][0]["unit"], "µs/sub");
    }
}
