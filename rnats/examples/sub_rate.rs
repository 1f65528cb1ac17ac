//! Scratch: subscribe rate.
#![allow(missing_docs, clippy::unwrap_used)]
use futures_util::StreamExt;
use std::time::Instant;
#[tokio::main]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args()
        .nth(2)
        .unwrap_or("1000000".into())
        .parse()
        .unwrap();
    let client = rnats::ConnectOptions::new()
        .subscription_capacity(10_000_000)
        .connect(&url)
        .await
        .unwrap();
    let mut sub = client.subscribe("bench.pub").await.unwrap();
    client.flush().await.unwrap();
    eprintln!("ready");
    sub.next().await.unwrap();
    let t = Instant::now();
    for _ in 1..n {
        sub.next().await.unwrap();
    }
    println!("sub: {:.0} msgs/s", n as f64 / t.elapsed().as_secs_f64());
}
