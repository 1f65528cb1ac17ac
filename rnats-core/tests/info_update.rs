//! An INFO update that announces thousands of servers must not hold up the traffic behind
//! it (issue 22): the client merges the servers into its pool off the connection's hot path.
//!
//! A real nats-server announces only the cluster it has, so the update is injected by the
//! proxy between the server and the client ([`Proxy::inject`]), in the shape a cluster of
//! that size would send it.
//!
//! These tests check what happens, not how fast: how long a message takes behind such an
//! update is measured by the benchmarks' "servers announced" axis
//! (`cargo bench -p rnats-bench --bench scale`), which also runs async-nats beside it, and
//! that merging stays linear in the number of servers is counted in `server_pool`'s unit
//! tests.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rnats_test_server::{NatsServer, Proxy};

/// Servers announced by each update: thousands, within what one announcement gives the pool
/// (4,096, `server_pool::MAX_ANNOUNCED`).
const ANNOUNCED: usize = 4_000;
/// Bound on a wait that only a hang would reach.
const WAIT: Duration = Duration::from_secs(60);

/// Taken by each test: each reads a pool of thousands, so they do not run side by side.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// An INFO line announcing [`ANNOUNCED`] members no earlier update named (`generation`
/// apart), as `connect_urls`, or with `merge == false` as `ws_connect_urls`, which a client
/// connected without WebSocket does not merge into its pool: the same bytes to read and
/// parse, without the servers to merge.
fn info_update(max_payload: usize, generation: usize, merge: bool) -> String {
    let urls: Vec<String> = (0..ANNOUNCED)
        .map(|i| format!("\"10.{generation}.{}.{}:4222\"", i / 256 % 256, i % 256))
        .collect();
    let field = if merge {
        "connect_urls"
    } else {
        "ws_connect_urls"
    };
    format!(
        "INFO {{\"server_id\":\"PROXY\",\"version\":\"2.15.1\",\"proto\":1,\"headers\":true,\
         \"max_payload\":{max_payload},\"{field}\":[{}]}}\r\n",
        urls.join(",")
    )
}

#[test]
fn a_flush_behind_an_info_update_announcing_thousands_of_servers_completes() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(flush_behind_an_info_update());
}

async fn flush_behind_an_info_update() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = rnats_core::connect(proxy.url()).await.unwrap();
    client.flush().await.unwrap();
    let max_payload = client.server_info().max_payload;
    for generation in 1..=2 {
        // The same bytes without servers for this client to learn, then with them.
        for merge in [false, true] {
            proxy
                .inject(info_update(max_payload, generation, merge).as_bytes())
                .unwrap();
            tokio::time::timeout(WAIT, client.flush())
                .await
                .expect("the flush behind the update never completed")
                .unwrap();
        }
        // Only the newest announcement's servers are left: the cluster stopped naming the
        // others.
        let pool = client.server_pool().await.unwrap();
        assert_discovered(&pool, generation);
    }
}

#[test]
fn a_blocking_flush_behind_an_info_update_announcing_thousands_of_servers_completes() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = rnats_core::blocking::connect(proxy.url()).unwrap();
    client.flush().unwrap();
    let max_payload = client.server_info().max_payload;
    for generation in 1..=2 {
        for merge in [false, true] {
            proxy
                .inject(info_update(max_payload, generation, merge).as_bytes())
                .unwrap();
            client.flush_timeout(WAIT).unwrap();
        }
        assert_discovered(&client.server_pool().unwrap(), generation);
    }
}

/// `pool` holds the servers [`info_update`] announced for `generation`, and no other
/// discovered server.
fn assert_discovered(pool: &[rnats_core::Server], generation: usize) {
    let prefix = format!("10.{generation}.");
    let discovered: Vec<_> = pool.iter().filter(|s| s.is_discovered).collect();
    assert_eq!(discovered.len(), ANNOUNCED, "generation {generation}");
    assert!(
        discovered
            .iter()
            .all(|s| s.addr.host().starts_with(&prefix)),
        "generation {generation}: a server of another update is left"
    );
}

/// An INFO line announcing exactly `urls`.
fn announcing(max_payload: usize, urls: &[&str]) -> String {
    let urls: Vec<String> = urls.iter().map(|u| format!("\"{u}\"")).collect();
    format!(
        "INFO {{\"server_id\":\"PROXY\",\"version\":\"2.15.1\",\"proto\":1,\"headers\":true,\
         \"max_payload\":{max_payload},\"connect_urls\":[{}]}}\r\n",
        urls.join(",")
    )
}

fn discovered_hosts(pool: &[rnats_core::Server]) -> Vec<String> {
    let mut hosts: Vec<String> = pool
        .iter()
        .filter(|s| s.is_discovered)
        .map(|s| format!("{}:{}", s.addr.host(), s.addr.port()))
        .collect();
    hosts.sort();
    hosts
}

/// The servers of an update are reported as they come (only those new since the last
/// update), and are in the pool when it is asked for, though they are merged into it only
/// then.
#[test]
fn announced_servers_are_reported_at_once_and_listed_by_the_pool() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        use futures_util::StreamExt;
        let client = rnats_core::connect(proxy.url()).await.unwrap();
        let mut events = client.events();
        client.flush().await.unwrap();
        let max_payload = client.server_info().max_payload;
        let mut next_discovered = async || loop {
            let event = tokio::time::timeout(Duration::from_secs(20), events.next())
                .await
                .unwrap()
                .unwrap();
            if let rnats_core::ConnectionEvent::DiscoveredServers(urls) = event {
                return urls;
            }
        };
        proxy
            .inject(announcing(max_payload, &["10.9.0.1:4222", "10.9.0.2:4222"]).as_bytes())
            .unwrap();
        assert_eq!(next_discovered().await, ["10.9.0.1:4222", "10.9.0.2:4222"]);
        proxy
            .inject(announcing(max_payload, &["10.9.0.2:4222", "10.9.0.3:4222"]).as_bytes())
            .unwrap();
        assert_eq!(next_discovered().await, ["10.9.0.3:4222"]);
        let pool = client.server_pool().await.unwrap();
        assert_eq!(discovered_hosts(&pool), ["10.9.0.2:4222", "10.9.0.3:4222"]);
    });
}

#[test]
fn a_blocking_client_reports_announced_servers_at_once_and_lists_them_in_its_pool() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = rnats_core::blocking::connect(proxy.url()).unwrap();
    let mut events = client.events();
    client.flush().unwrap();
    let max_payload = client.server_info().max_payload;
    let mut next_discovered = || loop {
        match events
            .next_timeout(Duration::from_secs(20))
            .unwrap()
            .unwrap()
        {
            rnats_core::ConnectionEvent::DiscoveredServers(urls) => return urls,
            _ => continue,
        }
    };
    proxy
        .inject(announcing(max_payload, &["10.9.0.1:4222", "10.9.0.2:4222"]).as_bytes())
        .unwrap();
    assert_eq!(next_discovered(), ["10.9.0.1:4222", "10.9.0.2:4222"]);
    proxy
        .inject(announcing(max_payload, &["10.9.0.2:4222", "10.9.0.3:4222"]).as_bytes())
        .unwrap();
    assert_eq!(next_discovered(), ["10.9.0.3:4222"]);
    let pool = client.server_pool().unwrap();
    assert_eq!(discovered_hosts(&pool), ["10.9.0.2:4222", "10.9.0.3:4222"]);
}
