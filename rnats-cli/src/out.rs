//! Writing for people and for scripts: stdout lines, aligned tables, JSON, confirmations.

use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::error::CliError;

/// Whether `--trace` asked for JetStream API traffic on stderr.
static TRACE: AtomicBool = AtomicBool::new(false);

/// Turns `--trace` on or off for the whole run.
pub(crate) fn set_trace(on: bool) {
    TRACE.store(on, Ordering::Relaxed);
}

/// Writes one traced API exchange to stderr when `--trace` is on: `>>> SUBJECT BODY` for a
/// request, `<<< SUBJECT BODY` for its reply.
pub(crate) fn trace(direction: &str, subject: &str, body: &serde_json::Value) {
    if TRACE.load(Ordering::Relaxed) {
        eprintln!("{direction} {subject} {body}");
    }
}

/// Writes `text` to stdout as it is.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(CliError::Stdout)
}

/// Writes raw bytes (a message payload) to stdout.
pub(crate) fn print_bytes(bytes: &[u8]) -> Result<(), CliError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(CliError::Stdout)
}

/// Writes `value` as one line of JSON.
pub(crate) fn json<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let mut text = serde_json::to_string(value)?;
    text.push('\n');
    print(&text)
}

/// Writes `value` as indented JSON, for `info --json` output people read too.
pub(crate) fn json_pretty<T: Serialize + ?Sized>(value: &T) -> Result<(), CliError> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    print(&text)
}

/// Whether stdout is a terminal (for colour and progress bars).
pub(crate) fn stdout_is_tty() -> bool {
    io::stdout().is_terminal()
}

/// A table with a header row; columns are padded to their widest cell.
#[derive(Debug, Default)]
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// `line` (the header row) with each of `titles` in bold, the only colour rnats uses; the
/// escapes go in after the layout so they take no width.
fn bold_titles(line: &str, titles: &[String]) -> String {
    let mut out = String::with_capacity(line.len() + titles.len() * 8);
    let mut rest = line;
    for title in titles {
        let Some(at) = rest.find(title.as_str()) else {
            continue;
        };
        out.push_str(&rest[..at]);
        out.push_str(&format!("\x1b[1m{title}\x1b[0m"));
        rest = &rest[at + title.len()..];
    }
    out.push_str(rest);
    out
}

impl Table {
    /// A table with these column titles.
    pub(crate) fn new<const N: usize>(header: [&str; N]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Writes the table to stdout.
    pub(crate) fn print(&self) -> Result<(), CliError> {
        print(&self.render())
    }

    /// The table as text: columns two spaces apart, the last one unpadded, laid out by
    /// comfy-table.
    pub(crate) fn render(&self) -> String {
        let columns = self.header.len();
        let mut table = comfy_table::Table::new();
        table.load_preset(comfy_table::presets::NOTHING);
        table.set_header(self.header.clone());
        for row in &self.rows {
            table.add_row(row.iter().take(columns).cloned().collect::<Vec<_>>());
        }
        for (i, column) in table.column_iter_mut().enumerate() {
            column.set_padding((0, if i + 1 == columns { 0 } else { 2 }));
        }
        let mut out = String::new();
        for (n, line) in table.lines().enumerate() {
            let line = line.trim_end();
            if n == 0 && stdout_is_tty() {
                out.push_str(&bold_titles(line, &self.header));
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        out
    }
}

/// Aligned `Label: value` lines, for `info` commands.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    lines: Vec<(String, String)>,
}

impl Fields {
    /// No lines yet.
    pub(crate) fn new() -> Fields {
        Fields::default()
    }

    /// Adds a line.
    pub(crate) fn add(&mut self, label: &str, value: impl std::fmt::Display) {
        self.lines.push((label.to_owned(), value.to_string()));
    }

    /// Adds a line only when `value` is `Some`.
    pub(crate) fn add_some<T: std::fmt::Display>(&mut self, label: &str, value: Option<T>) {
        if let Some(value) = value {
            self.add(label, value);
        }
    }

    /// The lines, labels right-aligned, indented by two spaces.
    pub(crate) fn render(&self) -> String {
        let width = self.lines.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
        self.lines
            .iter()
            .map(|(label, value)| format!("  {label:>width$}: {value}\n"))
            .collect()
    }
}

/// Asks `question` on the terminal and returns whether the answer was yes. Without a
/// terminal there is nobody to ask, which is an error unless `force` was given.
pub(crate) fn confirm(question: &str, force: bool) -> Result<(), CliError> {
    if force {
        return Ok(());
    }
    if !io::stdin().is_terminal() || !io::stderr().is_terminal() {
        return Err(CliError::NeedsForce(question.to_owned()));
    }
    eprint!("{question}? [y/N] ");
    let mut answer = String::new();
    io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(CliError::Stdin)?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(CliError::Cancelled),
    }
}

/// Reads standard input to its end.
pub(crate) fn read_stdin() -> Result<Vec<u8>, CliError> {
    let mut body = Vec::new();
    io::Read::read_to_end(&mut io::stdin().lock(), &mut body).map_err(CliError::Stdin)?;
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_all_but_the_last_column() {
        let mut table = Table::new(["Name", "Messages"]);
        table.row(vec!["ORDERS".into(), "12".into()]);
        table.row(vec!["A".into(), "1,000".into()]);
        assert_eq!(
            table.render(),
            "Name    Messages\nORDERS  12\nA       1,000\n"
        );
    }

    #[test]
    fn fields_align_on_the_colon() {
        let mut fields = Fields::new();
        fields.add("Name", "x");
        fields.add("Subjects", "a, b");
        assert_eq!(fields.render(), "      Name: x\n  Subjects: a, b\n");
    }
}
