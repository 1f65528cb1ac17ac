//! `rnats`: a command line for NATS built on the rnats client.
//!
//! `rnats bench <pub|sub|pubsub|req|lat>` measures the client against a server, by default a
//! private `nats-server` started for the run.

mod bench;
mod cli;
mod error;
mod stats;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match cli::Cli::parse().run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
