//! JetStream publish: messages that the server stores and acknowledges.
//!
//! A stream captures the messages published on its subjects. A JetStream publish waits for
//! the stream's acknowledgement, which says the message is stored and at which sequence.
//! Needs a server with JetStream enabled (`nats-server -js`). Run it with
//! `cargo run --example jetstream_publish` (`NATS_URL` picks the server).

use rnats::jetstream::{self, context::Publish, stream};

const STREAM: &str = "EXAMPLE_ORDERS";

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");
    let js = jetstream::new(client);

    // A stream is usually made once, by an operator or at deploy time; the example makes it
    // (or finds it from an earlier run) and deletes it at the end. Memory storage keeps the
    // example from leaving files behind.
    let mut orders = js
        .get_or_create_stream(stream::Config {
            name: STREAM.to_string(),
            subjects: vec!["example.orders.>".to_string()],
            storage: stream::StorageType::Memory,
            ..Default::default()
        })
        .await?;
    println!("stream {STREAM} ready");

    // Two awaits: the first queues the message and gives a future for its ack, the second
    // waits for the ack. Awaiting both at once makes each publish a round trip.
    for order in 1..=3 {
        let ack = js
            .publish("example.orders.created", format!("order {order}").into())
            .await?
            .await?;
        println!(
            "order {order} stored in {} as sequence {}",
            ack.stream, ack.sequence
        );
    }

    // For throughput, send first and collect the acks afterwards: the publishes go out
    // back to back and the acks come in while later ones are still being sent.
    let mut pending = Vec::new();
    for order in 4..=10 {
        let ack = js
            .publish("example.orders.created", format!("order {order}").into())
            .await?;
        pending.push(ack);
    }
    for ack in pending {
        ack.await?;
    }
    println!("7 more orders stored, acks collected afterwards");

    // A message id makes a retry safe: within the stream's duplicate window (two minutes by
    // default) the server stores a given id once and flags the repeat as a duplicate.
    for attempt in 1..=2 {
        let publish = Publish::build()
            .message_id("order-11")
            .payload("order 11".into());
        let ack = js
            .send_publish("example.orders.created", publish)
            .await?
            .await?;
        println!(
            "order 11, attempt {attempt}: sequence {}, duplicate {}",
            ack.sequence, ack.duplicate
        );
    }

    let info = orders.info().await?;
    println!("stream {STREAM} holds {} messages", info.state.messages);

    js.delete_stream(STREAM).await?;
    println!("done");
    Ok(())
}
