//! `rnats consumer edit|pause|resume|unpin|reset|report|sub|find`, and
//! `req` to a pull consumer, against a real nats-server.

mod common;

use common::{Rnats, assert_success, json_lines, write};
use rnats_test_server::NatsServer;

/// A server with stream ORDERS on `orders.>` holding `n` messages.
fn orders(rnats: &Rnats, n: usize) -> NatsServer {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    rnats.ok(&[
        "stream",
        "add",
        "ORDERS",
        "--subjects",
        "orders.>",
        "--storage",
        "memory",
        "-s",
        &url,
    ]);
    if n > 0 {
        rnats.ok(&[
            "pub",
            "orders.{{Count}}",
            "order {{Count}}",
            "--count",
            &n.to_string(),
            "-s",
            &url,
        ]);
    }
    server
}

#[test]
fn edit_changes_only_what_is_given() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 0);
    let url = server.url();
    let s = ["-s", url.as_str()];
    rnats.ok(&[
        &[
            "consumer",
            "add",
            "ORDERS",
            "billing",
            "--filter",
            "orders.new",
            "--max-deliver",
            "5",
        ][..],
        &s[..],
    ]
    .concat());
    let dry = rnats.json(
        &[
            &[
                "consumer",
                "edit",
                "ORDERS",
                "billing",
                "--max-deliver",
                "9",
                "--dry-run",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(dry["max_deliver"], 9);
    let info = rnats.json(
        &[
            &["consumer", "info", "ORDERS", "billing", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(
        info["config"]["max_deliver"], 5,
        "a dry run changes nothing"
    );

    // natscli's spelling of the ack wait: --wait.
    let info = rnats.json(
        &[
            &[
                "consumer",
                "edit",
                "ORDERS",
                "billing",
                "--max-deliver",
                "10",
                "--wait",
                "45s",
                "--description",
                "Billing",
                "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(info["config"]["max_deliver"], 10);
    assert_eq!(info["config"]["ack_wait"], 45_000_000_000u64);
    assert_eq!(info["config"]["description"], "Billing");
    assert_eq!(info["config"]["filter_subject"], "orders.new", "kept");
    let text = rnats.ok(&[
        &[
            "consumer",
            "edit",
            "ORDERS",
            "billing",
            "--max-pending",
            "50",
        ][..],
        &s[..],
    ]
    .concat());
    assert!(text.contains("Max ack pending: 50"), "{text}");

    let line = rnats.fails(
        &[
            &[
                "consumer",
                "edit",
                "ORDERS",
                "missing",
                "--max-deliver",
                "1",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(
        line.starts_with("error: cannot edit consumer missing on ORDERS"),
        "{line}"
    );
}

#[test]
fn pause_resume_and_report() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 3);
    let url = server.url();
    let s = ["-s", url.as_str()];
    rnats.ok(&[
        &["consumer", "add", "ORDERS", "billing", "--defaults"][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[
        &[
            "consumer",
            "add",
            "ORDERS",
            "audit",
            "--target",
            "audit.orders",
            "--deliver",
            "all",
        ][..],
        &s[..],
    ]
    .concat());

    let line = rnats.fails(
        &[
            &["consumer", "pause", "ORDERS", "billing", "1h"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(line.contains("--force"), "{line}");
    let line = rnats.fails(
        &[
            &["consumer", "pause", "ORDERS", "billing", "later", "-f"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(line.contains("later"), "{line}");
    let out = rnats.ok(&[
        &[
            "consumer",
            "pause",
            "ORDERS",
            "billing",
            "2099-01-02 03:04:05",
            "--force",
        ][..],
        &s[..],
    ]
    .concat());
    assert!(
        out.starts_with("Paused consumer billing on ORDERS until 2099-01-02 03:04:05 UTC ("),
        "{out}"
    );
    let info = rnats.json(
        &[
            &["consumer", "info", "ORDERS", "billing", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(info["paused"], true);

    let report = rnats.ok(&[&["consumer", "report", "ORDERS"][..], &s[..]].concat());
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(
        lines[0], "Consumer report for ORDERS with 2 consumers",
        "{report}"
    );
    assert!(lines[2].starts_with("Consumer"), "{report}");
    assert!(
        lines[3].starts_with("audit") && lines[3].contains("Push"),
        "{report}"
    );
    let billing: Vec<&str> = lines[4].split_whitespace().collect();
    assert_eq!(
        billing[..4],
        ["billing", "Pull", "(paused)", "Explicit"],
        "{report}"
    );
    assert_eq!(
        billing[billing.len() - 4..],
        ["0", "0", "3", "0"],
        "{report}"
    );
    let all = rnats.json(&[&["consumer", "report", "ORDERS", "--json"][..], &s[..]].concat());
    assert_eq!(all.as_array().map(Vec::len), Some(2));

    let out = rnats.ok(&[
        &["consumer", "resume", "ORDERS", "billing", "-f"][..],
        &s[..],
    ]
    .concat());
    assert_eq!(out, "Consumer billing on ORDERS is not paused\n");
    let info = rnats.json(
        &[
            &["consumer", "info", "ORDERS", "billing", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_ne!(info["paused"], true);
}

#[test]
fn unpin_a_pinned_client_group() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 1);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("pinned.json");
    write(
        &config,
        r#"{"durable_name": "workers", "ack_policy": "explicit", "deliver_policy": "all",
            "priority_policy": "pinned_client", "priority_groups": ["jobs"],
            "priority_timeout": 120000000000}"#,
    );
    let config = config.to_string_lossy().into_owned();
    rnats.ok(&[
        &["consumer", "add", "ORDERS", "workers", "--config", &config][..],
        &s[..],
    ]
    .concat());
    let out = rnats.ok(&[
        &["consumer", "unpin", "ORDERS", "workers", "jobs", "--force"][..],
        &s[..],
    ]
    .concat());
    assert_eq!(out, "Unpinned group jobs of consumer workers on ORDERS\n");
    let line = rnats.fails(
        &[
            &["consumer", "unpin", "ORDERS", "workers", "other", "-f"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(
        line.starts_with("error: cannot unpin group other"),
        "{line}"
    );

    // natscli's priority-group flags make the same kinds of consumer without a file.
    let info = |name: &str| {
        rnats.json(&[&["consumer", "info", "ORDERS", name, "--json"][..], &s[..]].concat())
    };
    rnats.ok(&[
        &[
            "consumer",
            "add",
            "ORDERS",
            "pinned",
            "--pull",
            "--pinned-groups",
            "a,b",
            "--pinned-ttl",
            "3m",
            "--defaults",
        ][..],
        &s[..],
    ]
    .concat());
    let pinned = info("pinned");
    assert_eq!(
        pinned["config"]["priority_policy"], "pinned_client",
        "{pinned}"
    );
    assert_eq!(
        pinned["config"]["priority_groups"],
        serde_json::json!(["a", "b"])
    );
    assert_eq!(pinned["config"]["priority_timeout"], 180_000_000_000_u64);
    rnats.ok(&[
        &[
            "consumer",
            "add",
            "ORDERS",
            "over",
            "--overflow-groups",
            "x",
            "--defaults",
        ][..],
        &s[..],
    ]
    .concat());
    assert_eq!(info("over")["config"]["priority_policy"], "overflow");
    rnats.ok(&[
        &[
            "consumer",
            "add",
            "ORDERS",
            "prio",
            "--priority-groups",
            "p",
            "--priority-policy",
            "prioritized",
        ][..],
        &s[..],
    ]
    .concat());
    assert_eq!(
        info("prio")["config"]["priority_groups"],
        serde_json::json!(["p"])
    );
    rnats.ok(&[
        &["consumer", "edit", "ORDERS", "pinned", "--pinned-ttl", "5m"][..],
        &s[..],
    ]
    .concat());
    assert_eq!(
        info("pinned")["config"]["priority_timeout"],
        300_000_000_000_u64
    );
    let out = rnats.run(&[
        "consumer",
        "add",
        "ORDERS",
        "bad",
        "--pinned-groups",
        "a",
        "--overflow-groups",
        "b",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

/// A consumer's `--config` file as natscli reads one: fields left out are the server's
/// defaults, the name may come from the file, and `consumer info --json`'s output will do.
#[test]
fn add_takes_a_sparse_config_file_or_another_consumers_info() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 0);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let dir = tempfile::tempdir().expect("temp dir");
    let sparse = dir.path().join("sparse.json");
    write(
        &sparse,
        r#"{"durable_name":"fromfile","filter_subject":"orders.eu.>"}"#,
    );
    let sparse = sparse.to_string_lossy().into_owned();
    let made = rnats.json(
        &[
            &["consumer", "add", "ORDERS", "--config", &sparse, "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(made["name"], "fromfile", "{made}");
    assert_eq!(made["config"]["deliver_policy"], "all", "{made}");
    assert_eq!(made["config"]["ack_policy"], "none", "{made}");
    assert_eq!(made["config"]["filter_subject"], "orders.eu.>", "{made}");

    let info = dir.path().join("info.json");
    write(&info, &made.to_string());
    let info = info.to_string_lossy().into_owned();
    let copied = rnats.json(
        &[
            &[
                "consumer", "add", "ORDERS", "again", "--config", &info, "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(copied["name"], "again", "{copied}");
    assert_eq!(
        copied["config"]["filter_subject"], "orders.eu.>",
        "{copied}"
    );
    assert_eq!(copied["config"]["ack_policy"], "none", "{copied}");

    let nameless = dir.path().join("nameless.json");
    write(&nameless, "{}");
    let nameless = nameless.to_string_lossy().into_owned();
    let line = rnats.fails(
        &[
            &["consumer", "add", "ORDERS", "--config", &nameless][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(line.contains("give a NAME"), "{line}");
    let out = rnats.run(&[&["consumer", "add", "ORDERS"][..], &s[..]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("<NAME>"), "{stderr}");
}

/// natscli's way to read one message from a pull consumer by hand: a request to its
/// next-message API. The answer comes on the stored message's subject, not the inbox's.
#[test]
fn req_to_a_pull_consumers_next_message_api_prints_the_stored_message() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 2);
    let url = server.url();
    let s = ["-s", url.as_str()];
    rnats.ok(&[
        &["consumer", "add", "ORDERS", "picker", "--pull"][..],
        &s[..],
    ]
    .concat());
    let next = "$JS.API.CONSUMER.MSG.NEXT.ORDERS.picker";
    let first =
        rnats.json(&[&["req", next, "", "--json", "--timeout", "10s"][..], &s[..]].concat());
    assert_eq!(first["subject"], "orders.1", "{first}");
    assert_eq!(first["data"], "order 1", "{first}");
    let second = rnats.ok(&[&["req", next, "", "--raw", "--timeout", "10s"][..], &s[..]].concat());
    assert_eq!(second, "order 2\n");
}

#[test]
fn sub_reads_pull_and_push_consumers() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 3);
    let url = server.url();
    let s = ["-s", url.as_str()];
    rnats.ok(&[&["consumer", "add", "ORDERS", "billing"][..], &s[..]].concat());
    let out = rnats.ok(&[
        &[
            "consumer", "sub", "ORDERS", "billing", "--count", "3", "--raw",
        ][..],
        &s[..],
    ]
    .concat());
    assert_eq!(out, "order 1\norder 2\norder 3\n");
    let info = rnats.json(
        &[
            &["consumer", "info", "ORDERS", "billing", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(info["ack_floor"]["stream_seq"], 3, "acked");

    rnats.ok(&[
        &[
            "consumer",
            "add",
            "ORDERS",
            "audit",
            "--target",
            "audit.orders",
        ][..],
        &s[..],
    ]
    .concat());
    let mut sub = rnats.spawn_ready(
        &[
            &[
                "consumer", "sub", "ORDERS", "audit", "--count", "4", "--json",
            ][..],
            &s[..],
        ]
        .concat(),
        "Consuming from push consumer audit",
    );
    rnats.ok(&[&["pub", "orders.late", "order 4"][..], &s[..]].concat());
    let out = sub.finish();
    assert_success(&out, &["consumer", "sub"]);
    let messages = json_lines(&String::from_utf8_lossy(&out.stdout));
    let seqs: Vec<u64> = messages.iter().filter_map(|m| m["seq"].as_u64()).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert_eq!(messages[3]["data"], "order 4");
}

#[test]
fn add_takes_natscli_push_pull_and_lifetime_flags() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let info = |name: &str| {
        rnats.json(&[&["consumer", "info", "ORDERS", name, "--json"][..], &s[..]].concat())
    };
    run(&["stream", "add", "ORDERS", "--subjects", "orders.>"]);
    run(&[
        "consumer",
        "add",
        "ORDERS",
        "pushy",
        "--target",
        "push.orders",
        "--heartbeat",
        "5s",
        "--flow-control",
        "--inactive-threshold",
        "1h",
        "--headers-only",
        "--metadata",
        "team=billing",
        "--defaults",
    ]);
    let c = &info("pushy")["config"];
    assert_eq!(c["idle_heartbeat"], 5_000_000_000u64, "{c}");
    assert_eq!(c["flow_control"], true, "{c}");
    assert_eq!(c["inactive_threshold"], 3_600_000_000_000u64, "{c}");
    assert_eq!(c["headers_only"], true, "{c}");
    assert_eq!(c["metadata"]["team"], "billing", "{c}");

    // ADR-60's policy; the server sets the flow control and heartbeat it needs.
    run(&[
        "consumer",
        "add",
        "ORDERS",
        "mirrorish",
        "--target",
        "push.mirror",
        "--ack",
        "flow_control",
        "--max-pending",
        "100",
        "--defaults",
    ]);
    let c = &info("mirrorish")["config"];
    assert_eq!(c["ack_policy"], "flow_control", "{c}");
    assert_eq!(c["flow_control"], true, "{c}");

    run(&[
        "consumer",
        "add",
        "ORDERS",
        "puller",
        "--max-waiting",
        "10",
        "--max-pull-batch",
        "5",
        "--max-pull-expire",
        "10s",
        "--max-pull-bytes",
        "1024",
        "--memory",
    ]);
    let c = &info("puller")["config"];
    assert_eq!(c["max_waiting"], 10, "{c}");
    assert_eq!(c["max_batch"], 5, "{c}");
    assert_eq!(c["max_expires"], 10_000_000_000u64, "{c}");
    assert_eq!(c["max_bytes"], 1024, "{c}");
    assert_eq!(c["mem_storage"], true, "{c}");

    // natscli's stream edit flags for the newer stream settings.
    run(&[
        "stream",
        "edit",
        "ORDERS",
        "--allow-batch",
        "--allow-schedules",
        "--allow-msg-ttl",
        "--metadata",
        "owner=ops",
        "--subject-del-markers-ttl",
        "1m",
    ]);
    let stream = rnats.json(&[&["stream", "info", "ORDERS", "--json"][..], &s[..]].concat());
    let c = &stream["config"];
    assert_eq!(c["allow_atomic"], true, "{c}");
    assert_eq!(c["allow_msg_schedules"], true, "{c}");
    assert_eq!(c["allow_msg_ttl"], true, "{c}");
    assert_eq!(c["metadata"]["owner"], "ops", "{c}");
    assert_eq!(c["subject_delete_marker_ttl"], 60_000_000_000u64, "{c}");
    let text = run(&["stream", "info", "ORDERS"]);
    assert!(text.contains("owner=ops"), "{text}");
}

#[test]
fn reset_moves_a_consumer_back_and_shows_its_state() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 5);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["consumer", "add", "ORDERS", "billing", "--defaults"]);
    run(&["consumer", "next", "ORDERS", "billing", "--count", "5"]);
    let info = rnats.json(
        &[
            &["consumer", "info", "ORDERS", "billing", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(info["ack_floor"]["stream_seq"], 5, "{info}");

    let line = rnats.fails(&[&["consumer", "reset", "ORDERS", "billing"][..], &s[..]].concat());
    assert!(line.contains("--force"), "{line}");
    let out = rnats.run(
        &[
            &[
                "consumer",
                "reset",
                "ORDERS",
                "billing",
                "--sequence",
                "3",
                "-f",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_success(&out, &["consumer", "reset"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Reset consumer billing on ORDERS to stream sequence 3"),
        "{stderr}"
    );
    let state = String::from_utf8_lossy(&out.stdout);
    assert!(state.starts_with("State:\n"), "{state}");
    assert!(state.contains("Pending:"), "{state}");
    let info = rnats.json(
        &[
            &["consumer", "info", "ORDERS", "billing", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(info["num_pending"], 3, "{info}");
    let next = run(&["consumer", "next", "ORDERS", "billing"]);
    assert!(next.contains("[ORDERS#3]"), "{next}");

    let line =
        rnats.fails(&[&["consumer", "reset", "ORDERS", "nobody", "-f"][..], &s[..]].concat());
    assert!(line.contains("nobody"), "{line}");
}

#[test]
fn find_keeps_the_consumers_that_pass_every_filter_and_invert_turns_each_around() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 5);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let find = |args: &[&str]| -> Vec<String> {
        let out = run(&[&["consumer", "find", "ORDERS"][..], args].concat());
        out.lines().map(str::to_owned).collect()
    };
    // READ has read two messages without acking them; IDLE has read nothing; PUSH is a push
    // consumer with a subscriber on its deliver subject.
    run(&["consumer", "add", "ORDERS", "READ", "--pull", "--defaults"]);
    run(&["consumer", "add", "ORDERS", "IDLE", "--pull", "--defaults"]);
    run(&[
        "consumer",
        "add",
        "ORDERS",
        "PUSH",
        "--deliver-subject",
        "deliver.push",
        "--deliver",
        "new",
    ]);
    run(&[
        "consumer", "next", "ORDERS", "READ", "--count", "2", "--no-ack",
    ]);

    assert_eq!(find(&[]), ["IDLE", "PUSH", "READ"]);
    assert_eq!(find(&["--pull"]), ["IDLE", "READ"]);
    assert_eq!(find(&["--push"]), ["PUSH"]);
    assert_eq!(find(&["--pull", "--invert"]), ["PUSH"]);
    // Counts keep consumers with at least one, fewer than N (inverted: more than N).
    assert_eq!(find(&["--ack-pending", "3"]), ["READ"]);
    assert!(find(&["--ack-pending", "2"]).is_empty());
    assert_eq!(find(&["--ack-pending", "1", "--invert"]), ["READ"]);
    assert_eq!(find(&["--pending", "4"]), ["READ"], "3 left of 5");
    assert_eq!(find(&["--pending", "4", "--invert"]), ["IDLE"]);
    assert!(find(&["--waiting", "5"]).is_empty(), "no pull is waiting");
    assert!(find(&["--waiting", "5", "--invert"]).is_empty());
    // As in natscli, 0 (a count, a span) is no filter at all, inverted or not.
    for zero in [
        &["--waiting", "0"][..],
        &["--ack-pending", "0"],
        &["--idle", "0s"],
    ] {
        assert_eq!(find(&[zero, &["--invert"]].concat()).len(), 3, "{zero:?}");
    }
    // Never delivered counts as idle; a delivery a moment ago does not.
    assert_eq!(find(&["--idle", "1h"]), ["IDLE", "PUSH"]);
    assert_eq!(find(&["--idle", "1h", "--invert"]), ["READ"]);
    assert!(find(&["--created", "1h"]).is_empty());
    assert_eq!(find(&["--created", "1h", "--invert"]).len(), 3);
    assert_eq!(find(&["--replicas", "1"]).len(), 3);
    assert!(find(&["--replicas", "3", "--invert"]).is_empty());
    assert_eq!(find(&["--pull", "--idle", "1h"]), ["IDLE"], "every filter");

    // Bound: a push consumer once its subscriber is in place (the server notes the interest
    // on its own; the wait is on that event, bounded).
    assert!(find(&["--bound"]).is_empty());
    let _subscriber = rnats.spawn_ready(
        &["sub", "deliver.push", "--count", "100", "-s", &url],
        "Subscribed to",
    );
    let bound = || {
        let info = rnats.json(
            &[
                &["consumer", "info", "ORDERS", "PUSH", "--json"][..],
                &s[..],
            ]
            .concat(),
        );
        info["push_bound"] == true
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !bound() {
        assert!(std::time::Instant::now() < deadline, "PUSH never bound");
    }
    assert_eq!(find(&["--bound"]), ["PUSH"]);
    assert_eq!(find(&["--bound", "--invert"]), ["IDLE", "READ"]);

    // Pinned: a client is pinned in each group of ONE, in one of the two groups of TWO.
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, groups) in [("ONE", r#"["jobs"]"#), ("TWO", r#"["jobs", "other"]"#)] {
        let config = dir.path().join(format!("{name}.json"));
        write(
            &config,
            &format!(
                r#"{{"durable_name": "{name}", "ack_policy": "explicit", "deliver_policy": "all",
                    "priority_policy": "pinned_client", "priority_groups": {groups},
                    "priority_timeout": 600000000000}}"#
            ),
        );
        let config = config.to_string_lossy().into_owned();
        run(&["consumer", "add", "ORDERS", name, "--config", &config]);
        // A pull in group jobs pins its client: its message arrives with the pin.
        let inbox = format!("pin.{name}");
        let mut puller = rnats.spawn_ready(
            &["sub", &inbox, "--count", "1", "-s", &url],
            "Subscribed to",
        );
        let pull = format!("$JS.API.CONSUMER.MSG.NEXT.ORDERS.{name}");
        run(&[
            "pub",
            &pull,
            r#"{"batch":1,"group":"jobs"}"#,
            "--reply",
            &inbox,
        ]);
        let pulled = puller.finish();
        assert_success(&pulled, &["sub", &inbox]);
        assert!(
            String::from_utf8_lossy(&pulled.stdout).contains("Nats-Pin-Id"),
            "{}",
            String::from_utf8_lossy(&pulled.stdout)
        );
    }
    assert_eq!(find(&["--pinned"]), ["ONE"]);
    assert_eq!(find(&["--pinned", "--invert"]), ["TWO"]);

    // The server's infos, natscli's alias, a missing stream, and bad values.
    let json = rnats.json(
        &[
            &["consumer", "query", "ORDERS", "--push", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(json[0]["name"], "PUSH", "{json}");
    assert_eq!(json.as_array().map(Vec::len), Some(1), "{json}");
    let line = rnats.fails(&[&["consumer", "find", "NOPE"][..], &s[..]].concat());
    assert!(line.contains("stream not found"), "{line}");
    for bad in [
        &["--idle", "soon"][..],
        &["--waiting", "-1"],
        &["--pending", "lots"],
        &["--pull", "--push"],
    ] {
        let out = rnats.run(&[&["consumer", "find", "ORDERS"][..], bad, &s[..]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn state_shows_the_state_block_alone_as_info_does() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 5);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["consumer", "add", "ORDERS", "billing", "--ack", "explicit"]);
    // Two fetched and acked (each ack confirmed by the server), three left.
    run(&["consumer", "next", "ORDERS", "billing", "--count", "2"]);

    let state = run(&["consumer", "state", "ORDERS", "billing"]);
    assert!(
        state.starts_with("State of consumer billing on ORDERS created "),
        "{state}"
    );
    for fact in [
        "\nState:\n",
        "Last delivered: consumer seq 2, stream seq 2\n",
        "Ack floor: consumer seq 2, stream seq 2\n",
        "Pending: 3\n",
        "Ack pending: 0\n",
        "Redelivered: 0\n",
    ] {
        assert!(state.contains(fact), "{fact:?} in {state}");
    }
    assert!(!state.contains("Configuration:"), "{state}");
    // The whole info ends with the same block.
    let info = run(&["consumer", "info", "ORDERS", "billing"]);
    let block = &state[state.find("\nState:\n").expect("a state block")..];
    assert!(
        info.contains("Configuration:") && info.ends_with(block),
        "{info}"
    );

    // natscli prints the whole info as JSON.
    let json = rnats.json(
        &[
            &["consumer", "state", "ORDERS", "billing", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(json["num_pending"], 3, "{json}");
    assert_eq!(json["config"]["durable_name"], "billing", "{json}");

    let line = rnats.fails(&[&["consumer", "state", "ORDERS", "nobody"][..], &s[..]].concat());
    assert!(
        line.starts_with("error: cannot read consumer nobody on ORDERS")
            && line.contains("consumer not found"),
        "{line}"
    );
}

#[test]
fn copy_makes_a_consumer_from_another_config_with_the_flags_over_it() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 3);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    run(&[
        "consumer",
        "add",
        "ORDERS",
        "billing",
        "--filter",
        "orders.2",
        "--max-deliver",
        "5",
        "--description",
        "Billing",
    ]);
    run(&["consumer", "next", "ORDERS", "billing"]);

    // natscli's override flags: --description, --wait (the ack wait), --max-deliver, ...
    let copy = json(&[
        "consumer",
        "copy",
        "ORDERS",
        "billing",
        "audit",
        "--description",
        "Audit",
        "--wait",
        "45s",
        "--json",
    ]);
    assert_eq!(copy["name"], "audit", "{copy}");
    assert_eq!(copy["config"]["durable_name"], "audit", "{copy}");
    assert_eq!(copy["config"]["description"], "Audit", "{copy}");
    assert_eq!(copy["config"]["ack_wait"], 45_000_000_000u64, "{copy}");
    assert_eq!(copy["config"]["filter_subject"], "orders.2", "kept: {copy}");
    assert_eq!(copy["config"]["max_deliver"], 5, "kept: {copy}");
    // The configuration, not the state: the copy has delivered nothing yet.
    assert_eq!(copy["delivered"]["stream_seq"], 0, "{copy}");
    assert_eq!(copy["num_pending"], 1, "{copy}");
    let source = json(&["consumer", "info", "ORDERS", "billing", "--json"]);
    assert_eq!(source["config"]["description"], "Billing", "{source}");
    assert_eq!(source["delivered"]["stream_seq"], 2, "{source}");

    // The `cp` alias, and the human form.
    let out = rnats.run(
        &[
            &["consumer", "cp", "ORDERS", "billing", "audit2"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_success(&out, &["consumer", "cp"]);
    // natscli prints the info alone: the server answers alike for a consumer made and one
    // already there with this configuration, so nothing claims it was created.
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("Consumer audit2 on ORDERS created ") && text.contains("Billing"),
        "{text}"
    );

    // A push consumer copied with --pull loses what only push delivery has.
    run(&[
        "consumer",
        "add",
        "ORDERS",
        "pusher",
        "--deliver-subject",
        "out.push",
        "--deliver-group",
        "workers",
        "--heartbeat",
        "5s",
        "--flow-control",
        "--bps",
        "100000",
        "--max-deliver",
        "7",
    ]);
    let pushed = json(&["consumer", "info", "ORDERS", "pusher", "--json"]);
    assert_eq!(pushed["config"]["rate_limit_bps"], 100_000, "{pushed}");
    let pulled = json(&[
        "consumer", "copy", "ORDERS", "pusher", "puller", "--pull", "--json",
    ]);
    for field in [
        "deliver_subject",
        "deliver_group",
        "idle_heartbeat",
        "flow_control",
        "rate_limit_bps",
    ] {
        assert!(pulled["config"].get(field).is_none(), "{field}: {pulled}");
    }
    assert_eq!(pulled["config"]["max_deliver"], 7, "kept: {pulled}");
    assert_eq!(pulled["config"]["max_waiting"], 512, "{pulled}");
    // Acks by flow control need push delivery (ADR-60): the pull copy acks explicitly.
    run(&[
        "consumer",
        "add",
        "ORDERS",
        "fcpush",
        "--target",
        "out.fc",
        "--ack",
        "flow_control",
        "--max-pending",
        "100",
    ]);
    let fcpull = json(&[
        "consumer", "copy", "ORDERS", "fcpush", "fcpull", "--pull", "--json",
    ]);
    assert_eq!(fcpull["config"]["ack_policy"], "explicit", "{fcpull}");
    assert!(fcpull["config"].get("idle_heartbeat").is_none(), "{fcpull}");

    let line = rnats.fails(&[&["consumer", "copy", "ORDERS", "nobody", "x"][..], &s[..]].concat());
    assert!(
        line.starts_with("error: cannot read consumer nobody on ORDERS")
            && line.contains("consumer not found"),
        "{line}"
    );
    // The destination must be new (or the same configuration): the server's answer to a
    // create-only request for a consumer that is there with another configuration.
    let line = rnats.fails(
        &[
            &[
                "consumer",
                "copy",
                "ORDERS",
                "billing",
                "audit",
                "--description",
                "Other",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(
        line.starts_with("error: cannot create consumer audit on ORDERS")
            && line.contains("consumer already exists"),
        "{line}"
    );
    let audit = json(&["consumer", "info", "ORDERS", "audit", "--json"]);
    assert_eq!(
        audit["config"]["description"], "Audit",
        "unchanged: {audit}"
    );
    // The configuration is SOURCE's: copy has no --config at all (a usage error).
    let out = rnats.run(
        &[
            &[
                "consumer", "copy", "ORDERS", "billing", "other", "--config", "c.json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let help = run(&["consumer", "copy", "--help"]);
    assert!(!help.contains("--config <FILE>"), "{help}");
}

#[test]
fn copy_and_edit_filters_replace_one_filter_field_with_the_other() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 0);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    run(&["consumer", "add", "ORDERS", "one", "--filter", "orders.1"]);
    run(&[
        "consumer", "add", "ORDERS", "two", "--filter", "orders.1", "--filter", "orders.2",
    ]);

    // The server refuses filter_subject and filter_subjects both set.
    let many = json(&[
        "consumer", "copy", "ORDERS", "one", "many", "--filter", "orders.3", "--filter",
        "orders.4", "--json",
    ]);
    assert!(many["config"].get("filter_subject").is_none(), "{many}");
    assert_eq!(
        many["config"]["filter_subjects"],
        serde_json::json!(["orders.3", "orders.4"]),
        "{many}"
    );
    let single = json(&[
        "consumer", "copy", "ORDERS", "two", "single", "--filter", "orders.3", "--json",
    ]);
    assert_eq!(single["config"]["filter_subject"], "orders.3", "{single}");
    assert!(
        single["config"].get("filter_subjects").is_none(),
        "{single}"
    );
    // A lone empty filter leaves none.
    let all = json(&[
        "consumer", "copy", "ORDERS", "two", "all", "--filter", "", "--json",
    ]);
    for field in ["filter_subject", "filter_subjects"] {
        assert!(all["config"].get(field).is_none(), "{field}: {all}");
    }

    // The same flags on edit.
    let edited = json(&[
        "consumer", "edit", "ORDERS", "two", "--filter", "orders.5", "--json",
    ]);
    assert_eq!(edited["config"]["filter_subject"], "orders.5", "{edited}");
    assert!(
        edited["config"].get("filter_subjects").is_none(),
        "{edited}"
    );
    let edited = json(&[
        "consumer", "edit", "ORDERS", "one", "--filter", "orders.6", "--filter", "orders.7",
        "--json",
    ]);
    assert!(edited["config"].get("filter_subject").is_none(), "{edited}");
    assert_eq!(
        edited["config"]["filter_subjects"],
        serde_json::json!(["orders.6", "orders.7"]),
        "{edited}"
    );
}

#[test]
fn a_new_consumer_changing_mode_drops_the_other_modes_settings_and_edit_has_no_pull() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 0);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    run(&[
        "consumer",
        "add",
        "ORDERS",
        "workers",
        "--pull",
        "--max-pull-batch",
        "10",
        "--max-pull-expire",
        "30s",
        "--pinned-groups",
        "jobs",
        "--pinned-ttl",
        "2m",
        "--max-deliver",
        "4",
    ]);
    let pull = json(&["consumer", "info", "ORDERS", "workers", "--json"]);
    assert_eq!(pull["config"]["max_waiting"], 512, "the server's: {pull}");

    // The server refuses max_waiting and priority groups on a push consumer.
    let push = json(&[
        "consumer", "copy", "ORDERS", "workers", "pusher", "--target", "out.push", "--json",
    ]);
    assert_eq!(push["config"]["deliver_subject"], "out.push", "{push}");
    assert_eq!(push["config"]["max_deliver"], 4, "kept: {push}");
    for field in [
        "max_waiting",
        "max_batch",
        "max_expires",
        "priority_groups",
        "priority_policy",
        "priority_timeout",
    ] {
        assert!(push["config"].get(field).is_none(), "{field}: {push}");
    }

    // add --config with --pull makes a push file pull; a flag over a file, as elsewhere.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("push.json");
    write(&file, &push["config"].to_string());
    let file = file.to_str().expect("utf-8 path");
    let made = json(&[
        "consumer", "add", "ORDERS", "fromfile", "--config", file, "--pull", "--json",
    ]);
    assert!(made["config"].get("deliver_subject").is_none(), "{made}");
    assert_eq!(made["config"]["max_deliver"], 4, "{made}");

    // natscli's edit has no --pull (the server never turns a consumer pull or push).
    let out = rnats.run(
        &[
            &["consumer", "edit", "ORDERS", "pusher", "--pull"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let help = run(&["consumer", "edit", "--help"]);
    assert!(!help.contains("--pull\n"), "{help}");
    let kept = json(&["consumer", "info", "ORDERS", "pusher", "--json"]);
    assert_eq!(kept["config"]["deliver_subject"], "out.push", "{kept}");
}

#[test]
fn add_validate_and_output_check_the_config_and_make_nothing() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 0);
    let url = server.url();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("billing.json");
    let file = file.to_str().expect("utf-8 path");
    // Neither needs a server: this address has none.
    let offline = ["-s", "nats://127.0.0.1:1"];
    let add = [
        "consumer",
        "add",
        "ORDERS",
        "billing",
        "--filter",
        "orders.new",
        "--max-deliver",
        "5",
    ];

    let out = rnats.ok(&[&add[..], &["--validate"], &offline[..]].concat());
    let (json, verdict) = out.split_once("\n\n").expect("a blank line");
    assert_eq!(verdict, "Configuration is a valid consumer\n", "{out}");
    let config: serde_json::Value = serde_json::from_str(json).expect("JSON");
    assert_eq!(config["durable_name"], "billing", "{out}");
    assert_eq!(config["filter_subject"], "orders.new", "{out}");

    let run = rnats.run(&[&add[..], &["--output", file], &offline[..]].concat());
    assert_success(&run, &["consumer", "add", "--output"]);
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file).expect("read")).expect("JSON");
    assert_eq!(saved, config);
    // Nothing was made, and the saved file makes the consumer.
    assert_eq!(
        rnats.ok(&["consumer", "ls", "ORDERS", "-n", "-s", &url]),
        ""
    );
    rnats.ok(&[
        "consumer", "add", "ORDERS", "billing", "--config", file, "-s", &url,
    ]);
    let info = rnats.json(&[
        "consumer", "info", "ORDERS", "billing", "--json", "-s", &url,
    ]);
    assert_eq!(info["config"]["max_deliver"], 5, "{info}");
    assert_eq!(info["config"]["filter_subject"], "orders.new", "{info}");

    let line = rnats.fails(&[
        "consumer",
        "add",
        "ORDERS",
        "bad name",
        "--max-waiting=-1",
        "--validate",
        "-s",
        "nats://127.0.0.1:1",
    ]);
    assert_eq!(
        line,
        "error: invalid consumer configuration: the consumer name \"bad name\" holds ' '; \
         max_waiting is -1, below 0"
    );
    let out = rnats.run(&[&add[..], &["--validate", "--json"], &offline[..]].concat());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ls_json_prints_the_names_as_natscli_does() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 0);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let json = |args: &[&str]| rnats.json(&[args, &s[..]].concat());
    assert_eq!(
        json(&["consumer", "ls", "ORDERS", "-j"]),
        serde_json::json!([])
    );
    for name in ["zeta", "alpha", "mid"] {
        rnats.ok(&[&["consumer", "add", "ORDERS", name][..], &s[..]].concat());
    }
    let sorted = serde_json::json!(["alpha", "mid", "zeta"]);
    assert_eq!(json(&["consumer", "ls", "ORDERS", "--json"]), sorted);
    // natscli's -a (its stream picker's) is taken, before or after the command.
    assert_eq!(json(&["consumer", "-a", "ls", "ORDERS", "-j"]), sorted);
    assert_eq!(
        json(&["consumer", "info", "ORDERS", "mid", "-j"])["name"],
        "mid"
    );
    assert_eq!(
        json(&["consumer", "state", "ORDERS", "mid", "-j"])["name"],
        "mid"
    );
}

#[test]
fn add_takes_natscli_spellings_of_deliver_filter_and_negated_flags() {
    let rnats = Rnats::new();
    let server = orders(&rnats, 3);
    let url = server.url();
    let s = ["-s", url.as_str()];
    let config = |args: &[&str]| {
        let info = rnats.json(&[args, &["-j"], &s[..]].concat());
        info["config"].clone()
    };
    // natscli's `subject` is the last message of each subject; with no filter natscli
    // filters on every subject.
    let c = config(&["consumer", "add", "ORDERS", "per", "--deliver", "subject"]);
    assert_eq!(c["deliver_policy"], "last_per_subject", "{c}");
    assert_eq!(c["filter_subject"], ">", "{c}");
    let c = config(&[
        "consumer",
        "add",
        "ORDERS",
        "last",
        "--deliver",
        "last-per-subject",
    ]);
    assert_eq!(c["filter_subject"], ">", "{c}");
    // `next` is natscli's `new`; filters split on spaces and commas.
    let c = config(&[
        "consumer",
        "add",
        "ORDERS",
        "fresh",
        "--deliver",
        "next",
        "--filter",
        "orders.1 orders.2",
        "--filter",
        "orders.3,orders.4",
        "--headers-only",
        "--no-headers-only",
    ]);
    assert_eq!(c["deliver_policy"], "new", "{c}");
    assert_eq!(
        c["filter_subjects"],
        serde_json::json!(["orders.1", "orders.2", "orders.3", "orders.4"]),
        "{c}"
    );
    assert!(c.get("headers_only").is_none_or(|h| h == false), "{c}");
    let c = config(&[
        "consumer",
        "add",
        "ORDERS",
        "one",
        "--filter",
        "orders.1, ",
        "--headers-only",
    ]);
    assert_eq!(c["filter_subject"], "orders.1", "{c}");
    assert_eq!(c["headers_only"], true, "{c}");
    // natscli's -1: no heartbeats.
    let c = config(&[
        "consumer",
        "add",
        "ORDERS",
        "pushed",
        "--target",
        "pushed.out",
        "--heartbeat",
        "-1",
    ]);
    assert!(c.get("idle_heartbeat").is_none_or(|h| h == 0), "{c}");
    let c = config(&["consumer", "edit", "ORDERS", "one", "--no-headers-only"]);
    assert!(c.get("headers_only").is_none_or(|h| h == false), "{c}");
    // find's --no-invert is the filters as they are.
    assert_eq!(
        rnats.ok(&[
            &["consumer", "find", "ORDERS", "--pull", "--no-invert"][..],
            &s[..]
        ]
        .concat()),
        "fresh\nlast\none\nper\n"
    );
}
