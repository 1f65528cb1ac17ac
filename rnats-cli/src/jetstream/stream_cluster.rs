//! `stream cluster`: moving a clustered stream's leader, and removing a peer from its
//! replicas.

use clap::{Args, Subcommand};
use rnats::jetstream::Context;
use rnats::jetstream::stream::{Info, LeaderPlacement};

use super::leader::{ElectionWatch, leader_to_move};
use super::stream::render_info;
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::out;

/// Options of `stream cluster`.
#[derive(Debug, Args)]
pub(crate) struct ClusterArgs {
    /// What to do with the stream's group.
    #[command(subcommand)]
    command: ClusterCommand,
}

/// The `stream cluster` commands.
#[derive(Debug, Subcommand)]
enum ClusterCommand {
    /// Makes the stream's leader step down, so that another replica leads.
    ///
    /// Example: rnats stream cluster step-down ORDERS --preferred n2
    #[command(
        alias = "stepdown",
        alias = "sd",
        alias = "elect",
        alias = "down",
        alias = "d"
    )]
    StepDown {
        /// The stream.
        stream: String,
        /// The server to lead next (nats-server 2.11+).
        #[arg(long, value_name = "SERVER")]
        preferred: Option<String>,
        /// Step down even when the stream reports no leader.
        #[arg(long, short = 'f')]
        force: bool,
    },
    /// Removes a server from the stream's replicas; the cluster places a new replica on
    /// another server, if it has one.
    ///
    /// Example: rnats stream cluster peer-remove ORDERS n3 --force
    #[command(alias = "pr")]
    PeerRemove {
        /// The stream.
        stream: String,
        /// The server to remove, by name.
        peer: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'f')]
        force: bool,
    },
}

/// Runs a `stream cluster` command.
pub(crate) async fn run(js: &Context, args: ClusterArgs, conn: &ConnArgs) -> Result<(), CliError> {
    match args.command {
        ClusterCommand::StepDown {
            stream,
            preferred,
            force,
        } => step_down(js, conn, &stream, preferred, force).await,
        ClusterCommand::PeerRemove {
            stream,
            peer,
            force,
        } => remove_peer(js, &stream, &peer, force).await,
    }
}

/// `stream cluster step-down`: asks, waits for the election, and shows the stream.
async fn step_down(
    js: &Context,
    conn: &ConnArgs,
    name: &str,
    preferred: Option<String>,
    force: bool,
) -> Result<(), CliError> {
    let info = stream_info(js, name).await?;
    let what = format!("stream {name}");
    let leader = leader_to_move(&what, "stream", info.cluster.as_ref(), force)?;
    let mut watch = ElectionWatch::start(js, conn, "STREAM", name).await?;
    js.step_down_stream_leader(name, preferred.map(LeaderPlacement::preferred))
        .await
        .map_err(CliError::js(format!(
            "cannot move the leader of stream {name}"
        )))?;
    watch.wait_for_election(leader.as_deref()).await;
    let info = stream_info(js, name).await?;
    let now = info.cluster.as_ref().and_then(|c| c.leader.as_deref());
    watch.judge(&what, leader.as_deref(), now)?;
    out::print(&render_info(&info))
}

/// `stream cluster peer-remove`.
async fn remove_peer(js: &Context, name: &str, peer: &str, force: bool) -> Result<(), CliError> {
    let info = stream_info(js, name).await?;
    let Some(cluster) = &info.cluster else {
        return Err(not_clustered(name));
    };
    let peers = cluster.leader.iter().count() + cluster.replicas.len();
    let question = if peers <= 1 {
        format!("Really remove the only peer {peer} of stream {name}, losing its messages")
    } else {
        format!("Really remove peer {peer} from stream {name}")
    };
    out::confirm(&question, force)?;
    js.remove_stream_peer(name, peer)
        .await
        .map_err(CliError::js(format!(
            "cannot remove peer {peer} from stream {name}"
        )))?;
    out::print(&format!(
        "Requested removal of peer {peer:?} from stream {name}\n"
    ))
}

async fn stream_info(js: &Context, name: &str) -> Result<Info, CliError> {
    let stream = js
        .get_stream(name)
        .await
        .map_err(CliError::js(format!("cannot read stream {name}")))?;
    Ok(stream.cached_info().clone())
}

fn not_clustered(name: &str) -> CliError {
    CliError::JetStream {
        action: format!("cannot manage the cluster of stream {name}"),
        source: "the stream is not clustered".into(),
    }
}
