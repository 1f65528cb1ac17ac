//! `stream report`: one row per stream, as natscli lays it out, sorted as asked.

use clap::Args;
use rnats::jetstream::Context;
use rnats::jetstream::stream::{ClusterInfo, Info, StorageType};
use serde_json::{Value, json};

use super::{bytes, raw_list_for};
use crate::error::CliError;
use crate::out::{self, Table};
use crate::stats::human;

/// Options of `stream report`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Only streams taking messages on this subject.
    #[arg(long, value_name = "SUBJECT")]
    subject: Option<String>,
    /// Only streams in this cluster.
    #[arg(long, value_name = "CLUSTER")]
    cluster: Option<String>,
    /// Sort by the number of consumers.
    #[arg(long, short = 'o')]
    consumers: bool,
    /// Sort by the number of messages.
    #[arg(long, short = 'm')]
    messages: bool,
    /// Sort by name.
    #[arg(long, short = 'n')]
    name: bool,
    /// Sort by storage type.
    #[arg(long, short = 't')]
    storage: bool,
    /// Plain numbers instead of 1,234 and 2 KiB.
    #[arg(long, short = 'r')]
    raw: bool,
    /// Show only the leader in the Replicas column.
    #[arg(long, short = 'l')]
    leaders: bool,
    /// The server's stream infos as a JSON array.
    #[arg(long, short = 'j')]
    json: bool,
}

/// One stream's line of the report.
struct Row {
    info: Info,
    /// Messages and bytes the server lost (`state.lost`), which the typed state omits.
    lost: (u64, u64),
}

/// Runs `stream report`.
pub(crate) async fn run(js: &Context, args: ReportArgs) -> Result<(), CliError> {
    let mut request = json!({});
    if let Some(subject) = &args.subject {
        request["subject"] = json!(subject);
    }
    let listed = list(js, &request).await?;
    let mut rows = Vec::new();
    let mut kept = Vec::new();
    for value in listed {
        let info: Info = serde_json::from_value(value.clone())
            .map_err(CliError::js("cannot read the server's stream list"))?;
        let in_cluster = match (&args.cluster, &info.cluster) {
            (None, _) => true,
            (Some(want), Some(cluster)) => cluster.name.as_deref() == Some(want.as_str()),
            (Some(_), None) => false,
        };
        if !in_cluster {
            continue;
        }
        let lost = &value["state"]["lost"];
        let lost_msgs = lost["msgs"].as_array().map_or(0, |m| m.len() as u64);
        let lost_bytes = lost["bytes"].as_u64().unwrap_or(0);
        rows.push(Row {
            info,
            lost: (lost_msgs, lost_bytes),
        });
        kept.push(value);
    }
    if args.json {
        return out::json(&kept);
    }
    sort(&mut rows, &args);
    let count = |n: u64| {
        if args.raw {
            n.to_string()
        } else {
            human::count(n)
        }
    };
    let size = |n: u64| if args.raw { n.to_string() } else { bytes(n) };
    let mut table = Table::new([
        "Stream",
        "Storage",
        "Placement",
        "Consumers",
        "Messages",
        "Bytes",
        "Lost",
        "Deleted",
        "Replicas",
    ]);
    for row in &rows {
        let info = &row.info;
        let lost = match row.lost {
            (0, _) => "0".to_owned(),
            (msgs, lost_bytes) => format!("{} ({})", count(msgs), size(lost_bytes)),
        };
        table.row(vec![
            info.config.name.clone(),
            storage(info.config.storage).to_owned(),
            placement(info),
            count(info.state.consumer_count as u64),
            count(info.state.messages),
            size(info.state.bytes),
            lost,
            count(info.state.deleted_count.unwrap_or(0)),
            replicas(info.cluster.as_ref(), args.leaders),
        ]);
    }
    out::print(&format!(
        "Stream report: {} streams\n\n{}",
        rows.len(),
        table.render()
    ))
}

/// Every stream the server lists for `request` (a subject filter or none), page by page.
pub(super) async fn list(js: &Context, request: &Value) -> Result<Vec<Value>, CliError> {
    raw_list_for(js, "STREAM.LIST", request, "streams").await
}

/// natscli's order: by the flag given, else by the bytes stored, smallest first.
fn sort(rows: &mut [Row], args: &ReportArgs) {
    rows.sort_by(|a, b| {
        let (a, b) = (&a.info, &b.info);
        if args.name {
            a.config.name.cmp(&b.config.name)
        } else if args.consumers {
            a.state.consumer_count.cmp(&b.state.consumer_count)
        } else if args.messages {
            a.state.messages.cmp(&b.state.messages)
        } else if args.storage {
            storage(a.config.storage).cmp(storage(b.config.storage))
        } else {
            a.state.bytes.cmp(&b.state.bytes)
        }
        .then_with(|| a.config.name.cmp(&b.config.name))
    });
}

fn storage(storage: StorageType) -> &'static str {
    match storage {
        StorageType::File => "File",
        StorageType::Memory => "Memory",
    }
}

fn placement(info: &Info) -> String {
    let Some(placement) = &info.config.placement else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let Some(cluster) = &placement.cluster {
        parts.push(format!("cluster: {cluster}"));
    }
    if !placement.tags.is_empty() {
        parts.push(format!("tags: {}", placement.tags.join(", ")));
    }
    parts.join(" ")
}

/// The replicas, the leader marked `*`; with `--leaders`, the leader alone.
fn replicas(cluster: Option<&ClusterInfo>, leaders: bool) -> String {
    let Some(cluster) = cluster else {
        return String::new();
    };
    let Some(leader) = &cluster.leader else {
        return String::new();
    };
    if leaders {
        return leader.clone();
    }
    let mut names = vec![format!("{leader}*")];
    names.extend(cluster.replicas.iter().map(|r| r.name.clone()));
    names.join(", ")
}
