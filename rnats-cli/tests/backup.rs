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
