//! `rnats server request <kind>` against real nats-servers with a system account: one JSON
//! answer per server for each kind of monitoring data, the server filters, and the error a
//! user outside the system account gets.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{ACCOUNTS, Rnats};
use rnats_test_server::{Cluster, NatsServer};
use serde_json::Value;

/// The indented JSON values `server request` printed, one per server.
fn answers(out: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(out)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn names(answers: &[Value]) -> Vec<&str> {
    answers
        .iter()
        .map(|a| a["server"]["name"].as_str().expect("a server name"))
        .collect()
}

#[test]
fn every_kind_answers_with_each_servers_json() {
    let server = NatsServer::builder()
        .jetstream(true)
        .config(ACCOUNTS)
        .spawn()
        .expect("nats-server starts");
    let url = server.url();
    let rnats = Rnats::new();
    let sys = ["-s", url.as_str(), "--user", "sys", "--password", "pass"];
    let ask =
        |args: &[&str]| answers(&rnats.ok(&[&["server", "request"][..], args, &sys].concat()));

    // Without a count (0 is none, as in natscli), one answer from each server a ping
    // finds: here one.
    let varz = ask(&["variables"]);
    assert_eq!(varz.len(), 1, "{varz:?}");
    assert_eq!(ask(&["variables", "0"]).len(), 1);
    let server_id = varz[0]["data"]["server_id"].as_str().expect("server_id");
    assert_eq!(varz[0]["data"]["version"], "2.15.1", "{varz:?}");
    assert_eq!(varz[0]["server"]["id"], server_id, "{varz:?}");

    // Each kind, by natscli's name or alias, with a field only its answer has.
    for (kind, field) in [
        ("varz", "version"),
        ("connections", "num_connections"),
        ("routes", "num_routes"),
        ("gateways", "outbound_gateways"),
        ("leafnodes", "leafnodes"),
        ("subscriptions", "num_subscriptions"),
        ("accounts", "system_account"),
        ("jetstream", "api"),
        ("healthz", "status"),
        ("ipqueue", "SendQ"),
    ] {
        let answers = ask(&[kind, "1"]);
        assert_eq!(answers.len(), 1, "{kind}: {answers:?}");
        assert!(
            answers[0]["data"].get(field).is_some(),
            "{kind}: no {field}: {answers:?}"
        );
        assert_eq!(answers[0]["server"]["id"], server_id, "{kind}");
    }
    let raft = ask(&["raft", "1"]);
    assert!(raft[0]["data"].is_object(), "{raft:?}");
    let health = ask(&["jetstream-health", "1", "--server-only"]);
    assert_eq!(health[0]["data"]["status"], "ok", "{health:?}");

    // Kind options reach the server: the system user's own connection, with its
    // subscriptions, and only JetStream's account details when asked for.
    let connz = ask(&["conn", "1", "--filter-account", "SYS", "--subscriptions"]);
    let connections = connz[0]["data"]["connections"].as_array().expect("a list");
    assert!(!connections.is_empty(), "{connz:?}");
    assert!(
        connections
            .iter()
            .all(|c| c["account"] == "SYS" && c["subscriptions_list_detail"].is_array()),
        "{connz:?}"
    );
    let jsz = ask(&["js", "1", "--accounts"]);
    assert!(jsz[0]["data"]["account_details"].is_array(), "{jsz:?}");

    // One server by ID, on its own subject.
    let by_id = ask(&["variables", "--server-id", server_id]);
    assert_eq!(names(&by_id).len(), 1, "{by_id:?}");
    assert_eq!(by_id[0]["data"]["server_id"], server_id);

    // A filter that matches no server: said, not mistaken for a missing system account.
    let line = rnats.fails(
        &[
            &["server", "request", "varz", "--name", "nowhere"][..],
            &sys,
        ]
        .concat(),
    );
    assert!(line.contains("no server matched the filters"), "{line}");
    // A server's error answer is printed and fails the command.
    let out = rnats.run(
        &[
            &["server", "request", "kick", "999999", server_id][..],
            &sys,
        ]
        .concat(),
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no such client"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_user_outside_the_system_account_is_told_so() {
    let server = NatsServer::builder()
        .config(ACCOUNTS)
        .spawn()
        .expect("nats-server starts");
    let url = server.url();
    let rnats = Rnats::new();
    let app = ["-s", url.as_str(), "--user", "app", "--password", "pass"];
    for args in [
        &["variables"][..],
        &["variables", "1"],
        &["jsz", "--name", "x"],
    ] {
        let line = rnats.fails(&[&["server", "request"][..], args, &app].concat());
        assert!(
            line.contains("need a user of the system account"),
            "{args:?}: {line}"
        );
    }
}

#[test]
fn every_node_of_a_cluster_answers_and_name_picks_one() {
    // Cluster::wait_formed connects without credentials: let those in as `app`.
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let cluster = Cluster::start_with(2, |node| node.append_config(&config)).expect("cluster");
    let url = cluster.urls()[0].clone();
    let rnats = Rnats::new();
    let sys = ["-s", url.as_str(), "--user", "sys", "--password", "pass"];
    // Each node's interest in the system subjects reaches the other a moment after the
    // routes are up: ask until both answer, for as long as a cluster may take to form.
    let deadline = Instant::now() + Duration::from_secs(30);
    let varz = loop {
        let out = rnats.ok(&[&["server", "request", "variables", "2"][..], &sys].concat());
        let varz = answers(&out);
        if varz.len() == 2 || Instant::now() > deadline {
            break varz;
        }
    };
    let mut both = names(&varz);
    assert_eq!(both.len(), 2, "{varz:?}");
    assert!(both[0] < both[1], "sorted by name, one each: {both:?}");

    let routes = answers(&rnats.ok(&[&["server", "request", "routes", "2"][..], &sys].concat()));
    assert_eq!(routes.len(), 2, "{routes:?}");
    assert!(
        routes
            .iter()
            .all(|r| r["data"]["num_routes"].as_u64() >= Some(1)),
        "{routes:?}"
    );

    // --name: only that server answers, and one answer is all there is to wait for.
    let other = both.pop().expect("two names");
    let one =
        answers(&rnats.ok(&[&["server", "request", "varz", "--name", other][..], &sys].concat()));
    assert_eq!(names(&one), [other], "{one:?}");
}

#[test]
fn without_a_count_only_the_servers_that_answer_a_ping_are_waited_for() {
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let cluster = Cluster::start_with(3, |node| node.append_config(&config).monitoring())
        .expect("cluster starts");
    let nodes = cluster.nodes();
    let url = nodes[0].url();
    let rnats = Rnats::new();
    let sys = ["-s", url.as_str(), "--user", "sys", "--password", "pass"];
    // Every node counts the other two in the system account before one of them goes quiet.
    let list = [&["server", "list", "--json"][..], &sys].concat();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answers: Value = serde_json::from_str(&rnats.ok(&list)).expect("JSON");
        let answers = answers.as_array().expect("an array");
        let counted = |a: &Value| a["statsz"]["active_servers"] == 3;
        if answers.len() == 3 && answers.iter().all(counted) {
            break;
        }
        assert!(Instant::now() < deadline, "never all counted: {answers:?}");
    }

    // Frozen, the third node is still counted by the others, and never answers: a request
    // ends once the servers that answered the ping have answered it, long before its
    // timeout, with or without a filter. A live node can miss the ping's wait on a busy
    // machine (it is then waited for no more than the frozen one): ask until both answer.
    let name = |i: usize| -> String {
        let varz = nodes[i].monitor("/varz").expect("varz");
        varz["server_name"].as_str().expect("a name").to_owned()
    };
    let live = BTreeSet::from([name(0), name(1)]);
    let frozen = name(2);
    nodes[2].freeze().expect("freeze");
    let heard = |got: Vec<Value>, args: &[&str]| -> BTreeSet<String> {
        let heard: BTreeSet<String> = names(&got).into_iter().map(str::to_owned).collect();
        assert_eq!(heard.len(), got.len(), "one answer each: {args:?}: {got:?}");
        assert!(heard.is_subset(&live), "{args:?}: {got:?}, not {frozen}");
        heard
    };
    let cluster_name = cluster.name();
    for args in [&["variables"][..], &["routes", "--cluster", cluster_name]] {
        let command = [&["server", "request"][..], args, &sys].concat();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (out, stderr) = rnats.ok_without_waiting_out_with_stderr(&command);
            let heard = heard(answers(&out), args);
            // Unfiltered, a live node that is not heard is said missing (on stderr, the
            // answers being JSON): the other counts it.
            if args.len() == 1 && heard.len() < 2 {
                assert!(stderr.contains("Missing "), "{args:?}: {stderr}");
            }
            if heard == live {
                break;
            }
            assert!(Instant::now() < deadline, "{args:?}: only {heard:?}");
        }
    }
    // The reports wait the same way: the routes report has one answer per server.
    let report = [&["server", "report", "routes", "--json"][..], &sys].concat();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = rnats.ok_without_waiting_out(&report);
        let routez: Vec<Value> = serde_json::from_str(&out).expect("a JSON array");
        let heard = heard(routez, &report);
        if heard == live {
            break;
        }
        assert!(Instant::now() < deadline, "only {heard:?}");
    }
    // Told to wait for three, the report waits out its timeout for the frozen node and
    // says, under its table, how many servers it lacks.
    let table = rnats.ok(&[
        &["server", "report", "routes", "3", "--timeout", "3s"][..],
        &sys,
    ]
    .concat());
    let servers: usize = table
        .split(" servers in ")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of servers: {table}"));
    assert!(
        table.ends_with(&format!("\nMissing {} server(s)\n", 3 - servers)),
        "{table}"
    );
}
