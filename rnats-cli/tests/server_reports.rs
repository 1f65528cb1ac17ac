//! natscli's `server report` views beyond connections and JetStream, against real servers
//! with a system account: routes in a three-node cluster, leaf nodes of a hub, gateways of
//! a supercluster, CPU and memory, accounts and health. Each view's figures are checked
//! against what the servers say on their own monitoring endpoints.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{ACCOUNTS, Rnats, args, login};
use rnats_test_server::{Cluster, HubAndLeaf, LEAF_DOMAIN, NatsServer, Role, Supercluster};
use serde_json::Value;

/// How long the servers may take to show what a test awaits.
const SETTLE: Duration = Duration::from_secs(30);

fn sys(url: &str) -> Vec<String> {
    login(url, "sys")
}

/// The rows of a grouped report table (below its header, above its Total row), each
/// group keyed by the first cell of its first row: natscli leaves that cell blank on the
/// rows that follow.
fn groups(table: &str, header: &str) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    let rows = table
        .lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(1)
        .take_while(|l| !l.starts_with("Total"));
    for row in rows {
        if !row.starts_with(' ') {
            current = row.split_whitespace().next().map(str::to_owned);
        }
        let key = current
            .clone()
            .unwrap_or_else(|| panic!("no group: {table}"));
        groups.entry(key).or_default().push(row.to_owned());
    }
    groups
}

/// Waits until `server list` shows `n` servers each counting `n` active in the system
/// account: then every server answers the system requests.
fn wait_all_counted(rnats: &Rnats, sys: &[String], n: u64) {
    let list = args(&["server", "list", "--json"], sys);
    let deadline = Instant::now() + SETTLE;
    loop {
        let answers = rnats.json(&list);
        let answers = answers.as_array().expect("an array");
        let counted = |a: &Value| a["statsz"]["active_servers"] == n;
        if answers.len() as u64 == n && answers.iter().all(counted) {
            return;
        }
        assert!(Instant::now() < deadline, "never all counted: {answers:?}");
    }
}

#[test]
fn routes_are_each_servers_routez_grouped_by_server() {
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let cluster = Cluster::start_with(3, |node| node.append_config(&config).monitoring())
        .expect("cluster starts");
    let nodes = cluster.nodes();
    let rnats = Rnats::new();
    let sys = sys(&nodes[0].url());
    wait_all_counted(&rnats, &sys, 3);

    // Routes of a pool come up one by one: read until the report and every node's /routez
    // agree on each node's count.
    let json = args(&["server", "report", "routes", "--json"], &sys);
    let deadline = Instant::now() + SETTLE;
    let counts: BTreeMap<String, u64> = loop {
        let report = rnats.json(&json);
        let answers = report.as_array().expect("an array");
        let mut counts = BTreeMap::new();
        for node in nodes {
            let routez = node.monitor("/routez").expect("routez");
            let answer = answers
                .iter()
                .find(|a| a["server"]["id"] == routez["server_id"]);
            if let Some(answer) = answer
                && answer["data"]["num_routes"] == routez["num_routes"]
            {
                let name = answer["server"]["name"].as_str().expect("a name");
                counts.insert(name.to_owned(), routez["num_routes"].as_u64().expect("n"));
            }
        }
        if counts.len() == 3 {
            break counts;
        }
        assert!(Instant::now() < deadline, "routes never settled: {report}");
    };

    let table = rnats.ok(&args(&["server", "report", "routes"], &sys));
    let total: u64 = counts.values().sum();
    assert!(
        table.starts_with(&format!(
            "Cluster report: {total} routes of 3 servers in 1 clusters\n"
        )),
        "{table}"
    );
    // A count of 0 is no count, as in natscli: every server the ping finds, not none.
    let zero = rnats.ok(&args(&["server", "report", "routes", "0"], &sys));
    assert_eq!(zero.lines().next(), table.lines().next(), "{zero}");
    let groups = groups(&table, "Server  ");
    assert_eq!(groups.len(), 3, "{table}");
    for (name, rows) in &groups {
        assert_eq!(rows.len() as u64, counts[name], "{name}: {table}");
        // Every route leads to one of the two other nodes, each named once in the group.
        let remotes: Vec<&str> = counts
            .keys()
            .filter(|n| *n != name)
            .map(String::as_str)
            .collect();
        for remote in &remotes {
            let named = rows
                .iter()
                .filter(|r| r.contains(&format!(" {remote} ")))
                .count();
            assert_eq!(named, 1, "{name} -> {remote}: {table}");
        }
        assert!(rows.iter().all(|r| r.contains("rid:")), "{table}");
    }
    assert!(table.lines().any(|l| l.starts_with("Total")), "{table}");

    // Reversed, the last server by name leads.
    let reversed = rnats.ok(&args(&["server", "report", "routes", "-R"], &sys));
    let first = reversed
        .lines()
        .nth(3)
        .and_then(|l| l.split_whitespace().next());
    assert_eq!(
        first,
        counts.keys().last().map(String::as_str),
        "{reversed}"
    );

    // A cluster filter that matches no server: an empty report, not an error.
    let none = rnats.ok(&args(
        &[
            "server",
            "report",
            "routes",
            "--cluster",
            "nowhere",
            "--timeout",
            "1s",
        ],
        &sys,
    ));
    assert!(
        none.starts_with("Cluster report: 0 routes of 0 servers"),
        "{none}"
    );
}

#[test]
fn leafnodes_are_the_hubs_leafz() {
    // The hub lets the leaf in as `app`, so its link lands in APP.
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let topology = HubAndLeaf::builder()
        .hub_nodes(1)
        .configure(move |role, node| match role {
            Role::Hub(_) => node.append_config(&config),
            _ => node,
        })
        .start()
        .expect("hub and leaf start");
    let hub = &topology.hub().nodes()[0];
    let rnats = Rnats::new();
    let sys = sys(&hub.url());
    let leafz = hub.monitor("/leafz").expect("leafz");
    let link = &leafz["leafs"][0];
    assert_eq!(link["name"], LEAF_DOMAIN, "{leafz}");

    // Only the hub answers: the leaf's system account is its own.
    let report = rnats.json(&args(&["server", "report", "leafnodes", "--json"], &sys));
    let answers = report.as_array().expect("an array");
    assert_eq!(answers.len(), 1, "{report}");
    assert_eq!(answers[0]["server"]["id"], leafz["server_id"], "{report}");
    assert_eq!(answers[0]["data"]["leafnodes"], 1, "{report}");
    let leaf = &answers[0]["data"]["leafs"][0];
    for field in ["name", "account", "ip", "port", "is_spoke"] {
        assert_eq!(leaf[field], link[field], "{field}: {report}");
    }

    let table = rnats.ok(&args(&["server", "report", "leaf"], &sys));
    assert!(
        table.starts_with("Leafnode report: 1 leaf node connections on 1 servers\n"),
        "{table}"
    );
    let hub_name = answers[0]["server"]["name"].as_str().expect("a name");
    let row: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with(hub_name))
        .unwrap_or_else(|| panic!("no row for {hub_name}: {table}"))
        .split_whitespace()
        .collect();
    let address = format!("{}:{}", link["ip"].as_str().expect("ip"), link["port"]);
    assert_eq!(row[1..4], [LEAF_DOMAIN, "APP", address.as_str()], "{table}");
    let spoke = if link["is_spoke"] == true {
        "yes"
    } else {
        "no"
    };
    assert_eq!(row.last(), Some(&spoke), "{table}");

    // The server filters by account: none in SYS.
    let none = rnats.ok(&args(
        &["server", "report", "leafnodes", "--account", "SYS"],
        &sys,
    ));
    assert!(
        none.starts_with("Leafnode report: 0 leaf node connections on 1 servers"),
        "{none}"
    );
}

#[test]
fn gateways_are_each_servers_gatewayz_under_its_name() {
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let supercluster = Supercluster::builder()
        .nodes(1)
        .configure(move |_, _, node| node.append_config(&config))
        .start()
        .expect("supercluster starts");
    let (east, west) = (
        &supercluster.cluster(0).nodes()[0],
        &supercluster.cluster(1).nodes()[0],
    );
    let rnats = Rnats::new();
    let sys = sys(&east.url());
    wait_all_counted(&rnats, &sys, 2);

    let report = rnats.json(&args(&["server", "report", "gateways", "--json"], &sys));
    let answers = report.as_array().expect("an array");
    assert_eq!(answers.len(), 2, "{report}");
    // East's cluster sorts first.
    assert_eq!(answers[0]["server"]["cluster"], "east", "{report}");
    for (answer, node, other) in [(&answers[0], east, "west"), (&answers[1], west, "east")] {
        let gatewayz = node.monitor("/gatewayz").expect("gatewayz");
        assert_eq!(answer["server"]["id"], gatewayz["server_id"], "{report}");
        assert_eq!(answer["data"]["port"], gatewayz["port"], "{report}");
        for direction in ["outbound_gateways", "inbound_gateways"] {
            let keys = |v: &Value| -> Vec<String> {
                v[direction]
                    .as_object()
                    .expect("an object")
                    .keys()
                    .cloned()
                    .collect()
            };
            assert_eq!(keys(&answer["data"]), [other], "{direction}: {report}");
            assert_eq!(keys(&answer["data"]), keys(&gatewayz), "{direction}");
        }
    }

    let table = rnats.ok(&args(&["server", "report", "gateways"], &sys));
    assert!(
        table.starts_with(
            "Super cluster report: 4 gateway connections of 2 servers in 2 clusters\n"
        ),
        "{table}"
    );
    let groups = groups(&table, "Server  ");
    let names: Vec<&str> = groups.keys().map(String::as_str).collect();
    assert_eq!(names, ["east-0", "west-0"], "{table}");
    for (name, other) in [("east-0", "west"), ("west-0", "east")] {
        let rows = &groups[name];
        assert_eq!(rows.len(), 3, "{table}");
        assert!(
            rows[0].split_whitespace().nth(1) == name.split('-').next(),
            "{table}"
        );
        for (row, kind) in rows[1..].iter().zip(["Inbound", "Outbound"]) {
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cells[..2], [kind, other], "{table}");
            assert!(cells[3].starts_with("gid:"), "{table}");
        }
    }

    // Only the connections to west: east's two, none of west's own.
    let to_west = rnats.ok(&args(
        &[
            "server",
            "report",
            "gateways",
            "--filter-name",
            "west",
            "--sort",
            "server",
            "-R",
        ],
        &sys,
    ));
    assert!(
        to_west.starts_with("Super cluster report: 2 gateway connections of 2 servers"),
        "{to_west}"
    );
    let groups: Vec<String> = groups_in_order(&to_west);
    assert_eq!(groups, ["west-0", "east-0"], "{to_west}");
}

/// The first cells of the rows that start a group, in the table's order.
fn groups_in_order(table: &str) -> Vec<String> {
    table
        .lines()
        .skip_while(|l| !l.starts_with("Server  "))
        .skip(1)
        .take_while(|l| !l.starts_with("Total"))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// One server with JetStream, the accounts and monitoring.
fn lone_server() -> NatsServer {
    NatsServer::builder()
        .jetstream(true)
        .config(ACCOUNTS)
        .monitoring()
        .spawn()
        .expect("nats-server starts")
}

#[test]
fn cpu_and_mem_draw_a_bar_of_each_servers_statsz() {
    let server = lone_server();
    let rnats = Rnats::new();
    let sys = sys(&server.url());
    let name = server.monitor("/varz").expect("varz")["server_name"]
        .as_str()
        .expect("a name")
        .to_owned();

    let json = rnats.json(&args(&["server", "report", "mem", "--json"], &sys));
    assert_eq!(json.as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(json[0]["server"]["name"], name.as_str(), "{json}");
    assert!(json[0]["statsz"]["mem"].as_u64() > Some(0), "{json}");

    // One server: its bar is full, unless its figure is zero (an idle server's CPU).
    let full = format!("  {name}: {} (", "█".repeat(30));
    let text = rnats.ok(&args(&["server", "report", "mem", "1"], &sys));
    assert_eq!(
        text.lines().collect::<Vec<_>>()[..2],
        ["Memory Usage", ""],
        "{text}"
    );
    let bar = text.lines().nth(2).expect("a bar");
    assert!(bar.starts_with(&full) && bar.ends_with("iB)"), "{text}");
    let text = rnats.ok(&args(&["server", "report", "cpu", "1"], &sys));
    assert_eq!(text.lines().count(), 3, "{text}");
    // Whether the server is idle is its own business: the bar must agree with the figure
    // it is labelled with, which natscli writes with the digits it takes (`2`, not `2.0`).
    let (drawn, label) = (text.lines().nth(2))
        .and_then(|l| l.strip_prefix(&format!("  {name}: ")))
        .and_then(|l| l.strip_suffix(')'))
        .and_then(|l| l.split_once(" ("))
        .unwrap_or_else(|| panic!("no bar for {name}: {text}"));
    let figure: f64 =
        (label.replace(',', "").parse()).unwrap_or_else(|e| panic!("{label}: {e}: {text}"));
    assert!(!label.ends_with(".0"), "{text}");
    let expected = if figure == 0.0 {
        "▏".to_owned()
    } else {
        "█".repeat(30)
    };
    assert_eq!(drawn, expected, "{text}");

    // A filter that matches no server: the caption alone.
    let none = rnats.ok(&args(
        &[
            "server",
            "report",
            "cpu",
            "--host",
            "nowhere",
            "--timeout",
            "1s",
        ],
        &sys,
    ));
    assert_eq!(none, "CPU Usage\n\n");
}

#[test]
fn accounts_sum_each_accounts_connections_as_connz_lists_them() {
    let server = lone_server();
    let url = server.url();
    let rnats = Rnats::new();
    let sys = sys(&url);
    let app = ["-s", url.as_str(), "--user", "app", "--password", "pass"];
    // One APP connection with one subscription that received three messages.
    let _sub = rnats.spawn_ready(
        &[&["sub", "orders.>", "--count", "100"][..], &app].concat(),
        "Subscribed to",
    );
    rnats.ok(&[&["pub", "orders.new", "x", "--count", "3"][..], &app].concat());
    let connz = server
        .wait_for_monitor("/connz?acc=APP", SETTLE, |c| {
            c["num_connections"] == 1 && c["connections"][0]["out_msgs"] == 3
        })
        .expect("the subscriber got the messages");
    let own = &connz["connections"][0];

    let report = rnats.json(&args(&["server", "report", "accounts", "--json"], &sys));
    let accounts = report.as_array().expect("an array");
    let app_usage = accounts
        .iter()
        .find(|a| a["account"] == "APP")
        .unwrap_or_else(|| panic!("no APP: {report}"));
    assert_eq!(app_usage["connections"], 1, "{report}");
    for field in ["out_msgs", "subscriptions"] {
        assert_eq!(app_usage[field], own[field], "{field}: {report}");
    }
    assert_eq!(
        app_usage["connection_info"][0]["cid"], own["cid"],
        "{report}"
    );
    assert_eq!(app_usage["server"][0]["id"], connz["server_id"], "{report}");
    // The report's own connection is the system account's.
    assert!(accounts.iter().any(|a| a["account"] == "SYS"), "{report}");

    let table = rnats.ok(&args(
        &["server", "report", "acct", "--sort", "conns"],
        &sys,
    ));
    assert!(
        table.starts_with("Top 2 accounts out of 2 by conns\n"),
        "{table}"
    );
    let row: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("APP "))
        .unwrap_or_else(|| panic!("no APP row: {table}"))
        .split_whitespace()
        .collect();
    // Account, Connections, In Msgs, Out Msgs, ... Subs.
    assert_eq!(row[1], "1", "{table}");
    assert_eq!(row[3], "3", "{table}");
    let subs = own["subscriptions"].to_string();
    assert_eq!(row.last(), Some(&subs.as_str()), "{table}");
    let top = rnats.ok(&args(
        &[
            "server", "report", "acct", "--top", "1", "--sort", "out-msgs",
        ],
        &sys,
    ));
    assert!(
        top.starts_with("Top 1 accounts out of 2 by out-msgs\n"),
        "{top}"
    );
    assert!(
        top.lines().nth(3).is_some_and(|l| l.starts_with("APP ")),
        "{top}"
    );
    // -R turns the order round but keeps the largest, as natscli does: APP's three
    // messages out against the one answer the report's own connection got.
    let reversed = |words: &[&str]| {
        let table = rnats.ok(&args(&[&["server", "report"][..], words].concat(), &sys));
        let rows: Vec<String> = (table.lines().skip(3))
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .collect();
        (table, rows)
    };
    let (table, rows) = reversed(&["acct", "--sort", "out-msgs", "-R"]);
    assert_eq!(rows, ["SYS", "APP"], "{table}");
    let (table, rows) = reversed(&["acct", "--top", "1", "--sort", "out-msgs", "-R"]);
    assert_eq!(rows, ["APP"], "{table}");
    // So do the connections: the subscriber's, not the report's own.
    let cid = own["cid"].to_string();
    let (table, rows) = reversed(&["conns", "--top", "1", "--sort", "out-msgs", "-R"]);
    assert_eq!(rows.first(), Some(&cid), "{table}");

    // One account: its connections, by argument or (natscli's cheat sheet) by flag.
    for one in [
        &["server", "report", "accounts", "APP"][..],
        &[
            "server",
            "report",
            "accounts",
            "--account",
            "APP",
            "--sort",
            "in-msgs",
            "--top",
            "10",
        ],
    ] {
        let table = rnats.ok(&args(one, &sys));
        assert!(
            table.starts_with("Top 1 connections out of 1 by "),
            "{one:?}: {table}"
        );
        let cid = own["cid"].to_string();
        assert!(
            table.lines().any(|l| l.starts_with(&format!("{cid} "))),
            "{table}"
        );
    }
    let nobody = rnats.json(&args(
        &["server", "report", "accounts", "NOBODY", "--json"],
        &sys,
    ));
    assert_eq!(nobody["account"], "NOBODY", "{nobody}");
    assert_eq!(nobody["connections"], 0, "{nobody}");
}

#[test]
fn health_shows_each_servers_healthz_and_the_errors_it_lists() {
    let server = lone_server();
    let url = server.url();
    let rnats = Rnats::new();
    let sys = sys(&url);
    let healthz = server.monitor("/healthz").expect("healthz");
    assert_eq!(healthz["status"], "ok", "{healthz}");
    let name = server.monitor("/varz").expect("varz")["server_name"]
        .as_str()
        .expect("a name")
        .to_owned();

    let json = rnats.json(&args(&["server", "report", "health", "--json"], &sys));
    assert_eq!(json.as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(json[0]["data"]["status"], healthz["status"], "{json}");
    assert_eq!(json[0]["data"]["status_code"], 200, "{json}");

    let table = rnats.ok(&args(&["server", "report", "health"], &sys));
    assert!(
        table.starts_with("Health report: 1 ok, 0 not ok of 1 servers in 1 clusters\n"),
        "{table}"
    );
    let row: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with(&name))
        .unwrap_or_else(|| panic!("no row: {table}"))
        .split_whitespace()
        .collect();
    assert_eq!(row[1..], ["ok", "(200)"], "{table}");
    // A JetStream domain no server is in: the report fails naming its own request, not the
    // ping that found no server to ask.
    let line = rnats.fails(&args(
        &[
            "server",
            "report",
            "health",
            "--js-domain",
            "nowhere",
            "--timeout",
            "1s",
        ],
        &sys,
    ));
    assert!(
        line.contains("no server answered on $SYS.REQ.SERVER.PING.HEALTHZ within"),
        "{line}"
    );

    // One stream in APP: it is healthy, and one that does not exist is an error the server
    // lists, a row under its own.
    let app = ["-s", url.as_str(), "--user", "app", "--password", "pass"];
    rnats.ok(&[
        &["stream", "add", "R", "--subjects", "r.>", "--defaults"][..],
        &app,
    ]
    .concat());
    let table = rnats.ok(&args(
        &[
            "server",
            "report",
            "health",
            "--account",
            "APP",
            "--stream",
            "R",
        ],
        &sys,
    ));
    assert!(
        table.starts_with("Health report: 1 ok, 0 not ok"),
        "{table}"
    );
    let table = rnats.ok(&args(
        &[
            "server",
            "report",
            "health",
            "--account",
            "APP",
            "--stream",
            "NOPE",
        ],
        &sys,
    ));
    assert!(
        table.starts_with("Health report: 0 ok, 1 not ok of 1 servers"),
        "{table}"
    );
    let lines: Vec<&str> = table.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&name))
        .unwrap_or_else(|| panic!("no row: {table}"));
    assert!(
        lines[at].contains("(404)") || lines[at].contains("(503)"),
        "{table}"
    );
    let error: Vec<&str> = lines[at + 1].split_whitespace().collect();
    assert_eq!(error[0], "STREAM", "{table}");
    assert!(error.iter().any(|w| w.contains("NOPE")), "{table}");
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("Total") && l.ends_with("1 errors")),
        "{table}"
    );
}
