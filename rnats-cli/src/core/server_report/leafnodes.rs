//! `rnats server report leafnodes`: every server's leaf node connections
//! (`$SYS.REQ.SERVER.PING.LEAFZ`), one row each, as natscli's leaf node report shows them.

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use super::cells::{self, number, text};
use super::gather::{Endpoint, ReportFilter, ask, by_server_name};
use crate::conn::ConnArgs;
use crate::error::CliError;
use crate::jetstream::bytes as size;
use crate::out::Table;
use crate::stats::human;

/// Every server's leaf node connections.
const LEAFZ: Endpoint = Endpoint::server("LEAFZ");

/// Options of `server report leafnodes`.
#[derive(Debug, Args)]
pub(super) struct LeafnodesArgs {
    #[command(flatten)]
    filter: ReportFilter,
    /// Only the leaf node connections of this account.
    #[arg(long, value_name = "ACCOUNT")]
    account: Option<String>,
    /// Sort by this property, smallest first; ties go by server and name.
    #[arg(long, value_enum, default_value_t = LeafSort::Server)]
    sort: LeafSort,
}

/// `--sort` of the leaf node report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LeafSort {
    Server,
    /// The leaf node's server name.
    Name,
    Account,
    Subs,
    InBytes,
    OutBytes,
    InMsgs,
    OutMsgs,
}

/// One leaf node connection as the report shows it.
#[derive(Debug, Default, PartialEq)]
struct Leaf {
    /// The server it is connected to.
    server: String,
    /// The server at the other end.
    name: String,
    account: String,
    address: String,
    rtt: String,
    in_msgs: u64,
    out_msgs: u64,
    in_bytes: u64,
    out_bytes: u64,
    subs: u64,
    compression: String,
    /// Whether the reporting server is this connection's spoke (nats-server's `is_spoke`):
    /// it made the connection, to a remote of its own, and the other end is its hub.
    spoke: bool,
}

impl Leaf {
    /// The leaf node connections of one server's LEAFZ answer (`stats`); an entry that is
    /// not an object is none.
    fn of(stats: &Value) -> Vec<Leaf> {
        let Some(leafs) = stats["data"]["leafs"].as_array() else {
            return Vec::new();
        };
        (leafs.iter())
            .filter(|l| l.is_object())
            .map(|l| Leaf {
                server: text(&stats["server"]["name"]),
                name: text(&l["name"]),
                account: text(&l["account"]),
                address: cells::address(l),
                rtt: cells::rtt(&l["rtt"]),
                in_msgs: number(&l["in_msgs"]),
                out_msgs: number(&l["out_msgs"]),
                in_bytes: number(&l["in_bytes"]),
                out_bytes: number(&l["out_bytes"]),
                subs: number(&l["subscriptions"]),
                compression: text(&l["compression"]),
                spoke: l["is_spoke"].as_bool().unwrap_or(false),
            })
            .collect()
    }
}

/// Runs `server report leafnodes`.
pub(super) async fn run(conn: &ConnArgs, args: LeafnodesArgs) -> Result<(), CliError> {
    let mut body = json!({});
    if let Some(account) = &args.account {
        body["account"] = json!(account);
    }
    let (mut answers, missing) = ask(conn, LEAFZ, body, &args.filter).await?;
    answers.sort_by(by_server_name);
    if args.filter.json {
        return missing.json_with(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
    }
    let mut leafs: Vec<Leaf> = answers.iter().flat_map(|a| Leaf::of(&a.stats)).collect();
    sort(&mut leafs, args.sort);
    if args.filter.reverse {
        leafs.reverse();
    }
    missing.print_under(&format!(
        "Leafnode report: {} leaf node connections on {} servers\n\n{}",
        leafs.len(),
        answers.len(),
        table(&leafs).render()
    ))
}

/// Smallest first by `key`, then by server and name.
fn sort(leafs: &mut [Leaf], key: LeafSort) {
    leafs.sort_by(|a, b| {
        match key {
            LeafSort::Server => a.server.cmp(&b.server),
            LeafSort::Name => a.name.cmp(&b.name),
            LeafSort::Account => a.account.cmp(&b.account),
            LeafSort::Subs => a.subs.cmp(&b.subs),
            LeafSort::InBytes => a.in_bytes.cmp(&b.in_bytes),
            LeafSort::OutBytes => a.out_bytes.cmp(&b.out_bytes),
            LeafSort::InMsgs => a.in_msgs.cmp(&b.in_msgs),
            LeafSort::OutMsgs => a.out_msgs.cmp(&b.out_msgs),
        }
        .then_with(|| a.server.cmp(&b.server))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| a.address.cmp(&b.address))
    });
}

/// natscli's columns and a Total row, which natscli's table lacks.
fn table(leafs: &[Leaf]) -> Table {
    let mut table = Table::new([
        "Server",
        "Name",
        "Account",
        "Address",
        "RTT",
        "Msgs In",
        "Msgs Out",
        "Bytes In",
        "Bytes Out",
        "Subs",
        "Compressed",
        "Spoke",
    ]);
    let mut total = Leaf::default();
    for leaf in leafs {
        table.row(vec![
            leaf.server.clone(),
            leaf.name.clone(),
            cells::account(&leaf.account),
            leaf.address.clone(),
            leaf.rtt.clone(),
            human::count(leaf.in_msgs),
            human::count(leaf.out_msgs),
            size(leaf.in_bytes),
            size(leaf.out_bytes),
            human::count(leaf.subs),
            leaf.compression.clone(),
            if leaf.spoke { "yes" } else { "no" }.to_owned(),
        ]);
        // The servers' numbers saturate a total rather than overflow it.
        for (sum, n) in [
            (&mut total.in_msgs, leaf.in_msgs),
            (&mut total.out_msgs, leaf.out_msgs),
            (&mut total.in_bytes, leaf.in_bytes),
            (&mut total.out_bytes, leaf.out_bytes),
            (&mut total.subs, leaf.subs),
        ] {
            *sum = sum.saturating_add(n);
        }
    }
    let mut row = vec![
        "Total".to_owned(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ];
    row.extend([
        human::count(total.in_msgs),
        human::count(total.out_msgs),
        size(total.in_bytes),
        size(total.out_bytes),
        human::count(total.subs),
    ]);
    table.row(row);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leafs_read_leniently_and_sort_by_the_key_then_server() {
        let stats = json!({
            "server": { "name": "hub-0" },
            "data": { "leafs": [
                7,
                { "name": "leaf", "account": "APP", "ip": "127.0.0.1", "port": 4,
                  "rtt": "1.5ms", "in_msgs": 3, "subscriptions": "x", "is_spoke": true },
            ] },
        });
        let leafs = Leaf::of(&stats);
        assert_eq!(leafs.len(), 1);
        let leaf = &leafs[0];
        assert_eq!(
            (leaf.server.as_str(), leaf.name.as_str()),
            ("hub-0", "leaf")
        );
        assert_eq!((leaf.in_msgs, leaf.subs, leaf.spoke), (3, 0, true));
        assert_eq!(leaf.address, "127.0.0.1:4");
        assert_eq!(leaf.rtt, "1.50 ms");

        let mut leafs = vec![
            Leaf {
                server: "b".into(),
                in_msgs: 2,
                ..Leaf::default()
            },
            Leaf {
                server: "c".into(),
                in_msgs: 1,
                ..Leaf::default()
            },
            Leaf {
                server: "a".into(),
                in_msgs: 2,
                ..Leaf::default()
            },
        ];
        sort(&mut leafs, LeafSort::InMsgs);
        let order: Vec<&str> = leafs.iter().map(|l| l.server.as_str()).collect();
        assert_eq!(order, ["c", "a", "b"]);
    }
}
