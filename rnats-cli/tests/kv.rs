//! `rnats kv` against a real nats-server with JetStream.

mod common;

use common::{Rnats, assert_success, json_lines};
use rnats_test_server::NatsServer;

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
        "1\n"
    );
    let out = rnats.run_with_input(
        &[&["kv", "put", "config", "app.color"][..], &s[..]].concat(),
        b"green",
    );
    assert_success(&out, &["kv", "put"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
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
        "green\n"
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
    assert!(info.contains("History: 5"), "{info}");
    rnats.ok(&[&["kv", "rm", "config", "-f"][..], &s[..]].concat());
    let line = rnats.fails(&[&["kv", "info", "config"][..], &s[..]].concat());
    assert!(line.contains("cannot open bucket config"), "{line}");
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
