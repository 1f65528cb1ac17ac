//! Scratch: publish rate.
#![allow(missing_docs, clippy::unwrap_used)]
use std::time::Instant;
#[tokio::main]
async fn main() {
    let url = std::env::args().nth(1).unwrap();
    let size: usize = std::env::args()
        .nth(2)
        .unwrap_or("32".into())
        .parse()
        .unwrap();
    let n: usize = std::env::args()
        .nth(3)
        .unwrap_or("1000000".into())
        .parse()
        .unwrap();
    let limit: usize = std::env::var("LIMIT")
        .map(|v| v.parse().unwrap())
        .unwrap_or(8 << 20);
    let client = rnats::ConnectOptions::new()
        .write_buffer_limit(limit)
        .connect(&url)
        .await
        .unwrap();
    let payload = bytes::Bytes::from(vec![b'x'; size]);
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..n {
            client.publish("bench.pub", payload.clone()).await.unwrap();
        }
        client.flush().await.unwrap();
        let e = t.elapsed();
        println!("{size} B: {:.0} msgs/s", n as f64 / e.as_secs_f64());
    }
}
