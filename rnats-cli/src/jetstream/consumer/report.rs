//! `consumer report`: one row per consumer of a stream, as natscli lays it out.

use clap::Args;
use futures_util::StreamExt;
use rnats::jetstream::Context;
use rnats::jetstream::consumer::{self, AckPolicy};
use rnats::jetstream::stream::ClusterInfo;

use super::get_stream;
use crate::error::CliError;
use crate::jetstream::{duration, raw_list};
use crate::out::{self, Table};
use crate::stats::human;

/// Options of `consumer report`.
#[derive(Debug, Args)]
pub(super) struct ReportArgs {
    /// The stream.
    stream: String,
    /// Plain numbers instead of 1,234.
    #[arg(long, short = 'r')]
    raw: bool,
    /// Add the cluster leader of each consumer.
    #[arg(long, short = 'l')]
    leaders: bool,
    /// The server's consumer infos as a JSON array.
    #[arg(long, short = 'j')]
    json: bool,
}

/// Runs `consumer report`.
pub(super) async fn run(js: &Context, args: ReportArgs) -> Result<(), CliError> {
    let stream = &args.stream;
    if args.json {
        let list = raw_list(js, &format!("CONSUMER.LIST.{stream}"), "consumers").await?;
        return out::json(&list);
    }
    let handle = get_stream(js, stream).await?;
    let mut consumers = handle.consumers();
    let mut infos = Vec::new();
    while let Some(info) = consumers.next().await {
        infos.push(info.map_err(CliError::js(format!("cannot list consumers of {stream}")))?);
    }
    infos.sort_by(|a, b| a.name.cmp(&b.name));
    let count = |n: u64| {
        if args.raw {
            n.to_string()
        } else {
            human::count(n)
        }
    };
    let mut table = Table::new([
        "Consumer",
        "Mode",
        "Ack Policy",
        "Ack Wait",
        "Ack Pending",
        "Redelivered",
        "Unprocessed",
        "Ack Floor",
        "Cluster",
    ]);
    for info in &infos {
        table.row(vec![
            info.name.clone(),
            mode(info).to_owned(),
            ack_policy(&info.config.ack_policy).to_owned(),
            duration(info.config.ack_wait),
            count(info.num_ack_pending as u64),
            count(info.num_redelivered as u64),
            count(info.num_pending),
            count(info.ack_floor.stream_sequence),
            cluster(info.cluster.as_ref(), args.leaders),
        ]);
    }
    out::print(&format!(
        "Consumer report for {stream} with {} consumers\n\n{}",
        infos.len(),
        table.render()
    ))
}

/// Push or pull, and whether it is paused.
fn mode(info: &consumer::Info) -> &'static str {
    match (info.config.deliver_subject.is_some(), info.paused) {
        (true, false) => "Push",
        (true, true) => "Push (paused)",
        (false, false) => "Pull",
        (false, true) => "Pull (paused)",
    }
}

/// natscli's names for the ack policies.
fn ack_policy(policy: &AckPolicy) -> &'static str {
    match policy {
        AckPolicy::Explicit => "Explicit",
        AckPolicy::None => "None",
        AckPolicy::All => "All",
        AckPolicy::FlowControl => "Flow Control",
    }
}

/// The consumer's replicas: the leader marked `*`, and with `--leaders` the leader alone.
fn cluster(info: Option<&ClusterInfo>, leaders: bool) -> String {
    let Some(info) = info else {
        return String::new();
    };
    let leader = info.leader.clone().unwrap_or_default();
    if leaders {
        return leader;
    }
    let mut names = vec![format!("{leader}*")];
    names.extend(info.replicas.iter().map(|r| r.name.clone()));
    names.retain(|n| n != "*");
    names.join(", ")
}
