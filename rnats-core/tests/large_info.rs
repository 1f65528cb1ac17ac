//! An INFO larger than every other control line may be: a real nats-server whose INFO is
//! over 64 KiB (a long server name stands in for the `connect_urls` of a cluster of a few
//! thousand servers) must be connectable by both clients.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use futures_util::StreamExt;
use rnats_test_server::NatsServer;

/// A server whose INFO line is about 100 KiB.
fn server_with_a_large_info() -> NatsServer {
    let name = "n".repeat(100 * 1024);
    NatsServer::builder()
        .config(format!("server_name: {name}\n"))
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn the_tokio_client_connects_to_a_server_whose_info_is_over_64_kib() {
    let server = server_with_a_large_info();
    let client = rnats_core::connect(server.url()).await.unwrap();
    assert!(client.server_info().server_name.len() >= 100 * 1024);
    let mut sub = client.subscribe("big.info").await.unwrap();
    client.publish("big.info", "ok".into()).await.unwrap();
    client.flush().await.unwrap();
    let message = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(message.payload, "ok");
}

#[test]
fn the_blocking_client_connects_to_a_server_whose_info_is_over_64_kib() {
    let server = server_with_a_large_info();
    let client = rnats_core::blocking::connect(server.url()).unwrap();
    assert!(client.server_info().server_name.len() >= 100 * 1024);
    let mut sub = client.subscribe("big.info").unwrap();
    client.publish("big.info", "ok".into()).unwrap();
    client.flush().unwrap();
    let message = sub.next_timeout(Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!(message.payload, "ok");
}
