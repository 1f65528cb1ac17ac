//! Object Store: files of any size in a JetStream bucket.
//!
//! An object is cut into chunks (128 KiB by default) that are stored as messages and read
//! back in order; its info records the size, the chunk count and a SHA-256 digest that the
//! reader checks. Needs a server with JetStream enabled (`nats-server -js`). Run it with
//! `cargo run --example object_store`.

use rnats::jetstream::{self, object_store, stream::StorageType};
use tokio::io::AsyncWriteExt;

const BUCKET: &str = "example_files";
const SIZE: usize = 3 * 1024 * 1024;

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");
    let js = jetstream::new(client);

    let bucket = js
        .create_object_store(object_store::Config {
            bucket: BUCKET.to_string(),
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await?;
    println!("bucket {BUCKET} ready");

    // A file to upload: 3 MiB of made-up data in the temporary directory.
    let dir = std::env::temp_dir();
    let source = dir.join(format!("rnats-example-{}.bin", std::process::id()));
    let restored = dir.join(format!("rnats-example-{}.restored", std::process::id()));
    let data: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    tokio::fs::write(&source, &data).await?;

    // `put` reads from any `AsyncRead` (here the open file) chunk by chunk, so the object
    // never has to fit in memory.
    let mut file = tokio::fs::File::open(&source).await?;
    let info = bucket.put("reports/2024.bin", &mut file).await?;
    println!(
        "put {}: {} bytes in {} chunks, digest {}",
        info.name,
        info.size,
        info.chunks,
        info.digest.as_deref().unwrap_or("-")
    );

    // `get` gives an `AsyncRead` too; copying it into a file streams the chunks. If the
    // data does not match the recorded size and digest, the read fails.
    let mut object = bucket.get("reports/2024.bin").await?;
    let mut out = tokio::fs::File::create(&restored).await?;
    let copied = tokio::io::copy(&mut object, &mut out).await?;
    out.flush().await?;
    println!("got {copied} bytes back");

    let same = tokio::fs::read(&restored).await? == data;
    println!("the restored file is identical: {same}");

    let info = bucket.info("reports/2024.bin").await?;
    println!("info: {} is {} bytes", info.name, info.size);

    bucket.delete("reports/2024.bin").await?;
    js.delete_object_store(BUCKET).await?;
    tokio::fs::remove_file(&source).await?;
    tokio::fs::remove_file(&restored).await?;
    println!("done");
    Ok(())
}
