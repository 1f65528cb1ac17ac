//! `rnats stream gaps STREAM`: the runs of deleted sequences between a stream's first and
//! last message, from the stream info with its deleted sequences listed (`deleted_details`),
//! as natscli's `stream gaps` reports them.

use clap::Args;
use rnats::jetstream::Context;

use crate::error::CliError;
use crate::out::{self, Table};
use crate::stats::human;

/// Options of `stream gaps`.
#[derive(Debug, Args)]
pub(crate) struct GapsArgs {
    /// The stream.
    stream: String,
    /// The gaps as a JSON array of `[first, last]` pairs.
    #[arg(long, short = 'j')]
    json: bool,
    /// Accepted as natscli has it: rnats reads the gaps in one request and does not ask.
    #[arg(long, short = 'f')]
    force: bool,
    /// Accepted as natscli has it; one request has no progress to show.
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// Accepted as natscli has it.
    #[arg(long, overrides_with = "progress")]
    no_progress: bool,
}

/// A run of deleted sequences, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gap {
    first: u64,
    last: u64,
}

impl Gap {
    /// How many sequences the gap spans.
    fn len(self) -> u64 {
        (self.last - self.first).saturating_add(1)
    }
}

/// Runs `stream gaps`.
pub(crate) async fn run(js: &Context, args: GapsArgs) -> Result<(), CliError> {
    let name = args.stream;
    let action = format!("cannot read the deleted messages of stream {name}");
    let stream = js
        .get_stream_no_info(&name)
        .await
        .map_err(CliError::js(&action))?;
    let info = stream
        .info_builder()
        .with_deleted(true)
        .fetch()
        .await
        .map_err(CliError::js(&action))?
        .info;
    let deleted = info.state.deleted.unwrap_or_default();
    // The server lists every deleted sequence it counts; should one ever list fewer, the
    // gaps would be wrong rather than short, so say so instead of printing them.
    let counted = info.state.deleted_count.unwrap_or(0);
    if counted > deleted.len() as u64 {
        return Err(CliError::js(action)(format!(
            "the server listed {} of the {counted} deleted sequences",
            deleted.len()
        )));
    }
    let gaps = gaps(deleted);
    if args.json {
        let pairs: Vec<[u64; 2]> = gaps.iter().map(|g| [g.first, g.last]).collect();
        return out::json(&pairs);
    }
    out::print(&render(&name, &gaps))
}

/// The runs of consecutive sequences in `deleted`, in order (the list need not be sorted,
/// and a sequence listed twice counts once).
fn gaps(mut deleted: Vec<u64>) -> Vec<Gap> {
    deleted.sort_unstable();
    deleted.dedup();
    let mut gaps: Vec<Gap> = Vec::new();
    for seq in deleted {
        match gaps.last_mut() {
            Some(gap) if gap.last.checked_add(1) == Some(seq) => gap.last = seq,
            _ => gaps.push(Gap {
                first: seq,
                last: seq,
            }),
        }
    }
    gaps
}

/// `stream gaps` for people: a title and a table, or a line saying there are none.
fn render(stream: &str, gaps: &[Gap]) -> String {
    if gaps.is_empty() {
        return format!("No deleted messages in {stream}\n");
    }
    let title = match gaps.len() {
        1 => format!("1 gap found in stream {stream}"),
        n => format!("{} gaps found in stream {stream}", human::count(n as u64)),
    };
    let mut table = Table::new(["First message", "Last message", "Deleted"]);
    for gap in gaps {
        table.row(vec![
            human::count(gap.first),
            human::count(gap.last),
            human::count(gap.len()),
        ]);
    }
    format!("{title}\n\n{}", table.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(gaps: &[Gap]) -> Vec<(u64, u64)> {
        gaps.iter().map(|g| (g.first, g.last)).collect()
    }

    #[test]
    fn consecutive_sequences_make_one_gap() {
        assert_eq!(pairs(&gaps(vec![])), []);
        assert_eq!(pairs(&gaps(vec![7])), [(7, 7)]);
        assert_eq!(
            pairs(&gaps(vec![3, 4, 5, 9, 11, 12])),
            [(3, 5), (9, 9), (11, 12)]
        );
    }

    #[test]
    fn unsorted_and_repeated_sequences_give_the_same_gaps() {
        assert_eq!(
            pairs(&gaps(vec![12, 4, 3, 11, 4, 9, 5])),
            [(3, 5), (9, 9), (11, 12)]
        );
    }

    #[test]
    fn the_largest_sequence_ends_a_gap_without_overflow() {
        assert_eq!(
            pairs(&gaps(vec![u64::MAX, u64::MAX - 1, 1])),
            [(1, 1), (u64::MAX - 1, u64::MAX)]
        );
    }

    #[test]
    fn the_table_counts_each_gap() {
        let text = render("S", &gaps(vec![2, 3, 1000, 1001, 1002]));
        assert_eq!(
            text,
            "2 gaps found in stream S\n\n\
             First message  Last message  Deleted\n\
             2              3             2\n\
             1,000          1,002         3\n"
        );
        assert_eq!(render("S", &[]), "No deleted messages in S\n");
        assert!(render("S", &gaps(vec![5])).starts_with("1 gap found in stream S\n"));
    }
}
