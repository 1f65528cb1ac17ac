//! JetStream and Key-Value from the blocking client: no async runtime, plain threads.
//!
//! A stream takes three orders, a pull consumer fetches and acknowledges them, and a
//! Key-Value bucket is written, read, updated at a revision and watched from another thread.
//! Every call waits for its answer (a publish for the stream's acknowledgement), bounded by
//! the context's timeout. Needs a server with JetStream enabled (`nats-server -js`). Run it
//! with `cargo run --example blocking_jetstream`.

use std::time::Duration;

use rnats::jetstream::{self, consumer, kv, stream};

fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::blocking::connect(&url)?;
    println!("connected to {url}");
    let js = jetstream::blocking::new(client);

    let orders = js.get_or_create_stream(stream::Config {
        name: "EXAMPLE_BLOCKING_ORDERS".to_string(),
        subjects: vec!["blocking.orders.>".to_string()],
        storage: stream::StorageType::Memory,
        ..Default::default()
    })?;
    for n in 1..=3 {
        let ack = js.publish("blocking.orders.new", format!("order {n}").into())?;
        println!("order {n} stored as sequence {}", ack.sequence);
    }

    let worker = orders.create_consumer(consumer::pull::Config {
        durable_name: Some("worker".to_string()),
        ..Default::default()
    })?;
    // One pull request for up to ten messages, ending when the stream has none left to
    // give or after a second.
    for message in worker.fetch(10, Duration::from_secs(1))? {
        let message = message?;
        println!("fetched {}", String::from_utf8_lossy(&message.payload));
        message.ack()?;
    }

    let settings = js.create_key_value(kv::Config {
        bucket: "example_blocking_settings".to_string(),
        storage: stream::StorageType::Memory,
        ..Default::default()
    })?;
    // A watch is an iterator: read it on a thread of its own.
    let mut changes = settings.watch_all()?;
    let watcher = std::thread::spawn(move || {
        let mut seen = Vec::new();
        while seen.len() < 2 {
            match changes.next_timeout(Duration::from_secs(5)) {
                Ok(Some(entry)) => seen.push(format!(
                    "{} = {}",
                    entry.key,
                    String::from_utf8_lossy(&entry.value)
                )),
                Ok(None) | Err(_) => break,
            }
        }
        seen
    });
    let revision = settings.put("color", "blue".into())?;
    println!("put color = blue at revision {revision}");
    let revision = settings.update("color", "green".into(), revision)?;
    println!("update color = green at revision {revision}");
    match settings.update("color", "red".into(), revision - 1) {
        Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => {
            println!("update from a stale revision refused: {}", err.kind())
        }
        other => println!("unexpected: {other:?}"),
    }
    if let Some(value) = settings.get("color")? {
        println!("get color: {}", String::from_utf8_lossy(&value));
    }
    for change in watcher.join().map_err(|_| "the watching thread panicked")? {
        println!("watched {change}");
    }

    js.delete_key_value("example_blocking_settings")?;
    js.delete_stream("EXAMPLE_BLOCKING_ORDERS")?;
    println!("done");
    Ok(())
}
