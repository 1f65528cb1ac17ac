//! `rnats`: a command line for NATS built on the rnats client.
//!
//! `rnats bench <pub|sub|pubsub|req|lat>` measures the client against a server, by default a
//! private `nats-server` started for the run.

mod bench;
mod cli;
mod conn;
mod context;
mod core;
mod error;
mod jetstream;
mod out;
mod parse;
mod service;
mod stats;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match cli::Cli::parse().run() {
        Ok(()) => ExitCode::SUCCESS,
        // `rnats sub | head`: the reader went away, which ends the command quietly.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
