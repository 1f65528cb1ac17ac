//! `rnats server report jetstream`: every server's JetStream usage
//! (`$SYS.REQ.SERVER.PING.JSZ`), with totals and the meta leader marked.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::cells::{number, text};
use super::gather::{Endpoint, ReportFilter, ask};
use crate::conn::ConnArgs;
use crate::core::server_ping::Answer;
use crate::error::CliError;
use crate::jetstream::bytes as size;
use crate::out::Table;
use crate::stats::human;

/// Every server's JetStream usage.
const JSZ: Endpoint = Endpoint::server("JSZ");

/// Options of `server report jetstream`.
#[derive(Debug, Args)]
pub(super) struct JetStreamArgs {
    #[command(flatten)]
    filter: ReportFilter,
    /// Only this account's usage.
    #[arg(long, value_name = "ACCOUNT")]
    account: Option<String>,
    /// Sort by this column.
    #[arg(long, value_enum, default_value_t = JsSort::Cluster)]
    sort: JsSort,
}

/// `--sort` of the JetStream report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum JsSort {
    Name,
    Cluster,
    Streams,
    Consumers,
    Msgs,
    #[value(alias = "mbytes")]
    Bytes,
    Mem,
    #[value(alias = "store")]
    File,
    Api,
    Err,
}

/// One server's row of the JetStream report.
#[derive(Debug, Default)]
struct JsRow {
    name: String,
    cluster: String,
    leader: bool,
    streams: u64,
    consumers: u64,
    messages: u64,
    bytes: u64,
    memory: u64,
    file: u64,
    api: u64,
    errors: u64,
    pending: u64,
}

impl JsRow {
    /// The row of one server's JSZ answer (`account`: only that account's usage).
    fn of(answer: &Answer, account: Option<&str>) -> JsRow {
        let server = &answer.stats["server"];
        let data = &answer.stats["data"];
        let name = text(&server["name"]);
        let mut row = JsRow {
            leader: data["meta_cluster"]["leader"].as_str() == Some(name.as_str()),
            cluster: text(&server["cluster"]),
            name,
            memory: number(&data["memory"]),
            file: number(&data["storage"]),
            api: number(&data["api"]["total"]),
            errors: number(&data["api"]["errors"]),
            pending: number(&data["meta_cluster"]["pending"]),
            ..JsRow::default()
        };
        let detail = account.and_then(|_| data["account_details"].as_array()?.first());
        match detail {
            Some(detail) => {
                let streams = detail["stream_detail"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                row.streams = streams.len() as u64;
                let total = |field: &str| {
                    (streams.iter())
                        .map(|s| number(&s["state"][field]))
                        .fold(0, u64::saturating_add)
                };
                row.consumers = total("consumer_count");
                row.messages = total("messages");
                row.bytes = number(&detail["memory"]).saturating_add(number(&detail["storage"]));
                row.memory = number(&detail["memory"]);
                row.file = number(&detail["storage"]);
            }
            None => {
                row.streams = number(&data["streams"]);
                row.consumers = number(&data["consumers"]);
                row.messages = number(&data["messages"]);
                row.bytes = number(&data["bytes"]);
            }
        }
        row
    }

    /// Adds `row`'s counts to this one's (a total). The servers' numbers saturate it rather
    /// than overflow.
    fn add(&mut self, row: &JsRow) {
        for (sum, n) in [
            (&mut self.streams, row.streams),
            (&mut self.consumers, row.consumers),
            (&mut self.messages, row.messages),
            (&mut self.bytes, row.bytes),
            (&mut self.memory, row.memory),
            (&mut self.file, row.file),
            (&mut self.api, row.api),
            (&mut self.errors, row.errors),
            (&mut self.pending, row.pending),
        ] {
            *sum = sum.saturating_add(n);
        }
    }
}

/// `server report jetstream`.
pub(super) async fn run(conn: &ConnArgs, args: JetStreamArgs) -> Result<(), CliError> {
    let mut body = json!({ "raft": true });
    if let Some(account) = &args.account {
        body["account"] = json!(account);
        body["streams"] = json!(true);
        body["consumer"] = json!(true);
        body["limit"] = json!(10_000);
    }
    let (answers, missing) = ask(conn, JSZ, body, &args.filter).await?;
    if args.filter.json {
        return missing.json_with(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
    }
    let mut rows: Vec<JsRow> = answers
        .iter()
        .map(|a| JsRow::of(a, args.account.as_deref()))
        .collect();
    rows.sort_by(|a, b| {
        match args.sort {
            JsSort::Name => a.name.cmp(&b.name),
            JsSort::Cluster => a.cluster.cmp(&b.cluster),
            JsSort::Streams => a.streams.cmp(&b.streams),
            JsSort::Consumers => a.consumers.cmp(&b.consumers),
            JsSort::Msgs => a.messages.cmp(&b.messages),
            JsSort::Bytes => a.bytes.cmp(&b.bytes),
            JsSort::Mem => a.memory.cmp(&b.memory),
            JsSort::File => a.file.cmp(&b.file),
            JsSort::Api => a.api.cmp(&b.api),
            JsSort::Err => a.errors.cmp(&b.errors),
        }
        .then_with(|| a.name.cmp(&b.name))
    });
    if args.filter.reverse {
        rows.reverse();
    }
    let mut table = Table::new([
        "Server",
        "Cluster",
        "Streams",
        "Consumers",
        "Messages",
        "Bytes",
        "Memory",
        "File",
        "API Req",
        "API Err",
        "Pending",
    ]);
    let mut total = JsRow::default();
    for row in &rows {
        let leader = if row.leader { "*" } else { "" };
        table.row(js_cells(
            format!("{}{leader}", row.name),
            row.cluster.clone(),
            row,
        ));
        total.add(row);
    }
    table.row(js_cells("Total".to_owned(), String::new(), &total));
    let title = match &args.account {
        Some(account) => format!("JetStream summary for account {account}"),
        None => "JetStream summary".to_owned(),
    };
    missing.print_under(&format!(
        "{title}: {} servers (* the meta leader)\n\n{}",
        rows.len(),
        table.render()
    ))
}

/// The cells of one row of the JetStream table.
fn js_cells(name: String, cluster: String, row: &JsRow) -> Vec<String> {
    vec![
        name,
        cluster,
        human::count(row.streams),
        human::count(row.consumers),
        human::count(row.messages),
        size(row.bytes),
        size(row.memory),
        size(row.file),
        human::count(row.api),
        human::count(row.errors),
        human::count(row.pending),
    ]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn jetstream_counts_at_the_top_of_their_range_saturate() {
        let max = u64::MAX;
        let answer = Answer {
            rtt: Duration::ZERO,
            stats: json!({
                "server": { "name": "n1" },
                "data": {
                    "account_details": [{
                        "memory": max,
                        "storage": max,
                        "stream_detail": [
                            { "state": { "consumer_count": max, "messages": 2 } },
                            { "state": { "consumer_count": 1, "messages": 3 } },
                        ],
                    }],
                    "api": { "total": max },
                },
            }),
        };
        let row = JsRow::of(&answer, Some("A"));
        assert_eq!((row.streams, row.consumers, row.messages), (2, max, 5));
        assert_eq!((row.bytes, row.memory, row.file), (max, max, max));
        let mut total = JsRow::default();
        total.add(&row);
        total.add(&row);
        assert_eq!((total.streams, total.messages), (4, 10));
        assert_eq!((total.consumers, total.bytes, total.api), (max, max, max));
    }
}
