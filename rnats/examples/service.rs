//! The Service API (ADR-32): request/reply endpoints that can be discovered and monitored.
//!
//! A service is a named, versioned set of endpoints. Besides answering its own subjects,
//! every instance answers `$SRV.PING`, `$SRV.INFO` and `$SRV.STATS`, so tools such as
//! `nats micro` or `rnats service ls` find it and show its request counts and timings.
//! Run it with `cargo run --example service` (`NATS_URL` picks the server).

use futures_util::StreamExt;
use rnats::service::{self, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");

    // Instances started under the same name share the load: endpoints join the queue
    // group `q` unless told otherwise.
    let adder = client
        .service_builder()
        .description("adds comma-separated integers")
        .start("adder", "1.0.0")
        .await?;
    let mut sum = adder.endpoint("math.sum").await?;
    println!("service adder 1.0.0 started");

    // The handler: answers three requests, then returns so the stats below are final. An
    // error answer carries a code and a status in headers and counts as an error in the
    // endpoint's stats.
    let handler = tokio::spawn(async move {
        for _ in 0..3 {
            let Some(request) = sum.next().await else {
                break;
            };
            let text = String::from_utf8_lossy(&request.message.payload).into_owned();
            let parsed: Result<Vec<i64>, _> = text.split(',').map(|n| n.trim().parse()).collect();
            let answer = match parsed {
                Ok(numbers) => Ok(numbers.iter().sum::<i64>().to_string().into()),
                Err(_) => Err(service::error::Error {
                    code: 400,
                    status: format!("not a list of integers: {text}"),
                }),
            };
            request.respond(answer).await?;
        }
        Ok::<(), rnats::Error>(())
    });

    // Callers use plain requests: they need not know that a service answers.
    for input in ["1,2,3", "40,2", "one,two"] {
        let reply = client.request("math.sum", input.into()).await?;
        // A service error comes back as an empty reply with the error headers.
        let error = reply
            .headers
            .as_ref()
            .and_then(|headers| headers.get(service::NATS_SERVICE_ERROR))
            .map(|value| value.as_str().to_string());
        match error {
            Some(error) => println!("sum of {input}: error: {error}"),
            None => println!(
                "sum of {input} = {}",
                String::from_utf8_lossy(&reply.payload)
            ),
        }
    }
    handler.await??;

    // The stats that `$SRV.STATS` reports, read in process.
    for (name, stats) in adder.stats().await {
        println!(
            "endpoint {name} on {}: {} requests, {} errors",
            stats.subject, stats.requests, stats.errors
        );
    }

    // Discovery: a ping to `$SRV.PING.adder` is answered by every running instance.
    let pong = client.request("$SRV.PING.adder", "".into()).await?;
    let pong: service::PingResponse = serde_json::from_slice(&pong.payload)?;
    println!(
        "ping answered by {} {} (id {})",
        pong.name, pong.version, pong.id
    );

    adder.stop().await?;
    client.drain().await?;
    println!("done");
    Ok(())
}
