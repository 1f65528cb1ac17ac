//! rnats on a three-node JetStream cluster: `stream ls` naming a stream whose only server is
//! gone.

mod common;

use std::time::{Duration, Instant};

use common::Rnats;
use rnats_test_server::Cluster;
use serde_json::Value;

/// A system account, and an application account with JetStream that clients without
/// credentials land in.
const ACCOUNTS: &str = r#"
accounts {
  SYS { users = [ { user: sys, password: pass } ] }
  APP { jetstream: enabled, users = [ { user: app, password: pass } ] }
}
system_account: SYS
no_auth_user: app
"#;

/// How long a cluster may take to do what a test awaits: elections on a loaded 2-core
/// machine take seconds.
const SETTLE: Duration = Duration::from_secs(60);

fn start_cluster() -> Cluster {
    Cluster::start_with(3, |node| node.jetstream(true).append_config(ACCOUNTS)).expect("cluster")
}

/// `args` with the server and a timeout long enough for an election on a loaded machine.
fn with_server<'a>(args: &[&'a str], url: &'a str) -> Vec<&'a str> {
    [args, &["-s", url, "--timeout", "30s"][..]].concat()
}

/// Adds stream `name` with `replicas` copies, asking again while the meta leader cannot
/// place them yet ("no suitable peers": it has not heard from a peer since it joined).
fn add_stream(rnats: &Rnats, url: &str, name: &str, replicas: &str) {
    let subjects = format!("{}.>", name.to_lowercase());
    let add = with_server(
        &[
            "stream",
            "add",
            name,
            "--subjects",
            &subjects,
            "--replicas",
            replicas,
            "--defaults",
        ],
        url,
    );
    let deadline = Instant::now() + SETTLE;
    loop {
        let out = rnats.run(&add);
        let placing = String::from_utf8_lossy(&out.stderr).contains("no suitable peers");
        if out.status.success() || !placing || Instant::now() > deadline {
            common::assert_success(&out, &add);
            return;
        }
    }
}

/// The `cluster` object of `stream info --json`.
fn stream_cluster(rnats: &Rnats, url: &str, name: &str) -> Value {
    rnats.json(&with_server(&["stream", "info", name, "--json"], url))["cluster"].clone()
}

#[test]
fn stream_ls_names_a_stream_whose_server_is_gone() {
    let mut cluster = start_cluster();
    let urls = cluster.urls();
    let rnats = Rnats::new();
    add_stream(&rnats, &urls.join(","), "LONE", "1");
    let host = stream_cluster(&rnats, &urls.join(","), "LONE")["leader"]
        .as_str()
        .expect("a leader")
        .to_owned();
    let index: usize = host
        .strip_prefix("rnats-node-")
        .and_then(|i| i.parse().ok())
        .unwrap_or_else(|| panic!("unexpected server name {host}"));
    cluster.node_mut(index).kill();
    let survivors: Vec<String> = urls
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, url)| url.clone())
        .collect();
    let survivors = survivors.join(",");

    // The listing waits out the gone server, or the meta leader already counts it offline:
    // either way the stream is named. Each listing is a round trip, the event waited for.
    let deadline = Instant::now() + SETTLE;
    let listing = loop {
        let out = rnats.run(&with_server(&["stream", "ls"], &survivors));
        let listing = String::from_utf8_lossy(&out.stdout).into_owned();
        if listing.contains("Inaccessible streams: LONE") || Instant::now() > deadline {
            break listing;
        }
    };
    assert!(listing.contains("Inaccessible streams: LONE"), "{listing}");
}
