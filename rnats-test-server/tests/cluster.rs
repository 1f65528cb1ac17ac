//! A three-node cluster on loopback.

use std::time::Duration;

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
        let announced = connect_urls(node);
        for (j, addr) in addrs.iter().enumerate() {
            if i != j {
                assert!(
                    announced.contains(addr),
                    "node {i} lacks {addr}: {announced:?}"
                );
            }
        }
        assert_eq!(node.url(), urls[i]);
    }

    let port = cluster.nodes()[1].port();
    cluster.node_mut(1).restart().unwrap();
    assert_eq!(cluster.nodes()[1].port(), port);
    cluster.wait_formed(Duration::from_secs(10)).unwrap();
}
