//! `rnats server report connections|jetstream`: every server's connections
//! (`$SYS.REQ.SERVER.PING.CONNZ`) or JetStream usage (`$SYS.REQ.SERVER.PING.JSZ`), gathered
//! and tabled as natscli does (system account requests).

use bytes::Bytes;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::server_ping::{Answer, ask_every_server, server_count};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::jetstream::bytes as size;
use crate::out::{self, Table};
use crate::stats::human;

/// Every server's connections.
const CONNZ: &str = "$SYS.REQ.SERVER.PING.CONNZ";
/// Every server's connections of the asking account: any account may ask (the server
/// imports this subject into each), as natscli's `account report connections` does.
const ACCOUNT_CONNZ: &str = "$SYS.REQ.ACCOUNT.PING.CONNZ";
/// Every server's JetStream usage.
const JSZ: &str = "$SYS.REQ.SERVER.PING.JSZ";
/// Connections asked of each server at most.
const CONNZ_LIMIT: usize = 1024;

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
    Jetstream(JetStreamArgs),
}

/// Filters natscli's reports share.
#[derive(Debug, Args)]
struct ServerFilter {
    /// Servers to wait for (default: as many as a ping finds).
    limit: Option<usize>,
    /// Only the server with this name.
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Only the servers of this cluster.
    #[arg(long, value_name = "CLUSTER")]
    cluster: Option<String>,
    /// Only servers with these tags.
    #[arg(long, value_name = "TAG")]
    tags: Vec<String>,
    /// The servers' answers as JSON.
    #[arg(long, short = 'j')]
    json: bool,
    /// Reverse the order.
    #[arg(long, short = 'R')]
    reverse: bool,
}

impl ServerFilter {
    /// The server filter fields of a system request body.
    fn apply(&self, body: &mut Value) {
        if let Some(host) = &self.host {
            body["server_name"] = json!(host);
        }
        if let Some(cluster) = &self.cluster {
            body["cluster"] = json!(cluster);
        }
        if !self.tags.is_empty() {
            body["tags"] = json!(self.tags);
        }
    }

    /// Whether the filters may leave servers out (so a short count is not a problem).
    fn narrows(&self) -> bool {
        self.host.is_some() || self.cluster.is_some() || !self.tags.is_empty()
    }
}

/// Options of `server report connections` and `account report connections`.
#[derive(Debug, Args)]
pub(crate) struct ConnectionsArgs {
    #[command(flatten)]
    filter: ServerFilter,
    /// Only connections of this account.
    #[arg(long, value_name = "ACCOUNT")]
    account: Option<String>,
    /// Sort by this property.
    #[arg(long, value_enum, default_value_t = ConnSort::Subs)]
    sort: ConnSort,
    /// Show this many connections at most.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    top: usize,
    /// Only connections with interest in this subject.
    #[arg(long, value_name = "SUBJECT")]
    subject: Option<String>,
    /// Only connections of this user.
    #[arg(long, value_name = "USER")]
    username: Option<String>,
    /// Which connections: open, closed or all.
    #[arg(long, value_enum, default_value_t = ConnState::Open)]
    state: ConnState,
}

/// `--sort` of the connections report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ConnSort {
    InBytes,
    OutBytes,
    InMsgs,
    OutMsgs,
    Uptime,
    Cid,
    Subs,
}

/// `--state` of the connections report, as the server numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ConnState {
    Open,
    Closed,
    All,
}

/// Options of `server report jetstream`.
#[derive(Debug, Args)]
struct JetStreamArgs {
    #[command(flatten)]
    filter: ServerFilter,
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

/// Runs `server report ...`.
pub(crate) async fn run(args: ReportArgs, conn: &ConnArgs) -> Result<(), CliError> {
    match args.command {
        ReportCommand::Connections(args) => connections(conn, args, CONNZ).await,
        ReportCommand::Jetstream(args) => jetstream(conn, args).await,
    }
}

/// `account report connections`: the connections of the account the user is in.
pub(crate) async fn account_connections(
    conn: &ConnArgs,
    args: ConnectionsArgs,
) -> Result<(), CliError> {
    connections(conn, args, ACCOUNT_CONNZ).await
}

/// Asks every server `subject` with `body`; the answers, each with its `server` and `data`.
/// A system request waits for as many servers as a ping finds; an account's (which cannot
/// ping) for the count given, else until the timeout.
async fn ask(
    conn: &ConnArgs,
    subject: &'static str,
    body: Value,
    filter: &ServerFilter,
) -> Result<Vec<Answer>, CliError> {
    let (client, settings) = conn.connect().await?;
    let expected = if subject == ACCOUNT_CONNZ {
        filter.limit.unwrap_or(usize::MAX)
    } else {
        server_count(&client, settings.timeout, filter.limit).await?
    };
    let body = Bytes::from(serde_json::to_vec(&body)?);
    let (answers, _) = ask_every_server(&client, settings.timeout, subject, body, Some(expected))
        .await
        .or_else(|e| match e {
            // Filters can leave every server out.
            CliError::NoServerAnswered { .. } if filter.narrows() => Ok((Vec::new(), 0)),
            e => Err(e),
        })?;
    for answer in &answers {
        if let Some(error) = answer.stats.get("error") {
            let description = error["description"].as_str().unwrap_or("unknown error");
            return Err(CliError::JetStream {
                action: format!("{subject} failed"),
                source: description.to_owned().into(),
            });
        }
    }
    Ok(answers)
}

/// `server report connections` (`subject` [`CONNZ`]) and `account report connections`
/// ([`ACCOUNT_CONNZ`]).
async fn connections(
    conn: &ConnArgs,
    args: ConnectionsArgs,
    subject: &'static str,
) -> Result<(), CliError> {
    let mut body = json!({
        "subscriptions": true,
        "auth": true,
        "state": args.state as u8,
        "limit": CONNZ_LIMIT,
    });
    if let Some(account) = &args.account {
        body["acc"] = json!(account);
    }
    if let Some(user) = &args.username {
        body["user"] = json!(user);
    }
    if let Some(subject) = &args.subject {
        body["filter_subject"] = json!(subject);
    }
    args.filter.apply(&mut body);
    let answers = ask(conn, subject, body, &args.filter).await?;
    let mut rows: Vec<Value> = Vec::new();
    for answer in &answers {
        connection_rows(&answer.stats, &mut rows);
    }
    sort_connections(&mut rows, args.sort);
    if args.filter.reverse {
        rows.reverse();
    }
    let total = rows.len();
    rows.truncate(args.top);
    if args.filter.json {
        return out::json(&rows);
    }
    let number = |row: &Value, field: &str| row[field].as_u64().unwrap_or(0);
    let text = |row: &Value, field: &str| row[field].as_str().unwrap_or_default().to_owned();
    let mut table = Table::new([
        "CID",
        "Name",
        "Server",
        "Cluster",
        "IP",
        "Account",
        "Uptime",
        "In Msgs",
        "Out Msgs",
        "In Bytes",
        "Out Bytes",
        "Subs",
    ]);
    for row in &rows {
        table.row(vec![
            number(row, "cid").to_string(),
            text(row, "name"),
            text(row, "server_name"),
            text(row, "cluster"),
            text(row, "ip"),
            text(row, "account"),
            text(row, "uptime"),
            human::count(number(row, "in_msgs")),
            human::count(number(row, "out_msgs")),
            size(number(row, "in_bytes")),
            size(number(row, "out_bytes")),
            human::count(number(row, "subscriptions")),
        ]);
    }
    // Counts are the servers' word: a bogus one saturates the total rather than overflow.
    let (in_msgs, out_msgs) = rows.iter().fold((0u64, 0u64), |(i, o), row| {
        (
            i.saturating_add(number(row, "in_msgs")),
            o.saturating_add(number(row, "out_msgs")),
        )
    });
    out::print(&format!(
        "Top {} connections out of {} by {}\n\n{}\nTotal: {} in msgs, {} out msgs\n",
        rows.len(),
        human::count(total as u64),
        sort_name(args.sort),
        table.render(),
        human::count(in_msgs),
        human::count(out_msgs),
    ))
}

/// The busiest first: the largest value of `key` leads.
fn sort_connections(rows: &mut [Value], key: ConnSort) {
    let number = |row: &Value, field: &str| row[field].as_u64().unwrap_or(0);
    let started = |row: &Value| {
        row["start"]
            .as_str()
            .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
            .map_or(i128::MAX, OffsetDateTime::unix_timestamp_nanos)
    };
    rows.sort_by(|a, b| match key {
        ConnSort::InBytes => number(b, "in_bytes").cmp(&number(a, "in_bytes")),
        ConnSort::OutBytes => number(b, "out_bytes").cmp(&number(a, "out_bytes")),
        ConnSort::InMsgs => number(b, "in_msgs").cmp(&number(a, "in_msgs")),
        ConnSort::OutMsgs => number(b, "out_msgs").cmp(&number(a, "out_msgs")),
        // The longest-lived first.
        ConnSort::Uptime => started(a).cmp(&started(b)),
        ConnSort::Cid => number(a, "cid").cmp(&number(b, "cid")),
        ConnSort::Subs => number(b, "subscriptions").cmp(&number(a, "subscriptions")),
    });
}

/// `--sort`'s value as the title says it.
fn sort_name(key: ConnSort) -> &'static str {
    match key {
        ConnSort::InBytes => "in-bytes",
        ConnSort::OutBytes => "out-bytes",
        ConnSort::InMsgs => "in-msgs",
        ConnSort::OutMsgs => "out-msgs",
        ConnSort::Uptime => "uptime",
        ConnSort::Cid => "cid",
        ConnSort::Subs => "subs",
    }
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
        let n = |v: &Value| v.as_u64().unwrap_or(0);
        let name = server["name"].as_str().unwrap_or_default().to_owned();
        let mut row = JsRow {
            leader: data["meta_cluster"]["leader"].as_str() == Some(name.as_str()),
            cluster: server["cluster"].as_str().unwrap_or_default().to_owned(),
            name,
            memory: n(&data["memory"]),
            file: n(&data["storage"]),
            api: n(&data["api"]["total"]),
            errors: n(&data["api"]["errors"]),
            pending: n(&data["meta_cluster"]["pending"]),
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
                        .map(|s| n(&s["state"][field]))
                        .fold(0, u64::saturating_add)
                };
                row.consumers = total("consumer_count");
                row.messages = total("messages");
                row.bytes = n(&detail["memory"]).saturating_add(n(&detail["storage"]));
                row.memory = n(&detail["memory"]);
                row.file = n(&detail["storage"]);
            }
            None => {
                row.streams = n(&data["streams"]);
                row.consumers = n(&data["consumers"]);
                row.messages = n(&data["messages"]);
                row.bytes = n(&data["bytes"]);
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

/// The connections of one server's CONNZ answer (`stats`), each with the server's name and
/// cluster added, onto `rows`. An entry that is not an object is no connection: left out.
fn connection_rows(stats: &Value, rows: &mut Vec<Value>) {
    let server = &stats["server"];
    let Some(list) = stats["data"]["connections"].as_array() else {
        return;
    };
    for connection in list {
        let mut connection = connection.clone();
        let Some(fields) = connection.as_object_mut() else {
            continue;
        };
        fields.insert("server_name".into(), server["name"].clone());
        fields.insert("cluster".into(), server["cluster"].clone());
        rows.push(connection);
    }
}

/// `server report jetstream`.
async fn jetstream(conn: &ConnArgs, args: JetStreamArgs) -> Result<(), CliError> {
    let mut body = json!({ "raft": true });
    if let Some(account) = &args.account {
        body["account"] = json!(account);
        body["streams"] = json!(true);
        body["consumer"] = json!(true);
        body["limit"] = json!(10_000);
    }
    args.filter.apply(&mut body);
    let answers = ask(conn, JSZ, body, &args.filter).await?;
    if args.filter.json {
        return out::json(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
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
    out::print(&format!(
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
    fn connections_carry_their_server_and_entries_that_are_not_objects_are_left_out() {
        let stats = json!({
            "server": { "name": "n1", "cluster": "c" },
            "data": { "connections": [0, { "cid": 4 }, "x", { "cid": 5 }] },
        });
        let mut rows = Vec::new();
        connection_rows(&stats, &mut rows);
        connection_rows(&json!({ "data": { "connections": 7 } }), &mut rows);
        assert_eq!(
            rows,
            [
                json!({ "cid": 4, "server_name": "n1", "cluster": "c" }),
                json!({ "cid": 5, "server_name": "n1", "cluster": "c" }),
            ]
        );
    }

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
