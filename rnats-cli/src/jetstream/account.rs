//! `rnats account info`: the account's JetStream usage and limits.

use clap::{Args, Subcommand};
use rnats::jetstream::account::Limits;
use serde_json::Value;

use super::{bytes, limit, limit_bytes, raw};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out::{self, Fields};

/// Options of `rnats account`.
#[derive(Debug, Args)]
pub(crate) struct AccountArgs {
    /// What to show.
    #[command(subcommand)]
    command: AccountCommand,
}

/// The account commands.
#[derive(Debug, Subcommand)]
enum AccountCommand {
    /// Shows JetStream usage, limits and API level of the account.
    ///
    /// Example: rnats account info
    #[command(alias = "nfo")]
    Info {
        /// The server's JSON.
        #[arg(long)]
        json: bool,
    },
    /// Reports on the account's connections.
    #[command(alias = "rep")]
    Report {
        /// Which report.
        #[command(subcommand)]
        command: ReportCommand,
    },
}

/// The account reports.
#[derive(Debug, Subcommand)]
enum ReportCommand {
    /// The account's connections on every server, the busiest first (any user; servers
    /// answer until the timeout unless their number is given).
    ///
    /// Example: rnats account report connections --sort in-msgs --top 10
    #[command(visible_alias = "conns", alias = "conn", alias = "connz")]
    Connections(crate::core::ConnectionsArgs),
}

/// Runs an account command.
pub(crate) async fn run(args: AccountArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let json = match args.command {
        AccountCommand::Info { json } => json,
        AccountCommand::Report {
            command: ReportCommand::Connections(report),
        } => return crate::core::account_connections(conn, report).await,
    };
    let js = crate::conn::jetstream(conn).await?;
    if json {
        return out::json_pretty(&raw(&js, "INFO", &Value::Null).await?);
    }
    let account = js
        .query_account()
        .await
        .map_err(CliError::js("cannot read the JetStream account"))?;
    let mut usage = Fields::new();
    usage.add_some("Domain", account.domain.as_deref());
    usage.add("Memory", bytes(account.memory));
    usage.add("Storage", bytes(account.storage));
    usage.add("Streams", account.streams);
    usage.add("Consumers", account.consumers);
    usage.add("API level", account.requests.level);
    usage.add(
        "API requests",
        crate::stats::human::count(account.requests.total),
    );
    usage.add(
        "API errors",
        crate::stats::human::count(account.requests.errors),
    );
    let mut text = format!(
        "JetStream account\n\nUsage:\n{}\nLimits:\n{}",
        usage.render(),
        limits(&account.limits).render()
    );
    let mut tiers: Vec<_> = account.tiers.iter().collect();
    tiers.sort_by(|a, b| a.0.cmp(b.0));
    for (name, tier) in tiers {
        let mut fields = Fields::new();
        fields.add("Memory", bytes(tier.memory));
        fields.add("Storage", bytes(tier.storage));
        fields.add("Streams", tier.streams);
        fields.add("Consumers", tier.consumers);
        text.push_str(&format!("\nTier {name}:\n{}", fields.render()));
    }
    out::print(&text)
}

fn limits(limits: &Limits) -> Fields {
    let mut fields = Fields::new();
    fields.add("Max memory", limit_bytes(limits.max_memory.unwrap_or(-1)));
    fields.add("Max storage", limit_bytes(limits.max_storage.unwrap_or(-1)));
    fields.add("Max streams", limit(limits.max_streams.unwrap_or(-1)));
    fields.add("Max consumers", limit(limits.max_consumers.unwrap_or(-1)));
    fields.add("Max ack pending", limit(limits.max_ack_pending));
    fields.add(
        "Max bytes required",
        if limits.max_bytes_required {
            "yes"
        } else {
            "no"
        },
    );
    fields
}
