//! natscli's connection flags are global: they go before or after the subcommand, and
//! natscli's `--defaults` is accepted where natscli has it.

mod common;

use common::{Rnats, assert_success};
use rnats_test_server::NatsServer;

#[test]
fn connection_flags_go_before_or_after_the_subcommand() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    // natscli's form: a global --server for `context add`.
    rnats.ok(&["--server", &url, "context", "add", "local"]);
    let mut echo = rnats.spawn_ready(
        &["--context", "local", "reply", "cli.x", "--count", "2"],
        "Listening on",
    );
    let before = rnats.ok(&["--context", "local", "req", "cli.x", "hi", "--raw"]);
    assert_eq!(before, "hi\n");
    let after = rnats.ok(&["req", "cli.x", "there", "--raw", "--context", "local"]);
    assert_eq!(after, "there\n");
    assert_success(&echo.finish(), &["reply"]);

    let info = rnats.json(&["-s", &url, "--timeout", "2s", "server", "info", "--json"]);
    assert_eq!(info["port"], server.port());
    let info = rnats.json(&["server", "-s", &url, "info", "--json"]);
    assert_eq!(info["port"], server.port());
}

#[test]
fn context_add_takes_natscli_global_flag_names() {
    let rnats = Rnats::new();
    rnats.ok(&[
        "context",
        "add",
        "tls",
        "--server",
        "nats://127.0.0.1:1",
        "--tlsca",
        "/tmp/ca.pem",
        "--tlscert",
        "/tmp/cert.pem",
        "--tlskey",
        "/tmp/key.pem",
        "--tlsfirst",
        "--js-domain",
        "hub",
        "--inbox-prefix",
        "_IN",
    ]);
    let file: serde_json::Value = serde_json::from_slice(
        &std::fs::read(rnats.nats_dir().join("context/tls.json")).expect("written"),
    )
    .expect("JSON");
    assert_eq!(file["url"], "nats://127.0.0.1:1");
    assert_eq!(file["ca"], "/tmp/ca.pem");
    assert_eq!(file["cert"], "/tmp/cert.pem");
    assert_eq!(file["key"], "/tmp/key.pem");
    assert_eq!(file["tls_first"], true);
    assert_eq!(file["jetstream_domain"], "hub");
    assert_eq!(file["inbox_prefix"], "_IN");
}

#[test]
fn no_context_ignores_the_selected_one() {
    let server = NatsServer::start();
    let rnats = Rnats::new();
    rnats.ok(&[
        "context",
        "add",
        "dead",
        "--server",
        "nats://127.0.0.1:1",
        "--select",
    ]);
    let line = rnats.fails(&["rtt"]);
    assert!(line.contains("127.0.0.1:1"), "{line}");
    // --no-context falls back to the default URL, so give one explicitly.
    rnats.ok(&["--no-context", "-s", &server.url(), "rtt", "--count", "1"]);
}

#[test]
fn defaults_is_accepted_on_stream_add_and_consumer_add() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    // The command line from the issue, unchanged but for the server.
    let out = rnats.ok(&[
        "stream",
        "add",
        "ORDERS",
        "--subjects",
        "orders.>",
        "--storage",
        "file",
        "--defaults",
        "-s",
        &url,
    ]);
    assert!(out.contains("ORDERS"), "{out}");
    let info = rnats.json(&[
        "-s",
        &url,
        "consumer",
        "add",
        "ORDERS",
        "billing",
        "--defaults",
        "--json",
    ]);
    assert_eq!(info["name"], "billing");
}

#[test]
fn trace_shows_the_api_traffic_on_stderr() {
    let server = NatsServer::with_jetstream();
    let rnats = Rnats::new();
    let out = rnats.run(&["--trace", "stream", "ls", "--json", "-s", &server.url()]);
    assert_success(&out, &["stream", "ls"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(">>> STREAM.LIST {\"offset\":0}"),
        "{stderr}"
    );
    assert!(stderr.contains("<<< STREAM.LIST "), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}

#[test]
fn a_user_without_a_password_is_a_token_as_in_natscli() {
    let server = NatsServer::builder()
        .token("s3cret")
        .spawn()
        .expect("server");
    let url = server.url();
    let rnats = Rnats::new();
    rnats.ok(&["rtt", "1", "--user", "s3cret", "-s", &url]);
    let out = rnats
        .command(&["rtt", "1", "-s", &url])
        .env("NATS_USER", "s3cret")
        .output()
        .expect("rnats runs");
    assert_success(&out, &["rtt", "NATS_USER"]);
    let line = rnats.fails(&["rtt", "1", "--user", "wrong", "-s", &url]);
    assert!(line.contains("authorization violation"), "{line}");
}

#[test]
fn jwt_and_seed_flags_environment_and_references_authenticate() {
    let operator = rnats_test_server::Operator::new();
    let app = operator.account("APP");
    let server = NatsServer::builder()
        .config(operator.server_config(&[&app]))
        .spawn()
        .expect("server");
    let url = server.url();
    let alice = app.user("alice");
    let rnats = Rnats::new();
    let line = rnats.fails(&["rtt", "1", "-s", &url]);
    assert!(line.contains("authorization violation"), "{line}");

    // natscli's --jwt and --seed, and their NATS_JWT and NATS_SEED.
    rnats.ok(&[
        "rtt",
        "1",
        "--jwt",
        alice.jwt(),
        "--seed",
        &alice.seed(),
        "-s",
        &url,
    ]);
    let run = |args: &[&str], env: &[(&str, String)]| {
        let mut command = rnats.command(args);
        for (key, value) in env {
            command.env(key, value);
        }
        command.output().expect("rnats runs")
    };
    let jwt_env = [
        ("NATS_JWT", alice.jwt().to_owned()),
        ("NATS_SEED", alice.seed()),
    ];
    assert_success(
        &run(&["rtt", "1", "-s", &url], &jwt_env),
        &["rtt", "NATS_JWT"],
    );

    // natscli's credential references: env://NAME for the JWT and seed...
    let refs = [
        ("ALICE_JWT", alice.jwt().to_owned()),
        ("ALICE_SEED", alice.seed()),
    ];
    let args = [
        "rtt",
        "1",
        "--jwt",
        "env://ALICE_JWT",
        "--seed",
        "env://ALICE_SEED",
        "-s",
        &url,
    ];
    assert_success(&run(&args, &refs), &args);
    // ... and for a context's credentials, read from the variable instead of a file.
    rnats.ok(&[
        "context",
        "add",
        "ci",
        "--server",
        &url,
        "--creds",
        "env://ALICE_CREDS",
    ]);
    let creds = [("ALICE_CREDS", alice.creds())];
    let args = ["rtt", "1", "--context", "ci"];
    assert_success(&run(&args, &creds), &args);
    let out = rnats.run(&args);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ALICE_CREDS is not set"), "{stderr}");
}
