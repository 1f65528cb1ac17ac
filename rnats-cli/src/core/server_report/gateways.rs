//! `rnats server report gateways`: every server's gateway connections to the other clusters
//! of a supercluster (`$SYS.REQ.SERVER.PING.GATEWAYZ`), as natscli's super cluster report
//! shows them: a row per server, then its inbound and outbound connections.

use std::collections::BTreeSet;

use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};

use super::cells::{self, number, text};
use super::gather::{Endpoint, ReportFilter, ask};
use crate::conn::ConnArgs;
use crate::core::server_ping::Answer;
use crate::error::CliError;
use crate::jetstream::bytes as size;
use crate::out::Table;
use crate::stats::human;

/// Every server's gateways.
const GATEWAYZ: Endpoint = Endpoint::server("GATEWAYZ");

/// Options of `server report gateways`.
#[derive(Debug, Args)]
pub(super) struct GatewaysArgs {
    #[command(flatten)]
    filter: ReportFilter,
    /// Only the connections to the gateway (cluster) with this name.
    #[arg(long, value_name = "NAME")]
    filter_name: Option<String>,
    /// Order of the servers; ties go by the other.
    #[arg(long, value_enum, default_value_t = GatewaySort::Cluster)]
    sort: GatewaySort,
}

/// `--sort` of the gateway report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GatewaySort {
    Server,
    Cluster,
}

/// Which way a gateway connection was made; inbound ones are listed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Direction {
    Inbound,
    Outbound,
}

/// One gateway connection as the report shows it.
#[derive(Debug, PartialEq)]
struct Gateway {
    direction: Direction,
    /// The gateway (cluster) at the other end.
    name: String,
    address: String,
    cid: u64,
    uptime: String,
    rtt: String,
    /// Bytes received on an inbound connection, sent on an outbound one.
    bytes: u64,
    accounts: usize,
}

impl Gateway {
    /// The connections of one server's GATEWAYZ answer (`data`): inbound ones first, each
    /// direction by gateway name. An entry without its connection is left out.
    fn of(data: &Value) -> Vec<Gateway> {
        let empty = Map::new();
        let inbound = data["inbound_gateways"].as_object().unwrap_or(&empty);
        let outbound = data["outbound_gateways"].as_object().unwrap_or(&empty);
        let inbound = inbound.iter().flat_map(|(name, list)| {
            let list = list.as_array().map(Vec::as_slice).unwrap_or_default();
            list.iter().map(move |g| (Direction::Inbound, name, g))
        });
        let outbound = outbound
            .iter()
            .map(|(name, g)| (Direction::Outbound, name, g));
        let mut gateways: Vec<Gateway> = inbound
            .chain(outbound)
            .filter_map(|(direction, name, gateway)| {
                let connection = gateway.get("connection")?;
                let bytes = match direction {
                    Direction::Inbound => &connection["in_bytes"],
                    Direction::Outbound => &connection["out_bytes"],
                };
                Some(Gateway {
                    direction,
                    name: name.clone(),
                    address: cells::address(connection),
                    cid: number(&connection["cid"]),
                    uptime: cells::uptime(&connection["uptime"]),
                    rtt: cells::rtt(&connection["rtt"]),
                    bytes: number(bytes),
                    accounts: gateway["accounts"].as_array().map_or(0, Vec::len),
                })
            })
            .collect();
        gateways.sort_by(|a, b| (a.direction, &a.name).cmp(&(b.direction, &b.name)));
        gateways
    }
}

/// Runs `server report gateways`.
pub(super) async fn run(conn: &ConnArgs, args: GatewaysArgs) -> Result<(), CliError> {
    let mut body = json!({ "accounts": true });
    if let Some(name) = &args.filter_name {
        body["name"] = json!(name);
    }
    let (mut answers, missing) = ask(conn, GATEWAYZ, body, &args.filter).await?;
    sort(&mut answers, args.sort);
    if args.filter.reverse {
        answers.reverse();
    }
    if args.filter.json {
        return missing.json_with(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
    }
    let clusters: BTreeSet<String> = answers
        .iter()
        .map(|a| text(&a.stats["server"]["cluster"]))
        .collect();
    let (table, connections) = table(&answers);
    missing.print_under(&format!(
        "Super cluster report: {connections} gateway connections of {} servers in {} clusters\n\n{}",
        answers.len(),
        clusters.len(),
        table.render()
    ))
}

/// By server name or by cluster, each then by the other.
fn sort(answers: &mut [Answer], key: GatewaySort) {
    let server = |a: &Answer| text(&a.stats["server"]["name"]);
    let cluster = |a: &Answer| text(&a.stats["server"]["cluster"]);
    answers.sort_by(|a, b| match key {
        GatewaySort::Server => (server(a), cluster(a)).cmp(&(server(b), cluster(b))),
        GatewaySort::Cluster => (cluster(a), server(a)).cmp(&(cluster(b), server(b))),
    });
}

/// natscli's columns: a row per server, its connections below it (the direction written
/// on the first of each), and a Total row; the table and how many connections it holds.
fn table(answers: &[Answer]) -> (Table, usize) {
    let mut table = Table::new([
        "Server",
        "Name",
        "Port",
        "Kind",
        "Connection",
        "ID",
        "Uptime",
        "RTT",
        "Bytes",
        "Accounts",
    ]);
    let (mut connections, mut bytes) = (0usize, 0u64);
    for answer in answers {
        let data = &answer.stats["data"];
        table.row(vec![
            text(&answer.stats["server"]["name"]),
            text(&answer.stats["server"]["cluster"]),
            number(&data["port"]).to_string(),
        ]);
        let mut last = None;
        for gateway in Gateway::of(data) {
            let kind = match gateway.direction {
                _ if last == Some(gateway.direction) => "",
                Direction::Inbound => "Inbound",
                Direction::Outbound => "Outbound",
            };
            last = Some(gateway.direction);
            table.row(vec![
                String::new(),
                String::new(),
                String::new(),
                kind.to_owned(),
                format!("{} {}", gateway.name, gateway.address),
                format!("gid:{}", gateway.cid),
                gateway.uptime,
                gateway.rtt,
                size(gateway.bytes),
                gateway.accounts.to_string(),
            ]);
            connections += 1;
            // The servers' numbers saturate a total rather than overflow it.
            bytes = bytes.saturating_add(gateway.bytes);
        }
    }
    let mut total = vec![String::new(); 10];
    total[0] = "Total".to_owned();
    total[4] = format!("{} connections", human::count(connections as u64));
    total[8] = size(bytes);
    table.row(total);
    (table, connections)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inbound_connections_come_first_and_each_counts_its_own_direction_of_bytes() {
        let data = json!({
            "port": 7222,
            "outbound_gateways": {
                "west": { "connection": { "cid": 2, "ip": "10.0.0.2", "port": 7222,
                          "in_bytes": 1, "out_bytes": 20, "rtt": "2ms" },
                          "accounts": [{}, {}] },
                "broken": { "configured": true },
            },
            "inbound_gateways": {
                "west": [ { "connection": { "cid": 3, "in_bytes": 30, "out_bytes": 4,
                            "uptime": "1h0m5s" } }, 9 ],
            },
        });
        let gateways = Gateway::of(&data);
        let summary: Vec<(Direction, &str, u64, u64, usize)> = gateways
            .iter()
            .map(|g| (g.direction, g.name.as_str(), g.cid, g.bytes, g.accounts))
            .collect();
        assert_eq!(
            summary,
            [
                (Direction::Inbound, "west", 3, 30, 0),
                (Direction::Outbound, "west", 2, 20, 2),
            ]
        );
        assert_eq!(gateways[1].address, "10.0.0.2:7222");
        assert_eq!(gateways[0].uptime, "1h5s");
        assert_eq!(cells::uptime(&json!("1y2d0h0m1s")), "367d1s");
        assert_eq!(cells::uptime(&json!("a while")), "a while");
        assert!(Gateway::of(&json!({ "outbound_gateways": [] })).is_empty());
    }
}
