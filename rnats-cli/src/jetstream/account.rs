//! `rnats account info`: who the connection is (user, account, system account or not), the
//! connection's facts, and the account's JetStream usage and limits.

use clap::{Args, Subcommand};
use rnats::jetstream::account::Limits;
use serde_json::{Value, json};

use super::account_identity::Identity;
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
    /// Shows the user and account (and whether it is the system account), the
    /// connection, and the account's JetStream usage, limits and API level.
    ///
    /// Example: rnats account info
    #[command(alias = "nfo")]
    Info {
        /// As JSON: `identity` (user, account, connection), and `jetstream`, the server's
        /// JetStream account INFO (or `jetstream_error`).
        #[arg(long, short = 'j')]
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
    match args.command {
        AccountCommand::Info { json } => info(conn, json).await,
        AccountCommand::Report {
            command: ReportCommand::Connections(report),
        } => crate::core::account_connections(conn, report).await,
    }
}

/// `account info`: who the connection is, what it is connected to, and the account's
/// JetStream usage and limits (or why there are none, as natscli says it).
async fn info(conn: &ConnArgs, json: bool) -> Result<(), CliError> {
    let (client, settings) = conn.connect().await?;
    let identity = Identity::of(&client, &settings).await;
    let js = settings.jetstream(client);
    if json {
        let (jetstream, jetstream_error) = match raw(&js, "INFO", &Value::Null).await {
            Ok(info) => (Some(info), None),
            Err(e) => (None, Some(e.to_string())),
        };
        return out::json_pretty(&json!({
            "identity": identity,
            "jetstream": jetstream,
            "jetstream_error": jetstream_error,
        }));
    }
    let jetstream = match js.query_account().await {
        Ok(account) => jetstream_text(&account),
        Err(e) => format!("JetStream account\n\n  JetStream is not available: {e}\n"),
    };
    out::print(&format!("{}\n{jetstream}", identity.render()))
}

/// The JetStream section: usage, limits and tiers.
fn jetstream_text(account: &rnats::jetstream::account::Account) -> String {
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
    text
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
