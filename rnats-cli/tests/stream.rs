//! `rnats stream report` and `stream copy` against a real nats-server.

mod common;

use common::{Rnats, assert_success};
use rnats_test_server::NatsServer;

#[test]
fn report_lists_every_stream_sorted_as_asked() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "BIG",
        "--subjects",
        "big.>",
        "--storage",
        "memory",
    ]);
    run(&[
        "stream",
        "add",
        "SMALL",
        "--subjects",
        "small.>",
        "--storage",
        "file",
    ]);
    run(&["pub", "big.x", "0123456789", "--count", "5"]);
    run(&["pub", "small.x", "a"]);
    run(&["consumer", "add", "SMALL", "c1"]);

    let report = run(&["stream", "report"]);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], "Stream report: 2 streams", "{report}");
    assert!(lines[2].starts_with("Stream"), "{report}");
    // By bytes, smallest first.
    assert!(lines[3].starts_with("SMALL"), "{report}");
    assert!(lines[4].starts_with("BIG"), "{report}");
    let small: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(small[..4], ["SMALL", "File", "1", "1"], "{report}");

    let by_consumers = run(&["stream", "report", "--consumers"]);
    assert!(
        by_consumers
            .lines()
            .nth(3)
            .is_some_and(|l| l.starts_with("BIG")),
        "{by_consumers}"
    );
    let by_name = run(&["stream", "report", "-n"]);
    assert!(
        by_name.lines().nth(3).is_some_and(|l| l.starts_with("BIG")),
        "{by_name}"
    );

    let only = rnats.json(
        &[
            &["stream", "report", "--subject", "small.x", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    let names: Vec<&str> = only
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|i| i["config"]["name"].as_str())
        .collect();
    assert_eq!(names, ["SMALL"]);
    let raw = run(&["stream", "report", "--raw", "--messages"]);
    assert!(
        raw.lines().nth(4).is_some_and(|l| l.contains(" 5 ")),
        "{raw}"
    );
}

#[test]
fn copy_makes_a_stream_from_another_config_without_its_messages() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    rnats.ok(&[
        &[
            "stream",
            "add",
            "ORDERS",
            "--subjects",
            "orders.>",
            "--max-age",
            "1h",
            "--max-msgs",
            "50",
        ][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[&["pub", "orders.x", "hi"][..], &s[..]].concat());
    let info = rnats.json(
        &[
            &[
                "stream",
                "copy",
                "ORDERS",
                "ARCHIVE",
                "--subjects",
                "archive.>",
                "--max-msgs",
                "70",
                "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(info["config"]["name"], "ARCHIVE");
    assert_eq!(info["config"]["subjects"], serde_json::json!(["archive.>"]));
    assert_eq!(info["config"]["max_age"], 3_600_000_000_000u64, "copied");
    assert_eq!(info["config"]["max_msgs"], 70, "overridden");
    assert_eq!(info["state"]["messages"], 0, "no messages copied");

    let line = rnats.fails(&[&["stream", "cp", "ORDERS", "CLASH"][..], &s[..]].concat());
    assert!(
        line.starts_with("error: cannot create stream CLASH"),
        "{line}"
    );
    let line = rnats.fails(&[&["stream", "copy", "MISSING", "X"][..], &s[..]].concat());
    assert!(
        line.starts_with("error: cannot read stream MISSING"),
        "{line}"
    );
}

#[test]
fn get_last_for_a_wildcard_shows_each_subjects_last_message() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "ORDERS",
        "--subjects",
        "orders.>",
        "--allow-direct",
    ]);
    run(&["pub", "orders.a", "a1", "-J"]);
    run(&["pub", "orders.b", "b1", "-J"]);
    run(&["pub", "orders.a", "a2", "-J"]);
    run(&["pub", "orders.c.deep", "c1", "-J"]);
    let one = rnats.json(
        &[
            &["stream", "get", "ORDERS", "-S", "orders.c.deep", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(one["seq"], 4);

    let lines = rnats.ok(&[
        &[
            "stream",
            "get",
            "ORDERS",
            "--last-for",
            "orders.*",
            "--json",
        ][..],
        &s[..],
    ]
    .concat());
    let got: Vec<(String, String)> = common::json_lines(&lines)
        .iter()
        .map(|m| {
            (
                m["subject"].as_str().unwrap_or_default().to_owned(),
                m["data"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("orders.b".to_owned(), "b1".to_owned()),
            ("orders.a".to_owned(), "a2".to_owned())
        ]
    );
    let all = run(&["stream", "get", "ORDERS", "--last-for", ">"]);
    assert_eq!(all.matches("[ORDERS#").count(), 3, "{all}");

    run(&["stream", "add", "NODIRECT", "--subjects", "nd.>"]);
    let err = rnats.fails(&[&["stream", "get", "NODIRECT", "-S", "nd.>"][..], &s[..]].concat());
    assert!(err.contains("direct gets"), "{err}");

    // natscli's flow flags: mirror, sources, subject transform, republish, --ack.
    let info = |name: &str| rnats.json(&[&["stream", "info", name, "--json"][..], &s[..]].concat());
    run(&[
        "stream",
        "add",
        "MIRROR",
        "--mirror",
        "ORDERS",
        "--defaults",
    ]);
    assert_eq!(info("MIRROR")["config"]["mirror"]["name"], "ORDERS");
    run(&[
        "stream", "add", "MERGED", "--source", "ORDERS", "--source", "NODIRECT",
    ]);
    let merged = info("MERGED");
    let sources: Vec<&str> = merged["config"]["sources"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(sources, ["ORDERS", "NODIRECT"], "{merged}");
    run(&[
        "stream",
        "edit",
        "NODIRECT",
        "--transform-source",
        "nd.>",
        "--transform-destination",
        "moved.>",
        "--republish-source",
        "nd.>",
        "--republish-destination",
        "copy.>",
        "--republish-headers",
        "--ack=false",
        "-f",
    ]);
    let edited = info("NODIRECT")["config"].clone();
    assert_eq!(edited["subject_transform"]["dest"], "moved.>", "{edited}");
    assert_eq!(edited["republish"]["dest"], "copy.>", "{edited}");
    assert_eq!(edited["republish"]["headers_only"], true, "{edited}");
    assert_eq!(edited["no_ack"], true, "{edited}");
    let dry = run(&[
        "stream",
        "edit",
        "NODIRECT",
        "--no-republish",
        "--no-transform",
        "--ack",
        "--dry-run",
    ]);
    let dry: serde_json::Value = serde_json::from_str(&dry).expect("the config as JSON");
    assert!(
        dry.get("republish").is_none_or(serde_json::Value::is_null),
        "{dry}"
    );
    assert!(dry.get("no_ack").is_none_or(|v| v == false), "{dry}");
    // A dry run changes nothing.
    assert_eq!(info("NODIRECT")["config"]["republish"]["dest"], "copy.>");
}

#[test]
fn stream_ls_ends_at_a_page_that_ignores_the_offset() {
    // A server without JetStream leaves `$JS.API` free: `rnats reply` answers `STREAM.LIST` in
    // its place with the same page every time (offset 0 of a million), twice. nats-server
    // echoes the offset asked for, so the second reply, to offset 2, is not the page asked
    // for and the listing ends there with an error; it used to go on asking for more.
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let page = r#"{"total":1000000,"offset":0,"limit":256,"streams":["A","B"]}"#;
    let mut peer = rnats.spawn_ready(
        &[
            "reply",
            "$JS.API.STREAM.LIST",
            page,
            "--count",
            "2",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let error = rnats.fails(&["stream", "ls", "--json", "-s", &url]);
    assert!(
        error.ends_with("asked for the page at offset 2, got the page at offset 0"),
        "{error}"
    );
    let answered = peer.finish();
    assert_success(&answered, &["reply"]);
}
