//! JetStream consume: read a stream through a durable pull consumer.
//!
//! A consumer is the server-side bookmark of one reader: it remembers which messages were
//! delivered and acknowledged, so a reader that restarts goes on where it stopped. With a
//! pull consumer the reader asks for messages when it is ready for them. Two ways to ask
//! are shown: `fetch` (one batch of what is there now) and `messages` (a continuous stream
//! that keeps pulling in the background). Needs a server with JetStream enabled
//! (`nats-server -js`). Run it with `cargo run --example jetstream_consume`.

use futures_util::StreamExt;
use rnats::jetstream::{self, consumer, stream};

const STREAM: &str = "EXAMPLE_EVENTS";

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");
    let js = jetstream::new(client);

    let events = js
        .get_or_create_stream(stream::Config {
            name: STREAM.to_string(),
            subjects: vec!["example.events.>".to_string()],
            storage: stream::StorageType::Memory,
            ..Default::default()
        })
        .await?;

    // Something to read: ten stored messages (publish all, then wait for the acks).
    let mut acks = Vec::new();
    for event in 1..=10 {
        let subject = format!(
            "example.events.{}",
            if event % 2 == 0 { "even" } else { "odd" }
        );
        acks.push(js.publish(subject, format!("event {event}").into()).await?);
    }
    for ack in acks {
        ack.await?;
    }
    println!("published 10 events to {STREAM}");

    // A durable consumer keeps its place under its name; the default ack policy is
    // explicit, so each message must be acknowledged or it is delivered again later.
    let processor = events
        .get_or_create_consumer(
            "processor",
            consumer::pull::Config {
                durable_name: Some("processor".to_string()),
                ..Default::default()
            },
        )
        .await?;

    // `fetch` asks for up to four messages and ends with what the stream has now: it does
    // not wait for more to be published.
    let mut batch = processor.fetch().max_messages(4).messages().await?;
    while let Some(message) = batch.next().await {
        let message = message?;
        let sequence = message.info()?.stream_sequence;
        println!(
            "fetched {} (stream sequence {sequence}) from {}",
            String::from_utf8_lossy(&message.payload),
            message.subject
        );
        message.ack().await?;
    }

    // `messages` keeps pulling batches behind the scenes, as a worker would all day long;
    // here we stop after the six messages that are left.
    let mut stream = processor.messages().await?.take(6);
    while let Some(message) = stream.next().await {
        let message = message?;
        println!("consumed {}", String::from_utf8_lossy(&message.payload));
        message.ack().await?;
    }
    println!("all 10 events processed by consumer processor");

    js.delete_stream(STREAM).await?;
    println!("done");
    Ok(())
}
