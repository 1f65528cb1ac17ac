//! The multi-server builders form what they say, as the servers' own monitoring endpoints
//! show, and their links can be cut and restored.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use rnats_test_server::{HUB_DOMAIN, HubAndLeaf, LEAF_DOMAIN, NatsServer, Supercluster};

const WAIT: Duration = Duration::from_secs(30);

fn gateway_count(node: &NatsServer) -> usize {
    node.monitor("/gatewayz").unwrap()["outbound_gateways"]
        .as_object()
        .map_or(0, serde_json::Map::len)
}

#[test]
fn a_supercluster_joins_two_clusters_and_its_gateways_can_be_cut() {
    let supercluster = Supercluster::builder().start().unwrap();
    assert_eq!(supercluster.cluster(0).name(), "east");
    assert_eq!(supercluster.cluster(1).name(), "west");
    for node in supercluster.nodes() {
        assert_eq!(gateway_count(node), 1, "{}", node.url());
        // A client of either region hears only about its own cluster's servers.
        let info = node.info().unwrap();
        let cluster = info["cluster"].as_str().unwrap();
        let own = if cluster == "east" { 0 } else { 1 };
        let ports: Vec<String> = supercluster
            .cluster(own)
            .nodes()
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port()))
            .collect();
        for url in info["connect_urls"].as_array().unwrap() {
            assert!(ports.contains(&url.as_str().unwrap().to_owned()), "{url}");
        }
    }

    supercluster.cut_gateways();
    let node = supercluster.cluster(0).nodes().first().unwrap();
    node.wait_for_monitor("/gatewayz", WAIT, |g| {
        g["outbound_gateways"]
            .as_object()
            .is_none_or(serde_json::Map::is_empty)
    })
    .unwrap();
    supercluster.restore_gateways().unwrap();
    for node in supercluster.nodes() {
        assert_eq!(gateway_count(node), 1, "{}", node.url());
    }
}

#[test]
fn a_hub_with_leaf_nodes_in_their_own_domain_and_links_that_can_be_cut() {
    let topology = HubAndLeaf::builder()
        .hub_nodes(1)
        .plain_leaf(true)
        .start()
        .unwrap();
    let hub = &topology.hub().nodes()[0];
    let domain = |server: &NatsServer| {
        server.monitor("/jsz").unwrap()["config"]["domain"]
            .as_str()
            .map(str::to_owned)
    };
    assert_eq!(domain(hub).as_deref(), Some(HUB_DOMAIN));
    assert_eq!(domain(topology.leaf()).as_deref(), Some(LEAF_DOMAIN));
    let plain = topology.plain_leaf().unwrap();
    assert!(plain.monitor("/varz").unwrap()["jetstream"]["config"].is_null());
    assert_eq!(hub.monitor("/leafz").unwrap()["leafnodes"], 2);

    topology.cut_leaf_links();
    hub.wait_for_monitor("/leafz", WAIT, |l| l["leafnodes"] == 0)
        .unwrap();
    topology.restore_leaf_links().unwrap();
    assert_eq!(hub.monitor("/leafz").unwrap()["leafnodes"], 2);
}
