//! `rnats server report connections` and `account report connections`: every server's
//! connections (`$SYS.REQ.SERVER.PING.CONNZ`, or the account's own
//! `$SYS.REQ.ACCOUNT.PING.CONNZ`), the busiest first.

use clap::{Args, ValueEnum};
use rnats::system::ConnState;
use serde_json::{Value, json};

use super::cells::{number, text};
use super::gather::{ACCOUNT_CONNZ, Endpoint, ReportFilter, ask};
use crate::conn::ConnArgs;
use crate::core::server_json::time;
use crate::core::server_request::StateArg;
use crate::error::CliError;
use crate::jetstream::bytes as size;
use crate::out::Table;
use crate::stats::human;

/// Every server's connections.
pub(super) const CONNZ: Endpoint = Endpoint::server("CONNZ");
/// Connections asked of each server at most.
pub(super) const CONNZ_LIMIT: usize = 1024;

/// Options of `server report connections` and `account report connections`.
#[derive(Debug, Args)]
pub(crate) struct ConnectionsArgs {
    #[command(flatten)]
    filter: ReportFilter,
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
    #[arg(long, value_enum, default_value_t = StateArg(ConnState::Open))]
    state: StateArg,
}

/// `--sort` of the connections report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum ConnSort {
    InBytes,
    OutBytes,
    InMsgs,
    OutMsgs,
    Uptime,
    Cid,
    Subs,
}

/// `server report connections`: every server's connections.
pub(super) async fn server_connections(
    conn: &ConnArgs,
    args: ConnectionsArgs,
) -> Result<(), CliError> {
    connections(conn, args, CONNZ).await
}

/// `account report connections`: the connections of the account the user is in.
pub(crate) async fn account_connections(
    conn: &ConnArgs,
    args: ConnectionsArgs,
) -> Result<(), CliError> {
    connections(conn, args, ACCOUNT_CONNZ).await
}

/// `server report connections` (`endpoint` [`CONNZ`]) and `account report connections`
/// ([`ACCOUNT_CONNZ`]).
async fn connections(
    conn: &ConnArgs,
    args: ConnectionsArgs,
    endpoint: Endpoint,
) -> Result<(), CliError> {
    let mut body = json!({
        "subscriptions": true,
        "auth": true,
        "state": args.state.0,
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
    let (answers, missing) = ask(conn, endpoint, body, &args.filter).await?;
    let mut rows: Vec<Value> = Vec::new();
    for answer in &answers {
        connection_rows(&answer.stats, &mut rows);
    }
    let total = rank(&mut rows, args.sort, args.filter.reverse, args.top);
    if args.filter.json {
        return missing.json_with(&rows);
    }
    missing.print_under(&table_text(&rows, total, args.sort))
}

/// Orders `rows` busiest first by `key`, keeps the first `top`, and turns them round with
/// `reverse`: the busiest `top` either way, as natscli keeps them; how many there were.
pub(super) fn rank(rows: &mut Vec<Value>, key: ConnSort, reverse: bool, top: usize) -> usize {
    sort_connections(rows, key);
    let total = rows.len();
    rows.truncate(top);
    if reverse {
        rows.reverse();
    }
    total
}

/// natscli's connections table of `rows` (ranked by `key`, `total` before the cut), with
/// its title and the message totals.
pub(super) fn table_text(rows: &[Value], total: usize, key: ConnSort) -> String {
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
    for row in rows {
        table.row(vec![
            number(&row["cid"]).to_string(),
            text(&row["name"]),
            text(&row["server_name"]),
            text(&row["cluster"]),
            text(&row["ip"]),
            text(&row["account"]),
            text(&row["uptime"]),
            human::count(number(&row["in_msgs"])),
            human::count(number(&row["out_msgs"])),
            size(number(&row["in_bytes"])),
            size(number(&row["out_bytes"])),
            human::count(number(&row["subscriptions"])),
        ]);
    }
    // Counts are the servers' word: a bogus one saturates the total rather than overflow.
    let (in_msgs, out_msgs) = rows.iter().fold((0u64, 0u64), |(i, o), row| {
        (
            i.saturating_add(number(&row["in_msgs"])),
            o.saturating_add(number(&row["out_msgs"])),
        )
    });
    format!(
        "Top {} connections out of {} by {}\n\n{}\nTotal: {} in msgs, {} out msgs\n",
        rows.len(),
        human::count(total as u64),
        sort_name(key),
        table.render(),
        human::count(in_msgs),
        human::count(out_msgs),
    )
}

/// The busiest first: the largest value of `key` leads.
fn sort_connections(rows: &mut [Value], key: ConnSort) {
    // A connection without a start (none should lack one) sorts as the newest.
    let started = |row: &Value| time(&row["start"]).map_or(i128::MAX, |t| t.unix_timestamp_nanos());
    rows.sort_by(|a, b| match key {
        ConnSort::InBytes => number(&b["in_bytes"]).cmp(&number(&a["in_bytes"])),
        ConnSort::OutBytes => number(&b["out_bytes"]).cmp(&number(&a["out_bytes"])),
        ConnSort::InMsgs => number(&b["in_msgs"]).cmp(&number(&a["in_msgs"])),
        ConnSort::OutMsgs => number(&b["out_msgs"]).cmp(&number(&a["out_msgs"])),
        // The longest-lived first.
        ConnSort::Uptime => started(a).cmp(&started(b)),
        ConnSort::Cid => number(&a["cid"]).cmp(&number(&b["cid"])),
        ConnSort::Subs => number(&b["subscriptions"]).cmp(&number(&a["subscriptions"])),
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

/// The connections of one server's CONNZ answer (`stats`), each with the server's name and
/// cluster added, onto `rows`. An entry that is not an object is no connection: left out.
pub(super) fn connection_rows(stats: &Value, rows: &mut Vec<Value>) {
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

#[cfg(test)]
mod tests {
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
}
