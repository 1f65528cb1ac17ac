//! The command line: global structure and the options shared between commands.

use std::future::Future;

use clap::{Args, CommandFactory, Parser, Subcommand};
use clap_complete::Shell;

use crate::bench::BenchArgs;
use crate::conn::ConnArgs;
use crate::context::ContextArgs;
use crate::core::{PubArgs, ReplyArgs, ReqArgs, RttArgs, SubArgs};
use crate::error::CliError;
use crate::jetstream::{AccountArgs, ConsumerArgs, CounterArgs, KvArgs, ObjectArgs, StreamArgs};
use crate::service::ServiceArgs;

/// rnats: a NATS command line built on the rnats client.
///
/// Connection flags (--server, --user, --creds, --context, ...) default to the selected
/// natscli context (`rnats context select NAME`), so existing `nats` contexts just work.
#[derive(Debug, Parser)]
#[command(
    name = "rnats",
    version,
    about,
    long_about,
    propagate_version = true,
    after_help = "Examples:\n  rnats context add local --server nats://127.0.0.1:4222 --select\n  \
        rnats sub 'orders.>'\n  rnats pub orders.new 'hello'\n  \
        rnats stream add ORDERS --subjects 'orders.>'\n  rnats stream ls\n\n\
        See `rnats <command> --help` for each command's flags and an example."
)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
    /// How to reach the server: global flags, before or after the subcommand.
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Publishes messages.
    #[command(alias = "publish")]
    Pub(PubArgs),
    /// Subscribes to a subject and prints what arrives.
    #[command(alias = "subscribe")]
    Sub(SubArgs),
    /// Sends a request and prints the reply.
    #[command(alias = "request")]
    Req(ReqArgs),
    /// Answers requests on a subject.
    Reply(ReplyArgs),
    /// Traces a message's path through the servers (nats-server 2.11+).
    Trace(crate::core::TraceArgs),
    /// Follows advisories and events: JetStream's, and the system account's connections.
    #[command(alias = "event", alias = "e")]
    Events(crate::core::EventsArgs),
    /// Shows what the server says about itself.
    #[command(alias = "srv", alias = "sys", alias = "system")]
    Server(crate::core::ServerArgs),
    /// Looks up JetStream API error codes.
    ///
    /// Example: rnats errors lookup 10059
    #[command(alias = "err", alias = "error")]
    Errors(crate::errors::ErrorsArgs),
    /// Measures the round trip time to the server.
    Rtt(RttArgs),
    /// Measures the latency of messages from one server (--server) to another
    /// (--server-b), as natscli's `latency` does.
    #[command(alias = "lat")]
    Latency(crate::core::LatencyArgs),
    /// Manages JetStream streams.
    #[command(alias = "str", alias = "st", alias = "ms", alias = "s")]
    Stream(StreamArgs),
    /// Manages JetStream consumers.
    #[command(alias = "con", alias = "obs", alias = "c")]
    Consumer(ConsumerArgs),
    /// Reads and updates distributed counters (ADR-49).
    #[command(alias = "ctr")]
    Counter(CounterArgs),
    /// Reads and writes Key-Value buckets.
    Kv(KvArgs),
    /// Stores and reads files in Object Store buckets.
    #[command(alias = "obj")]
    Object(ObjectArgs),
    /// Discovers Service API services and shows their info and stats.
    #[command(alias = "micro")]
    Service(ServiceArgs),
    /// Shows the account's JetStream usage and limits.
    #[command(alias = "a")]
    Account(AccountArgs),
    /// Manages natscli contexts (saved connection settings).
    #[command(alias = "ctx")]
    Context(ContextArgs),
    /// Measures publish, subscribe, request, round-trip, JetStream and Key-Value performance,
    /// with natscli's `bench` command lines.
    Bench(BenchArgs),
    /// Shows example command lines per topic (natscli's `cheat`).
    ///
    /// Example: rnats cheat sub
    Cheat(crate::cheat::CheatArgs),
    /// Prints a shell completion script.
    ///
    /// Example: rnats completions bash > /etc/bash_completion.d/rnats
    Completions(CompletionsArgs),
}

/// Options of `rnats completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

impl Cli {
    /// Runs the chosen command to completion.
    pub(crate) fn run(self) -> Result<(), CliError> {
        let conn = &self.conn;
        crate::out::set_trace(conn.trace);
        match self.command {
            // A bench with no URL and no context starts a private server.
            Command::Bench(args) => crate::bench::run(args, conn),
            Command::Context(args) => crate::context::run(args, conn),
            Command::Errors(args) => crate::errors::run(args),
            Command::Cheat(args) => crate::cheat::run(args),
            Command::Completions(args) => {
                let mut command = Cli::command();
                clap_complete::generate(args.shell, &mut command, "rnats", &mut std::io::stdout());
                Ok(())
            }
            Command::Pub(args) => block_on(crate::core::publish(args, conn)),
            Command::Sub(args) => block_on(crate::core::subscribe(args, conn)),
            Command::Req(args) => block_on(crate::core::request(args, conn)),
            Command::Reply(args) => block_on(crate::core::reply(args, conn)),
            Command::Trace(args) => block_on(crate::core::trace(args, conn)),
            Command::Events(args) => block_on(crate::core::events(args, conn)),
            Command::Server(args) => block_on(crate::core::server(args, conn)),
            Command::Rtt(args) => block_on(crate::core::rtt(args, conn)),
            Command::Latency(args) => block_on(crate::core::latency(args, conn)),
            Command::Stream(args) => block_on(crate::jetstream::stream(args, conn)),
            Command::Consumer(args) => block_on(crate::jetstream::consumer(args, conn)),
            Command::Account(args) => block_on(crate::jetstream::account(args, conn)),
            Command::Counter(args) => block_on(crate::jetstream::counter(args, conn)),
            Command::Kv(args) => block_on(crate::jetstream::kv(args, conn)),
            Command::Object(args) => block_on(crate::jetstream::object(args, conn)),
            Command::Service(args) => block_on(crate::service::run(args, conn)),
        }
    }
}

/// Runs `command` on a small multi-threaded runtime (the connection's tasks keep going
/// while a command blocks a worker, e.g. `reply --command`).
fn block_on<F: Future<Output = Result<(), CliError>>>(command: F) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_tree_is_consistent() {
        // clap's own checks: no duplicate names or aliases, no conflicting flags.
        Cli::command().debug_assert();
    }
}
