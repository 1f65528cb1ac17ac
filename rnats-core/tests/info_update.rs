//! An INFO update that announces thousands of servers must not hold up the traffic behind
//! it (issue 22): the client merges the servers into its pool off the connection's hot path.
//!
//! A real nats-server announces only the cluster it has, so the update is injected by the
//! proxy between the server and the client ([`Proxy::inject`]), in the shape a cluster of
//! that size would send it.
//!
//! No wall-clock bound: the flush is compared with a flush behind an INFO of the same size
//! whose servers need no merging, measured alternately in the same run.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rnats_test_server::{NatsServer, Proxy};

/// Servers announced by each update.
const ANNOUNCED: usize = 10_000;
/// Flushes per figure; the median is compared.
const SAMPLES: usize = 5;

/// Taken by each test: they compare times, so they do not run side by side.
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

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[test]
fn a_flush_behind_an_info_update_does_not_wait_for_the_server_pool() {
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
    let timed = |generation: usize, merge: bool| {
        let line = info_update(max_payload, generation, merge);
        let client = client.clone();
        let proxy = &proxy;
        async move {
            proxy.inject(line.as_bytes()).unwrap();
            let started = Instant::now();
            client.flush().await.unwrap();
            started.elapsed()
        }
    };
    let mut without = Vec::new();
    let mut with = Vec::new();
    for generation in 1..=SAMPLES {
        without.push(timed(generation, false).await);
        with.push(timed(generation, true).await);
    }
    assert_not_held_up(median(without), median(with));
}

#[test]
fn a_blocking_flush_behind_an_info_update_does_not_wait_for_the_server_pool() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = rnats_core::blocking::connect(proxy.url()).unwrap();
    client.flush().unwrap();
    let max_payload = client.server_info().max_payload;
    let timed = |generation: usize, merge: bool| {
        let line = info_update(max_payload, generation, merge);
        proxy.inject(line.as_bytes()).unwrap();
        let started = Instant::now();
        client.flush().unwrap();
        started.elapsed()
    };
    let mut without = Vec::new();
    let mut with = Vec::new();
    for generation in 1..=SAMPLES {
        without.push(timed(generation, false));
        with.push(timed(generation, true));
    }
    assert_not_held_up(median(without), median(with));
}

fn assert_not_held_up(without: Duration, with: Duration) {
    eprintln!("flush behind the update: {with:?}; behind the same without merging: {without:?}");
    // Reading and parsing the INFO is on the path either way; merging the servers into the
    // pool made the flush many times slower than behind the same update without servers to
    // merge (debug build); off the reading thread it is within noise of it.
    assert!(
        with < without * 3,
        "a flush behind an update announcing {ANNOUNCED} servers took {with:?}, \
         behind the same update with nothing to merge {without:?}"
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
