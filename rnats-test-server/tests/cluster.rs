//! A three-node cluster on loopback.

use std::time::{Duration, Instant};

use rnats_test_server::Cluster;

/// The `connect_urls` of a node's greeting INFO.
fn connect_urls(node: &rnats_test_server::NatsServer) -> Vec<String> {
    node.info().expect("INFO from the node")["connect_urls"]
        .as_array()
        .map(|urls| {
            urls.iter()
                .map(|u| u.as_str().expect("a URL string").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn three_nodes_form_a_mesh_and_survive_a_node_restart() {
    let mut cluster = Cluster::start(3).unwrap();
    assert_eq!(cluster.nodes().len(), 3);
    let urls = cluster.urls();
    assert_eq!(urls.len(), 3);

    let addrs: Vec<String> = cluster
        .nodes()
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port()))
        .collect();
    for (i, node) in cluster.nodes().iter().enumerate() {
        // A node announces its peers once their routes are up, a moment after the cluster
        // formed: each greeting is read afresh until it names them all, within a bound.
        let deadline = Instant::now() + Duration::from_secs(10);
        let lacks = |announced: &[String]| {
            addrs
                .iter()
                .enumerate()
                .find(|&(j, addr)| j != i && !announced.contains(addr))
                .map(|(_, addr)| addr.clone())
        };
        loop {
            let announced = connect_urls(node);
            let Some(addr) = lacks(&announced) else { break };
            assert!(
                Instant::now() < deadline,
                "node {i} lacks {addr}: {announced:?}"
            );
        }
        assert_eq!(node.url(), urls[i]);
    }

    // The first node routes only to itself, the middle one also to the first, the last to
    // both: whichever comes back, the others' routes find it or it finds theirs.
    for i in [1, 0, 2] {
        let port = cluster.nodes()[i].port();
        cluster.node_mut(i).restart().unwrap();
        assert_eq!(cluster.nodes()[i].port(), port);
        cluster.wait_formed(Duration::from_secs(10)).unwrap();
    }
}

/// Nodes started together each dialed every other before all of them listened: the refused
/// dials were retried a second later, as duplicates of the routes the peers had opened
/// meanwhile, and closed again, under the first calls of the test. Started in order, each
/// node dialing only those before it, no node has had a route refused once the cluster is
/// formed, so none is retried.
#[test]
fn a_formed_cluster_has_no_refused_route_dial_to_retry() {
    let cluster = Cluster::start(3).unwrap();
    for (i, node) in cluster.nodes().iter().enumerate() {
        let log = node.log_tail();
        let refused: Vec<&String> = log
            .iter()
            .filter(|line| line.contains("Error trying to connect to route"))
            .collect();
        assert!(refused.is_empty(), "node {i}: {refused:#?}");
    }
}

/// The server names of the routes in a node's `/routez`.
fn route_names(node: &rnats_test_server::NatsServer) -> Vec<String> {
    let routez = node.monitor("/routez").expect("/routez from the node");
    routez["routes"]
        .as_array()
        .map(|routes| {
            routes
                .iter()
                .map(|r| r["remote_name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn route_proxies_carry_every_route_and_partition_the_nodes() {
    let wait = Duration::from_secs(30);
    let cluster = Cluster::builder(3).route_proxies(true).start().unwrap();
    cluster.wait_routes_proxied(wait).unwrap();

    // Node 0 alone on one side: it loses both peers, which keep each other.
    cluster.partition(&[0], &[1, 2]).unwrap();
    cluster.wait_partitioned(&[0], &[1, 2], wait).unwrap();
    assert!(route_names(&cluster.nodes()[0]).is_empty());
    for (node, peer) in [(1, "rnats-node-2"), (2, "rnats-node-1")] {
        let names = route_names(&cluster.nodes()[node]);
        assert!(names.iter().all(|n| n == peer), "node {node}: {names:?}");
        assert!(!names.is_empty(), "node {node} lost its route to {peer}");
    }

    // Healed, the mesh comes back through the proxies only: no route learnt by gossip
    // goes around them.
    cluster.heal_routes().unwrap();
    cluster.wait_formed(wait).unwrap();
    cluster.wait_routes_proxied(wait).unwrap();

    // A black hole keeps the connections open; healing lets them carry on.
    cluster.blackhole_routes(&[2], &[0, 1]).unwrap();
    cluster.heal_routes().unwrap();
    cluster.wait_routes_proxied(wait).unwrap();
}

#[test]
fn a_cluster_without_route_proxies_cannot_be_partitioned() {
    let cluster = Cluster::start(2).unwrap();
    assert!(matches!(
        cluster.partition(&[0], &[1]),
        Err(rnats_test_server::TestServerError::NoRouteProxies)
    ));
}
