//! `rnats counter`: natscli's distributed counter commands (ADR-49) over the library's
//! typed counters, values exact however large (the server keeps them as big integers).

use clap::{Args, Subcommand};
use futures_util::TryStreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::counter::{Counter, CounterEntry, CounterValue};
use serde_json::json;

use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out::{self, Fields, Table};

/// Options of `rnats counter`.
#[derive(Debug, Args)]
pub(crate) struct CounterArgs {
    /// What to do.
    #[command(subcommand)]
    command: CounterCommand,
}

/// The `counter` subcommands, as natscli names them.
#[derive(Debug, Subcommand)]
enum CounterCommand {
    /// Gets the current value of a counter.
    ///
    /// Example: rnats counter get hits.home
    #[command(alias = "g")]
    Get {
        /// The counter's subject.
        subject: String,
        #[command(flatten)]
        stream: StreamFlag,
    },
    /// Shows a counter's value, last increment and sources.
    ///
    /// Example: rnats counter view hits.total --json
    #[command(alias = "v")]
    View {
        /// The counter's subject.
        subject: String,
        #[command(flatten)]
        stream: StreamFlag,
        /// Print JSON (values as strings, exact).
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Adds to a counter and prints its new value.
    ///
    /// Example: rnats counter incr hits.home 5
    #[command(aliases = ["incr", "inc", "i", "add"])]
    Increment {
        /// The counter's subject.
        subject: String,
        /// How much to add (any size; negative subtracts).
        #[arg(default_value = "1", allow_negative_numbers = true, value_parser = parse_value)]
        value: CounterValue,
        #[command(flatten)]
        stream: StreamFlag,
    },
    /// Subtracts from a counter and prints its new value.
    ///
    /// Example: rnats counter decr hits.home 2
    #[command(aliases = ["decr", "dec", "d"])]
    Decrement {
        /// The counter's subject.
        subject: String,
        /// How much to subtract (any size).
        #[arg(default_value = "1", allow_negative_numbers = true, value_parser = parse_value)]
        value: CounterValue,
        #[command(flatten)]
        stream: StreamFlag,
    },
    /// Lists the counters of a stream, or those matching a subject, with their values.
    ///
    /// Example: rnats counter ls 'hits.>'   |   rnats counter ls --stream HITS --names
    #[command(aliases = ["l", "ls"])]
    List {
        /// Subjects to list (wildcards allowed; default: every subject of --stream).
        subject: Option<String>,
        #[command(flatten)]
        stream: StreamFlag,
        /// Only the subjects.
        #[arg(long, short = 'n')]
        names: bool,
        /// Print JSON: an array of {"subject", "value"} (values as strings, exact).
        #[arg(long, short = 'j')]
        json: bool,
    },
}

/// `--stream`: the counter stream, found from the subject when absent.
#[derive(Debug, Args)]
struct StreamFlag {
    /// The stream holding the counter (default: the stream that stores the subject).
    #[arg(long, value_name = "STREAM")]
    stream: Option<String>,
}

fn parse_value(text: &str) -> Result<CounterValue, String> {
    text.parse()
        .map_err(|_| "expected a whole number such as 5, -3 or 18446744073709551616".to_owned())
}

/// Runs `rnats counter`.
pub(crate) async fn run(args: CounterArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let js = crate::conn::jetstream(conn).await?;
    match args.command {
        CounterCommand::Get { subject, stream } => {
            let counter = open(&js, stream.stream, &subject).await?;
            let entry = counter
                .get(&subject)
                .await
                .map_err(CliError::js(format!("counter {subject}")))?;
            out::print(&format!("{}\n", entry.value))
        }
        CounterCommand::View {
            subject,
            stream,
            json,
        } => {
            let counter = open(&js, stream.stream, &subject).await?;
            let entry = counter
                .get(&subject)
                .await
                .map_err(CliError::js(format!("counter {subject}")))?;
            if json {
                return out::json_pretty(&entry_json(&entry));
            }
            out::print(&render(&entry))
        }
        CounterCommand::Increment {
            subject,
            value,
            stream,
        } => add(&js, stream.stream, &subject, value).await,
        CounterCommand::Decrement {
            subject,
            value,
            stream,
        } => add(&js, stream.stream, &subject, -value).await,
        CounterCommand::List {
            subject,
            stream,
            names,
            json,
        } => list(&js, stream.stream, subject, names, json).await,
    }
}

/// Adds `delta` to the counter on `subject` and prints the new total.
async fn add(
    js: &Context,
    stream: Option<String>,
    subject: &str,
    delta: CounterValue,
) -> Result<(), CliError> {
    let counter = open(js, stream, subject).await?;
    let total = counter
        .add(subject, delta)
        .await
        .map_err(CliError::js(format!("cannot add to counter {subject}")))?;
    out::print(&format!("{total}\n"))
}

/// Lists the counters matching `subject` (every one without), read as one snapshot.
async fn list(
    js: &Context,
    stream: Option<String>,
    subject: Option<String>,
    names: bool,
    json: bool,
) -> Result<(), CliError> {
    if stream.is_none() && subject.is_none() {
        return Err(CliError::Usage("give a SUBJECT or --stream STREAM"));
    }
    let filter = subject.unwrap_or_else(|| ">".to_owned());
    let counter = open(js, stream, &filter).await?;
    let entries: Vec<CounterEntry> = counter
        .get_many([filter.clone()])
        .try_collect()
        .await
        .map_err(CliError::js(format!("cannot list counters {filter}")))?;
    if json {
        let items: Vec<_> = entries
            .iter()
            .map(|e| json!({ "subject": e.subject, "value": e.value }))
            .collect();
        return out::json_pretty(&items);
    }
    if names {
        let text: String = entries.iter().map(|e| format!("{}\n", e.subject)).collect();
        return out::print(&text);
    }
    if entries.is_empty() {
        return out::print(&format!("No counters match {filter}\n"));
    }
    let mut table = Table::new(["Subject", "Value"]);
    for entry in &entries {
        table.row(vec![entry.subject.clone(), entry.value.to_string()]);
    }
    table.print()
}

/// The counters of `stream`, or of the stream that stores `subject`.
async fn open(js: &Context, stream: Option<String>, subject: &str) -> Result<Counter, CliError> {
    let name = match stream {
        Some(name) => name,
        None => js
            .stream_by_subject(subject.to_owned())
            .await
            .map_err(CliError::js(format!("no stream for subject {subject:?}")))?,
    };
    js.counter(&name).await.map_err(CliError::js(format!(
        "{name:?} is not a usable counter stream"
    )))
}

/// A counter for people: value, last increment, subject, and the sources' parts.
fn render(entry: &CounterEntry) -> String {
    let mut fields = Fields::new();
    fields.add("Value", &entry.value);
    fields.add_some("Increment", entry.increment.as_ref());
    fields.add("Subject", &entry.subject);
    fields.add("Sequence", entry.sequence);
    let mut text = format!("Counter {}\n\n{}", entry.subject, fields.render());
    if entry.sources.is_empty() {
        text.push_str("\nNo source information found\n");
        return text;
    }
    text.push_str("\nSources:\n");
    for (source, parts) in &entry.sources {
        for (subject, value) in parts {
            text.push_str(&format!("  {source} > {subject}: {value}\n"));
        }
    }
    text
}

/// A counter as JSON, values as decimal strings so none loses digits.
fn entry_json(entry: &CounterEntry) -> serde_json::Value {
    json!({
        "subject": entry.subject,
        "value": entry.value,
        "increment": entry.increment,
        "sources": entry.sources,
        "seq": entry.sequence,
    })
}
