//! JetStream commands against a real nats-server with JetStream: streams, consumers and the
//! account.

mod common;

use common::{Rnats, json_lines};
use rnats_test_server::NatsServer;
use serde_json::Value;

#[test]
fn stream_add_info_ls_get_view_purge_rm() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let info = rnats.json(
        &[
            &[
                "stream",
                "add",
                "ORDERS",
                "--subjects",
                "orders.*,refunds",
                "--storage",
                "memory",
                "--max-msgs",
                "1000",
                "--max-age",
                "1h",
                "--discard",
                "new",
                "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(
        info["config"]["subjects"],
        serde_json::json!(["orders.*", "refunds"])
    );
    assert_eq!(info["config"]["storage"], "memory");
    assert_eq!(info["config"]["max_msgs"], 1000);
    assert_eq!(info["config"]["max_age"], 3_600_000_000_000u64);
    assert_eq!(info["config"]["discard"], "new");

    rnats.ok(&[
        &["pub", "orders.{{Count}}", "body {{Count}}", "--count", "3"][..],
        &s[..],
    ]
    .concat());

    // natscli's `stream ls --json`: the names alone (`-j` for short).
    let list = rnats.json(&[&["stream", "ls", "-j"][..], &s[..]].concat());
    assert_eq!(list, serde_json::json!(["ORDERS"]));
    let table = rnats.ok(&[&["stream", "ls"][..], &s[..]].concat());
    assert!(table.starts_with("Name"), "{table}");
    assert!(table.contains("ORDERS"), "{table}");

    let info = rnats.json(&[&["stream", "info", "ORDERS", "--json"][..], &s[..]].concat());
    assert_eq!(info["state"]["last_seq"], 3);
    let human = rnats.ok(&[&["stream", "info", "ORDERS"][..], &s[..]].concat());
    assert!(human.contains("Max age: 1h"), "{human}");

    let message = rnats.json(&[&["stream", "get", "ORDERS", "2", "--json"][..], &s[..]].concat());
    assert_eq!(message["data"], "body 2");
    assert_eq!(message["subject"], "orders.2");
    let last = rnats.json(
        &[
            &[
                "stream",
                "get",
                "ORDERS",
                "--last-for",
                "orders.3",
                "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(last["seq"], 3);

    let view = rnats.ok(&[
        &["stream", "view", "ORDERS", "--start", "2", "--json"][..],
        &s[..],
    ]
    .concat());
    let seqs: Vec<Value> = json_lines(&view).iter().map(|m| m["seq"].clone()).collect();
    assert_eq!(seqs, [2, 3]);

    let edited = rnats.json(
        &[
            &["stream", "edit", "ORDERS", "--max-msgs", "500", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(edited["config"]["max_msgs"], 500);
    assert_eq!(
        edited["config"]["storage"], "memory",
        "edit keeps what is not given"
    );

    let line = rnats.fails(&[&["stream", "purge", "ORDERS"][..], &s[..]].concat());
    assert!(line.contains("--force"), "{line}");
    let purged = rnats.json(
        &[
            &["stream", "purge", "ORDERS", "--keep", "1", "-f", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(purged["purged"], 2);

    let line = rnats.fails(&[&["stream", "rm", "ORDERS"][..], &s[..]].concat());
    assert!(line.contains("--force"), "{line}");
    rnats.ok(&[&["stream", "rm", "ORDERS", "--force"][..], &s[..]].concat());
    let line = rnats.fails(&[&["stream", "info", "ORDERS"][..], &s[..]].concat());
    assert!(line.contains("stream not found"), "{line}");
}

#[test]
fn stream_view_filters_by_subject_and_time_and_stops_at_the_end() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["stream", "add", "LOG", "--subjects", "log.*", "-s", &url]);
    rnats.ok(&["pub", "log.a", "a{{Count}}", "--count", "3", "-s", &url]);
    rnats.ok(&["pub", "log.b", "b{{Count}}", "--count", "2", "-s", &url]);
    let out = rnats.ok(&[
        "stream",
        "view",
        "LOG",
        "--subject",
        "log.b",
        "--json",
        "-s",
        &url,
    ]);
    let data: Vec<Value> = json_lines(&out).iter().map(|m| m["data"].clone()).collect();
    assert_eq!(data, ["b1", "b2"]);
    let out = rnats.ok(&[
        "stream", "view", "LOG", "--since", "1h", "--count", "2", "--json", "-s", &url,
    ]);
    assert_eq!(json_lines(&out).len(), 2);
    let out = rnats.run(&["stream", "view", "LOG", "--subject", "log.none", "-s", &url]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    // The ordered consumers are gone afterwards.
    let consumers = rnats.json(&["consumer", "ls", "LOG", "--json", "-s", &url]);
    assert_eq!(consumers, serde_json::json!([]));
}

#[test]
fn stream_add_takes_a_json_config_file() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("events.json");
    std::fs::write(
        &path,
        r#"{"name":"EVENTS","subjects":["events.>"],"storage":"memory","max_msgs_per_subject":5,"retention":"limits","discard":"old","max_consumers":-1,"max_msgs":-1,"max_bytes":-1,"max_age":0,"num_replicas":1}"#,
    )
    .expect("write config");
    let path = path.to_string_lossy().into_owned();
    let info = rnats.json(&["stream", "add", "--config", &path, "--json", "-s", &url]);
    assert_eq!(info["config"]["name"], "EVENTS");
    assert_eq!(info["config"]["max_msgs_per_subject"], 5);

    // `stream info --json`'s output is a config file too (natscli takes either), here
    // renamed with its subjects given over it.
    let copy = dir.path().join("info.json");
    std::fs::write(&copy, info.to_string()).expect("write info");
    let copy = copy.to_string_lossy().into_owned();
    let info = rnats.json(&[
        "stream",
        "add",
        "COPY",
        "--config",
        &copy,
        "--subjects",
        "copy.>",
        "--json",
        "-s",
        &url,
    ]);
    assert_eq!(info["config"]["name"], "COPY");
    assert_eq!(info["config"]["subjects"], serde_json::json!(["copy.>"]));
    assert_eq!(info["config"]["max_msgs_per_subject"], 5);
}

#[test]
fn consumer_add_next_info_rm() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    rnats.ok(&[
        &["stream", "add", "JOBS", "--subjects", "jobs.>"][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[
        &["pub", "jobs.{{Count}}", "job {{Count}}", "--count", "3"][..],
        &s[..],
    ]
    .concat());

    let info = rnats.json(
        &[
            &[
                "consumer",
                "add",
                "JOBS",
                "worker",
                "--filter",
                "jobs.>",
                "--ack",
                "explicit",
                "--deliver",
                "all",
                "--max-deliver",
                "5",
                "--ack-wait",
                "30s",
                "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(info["config"]["durable_name"], "worker");
    assert_eq!(info["config"]["ack_policy"], "explicit");
    assert_eq!(info["config"]["max_deliver"], 5);
    assert_eq!(info["num_pending"], 3);

    let list = rnats.ok(&[&["consumer", "ls", "JOBS"][..], &s[..]].concat());
    assert!(list.contains("worker"), "{list}");
    assert!(list.contains("pull"), "{list}");

    let got = rnats.ok(&[
        &[
            "consumer", "next", "JOBS", "worker", "--count", "2", "--json",
        ][..],
        &s[..],
    ]
    .concat());
    let got = json_lines(&got);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["data"], "job 1");
    assert_eq!(got[1]["seq"], 2);

    let info = rnats.json(
        &[
            &["consumer", "info", "JOBS", "worker", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(
        info["ack_floor"]["stream_seq"], 2,
        "next acked what it fetched"
    );
    assert_eq!(info["num_pending"], 1);

    let raw = rnats.ok(&[&["consumer", "next", "JOBS", "worker", "--raw"][..], &s[..]].concat());
    assert_eq!(raw, "job 3\n");
    let line = rnats.fails(
        &[
            &["consumer", "next", "JOBS", "worker", "--timeout", "300ms"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(line.contains("no message within"), "{line}");

    rnats.ok(&[&["consumer", "rm", "JOBS", "worker", "-f"][..], &s[..]].concat());
    let line = rnats.fails(&[&["consumer", "info", "JOBS", "worker"][..], &s[..]].concat());
    assert!(line.contains("consumer not found"), "{line}");
}

#[test]
fn push_consumers_are_listed_and_next_refuses_them() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["stream", "add", "FEED", "-s", &url]);
    let info = rnats.json(&[
        "consumer",
        "add",
        "FEED",
        "tail",
        "--deliver-subject",
        "feed.out",
        "--deliver",
        "new",
        "--ack",
        "none",
        "--json",
        "-s",
        &url,
    ]);
    assert_eq!(info["config"]["deliver_subject"], "feed.out");
    assert_eq!(info["config"]["deliver_policy"], "new");
    let list = rnats.json(&["consumer", "ls", "FEED", "--json", "-s", &url]);
    assert_eq!(list, serde_json::json!(["tail"]));
    let line = rnats.fails(&["consumer", "next", "FEED", "tail", "-s", &url]);
    assert!(line.contains("is a push consumer"), "{line}");
    let line = rnats.fails(&[
        "consumer",
        "add",
        "FEED",
        "x",
        "--deliver",
        "someday",
        "-s",
        &url,
    ]);
    assert!(line.contains("invalid --deliver"), "{line}");
}

#[test]
fn account_info_shows_usage_and_limits() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["stream", "add", "S", "-s", &url]);
    let account = rnats.json(&["account", "info", "--json", "-s", &url]);
    let account = &account["jetstream"];
    assert_eq!(account["streams"], 1);
    assert!(account["limits"].is_object(), "{account}");
    assert!(account["api"]["level"].is_u64(), "{account}");
    let human = rnats.ok(&["account", "info", "-s", &url]);
    assert!(human.contains("Streams: 1"), "{human}");
    assert!(human.contains("API level"), "{human}");
}
