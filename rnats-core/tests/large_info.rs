//! An INFO larger than every other control line may be: a real nats-server whose INFO is
//! over 64 KiB (a long server name stands in for the `connect_urls` of a cluster of a few
//! thousand servers) must be connectable by both clients, and an INFO of the most the parser
//! takes, 8 MiB of short `connect_urls` from a misbehaving server, must cost either client a
//! small multiple of its size, counted by this binary's allocator.
#![allow(clippy::unwrap_used, missing_docs)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use rnats_test_server::NatsServer;
use rnats_test_server::heap::{self, CountingAlloc};

/// A server whose INFO line is about 100 KiB.
fn server_with_a_large_info() -> NatsServer {
    let name = "n".repeat(100 * 1024);
    NatsServer::builder()
        .config(format!("server_name: {name}\n"))
        .spawn()
        .unwrap()
}

#[test]
fn the_tokio_client_connects_to_a_server_whose_info_is_over_64_kib() {
    let _turn = one_at_a_time();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
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
    });
}

#[test]
fn the_blocking_client_connects_to_a_server_whose_info_is_over_64_kib() {
    let _turn = one_at_a_time();
    let server = server_with_a_large_info();
    let client = rnats_core::blocking::connect(server.url()).unwrap();
    assert!(client.server_info().server_name.len() >= 100 * 1024);
    let mut sub = client.subscribe("big.info").unwrap();
    client.publish("big.info", "ok".into()).unwrap();
    client.flush().unwrap();
    let message = sub.next_timeout(Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!(message.payload, "ok");
}

/// The most an INFO of 8 MiB may cost a client at its peak, in multiples of its size: the
/// line is read into a buffer, and of its 760,000 URLs the first 16,384 are kept, 1.5 times
/// its size in all. Read whole into strings they cost six to eight
/// times its size, and merged whole into the server pool as well, 36 to 41.
const MAX_COST: usize = 3;

#[test]
fn an_info_of_8_mib_costs_the_tokio_client_a_small_multiple_of_its_size() {
    let _turn = one_at_a_time();
    let info = info_of_8_mib();
    let addr = serve_once(Arc::clone(&info));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let from = start_counting();
    let pool = rt.block_on(async {
        let client = rnats_core::connect(format!("nats://{addr}")).await.unwrap();
        client.flush().await.unwrap();
        // The announced servers are merged into the pool when it is used.
        client.server_pool().await.unwrap()
    });
    assert_costs_a_small_multiple(from, info.len(), &pool);
}

#[test]
fn an_info_of_8_mib_costs_the_blocking_client_a_small_multiple_of_its_size() {
    let _turn = one_at_a_time();
    let info = info_of_8_mib();
    let addr = serve_once(Arc::clone(&info));
    let from = start_counting();
    let client = rnats_core::blocking::connect(format!("nats://{addr}")).unwrap();
    client.flush().unwrap();
    let pool = client.server_pool().unwrap();
    assert_costs_a_small_multiple(from, info.len(), &pool);
}

/// An INFO line just under 8 MiB (`max_info_line`) announcing as many short, distinct
/// `connect_urls` as fit: about 760,000.
fn info_of_8_mib() -> Arc<[u8]> {
    let limit = 8 * 1024 * 1024 - 64;
    let mut line = String::with_capacity(limit + 64);
    line.push_str(
        "INFO {\"server_id\":\"FAKE\",\"version\":\"2.15.1\",\"proto\":1,\"headers\":true,\
         \"max_payload\":1048576,\"connect_urls\":[",
    );
    let mut i = 0usize;
    while line.len() < limit {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&format!("\"h{i:x}:1\""));
        i += 1;
    }
    line.push_str("]}\r\n");
    line.into_bytes().into()
}

/// Starts a server on loopback for one connection: it sends `info` and answers PINGs until
/// the client hangs up.
fn serve_once(info: Arc<[u8]>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        socket.write_all(&info).unwrap();
        let mut reader = BufReader::new(socket.try_clone().unwrap());
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.starts_with("PING") && socket.write_all(b"PONG\r\n").is_err() {
                return;
            }
            line.clear();
        }
    });
    addr
}

/// Checks that the heap grew at most [`MAX_COST`] times `info_len` since [`start_counting`]
/// returned `from`, and that the pool took a bounded part of the announced servers.
fn assert_costs_a_small_multiple(from: usize, info_len: usize, pool: &[rnats_core::Server]) {
    let peak = heap::peak().saturating_sub(from);
    assert!(
        peak <= MAX_COST * info_len,
        "an INFO of {info_len} bytes cost {peak} bytes at the peak ({:.1} times)",
        peak as f64 / info_len as f64
    );
    let discovered = pool.iter().filter(|s| s.is_discovered).count();
    assert!(
        (1..10_000).contains(&discovered),
        "{discovered} servers taken"
    );
}

/// Taken by each test, so that the heap's peak is one test's.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

#[global_allocator]
static HEAP: CountingAlloc = CountingAlloc;

/// Starts measuring the peak from now; returns the bytes live now.
fn start_counting() -> usize {
    heap::reset_peak()
}
