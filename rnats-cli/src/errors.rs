//! `rnats errors ls|lookup`: the JetStream API's error codes (`err_code` in the server's
//! error replies), from a table built from nats-server's `server/errors.json`
//! (`rnats-cli/data/jetstream-errors.json`, compiled in), or from `--errors FILE` in the
//! server's own format.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::error::CliError;
use crate::out::{self, Fields, Table};

/// The table compiled in: nats-server 2.15's error codes.
const BUILT_IN: &str = include_str!("../data/jetstream-errors.json");

/// Options of `rnats errors`.
#[derive(Debug, Args)]
pub(crate) struct ErrorsArgs {
    /// What to show.
    #[command(subcommand)]
    command: ErrorsCommand,
    /// Read the codes from this errors.json (nats-server's format) instead of the built-in
    /// table.
    #[arg(long = "errors", value_name = "FILE", global = true)]
    file: Option<PathBuf>,
}

/// The errors commands.
#[derive(Debug, Subcommand)]
enum ErrorsCommand {
    /// Lists the error codes, those whose text contains MATCH (any case) if given.
    ///
    /// Example: rnats errors ls consumer
    #[command(alias = "list")]
    Ls {
        /// Only codes whose description, constant or number contains this.
        #[arg(value_name = "MATCH")]
        matching: Option<String>,
        /// Sort by this field.
        #[arg(value_enum, default_value_t = SortKey::Code)]
        sort: SortKey,
        /// Reverse the order.
        #[arg(long, short = 'R', overrides_with = "no_reverse")]
        reverse: bool,
        /// Keep the order (the default; natscli's negation of --reverse).
        #[arg(long, overrides_with = "reverse", hide = true)]
        no_reverse: bool,
        /// The codes as a JSON array.
        #[arg(long, short = 'j')]
        json: bool,
    },
    /// Shows one error code: its HTTP-like code, description, and the server's constant.
    ///
    /// Example: rnats errors lookup 10059
    #[command(
        alias = "find",
        alias = "get",
        alias = "l",
        alias = "view",
        alias = "show"
    )]
    Lookup {
        /// The JetStream error code (`err_code`), e.g. 10059.
        code: u16,
        /// The code as JSON.
        #[arg(long, short = 'j')]
        json: bool,
    },
}

/// `errors ls` sort keys, natscli's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SortKey {
    Code,
    Http,
    #[value(alias = "descr", alias = "d")]
    Description,
}

/// One error code.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ErrorCode {
    /// The JetStream error code (`err_code`).
    error_code: u16,
    /// The HTTP-like status code (`code`).
    code: u16,
    /// What the server says; `{name}` marks a value filled in.
    description: String,
    /// The nats-server constant.
    constant: String,
    /// A note for developers.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    comment: String,
    /// Help text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    help: String,
    /// A link with more.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    url: String,
    /// The code this one replaces.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    deprecates: String,
}

/// Runs `rnats errors ...`.
pub(crate) fn run(args: ErrorsArgs) -> Result<(), CliError> {
    let codes = load(args.file.as_ref())?;
    match args.command {
        ErrorsCommand::Ls {
            matching,
            sort,
            reverse,
            json,
            ..
        } => list(codes, matching.as_deref(), sort, reverse, json),
        ErrorsCommand::Lookup { code, json } => lookup(&codes, code, json),
    }
}

/// The codes of `file`, or the built-in table.
fn load(file: Option<&PathBuf>) -> Result<Vec<ErrorCode>, CliError> {
    let text = match file {
        None => return Ok(serde_json::from_str(BUILT_IN)?),
        Some(path) => std::fs::read_to_string(path).map_err(|source| CliError::ReadFile {
            what: "errors file",
            path: path.clone(),
            source,
        })?,
    };
    serde_json::from_str(&text).map_err(|e| CliError::InvalidArgument {
        what: "errors file",
        given: file.map(|p| p.display().to_string()).unwrap_or_default(),
        reason: e.to_string(),
    })
}

/// `errors ls`.
fn list(
    mut codes: Vec<ErrorCode>,
    matching: Option<&str>,
    sort: SortKey,
    reverse: bool,
    json: bool,
) -> Result<(), CliError> {
    if let Some(text) = matching {
        let wanted = text.to_lowercase();
        codes.retain(|c| {
            c.description.to_lowercase().contains(&wanted)
                || c.constant.to_lowercase().contains(&wanted)
                || c.error_code.to_string().contains(&wanted)
        });
    }
    codes.sort_by(|a, b| match sort {
        SortKey::Code => a.error_code.cmp(&b.error_code),
        SortKey::Http => a.code.cmp(&b.code).then(a.error_code.cmp(&b.error_code)),
        SortKey::Description => a.description.cmp(&b.description),
    });
    if reverse {
        codes.reverse();
    }
    if json {
        return out::json(&codes);
    }
    let mut table = Table::new(["NATS Code", "HTTP Code", "Description", "Go Constant"]);
    for c in &codes {
        table.row(vec![
            c.error_code.to_string(),
            c.code.to_string(),
            c.description.clone(),
            c.constant.clone(),
        ]);
    }
    out::print(&format!(
        "JetStream error codes: {}\n\n{}",
        codes.len(),
        table.render()
    ))
}

/// `errors lookup CODE`.
fn lookup(codes: &[ErrorCode], code: u16, json: bool) -> Result<(), CliError> {
    let Some(found) = codes.iter().find(|c| c.error_code == code) else {
        return Err(CliError::InvalidArgument {
            what: "error code",
            given: code.to_string(),
            reason: "not a known JetStream error code (see `rnats errors ls`)".to_owned(),
        });
    };
    if json {
        return out::json(found);
    }
    let mut fields = Fields::new();
    fields.add("NATS Code", found.error_code.to_string());
    fields.add("HTTP Code", found.code.to_string());
    fields.add("Description", found.description.clone());
    fields.add("Go Constant", found.constant.clone());
    for (name, value) in [
        ("Comment", &found.comment),
        ("Help", &found.help),
        ("URL", &found.url),
        ("Deprecates", &found.deprecates),
    ] {
        if !value.is_empty() {
            fields.add(name, value.clone());
        }
    }
    out::print(&fields.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_loads_with_unique_codes() {
        let codes = load(None).expect("the table parses");
        assert!(codes.len() > 200, "{}", codes.len());
        let mut numbers: Vec<u16> = codes.iter().map(|c| c.error_code).collect();
        numbers.dedup();
        assert_eq!(numbers.len(), codes.len(), "sorted and unique");
        let not_found = codes.iter().find(|c| c.error_code == 10059).expect("10059");
        assert_eq!(not_found.description, "stream not found");
        assert_eq!(not_found.code, 404);
    }
}
