//! The blocking client: NATS without an async runtime.
//!
//! `rnats::blocking` has the same calls as the async client, minus the `.await`: for
//! command-line tools, scripts, or programs built on threads. A subscriber is an iterator.
//! Run it with `cargo run --example blocking` (`NATS_URL` picks the server).

use std::thread;
use std::time::Duration;

fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::blocking::connect(&url)?;
    println!("connected to {url}");

    // Publish and subscribe. `take(3)` stops the iterator after three messages; `next`
    // would otherwise block until the subscription ends.
    let mut sensors = client.subscribe("sensors.*.temperature")?;
    for (room, celsius) in [("kitchen", "21.5"), ("hall", "19.0"), ("attic", "25.1")] {
        client.publish(format!("sensors.{room}.temperature"), celsius.into())?;
    }
    for message in sensors.by_ref().take(3) {
        println!(
            "{} = {}",
            message.subject,
            String::from_utf8_lossy(&message.payload)
        );
    }
    sensors.unsubscribe()?;

    // `next_timeout` waits a bounded time: Ok(None) means the subscription ended, Err the
    // time ran out.
    let mut quiet = client.subscribe("nobody.publishes.here")?;
    if quiet.next_timeout(Duration::from_millis(100)).is_err() {
        println!("no message on nobody.publishes.here within 100 ms");
    }

    // Request/reply across threads: the client is cheap to clone and `Send + Sync`.
    let mut requests = client.subscribe("greet")?;
    requests.unsubscribe_after(2)?;
    let responder = client.clone();
    let handle = thread::spawn(move || -> Result<(), rnats::Error> {
        for request in requests {
            if let Some(reply) = request.reply {
                let name = String::from_utf8_lossy(&request.payload).into_owned();
                responder.publish(reply, format!("hello, {name}").into())?;
            }
        }
        Ok(())
    });
    for name in ["sue", "bob"] {
        let answer = client.request("greet", name.into())?;
        println!("greet {name}: {}", String::from_utf8_lossy(&answer.payload));
    }
    handle
        .join()
        .map_err(|_| "the responder thread panicked")??;

    // `drain` sends what is queued and closes.
    client.drain()?;
    println!("done");
    Ok(())
}
