//! natscli forms a new user types in the first hour, against real servers: `sub` on a stream
//! with its deliver flags, `consumer next --wait`, `consumer add --sample`, `kv update` and
//! `kv keys`, the lines `pub`, `req --count` and `kv put` print, and `bench` on the server the
//! connection flags or the context name.

mod common;

use common::{Rnats, assert_success, json_lines};
use rnats_test_server::NatsServer;
use serde_json::Value;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn pub_reports_what_it_published_with_templates_expanded() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let out = rnats.run(&["pub", "greet", "hello", "-s", &url]);
    assert_success(&out, &["pub"]);
    assert_eq!(stderr(&out), "Published 5 bytes to \"greet\"\n");
    assert_eq!(stdout(&out), "");

    // Up to 20 messages: one line each, subject and body rendered per message.
    let out = rnats.run(&[
        "pub",
        "load.{{Count}}",
        "n{{Count}}",
        "--count",
        "3",
        "-s",
        &url,
    ]);
    assert_success(&out, &["pub"]);
    assert_eq!(
        stderr(&out),
        "Published 2 bytes to \"load.1\"\nPublished 2 bytes to \"load.2\"\n\
         Published 2 bytes to \"load.3\"\n"
    );
    // A longer run sums up, naming the first and last subjects it published to.
    let out = rnats.run(&["pub", "load.{{Count}}", "x", "--count", "25", "-s", &url]);
    assert_success(&out, &["pub"]);
    assert_eq!(
        stderr(&out),
        "Published 25 messages (25 B) to \"load.1\" .. \"load.25\"\n"
    );
    assert!(!stderr(&out).contains("{{"), "{}", stderr(&out));
    let out = rnats.run(&["pub", "greet", "hello", "-q", "-s", &url]);
    assert_eq!(stderr(&out), "");
}

#[test]
fn req_count_numbers_every_reply() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut reply = rnats.spawn_ready(
        &["reply", "svc", "pong {{Count}}", "--count", "3", "-s", &url],
        "Listening on",
    );
    let out = rnats.run(&["req", "svc", "ping", "--count", "3", "-s", &url]);
    assert_success(&out, &["req", "--count"]);
    // The titles on stderr, as natscli logs them; the bodies alone on stdout.
    let log = stderr(&out);
    let titles: Vec<&str> = log.lines().filter(|l| l.starts_with("[#")).collect();
    assert_eq!(titles.len(), 3, "{log}");
    for (i, title) in titles.iter().enumerate() {
        assert!(
            title.starts_with(&format!("[#{}] Received with rtt ", i + 1)),
            "{log}"
        );
    }
    // The requester numbers replies from 1, the responder its requests from 0 (natscli's).
    assert_eq!(stdout(&out), "pong 0\npong 1\npong 2\n");
    assert_success(&reply.finish(), &["reply"]);
}

#[test]
fn kv_put_echoes_update_checks_the_revision_and_keys_filters() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["kv", "add", "cfg", "--history", "5"]);
    assert_eq!(run(&["kv", "put", "cfg", "app.color", "blue"]), "blue\n");
    assert_eq!(run(&["kv", "create", "cfg", "app.size", "10"]), "10\n");
    run(&["kv", "put", "cfg", "db.host", "h"]);
    // app.color is at revision 1: an update against it succeeds and moves it to 4.
    assert_eq!(
        run(&["kv", "update", "cfg", "app.color", "red", "1"]),
        "red\n"
    );
    let entry = rnats.json(&[&["kv", "get", "cfg", "app.color", "--json"][..], &s[..]].concat());
    assert_eq!(entry["revision"], 4, "{entry}");
    assert_eq!(entry["value"], "red", "{entry}");
    // The same update again: the revision moved, nothing is written.
    let line = rnats.fails(
        &[
            &["kv", "update", "cfg", "app.color", "green", "1"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(
        line,
        "error: cannot update app.color in cfg: revision 1 is not its latest (it is at revision 4); read it again and retry"
    );
    assert_eq!(run(&["kv", "get", "cfg", "app.color", "--raw"]), "red");

    assert_eq!(
        run(&["kv", "keys", "cfg"]),
        "app.color\napp.size\ndb.host\n"
    );
    assert_eq!(
        run(&["kv", "keys", "cfg", "app.>"]),
        "app.color\napp.size\n"
    );
    assert_eq!(
        run(&["kv", "keys", "cfg", "app.size", "db.*"]),
        "app.size\ndb.host\n"
    );
    let keys = rnats.json(&[&["kv", "keys", "cfg", "db.>", "--json"][..], &s[..]].concat());
    assert_eq!(keys, serde_json::json!(["db.host"]));
}

#[test]
fn consumer_next_waits_naks_and_terms_and_add_takes_a_sample_rate() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["stream", "add", "S", "--subjects", "s.>", "--defaults"]);
    run(&["pub", "s.a", "one", "--count", "2", "-J"]);
    run(&[
        "consumer",
        "add",
        "S",
        "C",
        "--pull",
        "--sample",
        "40",
        "--defaults",
    ]);
    run(&["consumer", "add", "S", "B", "--pull", "--defaults"]);
    assert_eq!(run(&["consumer", "ls", "S", "--names"]), "B\nC\n");
    assert_eq!(run(&["consumer", "ls", "S", "-n"]), "B\nC\n");
    let info = rnats.json(&[&["consumer", "info", "S", "C", "--json"][..], &s[..]].concat());
    let sampled = info["config"]["sample_freq"].as_str().unwrap_or_default();
    assert!(sampled.starts_with("40"), "{info}");
    let text = run(&["consumer", "info", "S", "C"]);
    assert!(text.contains("Sampling rate"), "{text}");

    let out = run(&["consumer", "next", "S", "C", "--wait", "20ms"]);
    assert!(out.contains("Acknowledged message after "), "{out}");
    assert!(out.contains(" delay\n"), "{out}");
    // The ack arrived: the second message is the next one, and nothing is pending an ack.
    let out = run(&["consumer", "next", "S", "C", "-r"]);
    assert_eq!(out, "one\n");
    let info = rnats.json(&[&["consumer", "info", "S", "C", "--json"][..], &s[..]].concat());
    assert_eq!(info["num_ack_pending"], 0, "{info}");
    assert_eq!(info["ack_floor"]["stream_seq"], 2, "{info}");
    // A nak: the server delivers the same message again; a term: never again.
    run(&["pub", "s.a", "two", "-J"]);
    run(&["pub", "s.a", "three", "-J"]);
    let out = run(&["consumer", "next", "S", "C", "--nak"]);
    assert!(
        out.starts_with("[S#3] Received on \"s.a\" (nacked)\n"),
        "{out}"
    );
    assert!(out.ends_with("Negative Acknowledged message\n"), "{out}");
    let out = run(&["consumer", "next", "S", "C", "--term"]);
    assert!(
        out.starts_with("[S#3] Received on \"s.a\" (terminated)\n"),
        "{out}"
    );
    assert!(out.ends_with("Terminated message\n"), "{out}");
    assert_eq!(run(&["consumer", "next", "S", "C", "-r"]), "three\n");
    let out = rnats.run(
        &[
            &["consumer", "add", "S", "D", "--sample", "101", "--defaults"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("101 is not in 0..=100"),
        "{}",
        stderr(&out)
    );
}

/// A stream `S` on `s.>` with five messages: s.a 1..3 and s.b 4..5, each with a header.
fn stream_with_messages(rnats: &Rnats, url: &str) {
    rnats.ok(&[
        "stream",
        "add",
        "S",
        "--subjects",
        "s.>",
        "--defaults",
        "-s",
        url,
    ]);
    for (subject, body) in [
        ("s.a", "a1"),
        ("s.a", "a2"),
        ("s.a", "a3"),
        ("s.b", "b4"),
        ("s.b", "b5"),
    ] {
        rnats.ok(&["pub", subject, body, "-J", "-H", "K:v", "-s", url]);
    }
}

/// `rnats sub ARGS --json --count N -s URL`: the messages it printed.
fn sub_json(rnats: &Rnats, url: &str, args: &[&str], count: &str) -> Vec<Value> {
    let out = rnats.ok(&[
        &["sub"][..],
        args,
        &["--json", "--count", count, "-s", url][..],
    ]
    .concat());
    json_lines(&out)
}

fn bodies(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["data"].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn sub_reads_a_stream_from_where_the_deliver_flags_say() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    stream_with_messages(&rnats, &url);

    let all = sub_json(&rnats, &url, &["--stream", "S"], "5");
    assert_eq!(bodies(&all), ["a1", "a2", "a3", "b4", "b5"]);
    assert_eq!(all[0]["stream"], "S");
    assert_eq!(all[0]["seq"], 1);
    assert_eq!(all[0]["pending"], 4);
    assert_eq!(all[4]["pending"], 0);
    assert!(all[0]["time"].is_string(), "{}", all[0]);
    assert_eq!(all[0]["headers"]["K"][0], "v");
    // A subject filters the stream; without --stream a deliver flag finds the stream.
    assert_eq!(
        bodies(&sub_json(&rnats, &url, &["s.b", "--all"], "2")),
        ["b4", "b5"]
    );
    assert_eq!(
        bodies(&sub_json(&rnats, &url, &["--stream", "S", "--last"], "1")),
        ["b5"]
    );
    assert_eq!(
        bodies(&sub_json(
            &rnats,
            &url,
            &["--stream", "S", "--last-per-subject"],
            "2"
        )),
        ["a3", "b5"]
    );
    assert_eq!(
        bodies(&sub_json(
            &rnats,
            &url,
            &["--stream", "S", "--start-sequence", "4"],
            "2"
        )),
        ["b4", "b5"]
    );
    assert_eq!(
        bodies(&sub_json(&rnats, &url, &["s.a", "--since", "1h"], "3")),
        ["a1", "a2", "a3"]
    );
    // --new: only what is stored after the consumer is in place.
    let mut new = rnats.spawn_ready(
        &[
            "sub", "--stream", "S", "--new", "--count", "1", "--json", "-s", &url,
        ],
        "Subscribed to",
    );
    rnats.ok(&["pub", "s.c", "c6", "-J", "-s", &url]);
    let out = new.finish();
    assert_success(&out, &["sub", "--new"]);
    let got = json_lines(&stdout(&out));
    assert_eq!(bodies(&got), ["c6"]);
    assert_eq!(got[0]["seq"], 6);

    let out = rnats.run(&["sub", "--stream", "S", "--all", "--last", "-s", &url]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    let line = rnats.fails(&["sub", "--stream", "NOPE", "-s", &url]);
    assert!(line.contains("NOPE"), "{line}");
}

#[test]
fn sub_reads_by_direct_gets_when_asked_and_on_work_queue_streams() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    stream_with_messages(&rnats, &url);
    // --wait bounds every read: a message lost shows as a short list, not a hang.
    let direct = |args: &[&str], count: &str| {
        sub_json(
            &rnats,
            &url,
            &[args, &["--direct", "--wait", "10s"][..]].concat(),
            count,
        )
    };

    let all = direct(&["--stream", "S"], "5");
    assert_eq!(bodies(&all), ["a1", "a2", "a3", "b4", "b5"]);
    assert_eq!(
        (&all[0]["stream"], &all[0]["seq"]),
        (&"S".into(), &1.into())
    );
    assert!(all[0]["time"].is_string(), "{}", all[0]);
    assert_eq!(
        (&all[0]["pending"], &all[4]["pending"]),
        (&4.into(), &0.into())
    );
    // The message's own headers, beside those the get adds (natscli shows them all).
    assert_eq!(all[0]["headers"]["K"][0], "v");
    assert_eq!(all[0]["headers"]["Nats-Sequence"][0], "1");
    assert_eq!(bodies(&direct(&["s.b", "--all"], "2")), ["b4", "b5"]);
    assert_eq!(bodies(&direct(&["--stream", "S", "--last"], "1")), ["b5"]);
    // The last message on the filter, though the stream's last is on another subject.
    assert_eq!(
        bodies(&direct(&["s.a", "--stream", "S", "--last"], "1")),
        ["a3"]
    );
    assert_eq!(
        bodies(&direct(&["--stream", "S", "--last-per-subject"], "2")),
        ["a3", "b5"]
    );
    assert_eq!(
        bodies(&direct(&["--stream", "S", "--start-sequence", "4"], "2")),
        ["b4", "b5"]
    );
    assert_eq!(
        bodies(&direct(&["s.a", "--since", "1h"], "3")),
        ["a1", "a2", "a3"]
    );
    // -T: what is stored, then the end.
    let out = rnats.ok(&[
        "sub", "--stream", "S", "--direct", "-T", "--raw", "-s", &url,
    ]);
    assert_eq!(out, "a1\na2\na3\nb4\nb5\n");
    // --dump into a folder that is not there yet: made, one file per stream sequence.
    let dir = tempfile::tempdir().expect("temp dir");
    let dump = dir.path().join("new");
    let dump_arg = dump.to_string_lossy().into_owned();
    rnats.ok(&[
        "sub", "--stream", "S", "--direct", "-T", "--dump", &dump_arg, "-s", &url,
    ]);
    let written: Value =
        serde_json::from_slice(&std::fs::read(dump.join("5.json")).expect("dumped")).expect("JSON");
    assert_eq!(written["Subject"], "s.b");
    // --new, then the messages stored after the read began, asked for again and again.
    let mut new = rnats.spawn_ready(
        &[
            "sub", "--stream", "S", "--direct", "--new", "--count", "2", "--json", "-s", &url,
        ],
        "Subscribed to",
    );
    rnats.ok(&["pub", "s.c", "c6", "-J", "-s", &url]);
    rnats.ok(&["pub", "s.c", "c7", "-J", "-s", &url]);
    let out = new.finish_within(std::time::Duration::from_secs(20));
    assert_success(&out, &["sub", "--direct", "--new"]);
    let got = json_lines(&stdout(&out));
    assert_eq!(bodies(&got), ["c6", "c7"]);
    assert_eq!(got[1]["seq"], 7);

    // A work-queue stream with a worker: read without a consumer, and nothing taken.
    rnats.ok(&[
        "stream",
        "add",
        "JOBS",
        "--subjects",
        "jobs.>",
        "--retention",
        "work",
        "--defaults",
        "-s",
        &url,
    ]);
    rnats.ok(&["pub", "jobs.a", "one", "-J", "-s", &url]);
    rnats.ok(&["pub", "jobs.b", "two", "-J", "-s", &url]);
    rnats.ok(&[
        "consumer",
        "add",
        "JOBS",
        "worker",
        "--pull",
        "--defaults",
        "-s",
        &url,
    ]);
    let out = rnats.ok(&["sub", "--stream", "JOBS", "-T", "--raw", "-s", &url]);
    assert_eq!(out, "one\ntwo\n");
    let info: Value =
        serde_json::from_str(&rnats.ok(&["stream", "info", "JOBS", "--json", "-s", &url]))
            .expect("JSON");
    assert_eq!(info["state"]["messages"], 2, "still there: {info}");

    // A stream that does not allow direct gets says so.
    rnats.ok(&[
        "stream",
        "add",
        "NODIRECT",
        "--subjects",
        "nd.>",
        "--no-allow-direct",
        "--defaults",
        "-s",
        &url,
    ]);
    let line = rnats.fails(&["sub", "--stream", "NODIRECT", "--direct", "-s", &url]);
    assert!(line.contains("allow-direct"), "{line}");
}

#[test]
fn sub_on_a_stream_prints_natscli_lines_headers_only_timestamps_and_raw() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    stream_with_messages(&rnats, &url);

    let text = rnats.ok(&["sub", "--stream", "S", "--count", "1", "-s", &url]);
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            "[#1] Received JetStream message: stream: S seq: 1 / pending: 4 / subject: s.a / time: "
        ),
        "{text}"
    );
    assert!(text.contains("K: v\n"), "{text}");
    assert!(text.contains("\na1\n"), "{text}");

    // Headers only: the server leaves the body out and says how big it was.
    let text = rnats.ok(&[
        "sub",
        "--stream",
        "S",
        "--headers-only",
        "--count",
        "1",
        "-s",
        &url,
    ]);
    assert!(text.contains("K: v\n"), "{text}");
    assert!(text.contains("Nats-Msg-Size: 2\n"), "{text}");
    assert!(!text.contains("a1"), "{text}");
    let json = sub_json(&rnats, &url, &["--stream", "S", "--headers-only"], "1");
    assert_eq!(json[0]["data"], "", "{}", json[0]);

    // Timestamps: when the message was stored, natscli's ` @ Mon _2 15:04:05.000000`.
    let text = rnats.ok(&["sub", "--stream", "S", "-t", "--count", "1", "-s", &url]);
    let first = text.lines().next().unwrap_or_default();
    let stamp = first
        .strip_prefix("[#1] @ ")
        .and_then(|rest| rest.split(" Received").next())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(stamp.len(), "Dec  3 06:14:01.123456".len(), "{stamp}");
    assert_eq!(stamp.split('.').nth(1).map(str::len), Some(6), "{stamp}");

    assert_eq!(
        rnats.ok(&["sub", "--stream", "S", "-r", "--count", "3", "-s", &url]),
        "a1\na2\na3\n"
    );
    assert_eq!(
        rnats.ok(&["sub", "--stream", "S", "--raw", "--count", "1", "-s", &url]),
        "a1\n"
    );
}

#[test]
fn core_sub_takes_headers_only_timestamps_and_r() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut sub = rnats.spawn_ready(
        &[
            "sub",
            "t.>",
            "--headers-only",
            "--timestamp",
            "--count",
            "1",
            "-s",
            &url,
        ],
        "Subscribed to",
    );
    rnats.ok(&["pub", "t.x", "body", "-H", "K:v", "-s", &url]);
    let out = sub.finish();
    assert_success(&out, &["sub"]);
    let text = stdout(&out);
    assert!(text.starts_with("[#1] @ "), "{text}");
    assert!(text.contains(" Received on \"t.x\"\n"), "{text}");
    assert!(text.contains("K: v\n"), "{text}");
    assert!(!text.contains("body"), "{text}");

    let mut sub = rnats.spawn_ready(
        &["sub", "t.>", "-r", "--count", "1", "-s", &url],
        "Subscribed to",
    );
    rnats.ok(&["pub", "t.y", "raw body", "-s", &url]);
    let out = sub.finish();
    assert_eq!(stdout(&out), "raw body\n");
}

#[test]
fn bench_runs_on_the_server_the_flags_or_the_context_name() {
    let server = NatsServer::builder()
        .user_password("bench", "secret")
        .spawn()
        .expect("nats-server starts");
    let url = server.url();
    let rnats = Rnats::new();
    let bench = |extra: &[&str]| {
        let json = rnats.json(&[&["bench", "pub", "--msgs", "200", "--json"][..], extra].concat());
        assert_eq!(json["private_server"], false, "{json}");
        assert_eq!(json["server"], url.as_str(), "{json}");
        assert_eq!(json["publishers"]["aggregate"]["msgs"], 200, "{json}");
    };
    // The global connection flags, credentials included.
    bench(&["-s", &url, "--user", "bench", "--password", "secret"]);
    // A context named with --context, then the selected one.
    rnats.ok(&[
        "context",
        "add",
        "local",
        "--server",
        &url,
        "--user",
        "bench",
        "--password",
        "secret",
    ]);
    bench(&["--context", "local"]);
    rnats.ok(&["context", "select", "local"]);
    bench(&[]);
    // Wrong credentials fail the run instead of starting a private server.
    let line = rnats.fails(&["bench", "pub", "--msgs", "10", "--password", "wrong"]);
    assert!(line.contains(&url), "{line}");
    // --no-context and no URL: a private server, as before.
    let json = rnats.json(&["bench", "pub", "--msgs", "200", "--json", "--no-context"]);
    assert_eq!(json["private_server"], true, "{json}");
}

#[test]
fn sub_stops_at_the_end_of_a_stream_ignores_subjects_and_shows_subjects_only() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    stream_with_messages(&rnats, &url);

    // -T: everything the stream holds, then exit, without --count.
    let all = json_lines(&rnats.ok(&["sub", "--stream", "S", "-T", "--json", "-s", &url]));
    assert_eq!(bodies(&all), ["a1", "a2", "a3", "b4", "b5"]);
    // Nothing stored under the filter: nothing to wait for.
    assert_eq!(rnats.ok(&["sub", "s.none", "--all", "-T", "-s", &url]), "");
    // -I leaves subjects out (and they do not count).
    let b = json_lines(&rnats.ok(&[
        "sub", "--stream", "S", "-T", "-I", "s.a", "--json", "-s", &url,
    ]));
    assert_eq!(bodies(&b), ["b4", "b5"]);
    let out = rnats.ok(&[
        "sub", "--stream", "S", "-I", "s.x,s.a", "--count", "1", "--json", "-s", &url,
    ]);
    assert_eq!(bodies(&json_lines(&out)), ["b4"]);
    // --subjects-only: the title lines alone.
    let text = rnats.ok(&["sub", "--stream", "S", "--subjects-only", "-T", "-s", &url]);
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.lines().all(|l| l.starts_with("[#")), "{text}");
    // -d: how long ago each was stored.
    let text = rnats.ok(&["sub", "--stream", "S", "-d", "--count", "1", "-s", &url]);
    assert!(text.starts_with("[#1] @ "), "{text}");
    assert!(text.contains(" Received JetStream message: "), "{text}");

    let line = rnats.fails(&["sub", "s.a", "-T", "-s", &url]);
    assert!(line.contains("--terminate-at-end"), "{line}");
}

#[test]
fn sub_wait_ends_a_quiet_subscription() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    // Nothing is published: the subscription ends, successfully, once --wait passes.
    let out = rnats.run(&["sub", "quiet.>", "--wait", "100ms", "-s", &url]);
    assert_success(&out, &["sub", "--wait"]);
    assert_eq!(stdout(&out), "");
    // Messages within the wait keep it going.
    let mut sub = rnats.spawn_ready(
        &[
            "sub", "quiet.>", "--wait", "30s", "--count", "2", "-r", "-s", &url,
        ],
        "Subscribed to",
    );
    rnats.ok(&["pub", "quiet.x", "one", "-s", &url]);
    rnats.ok(&["pub", "quiet.x", "two", "-s", &url]);
    let out = sub.finish();
    assert_success(&out, &["sub", "--wait"]);
    assert_eq!(stdout(&out), "one\ntwo\n");
}

#[test]
fn kv_create_and_purge_take_a_per_key_ttl() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["kv", "add", "tt", "--marker-ttl", "1s"]);
    assert_eq!(
        run(&["kv", "create", "tt", "k", "v", "--ttl", "30s"]),
        "v\n"
    );
    let stored = rnats.json(&[&["stream", "get", "KV_tt", "1", "--json"][..], &s[..]].concat());
    assert_eq!(stored["headers"]["Nats-TTL"][0], "30s", "{stored}");
    run(&["kv", "purge", "tt", "k", "--ttl", "1m", "-f"]);
    let marker = rnats.json(&[&["stream", "get", "KV_tt", "2", "--json"][..], &s[..]].concat());
    assert_eq!(marker["headers"]["KV-Operation"][0], "PURGE", "{marker}");
    assert_eq!(marker["headers"]["Nats-TTL"][0], "60s", "{marker}");
}

#[test]
fn stream_ls_keeps_the_streams_of_a_subject() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    run(&["stream", "add", "S", "--subjects", "s.>", "--defaults"]);
    run(&["stream", "add", "T", "--subjects", "t.*", "--defaults"]);
    assert_eq!(run(&["stream", "ls", "--subject", "s.a", "-n"]), "S\n");
    assert_eq!(run(&["stream", "ls", "--subject", "t.x", "-n"]), "T\n");
    assert_eq!(run(&["stream", "ls", "--subject", ">", "-n"]), "S\nT\n");
    let table = run(&["stream", "ls", "--subject", "t.>"]);
    assert!(table.contains("T ") && !table.contains("s.>"), "{table}");
    let json = rnats.json(&[&["stream", "ls", "--subject", "s.*", "--json"][..], &s[..]].concat());
    assert_eq!(json, serde_json::json!(["S"]));
}

#[test]
fn consumer_add_takes_a_backoff_and_a_pause() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());
    let info =
        |name: &str| rnats.json(&[&["consumer", "info", "S", name, "--json"][..], &s[..]].concat());
    run(&["stream", "add", "S", "--subjects", "s.>", "--defaults"]);
    run(&[
        "consumer",
        "add",
        "S",
        "B",
        "--backoff",
        "linear",
        "--backoff-steps",
        "3",
        "--backoff-min",
        "1s",
        "--backoff-max",
        "3s",
        "--defaults",
    ]);
    let b = info("B");
    assert_eq!(
        b["config"]["backoff"],
        serde_json::json!([1_000_000_000u64, 2_000_000_000u64, 3_000_000_000u64]),
        "{b}"
    );
    run(&["consumer", "edit", "S", "B", "--backoff", "none"]);
    let b = info("B");
    assert!(
        b["config"]["backoff"].as_array().is_none_or(Vec::is_empty),
        "{b}"
    );
    run(&["consumer", "add", "S", "P", "--pause", "1h", "--defaults"]);
    let p = info("P");
    assert_eq!(p["paused"], true, "{p}");
    assert!(p["config"]["pause_until"].is_string(), "{p}");
}

#[test]
fn req_sends_each_line_with_send_on_newline_and_reads_stdin_when_forced() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let mut echo = rnats.spawn_ready(
        &["reply", "svc.*", "--count", "3", "-s", &url],
        "Listening on",
    );
    // Each line is a request of its own, to a subject rendered per request.
    let out = rnats.run_with_input(
        &[
            "req",
            "svc.{{Count}}",
            "--send-on",
            "newline",
            "-r",
            "-s",
            &url,
        ],
        b"alpha\nbeta\n",
    );
    assert_success(&out, &["req", "--send-on"]);
    assert_eq!(stdout(&out), "alpha\nbeta\n");
    // --force-stdin: standard input, not the body argument.
    let out = rnats.run_with_input(
        &[
            "req",
            "svc.x",
            "ignored",
            "--force-stdin",
            "--raw",
            "-s",
            &url,
        ],
        b"from stdin",
    );
    assert_success(&out, &["req", "--force-stdin"]);
    assert_eq!(stdout(&out), "from stdin\n");
    assert_success(&echo.finish(), &["reply"]);
}

#[test]
fn natscli_short_json_flag_and_negations_are_taken() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    // natscli gives every --json the short -j.
    for args in [
        &["server", "info", "-j"][..],
        &["rtt", "1", "-j"],
        &["trace", "nobody", "-j"],
        &["service", "ls", "-j"],
        &["service", "ping", "-j"],
        &["errors", "lookup", "10059", "-j"],
    ] {
        let out = rnats.ok(&[args, &s[..]].concat());
        serde_json::from_str::<Value>(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
    }
    rnats.ok(&["context", "add", "j", "--server", &url]);
    let list = rnats.json(&["context", "ls", "-j"]);
    assert_eq!(list[0]["name"], "j", "{list}");
    let info = rnats.json(&["context", "info", "j", "-j"]);
    assert_eq!(info["url"], url.as_str(), "{info}");

    // fisk's --no-FLAG for natscli's boolean flags: the last of the pair wins.
    let plain = rnats.ok(&["errors", "ls"]);
    assert_eq!(rnats.ok(&["errors", "ls", "-R", "--no-reverse"]), plain);
    assert_ne!(rnats.ok(&["errors", "ls", "--no-reverse", "-R"]), plain);
    let mut sub = rnats.spawn_ready(
        &[
            &["sub", "neg", "--ack", "--no-ack", "--count", "1", "-j"][..],
            &s[..],
        ]
        .concat(),
        "Subscribed to",
    );
    rnats.ok(&[&["pub", "neg", "{{Count}}", "--no-templates"][..], &s[..]].concat());
    let out = sub.finish();
    assert_success(&out, &["sub", "--no-ack"]);
    assert_eq!(json_lines(&stdout(&out))[0]["data"], "{{Count}}");
}

#[test]
fn cheat_shows_rnats_own_sheets() {
    let rnats = Rnats::new();
    let sections = rnats.ok(&["cheat", "--sections"]);
    for section in ["publish", "subscribe", "reply", "stream", "kv", "context"] {
        assert!(sections.lines().any(|l| l == section), "{sections}");
    }
    // By natscli's section name or by the command's.
    let sheet = rnats.ok(&["cheat", "subscribe"]);
    assert_eq!(rnats.ok(&["cheat", "sub"]), sheet);
    assert!(sheet.contains("rnats sub "), "{sheet}");
    let all = rnats.ok(&["cheat"]);
    assert!(all.contains("## publish") && all.contains(&sheet), "{all}");
    let line = rnats.fails(&["cheat", "nope"]);
    assert!(line.contains("the sections are"), "{line}");
    let dir = tempfile::tempdir().expect("temp dir");
    rnats.ok(&["cheat", "--save", &dir.path().to_string_lossy()]);
    let saved = std::fs::read_to_string(dir.path().join("rnats/subscribe")).expect("saved");
    assert_eq!(saved, sheet);
}

#[test]
fn the_docs_walkthrough_stream_line_runs_as_it_is() {
    let server = NatsServer::with_jetstream();
    let url = server.url();
    let rnats = Rnats::new();
    let info = rnats.json(&[
        "str",
        "add",
        "ORDERS",
        "--subjects",
        "ORDERS.*",
        "--ack",
        "--max-msgs=-1",
        "--max-bytes=-1",
        "--max-age=1y",
        "--storage",
        "file",
        "--retention",
        "limits",
        "--max-msg-size=-1",
        "--discard=old",
        "--dupe-window=0s",
        "--replicas",
        "1",
        "--max-msgs-per-subject=-1",
        "--no-allow-rollup",
        "--no-deny-delete",
        "--no-deny-purge",
        "-j",
        "-s",
        &url,
    ]);
    let config = &info["config"];
    assert_eq!(config["subjects"], serde_json::json!(["ORDERS.*"]));
    assert_eq!(config["max_msgs"], -1, "{config}");
    assert!(
        config["max_age"].as_u64().is_some_and(|age| age > 0),
        "{config}"
    );
    assert_eq!(config["allow_direct"], true, "{config}");
    for field in ["allow_rollup_hdrs", "deny_delete", "deny_purge"] {
        assert!(
            config.get(field).is_none_or(|v| v == false),
            "{field}: {config}"
        );
    }
    // And natscli's unlimited age.
    let info = rnats.json(&[
        "str",
        "edit",
        "ORDERS",
        "--max-age=-1",
        "-f",
        "-j",
        "-s",
        &url,
    ]);
    assert_eq!(info["config"]["max_age"], 0);
}
