//! `rnats server ping|list|report|check` against real nats-servers: a system account for ping and
//! list, a three-node cluster for the answers of several servers, and the monitoring-plugin
//! exit codes of the checks (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).

mod common;

use std::process::Output;

use common::{ACCOUNTS, Rnats};
use rnats_test_server::{Cluster, NatsServer};

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn ping_and_list_need_the_system_account() {
    let server = NatsServer::builder()
        .jetstream(true)
        .config(ACCOUNTS)
        .spawn()
        .expect("nats-server starts");
    let url = server.url();
    let rnats = Rnats::new();
    let sys = ["-s", url.as_str(), "--user", "sys", "--password", "pass"];
    // A lone server reports no active servers: name how many to wait for.
    let out = rnats.ok(&[&["server", "ping", "1"][..], &sys[..]].concat());
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("rtt="), "{out}");
    assert!(
        out.contains("---- ping statistics ----\n1 replies max: "),
        "{out}"
    );
    assert!(!out.contains("Missing"), "{out}");

    let list = rnats.json(&[&["server", "list", "1", "--json"][..], &sys[..]].concat());
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert_eq!(list[0]["server"]["jetstream"], true);
    let table = rnats.ok(&[&["server", "ls", "1"][..], &sys[..]].concat());
    assert!(
        table.starts_with("Server overview: 1 servers\n\nName"),
        "{table}"
    );

    let app = ["-s", url.as_str(), "--user", "app", "--password", "pass"];
    let line = rnats.fails(&[&["server", "ping"][..], &app[..]].concat());
    assert!(line.contains("system account"), "{line}");

    // Reports: natscli's forms, the connections of every account and JetStream usage.
    rnats.ok(&[
        &["stream", "add", "R", "--subjects", "r.>", "--defaults"][..],
        &app[..],
    ]
    .concat());
    rnats.ok(&[&["pub", "r.x", "hello", "--count", "3"][..], &app[..]].concat());
    let conns = rnats.json(
        &[
            &["server", "report", "connections", "1", "--json"][..],
            &sys[..],
        ]
        .concat(),
    );
    let conns = conns.as_array().expect("an array");
    assert!(!conns.is_empty(), "{conns:?}");
    assert!(
        conns.iter().all(|c| c["server_name"].is_string()),
        "{conns:?}"
    );
    let text = rnats.ok(&[
        &[
            "server", "report", "conns", "1", "--sort", "in-msgs", "--top", "5",
        ][..],
        &sys[..],
    ]
    .concat());
    assert!(text.starts_with("Top "), "{text}");
    assert!(
        text.contains("by in-msgs") && text.contains("CID"),
        "{text}"
    );
    let js = rnats.ok(&[&["server", "report", "jetstream", "1"][..], &sys[..]].concat());
    assert!(js.starts_with("JetStream summary: 1 servers"), "{js}");
    let total = js
        .lines()
        .find(|l| l.starts_with("Total"))
        .expect("a total row");
    let cells: Vec<&str> = total.split_whitespace().collect();
    // Total, streams 1, consumers 0, messages 3.
    assert_eq!(cells[1..4], ["1", "0", "3"], "{js}");
    let js = rnats.json(&[&["server", "report", "js", "1", "--json"][..], &sys[..]].concat());
    assert_eq!(js[0]["data"]["streams"], 1, "{js}");
    let line = rnats.fails(&[&["server", "report", "jetstream", "1"][..], &app[..]].concat());
    assert!(line.contains("system account"), "{line}");

    // One server's health, by name.
    let name = list[0]["server"]["name"]
        .as_str()
        .expect("a name")
        .to_owned();
    let check = |args: &[&str]| {
        rnats.run(
            &[
                &["server", "check", "server", "--name", &name][..],
                args,
                &sys[..],
            ]
            .concat(),
        )
    };
    let out = check(&[
        "--js-required",
        "--cpu-critical",
        "100",
        "--conn-critical",
        "1000",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("OK:JetStream required"),
        "{}",
        stdout(&out)
    );
    // It has just started: up for less than an hour is a warning.
    let out = check(&["--uptime-warn", "1h"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    // Fewer connections than the marks is worse when warn is above critical (inversion).
    let out = check(&["--conn-warn", "1000", "--conn-critical", "500"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let out = check(&["--tls-required"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Crit:TLS not required"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn ping_and_list_hear_every_node_of_a_cluster() {
    // Cluster::wait_formed connects without credentials: let those in as `app`.
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let cluster = Cluster::start_with(3, |node| node.append_config(&config)).expect("cluster");
    let url = cluster.urls()[0].clone();
    let rnats = Rnats::new();
    let sys = ["-s", url.as_str(), "--user", "sys", "--password", "pass"];
    // The routes are up once the cluster has started, but each node's interest in the
    // system account's subjects reaches the others a moment later: ping until every node
    // answers, for as long as a cluster may take to form.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let out = loop {
        let out = rnats.ok(&[&["server", "ping", "3", "--id"][..], &sys[..]].concat());
        if out.contains("3 replies") || std::time::Instant::now() > deadline {
            break out;
        }
    };
    assert!(out.contains("3 replies"), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.contains("rtt=")).count(),
        3,
        "{out}"
    );
    // A node's interest can still lag as the ping's did: list until all three answer,
    // within the same deadline.
    let list = loop {
        let list = rnats.json(&[&["server", "list", "--json"][..], &sys[..]].concat());
        if list.as_array().map(Vec::len) == Some(3) || std::time::Instant::now() > deadline {
            break list;
        }
    };
    assert_eq!(list.as_array().map(Vec::len), Some(3), "{list}");
    let table = rnats.ok(&[&["server", "list", "--sort", "name"][..], &sys[..]].concat());
    let rows: Vec<&str> = table.lines().skip(3).collect();
    assert_eq!(rows.len(), 3, "{table}");
    let mut names: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.split_whitespace().next())
        .collect();
    let sorted = {
        let mut n = names.clone();
        n.sort();
        n
    };
    assert_eq!(names, sorted, "{table}");
    names.dedup();
    assert_eq!(names.len(), 3, "{table}");

    // Every node answers the connections report.
    let conns = rnats.json(
        &[
            &[
                "server",
                "report",
                "connections",
                "--json",
                "--state",
                "all",
            ][..],
            &sys[..],
        ]
        .concat(),
    );
    let servers: std::collections::BTreeSet<&str> = conns
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|c| c["server_name"].as_str())
        .collect();
    assert!(!servers.is_empty(), "{conns}");
}

#[test]
fn ping_and_list_take_answers_beyond_a_count_that_lags() {
    let server = NatsServer::builder()
        .config(ACCOUNTS)
        .spawn()
        .expect("nats-server starts");
    let url = server.url();
    // Two more answers to every ping in the system account, each from a "server" that
    // counts one active server, as a node may just after a cluster grew: the count is
    // reached by the first of them, and the others still come.
    let sys = rnats::ConnectOptions::with_user_and_password("sys".into(), "pass".into())
        .connect_blocking(url.as_str())
        .expect("connect as sys");
    let mut pings = sys.subscribe("$SYS.REQ.SERVER.PING").expect("subscribe");
    sys.flush().expect("flush");
    let closer = sys.clone();
    let answering = std::thread::spawn(move || {
        while let Ok(Some(ping)) = pings.next_timeout(std::time::Duration::from_secs(60)) {
            let Some(reply) = ping.reply else { continue };
            for name in ["lagging-a", "lagging-b"] {
                let stats = format!(
                    r#"{{"server":{{"name":"{name}","id":"{name}"}},"statsz":{{"active_servers":1}}}}"#
                );
                sys.publish(reply.clone(), stats.into()).expect("answer");
            }
            sys.flush().expect("flush");
        }
    });
    let rnats = Rnats::new();
    let creds = ["-s", url.as_str(), "--user", "sys", "--password", "pass"];
    // The wait past the count is 300 ms after each answer: on a loaded machine the answering
    // thread may miss it now and then, so list again until all three come, for as long as
    // the ping test's cluster may take. The old wait never took more than the first answer.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let names_in = |list: &serde_json::Value| -> usize { list.as_array().map_or(0, Vec::len) };
    let list = loop {
        let list = rnats.json(&[&["server", "list", "--json"][..], &creds[..]].concat());
        if names_in(&list) == 3 || std::time::Instant::now() > deadline {
            break list;
        }
    };
    let mut names: Vec<&str> = list
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|a| a["server"]["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names.len(), 3, "{list}");
    assert!(
        names.contains(&"lagging-a") && names.contains(&"lagging-b"),
        "{list}"
    );
    let out = loop {
        let out = rnats.ok(&[&["server", "ping"][..], &creds[..]].concat());
        if out.contains("3 replies") || std::time::Instant::now() > deadline {
            break out;
        }
    };
    assert!(out.contains("3 replies"), "{out}");
    // The subscription ends with the client.
    closer.close();
    assert!(answering.join().is_ok());
}

#[test]
fn check_connection_exit_codes() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let out = rnats.run(&["server", "check", "connection", "-s", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let line = stdout(&out);
    assert!(line.starts_with("OK Connection OK:connected to "), "{line}");
    assert!(line.contains(" | connect_time="), "{line}");

    let out = rnats.run(&["server", "check", "conn", "--rtt-warn", "0s", "-s", &url]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("WARNING Connection Warn:rtt in "),
        "{}",
        stdout(&out)
    );

    let out = rnats.run(&[
        "server",
        "check",
        "connection",
        "--connect-critical",
        "0s",
        "--format",
        "json",
        "-s",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(result["status"], "CRITICAL");
    assert_eq!(result["exit_code"], 2);

    let out = rnats.run(&["server", "check", "connection", "-s", "nats://127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).starts_with("CRITICAL Connection Crit:cannot connect"),
        "{}",
        stdout(&out)
    );
    assert!(out.stderr.is_empty());

    let out = rnats.run(&["server", "check", "connection", "--context", "missing"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(&out).starts_with("UNKNOWN Connection Unknown:"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn check_stream_consumer_kv_and_jetstream() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.run(&[&["server", "check"][..], args, &s[..]].concat());
    rnats.ok(&[
        &["stream", "add", "ORDERS", "--subjects", "orders.>"][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[
        &["pub", "orders.{{Count}}", "x", "--count", "3"][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[&["consumer", "add", "ORDERS", "billing"][..], &s[..]].concat());

    let out = run(&["stream", "--stream", "ORDERS", "--msgs-critical", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("OK Stream ORDERS OK:3 messages"),
        "{}",
        stdout(&out)
    );
    let out = run(&["stream", "--stream", "ORDERS", "--msgs-warn", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let out = run(&[
        "stream",
        "--stream",
        "ORDERS",
        "--msgs-critical",
        "5",
        "--peer-expect",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Crit:1 peers, expected 3"),
        "{}",
        stdout(&out)
    );
    let out = run(&["stream", "--stream", "MISSING"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));

    let out = run(&[
        "consumer",
        "--stream",
        "ORDERS",
        "--consumer",
        "billing",
        "--unprocessed-critical",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Crit:3 unprocessed messages"),
        "{}",
        stdout(&out)
    );
    let out = run(&[
        "consumer",
        "--stream",
        "ORDERS",
        "--consumer",
        "billing",
        "--outstanding-ack-critical",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(&[
        "consumer",
        "--stream",
        "ORDERS",
        "--consumer",
        "billing",
        "--last-delivery-critical",
        "1h",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "nothing delivered yet: {}",
        stdout(&out)
    );

    rnats.ok(&[&["kv", "add", "config"][..], &s[..]].concat());
    rnats.ok(&[&["kv", "put", "config", "a", "1"][..], &s[..]].concat());
    rnats.ok(&[&["kv", "put", "config", "b", "2"][..], &s[..]].concat());
    let out = run(&["kv", "--bucket", "config", "--key", "a"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = run(&["kv", "--bucket", "config", "--key", "zzz"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let out = run(&[
        "kv",
        "--bucket",
        "config",
        "--values-warn",
        "2",
        "--values-critical",
        "5",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let out = run(&[
        "kv",
        "--bucket",
        "config",
        "--values-warn",
        "5",
        "--values-critical",
        "2",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "fewer is worse: {}",
        stdout(&out)
    );

    let out = run(&["jetstream"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).starts_with("OK JetStream"), "{}", stdout(&out));
    let out = run(&["js", "--format", "text"]);
    assert!(
        stdout(&out).starts_with("JetStream: OK\n"),
        "{}",
        stdout(&out)
    );

    // The newest message on a subject: its age and content.
    let out = run(&[
        "message",
        "--stream",
        "ORDERS",
        "--subject",
        "orders.3",
        "--age-critical",
        "1h",
        "--content",
        "^x$",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("OK:content matches"),
        "{}",
        stdout(&out)
    );
    let out = run(&["msg", "--stream", "ORDERS", "--content", "^y"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let out = run(&["message", "--stream", "ORDERS", "--subject", "orders.none"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stdout(&out).contains("Crit:no message"), "{}", stdout(&out));

    // A request-reply service: answered in time with the expected body, or not at all.
    let mut service = rnats.spawn_ready(
        &["reply", "svc.time", "12:00", "--count", "1", "-s", &url],
        "Listening on",
    );
    let out = run(&[
        "request",
        "--subject",
        "svc.time",
        "--match-payload",
        "^\\d+:\\d+$",
        "--response-critical",
        "5s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("OK Request svc.time"),
        "{}",
        stdout(&out)
    );
    common::assert_success(&service.finish(), &["reply"]);
    let out = run(&["req", "--subject", "svc.nobody"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stdout(&out).contains("Crit:no reply"), "{}", stdout(&out));
}

#[test]
fn check_meta_sees_the_jetstream_meta_cluster() {
    let config = format!("{ACCOUNTS}\nno_auth_user: app\n");
    let cluster = Cluster::start_with(3, |node| node.jetstream(true).append_config(&config))
        .expect("cluster");
    let wait = std::time::Duration::from_secs(60);
    for node in cluster.nodes() {
        node.wait_for_log("metadata leader", wait)
            .expect("a metadata leader is elected");
    }
    let url = cluster.urls().join(",");
    let rnats = Rnats::new();
    let sys = ["-s", url.as_str(), "--user", "sys", "--password", "pass"];
    let meta = |args: &[&str], who: &[&str]| {
        rnats.run(&[&["server", "check", "meta"][..], args, who].concat())
    };
    let healthy = [
        "--expect",
        "3",
        "--lag-critical",
        "1000",
        "--seen-critical",
        "1m",
    ];
    // Right after the election a follower may not have acknowledged the leader's latest
    // entry yet ("1 not current"): look again after each server's STATSZ broadcast, a
    // change on the servers, until the followers have caught up.
    let mut out = meta(&healthy, &sys);
    for _ in 0..20 {
        if out.status.code() == Some(0) || !stdout(&out).contains("not current") {
            break;
        }
        rnats.ok(&[
            &["sub", "$SYS.SERVER.*.STATSZ", "--count", "1"][..],
            &sys[..],
        ]
        .concat());
        out = meta(&healthy, &sys);
    }
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let line = stdout(&out);
    assert!(
        line.starts_with("OK JetStream Meta Cluster OK:3 peers led by rnats-node-"),
        "{line}"
    );
    assert!(line.contains("| peers=3;3;3 peer_offline=0;;"), "{line}");

    // natscli's alias, and a cluster smaller than expected.
    let out = meta(
        &[
            "--expect",
            "5",
            "--lag-critical",
            "1000",
            "--seen-critical",
            "1m",
        ],
        &sys,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("Crit:3 peers of expected 5"),
        "{}",
        stdout(&out)
    );
    let out = rnats.run(
        &[
            &["server", "check", "raft", "--format", "json"][..],
            &healthy,
            &sys,
        ]
        .concat(),
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(result["exit_code"], 0, "{result}");

    // Not the system account: the leader's view cannot be asked for.
    let app = ["-s", url.as_str(), "--user", "app", "--password", "pass"];
    let out = meta(&healthy, &app);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("JSZ API request failed"),
        "{}",
        stdout(&out)
    );
}
