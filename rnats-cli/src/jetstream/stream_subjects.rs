//! `rnats stream subjects STREAM [FILTER]`: the stream's subjects and how many messages each
//! holds, from the stream info's per-subject counts (paged by the library), as natscli's
//! `stream subjects` lists them.

use clap::{Args, ValueEnum};
use futures_util::StreamExt;
use rnats::jetstream::Context;
use serde_json::{Map, Value};

use crate::error::CliError;
use crate::out::{self, Table};
use crate::stats::human;

/// Options of `stream subjects`.
#[derive(Debug, Args)]
pub(crate) struct SubjectsArgs {
    /// The stream.
    stream: String,
    /// Only subjects matching this filter.
    #[arg(default_value = ">")]
    filter: String,
    /// `{"subject": messages, ...}` as JSON.
    #[arg(long, short = 'j')]
    json: bool,
    /// Sort by messages (the most first) or by name.
    #[arg(long, value_enum, default_value_t = SubjectSort::Messages)]
    sort: SubjectSort,
    /// Reverse the order.
    #[arg(long, short = 'R')]
    reverse: bool,
    /// Only the subjects' names, one a line.
    #[arg(long, overrides_with = "no_names")]
    names: bool,
    /// natscli's `--no-names`: the counts too (the default).
    #[arg(long, hide = true)]
    no_names: bool,
}

/// `--sort` of `stream subjects`, with natscli's spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SubjectSort {
    /// By subject.
    #[value(alias = "subjects")]
    Name,
    /// By message count, the most first.
    #[value(alias = "count")]
    Messages,
}

/// Runs `stream subjects`.
pub(crate) async fn run(js: &Context, args: SubjectsArgs) -> Result<(), CliError> {
    let action = format!("cannot list the subjects of stream {}", args.stream);
    let stream = js
        .get_stream(args.stream.as_str())
        .await
        .map_err(CliError::js(&action))?;
    let mut counts = stream
        .info_with_subjects(&args.filter)
        .await
        .map_err(CliError::js(&action))?;
    let mut subjects: Vec<(String, usize)> = Vec::new();
    while let Some(entry) = counts.next().await {
        subjects.push(entry.map_err(CliError::js(&action))?);
    }
    match args.sort {
        SubjectSort::Name => subjects.sort(),
        SubjectSort::Messages => subjects.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0))),
    }
    if args.reverse {
        subjects.reverse();
    }
    if args.json {
        let map: Map<String, Value> = subjects
            .into_iter()
            .map(|(subject, n)| (subject, Value::from(n)))
            .collect();
        return out::json(&map);
    }
    if args.names {
        let lines: String = subjects.iter().map(|(s, _)| format!("{s}\n")).collect();
        return out::print(&lines);
    }
    if subjects.is_empty() {
        return out::print(&format!(
            "No subjects in stream {} match {}\n",
            args.stream, args.filter
        ));
    }
    let mut table = Table::new(["Subject", "Messages"]);
    for (subject, n) in &subjects {
        table.row(vec![subject.clone(), human::count(*n as u64)]);
    }
    out::print(&format!(
        "{} subjects in stream {}\n\n{}",
        human::count(subjects.len() as u64),
        args.stream,
        table.render()
    ))
}
