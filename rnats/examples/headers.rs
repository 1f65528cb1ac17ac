//! Headers: metadata that travels with a message, beside its payload.
//!
//! NATS headers look like HTTP's: names with one or more text values. They suit tracing ids,
//! content types and the like, which the payload's format should not have to carry. Run it
//! with `cargo run --example headers` (`NATS_URL` picks the server).

use futures_util::StreamExt;
use rnats::HeaderMap;

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");

    let mut events = client.subscribe("audit.events").await?;
    events.unsubscribe_after(1).await?;

    // A name may hold several values: `insert` replaces, `append` adds one more.
    let mut headers = HeaderMap::new();
    headers.insert("Trace-Id", "4bf92f3577b34da6");
    headers.insert("Content-Type", "application/json");
    headers.append("Tag", "billing");
    headers.append("Tag", "eu");
    client
        .publish_with_headers("audit.events", headers, r#"{"user":"sue"}"#.into())
        .await?;

    if let Some(message) = events.next().await {
        // Headers are optional on a message: `None` when the publisher sent none.
        let headers = message.headers.unwrap_or_default();
        let trace = headers.get("Trace-Id").map(|value| value.as_str());
        println!("trace id: {}", trace.unwrap_or("-"));
        let tags: Vec<&str> = headers.get_all("Tag").map(|value| value.as_str()).collect();
        println!("tags: {}", tags.join(", "));
        println!("payload: {}", String::from_utf8_lossy(&message.payload));
    }

    // Requests carry headers too, and the responder can answer with its own.
    let mut service = client.subscribe("lookup.user").await?;
    service.unsubscribe_after(1).await?;
    let responder = client.clone();
    let responder_task = tokio::spawn(async move {
        while let Some(request) = service.next().await {
            let Some(reply) = request.reply else { continue };
            let language = request
                .headers
                .as_ref()
                .and_then(|headers| headers.get("Accept-Language"))
                .map(|value| value.as_str().to_string())
                .unwrap_or_else(|| "en".to_string());
            let mut answer = HeaderMap::new();
            answer.insert("Content-Language", language.as_str());
            let greeting = if language == "fr" { "bonjour" } else { "hello" };
            responder
                .publish_with_headers(reply, answer, greeting.into())
                .await?;
        }
        Ok::<(), rnats::Error>(())
    });

    let mut ask = HeaderMap::new();
    ask.insert("Accept-Language", "fr");
    let answer = client
        .request_with_headers("lookup.user", ask, "sue".into())
        .await?;
    let language = answer
        .headers
        .as_ref()
        .and_then(|headers| headers.get("Content-Language"))
        .map(|value| value.as_str().to_string());
    println!(
        "answer: {} (language {})",
        String::from_utf8_lossy(&answer.payload),
        language.as_deref().unwrap_or("-")
    );
    responder_task.await??;

    client.drain().await?;
    println!("done");
    Ok(())
}
