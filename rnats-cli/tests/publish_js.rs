//! `rnats pub` to JetStream: acks, atomic batches (ADR-50) and schedules (ADR-51), against
//! a real nats-server.

mod common;

use std::process::Output;

use common::Rnats;
use rnats_test_server::NatsServer;

/// The single `error: ...` line of a failed run, checked to be just that.
fn one_error_line(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one stderr line expected: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    lines[0].to_owned()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

/// Messages stored in `stream`, from `stream info --json`.
fn stored(rnats: &Rnats, url: &str, stream: &str) -> u64 {
    let info = rnats.json(&["stream", "info", stream, "--json", "-s", url]);
    info["state"]["messages"].as_u64().expect("messages")
}

#[test]
fn jetstream_publish_prints_each_ack() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["stream", "add", "ORDERS", "--subjects", "orders.>"]);

    let out = run(&["pub", "orders.new", "one", "-J"]);
    assert_eq!(out, "Stored in Stream: ORDERS Sequence: 1\n");
    let out = run(&[
        "pub",
        "orders.{{Count}}",
        "n{{Count}}",
        "--jetstream",
        "--count",
        "2",
    ]);
    assert_eq!(
        out,
        "Stored in Stream: ORDERS Sequence: 2\nStored in Stream: ORDERS Sequence: 3\n"
    );
    let ack = rnats.json(&[&["pub", "orders.x", "x", "-J", "--json"][..], &s[..]].concat());
    assert_eq!(ack["stream"], "ORDERS");
    assert_eq!(ack["seq"], 4);
    // Each line its own message, with --send-on newline.
    let lines = rnats.run_with_input(
        &[
            &["pub", "orders.line", "-J", "--send-on", "newline"][..],
            &s[..],
        ]
        .concat(),
        b"a\nb\n",
    );
    assert_eq!(
        stdout(&lines),
        "Stored in Stream: ORDERS Sequence: 5\nStored in Stream: ORDERS Sequence: 6\n"
    );
    let got = run(&["stream", "get", "ORDERS", "--last-for", "orders.line"]);
    assert!(got.contains('b'), "{got}");

    let err = rnats.fails(&[&["pub", "nowhere.x", "x", "-J"][..], &s[..]].concat());
    assert!(err.contains("JetStream publish failed"), "{err}");
}

#[test]
fn an_atomic_batch_stores_all_of_stdin_or_nothing() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "ACCOUNTS",
        "--subjects",
        "accounts.>",
        "--allow-batch",
    ]);
    let info = run(&["stream", "info", "ACCOUNTS"]);
    assert!(info.contains("Allows atomic batches"), "{info}");

    // natscli's form: standard input, a message per line.
    let batch = |args: &[&str], input: &[u8]| {
        let args = [&["pub"][..], args, &s[..]].concat();
        rnats.run_with_input(&args, input)
    };
    let ok = batch(
        &["accounts.{{Count}}", "--atomic", "--send-on", "newline"],
        b"alice\nbob\ncarol\n",
    );
    let line = stdout(&ok);
    assert!(line.starts_with("Wrote batch ID: "), "{line}");
    assert!(line.ends_with(" Messages: 3 Sequence: 3\n"), "{line}");
    assert_eq!(line.lines().count(), 1, "{line}");
    assert_eq!(stored(&rnats, &url, "ACCOUNTS"), 3);
    let second = run(&["stream", "get", "ACCOUNTS", "2"]);
    assert!(
        second.contains("accounts.2") && second.contains("bob"),
        "{second}"
    );

    // --json gives the server's ack with the batch id and count.
    let ack = batch(&["accounts.json", "--atomic", "--json"], b"x\ny\n");
    let ack: serde_json::Value = serde_json::from_str(&stdout(&ack)).expect("json ack");
    assert_eq!(ack["count"], 2);
    assert_eq!(ack["seq"], 5);
    assert_eq!(stored(&rnats, &url, "ACCOUNTS"), 5);

    // An expectation that fails at the commit: the server stores none of the batch.
    let failed = batch(
        &[
            "accounts.{{Count}}",
            "--atomic",
            "-H",
            "Nats-Expected-Last-Subject-Sequence:0",
        ],
        b"a\nb\n",
    );
    let err = one_error_line(&failed);
    assert!(
        err.contains("atomic batch to stream ACCOUNTS failed"),
        "{err}"
    );
    assert!(err.contains("expectation"), "{err}");
    assert_eq!(stored(&rnats, &url, "ACCOUNTS"), 5);

    // Refused before sending: more than the server's 1,000 messages per batch, and a
    // message id used twice in one batch.
    let many = "m\n".repeat(1001);
    let err = one_error_line(&batch(&["accounts.many", "--atomic"], many.as_bytes()));
    assert!(err.contains("too large"), "{err}");
    let err = one_error_line(&batch(
        &["accounts.dup", "--atomic", "-H", "Nats-Msg-Id:same"],
        b"a\nb\n",
    ));
    assert!(err.contains("duplicate"), "{err}");
    let err = one_error_line(&batch(&["accounts.none", "--atomic"], b""));
    assert!(err.contains("no messages"), "{err}");
    assert_eq!(stored(&rnats, &url, "ACCOUNTS"), 5);

    // A stream without --allow-batch is refused up front, with nothing stored.
    run(&["stream", "add", "PLAIN", "--subjects", "plain.>"]);
    let err = one_error_line(&batch(&["plain.x", "--atomic"], b"a\nb\n"));
    assert!(err.contains("does not allow atomic publishing"), "{err}");
    assert_eq!(stored(&rnats, &url, "PLAIN"), 0);
    let err = one_error_line(&batch(&["missing.x", "--atomic"], b"a\n"));
    assert!(err.contains("no stream for subject"), "{err}");
}

#[test]
fn a_schedule_fires_and_a_cancelled_one_never_does() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&[
        "stream",
        "add",
        "JOBS",
        "--subjects",
        "schedules.>,jobs.>",
        "--allow-schedules",
        "--allow-msg-ttl",
    ]);
    run(&[
        "consumer", "add", "JOBS", "fired", "--filter", "jobs.>", "--ack", "explicit",
    ]);

    // Cancelled before it fires: the cancellation is stored in the schedule's place.
    let doomed = run(&[
        "pub",
        "schedules.doomed",
        "never",
        "--schedule-after",
        "2s",
        "--schedule-dest",
        "jobs.doomed",
    ]);
    assert_eq!(doomed, "Stored in Stream: JOBS Sequence: 1\n");
    // Only while the schedule is still the one stored at 1: at 99 it is refused.
    let err = rnats.fails(
        &[
            &[
                "pub",
                "schedules.cancelled",
                "paid",
                "--cancel-schedule",
                "schedules.doomed",
                "--cancel-schedule-seq",
                "99",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(
        err.contains("cannot cancel the schedule on schedules.doomed"),
        "{err}"
    );
    let cancelled = run(&[
        "pub",
        "schedules.cancelled",
        "paid",
        "--cancel-schedule",
        "schedules.doomed",
        "--cancel-schedule-seq",
        "1",
    ]);
    assert!(
        cancelled.starts_with("Stored in Stream: JOBS"),
        "{cancelled}"
    );

    // A later one-off schedule fires, past the time the cancelled one would have.
    let at = time::OffsetDateTime::now_utc() + time::Duration::seconds(3);
    let at = at
        .format(&time::format_description::well_known::Rfc3339)
        .expect("rfc3339");
    run(&[
        "pub",
        "schedules.later",
        "fired",
        "--schedule-at",
        &at,
        "--schedule-dest",
        "jobs.later",
    ]);
    let fired = run(&[
        "consumer",
        "next",
        "JOBS",
        "fired",
        "--raw",
        "--timeout",
        "15s",
    ]);
    assert_eq!(
        fired, "fired\n",
        "the first message on jobs.> is the later one"
    );
    let err = rnats.fails(
        &[
            &["stream", "get", "JOBS", "--last-for", "jobs.doomed"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(err.contains("no message found"), "{err}");

    // Cron and interval schedules are stored; bad ones are refused before sending.
    run(&[
        "pub",
        "schedules.daily",
        "report",
        "--schedule-cron",
        "0 30 6 * * mon-fri",
        "--schedule-time-zone",
        "Europe/Amsterdam",
        "--schedule-dest",
        "jobs.daily",
        "--schedule-ttl",
        "1h",
    ]);
    run(&[
        "pub",
        "schedules.tick",
        "tick",
        "--schedule-every",
        "1h",
        "--schedule-dest",
        "jobs.tick",
    ]);
    let pattern = rnats.json(
        &[
            &[
                "stream",
                "get",
                "JOBS",
                "--last-for",
                "schedules.daily",
                "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(
        pattern.to_string().contains("0 30 6 * * mon-fri"),
        "{pattern}"
    );
    for (args, want) in [
        (
            &[
                "--schedule-cron",
                "61 * * * * *",
                "--schedule-dest",
                "jobs.x",
            ][..],
            "invalid schedule",
        ),
        (
            &["--schedule-every", "500ms", "--schedule-dest", "jobs.x"][..],
            "1s",
        ),
        (
            &["--schedule-every", "1h"][..],
            "--schedule-dest is required",
        ),
        (
            &["--schedule-at", "tomorrow", "--schedule-dest", "jobs.x"][..],
            "RFC 3339",
        ),
        (
            &[
                "--schedule-every",
                "1h",
                "--schedule-after",
                "1h",
                "--schedule-dest",
                "jobs.x",
            ][..],
            "mutually exclusive",
        ),
        (&["--schedule-dest", "jobs.x"][..], "needs one of"),
    ] {
        let err = rnats.fails(&[&["pub", "schedules.bad", "x"][..], args, &s[..]].concat());
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let err = rnats.fails(
        &[
            &[
                "pub",
                "schedules.bad",
                "x",
                "--atomic",
                "--schedule-every",
                "1h",
            ][..],
            &["--schedule-dest", "jobs.x"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(err.contains("does not support schedules"), "{err}");
}
