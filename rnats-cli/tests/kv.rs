//! `rnats kv` against a real nats-server with JetStream.

mod common;

use common::{Rnats, assert_success, json_lines};
use rnats_test_server::NatsServer;
use serde_json::json;

#[test]
fn kv_add_put_get_history_del_rm() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    rnats.ok(&[
        &[
            "kv",
            "add",
            "config",
            "--history",
            "5",
            "--storage",
            "memory",
        ][..],
        &s[..],
    ]
    .concat());
    assert_eq!(
        rnats.ok(&[&["kv", "put", "config", "app.color", "blue"][..], &s[..]].concat()),
        "blue\n"
    );
    let out = rnats.run_with_input(
        &[&["kv", "put", "config", "app.color"][..], &s[..]].concat(),
        b"green",
    );
    assert_success(&out, &["kv", "put"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "green\n");
    rnats.ok(&[
        &["kv", "create", "config", "app.owner", "alice"][..],
        &s[..],
    ]
    .concat());
    let line = rnats.fails(&[&["kv", "create", "config", "app.owner", "bob"][..], &s[..]].concat());
    assert!(
        line.starts_with("error: cannot create app.owner in config"),
        "{line}"
    );

    assert_eq!(
        rnats.ok(&[&["kv", "get", "config", "app.color", "--raw"][..], &s[..]].concat()),
        "green"
    );
    let old = rnats.json(
        &[
            &[
                "kv",
                "get",
                "config",
                "app.color",
                "--revision",
                "1",
                "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(old["value"], "blue");
    assert_eq!(old["revision"], 1);

    let keys = rnats.json(&[&["kv", "ls", "config", "--json"][..], &s[..]].concat());
    assert_eq!(keys, serde_json::json!(["app.color", "app.owner"]));
    let buckets = rnats.json(&[&["kv", "ls", "--json"][..], &s[..]].concat());
    assert_eq!(buckets[0]["bucket"], "config");
    assert_eq!(buckets[0]["history"], 5);

    let history = rnats.ok(&[
        &["kv", "history", "config", "app.color", "--json"][..],
        &s[..],
    ]
    .concat());
    let revisions: Vec<u64> = json_lines(&history)
        .iter()
        .filter_map(|e| e["revision"].as_u64())
        .collect();
    assert_eq!(revisions, [1, 2]);

    let line = rnats.fails(&[&["kv", "del", "config", "app.color"][..], &s[..]].concat());
    assert!(line.contains("--force"), "{line}");
    rnats.ok(&[&["kv", "del", "config", "app.color", "-f"][..], &s[..]].concat());
    let line = rnats.fails(&[&["kv", "get", "config", "app.color"][..], &s[..]].concat());
    assert!(line.contains("key not found"), "{line}");

    let info = rnats.ok(&[&["kv", "info", "config"][..], &s[..]].concat());
    assert!(info.contains("History Kept: 5"), "{info}");
    rnats.ok(&[&["kv", "rm", "config", "-f"][..], &s[..]].concat());
    let line = rnats.fails(&[&["kv", "info", "config"][..], &s[..]].concat());
    assert!(line.contains("cannot open bucket config"), "{line}");
}

#[test]
fn kv_del_without_a_key_removes_the_bucket() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    rnats.ok(&[&["kv", "add", "doomed"][..], &s[..]].concat());
    rnats.ok(&[&["kv", "put", "doomed", "k", "v"][..], &s[..]].concat());
    // natscli's form: `kv del BUCKET`, confirmed like `kv rm`.
    let line = rnats.fails(&[&["kv", "del", "doomed"][..], &s[..]].concat());
    assert!(line.contains("--force"), "{line}");
    rnats.ok(&[&["kv", "info", "doomed"][..], &s[..]].concat());
    let out = rnats.run(&[&["kv", "del", "doomed", "-f"][..], &s[..]].concat());
    assert_success(&out, &["kv", "del", "doomed", "-f"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Removed Key-Value bucket doomed\n"
    );
    let line = rnats.fails(&[&["kv", "info", "doomed"][..], &s[..]].concat());
    assert!(line.contains("cannot open bucket doomed"), "{line}");
    let names = rnats.ok(&[&["kv", "ls", "--names"][..], &s[..]].concat());
    assert!(!names.lines().any(|l| l == "doomed"), "{names}");
    // A bucket that is not there: said, and nothing removed.
    let line = rnats.fails(&[&["kv", "del", "doomed", "-f"][..], &s[..]].concat());
    assert!(line.contains("cannot open bucket doomed"), "{line}");
}

#[test]
fn kv_watch_shows_current_values_then_changes() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["kv", "add", "live", "-s", &url]);
    rnats.ok(&["kv", "put", "live", "a", "1", "-s", &url]);
    let mut watch = rnats.spawn_ready(
        &["kv", "watch", "live", "--count", "2", "--json", "-s", &url],
        "Watching",
    );
    rnats.ok(&["kv", "put", "live", "b", "2", "-s", &url]);
    let out = watch.finish();
    assert_success(&out, &["kv", "watch"]);
    let entries = json_lines(&String::from_utf8_lossy(&out.stdout));
    let seen: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["key"].as_str().unwrap_or_default(),
                e["value"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(seen, [("a", "1"), ("b", "2")]);
}

#[test]
fn kv_status_ls_names_revert_and_compact() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["kv", "add", "config", "--history", "5"]);
    run(&["kv", "add", "other"]);
    assert_eq!(run(&["kv", "ls", "--names"]), "config\nother\n");
    assert_eq!(run(&["kv", "ls", "-n"]), "config\nother\n");

    run(&["kv", "put", "config", "app.color", "blue"]);
    run(&["kv", "put", "config", "app.color", "green"]);
    run(&["kv", "put", "config", "db.host", "x"]);
    assert_eq!(run(&["kv", "ls", "config", "app.>"]), "app.color\n");

    let status = run(&["kv", "status", "config"]);
    assert!(
        status.starts_with("Information for Key-Value Store Bucket config created "),
        "{status}"
    );
    assert!(status.contains("Values Stored: 3"), "{status}");

    let line = rnats.fails(&[&["kv", "revert", "config", "app.color", "1"][..], &s[..]].concat());
    assert!(line.contains("--force"), "{line}");
    let history = run(&["kv", "revert", "config", "app.color", "1", "--force"]);
    assert!(history.lines().count() >= 4, "{history}");
    assert_eq!(run(&["kv", "get", "config", "app.color", "--raw"]), "blue");
    let entry = rnats.json(&[&["kv", "get", "config", "app.color", "--json"][..], &s[..]].concat());
    assert_eq!(entry["revision"], 4);
    let line = rnats.fails(
        &[
            &["kv", "revert", "config", "app.color", "99", "-f"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(line.contains("key not found"), "{line}");

    // compact drops the values behind a delete marker; a marker younger than 30 minutes
    // stays (nats.go's PurgeDeletes, as natscli does).
    run(&["kv", "del", "config", "db.host", "-f"]);
    let before = run(&["kv", "history", "config", "db.host", "--json"]);
    assert_eq!(json_lines(&before).len(), 2, "{before}");
    run(&["kv", "compact", "config", "--force"]);
    let after = json_lines(&run(&["kv", "history", "config", "db.host", "--json"]));
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["operation"], "DEL");
    assert_eq!(run(&["kv", "get", "config", "app.color", "--raw"]), "blue");
}

#[test]
fn kv_watch_takes_natscli_flags() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["kv", "add", "live", "--history", "3", "-s", &url]);
    rnats.ok(&["kv", "put", "live", "a", "1", "-s", &url]);
    rnats.ok(&["kv", "put", "live", "a", "2", "-s", &url]);
    // --history: every stored revision, not only the last.
    let out = rnats.ok(&[
        "kv",
        "watch",
        "live",
        "--history",
        "--count",
        "2",
        "-s",
        &url,
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].ends_with("PUT live > a: 1"), "{out}");
    assert!(lines[1].ends_with("PUT live > a: 2"), "{out}");
    // --revision: from that revision on.
    let out = rnats.ok(&[
        "kv",
        "watch",
        "live",
        "--revision",
        "2",
        "--count",
        "1",
        "-s",
        &url,
    ]);
    assert!(out.trim_end().ends_with("PUT live > a: 2"), "{out}");
    // --updates with --no-deletes: a delete is skipped, the next put shows.
    let mut watch = rnats.spawn_ready(
        &[
            "kv",
            "watch",
            "live",
            "--updates",
            "--no-deletes",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Watching",
    );
    rnats.ok(&["kv", "del", "live", "a", "-f", "-s", &url]);
    rnats.ok(&["kv", "put", "live", "b", "3", "-s", &url]);
    let out = watch.finish();
    assert_success(&out, &["kv", "watch"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.trim_end().ends_with("PUT live > b: 3"), "{stdout}");
}

#[test]
fn kv_add_takes_metadata_and_shows_it() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let added = rnats.ok(&[
        &[
            "kv",
            "add",
            "config",
            "--metadata",
            "owner=ops",
            "--metadata",
            "tier=gold",
        ][..],
        &[
            "--marker-ttl",
            "1m",
            "--compress",
            "--max-bucket-size",
            "1MB",
        ][..],
        &s[..],
    ]
    .concat());
    assert!(added.contains("owner=ops, tier=gold"), "{added}");
    assert!(added.contains("Limit Marker TTL: 1m"), "{added}");
    let status = rnats.ok(&[&["kv", "status", "config"][..], &s[..]].concat());
    assert!(status.contains("owner=ops, tier=gold"), "{status}");
    let listed = rnats.json(&[&["kv", "ls", "--json"][..], &s[..]].concat());
    assert_eq!(listed[0]["metadata"]["owner"], "ops", "{listed}");
    let out = rnats.run(&[&["kv", "add", "bad", "--metadata", "novalue"][..], &s[..]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("KEY=VALUE"));
}

#[test]
fn kv_edit_changes_only_the_settings_given() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "kv",
        "add",
        "config",
        "--history",
        "2",
        "--ttl",
        "1h",
        "--description",
        "old",
        "--storage",
        "memory",
        "--compress",
        "--metadata",
        "owner=ops",
    ]);
    run(&["kv", "put", "config", "app.color", "blue"]);

    let edited = run(&[
        "kv",
        "edit",
        "config",
        "--history",
        "10",
        "--ttl",
        "2h",
        "--description",
        "new",
    ]);
    assert!(edited.contains("History Kept: 10"), "{edited}");
    let stream = rnats.json(&[&["kv", "info", "config", "--json"][..], &s[..]].concat());
    let config = &stream["config"];
    assert_eq!(config["max_msgs_per_subject"], 10, "{config}");
    assert_eq!(config["max_age"], 2 * 3600 * 1_000_000_000u64, "{config}");
    assert_eq!(config["description"], "new", "{config}");
    // What was not given stays as it was.
    assert_eq!(config["storage"], "memory", "{config}");
    assert_eq!(config["compression"], "s2", "{config}");
    assert_eq!(config["metadata"]["owner"], "ops", "{config}");
    assert_eq!(run(&["kv", "get", "config", "app.color", "--raw"]), "blue");

    run(&["kv", "edit", "config", "--compression=false"]);
    let stream = rnats.json(&[&["kv", "info", "config", "--json"][..], &s[..]].concat());
    assert_eq!(stream["config"]["max_msgs_per_subject"], 10, "{stream}");
    assert_ne!(stream["config"]["compression"], "s2", "{stream}");

    let line = rnats.fails(&[&["kv", "edit", "nothing", "--history", "3"][..], &s[..]].concat());
    assert!(line.contains("nothing"), "{line}");
}

#[test]
fn kv_ls_verbose_shows_each_key_and_display_value_its_value() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["kv", "add", "config", "--history", "5"]);
    run(&["kv", "put", "config", "app.color", "blue"]);
    run(&["kv", "put", "config", "app.color", "green"]);
    run(&["kv", "put", "config", "db.host", "two\nlines"]);
    run(&["kv", "put", "config", "gone", "x"]);
    run(&["kv", "del", "config", "gone", "-f"]);

    let rows = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .skip(3)
            .map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                // Key, then the time (`2026-12-06 22:50:55 UTC`), then the rest.
                let mut row = vec![cells[0].to_owned()];
                row.extend(cells[4..].iter().map(|c| (*c).to_owned()));
                row
            })
            .collect()
    };
    let text = run(&["kv", "ls", "config", "-v"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Keys in bucket config", "{text}");
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["Key", "Created", "Revision"],
        "{text}"
    );
    assert_eq!(
        rows(&text),
        [vec!["app.color", "2"], vec!["db.host", "3"]],
        "{text}"
    );
    assert!(lines[3].contains(" UTC "), "{text}");

    let text = run(&["kv", "ls", "config", "--verbose", "--display-value"]);
    assert!(
        text.lines().nth(2).is_some_and(|l| l.ends_with("Value")),
        "{text}"
    );
    assert_eq!(
        rows(&text),
        [
            vec!["app.color", "2", "green"],
            vec!["db.host", "3", "two\\nlines"]
        ],
        "{text}"
    );
    // --display-value alone lists as -v does, and a filter narrows it.
    let text = run(&["kv", "ls", "config", "app.>", "--display-value"]);
    assert_eq!(rows(&text), [vec!["app.color", "2", "green"]], "{text}");

    let listed = rnats.json(&[&["kv", "ls", "config", "-v", "--json"][..], &s[..]].concat());
    let keys: Vec<&str> = listed
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|e| e["key"].as_str())
        .collect();
    assert_eq!(keys, ["app.color", "db.host"], "{listed}");
    assert_eq!(listed[0]["revision"], 2, "{listed}");
    assert!(listed[0].get("value").is_none(), "{listed}");
    let listed = rnats.json(
        &[
            &["kv", "ls", "config", "-v", "--display-value", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(listed[1]["value"], "two\nlines", "{listed}");

    // -v lists keys, so it needs a bucket; an unknown bucket is said.
    let out = rnats.run(&[&["kv", "ls", "-v"][..], &s[..]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("<BUCKET>"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = rnats.fails(&[&["kv", "ls", "nobucket", "-v"][..], &s[..]].concat());
    assert!(line.contains("cannot open bucket nobucket"), "{line}");
}

#[test]
fn kv_watch_deletes_shows_deletes_as_natscli_does_by_default() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["kv", "add", "live"]);
    run(&["kv", "put", "live", "a", "1"]);
    run(&["kv", "del", "live", "a", "-f"]);
    run(&["kv", "put", "live", "b", "2"]);
    let ends = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split_once("] ").map_or(l, |(_, rest)| rest).to_owned())
            .collect()
    };

    // The current values: a's delete, then b.
    let out = run(&["kv", "watch", "live", "--deletes", "--count", "2"]);
    assert_eq!(
        ends(&out),
        ["DEL live > a: DEL", "PUT live > b: 2"],
        "{out}"
    );
    // As in natscli, the last of --deletes and --no-deletes counts.
    let out = run(&[
        "kv",
        "watch",
        "live",
        "--deletes",
        "--no-deletes",
        "--count",
        "1",
    ]);
    assert_eq!(ends(&out), ["PUT live > b: 2"], "{out}");
    let out = run(&[
        "kv",
        "watch",
        "live",
        "--no-deletes",
        "--deletes",
        "--count",
        "1",
    ]);
    assert_eq!(ends(&out), ["DEL live > a: DEL"], "{out}");
}

#[test]
fn get_raw_writes_the_value_byte_for_byte() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    rnats.ok(&[&["kv", "add", "blobs"][..], &s[..]].concat());
    let value = b"\x00\xffbinary\nwith a newline at the end\n";
    let out = rnats.run_with_input(&[&["kv", "put", "blobs", "b"][..], &s[..]].concat(), value);
    assert_success(&out, &["kv", "put"]);
    let out = rnats.run(&[&["kv", "get", "blobs", "b", "--raw"][..], &s[..]].concat());
    assert_success(&out, &["kv", "get"]);
    assert_eq!(out.stdout, value);
    let out = rnats.run(
        &[
            &["kv", "get", "blobs", "b", "--raw", "--revision", "1"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(out.stdout, value);
}

#[test]
fn info_shows_the_bucket_s_limits_as_natscli_does() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "kv",
        "add",
        "config",
        "--storage",
        "m",
        "--history",
        "4",
        "--max-bucket-size",
        "1MB",
        "--max-value-size",
        "1KB",
        "--ttl",
        "1h",
        "--description",
        "settings",
    ]);
    run(&["kv", "put", "config", "a", "1"]);
    for command in ["info", "status"] {
        let info = run(&["kv", command, "config"]);
        let fields: Vec<(&str, &str)> = info
            .lines()
            .filter_map(|line| line.split_once(": "))
            .map(|(label, value)| (label.trim(), value))
            .collect();
        for expected in [
            ("Bucket Name", "config"),
            ("History Kept", "4"),
            ("Values Stored", "1"),
            ("Compressed", "false"),
            ("Per-Key TTL Supported", "false"),
            ("Backing Store Kind", "JetStream"),
            ("Description", "settings"),
            ("Maximum Bucket Size", "1 MiB"),
            ("Maximum Value Size", "1 KiB"),
            ("Maximum Age", "1h"),
            ("JetStream Stream", "KV_config"),
            ("Storage", "Memory"),
        ] {
            assert!(fields.contains(&expected), "{expected:?}: {info}");
        }
        assert!(
            info.starts_with("Information for Key-Value Store Bucket config created "),
            "{info}"
        );
    }
    let unlimited = run(&["kv", "add", "open", "--compress", "--marker-ttl", "1m"]);
    for row in [
        "Maximum Bucket Size: unlimited",
        "Maximum Value Size: unlimited",
        "Maximum Age: unlimited",
        "Compressed: true",
        "Per-Key TTL Supported: true",
        "Limit Marker TTL: 1m",
        "Storage: File",
    ] {
        assert!(unlimited.contains(row), "{row}: {unlimited}");
    }
    // natscli's --no-compress, and -j for --json.
    let edited = run(&["kv", "edit", "open", "--no-compress"]);
    assert!(edited.contains("Compressed: false"), "{edited}");
    let stream = rnats.json(&[&["kv", "info", "open", "-j"][..], &s[..]].concat());
    assert_ne!(stream["config"]["compression"], "s2", "{stream}");
    assert_eq!(
        rnats.json(&[&["kv", "ls", "-j"][..], &s[..]].concat())[0]["bucket"],
        "config"
    );
}

#[test]
fn kv_add_makes_mirrors_sources_and_republishing_buckets() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let config_of = |bucket: &str| {
        rnats.json(&[&["kv", "info", bucket, "--json"][..], &s[..]].concat())["config"].clone()
    };
    // Reads `key` from `bucket` until it has `value`: mirrors and sources copy in the
    // background.
    let arrives = |bucket: &str, key: &str, value: &str| {
        rnats_test_server::wait_until(std::time::Duration::from_secs(20), || {
            let out = rnats.run(&[&["kv", "get", bucket, key, "--raw"][..], &s[..]].concat());
            out.status.success() && out.stdout == value.as_bytes()
        });
    };
    run(&["kv", "add", "orders"]);
    run(&["kv", "add", "refunds"]);

    let mirror = run(&["kv", "add", "orders_copy", "--mirror", "orders"]);
    assert!(mirror.contains("Origin Bucket: orders"), "{mirror}");
    assert_eq!(config_of("orders_copy")["mirror"]["name"], "KV_orders");
    let merged = run(&[
        "kv", "add", "all", "--source", "orders", "--source", "refunds",
    ]);
    assert!(merged.contains("Source Bucket: orders"), "{merged}");
    assert!(merged.contains("Source Bucket: refunds"), "{merged}");
    run(&["kv", "put", "orders", "o1", "shipped"]);
    run(&["kv", "put", "refunds", "r1", "paid"]);
    arrives("orders_copy", "o1", "shipped");
    arrives("all", "o1", "shipped");
    arrives("all", "r1", "paid");
    // A write to a mirror goes to the bucket it mirrors (ADR-8), and comes back through it.
    // (Read until it is there: a mirror that caught up answers direct gets for its origin
    // too, and may answer before it has the new value.)
    run(&["kv", "put", "orders_copy", "o2", "via-mirror"]);
    arrives("orders", "o2", "via-mirror");
    arrives("orders_copy", "o2", "via-mirror");
    // An edit keeps what it is not given: the mirror, the sources and their transforms.
    run(&["kv", "edit", "orders_copy", "--description", "copy"]);
    assert_eq!(config_of("orders_copy")["mirror"]["name"], "KV_orders");
    run(&["kv", "edit", "all", "--description", "both"]);
    let all = config_of("all");
    assert_eq!(all["sources"][1]["name"], "KV_refunds", "{all}");
    assert_eq!(
        all["sources"][1]["subject_transforms"][0]["src"], "$KV.refunds.>",
        "{all}"
    );
    // A mirror has no sources: an edit that gives it some is refused, not dropped.
    let line = rnats.fails(
        &[
            &["kv", "edit", "orders_copy", "--source", "refunds"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(line.contains("a mirror has no sources"), "{line}");
    // A bucket is a mirror or has sources, not both.
    let refused = rnats.run(
        &[
            &[
                "kv", "add", "both", "--mirror", "orders", "--source", "refunds",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    // A mirror of a bucket in another domain reads it through that domain's API.
    run(&[
        "kv",
        "add",
        "remote",
        "--mirror",
        "orders",
        "--mirror-domain",
        "hub",
    ]);
    let remote = config_of("remote");
    assert_eq!(
        remote["mirror"]["external"]["api"], "$JS.hub.API",
        "{remote}"
    );

    // Republishing: headers only, so the value's size comes in a header of an empty message.
    let added = run(&[
        "kv",
        "add",
        "watched",
        "--republish-destination",
        "changes.>",
        "--republish-headers",
    ]);
    assert!(added.contains("Republishing Headers"), "{added}");
    let client = rnats::blocking::connect(url.as_str()).expect("connect");
    let mut changes = client.subscribe("changes.>").expect("subscribe");
    client.flush().expect("flush");
    run(&["kv", "put", "watched", "color", "blue"]);
    let change = changes
        .next_timeout(std::time::Duration::from_secs(10))
        .expect("a republished change")
        .expect("the subscription is open");
    assert_eq!(change.subject.as_str(), "changes.$KV.watched.color");
    assert!(change.payload.is_empty(), "headers only");
    let headers = change.headers.expect("republished headers");
    assert_eq!(
        headers.get("Nats-Msg-Size").map(|v| v.as_str()),
        Some("4"),
        "{headers:?}"
    );
    run(&["kv", "edit", "watched", "--description", "kept"]);
    assert_eq!(config_of("watched")["republish"]["dest"], "changes.>");
    run(&["kv", "edit", "watched", "--no-republish"]);
    assert!(
        config_of("watched")
            .get("republish")
            .is_none_or(|r| r.is_null())
    );

    // Placement reaches the server (a server outside a cluster keeps it and places anyway).
    run(&[
        "kv",
        "add",
        "placed",
        "--tags",
        "ssd",
        "--tags",
        "fast",
        "--cluster",
        "east",
    ]);
    let placed = config_of("placed");
    assert_eq!(placed["placement"]["cluster"], "east", "{placed}");
    assert_eq!(
        placed["placement"]["tags"],
        json!(["ssd", "fast"]),
        "{placed}"
    );
    run(&["kv", "edit", "placed", "--tags", "hdd"]);
    let placed = config_of("placed");
    assert_eq!(placed["placement"]["tags"], json!(["hdd"]), "{placed}");
    assert_eq!(
        placed["placement"]["cluster"], "east",
        "an edit keeps the cluster"
    );
}
