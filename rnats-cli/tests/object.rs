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
    // The object is named after the path as given (natscli's), so put it from its directory.
    let out = rnats
        .command(&["object", "put", "files", "blob.bin", "-s", &url])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("rnats runs");
    assert_success(&out, &["object", "put"]);
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
        rnats.ok(&["object", "get", "files", "note.txt", "-O", "-", "-s", &url]),
        "a small note"
    );
    // As natscli: with no --output, a file named after the object in the current directory.
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_rnats"))
        .args(["object", "get", "files", "note.txt", "-s", &url])
        .current_dir(dir.path())
        .output()
        .expect("rnats runs");
    assert!(status.status.success(), "{status:?}");
    assert_eq!(
        std::fs::read(dir.path().join("note.txt")).expect("note.txt written"),
        b"a small note"
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

#[test]
fn object_watch_seal_status_and_names() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["object", "add", "files", "-s", &url]);
    rnats.ok(&[
        "object",
        "add",
        "more",
        "--metadata",
        "team=media",
        "-s",
        &url,
    ]);
    let status = rnats.ok(&["object", "status", "more", "-s", &url]);
    assert!(status.contains("Metadata: team=media"), "{status}");
    assert_eq!(
        rnats.ok(&["object", "ls", "--names", "-s", &url]),
        "files\nmore\n"
    );
    let out = rnats.run_with_input(
        &["object", "put", "files", "--name", "a.txt", "-s", &url],
        b"first",
    );
    assert_success(&out, &["object", "put"]);

    let mut watch = rnats.spawn_ready(
        &["object", "watch", "files", "--count", "3", "-s", &url],
        "Watching bucket files",
    );
    let out = rnats.run_with_input(
        &["object", "put", "files", "--name", "b.txt", "-s", &url],
        b"second!",
    );
    assert_success(&out, &["object", "put"]);
    rnats.ok(&["object", "rm", "files", "a.txt", "-f", "-s", &url]);
    let out = watch.finish();
    assert_success(&out, &["object", "watch"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].ends_with("PUT files > a.txt: 5 B in 1 chunks"),
        "{stdout}"
    );
    assert!(
        lines[1].ends_with("PUT files > b.txt: 7 B in 1 chunks"),
        "{stdout}"
    );
    assert!(lines[2].ends_with("DEL files > a.txt"), "{stdout}");

    let status = rnats.ok(&["object", "status", "files", "-s", &url]);
    assert!(status.contains("Sealed: no"), "{status}");
    let line = rnats.fails(&["object", "seal", "files", "-s", &url]);
    assert!(line.contains("--force"), "{line}");
    let status = rnats.ok(&["object", "seal", "files", "--force", "-s", &url]);
    assert!(status.contains("Sealed: yes"), "{status}");
    let out = rnats.run_with_input(
        &["object", "put", "files", "--name", "c.txt", "-s", &url],
        b"refused",
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: cannot put c.txt into files"),
        "{stderr}"
    );
}

#[test]
fn object_edit_changes_only_the_settings_given() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "object",
        "add",
        "files",
        "--storage",
        "memory",
        "--description",
        "old",
        "--max-age",
        "1h",
        "--compress",
        "--metadata",
        "owner=ops",
    ]);
    run(&["object", "put", "files", "--name", "note.txt", "--json"]);

    let edited = run(&[
        "object",
        "edit",
        "files",
        "--ttl",
        "2h",
        "--description",
        "new",
        "--max-bucket-size",
        "1MB",
    ]);
    assert!(edited.contains("Description: new"), "{edited}");
    let stream = rnats.json(&[&["stream", "info", "OBJ_files", "--json"][..], &s[..]].concat());
    let config = &stream["config"];
    assert_eq!(config["max_age"], 2 * 3600 * 1_000_000_000u64, "{config}");
    assert_eq!(config["description"], "new", "{config}");
    assert_eq!(config["max_bytes"], 1024 * 1024, "{config}");
    // What was not given stays as it was.
    assert_eq!(config["storage"], "memory", "{config}");
    assert_eq!(config["compression"], "s2", "{config}");
    assert_eq!(config["metadata"]["owner"], "ops", "{config}");
    let status = rnats.json(&[&["object", "status", "files", "--json"][..], &s[..]].concat());
    assert_eq!(status["description"], "new", "{status}");

    let line = rnats.fails(&[&["object", "edit", "nothing", "--ttl", "1h"][..], &s[..]].concat());
    assert!(line.contains("nothing"), "{line}");
}

#[test]
fn put_names_the_object_after_the_cleaned_path_and_asks_before_replacing() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    rnats.ok(&[&["object", "add", "files", "--storage", "m"][..], &s[..]].concat());
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("docs")).expect("mkdir");
    std::fs::write(dir.path().join("docs/a.txt"), b"first").expect("write");
    let put = |args: &[&str]| {
        rnats
            .command(&[&["object", "put", "files"][..], args, &s[..]].concat())
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("rnats runs")
    };
    let out = put(&["docs/a.txt"]);
    assert_success(&out, &["object", "put"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Stored docs/a.txt in files: 5 B in 1 chunks\n"
    );
    // The same path written otherwise is the same object: replacing it needs -f without a
    // terminal, and nothing changes until then.
    std::fs::write(dir.path().join("docs/a.txt"), b"second").expect("write");
    let out = put(&["./docs//a.txt"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: Replace existing object files > docs/a.txt: pass --force to confirm (no terminal to ask on)\n"
    );
    let get =
        |name: &str| rnats.ok(&[&["object", "get", "files", name, "-O", "-"][..], &s[..]].concat());
    assert_eq!(get("docs/a.txt"), "first");
    assert_success(&put(&["./docs//a.txt", "-f", "--no-progress"]), &["put"]);
    assert_eq!(get("docs/a.txt"), "second");
    // --name is cleaned too; a deleted object is replaced without asking.
    assert_success(&put(&["docs/a.txt", "--name", "copies/../b.txt"]), &["put"]);
    rnats.ok(&[&["object", "rm", "files", "b.txt", "-f"][..], &s[..]].concat());
    assert_success(&put(&["docs/a.txt", "--name", "b.txt"]), &["put"]);
    let names: Vec<String> = rnats
        .json(&[&["object", "ls", "files", "-j"][..], &s[..]].concat())
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|o| o["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names, ["b.txt", "docs/a.txt"]);
    // natscli's get --no-progress and -f.
    assert_eq!(
        rnats.ok(&[
            &[
                "object",
                "get",
                "files",
                "b.txt",
                "-O",
                "-",
                "--no-progress",
                "-f"
            ][..],
            &s[..]
        ]
        .concat()),
        "second"
    );
}

#[test]
fn add_takes_natscli_storage_and_compress_spellings() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "object",
        "add",
        "files",
        "--storage",
        "m",
        "--compress",
        "--no-compress",
    ]);
    let stream = rnats.json(&[&["stream", "info", "OBJ_files", "-j"][..], &s[..]].concat());
    assert_eq!(stream["config"]["storage"], "memory", "{stream}");
    assert_ne!(stream["config"]["compression"], "s2", "{stream}");
    run(&["object", "edit", "files", "--compress"]);
    let status = rnats.json(&[&["object", "info", "files", "-j"][..], &s[..]].concat());
    assert_eq!(status["compressed"], true, "{status}");
}

#[test]
fn object_add_and_edit_place_the_bucket() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let placement = || {
        let info = rnats.json(&["stream", "info", "OBJ_placed", "--json", "-s", &url]);
        info["config"]["placement"].clone()
    };
    rnats.ok(&[
        "object", "add", "placed", "--tags", "ssd", "--tags", "eu", "-s", &url,
    ]);
    assert_eq!(placement()["tags"], serde_json::json!(["ssd", "eu"]));
    // An edit changes the tags given and keeps the rest of the bucket.
    rnats.ok(&[
        "object",
        "edit",
        "placed",
        "--tags",
        "hdd",
        "--description",
        "moved",
        "-s",
        &url,
    ]);
    assert_eq!(placement()["tags"], serde_json::json!(["hdd"]));
    let info = rnats.json(&["stream", "info", "OBJ_placed", "--json", "-s", &url]);
    assert_eq!(info["config"]["description"], "moved", "{info}");
}

#[test]
fn object_put_takes_a_chunk_size_and_headers() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["object", "add", "files", "-s", &url]);
    let dir = tempfile::tempdir().expect("temp dir");
    let data: Vec<u8> = (0..3_500u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(dir.path().join("small.bin"), &data).expect("write source");
    // From the file's directory: the object is named after the path as given.
    let put = |args: &[&str]| {
        rnats
            .command(
                &[
                    &["object", "put", "files", "small.bin"][..],
                    args,
                    &["-s", &url][..],
                ]
                .concat(),
            )
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("rnats runs")
    };
    let out = put(&[
        "--chunk-size",
        "1000",
        "-H",
        "Content-Type: application/octet-stream",
        "--header",
        "X-Origin:test",
        "-H",
        "X-Origin:again",
        "--json",
    ]);
    assert_success(&out, &["object", "put"]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON info");
    assert_eq!(info["chunks"], 4, "3,500 bytes in chunks of 1,000: {info}");
    assert_eq!(info["size"], 3_500, "{info}");
    assert_eq!(
        info["headers"]["Content-Type"],
        serde_json::json!(["application/octet-stream"]),
        "{info}"
    );
    assert_eq!(
        info["headers"]["X-Origin"],
        serde_json::json!(["test", "again"]),
        "{info}"
    );
    let shown = rnats.ok(&["object", "info", "files", "small.bin", "-s", &url]);
    assert!(shown.contains("Chunks: 4"), "{shown}");
    for row in [
        "Header: Content-Type: application/octet-stream",
        "Header: X-Origin: test",
        "Header: X-Origin: again",
    ] {
        assert!(shown.contains(row), "{row}: {shown}");
    }
    let back = rnats
        .command(&["object", "get", "files", "small.bin", "-O", "-", "-s", &url])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("rnats runs");
    assert_success(&back, &["object", "get"]);
    assert_eq!(back.stdout, data, "the object comes back whole");

    // A header that is not KEY:VALUE is refused before anything is stored.
    let out = put(&["--name", "other", "-H", "novalue"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("expected KEY:VALUE"), "{stderr}");
    let listed = rnats.ok(&["object", "ls", "files", "-s", &url]);
    assert!(!listed.contains("other"), "{listed}");
}
