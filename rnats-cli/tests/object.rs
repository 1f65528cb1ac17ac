//! `rnats object` against a real nats-server with JetStream.

mod common;

use common::{Rnats, assert_success};
use rnats_test_server::NatsServer;

#[test]
fn object_add_put_get_ls_info_rm() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["object", "add", "files", "--storage", "memory", "-s", &url]);

    let dir = tempfile::tempdir().expect("temp dir");
    let source = dir.path().join("blob.bin");
    // Several chunks (128 KiB each), not a multiple of the chunk size.
    let data: Vec<u8> = (0..300_001u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&source, &data).expect("write source");
    let source = source.to_string_lossy().into_owned();
    rnats.ok(&["object", "put", "files", &source, "-s", &url]);
    let out = rnats.run_with_input(
        &[
            "object", "put", "files", "--name", "note.txt", "--json", "-s", &url,
        ],
        b"a small note",
    );
    assert_success(&out, &["object", "put"]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(info["size"], 12);

    let list = rnats.json(&["object", "ls", "files", "--json", "-s", &url]);
    let names: Vec<&str> = list
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert_eq!(names, ["blob.bin", "note.txt"]);
    let buckets = rnats.json(&["object", "ls", "--json", "-s", &url]);
    assert_eq!(buckets[0]["bucket"], "files");

    let target = dir.path().join("copy.bin");
    let target_text = target.to_string_lossy().into_owned();
    rnats.ok(&[
        "object",
        "get",
        "files",
        "blob.bin",
        "-o",
        &target_text,
        "-s",
        &url,
    ]);
    assert_eq!(std::fs::read(&target).expect("copy"), data);
    assert_eq!(
        rnats.ok(&["object", "get", "files", "note.txt", "-s", &url]),
        "a small note"
    );

    let info = rnats.json(&["object", "info", "files", "blob.bin", "--json", "-s", &url]);
    assert_eq!(info["size"], 300_001);
    assert_eq!(info["chunks"], 3);

    let line = rnats.fails(&["object", "rm", "files", "note.txt", "-s", &url]);
    assert!(line.contains("--force"), "{line}");
    rnats.ok(&["object", "rm", "files", "note.txt", "-f", "-s", &url]);
    let line = rnats.fails(&["object", "get", "files", "note.txt", "-s", &url]);
    assert!(line.contains("cannot get note.txt"), "{line}");
    rnats.ok(&["object", "rm", "files", "-f", "-s", &url]);
    let line = rnats.fails(&["object", "ls", "files", "-s", &url]);
    assert!(line.contains("cannot open bucket files"), "{line}");
}
