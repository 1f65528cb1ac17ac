//! `rnats server report cpu` and `server report mem`: each server's CPU or memory use from
//! its statistics (`$SYS.REQ.SERVER.PING`, `statsz.cpu` and `statsz.mem`), drawn as natscli
//! draws them: one bar per server, the smallest first.

use clap::Args;

use super::cells::number;
use super::gather::{ReportFilter, by_server_name, ping};
use crate::conn::ConnArgs;
use crate::core::server_ping::Answer;
use crate::error::CliError;
use crate::jetstream::bytes as size;
use crate::stats::human;

/// The longest bar, in blocks (natscli's at most 30).
const WIDTH: usize = 30;

/// Options of `server report cpu` and `server report mem`.
#[derive(Debug, Args)]
pub(super) struct UsageArgs {
    #[command(flatten)]
    filter: ReportFilter,
}

/// What the bars measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Usage {
    /// Per cent of one core (`statsz.cpu`).
    Cpu,
    /// Resident memory in bytes (`statsz.mem`).
    Memory,
}

impl Usage {
    /// The caption above the bars.
    fn caption(self) -> &'static str {
        match self {
            Usage::Cpu => "CPU Usage",
            Usage::Memory => "Memory Usage",
        }
    }

    /// One server's figure; a missing or unreadable one is 0.
    fn of(self, answer: &Answer) -> f64 {
        let statsz = &answer.stats["statsz"];
        match self {
            Usage::Cpu => statsz["cpu"].as_f64().unwrap_or(0.0),
            Usage::Memory => number(&statsz["mem"]) as f64,
        }
    }

    /// A figure as the bar's label shows it, as natscli writes it.
    fn label(self, value: f64) -> String {
        match self {
            Usage::Cpu => human::figure(value),
            // A memory figure was read as a whole number of bytes.
            Usage::Memory => size(value as u64),
        }
    }
}

/// Runs `server report cpu` or `server report mem`.
pub(super) async fn run(conn: &ConnArgs, args: UsageArgs, usage: Usage) -> Result<(), CliError> {
    let (mut answers, missing) = ping(conn, &args.filter).await?;
    answers.sort_by(by_server_name);
    if args.filter.json {
        return missing.json_with(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
    }
    let mut figures: Vec<(String, f64)> = answers
        .iter()
        .map(|a| {
            let name = a.stats["server"]["name"].as_str().unwrap_or_default();
            (name.to_owned(), usage.of(a))
        })
        .collect();
    // The smallest first, ties by name (the answers came sorted by name).
    figures.sort_by(|a, b| a.1.total_cmp(&b.1));
    if args.filter.reverse {
        figures.reverse();
    }
    missing.print_under(&bars(usage, &figures))
}

/// The caption and a bar per server: `name: ████ (figure)`, names aligned on the right.
/// A bar's length is its figure's place between the smallest and the largest, in whole
/// blocks (cut short, as natscli cuts them), so the largest fills [`WIDTH`] and the
/// smallest shows as `▏`; when all are the same, every bar is full (and a zero is always
/// `▏`), as natscli draws them.
fn bars(usage: Usage, figures: &[(String, f64)]) -> String {
    let finite = || figures.iter().map(|f| f.1).filter(|v| v.is_finite());
    let min = finite().fold(f64::INFINITY, f64::min);
    let max = finite().fold(f64::NEG_INFINITY, f64::max);
    let longest = figures
        .iter()
        .map(|f| f.0.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = format!("{}\n\n", usage.caption());
    for (name, value) in figures {
        let blocks = if *value == 0.0 || !value.is_finite() {
            0
        } else if max > min {
            // natscli divides by the width of a block, (max - min) / WIDTH, which float
            // error can leave the largest one block short of; the share of the range is
            // exactly 1 for the largest. The cast cuts short and saturates, and the bar
            // never passes the width.
            (((value - min) / (max - min)) * WIDTH as f64) as usize
        } else {
            WIDTH
        };
        let bar = match blocks.min(WIDTH) {
            0 => "▏".to_owned(),
            n => "█".repeat(n),
        };
        let pad = " ".repeat(longest - name.chars().count() + 2);
        text.push_str(&format!("{pad}{name}: {bar} ({})\n", usage.label(*value)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(values: &[(&str, f64)]) -> Vec<(String, f64)> {
        values.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect()
    }

    #[test]
    fn the_largest_bar_is_full_the_smallest_a_sliver_and_the_rest_cut_short() {
        let text = bars(
            Usage::Cpu,
            &figures(&[("a", 1.0), ("bb", 2.5), ("c", 1001.0)]),
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..2], ["CPU Usage", ""]);
        assert_eq!(lines[2], "   a: ▏ (1)");
        // 1.5 of 1000 is 0.045 blocks: none, a sliver.
        assert_eq!(lines[3], "  bb: ▏ (2.5)");
        assert_eq!(lines[4], format!("   c: {} (1,001)", "█".repeat(WIDTH)));
        // 1.5 of 2 is 22.5 blocks: 22.
        let text = bars(Usage::Cpu, &figures(&[("a", 1.0), ("b", 2.5), ("c", 3.0)]));
        assert!(
            text.contains(&format!("  b: {} (2.5)\n", "█".repeat(22))),
            "{text}"
        );
    }

    #[test]
    fn equal_figures_fill_every_bar_and_a_zero_or_nonsense_is_a_sliver() {
        let text = bars(
            Usage::Memory,
            &figures(&[("a", 2048.0), ("b", 2048.0), ("z", 0.0)]),
        );
        assert!(
            text.contains(&format!("  a: {} (2 KiB)", "█".repeat(WIDTH))),
            "{text}"
        );
        assert!(text.contains("  z: ▏ (0 B)"), "{text}");
        let text = bars(Usage::Cpu, &figures(&[("n", f64::NAN), ("m", 1.0)]));
        assert!(text.contains("  n: ▏ (NaN)"), "{text}");
        assert!(
            text.contains(&format!("  m: {} (1)", "█".repeat(WIDTH))),
            "{text}"
        );
    }
}
