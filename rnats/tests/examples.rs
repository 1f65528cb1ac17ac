#![allow(missing_docs, clippy::unwrap_used)]

// Runs every program in rnats/examples/ against a nats-server of its own (with JetStream
// where the example needs it) and checks its exit status and the lines it prints.
//
// The examples are separate programs in target/<profile>/examples/, next to the deps/
// folder that holds this test. Cargo puts them there on `cargo build --examples`,
// `cargo run --example NAME`, and a `cargo test` without target flags (which builds the
// examples to check that they compile). `cargo test --all-targets` does not: it builds each
// example as a test harness (under a hashed name) instead, so a script that tests that way
// builds the examples first. A test that cannot find its example fails and says how to
// build it; it never runs cargo itself.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use rnats_test_server::NatsServer;

/// A guard against an example that hangs, so the suite fails instead of waiting for ever.
/// It judges nothing: every example finishes in a fraction of it.
const HANG_GUARD: Duration = Duration::from_secs(180);

/// What one run of an example left behind.
struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Output {
    /// Asserts a zero exit status and that each of `expected` is part of a line of stdout,
    /// in this order (one line may hold several).
    fn expect_lines(&self, name: &str, expected: &[&str]) {
        assert!(
            self.status.success(),
            "example {name} exited with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        let lines: Vec<&str> = self.stdout.lines().collect();
        let mut from = 0;
        for want in expected {
            match lines[from..].iter().position(|line| line.contains(want)) {
                Some(at) => from += at,
                None => panic!(
                    "example {name}: no line with {want:?} after line {from}\n--- stdout\n{}",
                    self.stdout
                ),
            }
        }
    }

    /// How many lines of stdout contain `fragment`.
    fn count(&self, fragment: &str) -> usize {
        self.stdout
            .lines()
            .filter(|line| line.contains(fragment))
            .count()
    }
}

/// The built example `name`: target/<profile>/examples/<name>, found from this test's own
/// path, target/<profile>/deps/examples-<hash>.
fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("cannot place {} in a target folder", exe.display()));
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "example binary {} is missing: build the examples first, with \
         `cargo build -p rnats --examples` and the features of this test (a plain \
         `cargo test -p rnats` builds them too; `--all-targets` does not)",
        path.display()
    );
    path
}

/// Runs example `name` with `NATS_URL=url` and the extra environment `env`, and waits for
/// it to exit.
fn run(name: &str, url: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(example_binary(name));
    command
        .env("NATS_URL", url)
        .env_remove("NATS_TOKEN")
        .env_remove("NATS_CREDS")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let stdout = read_all(&mut child, true);
    let stderr = read_all(&mut child, false);
    // stdout reaches its end when the example exits (none of them starts a process that
    // could inherit it).
    let stdout = match stdout.recv_timeout(HANG_GUARD) {
        Ok(text) => text,
        Err(_) => {
            child.kill().ok();
            child.wait().ok();
            panic!(
                "example {name} still running after {HANG_GUARD:?}; output so far:\n{}",
                stdout.recv().unwrap_or_default()
            );
        }
    };
    let status = child.wait().unwrap();
    let stderr = stderr.recv().unwrap_or_default();
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Reads the child's stdout (or stderr) to its end on a thread; the text comes through the
/// returned channel.
fn read_all(child: &mut Child, stdout: bool) -> mpsc::Receiver<String> {
    let mut pipe: Box<dyn Read + Send> = if stdout {
        Box::new(child.stdout.take().unwrap())
    } else {
        Box::new(child.stderr.take().unwrap())
    };
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes).ok();
        tx.send(String::from_utf8_lossy(&bytes).into_owned()).ok();
    });
    rx
}

#[test]
fn pub_sub_receives_what_it_published() {
    let server = NatsServer::start();
    let output = run("pub_sub", &server.url(), &[]);
    output.expect_lines(
        "pub_sub",
        &[
            &format!("connected to {}", server.url()),
            "received on greetings.world: hello, world",
            "received on greetings.nats: hello, nats",
            "received on greetings.rust: hello, rust",
            "done",
        ],
    );
}

#[test]
fn request_reply_gets_answers_then_no_responders() {
    let server = NatsServer::start();
    let output = run("request_reply", &server.url(), &[]);
    output.expect_lines(
        "request_reply",
        &[
            "double of 1 is 2",
            "double of 21 is 42",
            "double of 50 is 100",
            "no responders for math.double any more",
            "done",
        ],
    );
}

#[test]
fn queue_groups_give_each_job_to_one_worker() {
    let server = NatsServer::start();
    let output = run("queue_groups", &server.url(), &[]);
    output.expect_lines(
        "queue_groups",
        &[
            "12 jobs shared by the group",
            "the audit subscriber saw all 12",
            "done",
        ],
    );
    for job in 1..=12 {
        // The line end keeps `image-1` from matching `image-10`.
        let line = format!("took image-{job}\n");
        let taken = output.stdout.matches(&line).count();
        assert_eq!(
            taken, 1,
            "image-{job} taken {taken} times:\n{}",
            output.stdout
        );
    }
    assert_eq!(output.count(" took image-"), 12);
}

#[test]
fn headers_travel_with_messages_and_replies() {
    let server = NatsServer::start();
    let output = run("headers", &server.url(), &[]);
    output.expect_lines(
        "headers",
        &[
            "trace id: 4bf92f3577b34da6",
            "tags: billing, eu",
            r#"payload: {"user":"sue"}"#,
            "answer: bonjour (language fr)",
            "done",
        ],
    );
}

#[test]
fn connect_options_see_a_reconnect_and_keep_subscriptions() {
    let server = NatsServer::start();
    let output = run("connect_options", &server.url(), &[]);
    output.expect_lines(
        "connect_options",
        &[
            &format!("connected to {}", server.url()),
            "event: connected",
            "event: disconnected",
            "event: connected",
            "reconnected",
            "the subscription still works: ping",
            "done",
        ],
    );
    assert_eq!(output.count("authenticating"), 0, "{}", output.stdout);
}

#[test]
fn connect_options_authenticate_with_a_token() {
    let server = NatsServer::builder()
        .token("example-s3cret")
        .spawn()
        .unwrap();
    let output = run(
        "connect_options",
        &server.url(),
        &[("NATS_TOKEN", "example-s3cret")],
    );
    output.expect_lines(
        "connect_options",
        &["authenticating with a token", "reconnected", "done"],
    );

    // Without it the server turns the example away, and the example says so by its status.
    let refused = run("connect_options", &server.url(), &[]);
    assert!(
        !refused.status.success(),
        "connected without the token:\n{}",
        refused.stdout
    );
    assert!(
        refused.stderr.to_lowercase().contains("authorization"),
        "stderr: {}",
        refused.stderr
    );
}

#[test]
fn connect_options_authenticate_with_a_creds_file() {
    let operator = rnats_test_server::Operator::new();
    let app = operator.account("APP");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&app]))
        .spawn()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let creds = dir.path().join("alice.creds");
    std::fs::write(&creds, app.user("alice").creds()).unwrap();
    let output = run(
        "connect_options",
        &server.url(),
        &[("NATS_CREDS", creds.to_str().unwrap())],
    );
    output.expect_lines(
        "connect_options",
        &[
            "authenticating with the credentials in",
            "reconnected",
            "the subscription still works: ping",
            "done",
        ],
    );
}

#[test]
fn blocking_client_publishes_subscribes_and_requests() {
    let server = NatsServer::start();
    let output = run("blocking", &server.url(), &[]);
    output.expect_lines(
        "blocking",
        &[
            "sensors.kitchen.temperature = 21.5",
            "sensors.hall.temperature = 19.0",
            "sensors.attic.temperature = 25.1",
            "no message on nobody.publishes.here",
            "greet sue: hello, sue",
            "greet bob: hello, bob",
            "done",
        ],
    );
}

#[cfg(feature = "kv")]
#[test]
fn blocking_jetstream_fetches_acks_and_watches_a_bucket() {
    let server = NatsServer::with_jetstream();
    let output = run("blocking_jetstream", &server.url(), &[]);
    output.expect_lines(
        "blocking_jetstream",
        &[
            "order 1 stored as sequence 1",
            "order 3 stored as sequence 3",
            "fetched order 1",
            "fetched order 2",
            "fetched order 3",
            "put color = blue at revision 1",
            "update color = green at revision 2",
            "update from a stale revision refused: wrong last revision",
            "get color: green",
            "watched color = blue",
            "watched color = green",
            "done",
        ],
    );
}

#[cfg(feature = "jetstream")]
#[test]
fn jetstream_publish_stores_acks_and_deduplicates() {
    let server = NatsServer::with_jetstream();
    let output = run("jetstream_publish", &server.url(), &[]);
    output.expect_lines(
        "jetstream_publish",
        &[
            "stream EXAMPLE_ORDERS ready",
            "order 1 stored in EXAMPLE_ORDERS as sequence 1",
            "order 2 stored in EXAMPLE_ORDERS as sequence 2",
            "order 3 stored in EXAMPLE_ORDERS as sequence 3",
            "7 more orders stored",
            "order 11, attempt 1: sequence 11, duplicate false",
            "order 11, attempt 2: sequence 11, duplicate true",
            "stream EXAMPLE_ORDERS holds 11 messages",
            "done",
        ],
    );
}

#[cfg(feature = "jetstream")]
#[test]
fn jetstream_consume_fetches_then_streams_every_message() {
    let server = NatsServer::with_jetstream();
    let output = run("jetstream_consume", &server.url(), &[]);
    output.expect_lines(
        "jetstream_consume",
        &[
            "published 10 events to EXAMPLE_EVENTS",
            "fetched event 1 (stream sequence 1) from example.events.odd",
            "fetched event 2 (stream sequence 2) from example.events.even",
            "fetched event 3 (stream sequence 3)",
            "fetched event 4 (stream sequence 4)",
            "consumed event 5",
            "consumed event 6",
            "consumed event 7",
            "consumed event 8",
            "consumed event 9",
            "consumed event 10",
            "all 10 events processed",
            "done",
        ],
    );
    assert_eq!(output.count("fetched event"), 4, "{}", output.stdout);
    assert_eq!(output.count("consumed event"), 6, "{}", output.stdout);
}

#[cfg(feature = "kv")]
#[test]
fn kv_puts_updates_and_watches() {
    let server = NatsServer::with_jetstream();
    let output = run("kv", &server.url(), &[]);
    output.expect_lines(
        "kv",
        &[
            "put color = blue at revision 1",
            "get color: blue",
            "update color = green at revision 2",
            "update from a stale revision refused: wrong last revision",
            "create owner again refused: key already exists",
            r#"watch: color Put "blue" at revision 1"#,
            r#"watch: color Put "green" at revision 2"#,
            r#"watch: owner Put "sue" at revision 3"#,
            r#"watch: owner Delete "" at revision 4"#,
            "history of color: revision 1 = blue",
            "history of color: revision 2 = green",
            "done",
        ],
    );
}

#[cfg(feature = "object-store")]
#[test]
fn object_store_round_trips_a_file() {
    let server = NatsServer::with_jetstream();
    let output = run("object_store", &server.url(), &[]);
    output.expect_lines(
        "object_store",
        &[
            "bucket example_files ready",
            // 3 MiB in 128 KiB chunks.
            "put reports/2024.bin: 3145728 bytes in 24 chunks, digest SHA-256=",
            "got 3145728 bytes back",
            "the restored file is identical: true",
            "info: reports/2024.bin is 3145728 bytes",
            "done",
        ],
    );
}

#[cfg(feature = "service")]
#[test]
fn service_answers_counts_and_is_discovered() {
    let server = NatsServer::start();
    let output = run("service", &server.url(), &[]);
    output.expect_lines(
        "service",
        &[
            "service adder 1.0.0 started",
            "sum of 1,2,3 = 6",
            "sum of 40,2 = 42",
            "sum of one,two: error: not a list of integers: one,two",
            "on math.sum: 3 requests, 1 errors",
            "ping answered by adder 1.0.0",
            "done",
        ],
    );
}
