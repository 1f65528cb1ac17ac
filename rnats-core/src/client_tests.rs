//! Client behaviour against a real nats-server, checked on state only the crate can see: the
//! request table and the keepalive count.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::{FutureExt, StreamExt};
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
async fn each_reply_costs_the_requesting_engine_one_pass() {
    const REQUESTS: u64 = 200;
    let server = NatsServer::start();
    let responder = crate::connect(server.url()).await.unwrap();
    let mut requests = responder.subscribe("svc.echo").await.unwrap();
    responder.flush().await.unwrap();
    let answering = tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            let reply = request.reply.expect("a request has a reply subject");
            responder.publish(reply, request.payload).await.unwrap();
        }
    });
    let client = crate::connect(server.url()).await.unwrap();
    // The first request sets up the reply subscription.
    client.request("svc.echo", "first".into()).await.unwrap();
    let passes = || client.shared().engine_passes.load(Ordering::Relaxed);
    let before = passes();
    for i in 0..REQUESTS {
        let answer = client
            .request("svc.echo", i.to_string().into())
            .await
            .unwrap();
        assert_eq!(answer.payload, i.to_string().as_bytes());
    }
    // The request is written by its caller into the idle connection; the engine wakes only
    // for the reply and, having read it, has nothing left for a second pass.
    let made = passes() - before;
    assert!(
        made >= REQUESTS,
        "every reply was read by the engine: {made}"
    );
    assert!(
        made < REQUESTS * 3 / 2,
        "{made} passes for {REQUESTS} replies: the engine went round again for nothing"
    );
    answering.abort();
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
