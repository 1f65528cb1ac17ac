//! The figures of `rnats server list|ping|report`, `account info`, `stream info` and
//! `stream report` against what the servers themselves say on their monitoring endpoints
//! (`/varz`, `/connz`, `/jsz`), for one server and for a three-node cluster, each with a
//! system account: a field read under the wrong name shows up here as a zero next to the
//! server's real number.

mod common;

use std::time::{Duration, Instant};

use common::{ACCOUNTS, Rnats, args, login};
use rnats_test_server::{Cluster, NatsServer, ServerBuilder};
use serde_json::Value;

/// How long the monitoring endpoints may take to show what a test awaits.
const SETTLE: Duration = Duration::from_secs(20);

fn sys(url: &str) -> Vec<String> {
    login(url, "sys")
}

fn app(url: &str) -> Vec<String> {
    login(url, "app")
}

fn number(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("a number expected: {value}"))
}

/// The cells of the table row whose first cell is `name`, keyed by the header's column
/// titles. Columns are cut where the header's titles start (the cells are left-aligned
/// under them), so an empty cell stays in its place.
fn row_of(table: &str, name: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = table.lines().collect();
    let header = lines
        .iter()
        .position(|l| {
            ["Name  ", "CID  ", "Stream  "]
                .iter()
                .any(|t| l.starts_with(t))
        })
        .unwrap_or_else(|| panic!("no header: {table}"));
    let title: Vec<char> = lines[header].chars().collect();
    // A title starts at the line's start or after two spaces.
    let starts: Vec<usize> = (0..title.len())
        .filter(|&i| {
            title[i] != ' ' && (i == 0 || (i >= 2 && title[i - 1] == ' ' && title[i - 2] == ' '))
        })
        .collect();
    let row: Vec<char> = lines[header..]
        .iter()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name}: {table}"))
        .chars()
        .collect();
    let cut = |line: &[char], i: usize| -> String {
        let from = starts[i].min(line.len());
        let to = starts.get(i + 1).map_or(line.len(), |&e| e.min(line.len()));
        line[from..to].iter().collect::<String>().trim().to_owned()
    };
    (0..starts.len())
        .map(|i| (cut(&title, i), cut(&row, i)))
        .collect()
}

fn cell<'a>(row: &'a [(String, String)], column: &str) -> &'a str {
    row.iter()
        .find(|(c, _)| c == column)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no column {column}: {row:?}"))
}

/// One server with JetStream, the accounts and monitoring.
fn server() -> NatsServer {
    NatsServer::builder()
        .jetstream(true)
        .config(ACCOUNTS)
        .monitoring()
        .spawn()
        .expect("nats-server starts")
}

/// Checks one answer of `server list --json` against the answering server's `/varz` read
/// just before (`own`: the command itself was connected to this server).
fn check_statsz(answer: &Value, varz: &Value, own: bool) {
    let statsz = &answer["statsz"];
    assert_eq!(answer["server"]["name"], varz["server_name"], "{answer}");
    assert_eq!(answer["server"]["ver"], varz["version"], "{answer}");
    assert_eq!(statsz["start"], varz["start"], "{answer}");
    assert_eq!(statsz["cores"], varz["cores"], "{answer}");
    let connections = number(&varz["connections"]) + u64::from(own);
    assert_eq!(number(&statsz["connections"]), connections, "{answer}");
    // The command's own subscriptions (its inbox) come on top of the server's.
    let subs = number(&statsz["subscriptions"]);
    let before = number(&varz["subscriptions"]);
    assert!(subs >= before && subs <= before + 4, "{subs} vs {before}");
    let mem = number(&statsz["mem"]);
    let varz_mem = number(&varz["mem"]);
    assert!(
        mem > 0 && mem / 2 <= varz_mem && varz_mem / 2 <= mem,
        "{mem} vs {varz_mem}"
    );
    let routes = statsz["routes"].as_array().map_or(0, Vec::len) as u64;
    assert_eq!(routes, number(&varz["routes"]), "{answer}");
}

#[test]
fn list_and_ping_show_a_lone_servers_own_figures_without_waiting_out_the_timeout() {
    let server = server();
    let url = server.url();
    let rnats = Rnats::new();
    let sys = sys(&url);

    let varz = server.monitor("/varz").expect("varz");
    let list: Value = serde_json::from_str(
        &rnats.ok_without_waiting_out(&args(&["server", "list", "--json"], &sys)),
    )
    .expect("JSON");
    let answers = list.as_array().expect("an array");
    assert_eq!(answers.len(), 1, "{list}");
    assert_eq!(answers[0]["statsz"]["active_servers"], 1, "{list}");
    check_statsz(&answers[0], &varz, true);

    // The table shows the same figures (the command's own connection included).
    let table = rnats.ok_without_waiting_out(&args(&["server", "list"], &sys));
    let name = varz["server_name"].as_str().expect("a name");
    let row = row_of(&table, name);
    assert_eq!(
        cell(&row, "Conns"),
        answers[0]["statsz"]["connections"].to_string()
    );
    assert_eq!(
        cell(&row, "Subs"),
        answers[0]["statsz"]["subscriptions"].to_string()
    );
    assert_eq!(cell(&row, "Cores"), varz["cores"].to_string());
    assert_eq!(
        cell(&row, "Version"),
        varz["version"].as_str().unwrap_or("")
    );
    assert_eq!(cell(&row, "JS"), "yes");
    assert_ne!(cell(&row, "Mem"), "0 B", "{table}");
    assert!(!table.contains("Missing"), "{table}");

    let ping = rnats.ok_without_waiting_out(&args(&["server", "ping"], &sys));
    assert!(ping.starts_with(name), "{ping}");
    assert!(ping.contains("\n1 replies max: "), "{ping}");
    assert!(!ping.contains("Missing"), "{ping}");
}

#[test]
fn reports_show_a_lone_servers_connections_and_jetstream_as_its_monitoring_does() {
    let server = server();
    let url = server.url();
    let rnats = Rnats::new();
    let (sys, app) = (sys(&url), app(&url));
    rnats.ok(&args(
        &["stream", "add", "R", "--subjects", "r.>", "--defaults"],
        &app,
    ));
    rnats.ok(&args(&["pub", "r.x", "hello", "--count", "5", "-J"], &app));
    rnats.ok(&args(&["consumer", "add", "R", "C", "--defaults"], &app));
    // A second client that stays connected, with a subscription.
    let app_args = args(&["sub", "held.>"], &app);
    let _held = rnats.spawn_ready(&app_args, "Subscribed to");

    let jsz = server.monitor("/jsz").expect("jsz");
    let report = rnats.json(&args(&["server", "report", "jetstream", "--json"], &sys));
    let data = &report[0]["data"];
    for field in [
        "streams",
        "consumers",
        "messages",
        "bytes",
        "memory",
        "storage",
    ] {
        assert_eq!(data[field], jsz[field], "{field}: {report} vs {jsz}");
    }
    assert_eq!(number(&jsz["streams"]), 1);
    assert_eq!(number(&jsz["consumers"]), 1);
    assert_eq!(number(&jsz["messages"]), 5);
    let table = rnats.ok(&args(&["server", "report", "jetstream"], &sys));
    let total: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("Total"))
        .expect("a total row")
        .split_whitespace()
        .collect();
    assert_eq!(total[1..4], ["1", "1", "5"], "{table}");

    let connz = server.monitor("/connz?subs=1&acc=APP").expect("connz");
    let report = rnats.json(&args(
        &[
            "server",
            "report",
            "connections",
            "--account",
            "APP",
            "--json",
        ],
        &sys,
    ));
    let rows = report.as_array().expect("an array");
    let expected = connz["connections"].as_array().expect("connections");
    assert_eq!(rows.len(), expected.len(), "{report} vs {connz}");
    for want in expected {
        let got = rows
            .iter()
            .find(|r| r["cid"] == want["cid"])
            .unwrap_or_else(|| panic!("cid {} missing: {report}", want["cid"]));
        assert_eq!(got["subscriptions"], want["subscriptions"], "{got}");
        assert_eq!(got["account"], "APP", "{got}");
    }
    let held = expected
        .iter()
        .find(|c| c["subscriptions_list"].to_string().contains("held.>"))
        .expect("the held subscriber");
    let table = rnats.ok(&args(
        &["server", "report", "connections", "--account", "APP"],
        &sys,
    ));
    let row = row_of(&table, &held["cid"].to_string());
    assert_eq!(cell(&row, "Subs"), held["subscriptions"].to_string());
    assert_eq!(cell(&row, "Account"), "APP");
}

#[test]
fn a_clusters_servers_all_answer_with_their_own_figures() {
    // Cluster::wait_formed connects without credentials: let those in as `app`.
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let cluster = Cluster::start_with(3, |node: ServerBuilder| {
        node.jetstream(true).append_config(&config).monitoring()
    })
    .expect("cluster starts");
    let nodes = cluster.nodes();
    let url = nodes[0].url();
    let rnats = Rnats::new();
    let (sys, app) = (sys(&url), app(&url));
    // Every node knows the other two over the system account before the figures are read.
    let ready = |node: &NatsServer| {
        node.wait_for_monitor("/jsz", SETTLE, |jsz| {
            jsz["meta_cluster"]["leader"].is_string()
        })
        .expect("a meta leader");
    };
    nodes.iter().for_each(ready);
    // A peer can count as current in the meta group a moment before the leader will place a
    // replica on it ("no suitable peers for placement, peer offline"): ask again until then.
    let add = args(
        &[
            "stream",
            "add",
            "R",
            "--subjects",
            "r.>",
            "--replicas",
            "3",
            "--defaults",
        ],
        &app,
    );
    common::add_once_placed(&rnats, &add, SETTLE);
    rnats.ok(&args(&["pub", "r.x", "hello", "--count", "4", "-J"], &app));
    for node in nodes {
        node.wait_for_monitor("/jsz", SETTLE, |jsz| jsz["messages"] == 4)
            .expect("every replica holds the messages");
    }

    // The commands above have exited, but a server may count a connection until it sees
    // the socket close: read each node's figures once it has none left.
    let varz: Vec<Value> = nodes
        .iter()
        .map(|n| {
            n.wait_for_monitor("/varz", SETTLE, |varz| varz["connections"] == 0)
                .expect("the earlier commands' connections gone")
        })
        .collect();
    let list: Value = serde_json::from_str(
        &rnats.ok_without_waiting_out(&args(&["server", "list", "--json"], &sys)),
    )
    .expect("JSON");
    let answers = list.as_array().expect("an array");
    assert_eq!(answers.len(), 3, "{list}");
    for (i, varz) in varz.iter().enumerate() {
        let answer = answers
            .iter()
            .find(|a| a["server"]["name"] == varz["server_name"])
            .unwrap_or_else(|| panic!("node {i} did not answer: {list}"));
        assert_eq!(answer["statsz"]["active_servers"], 3, "{answer}");
        assert_eq!(answer["server"]["cluster"], varz["cluster"]["name"]);
        check_statsz(answer, varz, i == 0);
    }
    let table = rnats.ok_without_waiting_out(&args(&["server", "list"], &sys));
    assert!(table.starts_with("Server overview: 3 servers"), "{table}");
    for varz in &varz {
        let row = row_of(&table, varz["server_name"].as_str().expect("a name"));
        assert_eq!(cell(&row, "Routes"), varz["routes"].to_string(), "{table}");
        assert_eq!(cell(&row, "Cores"), varz["cores"].to_string(), "{table}");
    }
    let ping = rnats.ok_without_waiting_out(&args(&["server", "ping"], &sys));
    assert!(ping.contains("\n3 replies max: "), "{ping}");
    assert!(!ping.contains("Missing"), "{ping}");

    let report = rnats.json(&args(&["server", "report", "jetstream", "--json"], &sys));
    assert_eq!(report.as_array().map(Vec::len), Some(3), "{report}");
    for node in nodes {
        let jsz = node.monitor("/jsz").expect("jsz");
        let answer = report
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["server"]["id"] == jsz["server_id"])
            .unwrap_or_else(|| panic!("{} missing: {report}", jsz["server_id"]));
        for field in ["streams", "consumers", "messages", "bytes"] {
            assert_eq!(answer["data"][field], jsz[field], "{field}: {answer}");
        }
        assert_eq!(
            answer["data"]["meta_cluster"]["leader"],
            jsz["meta_cluster"]["leader"]
        );
    }
    let table = rnats.ok(&args(&["server", "report", "jetstream"], &sys));
    let total: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("Total"))
        .expect("a total row")
        .split_whitespace()
        .collect();
    // Three replicas of one stream with four messages each.
    assert_eq!(total[1..4], ["3", "0", "12"], "{table}");
}

/// The value after `label:` on the first line of `text` that holds it.
#[test]
fn a_server_that_does_not_answer_ends_the_list_soon_after_the_others() {
    let cluster = Cluster::start_with(3, |node: ServerBuilder| {
        node.append_config(&format!("{ACCOUNTS}\nno_auth_user: app\n"))
            .monitoring()
    })
    .expect("cluster starts");
    let nodes = cluster.nodes();
    let rnats = Rnats::new();
    let sys = sys(&nodes[0].url());
    // Every node counts the other two in the system account before one of them goes quiet.
    let list = args(&["server", "list", "--json"], &sys);
    let deadline = Instant::now() + SETTLE;
    loop {
        let answers: Value = serde_json::from_str(&rnats.ok(&list)).expect("JSON");
        let answers = answers.as_array().expect("an array");
        let counted = |a: &Value| a["statsz"]["active_servers"] == 3;
        if answers.len() == 3 && answers.iter().all(counted) {
            break;
        }
        assert!(Instant::now() < deadline, "never all counted: {answers:?}");
    }

    // Frozen, the third node is still counted by the others, and never answers.
    let frozen = nodes[2].monitor("/varz").expect("varz")["server_name"].clone();
    nodes[2].freeze().expect("freeze");
    let table = rnats.ok_without_waiting_out(&args(&["server", "list"], &sys));
    assert!(table.contains("Server overview: 2 servers"), "{table}");
    assert!(table.contains("Missing 1 server(s)"), "{table}");
    let json = rnats.ok_without_waiting_out(&list);
    let answers: Value = serde_json::from_str(&json).expect("JSON");
    let names: Vec<&Value> = answers
        .as_array()
        .expect("an array")
        .iter()
        .map(|a| &a["server"]["name"])
        .collect();
    assert_eq!(names.len(), 2, "{json}");
    assert!(!names.contains(&&frozen), "{json}");
}

fn field<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(&format!("{label}:")))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {label}: {text}"))
}

#[test]
fn account_and_stream_figures_are_the_servers_jetstream_usage() {
    let server = server();
    let url = server.url();
    let rnats = Rnats::new();
    let app = app(&url);
    rnats.ok(&args(
        &["stream", "add", "R", "--subjects", "r.>", "--defaults"],
        &app,
    ));
    rnats.ok(&args(
        &[
            "stream",
            "add",
            "M",
            "--subjects",
            "m.>",
            "--storage",
            "memory",
            "--defaults",
        ],
        &app,
    ));
    rnats.ok(&args(&["pub", "r.x", "hello", "--count", "7", "-J"], &app));
    rnats.ok(&args(&["pub", "m.x", "hi", "--count", "3", "-J"], &app));
    rnats.ok(&args(&["consumer", "add", "R", "C1", "--defaults"], &app));
    rnats.ok(&args(&["consumer", "add", "R", "C2", "--defaults"], &app));

    let jsz = server
        .monitor("/jsz?acc=APP&accounts=true&streams=true&consumers=true")
        .expect("jsz");
    let account = &jsz["account_details"][0];
    assert_eq!(account["name"], "APP", "{jsz}");
    let streams = account["stream_detail"].as_array().expect("streams");
    assert_eq!(streams.len(), 2, "{jsz}");

    // account info: the JSON is the server's; the text shows the same figures.
    let info = rnats.json(&args(&["account", "info", "--json"], &app));
    let info = &info["jetstream"];
    assert_eq!(info["memory"], account["memory"], "{info} vs {account}");
    assert_eq!(info["storage"], account["storage"], "{info} vs {account}");
    assert_eq!(info["streams"], 2, "{info}");
    assert_eq!(info["consumers"], 2, "{info}");
    assert!(
        number(&info["memory"]) > 0 && number(&info["storage"]) > 0,
        "{info}"
    );
    let text = rnats.ok(&args(&["account", "info"], &app));
    assert_eq!(field(&text, "Streams"), "2", "{text}");
    assert_eq!(field(&text, "Consumers"), "2", "{text}");

    // stream report --raw: per stream, the server's consumers, messages and bytes.
    let report = rnats.ok(&args(&["stream", "report", "--raw"], &app));
    for stream in streams {
        let name = stream["name"].as_str().expect("a name");
        let row = row_of(&report, name);
        let state = &stream["state"];
        assert_eq!(cell(&row, "Consumers"), state["consumer_count"].to_string());
        assert_eq!(cell(&row, "Messages"), state["messages"].to_string());
        assert_eq!(cell(&row, "Bytes"), state["bytes"].to_string());
        let info = rnats.json(&args(&["stream", "info", name, "--json"], &app));
        assert_eq!(info["state"]["messages"], state["messages"], "{info}");
        assert_eq!(info["state"]["bytes"], state["bytes"], "{info}");
        assert_eq!(info["state"]["consumer_count"], state["consumer_count"]);
    }
}
