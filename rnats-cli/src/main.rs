//! `rnats`: a command line for NATS built on the rnats client, for people used to natscli.
//!
//! - Core NATS: `pub` (also to JetStream: `--jetstream`, `--atomic` batches, schedules), `sub`
//!   (also a stream's messages: `--stream`, `--all`, `--last`, `--since`, ...), `req`, `reply`,
//!   `server info|ping|list|report|check`, `rtt`, `latency`, `events`.
//! - JetStream: `stream ls|add|info|edit|copy|report|backup|restore|rm|rmm|seal|purge|get|view`,
//!   `consumer ls|add|edit|info|pause|resume|unpin|report|next|sub|rm`,
//!   `account info|report connections`,
//!   `counter get|view|increment|decrement|list`.
//! - Key-Value: `kv ls|add|put|create|update|keys|get|del|purge|history|revert|watch|compact|status|rm`;
//!   Object Store: `object ls|add|put|get|info|status|watch|seal|rm`;
//!   Services: `service ls|info|stats|ping`.
//! - Connection flags are global ([`conn`]), before or after the subcommand, as in natscli;
//!   commands and subcommands take natscli's aliases (`s`, `c`, `obj`, `ctx`, `sys`, ...).
//! - `context ls|add|edit|select|unselect|info|validate|rm` on natscli's own context files, whose selected
//!   context supplies the connection flags' defaults ([`conn`]).
//! - `bench pub|sub|request|reply|service|lat|js pub|fetch|consume|ordered|get|kv put|get` (natscli's
//!   forms, plus `pubsub`, `req`, `js-pub`, `js-fetch`, `scale`) measures the client against
//!   the server the connection flags or the context name, or else a private `nats-server`
//!   started for the run.
//! - `errors ls|lookup` explains JetStream API error codes; `cheat` shows example sheets.
//! - `completions <shell>` prints a shell completion script.
//!
//! Output is for people by default and JSON with `--json`; every failure is one
//! `error: ...` line on stderr and exit code 1, except `server check`, which exits with
//! the monitoring-plugin code of its result. See `docs/cli.md`.

mod bench;
mod cheat;
mod check;
mod cli;
mod conn;
mod context;
mod core;
mod error;
mod errors;
mod jetstream;
mod out;
mod parse;
mod service;
mod stats;

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match cli.run() {
        Ok(()) => ExitCode::SUCCESS,
        // `rnats sub | head`: the reader went away, which ends the command quietly.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        // `server check` said what it found on stdout already.
        Err(error::CliError::CheckStatus(code)) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Help and version go out as clap writes them; a usage error becomes one line on stderr
/// (clap's first paragraph, its lines joined) and exit code 2, as usage errors have.
fn usage_error(e: clap::Error) -> ExitCode {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let first: Vec<&str> = text
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect();
    eprintln!("{} (see --help)", first.join(" "));
    ExitCode::from(2)
}
