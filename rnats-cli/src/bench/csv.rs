//! `--csv FILE`: one row per client in natscli's columns, so its spreadsheets and scripts
//! read rnats' runs too.

use std::fmt::Write;

use super::report::BenchReport;

/// natscli's columns for runs without per-operation latency.
const RATE_COLUMNS: &str = "#RunID,ClientID,MsgCount,MsgBytes,MsgsPerSec,BytesPerSec,DurationSecs";
/// natscli's extra columns for runs that time each operation.
const LATENCY_COLUMNS: &str = ",MinLatencyMicroSecs,AvgLatencyMicroSecs,MaxLatencyMicroSecs,\
P50LatencyMicroSecs,P90LatencyMicroSecs,P99LatencyMicroSecs,P99.9LatencyMicroSecs,\
StdDevLatencyMicroSecs";

/// The CSV text of `report`: a header, then a row per client of every group, named by the
/// first letter of its role and its index (`P0`, `S1`, ...), as natscli names them.
pub(super) fn render(report: &BenchReport) -> String {
    let run_id = nuid::next().to_string();
    let figures = &report.figures;
    let timed = !figures.client_latency.is_empty();
    let mut out = String::from(RATE_COLUMNS);
    if timed {
        out.push_str(LATENCY_COLUMNS);
    }
    out.push('\n');
    for (role, group) in figures.groups() {
        let prefix = role.chars().next().map_or('C', |c| c.to_ascii_uppercase());
        for (i, t) in group.clients.iter().enumerate() {
            let _ = write!(
                out,
                "{run_id},{prefix}{i},{},{},{},{:.6},{:.6}",
                t.msgs,
                t.bytes,
                t.msgs_per_sec.round() as u64,
                t.mb_per_sec * 1e6,
                t.seconds
            );
            if timed {
                match figures.client_latency.get(i) {
                    Some(l) => {
                        let _ = write!(
                            out,
                            ",{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
                            l.min_us,
                            l.mean_us,
                            l.max_us,
                            l.p50_us,
                            l.p90_us,
                            l.p99_us,
                            l.p99_9_us,
                            l.stddev_us
                        );
                    }
                    None => out.push_str(",,,,,,,,"),
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::bench::BenchKind;
    use crate::bench::report::{Figures, Group};
    use crate::stats::{Latencies, Span};

    fn report(timed: bool) -> BenchReport {
        let t0 = Instant::now();
        let span = Span::of(1_000, 100, t0, t0 + Duration::from_millis(500));
        let mut latencies = Latencies::new();
        latencies.record(Duration::from_micros(20));
        let figures = Figures {
            publishers: Group::from_spans(&[span, span]),
            ..Figures::default()
        };
        BenchReport {
            kind: BenchKind::Pub,
            server: "nats://127.0.0.1:4222".to_owned(),
            private_server: true,
            runtime: "multi-thread",
            msg_size: 100,
            msgs: 2_000,
            clients: 2,
            figures: if timed {
                figures.timed(&[latencies.clone(), latencies])
            } else {
                figures
            },
        }
    }

    #[test]
    fn a_row_per_client_in_natscli_columns() {
        let text = render(&report(false));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], RATE_COLUMNS);
        let cells: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(cells[1..5], ["P0", "1000", "100000", "2000"]);
        assert_eq!(cells[5], "200000.000000");
        assert!(lines[2].contains(",P1,"));
    }

    #[test]
    fn timed_runs_add_the_latency_columns() {
        let text = render(&report(true));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("StdDevLatencyMicroSecs"));
        assert_eq!(lines[1].split(',').count(), 15, "{text}");
        assert!(lines[1].contains(",20.0"), "{text}");
    }
}
