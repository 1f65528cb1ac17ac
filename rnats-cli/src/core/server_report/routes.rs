//! `rnats server report routes`: every server's cluster routes
//! (`$SYS.REQ.SERVER.PING.ROUTEZ`), one row per route grouped by server, as natscli's
//! cluster report shows them.

use std::collections::BTreeSet;
use std::time::Duration;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use super::cells::{self, Grouped, number, text};
use super::gather::{Endpoint, ReportFilter, ask, by_server_name};
use crate::conn::ConnArgs;
use crate::core::server_json::since;
use crate::error::CliError;
use crate::jetstream::{bytes as size, duration};
use crate::out::Table;
use crate::stats::human;

/// Every server's routes.
const ROUTEZ: Endpoint = Endpoint::server("ROUTEZ");

/// Options of `server report routes`.
#[derive(Debug, Args)]
pub(super) struct RoutesArgs {
    #[command(flatten)]
    filter: ReportFilter,
    /// Sort by this property, smallest first; ties go by server, cluster, remote name and
    /// account.
    #[arg(long, value_enum, default_value_t = RouteSort::Server)]
    sort: RouteSort,
}

/// `--sort` of the routes report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RouteSort {
    Server,
    Cluster,
    /// The remote server's name.
    Name,
    #[value(alias = "acct")]
    Account,
    Subs,
    InBytes,
    OutBytes,
}

/// One route as the report shows it.
#[derive(Debug, Default, PartialEq)]
struct Route {
    server: String,
    cluster: String,
    /// The server at the other end.
    remote: String,
    /// The account the route is pinned to; empty for a shared (pooled) route.
    account: String,
    address: String,
    rid: u64,
    uptime: Option<Duration>,
    rtt: String,
    subs: u64,
    in_bytes: u64,
    out_bytes: u64,
}

impl Route {
    /// The routes of one server's ROUTEZ answer (`stats`); an entry that is not an object
    /// is no route.
    fn of(stats: &Value) -> Vec<Route> {
        let server = &stats["server"];
        let Some(routes) = stats["data"]["routes"].as_array() else {
            return Vec::new();
        };
        (routes.iter())
            .filter(|r| r.is_object())
            .map(|r| Route {
                server: text(&server["name"]),
                cluster: text(&server["cluster"]),
                remote: text(&r["remote_name"]),
                account: text(&r["account"]),
                address: cells::address(r),
                rid: number(&r["rid"]),
                uptime: since(&r["start"], &server["time"]),
                rtt: cells::rtt(&r["rtt"]),
                subs: number(&r["subscriptions"]),
                in_bytes: number(&r["in_bytes"]),
                out_bytes: number(&r["out_bytes"]),
            })
            .collect()
    }
}

/// Runs `server report routes`.
pub(super) async fn run(conn: &ConnArgs, args: RoutesArgs) -> Result<(), CliError> {
    let (mut answers, missing) = ask(conn, ROUTEZ, json!({}), &args.filter).await?;
    answers.sort_by(by_server_name);
    if args.filter.json {
        return missing.json_with(&answers.iter().map(|a| &a.stats).collect::<Vec<_>>());
    }
    let mut routes: Vec<Route> = answers.iter().flat_map(|a| Route::of(&a.stats)).collect();
    sort(&mut routes, args.sort);
    if args.filter.reverse {
        routes.reverse();
    }
    let clusters: BTreeSet<String> = answers
        .iter()
        .map(|a| text(&a.stats["server"]["cluster"]))
        .collect();
    missing.print_under(&format!(
        "Cluster report: {} routes of {} servers in {} clusters\n\n{}",
        routes.len(),
        answers.len(),
        clusters.len(),
        table(&routes).render()
    ))
}

/// Smallest first by `key`, then by server, cluster, remote name, account and route ID.
fn sort(routes: &mut [Route], key: RouteSort) {
    routes.sort_by(|a, b| {
        match key {
            RouteSort::Server => a.server.cmp(&b.server),
            RouteSort::Cluster => a.cluster.cmp(&b.cluster),
            RouteSort::Name => a.remote.cmp(&b.remote),
            RouteSort::Account => a.account.cmp(&b.account),
            RouteSort::Subs => a.subs.cmp(&b.subs),
            RouteSort::InBytes => a.in_bytes.cmp(&b.in_bytes),
            RouteSort::OutBytes => a.out_bytes.cmp(&b.out_bytes),
        }
        .then_with(|| a.server.cmp(&b.server))
        .then_with(|| a.cluster.cmp(&b.cluster))
        .then_with(|| a.remote.cmp(&b.remote))
        .then_with(|| a.account.cmp(&b.account))
        .then_with(|| a.rid.cmp(&b.rid))
    });
}

/// natscli's columns, a server's name, cluster and remote shown once for the rows that
/// follow it, and a Total row.
fn table(routes: &[Route]) -> Table {
    let mut table = Table::new([
        "Server",
        "Cluster",
        "Name",
        "Account",
        "Address",
        "ID",
        "Uptime",
        "RTT",
        "Subs",
        "Bytes In",
        "Bytes Out",
    ]);
    let (mut server, mut cluster, mut remote) =
        (Grouped::default(), Grouped::default(), Grouped::default());
    let (mut subs, mut bytes_in, mut bytes_out) = (0u64, 0u64, 0u64);
    for route in routes {
        let server_cell = server.cell(&route.server);
        if !server_cell.is_empty() {
            cluster.reset();
            remote.reset();
        }
        table.row(vec![
            server_cell,
            cluster.cell(&route.cluster),
            remote.cell(&route.remote),
            cells::account(&route.account),
            route.address.clone(),
            format!("rid:{}", route.rid),
            route.uptime.map_or_else(|| "-".to_owned(), duration),
            route.rtt.clone(),
            human::count(route.subs),
            size(route.in_bytes),
            size(route.out_bytes),
        ]);
        // The servers' numbers saturate a total rather than overflow it.
        subs = subs.saturating_add(route.subs);
        bytes_in = bytes_in.saturating_add(route.in_bytes);
        bytes_out = bytes_out.saturating_add(route.out_bytes);
    }
    let mut total = vec![String::new(); 8];
    total[0] = "Total".to_owned();
    total.extend([human::count(subs), size(bytes_in), size(bytes_out)]);
    table.row(total);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_read_leniently_and_sort_with_ties_broken_by_server() {
        let stats = json!({
            "server": { "name": "n2", "cluster": "c", "time": "2025-01-01T00:01:05Z" },
            "data": { "routes": [
                "not a route",
                { "rid": 7, "remote_name": "n1", "ip": "10.0.0.1", "port": 6222,
                  "start": "2025-01-01T00:00:00Z", "subscriptions": 3, "in_bytes": -1,
                  "account": "ACCOUNTWITHAVERYLONGNAMEINDEED" },
            ] },
        });
        let routes = Route::of(&stats);
        assert_eq!(routes.len(), 1);
        let route = &routes[0];
        assert_eq!((route.rid, route.subs, route.in_bytes), (7, 3, 0));
        assert_eq!(route.address, "10.0.0.1:6222");
        assert_eq!(route.uptime, Some(Duration::from_secs(65)));
        assert_eq!(cells::account(&route.account), "ACCOUNTWIT...NAMEINDEED");
        assert!(Route::of(&json!({ "data": { "routes": 1 } })).is_empty());

        let mut routes = vec![
            Route {
                server: "b".into(),
                subs: 1,
                ..Route::default()
            },
            Route {
                server: "a".into(),
                subs: 1,
                ..Route::default()
            },
            Route {
                server: "c".into(),
                subs: 0,
                ..Route::default()
            },
        ];
        sort(&mut routes, RouteSort::Subs);
        let order: Vec<&str> = routes.iter().map(|r| r.server.as_str()).collect();
        assert_eq!(order, ["c", "a", "b"]);
    }
}
