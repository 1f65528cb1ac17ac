//! Handles dropped where no tokio runtime runs (a plain thread, after the runtime that made
//! them is gone) neither panic nor hang: dropping a `Subscriber` or a `Client` only queues an
//! UNSUB or asks the engine to close, it spawns nothing (nats.rs issue 1607 is async-nats'
//! panic here).
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::ConnectOptions;
use rnats_test_server::NatsServer;

#[test]
fn client_subscriber_and_pending_request_drop_on_a_plain_thread() {
    let server = NatsServer::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (client, subscriber, events, pending) = runtime.block_on(async {
        let client = ConnectOptions::new().connect(server.url()).await.unwrap();
        let mut subscriber = client.subscribe("drop.outside").await.unwrap();
        client
            .publish("drop.outside", Bytes::from_static(b"x"))
            .await
            .unwrap();
        client.flush().await.unwrap();
        let first = subscriber.next().await.unwrap();
        assert_eq!(first.payload, "x");
        // A request nobody answers, left pending.
        let pending = client
            .start_request("drop.nobody", None, Bytes::new())
            .await
            .unwrap();
        let events = client.events();
        (client, subscriber, events, pending)
    });
    // Dropped on another plain thread while the runtime still runs...
    let clone = client.clone();
    std::thread::spawn(move || drop(clone)).join().unwrap();
    // ...and everything else after the runtime is gone.
    runtime.shutdown_timeout(Duration::from_secs(5));
    std::thread::spawn(move || {
        drop(subscriber);
        drop(events);
        drop(pending);
        drop(client);
    })
    .join()
    .expect("dropping handles outside any runtime panicked");
}
