//! `rnats stream backup` and `stream restore`: a 100,000-message stream backed up, removed,
//! restored, and read back byte for byte (sequence, subject, headers, payload, timestamp).

mod common;

use std::collections::VecDeque;

use common::Rnats;
use futures_util::StreamExt;
use rnats::HeaderMap;
use rnats::jetstream::consumer::pull::OrderedConfig;
use rnats::jetstream::context::Publish;
use rnats_test_server::NatsServer;
use serde_json::Value;

/// Messages in the backed-up stream: many, and small, so the test stays quick.
const MESSAGES: u64 = 100_000;

/// One stored message, as read back: (sequence, subject, headers, payload, timestamp).
type Stored = (u64, String, Option<String>, Vec<u8>, i128);

/// Fills stream `name` (subjects `bk.>`) with [`MESSAGES`] distinct messages, every 1000th
/// with a header.
async fn fill(js: &rnats::jetstream::Context) {
    let mut pending = VecDeque::with_capacity(512);
    for i in 0..MESSAGES {
        let mut publish = Publish::build().payload(format!("m{i}").into());
        if i % 1000 == 0 {
            let mut headers = HeaderMap::new();
            headers.insert("X-Seq", i.to_string().as_str());
            publish = publish.headers(headers);
        }
        let ack = js
            .send_publish(format!("bk.{}", i % 7), publish)
            .await
            .expect("publish");
        pending.push_back(ack);
        if pending.len() >= 512 {
            pending.pop_front().expect("pending").await.expect("ack");
        }
    }
    for ack in pending {
        ack.await.expect("ack");
    }
}

/// Every message of stream `name`, in order.
async fn read_all(js: &rnats::jetstream::Context, name: &str) -> Vec<Stored> {
    let stream = js.get_stream(name).await.expect("stream");
    let consumer = stream
        .create_consumer(OrderedConfig::default())
        .await
        .expect("ordered consumer");
    let mut messages = consumer.messages().await.expect("messages");
    let mut out = Vec::with_capacity(MESSAGES as usize);
    while (out.len() as u64) < MESSAGES {
        let message = messages.next().await.expect("a message").expect("no error");
        let info = message.info().expect("JetStream message");
        let headers = message
            .headers
            .as_ref()
            .map(|h| format!("{:?}", h.get("X-Seq")));
        out.push((
            info.stream_sequence,
            message.subject.to_string(),
            headers,
            message.payload.to_vec(),
            info.published.unix_timestamp_nanos(),
        ));
    }
    out
}

#[test]
fn a_100k_message_stream_survives_backup_and_restore_byte_for_byte() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("orders-backup");
    let target_arg = target.to_string_lossy().into_owned();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "BK",
        "--subjects",
        "bk.>",
        "--storage",
        "file",
        "--defaults",
    ]);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let js = runtime.block_on(async {
        let js = rnats::jetstream::new(rnats::connect(url.as_str()).await.expect("connect"));
        fill(&js).await;
        js
    });
    let before = runtime.block_on(read_all(&js, "BK"));
    let info_before: Value =
        serde_json::from_str(&run(&["stream", "info", "BK", "--json"])).expect("json");

    let report: Value =
        serde_json::from_str(&run(&["stream", "backup", "BK", &target_arg, "--json"]))
            .expect("json");
    assert_eq!(report["messages"], MESSAGES, "{report}");
    assert!(report["bytes"].as_u64().unwrap_or(0) > 0, "{report}");
    assert!(target.join("backup.json").is_file() && target.join("stream.tar.s2").is_file());

    // A stream of that name must not exist to restore it.
    let refused = rnats.fails(&["stream", "restore", &target_arg, "-s", &url]);
    assert!(refused.contains("exists"), "{refused}");

    run(&["stream", "rm", "BK", "--force"]);
    let restored: Value =
        serde_json::from_str(&run(&["stream", "restore", &target_arg, "--json"])).expect("json");
    assert_eq!(restored["state"]["messages"], MESSAGES, "{restored}");
    for field in [
        "messages",
        "bytes",
        "first_seq",
        "last_seq",
        "first_ts",
        "last_ts",
    ] {
        assert_eq!(
            restored["state"][field], info_before["state"][field],
            "{field} differs after the restore"
        );
    }
    assert_eq!(
        restored["config"]["subjects"],
        info_before["config"]["subjects"]
    );

    let after = runtime.block_on(read_all(&js, "BK"));
    assert_eq!(after.len(), before.len());
    let first_difference = before.iter().zip(&after).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "messages differ after the restore");
    assert_eq!(after[1000].2.as_deref(), Some("Some(\"1000\")"));
}

#[test]
fn backup_of_a_missing_stream_fails_on_one_line() {
    let server = NatsServer::with_jetstream();
    let rnats = Rnats::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("none").to_string_lossy().into_owned();
    let line = rnats.fails(&["stream", "backup", "NOPE", &target, "-s", &server.url()]);
    assert!(line.contains("stream not found"), "{line}");
    let line = rnats.fails(&["stream", "restore", &target, "-s", &server.url()]);
    assert!(line.contains("backup.json"), "{line}");
}

/// The stream-config fields jsm.go (natscli's library) always writes into `backup.json`,
/// and the state fields, in its names.
const NATSCLI_CONFIG: &[&str] = &[
    "name",
    "subjects",
    "retention",
    "max_consumers",
    "max_msgs_per_subject",
    "max_msgs",
    "max_bytes",
    "max_age",
    "storage",
    "discard",
    "num_replicas",
    "duplicate_window",
    "sealed",
    "deny_delete",
    "deny_purge",
    "allow_rollup_hdrs",
    "allow_direct",
    "mirror_direct",
];
const NATSCLI_STATE: &[&str] = &[
    "messages",
    "bytes",
    "first_seq",
    "first_ts",
    "last_seq",
    "last_ts",
    "consumer_count",
];

#[test]
fn backups_use_natscli_layout_both_ways() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let ours = dir.path().join("rnats");
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "NC",
        "--subjects",
        "nc.>",
        "--storage",
        "file",
        "--defaults",
    ]);
    run(&["pub", "nc.a", "hello {{Count}}", "--count", "10"]);
    run(&["consumer", "add", "NC", "C1", "--pull", "--defaults"]);
    run(&["stream", "backup", "NC", &ours.to_string_lossy()]);

    // natscli's layout: exactly these two files, owner-only directory.
    let mut names: Vec<String> = std::fs::read_dir(&ours)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["backup.json", "stream.tar.s2"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&ours).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }
    // The snapshot is the server's s2 stream as sent: it opens with s2's stream identifier.
    let data = std::fs::read(ours.join("stream.tar.s2")).expect("data");
    assert!(
        data.starts_with(b"\xff\x06\x00\x00S2sTwO"),
        "{:?}",
        &data[..16]
    );
    // backup.json: indented, `config` and `state` only, with every field natscli writes.
    let text = std::fs::read_to_string(ours.join("backup.json")).expect("metadata");
    assert!(text.starts_with("{\n  \"config\": {"), "{text}");
    let metadata: Value = serde_json::from_str(&text).expect("JSON");
    let keys: Vec<&String> = metadata.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["config", "state"]);
    for field in NATSCLI_CONFIG {
        assert!(
            metadata["config"].get(field).is_some(),
            "config.{field}: {text}"
        );
    }
    for field in NATSCLI_STATE {
        assert!(
            metadata["state"].get(field).is_some(),
            "state.{field}: {text}"
        );
    }
    assert_eq!(metadata["config"]["name"], "NC");
    assert_eq!(metadata["state"]["messages"], 10);
    assert_eq!(metadata["state"]["consumer_count"], 1);

    // A backup as natscli writes it (jsm.go's fields only, Go's zero times) restores here.
    let theirs = dir.path().join("natscli");
    std::fs::create_dir(&theirs).expect("mkdir");
    std::fs::copy(ours.join("stream.tar.s2"), theirs.join("stream.tar.s2")).expect("copy");
    let mut config = serde_json::Map::new();
    for field in NATSCLI_CONFIG {
        config.insert((*field).to_owned(), metadata["config"][field].clone());
    }
    config.insert("consumer_limits".to_owned(), serde_json::json!({}));
    let mut state = serde_json::Map::new();
    for field in NATSCLI_STATE {
        state.insert((*field).to_owned(), metadata["state"][field].clone());
    }
    let natscli = serde_json::json!({ "config": config, "state": state });
    std::fs::write(
        theirs.join("backup.json"),
        serde_json::to_string_pretty(&natscli).expect("JSON"),
    )
    .expect("write");
    run(&["stream", "rm", "NC", "--force"]);
    let restored: Value = serde_json::from_str(&run(&[
        "stream",
        "restore",
        &theirs.to_string_lossy(),
        "--json",
    ]))
    .expect("json");
    assert_eq!(restored["state"]["messages"], 10, "{restored}");
    assert_eq!(restored["state"]["consumer_count"], 1, "{restored}");
    let last = rnats.json(&[&["stream", "get", "NC", "10", "--json"][..], &s[..]].concat());
    assert_eq!(last["subject"], "nc.a", "{last}");
}
