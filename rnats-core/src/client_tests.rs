//! Client behaviour against a real nats-server, checked on state only the crate can see: the
//! request table and the keepalive count.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use rnats_test_server::NatsServer;

use crate::ConnectOptions;

#[tokio::test]
async fn dropped_request_futures_free_their_slot() {
    let server = NatsServer::start();
    let client = crate::connect(server.url()).await.unwrap();
    let _silent = client.subscribe("slow.svc").await.unwrap();
    client.flush().await.unwrap();
    for _ in 0..100 {
        let pending = client.request("slow.svc", "x".into());
        assert!(
            pending.now_or_never().is_none(),
            "registered and sent, no reply yet"
        );
    }
    let timed_out = client
        .request_with_timeout("slow.svc", "x".into(), Some(Duration::from_millis(1)))
        .await;
    assert!(timed_out.is_err());
    let pending = client
        .start_request("slow.svc", None, "x".into())
        .await
        .unwrap();
    assert_eq!(client.shared().requests().len(), 1, "the started one only");
    drop(pending);
    assert!(
        client.shared().requests().len() == 0,
        "every dropped, timed-out or abandoned request freed its slot"
    );
}

#[tokio::test]
async fn keepalive_pings_are_sent_and_answered() {
    const MAX_OUTSTANDING: u32 = 10;
    const SENT: u64 = 25;
    let server = NatsServer::start();
    let client = ConnectOptions::new()
        // Ten unanswered PINGs end the link: a second of silence, which a server starved of
        // CPU on a loaded 2-core machine can take to answer (two, 200 ms, was seen to fail).
        .ping_interval(Duration::from_millis(100))
        .max_pings_outstanding(MAX_OUTSTANDING)
        .connect(server.url())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Time must pass for PINGs to be due; each turn waits one interval, then proves the link
    // still works with a round trip.
    while client.shared().keepalive_pings.load(Ordering::Relaxed) < SENT {
        assert!(Instant::now() < deadline, "no keepalive PINGs were sent");
        tokio::time::sleep(Duration::from_millis(100)).await;
        client.flush().await.unwrap();
    }
    // More PINGs than may be outstanding: the server's answers were counted, or the link
    // would have been found stale and replaced.
    assert_eq!(client.connection_state(), crate::State::Connected);
    assert_eq!(client.statistics().connects.load(Ordering::Relaxed), 1);
}
