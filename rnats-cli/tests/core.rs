//! Core NATS commands against a real nats-server: pub/sub, req/reply, server info, rtt,
//! and the ways connecting fails.

mod common;

use common::{Rnats, assert_success, json_lines};
use rnats_test_server::NatsServer;

#[test]
fn pub_and_sub_round_trip_with_templates_and_headers() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut sub = rnats.spawn_ready(
        &["sub", "orders.*", "--count", "2", "--json", "-s", &url],
        "Subscribed to",
    );
    rnats.ok(&[
        "pub",
        "orders.{{Count}}",
        "order {{Count}}",
        "--count",
        "2",
        "-H",
        "Source:test",
        "-s",
        &url,
    ]);
    let out = sub.finish();
    assert_success(&out, &["sub"]);
    let messages = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(messages.len(), 2);
    for (i, message) in messages.iter().enumerate() {
        let n = i + 1;
        assert_eq!(message["subject"], format!("orders.{n}"));
        assert_eq!(message["data"], format!("order {n}"));
        assert_eq!(message["headers"]["Source"][0], "test");
    }
}

#[test]
fn pub_reads_the_body_from_stdin_and_sub_shows_it() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut sub = rnats.spawn_ready(
        &["sub", "greet", "--count", "1", "-s", &url],
        "Subscribed to",
    );
    let out = rnats.run_with_input(&["pub", "greet", "-s", &url], b"hello from stdin");
    assert_success(&out, &["pub"]);
    let out = sub.finish();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("[#1] Received on \"greet\""), "{stdout}");
    assert!(stdout.contains("hello from stdin"), "{stdout}");
}

#[test]
fn req_gets_what_reply_answers() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut reply = rnats.spawn_ready(
        &[
            "reply",
            "svc.time",
            "pong {{Count}}",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let json = rnats.json(&["req", "svc.time", "ping", "--json", "-s", &url]);
    assert_eq!(json["data"], "pong 1");
    assert!(json["rtt_us"].is_u64());
    let out = reply.finish();
    assert_success(&out, &["reply"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("ping"));
}

#[test]
fn reply_echoes_without_a_body_and_runs_a_command() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut echo = rnats.spawn_ready(
        &["reply", "echo", "--count", "1", "-s", &url],
        "Listening on",
    );
    let stdout = rnats.ok(&["req", "echo", "same back", "-H", "Trace:7", "-s", &url]);
    assert!(stdout.contains("Trace: 7"), "{stdout}");
    assert!(stdout.contains("same back"), "{stdout}");
    assert_success(&echo.finish(), &["reply"]);

    let mut upper = rnats.spawn_ready(
        &[
            "reply",
            "upper",
            "--command",
            "tr a-z A-Z",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let stdout = rnats.ok(&["req", "upper", "shout", "--raw", "-s", &url]);
    assert_eq!(stdout, "SHOUT\n");
    assert_success(&upper.finish(), &["reply"]);
}

#[test]
fn req_collects_several_replies() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    // Two responders in different queue groups both answer.
    let mut a = rnats.spawn_ready(
        &["reply", "all", "a", "-q", "A", "--count", "1", "-s", &url],
        "Listening on",
    );
    let mut b = rnats.spawn_ready(
        &["reply", "all", "b", "-q", "B", "--count", "1", "-s", &url],
        "Listening on",
    );
    let stdout = rnats.ok(&["req", "all", "x", "--replies", "2", "--raw", "-s", &url]);
    let mut got: Vec<&str> = stdout.lines().collect();
    got.sort_unstable();
    assert_eq!(got, ["a", "b"]);
    assert_success(&a.finish(), &["reply"]);
    assert_success(&b.finish(), &["reply"]);
}

#[test]
fn req_ends_a_gathering_at_the_reply_timeout() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut a = rnats.spawn_ready(
        &["reply", "some", "a", "-q", "A", "--count", "1", "-s", &url],
        "Listening on",
    );
    let mut b = rnats.spawn_ready(
        &["reply", "some", "b", "-q", "B", "--count", "1", "-s", &url],
        "Listening on",
    );
    let started = std::time::Instant::now();
    // Any number of replies, up to 10 minutes in all, but over once 500 ms pass without one:
    // ending within 5 minutes tells the stall from the total whatever the machine's load.
    let stdout = rnats.ok(&[
        "req",
        "some",
        "x",
        "--replies",
        "0",
        "--reply-timeout",
        "500ms",
        "--timeout",
        "10m",
        "--raw",
        "-s",
        &url,
    ]);
    assert!(started.elapsed() < std::time::Duration::from_secs(300));
    let mut got: Vec<&str> = stdout.lines().collect();
    got.sort_unstable();
    assert_eq!(got, ["a", "b"]);
    assert_success(&a.finish(), &["reply"]);
    assert_success(&b.finish(), &["reply"]);
}

#[test]
fn trace_draws_the_path_without_delivering() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut sub = rnats.spawn_ready(
        &["sub", "traced", "--count", "1", "--raw", "-s", &url],
        "Subscribed to",
    );
    let stdout = rnats.ok(&["trace", "traced", "probe", "-s", &url]);
    assert!(
        stdout.starts_with("Tracing message route to subject traced\n"),
        "{stdout}"
    );
    assert!(stdout.contains("Client \"rnats\""), "{stdout}");
    assert!(stdout.contains("--C Client"), "{stdout}");
    assert!(stdout.contains("subject:\"traced\""), "{stdout}");
    assert!(stdout.contains("Egress Count:"), "{stdout}");
    let reports = rnats.json(&["trace", "traced", "--json", "-s", &url]);
    assert_eq!(reports.as_array().map(Vec::len), Some(1), "{reports}");
    assert_eq!(reports[0]["events"][0]["type"], "in");
    // Neither trace reached the subscriber; this plain publish is the first it gets.
    rnats.ok(&["pub", "traced", "plain", "-s", &url]);
    let out = sub.finish();
    assert_success(&out, &["sub"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "plain\n");
}

#[test]
fn trace_with_deliver_reaches_the_subscriber_and_notes_no_interest() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let stdout = rnats.ok(&["trace", "nobody.listens", "-s", &url]);
    assert!(stdout.contains("--X No active interest"), "{stdout}");
    let mut sub = rnats.spawn_ready(
        &["sub", "delivered", "--count", "1", "--raw", "-s", &url],
        "Subscribed to",
    );
    let stdout = rnats.ok(&["trace", "delivered", "real", "--deliver", "-s", &url]);
    assert!(
        stdout.contains("with delivery to the final destination"),
        "{stdout}"
    );
    let out = sub.finish();
    assert_success(&out, &["sub"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "real\n");
}

#[test]
fn events_shows_jetstream_advisories_as_lines_and_json() {
    let server = NatsServer::builder().jetstream(true).spawn().unwrap();
    let url = server.url();
    let rnats = Rnats::new();
    let mut lines = rnats.spawn_ready(
        &[
            "events",
            "--js-advisory",
            "--srv-advisory=false",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Listening for JetStream advisories on $JS.EVENT.ADVISORY.>",
    );
    let mut json = rnats.spawn_ready(
        &[
            "events",
            "--js-advisory",
            "--srv-advisory=false",
            "-c",
            "1",
            "--json",
            "-s",
            &url,
        ],
        "Listening for JetStream advisories",
    );
    let mut cloud = rnats.spawn_ready(
        &[
            "events",
            "--js-advisory",
            "--srv-advisory=false",
            "-c",
            "1",
            "--cloudevent",
            "-s",
            &url,
        ],
        "Listening for JetStream advisories",
    );
    rnats.ok(&[
        "stream",
        "add",
        "EVENTS",
        "--subjects",
        "ev.>",
        "--defaults",
        "-s",
        &url,
    ]);
    let out = lines.finish();
    assert_success(&out, &["events"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("on $JS.EVENT.ADVISORY."), "{text}");
    assert!(text.contains("EVENTS"), "{text}");
    let out = json.finish();
    assert_success(&out, &["events"]);
    let events = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(events.len(), 1);
    assert!(
        events[0]["type"]
            .as_str()
            .is_some_and(|t| t.starts_with("io.nats.jetstream.advisory.v1.")),
        "{}",
        events[0]
    );
    // natscli's --cloudevent: a CloudEvents v1.0 envelope around the same advisory.
    let out = cloud.finish();
    assert_success(&out, &["events", "--cloudevent"]);
    let events = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(event["specversion"], "1.0", "{event}");
    assert_eq!(event["source"], "urn:nats:jetstream", "{event}");
    assert_eq!(event["subject"], "advisory", "{event}");
    assert_eq!(event["type"], event["data"]["type"], "{event}");
    assert_eq!(event["id"], event["data"]["id"], "{event}");
    assert_eq!(event["time"], event["data"]["timestamp"], "{event}");
    assert!(
        event["dataschema"]
            .as_str()
            .is_some_and(|s| s.ends_with(".json") && s.contains("/schemas/jetstream/advisory/v1/")),
        "{event}"
    );
    let line = Rnats::new().fails(&["events", "--srv-advisory=false", "-s", &url]);
    assert!(line.contains("no events were chosen"), "{line}");

    // Advisories kept in a stream read back with natscli's --stream, --since and --filter.
    let s = ["-s", url.as_str()];
    rnats.ok(&[
        &[
            "stream",
            "add",
            "ADVISORIES",
            "--subjects",
            "$JS.EVENT.ADVISORY.STREAM.>",
            "--defaults",
        ][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[
        &[
            "stream",
            "add",
            "LATER",
            "--subjects",
            "later.>",
            "--defaults",
        ][..],
        &s[..],
    ]
    .concat());
    rnats.ok(&[
        &[
            "stream",
            "add",
            "LAST",
            "--subjects",
            "last.>",
            "--defaults",
        ][..],
        &s[..],
    ]
    .concat());
    let out = rnats.ok(&[
        &[
            "events",
            "--stream",
            "ADVISORIES",
            "--since",
            "1h",
            "--filter",
            "LA[S]T",
            "--count",
            "1",
            "--json",
        ][..],
        &s[..],
    ]
    .concat());
    let events = json_lines(&out);
    assert_eq!(events.len(), 1, "{out}");
    assert_eq!(events[0]["stream"], "LAST", "{out}");
    let out = rnats.ok(&[
        &["events", "--stream", "ADVISORIES", "-c", "2", "--short"][..],
        &s[..],
    ]
    .concat());
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("CREATED.LATER"), "{out}");
}

#[test]
fn req_without_responders_fails_cleanly() {
    let server = NatsServer::start();
    let line = Rnats::new().fails(&["req", "nobody.home", "x", "-s", &server.url()]);
    assert!(line.contains("no responders"), "{line}");
}

#[test]
fn an_unreachable_server_is_one_line_and_exit_1() {
    let rnats = Rnats::new();
    let line = rnats.fails(&["pub", "x", "y", "-s", "nats://127.0.0.1:1"]);
    assert_eq!(
        line,
        "error: cannot connect to nats://127.0.0.1:1: connection refused"
    );
    let line = rnats.fails(&["stream", "ls", "-s", "nats://127.0.0.1:1"]);
    assert!(
        line.starts_with("error: cannot connect to nats://127.0.0.1:1"),
        "{line}"
    );
}

#[test]
fn bad_credentials_are_an_authorization_violation() {
    let rnats = Rnats::new();
    let server = NatsServer::builder()
        .token("s3cret")
        .spawn()
        .expect("server");
    let url = server.url();
    let line = rnats.fails(&["pub", "x", "y", "--token", "wrong", "-s", &url]);
    assert!(line.contains("authorization violation"), "{line}");
    rnats.ok(&["pub", "x", "y", "--token", "s3cret", "-s", &url]);

    let server = NatsServer::builder()
        .user_password("alice", "pw")
        .spawn()
        .expect("server");
    let url = server.url();
    let line = rnats.fails(&["rtt", "--user", "alice", "--password", "nope", "-s", &url]);
    assert!(line.contains("authorization violation"), "{line}");
    rnats.ok(&[
        "rtt",
        "--count",
        "1",
        "--user",
        "alice",
        "--password",
        "pw",
        "-s",
        &url,
    ]);
}

#[test]
fn server_info_and_rtt_give_json() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let info = rnats.json(&["server", "info", "--json", "-s", &url]);
    assert_eq!(info["jetstream"], true);
    assert!(info["version"].as_str().is_some_and(|v| !v.is_empty()));
    assert!(info["max_payload"].as_u64().is_some_and(|n| n > 0));
    let human = rnats.ok(&["server", "info", "-s", &url]);
    assert!(human.contains("JetStream: yes"), "{human}");

    let rtt = rnats.json(&["rtt", "--count", "3", "--json", "-s", &url]);
    assert_eq!(rtt["samples_us"].as_array().map(Vec::len), Some(3));
}

#[test]
fn bad_input_is_refused_before_connecting() {
    let rnats = Rnats::new();
    let line = rnats.fails(&[
        "pub",
        "x",
        "y",
        "-H",
        "no-colon",
        "-s",
        "nats://127.0.0.1:1",
    ]);
    assert!(line.contains("expected KEY:VALUE"), "{line}");
    let line = rnats.fails(&["pub", "x", "{{Nope}}", "-s", "nats://127.0.0.1:1"]);
    assert!(line.contains("invalid template"), "{line}");
    let out = rnats.run(&["req", "x", "y", "--timeout", "soon"]);
    assert!(!out.status.success());
}

#[test]
fn help_has_examples_and_completions_are_generated() {
    let rnats = Rnats::new();
    for command in [
        &["pub", "--help"][..],
        &["sub", "--help"],
        &["req", "--help"],
        &["reply", "--help"],
        &["stream", "add", "--help"],
        &["consumer", "next", "--help"],
        &["context", "add", "--help"],
        &["account", "info", "--help"],
    ] {
        let help = rnats.ok(command);
        assert!(help.contains("Example"), "{command:?}: {help}");
    }
    let script = rnats.ok(&["completions", "bash"]);
    assert!(script.contains("rnats"), "{script}");
}

#[test]
fn usage_errors_are_one_line_and_exit_2() {
    let rnats = Rnats::new();
    for args in [
        &["pub"][..],
        &["stream", "add", "X", "--storage", "disk"],
        &["nope"],
    ] {
        let out = rnats.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
    }
}

#[test]
fn errors_look_up_jetstream_codes() {
    let rnats = Rnats::new();
    let out = rnats.ok(&["errors", "lookup", "10059"]);
    assert!(out.contains("Description: stream not found"), "{out}");
    assert!(out.contains("HTTP Code: 404"), "{out}");
    let json = rnats.json(&["errors", "lookup", "10014", "--json"]);
    assert_eq!(json["description"], "consumer not found", "{json}");
    let list = rnats.ok(&["errors", "ls", "not found"]);
    assert!(list.lines().any(|l| l.starts_with("10059")), "{list}");
    assert!(list.lines().all(|l| !l.starts_with("10003")), "{list}");
    let all = rnats.json(&["errors", "ls", "--json"]);
    assert!(all.as_array().is_some_and(|a| a.len() > 200), "{all}");
    let line = rnats.fails(&["errors", "lookup", "1"]);
    assert!(line.contains("not a known JetStream error code"), "{line}");
}
