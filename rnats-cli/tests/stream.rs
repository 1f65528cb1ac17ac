//! `rnats stream report`, `stream copy`, `stream get`, `stream ls`, `stream find` and the
//! placement flags against a real nats-server.

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

    run(&[
        "stream",
        "add",
        "NODIRECT",
        "--subjects",
        "nd.>",
        "--no-allow-direct",
    ]);
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

/// The names `stream find ARGS -n` prints, in order.
fn found(rnats: &Rnats, url: &str, args: &[&str]) -> Vec<String> {
    let out = rnats.ok(&[&["stream", "find", "-n"][..], args, &["-s", url][..]].concat());
    out.lines().map(str::to_owned).collect()
}

#[test]
fn find_keeps_the_streams_that_pass_every_filter_and_invert_turns_each_around() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let run = |args: &[&str]| rnats.ok(&[args, &["-s", url.as_str()][..]].concat());
    // FULL holds a message and has a consumer; EMPTY holds nothing; COPY mirrors FULL and
    // MERGED sources it (what they hold depends on when they catch up: no test reads it).
    run(&["stream", "add", "FULL", "--subjects", "full.>"]);
    run(&["stream", "add", "EMPTY", "--subjects", "empty.*"]);
    run(&["stream", "add", "COPY", "--mirror", "FULL"]);
    run(&["stream", "add", "MERGED", "--source", "FULL"]);
    run(&["pub", "full.x", "hello", "-J"]);
    run(&["consumer", "add", "FULL", "reader"]);
    let find = |args: &[&str]| found(&rnats, &url, args);
    let has = |args: &[&str], name: &str| find(args).iter().any(|n| n == name);

    assert_eq!(find(&[]), ["COPY", "EMPTY", "FULL", "MERGED"]);
    assert!(has(&["--empty"], "EMPTY") && !has(&["--empty"], "FULL"));
    assert!(has(&["--empty", "--invert"], "FULL"));
    assert!(!has(&["--empty", "--invert"], "EMPTY"));
    // Never used counts as idle; a message stored a moment ago does not.
    assert!(has(&["--idle", "1h"], "EMPTY") && !has(&["--idle", "1h"], "FULL"));
    assert!(has(&["--idle", "1h", "--invert"], "FULL"));
    assert!(!has(&["--idle", "1h", "--invert"], "EMPTY"));
    assert!(find(&["--created", "1h"]).is_empty());
    assert_eq!(find(&["--created", "1h", "--invert"]).len(), 4);
    // As in natscli, a span of 0 is no filter, inverted or not.
    assert_eq!(find(&["--created", "0s", "--invert"]).len(), 4);
    assert_eq!(find(&["--idle", "0s", "--invert"]).len(), 4);
    // At most N consumers; inverted, at least N.
    assert!(has(&["--consumers", "0"], "EMPTY") && !has(&["--consumers", "0"], "FULL"));
    assert_eq!(find(&["--consumers", "1", "--invert"]), ["FULL"]);
    assert_eq!(
        find(&["--consumers", "-1"]).len(),
        4,
        "negative: any number"
    );
    // A subject inside the wildcard: the mirror and the sourcing stream have none.
    assert_eq!(find(&["--subject", "full.>"]), ["FULL"]);
    assert_eq!(
        find(&["--subject", "*.*"]),
        ["EMPTY"],
        "full.> is wider than *.*"
    );
    assert_eq!(
        find(&["--subject", "full.>", "--invert"]),
        ["COPY", "EMPTY", "MERGED"]
    );
    assert_eq!(find(&["--mirrored"]), ["COPY"]);
    assert_eq!(find(&["--sourced"]), ["MERGED"]);
    assert_eq!(
        find(&["--mirrored", "--invert"]),
        ["EMPTY", "FULL", "MERGED"]
    );
    assert_eq!(find(&["--replicas", "1"]).len(), 4);
    assert!(find(&["--replicas", "3", "--invert"]).is_empty());
    // A lone server lists no cluster: no stream has a leader or a server to match, and
    // inverted, --server-name keeps them all while --leader still wants a cluster.
    assert!(find(&["--server-name", "."]).is_empty());
    assert_eq!(find(&["--server-name", ".", "--invert"]).len(), 4);
    assert!(find(&["--leader", "n1", "--invert"]).is_empty());
    assert!(find(&["--cluster", "."]).is_empty());
    // Every filter must pass.
    assert_eq!(find(&["--empty", "--subject", "empty.>"]), ["EMPTY"]);
    assert!(find(&["--empty", "--subject", "full.>"]).is_empty());

    // The table (natscli's default), the server's infos, and natscli's alias.
    let table = run(&["stream", "find", "--subject", "full.>"]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("Name"), "{table}");
    assert!(lines[1].starts_with("FULL "), "{table}");
    assert_eq!(lines.len(), 2, "{table}");
    let json = rnats.json(&["stream", "query", "--empty", "--json", "-s", &url]);
    let names: Vec<&str> = json
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|i| i["config"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"EMPTY") && !names.contains(&"FULL"),
        "{json}"
    );
    let none = rnats.run(&["stream", "find", "--created", "1h", "-s", &url]);
    assert_success(&none, &["stream", "find"]);
    assert!(none.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&none.stderr),
        "No streams matched\n"
    );

    // Bad values are clap's usage errors: one line, exit 2.
    for bad in [
        &["--idle", "5x"][..],
        &["--created", "soon"],
        &["--server-name", "("],
        &["--replicas", "many"],
        &["--consumers", "few"],
    ] {
        let out = rnats.run(&[&["stream", "find"][..], bad, &["-s", &url][..]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.starts_with("error: invalid value"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn state_shows_the_state_block_alone_as_info_state_does() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let run = |args: &[&str]| rnats.ok(&[args, &["-s", url.as_str()][..]].concat());
    run(&["stream", "add", "ORDERS", "--subjects", "orders.>"]);
    run(&["pub", "orders.{{Count}}", "x", "--count", "3", "-J"]);
    run(&["stream", "rmm", "ORDERS", "2", "-f"]);
    run(&["consumer", "add", "ORDERS", "billing"]);

    let state = run(&["stream", "state", "ORDERS"]);
    assert!(
        state.starts_with("State of stream ORDERS created "),
        "{state}"
    );
    for fact in [
        "\nState:\n",
        "Messages: 2\n",
        "First sequence: 1 @ ",
        "Last sequence: 3 @ ",
        "Subjects: 2\n",
        "Deleted: 1\n",
        "Consumers: 1\n",
    ] {
        assert!(state.contains(fact), "{fact:?} in {state}");
    }
    assert!(!state.contains("Configuration:"), "{state}");
    assert_eq!(run(&["stream", "info", "ORDERS", "--state"]), state);
    // The whole info holds the same state block after its configuration.
    let info = run(&["stream", "info", "ORDERS"]);
    let block = &state[state.find("\nState:\n").expect("a state block")..];
    assert!(
        info.contains("Configuration:") && info.ends_with(block),
        "{info}"
    );

    // natscli prints the whole info as JSON.
    let json = rnats.json(&["stream", "state", "ORDERS", "--json", "-s", &url]);
    assert_eq!(json["state"]["messages"], 2, "{json}");
    assert_eq!(json["config"]["name"], "ORDERS", "{json}");
    let line = rnats.fails(&["stream", "state", "NOPE", "-s", &url]);
    assert!(line.contains("stream not found"), "{line}");
}

#[test]
fn gaps_lists_the_runs_of_deleted_messages_between_first_and_last() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let run = |args: &[&str]| rnats.ok(&[args, &["-s", url.as_str()][..]].concat());
    run(&[
        "stream",
        "add",
        "GAPS",
        "--subjects",
        "gaps.>",
        "--storage",
        "file",
    ]);
    run(&["pub", "gaps.{{Count}}", "x", "--count", "12", "-J"]);
    assert_eq!(
        run(&["stream", "gaps", "GAPS"]),
        "No deleted messages in GAPS\n"
    );
    assert_eq!(run(&["stream", "gaps", "GAPS", "--json"]), "[]\n");

    // 1 moves the first sequence on and is no gap; 3 to 5 and 9 are.
    for seq in ["1", "3", "4", "5", "9"] {
        run(&["stream", "rmm", "GAPS", seq, "-f"]);
    }
    let text = run(&["stream", "gaps", "GAPS"]);
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0].join(" "), "2 gaps found in stream GAPS", "{text}");
    assert_eq!(lines[3], ["3", "5", "3"], "{text}");
    assert_eq!(lines[4], ["9", "9", "1"], "{text}");
    assert_eq!(lines.len(), 5, "{text}");
    // natscli's flags are taken; the answer is the same.
    assert_eq!(
        run(&["stream", "gaps", "GAPS", "--json", "-f", "--no-progress"]),
        "[[3,5],[9,9]]\n"
    );

    let line = rnats.fails(&["stream", "gaps", "NOPE", "-s", &url]);
    assert!(
        line.starts_with("error: cannot read the deleted messages of stream NOPE")
            && line.contains("stream not found"),
        "{line}"
    );
}

/// The configuration `--validate` printed before its verdict, and the verdict.
fn validated(out: &str) -> (serde_json::Value, &str) {
    let (json, verdict) = out
        .split_once("\n\n")
        .expect("a blank line before the verdict");
    let config = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {out}"));
    (config, verdict)
}

#[test]
fn add_validate_and_output_check_the_config_and_make_nothing() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("orders.json");
    let file = file.to_str().expect("utf-8 path");
    // Neither needs a server: this address has none.
    let offline = ["-s", "nats://127.0.0.1:1"];
    let add = [
        "stream",
        "add",
        "ORDERS",
        "--subjects",
        "orders.>",
        "--max-msgs",
        "100",
    ];

    let out = rnats.ok(&[&add[..], &["--validate"], &offline[..]].concat());
    let (config, verdict) = validated(&out);
    assert_eq!(verdict, "Configuration is a valid stream\n", "{out}");
    assert_eq!(config["name"], "ORDERS", "{out}");
    assert_eq!(config["max_msgs"], 100, "{out}");

    let run = rnats.run(&[&add[..], &["--output", file], &offline[..]].concat());
    assert_success(&run, &["stream", "add", "--output"]);
    assert_eq!(
        String::from_utf8_lossy(&run.stderr),
        format!("Wrote the stream configuration to {file}\n")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file)
            .expect("written")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file).expect("read")).expect("JSON");
    assert_eq!(saved, config);
    // Nothing was made, and the saved file makes the stream.
    assert_eq!(rnats.ok(&["stream", "ls", "-n", "-s", &url]), "");
    rnats.ok(&["stream", "add", "--config", file, "-s", &url]);
    let info = rnats.json(&["stream", "info", "ORDERS", "--json", "-s", &url]);
    assert_eq!(info["config"]["max_msgs"], 100, "{info}");
    assert_eq!(info["config"]["subjects"][0], "orders.>", "{info}");

    // What the server would refuse fails, after the printed configuration.
    let bad = ["stream", "add", "BAD.NAME", "--subjects", ">"];
    let line = rnats.fails(&[&bad[..], &["--validate"], &offline[..]].concat());
    assert_eq!(
        line,
        "error: invalid stream configuration: the stream name \"BAD.NAME\" holds '.'; \
         the subject '>' needs acknowledgements off (--ack=false)"
    );
    let out = rnats.run(&[&bad[..], &["--validate"], &offline[..]].concat());
    assert_eq!(validated(&String::from_utf8_lossy(&out.stdout)).1, "");
    // ... and nothing is written.
    let other = dir.path().join("bad.json");
    let other = other.to_str().expect("utf-8 path");
    rnats.fails(&[&bad[..], &["--output", other], &offline[..]].concat());
    assert!(!std::path::Path::new(other).exists());
    // --ack=false is what makes '>' right.
    let out = rnats.ok(&[
        "stream",
        "add",
        "ALL",
        "--subjects",
        ">",
        "--ack=false",
        "--validate",
    ]);
    assert!(
        out.ends_with("\n\nConfiguration is a valid stream\n"),
        "{out}"
    );

    for both in [
        &["--validate", "--output", file][..],
        &["--validate", "--json"][..],
        &["--output", file, "--json"][..],
    ] {
        let out = rnats.run(&[&add[..], both, &offline[..]].concat());
        assert_eq!(out.status.code(), Some(2), "{both:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
            "{both:?}"
        );
    }
}

#[test]
fn validate_counts_name_and_description_bytes_as_the_server_does() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let long_name = "A".repeat(256);
    // 2049 two-byte characters: 4098 bytes, though fewer than 4096 characters.
    let long_description = "é".repeat(2049);
    for (args, fault, refusal) in [
        (
            ["stream", "add", long_name.as_str(), "--subjects", "long.>"],
            "the stream name is 256 bytes long, more than 255",
            "stream name is too long",
        ),
        (
            [
                "stream",
                "add",
                "DESCRIBED",
                "--description",
                long_description.as_str(),
            ],
            "the description is 4098 bytes long, more than 4096",
            "stream description is too long",
        ),
    ] {
        let line = rnats.fails(&[&args[..], &["--validate"]].concat());
        assert_eq!(
            line,
            format!("error: invalid stream configuration: {fault}"),
            "{args:?}"
        );
        // The server refuses what --validate does.
        let line = rnats.fails(&[&args[..], &["-s", &url]].concat());
        assert!(line.contains(refusal), "{line}");
    }
    // At the limits, both take it.
    let name = "A".repeat(255);
    let description = "é".repeat(2048);
    let add = [
        "stream",
        "add",
        name.as_str(),
        "--subjects",
        "long.>",
        "--description",
        description.as_str(),
    ];
    assert!(
        rnats
            .ok(&[&add[..], &["--validate"]].concat())
            .ends_with("\n\nConfiguration is a valid stream\n")
    );
    rnats.ok(&[&add[..], &["-s", &url]].concat());
}

/// A boolean of a stream or consumer configuration; the server leaves out the false ones.
fn on(config: &serde_json::Value, field: &str) -> bool {
    config.get(field).and_then(serde_json::Value::as_bool) == Some(true)
}

#[test]
fn ls_leaves_the_system_streams_out_unless_all() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    run(&["kv", "add", "config"]);
    run(&["object", "add", "files"]);
    // Only the buckets' streams: natscli's hint, on stderr.
    let out = rnats.run(&[&["stream", "ls"][..], &s[..]].concat());
    assert_success(&out, &["stream", "ls"]);
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "No streams defined, pass -a to include system streams\n"
    );
    assert_eq!(json(&["stream", "ls", "-j"]), serde_json::json!([]));

    run(&["stream", "add", "ORDERS", "--subjects", "orders.>"]);
    // natscli's --json: the names alone; -j for short.
    assert_eq!(
        json(&["stream", "ls", "--json"]),
        serde_json::json!(["ORDERS"])
    );
    let table = run(&["stream", "ls"]);
    assert!(
        table.contains("ORDERS") && !table.contains("KV_"),
        "{table}"
    );
    // -a is the stream command's, before or after ls.
    let all = serde_json::json!(["KV_config", "OBJ_files", "ORDERS"]);
    assert_eq!(json(&["stream", "ls", "-j", "-a"]), all);
    assert_eq!(json(&["stream", "--all", "ls", "-j"]), all);
    let table = run(&["stream", "-a", "ls"]);
    assert!(
        table.contains("KV_config") && table.contains("OBJ_files"),
        "{table}"
    );
    // natscli's --names lists every stream.
    assert_eq!(
        run(&["stream", "ls", "-n"]),
        "KV_config\nOBJ_files\nORDERS\n"
    );
    // --subject narrows the names too.
    assert_eq!(
        json(&["stream", "ls", "--subject", "orders.x", "-j"]),
        serde_json::json!(["ORDERS"])
    );
}

#[test]
fn add_takes_natscli_spellings_of_subjects_storage_retention_and_limits() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    // The walkthrough's line in natscli's docs.
    let info = json(&[
        "str",
        "add",
        "ORDERS",
        "--subjects",
        "orders.1 orders.2",
        "--subjects",
        "d.1, d.2",
        "--storage",
        "m",
        "--retention",
        "workq",
        "--max-age=-1",
        "--no-allow-rollup",
        "--no-deny-delete",
        "--no-deny-purge",
        "--defaults",
        "-j",
    ]);
    let config = &info["config"];
    assert_eq!(
        config["subjects"],
        serde_json::json!(["orders.1", "orders.2", "d.1", "d.2"])
    );
    assert_eq!(config["storage"], "memory", "{config}");
    assert_eq!(config["retention"], "workqueue", "{config}");
    assert_eq!(config["max_age"], 0, "{config}");
    for field in ["allow_rollup_hdrs", "deny_delete", "deny_purge"] {
        assert!(!on(config, field), "{field}: {config}");
    }
    let info = json(&[
        "stream",
        "add",
        "LOGS",
        "--subjects",
        "logs.>",
        "--storage",
        "f",
        "--max-age",
        "-1",
        "--no-allow-direct",
        "--allow-rollup",
        "--deny-delete",
        "--no-deny-delete",
        "--no-ack",
        "--json",
    ]);
    let config = &info["config"];
    assert_eq!(config["storage"], "file", "{config}");
    assert!(!on(config, "allow_direct"), "{config}");
    assert!(on(config, "allow_rollup_hdrs"), "{config}");
    // The last of a flag and its negation counts.
    assert!(!on(config, "deny_delete"), "{config}");
    assert!(on(config, "no_ack"), "{config}");
    let info = json(&[
        "stream",
        "edit",
        "LOGS",
        "--no-allow-rollup",
        "--allow-direct",
        "--ack",
        "-j",
    ]);
    let config = &info["config"];
    assert!(!on(config, "allow_rollup_hdrs"), "{config}");
    assert!(on(config, "allow_direct"), "{config}");
    assert!(!on(config, "no_ack"), "{config}");
}

#[test]
fn add_defaults_are_natscli_s() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    let info = json(&[
        "stream",
        "add",
        "ORDERS",
        "--subjects",
        "orders.>",
        "--defaults",
        "-j",
    ]);
    let config = &info["config"];
    // natscli's --allow-direct defaults to true; the rest are the server's defaults, which
    // natscli's --defaults sends as they are.
    assert!(on(config, "allow_direct"), "{config}");
    for field in ["allow_rollup_hdrs", "deny_delete", "deny_purge", "no_ack"] {
        assert!(!on(config, field), "{field}: {config}");
    }
    for field in [
        "max_msgs",
        "max_bytes",
        "max_msgs_per_subject",
        "max_msg_size",
        "max_consumers",
    ] {
        assert_eq!(config[field], -1, "{field}: {config}");
    }
    assert_eq!(config["max_age"], 0, "{config}");
    assert_eq!(config["duplicate_window"], 120_000_000_000u64, "{config}");
    assert_eq!(config["num_replicas"], 1, "{config}");
    assert_eq!(config["storage"], "file", "{config}");
    assert_eq!(config["retention"], "limits", "{config}");
    assert_eq!(config["discard"], "old", "{config}");
    // A shorter max age is the duplicate window, as natscli sets it.
    let info = json(&["stream", "add", "SHORT", "--max-age", "30s", "-j"]);
    assert_eq!(info["config"]["duplicate_window"], 30_000_000_000u64);
    // A configuration file is taken as it is.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("plain.json");
    common::write(&file, r#"{"name": "PLAIN", "subjects": ["plain.>"]}"#);
    let info = json(&["stream", "add", "--config", &file.to_string_lossy(), "-j"]);
    assert!(!on(&info["config"], "allow_direct"), "{info}");
}

#[test]
fn view_takes_a_page_size_and_raw_bodies() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["stream", "add", "LOG", "--subjects", "log.>"]);
    run(&["pub", "log.{{Count}}", "line {{Count}}", "--count", "5"]);
    // natscli's positional page size.
    let page = run(&["stream", "view", "LOG", "2", "-j"]);
    let seqs: Vec<u64> = common::json_lines(&page)
        .iter()
        .filter_map(|m| m["seq"].as_u64())
        .collect();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(
        run(&["stream", "view", "LOG", "3", "--raw", "--id", "2"]),
        "line 2\nline 3\nline 4\n"
    );
    let out = rnats.run(&[&["stream", "view", "LOG", "--raw", "--json"][..], &s[..]].concat());
    assert_eq!(out.status.code(), Some(2), "a usage error");
}

#[test]
fn view_reads_work_queue_and_interest_streams_without_consuming_them() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "JOBS",
        "--subjects",
        "jobs.>",
        "--retention",
        "workq",
    ]);
    run(&[
        "stream",
        "add",
        "EVENTS",
        "--subjects",
        "events.>",
        "--retention",
        "interest",
        "--no-allow-direct",
    ]);
    run(&["consumer", "add", "EVENTS", "audit", "--ack", "explicit"]);
    for stream in ["jobs", "events"] {
        let subject = format!("{stream}.{{{{Count}}}}");
        run(&["pub", &subject, "job {{Count}}", "--count", "4"]);
    }
    for (stream, prefix) in [("JOBS", "jobs"), ("EVENTS", "events")] {
        assert_eq!(
            run(&["stream", "view", stream, "--raw"]),
            "job 1\njob 2\njob 3\njob 4\n",
            "{stream}"
        );
        let page = common::json_lines(&run(&["stream", "view", stream, "2", "--start", "2", "-j"]));
        let seqs: Vec<u64> = page.iter().filter_map(|m| m["seq"].as_u64()).collect();
        assert_eq!(seqs, [2, 3], "{stream}");
        let filtered = run(&[
            "stream",
            "view",
            stream,
            "--subject",
            &format!("{prefix}.3"),
            "--since",
            "1h",
            "--raw",
        ]);
        assert_eq!(filtered, "job 3\n", "{stream}");
        let human = run(&["stream", "view", stream, "1"]);
        assert!(
            human.starts_with(&format!("[{stream}#1] ")) && human.contains("job 1"),
            "{human}"
        );
        // Nothing was consumed, and nothing was left behind.
        let info = json(&["stream", "info", stream, "-j"]);
        assert_eq!(info["state"]["messages"], 4, "{info}");
        let consumers = json(&["consumer", "ls", stream, "-j"]);
        let expected: &[&str] = if stream == "EVENTS" { &["audit"] } else { &[] };
        assert_eq!(consumers, serde_json::json!(expected), "{stream}");
    }
    // Past the end: nothing to show, and no error.
    let out = rnats.run(&[&["stream", "view", "JOBS", "--start", "9"][..], &s[..]].concat());
    assert_success(&out, &["stream", "view"]);
    assert!(out.stdout.is_empty());
}

#[test]
fn json_has_natscli_s_short_flag() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    let info = json(&["stream", "add", "ORDERS", "--subjects", "orders.>", "-j"]);
    assert_eq!(info["config"]["name"], "ORDERS");
    rnats.ok(&[&["pub", "orders.new", "hi"][..], &s[..]].concat());
    assert_eq!(
        json(&["stream", "info", "ORDERS", "-j"])["state"]["messages"],
        1
    );
    assert_eq!(
        json(&["stream", "state", "ORDERS", "-j"])["state"]["messages"],
        1
    );
    assert_eq!(json(&["stream", "get", "ORDERS", "1", "-j"])["data"], "hi");
    assert_eq!(
        json(&["stream", "report", "-j"])[0]["config"]["name"],
        "ORDERS"
    );
    assert_eq!(
        json(&["stream", "find", "-j"])[0]["config"]["name"],
        "ORDERS"
    );
    assert_eq!(
        json(&["stream", "gaps", "ORDERS", "-j"]),
        serde_json::json!([])
    );
    assert_eq!(
        json(&["stream", "purge", "ORDERS", "-f", "-j"])["purged"],
        1
    );
    assert_eq!(json(&["account", "info", "-j"])["jetstream"]["streams"], 1);
}

#[test]
fn placement_tags_are_set_in_either_spelling_and_removed_by_an_empty_tag() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let placement = || {
        rnats.json(&[&["stream", "info", "PLACED", "--json"][..], &s[..]].concat())["config"]
            ["placement"]
            .clone()
    };
    // natscli's older `--tags` and its `--tag` both add a tag.
    run(&[
        "stream",
        "add",
        "PLACED",
        "--subjects",
        "placed",
        "--tags",
        "ssd",
        "--tag",
        "fast",
        "--defaults",
    ]);
    assert_eq!(placement()["tags"], serde_json::json!(["ssd", "fast"]));
    run(&["stream", "edit", "PLACED", "--tag", ""]);
    assert_eq!(
        placement(),
        serde_json::Value::Null,
        "the placement is gone"
    );
}
