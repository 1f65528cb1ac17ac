//! Connecting with options: a client name, credentials, and connection events.
//!
//! `ConnectOptions` gathers everything about a connection before it is made. This example
//! names the client (servers show the name in monitoring, which helps when many programs
//! share a server), authenticates with a token or a `.creds` file when the environment
//! provides one, and listens to connection events while the connection is moved to a new
//! socket. Run it with `cargo run --example connect_options`; `NATS_URL` picks the server,
//! `NATS_TOKEN` or `NATS_CREDS` (a path) supply credentials.

use std::time::Duration;

use futures_util::StreamExt;
use rnats::{ConnectOptions, Event};
use tokio::sync::mpsc;

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());

    // The callback runs for every connection event, in order. It hands each one to `main`
    // through a channel, so the program can react to them (here: print and wait for them).
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let mut options = ConnectOptions::new()
        .name("rnats-example")
        .connection_timeout(Duration::from_secs(5))
        .request_timeout(Some(Duration::from_secs(5)))
        // `None` (the default) keeps reconnecting for ever; a number gives up after that
        // many failed attempts in a row and closes the client.
        .max_reconnects(None)
        .event_callback(move |event| {
            let events_tx = events_tx.clone();
            async move {
                events_tx.send(event).ok();
            }
        });

    // Credentials. A token is a shared secret; a `.creds` file holds a user JWT and the
    // seed that signs the server's challenge (operator mode, as on Synadia Cloud).
    if let Ok(token) = std::env::var("NATS_TOKEN") {
        options = options.token(token);
        println!("authenticating with a token");
    } else if let Ok(path) = std::env::var("NATS_CREDS") {
        options = options.credentials_file(&path).await?;
        println!("authenticating with the credentials in {path}");
    }

    let client = options.connect(&url).await?;
    let info = client.server_info();
    println!(
        "connected to {url} as client {} (server {} version {})",
        info.client_id, info.server_name, info.version
    );

    // Subscriptions outlive the connection they were made on: after a reconnect the client
    // subscribes again before sending anything else.
    let mut pings = client.subscribe("example.pings").await?;

    // Move to a fresh connection, as the client does on its own when the server goes away
    // or enters lame duck mode.
    client.force_reconnect().await?;
    let mut disconnected = false;
    while let Some(event) = events.recv().await {
        println!("event: {event}");
        match event {
            Event::Disconnected => disconnected = true,
            Event::Connected if disconnected => break,
            _ => {}
        }
    }
    println!("reconnected");

    client.publish("example.pings", "ping".into()).await?;
    if let Some(message) = pings.next().await {
        println!(
            "the subscription still works: {}",
            String::from_utf8_lossy(&message.payload)
        );
    }

    client.drain().await?;
    println!("done");
    Ok(())
}
