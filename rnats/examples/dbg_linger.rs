#![allow(missing_docs, clippy::unwrap_used)]
use futures_util::StreamExt;
use std::time::Duration;
#[tokio::main]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    let receiver = rnats::connect(&url).await.unwrap();
    let mut service = receiver.subscribe("linger.svc").await.unwrap();
    receiver.flush().await.unwrap();
    let responder = receiver.clone();
    tokio::spawn(async move {
        while let Some(m) = service.next().await {
            eprintln!("got request {:?}", m.reply);
            responder
                .publish(m.reply.unwrap(), "pong".into())
                .await
                .unwrap();
        }
    });
    let slow = rnats::ConnectOptions::new()
        .linger(Duration::from_secs(3600), 1 << 30)
        .connect(&url)
        .await
        .unwrap();
    let r = tokio::time::timeout(
        Duration::from_secs(3),
        slow.request("linger.svc", "?".into()),
    )
    .await;
    eprintln!("{r:?}");
}
