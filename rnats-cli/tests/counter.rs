//! `rnats counter` (ADR-49) against a real nats-server: exact values past 64 bits.

mod common;

use common::Rnats;
use rnats_test_server::NatsServer;

#[test]
fn counters_add_up_exactly_and_list() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let fails = |args: &[&str]| rnats.fails(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "HITS",
        "--subjects",
        "hits.>",
        "--allow-counter",
        "--allow-direct",
    ]);
    assert!(run(&["stream", "info", "HITS"]).contains("Counter stream"));

    assert_eq!(run(&["counter", "incr", "hits.home"]), "1\n");
    assert_eq!(run(&["counter", "increment", "hits.home", "5"]), "6\n");
    assert_eq!(run(&["counter", "decr", "hits.home", "2"]), "4\n");
    assert_eq!(run(&["counter", "incr", "hits.home", "-10"]), "-6\n");
    assert_eq!(run(&["counter", "get", "hits.home"]), "-6\n");

    // Past i64 and u64, exact.
    let max = "9223372036854775807";
    assert_eq!(run(&["ctr", "add", "hits.big", max]), format!("{max}\n"));
    assert_eq!(
        run(&["counter", "add", "hits.big", max, "--stream", "HITS"]),
        "18446744073709551614\n"
    );
    assert_eq!(
        run(&["counter", "add", "hits.big", "2"]),
        "18446744073709551616\n"
    );
    let view = rnats.json(&[&["counter", "view", "hits.big", "--json"][..], &s[..]].concat());
    assert_eq!(view["value"], "18446744073709551616");
    assert_eq!(view["increment"], "2");
    let view = run(&["counter", "view", "hits.big"]);
    assert!(
        view.contains("Value") && view.contains("18446744073709551616"),
        "{view}"
    );

    let table = run(&["counter", "ls", "--stream", "HITS"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["Subject", "Value"], "{table}");
    assert!(rows.contains(&vec!["hits.home", "-6"]), "{table}");
    assert!(
        rows.contains(&vec!["hits.big", "18446744073709551616"]),
        "{table}"
    );
    let names = run(&["counter", "ls", "hits.big", "--names"]);
    assert_eq!(names, "hits.big\n");
    let list = rnats.json(&[&["counter", "list", "hits.>", "--json"][..], &s[..]].concat());
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");

    // A counter publish through `pub -J` shows the new value in its ack.
    let ack = run(&["pub", "hits.home", "", "-J", "-H", "Nats-Incr:+7"]);
    assert!(ack.ends_with(" Counter Value: 1\n"), "{ack}");

    let err = fails(&["counter", "get", "hits.never"]);
    assert!(err.contains("counter not found"), "{err}");
    run(&["stream", "add", "PLAIN", "--subjects", "plain.>"]);
    let err = fails(&["counter", "incr", "plain.x"]);
    assert!(err.contains("does not allow counters"), "{err}");
    let err = fails(&["counter", "ls"]);
    assert!(err.contains("--stream"), "{err}");
    let bad = rnats.run(&[&["counter", "incr", "hits.home", "1.5"][..], &s[..]].concat());
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("whole number"), "{stderr}");
}
