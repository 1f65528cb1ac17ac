//! A blocking client that publishes much more to its own subscription than the server holds
//! for it before it reads (issue 22, the scale bench's headers axis): the server's
//! `max_pending` bounds what it queues for a connection that does not read, and cuts the
//! connection past it as a slow consumer.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::Duration;

use bytes::Bytes;
use rnats_core::{ConnectOptions, ConnectionEvent};
use rnats_test_server::NatsServer;

/// What the server holds for one connection before it cuts it.
const MAX_PENDING: usize = 256 * 1024;
const MESSAGES: usize = 4_000;
const PAYLOAD: usize = 4 * 1024;

#[test]
fn a_blocking_client_publishing_past_max_pending_to_itself_receives_everything() {
    let server = NatsServer::builder()
        .config(format!(
            "max_pending: {MAX_PENDING}\nmax_payload: {}\n",
            64 * 1024
        ))
        .spawn()
        .unwrap();
    let client = ConnectOptions::new()
        .subscription_capacity(MESSAGES)
        .subscription_capacity_bytes(MESSAGES * (PAYLOAD + 1024))
        .connect_blocking(server.url())
        .unwrap();
    let mut events = client.events();
    let mut subscriber = client.subscribe("bulk").unwrap();
    client.flush().unwrap();
    let payload = Bytes::from(vec![b'x'; PAYLOAD]);
    // 16 MiB, 64 times what the server holds for the connection, before reading any.
    for _ in 0..MESSAGES {
        client.publish("bulk", payload.clone()).unwrap();
    }
    client.flush().unwrap();
    let mut received = 0;
    while received < MESSAGES {
        match subscriber.next_timeout(Duration::from_secs(5)) {
            Ok(Some(_)) => received += 1,
            _ => break,
        }
    }
    let mut seen = Vec::new();
    while let Some(event) = events.try_next() {
        seen.push(event);
    }
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, ConnectionEvent::Disconnected { .. })),
        "the server cut the client: {seen:?}"
    );
    assert_eq!(received, MESSAGES, "events: {seen:?}");
}
