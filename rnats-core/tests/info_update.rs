//! An INFO update that announces thousands of servers must not hold up the traffic behind
//! it (issue 22): the client merges the servers into its pool off the connection's hot path.
//!
//! A real nats-server announces only the cluster it has, so the update is injected by the
//! proxy between the server and the client ([`Proxy::inject`]), in the shape a cluster of
//! that size would send it.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use rnats_test_server::{NatsServer, Proxy};

/// Servers announced by each update.
const ANNOUNCED: usize = 10_000;
/// Flushes per figure; the median is compared.
const SAMPLES: usize = 5;

/// An INFO line announcing `servers` members no earlier update named (`generation` apart),
/// or, with `servers == 0`, one of about the same length carrying the bytes in a field the
/// client ignores: the cost of reading and parsing the bytes without the servers.
fn info_update(max_payload: usize, servers: usize, generation: usize, pad_to: usize) -> String {
    let urls: Vec<String> = (0..servers)
        .map(|i| format!("\"10.{generation}.{}.{}:4222\"", i / 256 % 256, i % 256))
        .collect();
    let urls = urls.join(",");
    let padding = "p".repeat(pad_to.saturating_sub(urls.len()));
    format!(
        "INFO {{\"server_id\":\"PROXY\",\"version\":\"2.15.1\",\"proto\":1,\"headers\":true,\
         \"max_payload\":{max_payload},\"padding\":\"{padding}\",\"connect_urls\":[{urls}]}}\r\n"
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_behind_an_info_update_does_not_wait_for_the_server_pool() {
    let server = NatsServer::start();
    let proxy = Proxy::start(&server.url()).unwrap();
    let client = rnats_core::connect(proxy.url()).await.unwrap();
    client.flush().await.unwrap();
    let max_payload = client.server_info().max_payload;
    let urls_len = info_update(max_payload, ANNOUNCED, 1, 0).len();

    let mut timed = |servers: usize, generation: usize| {
        let line = info_update(max_payload, servers, generation, urls_len);
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
        without.push(timed(0, 0).await);
        with.push(timed(ANNOUNCED, generation).await);
    }
    let (without, with) = (median(without), median(with));
    // Reading and parsing the INFO is on the path either way; merging 10k servers into the
    // pool made the flush 10x slower than behind an update of the same size without them
    // (debug build), off the engine it is within noise of it.
    assert!(
        with < without * 3,
        "a flush behind an update announcing {ANNOUNCED} servers took {with:?}, \
         behind one of the same size announcing none {without:?}"
    );
}
