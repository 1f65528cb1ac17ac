//! The command line: global structure and the options shared between commands.

use clap::{Args, Parser, Subcommand};

use crate::bench::BenchArgs;
use crate::error::CliError;

/// rnats: a NATS command line built on the rnats client.
#[derive(Debug, Parser)]
#[command(name = "rnats", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The commands. Only `bench` exists so far; `pub`, `sub`, `req`, `reply`, `stream` and
/// `kv` are meant to join it as further variants taking [`ServerArgs`].
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Measures publish, subscribe, request and round-trip performance.
    Bench(BenchArgs),
}

/// How to reach the server; flattened into every command that talks to one.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServerArgs {
    /// Server URL, e.g. nats://127.0.0.1:4222 (bench starts a private nats-server when omitted).
    #[arg(long, short = 's', value_name = "URL")]
    pub(crate) server: Option<String>,
}

impl Cli {
    /// Runs the chosen command to completion.
    pub(crate) fn run(self) -> Result<(), CliError> {
        match self.command {
            Command::Bench(args) => crate::bench::run(args),
        }
    }
}
