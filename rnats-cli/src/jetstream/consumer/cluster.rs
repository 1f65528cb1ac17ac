//! `consumer cluster step-down`: moving a clustered consumer's leader.

use clap::{Args, Subcommand};
use rnats::jetstream::Context;
use rnats::jetstream::stream::LeaderPlacement;

use super::{consumer_info, render_info};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::jetstream::leader::{ElectionWatch, leader_to_move};
use crate::out;

/// Options of `consumer cluster`.
#[derive(Debug, Args)]
pub(super) struct ClusterArgs {
    /// What to do with the consumer's group.
    #[command(subcommand)]
    command: ClusterCommand,
}

/// The `consumer cluster` commands.
#[derive(Debug, Subcommand)]
enum ClusterCommand {
    /// Makes the consumer's leader step down, so that another replica leads.
    ///
    /// Example: rnats consumer cluster step-down ORDERS billing --preferred n2
    #[command(alias = "stepdown", alias = "elect", alias = "down", alias = "d")]
    StepDown {
        /// The stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The server to lead next (nats-server 2.11+).
        #[arg(long, value_name = "SERVER")]
        preferred: Option<String>,
        /// Step down even when the consumer reports no leader.
        #[arg(long, short = 'f')]
        force: bool,
    },
}

/// Runs a `consumer cluster` command.
pub(super) async fn run(js: &Context, args: ClusterArgs, conn: &ConnArgs) -> Result<(), CliError> {
    let ClusterCommand::StepDown {
        stream,
        consumer,
        preferred,
        force,
    } = args.command;
    let what = format!("consumer {consumer} on {stream}");
    let info = consumer_info(js, &stream, &consumer).await?;
    let leader = leader_to_move(&what, "consumer", info.cluster.as_ref(), force)?;
    let mut watch =
        ElectionWatch::start(js, conn, "CONSUMER", &format!("{stream}.{consumer}")).await?;
    js.step_down_consumer_leader(
        &stream,
        &consumer,
        preferred.map(LeaderPlacement::preferred),
    )
    .await
    .map_err(CliError::js(format!("cannot move the leader of {what}")))?;
    watch.wait_for_election(leader.as_deref()).await;
    let info = consumer_info(js, &stream, &consumer).await?;
    let now = info.cluster.as_ref().and_then(|c| c.leader.as_deref());
    watch.judge(&what, leader.as_deref(), now)?;
    out::print(&render_info(&info))
}
