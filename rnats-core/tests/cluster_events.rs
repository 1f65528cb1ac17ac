//! `ConnectionEvent::ClusterChanged` from a real cluster: a server tells its clients, with a
//! new INFO, when the peers it reaches change, and both clients report it. JetStream's pull
//! streams send their requests again on it (a route cut may have taken one with it).
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use futures_util::StreamExt;
use rnats_core::ConnectionEvent;
use rnats_test_server::Cluster;

/// Bound on a wait that only a missing event would reach.
const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_peer_leaving_and_coming_back_is_reported_as_cluster_changes() {
    let mut cluster = Cluster::start(3).unwrap();
    cluster.wait_formed(WAIT).unwrap();
    let client = rnats_core::ConnectOptions::new()
        .retain_servers_order()
        .connect(cluster.urls()[0].as_str())
        .await
        .unwrap();
    let mut events = client.events();
    client.flush().await.unwrap();
    let mut next_change = async || loop {
        match tokio::time::timeout(WAIT, events.next()).await {
            Ok(Some(ConnectionEvent::ClusterChanged)) => return,
            Ok(Some(_)) => continue,
            other => panic!("no ClusterChanged: {other:?}"),
        }
    };

    cluster.node_mut(2).kill();
    next_change().await;
    cluster.node_mut(2).restart().unwrap();
    next_change().await;
    // Still the same link: the server told, nothing was lost.
    assert_eq!(
        client
            .statistics()
            .connects
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[test]
fn the_blocking_client_reports_cluster_changes_too() {
    let mut cluster = Cluster::start(3).unwrap();
    cluster.wait_formed(WAIT).unwrap();
    let client = rnats_core::ConnectOptions::new()
        .retain_servers_order()
        .connect_blocking(cluster.urls()[0].as_str())
        .unwrap();
    let mut events = client.events();
    client.flush().unwrap();
    let mut next_change = || loop {
        match events.next_timeout(WAIT) {
            Ok(Some(ConnectionEvent::ClusterChanged)) => return,
            Ok(Some(_)) => continue,
            other => panic!("no ClusterChanged: {other:?}"),
        }
    };

    cluster.node_mut(1).kill();
    next_change();
    cluster.node_mut(1).restart().unwrap();
    next_change();
}
