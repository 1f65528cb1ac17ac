//! `rnats server report accounts`: every server's open connections
//! (`$SYS.REQ.SERVER.PING.CONNZ`) summed per account, as natscli's accounts report sums
//! them; or, given an account, that account's connections.

use std::collections::BTreeMap;

use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::{Value, json};

use super::cells::{number, text};
use super::connections::{CONNZ, CONNZ_LIMIT, ConnSort, connection_rows, rank, table_text};
use super::gather::{ReportFilter, ask};
use crate::conn::ConnArgs;
use crate::core::server_ping::{Answer, Missing};
use crate::error::CliError;
use crate::jetstream::bytes as size;
use crate::out::Table;
use crate::stats::human;

/// Options of `server report accounts`.
#[derive(Debug, Args)]
pub(super) struct AccountsArgs {
    /// Only this account: its connections, as `server report connections` lists them.
    #[arg(value_name = "ACCOUNT")]
    account: Option<String>,
    #[command(flatten)]
    filter: ReportFilter,
    /// The account, as a flag (natscli's cheat sheet writes it so).
    #[arg(long = "account", value_name = "ACCOUNT", conflicts_with = "account")]
    account_flag: Option<String>,
    /// Sort by this property, the largest first; with an account, `conns` orders its
    /// connections by subscriptions.
    #[arg(long, value_enum, default_value_t = AccountSort::Subs)]
    sort: AccountSort,
    /// Show this many accounts (or, with an account, connections) at most.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    top: usize,
}

/// `--sort` of the accounts report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AccountSort {
    InBytes,
    OutBytes,
    InMsgs,
    OutMsgs,
    Conns,
    Subs,
}

impl AccountSort {
    /// The order of one account's connections that comes closest.
    fn connections(self) -> ConnSort {
        match self {
            AccountSort::InBytes => ConnSort::InBytes,
            AccountSort::OutBytes => ConnSort::OutBytes,
            AccountSort::InMsgs => ConnSort::InMsgs,
            AccountSort::OutMsgs => ConnSort::OutMsgs,
            AccountSort::Conns | AccountSort::Subs => ConnSort::Subs,
        }
    }

    /// The value as the title says it.
    fn name(self) -> &'static str {
        match self {
            AccountSort::InBytes => "in-bytes",
            AccountSort::OutBytes => "out-bytes",
            AccountSort::InMsgs => "in-msgs",
            AccountSort::OutMsgs => "out-msgs",
            AccountSort::Conns => "conns",
            AccountSort::Subs => "subs",
        }
    }
}

/// One account's sums, in natscli's JSON shape.
#[derive(Debug, Default, Serialize)]
struct AccountUsage {
    account: String,
    connections: u64,
    in_msgs: u64,
    out_msgs: u64,
    in_bytes: u64,
    out_bytes: u64,
    subscriptions: u64,
    /// The account's connections, each with `server_name` and `cluster`.
    connection_info: Vec<Value>,
    /// The servers it has connections on, as each described itself.
    server: Vec<Value>,
}

impl AccountUsage {
    /// Adds one connection (`row`) on `server`. The servers' numbers saturate the sums
    /// rather than overflow them.
    fn add(&mut self, row: Value, server: &Value) {
        self.connections += 1;
        for (sum, field) in [
            (&mut self.in_msgs, "in_msgs"),
            (&mut self.out_msgs, "out_msgs"),
            (&mut self.in_bytes, "in_bytes"),
            (&mut self.out_bytes, "out_bytes"),
            (&mut self.subscriptions, "subscriptions"),
        ] {
            *sum = sum.saturating_add(number(&row[field]));
        }
        self.connection_info.push(row);
        if !self.server.iter().any(|s| s["id"] == server["id"]) {
            self.server.push(server.clone());
        }
    }

    /// The figure `key` sorts by.
    fn figure(&self, key: AccountSort) -> u64 {
        match key {
            AccountSort::InBytes => self.in_bytes,
            AccountSort::OutBytes => self.out_bytes,
            AccountSort::InMsgs => self.in_msgs,
            AccountSort::OutMsgs => self.out_msgs,
            AccountSort::Conns => self.connections,
            AccountSort::Subs => self.subscriptions,
        }
    }
}

/// Runs `server report accounts`.
pub(super) async fn run(conn: &ConnArgs, args: AccountsArgs) -> Result<(), CliError> {
    let account = args.account.as_deref().or(args.account_flag.as_deref());
    let mut body = json!({ "auth": true, "state": 0, "limit": CONNZ_LIMIT });
    if let Some(account) = account {
        body["acc"] = json!(account);
    }
    let (answers, missing) = ask(conn, CONNZ, body, &args.filter).await?;
    let mut accounts = sum_by_account(&answers);
    if let Some(name) = account {
        return one_account(accounts.remove(name), name, &args, missing);
    }
    let mut accounts: Vec<AccountUsage> = accounts.into_values().collect();
    // The largest first, ties by name (they came by name); the largest `top` are kept,
    // and -R only shows them the other way round, as natscli keeps them.
    accounts.sort_by_key(|a| std::cmp::Reverse(a.figure(args.sort)));
    let total = accounts.len();
    accounts.truncate(args.top);
    if args.filter.reverse {
        accounts.reverse();
    }
    if args.filter.json {
        return missing.json_with(&accounts);
    }
    let mut table = Table::new([
        "Account",
        "Connections",
        "In Msgs",
        "Out Msgs",
        "In Bytes",
        "Out Bytes",
        "Subs",
    ]);
    for a in &accounts {
        table.row(vec![
            a.account.clone(),
            human::count(a.connections),
            human::count(a.in_msgs),
            human::count(a.out_msgs),
            size(a.in_bytes),
            size(a.out_bytes),
            human::count(a.subscriptions),
        ]);
    }
    missing.print_under(&format!(
        "Top {} accounts out of {} by {}\n\n{}",
        accounts.len(),
        human::count(total as u64),
        args.sort.name(),
        table.render()
    ))
}

/// One account's sums (`usage`, none when it has no connections): as JSON, or its
/// connections as a table; then the servers `missing`.
fn one_account(
    usage: Option<AccountUsage>,
    name: &str,
    args: &AccountsArgs,
    missing: Missing,
) -> Result<(), CliError> {
    let usage = usage.unwrap_or_else(|| AccountUsage {
        account: name.to_owned(),
        ..AccountUsage::default()
    });
    if args.filter.json {
        return missing.json_with(&usage);
    }
    let mut rows = usage.connection_info;
    let key = args.sort.connections();
    let total = rank(&mut rows, key, args.filter.reverse, args.top);
    missing.print_under(&table_text(&rows, total, key))
}

/// Every connection in `answers`, summed per account, by account name.
fn sum_by_account(answers: &[Answer]) -> BTreeMap<String, AccountUsage> {
    let mut accounts: BTreeMap<String, AccountUsage> = BTreeMap::new();
    for answer in answers {
        let server = &answer.stats["server"];
        let mut rows = Vec::new();
        connection_rows(&answer.stats, &mut rows);
        for row in rows {
            let name = text(&row["account"]);
            let usage = accounts
                .entry(name.clone())
                .or_insert_with(|| AccountUsage {
                    account: name,
                    ..AccountUsage::default()
                });
            usage.add(row, server);
        }
    }
    accounts
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn answer(server: &str, connections: Value) -> Answer {
        Answer {
            rtt: Duration::ZERO,
            stats: json!({
                "server": { "name": server, "id": server },
                "data": { "connections": connections },
            }),
        }
    }

    #[test]
    fn connections_sum_per_account_and_each_server_is_listed_once() {
        let answers = [
            answer(
                "n1",
                json!([
                    { "account": "APP", "in_msgs": 2, "subscriptions": 1 },
                    { "account": "APP", "in_msgs": u64::MAX, "subscriptions": 2 },
                    { "account": "SYS", "in_msgs": 1 },
                ]),
            ),
            answer("n2", json!([{ "account": "APP", "out_bytes": 5 }, "junk"])),
        ];
        let accounts = sum_by_account(&answers);
        let names: Vec<&str> = accounts.keys().map(String::as_str).collect();
        assert_eq!(names, ["APP", "SYS"]);
        let app = &accounts["APP"];
        assert_eq!(
            (app.connections, app.subscriptions, app.out_bytes),
            (3, 3, 5)
        );
        assert_eq!(app.in_msgs, u64::MAX);
        assert_eq!(app.connection_info.len(), 3);
        assert_eq!(app.connection_info[2]["server_name"], "n2");
        let servers: Vec<&Value> = app.server.iter().map(|s| &s["name"]).collect();
        assert_eq!(servers, [&json!("n1"), &json!("n2")]);
    }
}
