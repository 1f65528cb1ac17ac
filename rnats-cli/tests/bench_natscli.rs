//! natscli's `nats bench` command lines (from its cheat sheet and help), run unchanged
//! against one shared JetStream server, their JSON checked; and the files `--csv` and
//! `--plot` write. One server and small message counts keep this quick.

mod common;

use common::Rnats;
use rnats_test_server::NatsServer;
use serde_json::Value;

/// Runs `rnats bench ARGS --server URL --json` and returns the report.
fn bench(rnats: &Rnats, url: &str, args: &[&str]) -> Value {
    let mut full = vec!["bench"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--server", url, "--json"]);
    rnats.json(&full)
}

/// The aggregate message count and client count of `role` in `report`.
fn counted(report: &Value, role: &str) -> (u64, usize) {
    let msgs = report[role]["aggregate"]["msgs"].as_u64();
    let clients = report[role]["clients"].as_array().map(Vec::len);
    match (msgs, clients) {
        (Some(msgs), Some(clients)) => (msgs, clients),
        _ => panic!("no {role} in {report}"),
    }
}

#[test]
fn natscli_bench_command_lines_run_unchanged() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();

    // Core NATS.
    let r = bench(
        &rnats,
        &url,
        &[
            "pub",
            "foo",
            "--clients",
            "10",
            "--msgs",
            "1000",
            "--size",
            "512",
        ],
    );
    assert_eq!(counted(&r, "publishers"), (1000, 10));
    assert_eq!(r["msg_size"], 512);
    let r = bench(
        &rnats,
        &url,
        &["sub", "foo", "--clients", "5", "--msgs", "1000"],
    );
    assert_eq!(counted(&r, "subscribers"), (5000, 5));
    let r = bench(
        &rnats,
        &url,
        &["pub", "foo", "--sleep=100ns", "--msgs", "200"],
    );
    assert_eq!(counted(&r, "publishers"), (200, 1));
    // 400 msgs/s for half a second: 200 messages, over at least about 0.45 s.
    let r = bench(
        &rnats,
        &url,
        &[
            "pub",
            "foo",
            "--clients",
            "2",
            "--throughput",
            "400",
            "--duration",
            "500ms",
        ],
    );
    assert_eq!(counted(&r, "publishers"), (200, 2));
    let seconds = r["publishers"]["aggregate"]["seconds"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(seconds >= 0.4, "{r}");

    // Multi-subject mode: subscribers on foo.*, each message on a subject of its own.
    let r = bench(
        &rnats,
        &url,
        &[
            "sub",
            "multi",
            "--multisubject",
            "--clients",
            "2",
            "--msgs",
            "300",
        ],
    );
    assert_eq!(counted(&r, "subscribers"), (600, 2));
    rnats.ok(&[
        "stream",
        "add",
        "MS",
        "--subjects",
        "ms.*",
        "--defaults",
        "-s",
        &url,
    ]);
    bench(
        &rnats,
        &url,
        &[
            "js",
            "pub",
            "ms",
            "--multisubject",
            "--multisubjectmax",
            "10",
            "--msgs",
            "100",
            "--stream",
            "MS",
        ],
    );
    let info = rnats.json(&["stream", "info", "MS", "--json", "-s", &url]);
    assert_eq!(info["state"]["messages"], 100, "{info}");
    assert_eq!(info["state"]["num_subjects"], 10, "{info}");
    // natscli's pair on a stream of the user's: `js fetch` reads what `js pub` left.
    let r = bench(
        &rnats,
        &url,
        &[
            "js", "fetch", "--stream", "MS", "--msgs", "1000", "--batch", "30",
        ],
    );
    assert_eq!(counted(&r, "subscribers"), (100, 1));
    let info = rnats.json(&["stream", "info", "MS", "--json", "-s", &url]);
    assert_eq!(info["state"]["messages"], 100, "kept: {info}");
    assert_eq!(
        info["state"]["consumer_count"], 0,
        "no consumer left: {info}"
    );
    rnats.ok(&["stream", "rm", "MS", "-f", "-s", &url]);

    // natscli's service pair: `serve` here answers `request` there, and nothing else does.
    let mut serving = rnats.spawn_ready(
        &[
            "bench",
            "service",
            "serve",
            "--clients",
            "2",
            "svc",
            "--msgs",
            "400",
            "--server",
            &url,
            "--json",
        ],
        "answering 400 requests",
    );
    let r = bench(
        &rnats,
        &url,
        &[
            "service",
            "request",
            "--clients",
            "4",
            "svc",
            "--msgs",
            "400",
        ],
    );
    assert_eq!(counted(&r, "requesters"), (400, 4));
    assert_eq!(r["latency"]["count"], 400);
    let served = serving.finish();
    common::assert_success(&served, &["bench", "service", "serve"]);
    let served: Value = serde_json::from_slice(&served.stdout).expect("serve's JSON");
    assert_eq!(served["kind"], "reply");
    assert_eq!(served["responders"]["aggregate"]["msgs"], 400, "{served}");

    // JetStream, each on a stream of its own, made for the run and removed after it.
    let r = bench(
        &rnats,
        &url,
        &[
            "js", "pub", "js.a", "--create", "--batch", "1000", "--msgs", "2000", "--stream", "A",
        ],
    );
    assert_eq!(counted(&r, "publishers"), (2000, 1));
    assert!(r.get("latency").is_none(), "{r}");
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "pub",
            "js.b",
            "--purge",
            "--batch=1",
            "--clients=10",
            "--msgs",
            "500",
            "--stream",
            "B",
            "--dedup",
        ],
    );
    assert_eq!(counted(&r, "publishers"), (500, 10));
    assert_eq!(r["latency"]["count"], 500);
    let r = bench(
        &rnats,
        &url,
        &[
            "js", "pub", "atomic", "js.c", "--batch", "100", "--msgs", "1000", "--stream", "C",
        ],
    );
    assert_eq!(counted(&r, "publishers"), (1000, 1));
    assert_eq!(r["latency"]["count"], 10, "one latency per batch: {r}");
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "pub",
            "fast",
            "js.f",
            "--batch",
            "100",
            "--max-outstanding-acks",
            "2",
            "--msgs",
            "500",
            "--stream",
            "F",
        ],
    );
    assert_eq!(counted(&r, "publishers"), (500, 1));
    assert_eq!(r["latency"]["count"], 5, "one latency per batch: {r}");
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "fetch",
            "--clients",
            "4",
            "--acks=none",
            "--batch=100",
            "--msgs",
            "2000",
            "--stream",
            "D",
            "--subject",
            "js.d",
        ],
    );
    assert_eq!(r["subscribers"]["aggregate"]["msgs"], 2000, "{r}");
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "fetch",
            "--acks",
            "all",
            "--msgs",
            "500",
            "--stream",
            "E",
            "--subject",
            "js.e",
        ],
    );
    assert_eq!(counted(&r, "subscribers"), (500, 1));
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "consume",
            "--clients",
            "2",
            "--msgs",
            "1000",
            "--stream",
            "G",
            "--subject",
            "js.g",
        ],
    );
    assert_eq!(r["kind"], "js-consume");
    assert_eq!(r["subscribers"]["aggregate"]["msgs"], 1000, "{r}");
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "ordered",
            "--clients",
            "2",
            "--msgs",
            "500",
            "--stream",
            "H",
            "--subject",
            "js.h",
        ],
    );
    assert_eq!(
        counted(&r, "subscribers"),
        (1000, 2),
        "each client reads it all"
    );
    let streams = rnats.json(&["stream", "ls", "--server", &url, "--json"]);
    assert!(
        streams.as_array().is_none_or(Vec::is_empty),
        "left behind: {streams}"
    );

    // Key-Value.
    let r = bench(
        &rnats,
        &url,
        &["kv", "put", "--clients", "10", "--msgs", "500"],
    );
    assert_eq!(counted(&r, "putters"), (500, 10));
    assert_eq!(r["latency"]["count"], 500);
    let r = bench(
        &rnats,
        &url,
        &[
            "kv",
            "get",
            "--randomize=100",
            "--clients",
            "10",
            "--msgs",
            "500",
        ],
    );
    assert_eq!(counted(&r, "getters"), (500, 10));
}

#[test]
fn latency_runs_print_a_ladder_and_write_csv_and_svg() {
    let rnats = Rnats::new();
    let dir = tempfile::tempdir().expect("temp dir");
    let csv = dir.path().join("run.csv");
    let svg = dir.path().join("run.svg");
    let (csv_arg, svg_arg) = (csv.to_string_lossy(), svg.to_string_lossy());
    let text = rnats.ok(&[
        "bench",
        "request",
        "foo",
        "--clients",
        "2",
        "--msgs",
        "500",
        "--csv",
        &csv_arg,
        "--plot",
        &svg_arg,
    ]);
    assert!(
        text.starts_with("rnats bench req: 500 msgs of 128 B, 2 clients"),
        "{text}"
    );
    assert!(text.contains("latency percentiles"), "{text}");
    for p in ["p50", "p99.9", "max"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(p) && l.contains('█')),
            "{p}: {text}"
        );
    }
    let csv = std::fs::read_to_string(&csv).expect("csv written");
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("#RunID,ClientID,MsgCount"), "{csv}");
    assert!(lines[0].ends_with("StdDevLatencyMicroSecs"), "{csv}");
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[1].split(',').nth(2) == Some("250"), "{csv}");
    let svg = std::fs::read_to_string(&svg).expect("svg written");
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("latency by percentile") && svg.contains("rate over time"));

    // The blocking client's runs draw too.
    let blocking = dir.path().join("blocking.svg");
    let blocking_arg = blocking.to_string_lossy();
    rnats.ok(&[
        "bench",
        "lat",
        "--blocking",
        "--msgs",
        "200",
        "--plot",
        &blocking_arg,
        "--json",
    ]);
    let svg = std::fs::read_to_string(&blocking).expect("svg written");
    assert!(svg.contains("lat latency by percentile"), "{svg}");
}

#[test]
fn js_get_and_filters_read_an_existing_stream() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["--server", url.as_str()];
    rnats.ok(&[
        &[
            "stream",
            "add",
            "GETS",
            "--subjects",
            "g.*",
            "--allow-direct",
            "--defaults",
        ][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[&["pub", "g.a", "a", "--count", "30"][..], &s[..]].concat());
    rnats.ok(&[&["pub", "g.b", "b", "--count", "20"][..], &s[..]].concat());

    // natscli: `nats bench js get sync` and `js get batch --filter`.
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "get",
            "sync",
            "--stream",
            "GETS",
            "--msgs",
            "50",
            "--clients",
            "2",
        ],
    );
    assert_eq!(r["kind"], "js-get-sync");
    assert_eq!(counted(&r, "getters"), (100, 2), "each client reads it all");
    assert_eq!(r["latency"]["count"], 100, "{r}");
    let r = bench(
        &rnats,
        &url,
        &[
            "js", "get", "batch", "--stream", "GETS", "--filter", "g.b", "--batch", "8", "--msgs",
            "20",
        ],
    );
    assert_eq!(counted(&r, "getters"), (20, 1));
    assert_eq!(r["latency"]["count"], 3, "one latency per batch: {r}");

    // --filter on the consumers: only the matching messages are there to read.
    let r = bench(
        &rnats,
        &url,
        &[
            "js", "fetch", "--stream", "GETS", "--filter", "g.a", "--msgs", "100",
        ],
    );
    assert_eq!(counted(&r, "subscribers"), (30, 1));
    let r = bench(
        &rnats,
        &url,
        &[
            "js", "ordered", "--stream", "GETS", "--filter", "g.b", "--msgs", "100",
        ],
    );
    assert_eq!(counted(&r, "subscribers"), (20, 1));
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "consume",
            "--stream",
            "GETS",
            "--filter",
            "g.a",
            "--filter",
            "g.b",
            "--msgs",
            "100",
            "--consumer",
            "two",
        ],
    );
    assert_eq!(counted(&r, "subscribers"), (50, 1));
    let info = rnats.json(&[&["stream", "info", "GETS", "--json"][..], &s[..]].concat());
    assert_eq!(
        info["state"]["messages"], 50,
        "the stream is kept as it was"
    );

    // natscli's stream flags for a stream the run makes: dedup window, async persistence.
    let r = bench(
        &rnats,
        &url,
        &[
            "js",
            "pub",
            "sync",
            "p.x",
            "--stream",
            "P",
            "--storage",
            "file",
            "--dedup",
            "--dedupwindow",
            "5m",
            "--persistasync",
            "--msgs",
            "10",
        ],
    );
    assert_eq!(counted(&r, "publishers"), (10, 1));
}
