//! Managing clustered streams and consumers on a three-node cluster: moving a leader to a
//! named server, removing a peer (the cluster places a new replica), listing streams whose
//! server is gone (nats-server 2.12's `missing`), and the typed error of a server that is
//! not clustered.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

use common::{ACCOUNTS, create_named_stream};
use futures_util::StreamExt;
use rnats_jetstream::Context;
use rnats_jetstream::consumer::pull;
use rnats_jetstream::stream::{ClusterInfo, Config, LeaderPlacement, StepDownErrorKind, Stream};
use rnats_test_server::{Cluster, NatsServer};

/// Bound on every wait of this file: elections on a loaded 2-core machine take seconds.
const WAIT: Duration = Duration::from_secs(60);
/// The API timeout of calls that may wait on an election or on a server that is gone (a
/// stream listing waits up to 4 s for each stream's servers).
const API_TIMEOUT: Duration = Duration::from_secs(30);

async fn start_cluster() -> (Cluster, Context) {
    let cluster =
        Cluster::start_with(3, |node| node.jetstream(true).append_config(ACCOUNTS)).unwrap();
    let client = rnats_core::ConnectOptions::new()
        .retry_on_initial_connect()
        .connect(cluster.urls().as_slice())
        .await
        .unwrap();
    let js = rnats_jetstream::ContextBuilder::new()
        .timeout(API_TIMEOUT)
        .build(client);
    (cluster, js)
}

async fn create_stream(cluster: &Cluster, js: &Context, name: &str, replicas: usize) -> Stream {
    create_named_stream(cluster, js, name, replicas, WAIT).await
}

/// The servers of a group: its leader and the other replicas.
fn members(cluster: &ClusterInfo) -> BTreeSet<String> {
    let replicas = cluster.replicas.iter().map(|peer| peer.name.clone());
    cluster.leader.iter().cloned().chain(replicas).collect()
}

/// Retries `check` until it gives a value, within [`WAIT`]; each try is a round trip to the
/// cluster, which is the event waited for.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    tokio::time::timeout(WAIT, async {
        loop {
            if let Some(value) = check().await {
                return value;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what} never happened"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaders_move_to_a_preferred_server_and_removed_peers_are_replaced() {
    let (cluster, js) = start_cluster().await;
    let stream = create_stream(&cluster, &js, "MOVE", 3).await;
    let before = stream.get_info().await.unwrap().cluster.unwrap();
    let old = before.leader.clone().unwrap();
    let preferred = before.replicas[0].name.clone();
    assert_ne!(old, preferred);

    // The stream's leader moves to the server asked for, not just to any other one.
    let client = js.client();
    let mut elections = client
        .subscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.MOVE")
        .await
        .unwrap();
    client.flush().await.unwrap();
    // nats-server hands the leadership to the preferred replica only once it has caught
    // up; on a busy machine an election can still go elsewhere, so the step-down is asked
    // again (each time after the election that follows the last one) until it has.
    tokio::time::timeout(WAIT, async {
        loop {
            let Some(group) = stream.get_info().await.ok().and_then(|info| info.cluster) else {
                continue;
            };
            if group.leader.as_deref() == Some(preferred.as_str()) {
                return;
            }
            let ready = group.leader.is_some()
                && group
                    .replicas
                    .iter()
                    .any(|p| p.name == preferred && p.current);
            let placement = LeaderPlacement::preferred(&preferred);
            if ready && stream.step_down_leader(Some(placement)).await.is_ok() {
                elections.next().await.unwrap();
            }
        }
    })
    .await
    .expect("the leader never moved to the preferred server");
    let leader = stream.get_info().await.unwrap().cluster.unwrap().leader;
    assert_eq!(leader.as_deref(), Some(preferred.as_str()));

    // Its leader cannot be preferred again: the server says why.
    let error = js
        .step_down_stream_leader("MOVE", Some(LeaderPlacement::preferred(&preferred)))
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), StepDownErrorKind::JetStream(_)),
        "{error}"
    );

    // A consumer's leader moves on its own step-down.
    let consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some("C".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let old = consumer
        .cached_info()
        .cluster
        .clone()
        .unwrap()
        .leader
        .unwrap();
    let mut elections = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.MOVE.C")
        .await
        .unwrap();
    client.flush().await.unwrap();
    consumer.step_down_leader(None).await.unwrap();
    tokio::time::timeout(WAIT, async {
        loop {
            // An answer lost mid-election is asked again, not waited out.
            let Ok(info) = consumer.get_info().await else {
                continue;
            };
            let leader = info.cluster.and_then(|cluster| cluster.leader);
            if leader.is_some_and(|leader| leader != old) {
                return;
            }
            // Not elected yet, as far as this answer goes: wait for an election.
            elections.next().await.unwrap();
        }
    })
    .await
    .expect("the consumer's leader never moved");
    let missing = js
        .step_down_consumer_leader("MOVE", "NONE", None)
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), StepDownErrorKind::NotFound, "{missing}");

    // An R2 stream on three servers: removing a follower puts the third server in its place.
    let pair = create_stream(&cluster, &js, "PAIR", 2).await;
    let group = pair.get_info().await.unwrap().cluster.unwrap();
    let before = members(&group);
    let removed = group.replicas[0].name.clone();
    let outsider = cluster
        .nodes()
        .iter()
        .enumerate()
        .map(|(i, _)| format!("rnats-node-{i}"))
        .find(|name| !before.contains(name))
        .unwrap();
    pair.remove_peer(&removed).await.unwrap();
    let after = eventually("the removed peer's replacement", || async {
        let members = members(&pair.get_info().await.ok()?.cluster?);
        (members.len() == 2 && !members.contains(&removed)).then_some(members)
    })
    .await;
    assert!(after.contains(&outsider), "{after:?}");
    let error = js.remove_stream_peer("PAIR", &removed).await.unwrap_err();
    assert_eq!(error.kind(), StepDownErrorKind::PeerNotMember, "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_server_is_gone_is_listed_as_missing() {
    let (mut cluster, js) = start_cluster().await;
    let lone = create_stream(&cluster, &js, "LONE", 1).await;
    create_stream(&cluster, &js, "EVERYWHERE", 3).await;
    let host = lone
        .get_info()
        .await
        .unwrap()
        .cluster
        .unwrap()
        .leader
        .unwrap();
    let index: usize = host
        .strip_prefix("rnats-node-")
        .and_then(|i| i.parse().ok())
        .unwrap_or_else(|| panic!("unexpected server name {host}"));
    cluster.node_mut(index).kill();

    // Whether the listing waits out the gone server or the meta leader already counts it
    // offline, the stream is named missing. The R3 stream may be missing for a while too,
    // while it elects a new leader, but every stream is accounted for.
    let (listed, missing) = eventually("LONE listed as missing", || async {
        let mut streams = js.streams();
        let mut listed = BTreeSet::new();
        while let Some(info) = streams.next().await {
            listed.insert(info.ok()?.config.name);
        }
        let missing = streams.missing().to_vec();
        missing
            .contains(&"LONE".to_owned())
            .then_some((listed, missing))
    })
    .await;
    let accounted: BTreeSet<String> = listed.into_iter().chain(missing).collect();
    assert_eq!(
        accounted,
        BTreeSet::from(["EVERYWHERE".into(), "LONE".into()])
    );
}

/// The meta group's leader and members, as the leader's own `JSZ` (system account)
/// reports them (a follower's view can lag); `None` when no server says it leads within a
/// few seconds (an election under way).
async fn meta_group(system: &rnats_core::Client) -> Option<(String, BTreeSet<String>)> {
    let inbox = system.new_inbox();
    let mut answers = system.subscribe(inbox.clone()).await.ok()?;
    system
        .publish_with_reply("$SYS.REQ.SERVER.PING.JSZ", inbox, "".into())
        .await
        .ok()?;
    let leaders_answer = async {
        while let Some(answer) = answers.next().await {
            let Ok(jsz) = serde_json::from_slice::<serde_json::Value>(&answer.payload) else {
                continue;
            };
            let meta = &jsz["data"]["meta_cluster"];
            let Some(leader) = meta["leader"]
                .as_str()
                .filter(|l| *l == jsz["server"]["name"])
            else {
                continue;
            };
            let replicas = meta["replicas"].as_array().cloned().unwrap_or_default();
            let names = replicas
                .iter()
                .filter_map(|peer| peer["name"].as_str().map(str::to_owned))
                .chain(std::iter::once(leader.to_owned()))
                .collect();
            return Some((leader.to_owned(), names));
        }
        None
    };
    tokio::time::timeout(Duration::from_secs(5), leaders_answer)
        .await
        .ok()
        .flatten()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_account_moves_the_meta_leader_and_removes_a_server_for_good() {
    let (mut cluster, app) = start_cluster().await;
    let system = rnats_core::ConnectOptions::with_user_and_password("sys".into(), "sys".into())
        .connect(cluster.urls().as_slice())
        .await
        .unwrap();
    // A request that reaches the group mid-election goes unanswered: each try is bounded
    // well inside the retries' budget.
    let meta = rnats_jetstream::ContextBuilder::new()
        .timeout(Duration::from_secs(5))
        .build(system.clone());

    // Only the system account may ask: nats-server 2.12+ says which account a connection is
    // in, so the request is refused without waiting out a timeout.
    app.client().flush().await.unwrap();
    let refused = app.step_down_meta_leader(None).await.unwrap_err();
    assert_eq!(
        refused.kind(),
        StepDownErrorKind::NotSystemAccount,
        "{refused}"
    );
    let refused = app.remove_server("rnats-node-0").await.unwrap_err();
    assert_eq!(
        refused.kind(),
        StepDownErrorKind::NotSystemAccount,
        "{refused}"
    );

    let (old, members) = eventually("a meta leader", || meta_group(&system)).await;
    assert_eq!(members.len(), 3, "{members:?}");
    let preferred = members.iter().find(|name| **name != old).unwrap().clone();
    // As for a stream: the preferred server leads once it has caught up, so ask until it
    // does, each time of a newly elected leader, not again of the one just asked (a request
    // that reaches the group mid-election goes unanswered).
    let last_asked = std::sync::Mutex::new(String::new());
    eventually("the meta leader moving to the preferred server", || async {
        let (leader, _) = meta_group(&system).await?;
        if leader == preferred {
            return Some(());
        }
        let ask = std::mem::replace(&mut *last_asked.lock().unwrap(), leader.clone()) != leader;
        if ask {
            let placement = LeaderPlacement::preferred(&preferred);
            let _ = meta.step_down_meta_leader(Some(placement)).await;
        }
        None
    })
    .await;

    // A server gone for good is removed from the group by name.
    let gone = cluster
        .nodes()
        .iter()
        .enumerate()
        .map(|(i, _)| format!("rnats-node-{i}"))
        .position(|name| name != preferred)
        .unwrap();
    let gone_name = format!("rnats-node-{gone}");
    cluster.node_mut(gone).kill();
    eventually("the gone server removed from the meta group", || async {
        if meta.remove_server(&gone_name).await.is_err() {
            // The group has not noticed the loss yet, or its leader is moving.
            return None;
        }
        let (_, members) = meta_group(&system).await?;
        (!members.contains(&gone_name)).then_some(())
    })
    .await;
    let error = meta.remove_server("no-such-server").await.unwrap_err();
    assert!(
        matches!(error.kind(), StepDownErrorKind::JetStream(_)),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_without_clustering_refuses_with_a_typed_error() {
    let server = NatsServer::with_jetstream();
    let client = rnats_core::connect(server.url()).await.unwrap();
    let js = rnats_jetstream::new(client);
    let stream = js
        .create_stream(Config {
            name: "SOLO".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    stream
        .create_consumer(pull::Config {
            durable_name: Some("C".into()),
            ..Default::default()
        })
        .await
        .unwrap();

    let error = stream.step_down_leader(None).await.unwrap_err();
    assert_eq!(error.kind(), StepDownErrorKind::NotClustered, "{error}");
    let error = js
        .step_down_consumer_leader("SOLO", "C", Some(LeaderPlacement::preferred("x")))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), StepDownErrorKind::NotClustered, "{error}");
    let error = stream.remove_peer("x").await.unwrap_err();
    assert_eq!(error.kind(), StepDownErrorKind::NotClustered, "{error}");
    let code = error.downcast_source::<rnats_jetstream::Error>().unwrap();
    assert_eq!(
        code.error_code(),
        rnats_jetstream::ErrorCode::CLUSTER_REQUIRED
    );
    let error = js.step_down_stream_leader("a.b", None).await.unwrap_err();
    assert_eq!(error.kind(), StepDownErrorKind::InvalidName);
}
