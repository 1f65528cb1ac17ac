//! Request and reply: ask a question on a subject and wait for one answer.
//!
//! A responder subscribes to `time.now` and answers each request on the request's reply
//! subject; the requester sends with `request`, which waits for that answer. Run it with
//! `cargo run --example request_reply` (`NATS_URL` picks the server).

use futures_util::StreamExt;
use rnats::RequestErrorKind;

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");

    // The responder: usually another program, here a task on the same connection. It
    // stops after three requests, so the example ends.
    let mut requests = client.subscribe("math.double").await?;
    requests.unsubscribe_after(3).await?;
    let responder = client.clone();
    let responder_task = tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            // A request carries the subject to answer on; a plain publish has none.
            let Some(reply) = request.reply else { continue };
            let number: i64 = String::from_utf8_lossy(&request.payload)
                .parse()
                .unwrap_or(0);
            responder
                .publish(reply, (number * 2).to_string().into())
                .await?;
        }
        Ok::<(), rnats::Error>(())
    });

    for number in [1, 21, 50] {
        // `request` sends the payload with a fresh reply subject and waits for the first
        // answer, or fails after the client's request timeout (10 s by default).
        let answer = client
            .request("math.double", number.to_string().into())
            .await?;
        println!(
            "double of {number} is {}",
            String::from_utf8_lossy(&answer.payload)
        );
    }
    responder_task.await??;

    // With nobody subscribed, the server says so at once (a 503 status) instead of leaving
    // the request to time out.
    match client.request("math.double", "1".into()).await {
        Err(err) if err.kind() == RequestErrorKind::NoResponders => {
            println!("no responders for math.double any more")
        }
        Err(err) => return Err(err.into()),
        Ok(answer) => println!("unexpected answer: {:?}", answer.payload),
    }

    client.drain().await?;
    println!("done");
    Ok(())
}
