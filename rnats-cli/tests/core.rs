//! Core NATS commands against a real nats-server: pub/sub, req/reply, server info, rtt,
//! and the ways connecting fails.

mod common;

use common::{Rnats, assert_success, json_lines};
use rnats_test_server::NatsServer;

/// The longest a background command in these tests may take to end.
const WAIT: std::time::Duration = std::time::Duration::from_secs(20);

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
        "-H",
        "Nats-Msg-Id:order-{{Count}}",
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
        // Header values are templates too, as natscli's are.
        assert_eq!(message["headers"]["Nats-Msg-Id"][0], format!("order-{n}"));
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
    // natscli numbers a responder's requests from 0.
    assert_eq!(json["data"], "pong 0");
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
        &[
            "reply",
            "echo",
            "--count",
            "2",
            "-H",
            "By:n{{Count}}",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let out = rnats.run(&["req", "echo", "same back", "-H", "Trace:7", "-s", &url]);
    assert_success(&out, &["req"]);
    // As natscli: the headers are logged on stderr, the body alone is on stdout. The echo
    // carries the request's headers, the responder's own (templates expanded) and
    // NATS-Reply-Counter, natscli's count of the requests answered, from 0.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Trace: 7"), "{stderr}");
    assert!(stderr.contains("By: n0"), "{stderr}");
    assert!(stderr.contains("NATS-Reply-Counter: 0"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "same back\n");
    let json = rnats.json(&["req", "echo", "again", "--json", "-s", &url]);
    assert_eq!(json["headers"]["NATS-Reply-Counter"][0], "1", "{json}");
    assert_eq!(json["headers"]["By"][0], "n1", "{json}");
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
fn req_without_responders_says_so_and_succeeds() {
    let server = NatsServer::start();
    // natscli logs it and exits 0; a run of several requests ends there.
    let out = Rnats::new().run(&[
        "req",
        "nobody.home",
        "x",
        "--count",
        "3",
        "-s",
        &server.url(),
    ]);
    assert_success(&out, &["req"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "No responders are available\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

#[test]
fn req_keeps_stdout_for_the_body_in_every_output() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut echo = rnats.spawn_ready(
        &["reply", "svc.json", "--count", "3", "-s", &url],
        "Listening on",
    );
    let body = r#"{"id":7}"#;
    // Human: the rtt line and the headers on stderr, so `rnats req svc '' | jq` works.
    let out = rnats.run(&["req", "svc.json", body, "-H", "Trace:1", "-s", &url]);
    assert_success(&out, &["req"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is the JSON body");
    assert_eq!(json["id"], 7);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("[#1] Received with rtt "), "{stderr}");
    assert!(stderr.contains("\nTrace: 1\n"), "{stderr}");
    // --raw and --json (-j) stay as they were: nothing on stderr, stdout one line each.
    let out = rnats.run(&[
        "req", "svc.json", body, "-H", "Trace:1", "--raw", "-s", &url,
    ]);
    assert_success(&out, &["req", "--raw"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{body}\n"));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let out = rnats.run(&["req", "svc.json", body, "-j", "-s", &url]);
    assert_success(&out, &["req", "-j"]);
    let lines = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["data"], body);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_success(&echo.finish(), &["reply"]);
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
    // natscli's forms: the iterations as an argument, -j, and `server i`.
    let rtt = rnats.json(&["rtt", "2", "-j", "-s", &url]);
    assert_eq!(rtt["samples_us"].as_array().map(Vec::len), Some(2));
    let human = rnats.ok(&["rtt", "4", "-s", &url]);
    assert_eq!(human.lines().count(), 6, "{human}");
    let info = rnats.json(&["server", "i", "-j", "-s", &url]);
    assert_eq!(info["jetstream"], true);
}

#[test]
fn sub_takes_several_subjects_in_one_output() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut sub = rnats.spawn_ready(
        &["sub", "a.x", "b.x", "c.>", "--count", "3", "-j", "-s", &url],
        "Subscribed to",
    );
    assert_eq!(sub.ready_line(), r#"Subscribed to "a.x", "b.x", "c.>""#);
    for subject in ["a.x", "b.x", "c.y.z"] {
        rnats.ok(&["pub", subject, subject, "-s", &url]);
    }
    let out = sub.finish();
    assert_success(&out, &["sub", "a.x", "b.x", "c.>"]);
    let messages = json_lines(&String::from_utf8_lossy(&out.stdout));
    let subjects: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["subject"].as_str())
        .collect();
    assert_eq!(subjects, ["a.x", "b.x", "c.y.z"]);

    // Each subscription joins the queue group.
    let mut queue = rnats.spawn_ready(
        &[
            "sub", "q.a", "q.b", "--queue", "g", "--count", "2", "--raw", "-s", &url,
        ],
        "Subscribed to",
    );
    assert!(
        queue.ready_line().ends_with(r#"in queue group "g""#),
        "{}",
        queue.ready_line()
    );
    rnats.ok(&["pub", "q.a", "one", "-s", &url]);
    rnats.ok(&["pub", "q.b", "two", "-s", &url]);
    let out = queue.finish();
    assert_success(&out, &["sub", "--queue"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "one\ntwo\n");

    // natscli reads a stream with one subject only, and takes no subject with --inbox.
    let line = rnats.fails(&["sub", "a", "b", "--stream", "S", "-s", &url]);
    assert!(line.contains("one subject"), "{line}");
    let line = rnats.fails(&["sub", "a", "b", "--all", "-s", &url]);
    assert!(line.contains("one subject"), "{line}");
    let out = rnats.run(&["sub", "a", "b", "--inbox", "-s", &url]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sub_match_replies_shows_each_request_with_its_reply() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let _reply = rnats.spawn_ready(
        &["reply", "svc.echo", "pong {{Count}}", "-s", &url],
        "Listening on",
    );
    let mut sub = rnats.spawn_ready(
        &[
            "sub",
            "svc.>",
            "--match-replies",
            "--count",
            "3",
            "-j",
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    // A plain message is shown at once; each request waits for its reply. The count is
    // reached with the second request, and the sub still waits for its reply.
    rnats.ok(&["req", "svc.echo", "ping", "-s", &url]);
    rnats.ok(&["pub", "svc.note", "hello", "-s", &url]);
    rnats.ok(&["req", "svc.echo", "again", "-s", &url]);
    let out = sub.finish_within(WAIT);
    assert_success(&out, &["sub", "--match-replies"]);
    let shown = json_lines(&String::from_utf8_lossy(&out.stdout));
    let mut summary: Vec<(&str, &str, Option<&str>)> = shown
        .iter()
        .map(|m| {
            (
                m["subject"].as_str().unwrap_or_default(),
                m["data"].as_str().unwrap_or_default(),
                m["matched_reply"]["data"].as_str(),
            )
        })
        .collect();
    // Shown as each is complete: the plain message may come before the first match.
    summary.sort();
    assert_eq!(
        summary,
        [
            ("svc.echo", "again", Some("pong 1")),
            ("svc.echo", "ping", Some("pong 0")),
            ("svc.note", "hello", None),
        ]
    );
    let ping = shown.iter().find(|m| m["data"] == "ping").expect("ping");
    assert_eq!(
        ping["reply"], ping["matched_reply"]["subject"],
        "the reply came on the request's reply subject"
    );

    // For people: the request, then the reply under the same number.
    let mut sub = rnats.spawn_ready(
        &[
            "sub",
            "svc.echo",
            "--match-replies",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    rnats.ok(&["req", "svc.echo", "ping", "-s", &url]);
    let out = sub.finish_within(WAIT);
    assert_success(&out, &["sub", "--match-replies"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let titles: Vec<&str> = text.lines().filter(|l| l.starts_with("[#")).collect();
    assert_eq!(titles.len(), 2, "{text}");
    assert!(
        titles[0].starts_with("[#1] Received on \"svc.echo\" with reply \"_INBOX."),
        "{text}"
    );
    assert!(
        titles[1].starts_with("[#1] Matched reply on \"_INBOX."),
        "{text}"
    );
    assert!(text.contains("pong 2"), "{text}");

    // Dumped as natscli does: the request as N.json, its reply as N_reply.json.
    let dir = tempfile::tempdir().expect("temp dir");
    let dump = dir.path().to_string_lossy().into_owned();
    let mut sub = rnats.spawn_ready(
        &[
            "sub",
            "svc.echo",
            "--match-replies",
            "--count",
            "1",
            "--dump",
            &dump,
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    rnats.ok(&["req", "svc.echo", "dumped", "-s", &url]);
    assert_success(
        &sub.finish_within(WAIT),
        &["sub", "--match-replies", "--dump"],
    );
    let read = |name: &str| -> serde_json::Value {
        let path = dir.path().join(name);
        serde_json::from_slice(&std::fs::read(&path).expect("dumped")).expect("JSON")
    };
    assert_eq!(read("1.json")["Subject"], "svc.echo");
    assert_eq!(read("1_reply.json")["Subject"], read("1.json")["Reply"]);
    assert_eq!(read("1_reply.json")["Data"], "cG9uZyAz", "pong 3 in base64");

    let line = rnats.fails(&["sub", "s", "--all", "--match-replies", "-s", &url]);
    assert!(line.contains("Core NATS"), "{line}");
}

#[test]
fn sub_match_replies_shows_unanswered_requests_and_waits_only_for_its_own_traffic() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut sub = rnats.spawn_ready(
        &[
            "sub",
            "ask",
            "--match-replies",
            "--wait",
            "3s",
            "-j",
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    // A request nobody answers is shown, without a reply, when the sub goes quiet.
    rnats.ok(&[
        "pub",
        "ask",
        "anyone?",
        "--reply",
        "_INBOX.nobody",
        "-s",
        &url,
    ]);
    // Replies to other clients' requests keep coming on the account's inboxes; they match
    // nothing held, so they must not keep a quiet sub alive past --wait.
    let mut chatter = rnats
        .command(&[
            "pub",
            "_INBOX.other.reply",
            "not yours",
            "--count",
            "1000",
            "--sleep",
            "50ms",
            "-s",
            &url,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("rnats pub runs");
    let out = sub.finish_within(WAIT);
    // Only the child this test started.
    let _ = chatter.kill();
    let _ = chatter.wait();
    assert_success(&out, &["sub", "--match-replies", "--wait"]);
    let shown = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["data"], "anyone?");
    assert_eq!(shown[0]["reply"], "_INBOX.nobody");
    assert!(shown[0].get("matched_reply").is_none());
}

#[test]
fn reply_command_takes_any_body_and_outlives_a_command_that_cannot_run() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    // A body larger than a pipe holds, and than an environment variable may be: `cat` gets
    // it all on its standard input and gives it all back (NATS_REQUEST_BODY is left out).
    let mut cat = rnats.spawn_ready(
        &[
            "reply",
            "svc.cat",
            "--command",
            "cat",
            "--count",
            "2",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let body = "x".repeat(300_000);
    let out = rnats.run_with_input(&["req", "svc.cat", "--raw", "-s", &url], body.as_bytes());
    assert_success(&out, &["req", "svc.cat"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), body);
    // Not UTF-8: NATS_REQUEST_BODY carries the bytes as they are, so it fits as measured.
    let binary = vec![0xFF_u8; 50_000];
    let out = rnats.run_with_input(&["req", "svc.cat", "--raw", "-s", &url], &binary);
    assert_success(&out, &["req", "svc.cat"]);
    assert_eq!(&out.stdout[..out.stdout.len() - 1], &binary[..]);
    assert_success(&cat.finish_within(WAIT), &["reply", "--command", "cat"]);

    // A program that is not there: an empty answer, a line on stderr, and the responder
    // goes on to its next request.
    let mut missing = rnats.spawn_ready(
        &[
            "reply",
            "svc.none",
            "--command",
            "/nonexistent/rnats-test-program",
            "--count",
            "2",
            "-s",
            &url,
        ],
        "Listening on",
    );
    for _ in 0..2 {
        let out = rnats.ok(&["req", "svc.none", "x", "--raw", "-s", &url]);
        assert_eq!(out.trim_end(), "", "an empty answer");
    }
    let out = missing.finish();
    assert_success(&out, &["reply", "--command", "/nonexistent/..."]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.matches("cannot run").count(), 2, "{said}");
}

#[test]
fn translate_shows_each_body_as_the_command_prints_it() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let upper = ["--translate", "tr a-z A-Z"];

    // req: each reply's body.
    let _reply = rnats.spawn_ready(&["reply", "svc.echo", "-s", &url], "Listening on");
    let out = run(&[&["req", "svc.echo", "hello", "--raw"][..], &upper[..]].concat());
    assert_eq!(out, "HELLO\n");

    // sub: each message's body; {{Subject}} is the message's subject.
    let mut sub = rnats.spawn_ready(
        &[
            "sub",
            "t.>",
            "--count",
            "2",
            "--raw",
            "--translate",
            "echo {{Subject}}",
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    run(&["pub", "t.a", "ignored"]);
    run(&["pub", "t.b", "ignored"]);
    let out = sub.finish_within(WAIT);
    assert_success(&out, &["sub", "--translate"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "t.a\nt.b\n");

    // A stream's messages, in sub, stream view and stream get; {{Stream}} is its name.
    run(&["stream", "add", "T", "--subjects", "t.>", "--defaults"]);
    run(&["pub", "t.c", "stored"]);
    let out = run(&[
        &["sub", "--stream", "T", "--raw", "--count", "1"][..],
        &upper[..],
    ]
    .concat());
    assert_eq!(out, "STORED\n");
    let out = run(&[
        "sub",
        "--stream",
        "T",
        "--raw",
        "--count",
        "1",
        "--translate",
        "echo {{Stream}}",
    ]);
    assert_eq!(out, "T\n", "the stream's name from the message's metadata");
    let out = run(&[
        "stream",
        "view",
        "T",
        "--raw",
        "--translate",
        "echo {{Stream}}/{{Subject}}",
    ]);
    assert_eq!(out, "T/t.c\n");
    let got = rnats.json(
        &[
            &["stream", "get", "T", "1", "--json"][..],
            &upper[..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(got["data"], "STORED");

    // A slow translation holds no reply back: each is read, and timed, as it arrives. The
    // translation outlasts --reply-timeout, so a reply read only after it would count as
    // one that never came.
    let _more: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|group| {
            rnats.spawn_ready(
                &["reply", "svc.many", "hi", "--queue", group, "-s", &url],
                "Listening on",
            )
        })
        .collect();
    let out = run(&[
        "req",
        "svc.many",
        "x",
        "--replies",
        "0",
        "--reply-timeout",
        "1s",
        "--timeout",
        "5s",
        "--raw",
        "--translate",
        "sh -c 'sleep 1.5; cat'",
    ]);
    assert_eq!(out, "hi\nhi\nhi\n");

    // A command that fails leaves the body as it was, and says so.
    let out = rnats.run(&[
        "req",
        "svc.echo",
        "kept",
        "--raw",
        "--translate",
        "false",
        "-s",
        &url,
    ]);
    assert_success(&out, &["req", "--translate", "false"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "kept\n");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("Error while translating"), "{said}");
}

#[test]
fn sub_and_reply_take_count_0_as_no_limit() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    // Answers every request: two here, where --count 0 once meant a usage error.
    let _reply = rnats.spawn_ready(
        &["reply", "svc", "n{{Count}}", "--count", "0", "-s", &url],
        "Listening on",
    );
    let out = rnats.ok(&["req", "svc", "x", "--count", "2", "--raw", "-s", &url]);
    assert_eq!(out, "n0\nn1\n");

    rnats.ok(&[
        "stream",
        "add",
        "S",
        "--subjects",
        "s.>",
        "--defaults",
        "-s",
        &url,
    ]);
    rnats.ok(&[
        "pub",
        "s.{{Count}}",
        "m{{Count}}",
        "--count",
        "3",
        "-s",
        &url,
    ]);
    let out = rnats.ok(&[
        "sub", "--stream", "S", "-T", "--count", "0", "--raw", "-s", &url,
    ]);
    assert_eq!(out, "m1\nm2\nm3\n");
}

#[test]
fn reply_templates_take_the_request() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut body = rnats.spawn_ready(
        &[
            "reply",
            "svc.body",
            "got {{Request}} #{{Count}}",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let out = rnats.ok(&["req", "svc.body", "hi", "--raw", "-s", &url]);
    assert_eq!(out, "got hi #0\n");
    assert_success(&body.finish(), &["reply", "{{Request}}"]);

    // In --command, natscli's {{.Request}} form too; the body goes in as one shell word.
    let mut command = rnats.spawn_ready(
        &[
            "reply",
            "svc.cmd",
            "--command",
            "echo req={{.Request}} token={{1}}",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let out = rnats.ok(&["req", "svc.cmd", "a b; echo injected", "--raw", "-s", &url]);
    assert_eq!(out, "req=a b; echo injected token=cmd\n\n");
    assert_success(&command.finish(), &["reply", "--command"]);

    // The command is split into words once and runs without a shell: a placeholder the user
    // quoted stays one word, and neither the body nor a subject token that is itself a
    // placeholder can run anything.
    let dir = tempfile::tempdir().expect("temp dir");
    let witness = dir.path().join("ran");
    let mut quoted = rnats.spawn_ready(
        &[
            "reply",
            "quoted.*",
            "--command",
            "echo 'said: {{Request}}' {{1}}",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Listening on",
    );
    let body = format!("$(touch {0}); touch {0}", witness.display());
    let out = rnats.ok(&["req", "quoted.{{Request}}", &body, "--raw", "-s", &url]);
    assert_eq!(out, format!("said: {body} {body}\n\n"));
    assert_success(&quoted.finish(), &["reply", "--command"]);
    assert!(!witness.exists(), "the request ran a command");

    // A placeholder natscli does not know: a warning, and the text as it is.
    let mut unknown = rnats.spawn_ready(
        &["reply", "svc.raw", "{{Nope}}", "--count", "1", "-s", &url],
        "Could not parse body template",
    );
    let out = rnats.ok(&["req", "svc.raw", "x", "--raw", "-s", &url]);
    assert_eq!(out, "{{Nope}}\n");
    assert_success(&unknown.finish(), &["reply", "{{Nope}}"]);
}

#[test]
fn pub_sends_unknown_placeholders_as_they_are_and_templates_can_be_off() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut sub = rnats.spawn_ready(
        &["sub", "t", "--count", "4", "--raw", "-s", &url],
        "Subscribed to",
    );
    let out = rnats.run(&["pub", "t", "{{Nope}} {{Count}}", "-s", &url]);
    assert_success(&out, &["pub", "{{Nope}}"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("Could not parse body template, sending it as it is"),
        "{stderr}"
    );
    rnats.ok(&["pub", "t", "{{Count}}", "--no-templates", "-s", &url]);
    rnats.ok(&["pub", "t", "{{Count}}", "--templates=false", "-s", &url]);
    // The last of --no-templates and --templates wins, as with natscli's flags.
    rnats.ok(&[
        "pub",
        "t",
        "{{Count}}",
        "--no-templates",
        "--templates",
        "-s",
        &url,
    ]);
    let out = sub.finish();
    assert_success(&out, &["sub"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{{Nope}} {{Count}}\n{{Count}}\n{{Count}}\n1\n"
    );
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
