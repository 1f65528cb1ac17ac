//! The system account's monitoring requests (`rnats_core::system`) against real
//! nats-servers: a three-node cluster for the requests to every server and to one, a
//! JetStream server for `JSZ`, and a user outside the system account.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeSet;
use std::time::Duration;

use rnats_core::system::{
    ConnzOptions, HealthzOptions, JszOptions, ServerFilter, System, SystemErrorKind,
};
use rnats_core::{Client, ConnectOptions};
use rnats_test_server::{Cluster, NatsServer};

/// How long any one wait may take before the test fails instead of hanging.
const WAIT: Duration = Duration::from_secs(20);

/// A system account with a user, and an application account with one, where clients
/// without credentials (the cluster's readiness checks) land.
const ACCOUNTS: &str = "accounts {
  SYS { users: [{ user: sys, password: sys }] }
  APP { users: [{ user: app, password: app }] }
}
system_account: SYS
no_auth_user: app
";

/// The same, with JetStream for the application account.
const JS_ACCOUNTS: &str = "accounts {
  SYS { users: [{ user: sys, password: sys }] }
  APP { jetstream: enabled, users: [{ user: app, password: app }] }
}
system_account: SYS
";

/// The name the application's client gives, which `CONNZ` must show.
const APP_NAME: &str = "system-test-app";

fn cluster() -> Cluster {
    Cluster::start_with(3, |node| node.append_config(ACCOUNTS)).unwrap()
}

/// A client of `user` (password the same) on the server at `url` only.
async fn connect(user: &str, url: &str) -> Client {
    let client = ConnectOptions::with_user_and_password(user.into(), user.into())
        .name(APP_NAME)
        .connect(url)
        .await
        .unwrap();
    client.flush().await.unwrap();
    client
}

/// Monitoring on a system user's client on node 1; the wait for answers is long, so that a
/// gathering that missed its end would fail the test's own wait rather than return.
async fn system_on(url: &str) -> System {
    System::new(connect("sys", url).await).timeout(Duration::from_secs(60))
}

/// Waits until each of the cluster's `nodes` answers a ping. The routes are up once the
/// cluster has started, but each node's interest in the system account's subjects reaches
/// the others a moment later, and a request sent before that never reaches the node: so
/// this asks again, for at most [`WAIT`], until every node answers.
async fn wait_for_every_node(system: &System, nodes: usize) {
    let probe = system
        .clone()
        .expect(nodes)
        .timeout(Duration::from_millis(500));
    within(async {
        while !probe
            .ping()
            .await
            .is_ok_and(|answers| answers.len() == nodes)
        {}
    })
    .await;
}

/// Runs `future`, failing the test if it takes longer than [`WAIT`].
async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future)
        .await
        .expect("the system request hung")
}

#[tokio::test]
async fn ping_varz_and_healthz_hear_every_server_of_the_cluster() {
    let cluster = cluster();
    let urls = cluster.urls();
    // The application's client on node 0, the system's on node 1, nobody on node 2.
    let _app = connect("app", &urls[0]).await;
    let system = system_on(&urls[1]).await;
    wait_for_every_node(&system, 3).await;

    let pings = within(system.ping()).await.unwrap();
    assert_eq!(pings.len(), 3, "{pings:#?}");
    let ids: BTreeSet<&str> = pings.iter().map(|a| a.server.id.as_str()).collect();
    let names: BTreeSet<&str> = pings.iter().map(|a| a.server.name.as_str()).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert_eq!(
        names,
        BTreeSet::from(["rnats-node-0", "rnats-node-1", "rnats-node-2"])
    );
    for ping in &pings {
        assert!(ping.rtt.is_some(), "{ping:?}");
        let stats = ping.data.as_ref().unwrap();
        assert_eq!(ping.server.cluster, cluster.name());
        assert!(stats.start.is_some() && stats.mem > 0, "{stats:?}");
    }

    let varz = within(system.varz()).await.unwrap();
    assert_eq!(varz.len(), 3, "{varz:#?}");
    let mut by_port = Vec::new();
    for answer in &varz {
        let data = answer.data.as_ref().unwrap();
        assert_eq!(data.server_id, answer.server.id);
        assert_eq!(data.version, answer.server.version);
        assert!(!data.version.is_empty());
        // Route connections are pooled (several per peer); remote servers are the peers.
        assert_eq!(data.remotes, 2, "{}: {data:?}", data.server_name);
        by_port.push((u16::try_from(data.port).unwrap(), data.connections));
    }
    by_port.sort();
    let mut expected: Vec<(u16, u64)> = cluster
        .nodes()
        .iter()
        .zip([1, 1, 0])
        .map(|(node, connections)| (node.port(), connections))
        .collect();
    expected.sort();
    assert_eq!(by_port, expected, "(port, connections) of each server");

    // The same, as JSON.
    let raw = within(system.ping_raw()).await.unwrap();
    assert_eq!(raw.len(), 3, "{raw:#?}");
    for answer in &raw {
        let stats = answer.data.as_ref().unwrap();
        assert!(stats["connections"].is_u64(), "{stats}");
    }

    // A count given: that many answers, no more.
    let two = within(system.clone().expect(2).ping()).await.unwrap();
    assert_eq!(two.len(), 2, "{two:#?}");

    // Any other kind, as JSON: each server's routes, to its two peers.
    let routez = within(system.request_raw("ROUTEZ", serde_json::Value::Null))
        .await
        .unwrap();
    assert_eq!(routez.len(), 3, "{routez:#?}");
    for answer in &routez {
        let data = answer.data.as_ref().unwrap();
        assert_eq!(data["server_id"], answer.server.id.as_str());
        let peers: BTreeSet<&str> = data["routes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|route| route["remote_name"].as_str().unwrap())
            .collect();
        assert_eq!(peers.len(), 2, "{data}");
        assert!(!peers.contains(answer.server.name.as_str()), "{data}");
    }

    let health = within(system.healthz(HealthzOptions::new())).await.unwrap();
    assert_eq!(health.len(), 3);
    for answer in health {
        let healthz = answer.into_result().unwrap();
        assert!(healthz.is_ok(), "{healthz:?}");
    }
}

#[tokio::test]
async fn connz_lists_a_named_client_and_one_server_answers_alone() {
    let cluster = cluster();
    let urls = cluster.urls();
    let app = connect("app", &urls[0]).await;
    let _subscriber = app.subscribe("orders.>").await.unwrap();
    app.flush().await.unwrap();
    let system = system_on(&urls[1]).await;
    wait_for_every_node(&system, 3).await;

    let options = ConnzOptions::new()
        .subscriptions(true)
        .auth(true)
        .account("APP");
    let connz = within(system.connz(options.clone())).await.unwrap();
    assert_eq!(connz.len(), 3, "{connz:#?}");
    let listed: Vec<_> = connz
        .iter()
        .flat_map(|answer| answer.data.as_ref().unwrap().connections.iter())
        .collect();
    assert_eq!(
        listed.len(),
        1,
        "only the application's client is in APP: {listed:#?}"
    );
    let client = listed[0];
    assert_eq!(client.name, APP_NAME);
    assert_eq!(client.account, "APP");
    assert_eq!(client.authorized_user, "app");
    assert_eq!(client.lang, "rust");
    assert!(
        client.subscriptions_list.iter().any(|s| s == "orders.>"),
        "{client:#?}"
    );

    // The server the application is on, asked alone by its ID.
    let node_0 = connz
        .iter()
        .find(|answer| !answer.data.as_ref().unwrap().connections.is_empty())
        .unwrap()
        .server
        .clone();
    assert_eq!(node_0.name, "rnats-node-0");
    let alone = system.server(node_0.id.clone());
    let one = within(alone.connz(options)).await.unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].server.id, node_0.id);
    assert_eq!(one[0].data.as_ref().unwrap().connections[0].name, APP_NAME);
    let ping = within(alone.ping()).await.unwrap();
    assert_eq!(ping.len(), 1);
    assert_eq!(ping[0].server.id, node_0.id);

    // A filter: only node 2 answers.
    let filtered = system.filter(ServerFilter::new().name("rnats-node-2").exact_match(true));
    let varz = within(filtered.varz()).await.unwrap();
    let names: Vec<&str> = varz.iter().map(|a| a.server.name.as_str()).collect();
    assert_eq!(names, ["rnats-node-2"]);
}

#[tokio::test]
async fn jsz_shows_a_stream_the_test_created() {
    let server = NatsServer::builder()
        .jetstream(true)
        .config(JS_ACCOUNTS)
        .spawn()
        .unwrap();
    let app = connect("app", &server.url()).await;
    let created = app
        .request(
            "$JS.API.STREAM.CREATE.ORDERS",
            r#"{"name":"ORDERS","subjects":["orders.>"],"storage":"memory"}"#.into(),
        )
        .await
        .unwrap();
    let created: serde_json::Value = serde_json::from_slice(&created.payload).unwrap();
    assert!(created.get("error").is_none(), "{created}");
    // A request, so that the stream's ack says it is stored.
    let ack = app.request("orders.new", "order 1".into()).await.unwrap();
    let ack: serde_json::Value = serde_json::from_slice(&ack.payload).unwrap();
    assert_eq!(ack["seq"], 1, "{ack}");

    let system = system_on(&server.url()).await;
    let jsz = within(system.jsz(JszOptions::new().streams(true)))
        .await
        .unwrap();
    assert_eq!(jsz.len(), 1);
    let jsz = jsz[0].data.as_ref().unwrap();
    assert!(!jsz.disabled);
    assert_eq!(jsz.streams, 1, "{jsz:#?}");
    let app_account = jsz
        .account_details
        .iter()
        .find(|account| account.name == "APP")
        .unwrap_or_else(|| panic!("no APP in {jsz:#?}"));
    let orders = app_account
        .streams
        .iter()
        .find(|stream| stream.name == "ORDERS")
        .unwrap_or_else(|| panic!("no ORDERS in {app_account:#?}"));
    assert_eq!((orders.state.messages, orders.state.last_seq), (1, 1));
    assert!(orders.created.is_some());
}

#[tokio::test]
async fn a_user_outside_the_system_account_is_told_so_at_once() {
    let server = NatsServer::builder().config(ACCOUNTS).spawn().unwrap();
    let app = System::new(connect("app", &server.url()).await).timeout(Duration::from_secs(60));
    let ping = within(app.ping()).await.unwrap_err();
    assert_eq!(ping.kind(), SystemErrorKind::NotSystemAccount, "{ping}");
    let varz = within(app.varz()).await.unwrap_err();
    assert_eq!(varz.kind(), SystemErrorKind::NotSystemAccount, "{varz}");
    let raw = within(app.expect(1).request_raw("VARZ", serde_json::Value::Null))
        .await
        .unwrap_err();
    assert_eq!(raw.kind(), SystemErrorKind::NotSystemAccount, "{raw}");
}

#[tokio::test]
async fn an_unknown_server_id_gets_no_answer_and_a_bad_kind_is_refused() {
    let server = NatsServer::builder().config(ACCOUNTS).spawn().unwrap();
    let system = System::new(connect("sys", &server.url()).await);
    let none = within(
        system
            .clone()
            .timeout(Duration::from_secs(60))
            .server("NOSUCHSERVER")
            .varz(),
    )
    .await
    .unwrap_err();
    // Nobody answers that server's subject in the system account.
    assert_eq!(none.kind(), SystemErrorKind::NoAnswer, "{none}");
    let bad = system
        .request_raw("VAR.Z", serde_json::Value::Null)
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), SystemErrorKind::InvalidSubject, "{bad}");
}

#[tokio::test]
async fn an_answer_that_does_not_decode_leaves_the_servers_answer_whole() {
    use futures_util::StreamExt;

    let server = NatsServer::builder().config(ACCOUNTS).spawn().unwrap();
    // A responder in the system account that answers VARZ with text no server sends.
    let impostor = connect("sys", &server.url()).await;
    let mut requests = impostor
        .subscribe("$SYS.REQ.SERVER.PING.VARZ".to_owned())
        .await
        .unwrap();
    impostor.flush().await.unwrap();
    let replier = impostor.clone();
    tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            let Some(reply) = request.reply else { continue };
            replier.publish(reply, "not json".into()).await.unwrap();
            replier.flush().await.unwrap();
        }
    });

    // Two answers expected: the text counts for no server, so the gathering takes both and
    // waits its timeout for a second server that is not there.
    let system = system_on(&server.url())
        .await
        .expect(2)
        .timeout(Duration::from_secs(2));
    let got = within(system.gather::<rnats_core::system::Varz, _>("VARZ", ()))
        .await
        .unwrap();
    assert_eq!(got.answers.len(), 2, "{got:#?}");
    assert_eq!(got.missing, 1, "the text is no server: {got:#?}");
    let (good, bad): (Vec<_>, Vec<_>) = got
        .answers
        .into_iter()
        .partition(|answer| answer.decode_error.is_none());
    assert_eq!(good[0].data.as_ref().unwrap().version, "2.15.1");
    assert_eq!(bad[0].decode_error.as_ref().unwrap().text(), "not json");
    assert!(bad[0].server.id.is_empty(), "from nobody known");

    // Decoded as a type the server's data does not fit, every answer keeps its sender.
    #[derive(Debug, serde::Deserialize)]
    struct Wrong {
        #[allow(dead_code)]
        version: u64,
    }
    let wrong = within(system.request::<Wrong, _>("VARZ", ()))
        .await
        .unwrap();
    let server_answer = wrong
        .iter()
        .find(|answer| !answer.server.id.is_empty())
        .expect("the server's answer");
    assert!(server_answer.data.is_none());
    assert!(
        server_answer
            .decode_error
            .as_ref()
            .unwrap()
            .text()
            .contains("2.15.1"),
        "{server_answer:?}"
    );
}

/// A text in answer to the census's ping stands for no server: the request that follows waits
/// for the servers that answered the ping, not for one without a name (which would hold it up
/// for its whole 60 s timeout).
#[tokio::test]
async fn a_ping_answered_with_text_does_not_hold_up_the_request_after_it() {
    use futures_util::StreamExt;

    let server = NatsServer::builder().config(ACCOUNTS).spawn().unwrap();
    let impostor = connect("sys", &server.url()).await;
    let mut pings = impostor
        .subscribe("$SYS.REQ.SERVER.PING".to_owned())
        .await
        .unwrap();
    impostor.flush().await.unwrap();
    let replier = impostor.clone();
    tokio::spawn(async move {
        while let Some(ping) = pings.next().await {
            let Some(reply) = ping.reply else { continue };
            replier.publish(reply, "not json".into()).await.unwrap();
            replier.flush().await.unwrap();
        }
    });

    let system = system_on(&server.url()).await;
    let pinged = within(system.gather_ping::<serde_json::Value>())
        .await
        .unwrap();
    assert_eq!(
        pinged.answers.len(),
        2,
        "the server and the text: {pinged:#?}"
    );
    let got = within(system.gather::<rnats_core::system::Varz, _>("VARZ", ()))
        .await
        .unwrap();
    assert_eq!(got.answers.len(), 1, "{got:#?}");
    assert_eq!(got.missing, 0, "{got:#?}");
}
