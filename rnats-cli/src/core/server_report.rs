//! `rnats server report ...`: views gathered from every server through the system account
//! (`$SYS.REQ.SERVER.PING.<KIND>`) and tabled as natscli does. Each view is a file of its
//! own; [`gather`] asks the servers for all of them.

mod accounts;
mod cells;
mod connections;
mod gateways;
mod gather;
mod health;
mod jetstream;
mod leafnodes;
mod routes;
mod usage;

use clap::{Args, Subcommand};

use crate::conn::ConnArgs;
use crate::error::CliError;
pub(crate) use connections::{ConnectionsArgs, account_connections};

/// Options of `rnats server report`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Which report.
    #[command(subcommand)]
    command: ReportCommand,
}

/// The reports.
#[derive(Debug, Subcommand)]
enum ReportCommand {
    /// Connections of every server, the busiest first (needs a system account user).
    ///
    /// Example: rnats server report connections --sort in-msgs --top 10
    #[command(visible_alias = "conns", alias = "conn", alias = "connz")]
    Connections(ConnectionsArgs),
    /// JetStream usage of every server, with totals (needs a system account user).
    ///
    /// Example: rnats server report jetstream --sort streams
    #[command(visible_alias = "js", alias = "jsz")]
    Jetstream(jetstream::JetStreamArgs),
    /// Cluster routes of every server, grouped by server (needs a system account user).
    ///
    /// Example: rnats server report routes --sort in-bytes
    #[command(visible_alias = "route")]
    Routes(routes::RoutesArgs),
    /// Leaf node connections of every server (needs a system account user).
    ///
    /// Example: rnats server report leafnodes --account APP --sort in-msgs
    #[command(visible_alias = "leaf", alias = "leafz")]
    Leafnodes(leafnodes::LeafnodesArgs),
    /// Gateway connections of every server of a supercluster (needs a system account
    /// user).
    ///
    /// Example: rnats server report gateways --filter-name west
    #[command(visible_alias = "gateway", alias = "super")]
    Gateways(gateways::GatewaysArgs),
    /// CPU use of every server, a bar each (needs a system account user).
    ///
    /// Example: rnats server report cpu --cluster east
    Cpu(usage::UsageArgs),
    /// Memory use of every server, a bar each (needs a system account user).
    ///
    /// Example: rnats server report mem
    Mem(usage::UsageArgs),
    /// Connections, messages and subscriptions of every server summed per account, or one
    /// account's connections (needs a system account user).
    ///
    /// Example: rnats server report accounts --sort in-msgs --top 10
    #[command(visible_alias = "acct")]
    Accounts(accounts::AccountsArgs),
    /// Health of every server, with the errors each reports (needs a system account user).
    ///
    /// Example: rnats server report health --js-enabled
    Health(health::HealthArgs),
}

/// Runs `server report ...`.
pub(crate) async fn run(args: ReportArgs, conn: &ConnArgs) -> Result<(), CliError> {
    match args.command {
        ReportCommand::Connections(args) => connections::server_connections(conn, args).await,
        ReportCommand::Jetstream(args) => jetstream::run(conn, args).await,
        ReportCommand::Routes(args) => routes::run(conn, args).await,
        ReportCommand::Leafnodes(args) => leafnodes::run(conn, args).await,
        ReportCommand::Gateways(args) => gateways::run(conn, args).await,
        ReportCommand::Cpu(args) => usage::run(conn, args, usage::Usage::Cpu).await,
        ReportCommand::Mem(args) => usage::run(conn, args, usage::Usage::Memory).await,
        ReportCommand::Accounts(args) => accounts::run(conn, args).await,
        ReportCommand::Health(args) => health::run(conn, args).await,
    }
}
