//! natscli's own examples (its `nats cheat` sheets, `cli/cheats/*.md`), run as rnats command
//! lines against one real server: each must exit 0 and print one fact checked here.
//!
//! A line runs as the sheet writes it, with `nats` replaced by `rnats` and these changes
//! only: placeholders (`<stream name>`, message 12345, 10 servers) become things that exist;
//! commands natscli would stop to ask about get `-f` (a test has no terminal to answer on);
//! commands that run until interrupted get `--count N` (or are run in the background until
//! their line appears); the system user is `--user system --password pass`; server reports
//! get `--timeout 1s` so a lone server is not waited on for the default 5s; one quote the
//! sheet leaves out (`-H Count:{{ Count }}`) is added; durations without a unit or of 10s
//! get a unit or shrink. The `nats bench` sheet runs in
//! `bench_natscli.rs`. Forms rnats lacks are listed in docs/cli.md.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::{Rnats, assert_success};
use rnats_test_server::NatsServer;

/// The application account (where no user given lands) and the system account.
const ACCOUNTS: &str = r#"
accounts {
  SYS { users = [ { user: system, password: pass } ] }
  APP { jetstream: enabled, users = [ { user: app, password: pass } ] }
}
system_account: SYS
no_auth_user: app
"#;

/// Runs each line in `dir` and checks its output holds `fact`.
struct Sheet<'a> {
    rnats: &'a Rnats,
    url: String,
    dir: &'a Path,
}

impl Sheet<'_> {
    /// Runs `rnats LINE -s URL` in the sheet's directory; its stdout and stderr together.
    fn run(&self, line: &[&str], input: Option<&[u8]>) -> String {
        let mut command = self.rnats.command(line);
        command
            .args(["-s", &self.url])
            .current_dir(self.dir)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("rnats runs");
        if let Some(input) = input {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(input).expect("write stdin");
        }
        let out = child.wait_with_output().expect("rnats ends");
        assert_success(&out, line);
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// Runs `line` and checks that what it printed contains `fact`.
    fn check(&self, line: &[&str], fact: &str) {
        let out = self.run(line, None);
        assert!(out.contains(fact), "{line:?} should print {fact:?}:\n{out}");
    }

    /// Starts the cheat-sheet `reply` line `reply` to answer once (`--count 1`), checks
    /// `request` as [`check`](Self::check) does, then that the responder ended well.
    fn check_answered(&self, reply: &[&str], request: &[&str], fact: &str) {
        let mut args = reply.to_vec();
        args.extend(["--count", "1", "-s", &self.url]);
        let mut responder = self.rnats.spawn_ready(&args, "Listening on");
        self.check(request, fact);
        assert_success(&responder.finish(), &["reply"]);
    }

    /// As [`check`](Self::check), with `input` on standard input.
    fn check_input(&self, line: &[&str], input: &[u8], fact: &str) {
        let out = self.run(line, Some(input));
        assert!(out.contains(fact), "{line:?} should print {fact:?}:\n{out}");
    }
}

/// The `&str`s of `words`.
fn as_strs(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

#[test]
fn natscli_cheat_sheet_lines_run_unchanged() {
    let server = NatsServer::builder()
        .jetstream(true)
        .config(ACCOUNTS)
        .spawn()
        .expect("nats-server starts");
    let rnats = Rnats::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let sheet = Sheet {
        rnats: &rnats,
        url: server.url(),
        dir: dir.path(),
    };
    let sys = ["--user", "system", "--password", "pass"];

    // account.md
    sheet.check(&["account", "info"], "JetStream");
    // Servers answer until the timeout: 1s rather than the default 5s.
    let report = sheet.run(
        &["account", "report", "connections", "--timeout", "1s"],
        None,
    );
    assert!(report.contains("CID") && report.contains("APP"), "{report}");

    // stream.md (with a stream to work on; `nats stream add` alone prompts)
    sheet.run(
        &[
            "stream",
            "add",
            "ORDERS",
            "--subjects",
            "ORDERS.>",
            "--defaults",
        ],
        None,
    );
    sheet.run(
        &["pub", "ORDERS.new", "order {{Count}}", "--count", "20"],
        None,
    );
    sheet.run(&["pub", "one.subject", "x"], None);
    sheet.check(&["stream", "info", "ORDERS"], "ORDERS");
    sheet.check(
        &[
            "stream",
            "edit",
            "ORDERS",
            "--description",
            "new description",
        ],
        "new description",
    );
    sheet.check(&["stream", "list"], "ORDERS");
    sheet.check(&["stream", "list", "-n"], "ORDERS\n");
    sheet.check(
        &[
            "stream",
            "copy",
            "ORDERS",
            "ARCHIVE",
            "--description",
            "Orders Archive",
            "--subjects",
            "ARCHIVE",
        ],
        "Orders Archive",
    );
    let empty = sheet.run(&["stream", "find", "--empty"], None);
    assert!(
        empty.contains("ARCHIVE") && !empty.contains("ORDERS"),
        "{empty}"
    );
    let full = sheet.run(&["stream", "find", "--empty", "--invert"], None);
    assert!(
        full.contains("ORDERS") && !full.contains("ARCHIVE"),
        "{full}"
    );
    sheet.check(&["stream", "get", "ORDERS", "12"], "order 12");
    // Not on the sheet, but in natscli's stream commands: per-subject counts.
    sheet.check(&["stream", "subjects", "ORDERS"], "ORDERS.new  20");
    assert_eq!(
        sheet.run(&["stream", "subjects", "ORDERS", "--json"], None),
        "{\"ORDERS.new\":20}\n"
    );
    sheet.check(
        &["stream", "rmm", "ORDERS", "12", "-f"],
        "Removed message 12",
    );
    sheet.check(&["stream", "view", "ORDERS"], "order 1");
    sheet.check(&["stream", "view", "ORDERS", "--id", "15"], "order 15");
    sheet.check(&["stream", "view", "ORDERS", "--since", "1h"], "order 2");
    sheet.check(
        &["stream", "view", "ORDERS", "--subject", "ORDERS.new"],
        "order 3",
    );
    let backup = dir.path().join("backups/orders/2026-12-02");
    let backup = backup.to_string_lossy();
    sheet.check(
        &["stream", "backup", "ORDERS", &backup],
        "Backed up stream ORDERS",
    );
    sheet.check(
        &["stream", "purge", "ORDERS", "--seq", "10", "-f"],
        "Purged",
    );
    sheet.check(
        &["stream", "purge", "ORDERS", "--keep", "5", "-f"],
        "Purged",
    );
    sheet.check(
        &[
            "stream",
            "purge",
            "ORDERS",
            "--subject",
            "one.subject",
            "-f",
        ],
        "Purged",
    );
    sheet.check(&["stream", "purge", "ORDERS", "-f"], "Purged");
    sheet.check(&["stream", "rm", "ORDERS", "-f"], "ORDERS");
    sheet.check(
        &["stream", "restore", "ORDERS", &backup],
        "Restored stream ORDERS (19 messages)",
    );
    sheet.check(
        &["stream", "seal", "ARCHIVE", "-f"],
        "Sealed stream ARCHIVE",
    );

    // consumer.md (`nats consumer add` alone prompts)
    sheet.run(
        &["consumer", "add", "ORDERS", "NEW", "--pull", "--defaults"],
        None,
    );
    sheet.check(&["consumer", "info", "ORDERS", "NEW"], "NEW");
    sheet.check(
        &[
            "consumer",
            "edit",
            "ORDERS",
            "NEW",
            "--description",
            "new description",
        ],
        "new description",
    );
    sheet.check(&["consumer", "next", "ORDERS", "NEW", "--ack"], "order 1");
    sheet.check(
        &["consumer", "next", "ORDERS", "NEW", "--no-ack"],
        "order 2",
    );
    sheet.check(
        &["consumer", "sub", "ORDERS", "NEW", "--ack", "--count", "1"],
        "order",
    );
    sheet.check(&["consumer", "rm", "ORDERS", "NEW", "-f"], "NEW");

    // kv.md (`--replicas 3` needs a cluster: one replica here)
    sheet.check(&["kv", "add", "CONFIG"], "CONFIG");
    sheet.run(&["kv", "put", "CONFIG", "username", "bob"], None);
    assert_eq!(
        sheet.run(&["kv", "get", "CONFIG", "username", "--raw"], None),
        "bob"
    );
    sheet.check(&["kv", "history", "CONFIG", "username"], "bob");
    sheet.check(&["kv", "status", "CONFIG"], "CONFIG");
    sheet.check(&["kv", "ls"], "CONFIG");
    let kv_backup = dir.path().join("backups/CONFIG");
    let kv_backup = kv_backup.to_string_lossy();
    sheet.check(&["stream", "backup", "KV_CONFIG", &kv_backup], "KV_CONFIG");
    sheet.run(&["kv", "rm", "CONFIG", "-f"], None);
    sheet.check(&["stream", "restore", "KV_CONFIG", &kv_backup], "KV_CONFIG");
    assert_eq!(
        sheet.run(&["kv", "get", "CONFIG", "username", "--raw"], None),
        "bob"
    );

    // object.md
    std::fs::write(dir.path().join("image.jpg"), b"jpeg bytes").expect("write");
    sheet.check(&["obj", "add", "FILES"], "FILES");
    sheet.check(&["obj", "put", "FILES", "image.jpg"], "Stored image.jpg");
    sheet.check_input(
        &["obj", "put", "FILES", "--name", "copy.jpg"],
        b"x.jpg bytes",
        "Stored copy.jpg",
    );
    sheet.run(&["obj", "get", "FILES", "image.jpg", "-O", "out.jpg"], None);
    assert_eq!(
        std::fs::read(dir.path().join("out.jpg")).expect("out.jpg"),
        b"jpeg bytes"
    );
    sheet.check(&["obj", "info", "FILES"], "FILES");
    sheet.check(&["obj", "info", "FILES", "image.jpg"], "image.jpg");
    sheet.check(&["obj", "ls"], "FILES");
    sheet.check(&["obj", "ls", "FILES"], "copy.jpg");
    sheet.run(&["obj", "del", "FILES", "copy.jpg", "-f"], None);
    sheet.check(&["obj", "status", "FILES"], "FILES");
    sheet.check(&["obj", "seal", "FILES", "-f"], "Sealed");
    sheet.run(&["obj", "del", "FILES", "-f"], None);

    // publish.md, reply.md
    sheet.run(
        &[
            "pub",
            "destination.subject",
            "{{ Random 100 1000 }}",
            "-H",
            "Count:{{ Count }}",
            "--count",
            "100",
        ],
        None,
    );
    sheet.run_with_stdin_ok(&["pub", "destination.subject"], b"hello world\n");
    sheet.run_with_stdin_ok(
        &["pub", "--force-stdin", "destination.subject"],
        b"hello world\n",
    );
    sheet.run_with_stdin_ok(
        &["pub", "destination.subject", "--send-on=newline"],
        b"one\ntwo\n",
    );
    let url = sheet.url.clone();
    sheet.check_answered(
        &["reply", "destination.subject", "echo {{Count}}"],
        &[
            "request",
            "destination.subject",
            "hello world",
            "-H",
            "Content-type:text/plain",
            "--raw",
        ],
        // natscli's responder counts the requests it answered, from 0.
        "echo 0",
    );
    sheet.check_answered(
        &["reply", "service.requests", "Message {{Count}} @ {{Time}}"],
        &["req", "service.requests", ""],
        "Message 0 @ ",
    );
    sheet.check_answered(
        &[
            "reply",
            "service.requests.>",
            "--command",
            "echo token {{2}}",
        ],
        &["req", "service.requests.weather", ""],
        "token weather",
    );

    // natscli's `--sleep 10` has no unit, which Go's duration parser refuses: 10ms here.
    sheet.check_answered(
        &["reply", "service.requests", "--echo", "--sleep", "10ms"],
        &["req", "service.requests", "echoed"],
        "echoed",
    );

    // subscribe.md
    let mut queue = rnats.spawn_ready(
        &[
            "sub",
            "source.subject",
            "--queue",
            "work",
            "--ack",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    sheet.run(&["pub", "source.subject", "work item"], None);
    let out = queue.finish();
    assert_success(&out, &["sub"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("work item"));
    let archive = dir.path().join("archive");
    let mut dump = rnats.spawn_ready(
        &[
            "sub",
            "--inbox",
            "--dump",
            &archive.to_string_lossy(),
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    // The inbox is named in the ready line: publish to it.
    let inbox = dump
        .ready_line()
        .split('"')
        .nth(1)
        .expect("the inbox in quotes")
        .to_owned();
    sheet.run(&["pub", &inbox, "dumped"], None);
    assert_success(&dump.finish(), &["sub", "--dump"]);
    let saved = std::fs::read_to_string(archive.join("1.json")).expect("1.json");
    let saved: serde_json::Value = serde_json::from_str(&saved).expect("JSON");
    assert_eq!(saved["Subject"], inbox.as_str());
    assert_eq!(saved["Data"], "ZHVtcGVk", "base64 of the body: {saved}");
    let mut zeros = rnats.spawn_ready(
        &["sub", "subject", "--dump=-", "--count", "2", "-s", &url],
        "Subscribed to",
    );
    sheet.run(&["pub", "subject", "a", "--count", "2"], None);
    let out = zeros.finish();
    assert_success(&out, &["sub", "--dump=-"]);
    assert_eq!(out.stdout.iter().filter(|b| **b == 0).count(), 2);

    // --ack and --dump on a push consumer's deliveries: acked, files named by stream sequence.
    sheet.run(
        &[
            "consumer",
            "add",
            "ORDERS",
            "PUSHED",
            "--target",
            "pushed.orders",
            "--deliver",
            "all",
            "--ack",
            "explicit",
            "--defaults",
        ],
        None,
    );
    let pushed = dir.path().join("pushed");
    let out = sheet.run(
        &[
            "sub",
            "pushed.orders",
            "--ack",
            "--dump",
            &pushed.to_string_lossy(),
            "--count",
            "3",
        ],
        None,
    );
    assert!(out.contains("Subscribed to"), "{out}");
    // The three it read were acked in order (the rest are still on their way). The server
    // applies acks on the consumer's own queue, after the publisher's flush, so the floor
    // is read until it gets there.
    // The deadline only guards against a floor that never moves: each look starts a process,
    // which a loaded machine may take seconds to do.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let info = loop {
        let info = rnats.json(&["consumer", "info", "ORDERS", "PUSHED", "--json", "-s", &url]);
        if info["ack_floor"]["consumer_seq"] == 3 || std::time::Instant::now() > deadline {
            break info;
        }
    };
    assert_eq!(info["ack_floor"]["consumer_seq"], 3, "{info}");
    let first = info["ack_floor"]["stream_seq"]
        .as_u64()
        .expect("an ack floor");
    assert_eq!(std::fs::read_dir(&pushed).expect("dump dir").count(), 3);
    let saved = std::fs::read_to_string(pushed.join(format!("{first}.json"))).expect("dump");
    assert!(saved.contains("\"Subject\":\"ORDERS.new\""), "{saved}");

    // events.md: the system account's own events are off, a subject of ours on.
    let mut events = rnats.spawn_ready(
        &[
            "events",
            "--no-srv-advisory",
            "--subjects",
            "service.latency.weather",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Listening for events on service.latency.weather",
    );
    sheet.run(&["pub", "service.latency.weather", r#"{"type":"x"}"#], None);
    assert_success(&events.finish(), &["events"]);

    // server.md (the system user)
    let system = |line: &[&str]| -> Vec<String> {
        line.iter()
            .chain(&sys)
            .chain(&["--timeout", "1s"])
            .map(|s| (*s).to_owned())
            .collect()
    };
    sheet.check(&as_strs(&system(&["server", "ping", "--id"])), "rtt=");
    sheet.check(
        &as_strs(&system(&["server", "list", "1"])),
        "Server overview",
    );
    for line in [
        &["server", "report", "connections"][..],
        &["server", "report", "connz", "--account", "APP"],
        &["server", "report", "connz", "--sort", "in-msgs"],
        &[
            "server", "report", "connz", "--top", "10", "--sort", "in-msgs",
        ],
    ] {
        sheet.check(&as_strs(&system(line)), "CID");
    }
    sheet.check(
        &as_strs(&system(&[
            "server",
            "report",
            "jetstream",
            "--account",
            "APP",
            "--sort",
            "cluster",
        ])),
        "JetStream summary",
    );
    sheet.check(
        &as_strs(&system(&["server", "report", "accounts"])),
        "accounts out of",
    );
    sheet.check(
        &as_strs(&system(&[
            "server",
            "report",
            "accounts",
            "--account",
            "APP",
            "--sort",
            "in-msgs",
            "--top",
            "10",
        ])),
        "CID",
    );

    // latency.md (one server plays both; 1s instead of 10s keeps the test short)
    let out = sheet.run_plain(&[
        "latency",
        "--server",
        &url,
        "--server-b",
        &url,
        "--duration",
        "1s",
    ]);
    assert!(out.contains("Received       : 1000 of 1000"), "{out}");

    // errors.md (1000 is no JetStream code: a real one)
    sheet.check(&["errors", "lookup", "10059"], "stream not found");
    sheet.check(&["errors", "ls", "stream"], "JSStreamNotFoundErr");

    // context.md, last: `context select` changes what every later line connects to.
    sheet.run_plain(&[
        "context",
        "add",
        "development",
        "--server",
        "nats.dev.example.net:4222",
    ]);
    sheet.run_plain(&["context", "edit", "development", "--server", &url]);
    let listed = sheet.run_plain(&["context", "ls"]);
    assert!(listed.contains("development"), "{listed}");
    let info = sheet.run_plain(&["context", "info", "development", "--json"]);
    assert!(info.contains(&url), "{info}");
    let valid = sheet.run_plain(&["context", "validate", "--connect"]);
    assert!(valid.contains("connected to"), "{valid}");
    sheet.run_plain(&["context", "select", "development"]);
    let selected = sheet.run_plain(&["context", "select"]);
    assert_eq!(selected.trim(), "development");
    sheet.run_plain(&["pub", "--context", "development", "subject", "body"]);
}

impl Sheet<'_> {
    /// Runs `line` with `input` on standard input and checks it succeeded.
    fn run_with_stdin_ok(&self, line: &[&str], input: &[u8]) {
        self.run(line, Some(input));
    }

    /// Runs `line` as it is, without the server flag (the context's settings apply); its
    /// stdout and stderr together.
    fn run_plain(&self, line: &[&str]) -> String {
        let out = self.rnats.run(line);
        assert_success(&out, line);
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }
}
