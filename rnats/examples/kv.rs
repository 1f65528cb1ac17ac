//! Key-Value: a bucket of keys whose values are kept, versioned and watched by JetStream.
//!
//! Every write gives the key a new revision; `update` writes only if the key is still at
//! the revision the writer read (optimistic concurrency), `create` only if the key has no
//! value, and a watch streams the changes as they happen. Needs a server with JetStream
//! enabled (`nats-server -js`). Run it with `cargo run --example kv`.

use futures_util::StreamExt;
use rnats::jetstream::{self, kv, stream::StorageType};

const BUCKET: &str = "example_settings";

#[tokio::main]
async fn main() -> Result<(), rnats::Error> {
    let url = std::env::var("NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".to_string());
    let client = rnats::connect(&url).await?;
    println!("connected to {url}");
    let js = jetstream::new(client);

    let settings = js
        .create_key_value(kv::Config {
            bucket: BUCKET.to_string(),
            history: 5, // revisions kept per key
            storage: StorageType::Memory,
            ..Default::default()
        })
        .await?;
    println!("bucket {BUCKET} ready");

    // Start watching before writing: a watch reports the changes made after it starts
    // (`watch_with_history` would start with the current values).
    let mut changes = settings.watch_all().await?;

    let revision = settings.put("color", "blue".into()).await?;
    println!("put color = blue at revision {revision}");

    if let Some(value) = settings.get("color").await? {
        println!("get color: {}", String::from_utf8_lossy(&value));
    }

    // The update names the revision it was based on, so it cannot overwrite a change made
    // by someone else in between.
    let revision = settings.update("color", "green".into(), revision).await?;
    println!("update color = green at revision {revision}");
    match settings.update("color", "red".into(), revision - 1).await {
        Err(err) if err.kind() == kv::UpdateErrorKind::WrongLastRevision => {
            println!("update from a stale revision refused: {}", err.kind())
        }
        other => println!("unexpected: {other:?}"),
    }

    // `create` is for keys that must not exist yet (a lock, a first registration).
    settings.create("owner", "sue".into()).await?;
    match settings.create("owner", "bob".into()).await {
        Err(err) if err.kind() == kv::CreateErrorKind::AlreadyExists => {
            println!("create owner again refused: {}", err.kind())
        }
        other => println!("unexpected: {other:?}"),
    }
    settings.delete("owner").await?;

    // The watch saw the four changes above, in order, with their revisions.
    for _ in 0..4 {
        let Some(entry) = changes.next().await else {
            break;
        };
        let entry = entry?;
        println!(
            "watch: {} {:?} {:?} at revision {}",
            entry.key,
            entry.operation,
            String::from_utf8_lossy(&entry.value),
            entry.revision
        );
    }

    // A key's history lists the revisions the bucket keeps for it.
    let mut history = settings.history("color").await?;
    while let Some(entry) = history.next().await {
        let entry = entry?;
        println!(
            "history of color: revision {} = {}",
            entry.revision,
            String::from_utf8_lossy(&entry.value)
        );
    }

    js.delete_key_value(BUCKET).await?;
    println!("done");
    Ok(())
}
