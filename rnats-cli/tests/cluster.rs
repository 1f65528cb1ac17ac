//! `rnats stream cluster`, `consumer cluster` and `server cluster` on a three-node
//! JetStream cluster: moving a stream's leader to a named server and a consumer's to another
//! one, removing a stream's peer, `stream ls` naming a stream whose only server is gone, and
//! the meta group's leader moved and a gone server removed from it, and `stream find`'s
//! placement filters.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::{ACCOUNTS, Rnats};
use rnats_test_server::Cluster;
use serde_json::Value;

/// How long a cluster may take to do what a test awaits: elections on a loaded 2-core
/// machine take seconds.
const SETTLE: Duration = Duration::from_secs(60);

fn start_cluster() -> Cluster {
    // Clients without credentials land in the application account.
    Cluster::start_with(3, |node| {
        node.jetstream(true)
            .append_config(ACCOUNTS)
            .append_config("no_auth_user: app\n")
    })
    .expect("cluster")
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
    common::add_once_placed(rnats, &add, SETTLE);
}

/// The `cluster` object of `stream info --json`.
fn stream_cluster(rnats: &Rnats, url: &str, name: &str) -> Value {
    rnats.json(&with_server(&["stream", "info", name, "--json"], url))["cluster"].clone()
}

/// The servers of a group: its leader and the other replicas.
fn members(cluster: &Value) -> BTreeSet<String> {
    let leader = cluster["leader"].as_str().map(str::to_owned);
    let replicas = cluster["replicas"].as_array().into_iter().flatten();
    let replicas = replicas.filter_map(|r| r["name"].as_str().map(str::to_owned));
    leader.into_iter().chain(replicas).collect()
}

#[test]
fn step_down_moves_leaders_and_peer_remove_replaces_a_replica() {
    let cluster = start_cluster();
    let url = cluster.urls().join(",");
    let rnats = Rnats::new();
    add_stream(&rnats, &url, "MOVE", "3");

    // To the server asked for. nats-server hands the leadership to the preferred replica
    // once it has caught up; on a busy machine the election can go elsewhere, so the
    // step-down is asked again (each run waits for its election) until it has.
    let before = stream_cluster(&rnats, &url, "MOVE");
    let old = before["leader"].as_str().expect("a leader").to_owned();
    let preferred = before["replicas"][0]["name"].as_str().expect("a replica");
    let args = [
        "stream",
        "cluster",
        "step-down",
        "MOVE",
        "--preferred",
        preferred,
    ];
    let deadline = Instant::now() + SETTLE;
    loop {
        let out = rnats.run(&with_server(&args, &url));
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains(&format!("New leader elected {preferred:?}")) {
            common::assert_success(&out, &args);
            assert!(
                String::from_utf8_lossy(&out.stdout).contains(&format!("Leader: {preferred}")),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
            break;
        }
        // An earlier request's election can end after the command stopped waiting for it:
        // the server then refuses the next one, its preferred server leading already.
        if stderr.contains("is already leader") {
            break;
        }
        assert!(Instant::now() < deadline, "{preferred} never led: {stderr}");
    }
    let after = stream_cluster(&rnats, &url, "MOVE");
    assert_eq!(after["leader"], preferred, "{after}");
    assert_ne!(after["leader"], old.as_str());

    // A consumer's leader, to any other replica.
    rnats.ok(&with_server(&["consumer", "add", "MOVE", "C"], &url));
    let info = rnats.json(&with_server(
        &["consumer", "info", "MOVE", "C", "--json"],
        &url,
    ));
    let old = info["cluster"]["leader"]
        .as_str()
        .expect("a leader")
        .to_owned();
    let out = rnats.ok(&with_server(
        &["consumer", "cluster", "step-down", "MOVE", "C"],
        &url,
    ));
    assert!(out.contains("Cluster:"), "{out}");
    let info = rnats.json(&with_server(
        &["consumer", "info", "MOVE", "C", "--json"],
        &url,
    ));
    assert_ne!(info["cluster"]["leader"], old.as_str(), "{info}");

    // A lone replica has no group to move.
    add_stream(&rnats, &url, "LONE", "1");
    let error = rnats.fails(&with_server(
        &["stream", "cluster", "step-down", "LONE"],
        &url,
    ));
    assert!(error.contains("not clustered"), "{error}");

    // An R2 stream on three servers: the third server replaces the removed one.
    add_stream(&rnats, &url, "PAIR", "2");
    let before = members(&stream_cluster(&rnats, &url, "PAIR"));
    let removed = stream_cluster(&rnats, &url, "PAIR")["replicas"][0]["name"]
        .as_str()
        .expect("a replica")
        .to_owned();
    let args = ["stream", "cluster", "peer-remove", "PAIR", &removed];
    let error = rnats.fails(&with_server(&args, &url));
    assert!(error.contains("--force"), "{error}");
    let out = rnats.ok(&with_server(&[&args[..], &["-f"]].concat(), &url));
    assert!(out.contains("Requested removal"), "{out}");
    // Each look is a round trip to the cluster, the event waited for.
    let deadline = Instant::now() + SETTLE;
    let after = loop {
        let now = members(&stream_cluster(&rnats, &url, "PAIR"));
        if (now.len() == 2 && !now.contains(&removed)) || Instant::now() > deadline {
            break now;
        }
    };
    assert!(!after.contains(&removed), "{after:?}");
    assert_eq!(after.len(), 2, "{after:?}");
    assert_ne!(after, before);
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
    // Until the survivors see the meta leader gone (when it was the killed server), a
    // listing sent to them goes unanswered: each attempt waits 10 s (the meta leader waits
    // 4 s for the streams' leaders), not the election's 30 s, and the next one goes out.
    let deadline = Instant::now() + SETTLE;
    let listing = loop {
        let out = rnats.run(&["stream", "ls", "-s", &survivors, "--timeout", "10s"]);
        let listing = String::from_utf8_lossy(&out.stdout).into_owned();
        if listing.contains("Inaccessible streams: LONE") || Instant::now() > deadline {
            break listing;
        }
    };
    assert!(listing.contains("Inaccessible streams: LONE"), "{listing}");
}

#[test]
fn stream_find_matches_the_leader_servers_and_cluster_of_each_stream() {
    let cluster = start_cluster();
    let url = cluster.urls().join(",");
    let rnats = Rnats::new();
    add_stream(&rnats, &url, "LONE", "1");
    add_stream(&rnats, &url, "TRIPLE", "3");
    // An R1 stream's leader is its one server, for good: no election can move it.
    let host = stream_cluster(&rnats, &url, "LONE")["leader"]
        .as_str()
        .expect("a leader")
        .to_owned();
    let find = |args: &[&str]| -> Vec<String> {
        let out = rnats.ok(&with_server(
            &[&["stream", "find", "-n"][..], args].concat(),
            &url,
        ));
        out.lines().map(str::to_owned).collect()
    };
    let has_lone = |args: &[&str]| find(args).iter().any(|name| name == "LONE");

    assert!(has_lone(&["--leader", &host]));
    assert!(!has_lone(&["--leader", &host, "--invert"]));
    assert_eq!(find(&["--leader", "elsewhere", "--invert"]).len(), 2);
    let exact = format!("^{host}$");
    assert!(has_lone(&["--server-name", &exact]));
    assert!(!has_lone(&["--server-name", &exact, "--invert"]));
    let in_cluster = format!("^{}$", cluster.name());
    assert_eq!(find(&["--cluster", &in_cluster]).len(), 2);
    assert!(find(&["--cluster", &in_cluster, "--invert"]).is_empty());
    assert!(find(&["--cluster", "^elsewhere$"]).is_empty());
    assert_eq!(find(&["--replicas", "1"]), ["LONE"]);
    assert_eq!(find(&["--replicas", "3", "--invert"]), ["TRIPLE"]);
}

/// `server cluster` as the system account user, on `url`.
fn as_system<'a>(args: &[&'a str], url: &'a str) -> Vec<&'a str> {
    [args, &["--user", "sys", "--password", "pass"][..]]
        .concat()
        .into_iter()
        .chain(with_server(&[], url))
        .collect()
}

/// The meta leader and the group's servers, as the leader's JSZ reports them; `servers`:
/// the answers to wait for (a server just gone is still counted active for a while).
fn meta_group(rnats: &Rnats, url: &str, servers: &str) -> Option<(String, BTreeSet<String>)> {
    let out = rnats.run(&as_system(
        &["server", "request", "jetstream", servers],
        url,
    ));
    let text = String::from_utf8_lossy(&out.stdout);
    let stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    for answer in stream.flatten() {
        let meta = &answer["data"]["meta_cluster"];
        let Some(leader) = meta["leader"]
            .as_str()
            .filter(|l| *l == answer["server"]["name"])
        else {
            continue;
        };
        let replicas = meta["replicas"].as_array().into_iter().flatten();
        let names = replicas.filter_map(|r| r["name"].as_str().map(str::to_owned));
        return Some((
            leader.to_owned(),
            names.chain([leader.to_owned()]).collect(),
        ));
    }
    None
}

#[test]
fn server_cluster_moves_the_meta_leader_and_removes_a_gone_server() {
    let mut cluster = start_cluster();
    let url = cluster.urls().join(",");
    let rnats = Rnats::new();

    // The application account may not.
    let error = rnats.fails(&with_server(&["server", "cluster", "step-down"], &url));
    assert!(error.contains("system account"), "{error}");

    let deadline = Instant::now() + SETTLE;
    let (old, members) = loop {
        if let Some(group) = meta_group(&rnats, &url, "3") {
            break group;
        }
        assert!(Instant::now() < deadline, "no meta leader");
    };
    assert_eq!(members.len(), 3, "{members:?}");
    let out = rnats.ok(&as_system(
        &["server", "cluster", "step-down", "--json"],
        &url,
    ));
    let moved: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(moved["previous"], old.as_str(), "{moved}");
    assert!(
        moved["leader"].as_str().is_some_and(|new| new != old),
        "{moved}"
    );

    // A server gone for good: refused without --force, then removed from the group.
    let gone = (0..3)
        .find(|i| format!("rnats-node-{i}") != moved["leader"])
        .expect("a follower");
    let gone_name = format!("rnats-node-{gone}");
    cluster.node_mut(gone).kill();
    let survivors: Vec<String> = cluster
        .urls()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i != gone)
        .map(|(_, url)| url)
        .collect();
    let survivors = survivors.join(",");
    let args = ["server", "cluster", "peer-remove", gone_name.as_str()];
    let error = rnats.fails(&as_system(&args, &survivors));
    assert!(error.contains("--force"), "{error}");
    let forced = [&args[..], &["-f"]].concat();
    let deadline = Instant::now() + SETTLE;
    loop {
        // The group may not have noticed the loss yet, or be electing: each try is a round
        // trip to it, the event waited for.
        let out = rnats.run(&as_system(&forced, &survivors));
        let removed = out.status.success()
            && meta_group(&rnats, &survivors, "2").is_some_and(|(_, m)| !m.contains(&gone_name));
        if removed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{gone_name} never removed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let error = rnats.fails(&as_system(
        &["server", "cluster", "peer-remove", "no-such-server", "-f"],
        &survivors,
    ));
    assert!(error.contains("no such server"), "{error}");
}
