//! Publish and subscribe: the core of NATS.
//!
//! A subscriber on a wildcard subject receives what a publisher sends to the subjects it
//! matches. Run it with `cargo run --example pub_sub` (set `NATS_URL` to use a server other
//! than `nats://127.0.0.1:4222`).

use futures_util::StreamExt;

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");

    // Subscribe before publishing: core NATS delivers only to subscriptions that exist when a
    // message arrives at the server, it keeps nothing for later (JetStream does that).
    // `>` matches one or more tokens, so this sees `greetings.world` and `greetings.a.b`.
    let mut subscriber = client.subscribe("greetings.>").await?;
    // Ask for three messages only: after the third the subscription is removed (on the
    // server too) and the stream ends, so the loop below finishes.
    subscriber.unsubscribe_after(3).await?;

    for name in ["world", "nats", "rust"] {
        let subject = format!("greetings.{name}");
        // `publish` only queues the message; it goes out in the background.
        client
            .publish(subject, format!("hello, {name}").into())
            .await?;
    }

    while let Some(message) = subscriber.next().await {
        println!(
            "received on {}: {}",
            message.subject,
            String::from_utf8_lossy(&message.payload)
        );
    }

    // `drain` lets everything queued reach the server before the connection closes.
    client.drain().await?;
    println!("done");
    Ok(())
}
