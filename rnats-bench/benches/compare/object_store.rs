//! The `obj-*` scenarios: one large object put into, or read back from, a memory bucket.
//! Compiled into each side's `scenarios` module, so both clients run the same calls.

use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use super::{connect, jetstream};
use crate::BenchError;

const OBJ_BUCKET: &str = "bench_obj";
const OBJ_NAME: &str = "bench.bin";

/// A fresh memory bucket on a new connection.
async fn fresh_bucket(url: &str) -> Result<jetstream::object_store::ObjectStore, BenchError> {
    let js = jetstream::new(connect(url, None).await?);
    // A bucket left by an earlier run (or the other client) starts the run empty.
    let _ = js.delete_object_store(OBJ_BUCKET).await;
    let bucket = js
        .create_object_store(jetstream::object_store::Config {
            bucket: OBJ_BUCKET.to_string(),
            storage: jetstream::stream::StorageType::Memory,
            ..Default::default()
        })
        .await?;
    Ok(bucket)
}

/// `size` bytes that do not compress to nothing.
fn object_data(size: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..size)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// Puts one object of `size` bytes; timed from the call until the put returns (all chunks
/// and the metadata acked).
pub(crate) async fn object_put(url: &str, size: usize) -> Result<Duration, BenchError> {
    let bucket = fresh_bucket(url).await?;
    let data = object_data(size);
    let start = Instant::now();
    let info = bucket.put(OBJ_NAME, &mut data.as_slice()).await?;
    let elapsed = start.elapsed();
    if info.size != size {
        return Err(format!("stored {} bytes of {size}", info.size).into());
    }
    Ok(elapsed)
}

/// Reads back one object of `size` bytes (put unmeasured first); timed from `get` until the
/// read reports the end, after the digest check.
pub(crate) async fn object_get(url: &str, size: usize) -> Result<Duration, BenchError> {
    let bucket = fresh_bucket(url).await?;
    let data = object_data(size);
    bucket.put(OBJ_NAME, &mut data.as_slice()).await?;
    let mut buf = vec![0u8; 256 * 1024];
    let start = Instant::now();
    let mut object = bucket.get(OBJ_NAME).await?;
    let mut total = 0;
    loop {
        let n = object.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        total += n;
    }
    let elapsed = start.elapsed();
    if total != size {
        return Err(format!("read {total} bytes of {size}").into());
    }
    Ok(elapsed)
}
