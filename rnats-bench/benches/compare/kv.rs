//! The Key-Value scenarios, written once against the API both clients share and compiled for
//! each side like `scenarios.rs`: puts and gets on a memory bucket, one task or many at once.

use std::time::Instant;

use bytes::Bytes;
use rnats_bench::Throughput;

use super::{connect, jetstream};
use crate::BenchError;

const KV_BUCKET: &str = "BENCH_KV";
/// Distinct keys a run writes and reads.
const KEYS: usize = 1_000;
/// Bytes per value.
const VALUE_SIZE: usize = 128;

/// A fresh memory bucket on a new connection (one left over from a failed run is dropped).
async fn fresh_bucket(url: &str) -> Result<(jetstream::Context, jetstream::kv::Store), BenchError> {
    let js = jetstream::new(connect(url, None).await?);
    let _ = js.delete_key_value(KV_BUCKET).await;
    let store = js
        .create_key_value(jetstream::kv::Config {
            bucket: KV_BUCKET.to_string(),
            history: 1,
            storage: jetstream::stream::StorageType::Memory,
            ..Default::default()
        })
        .await?;
    Ok((js, store))
}

fn key(i: usize) -> String {
    format!("bench.key{}", i % KEYS)
}

/// `count` puts of [`VALUE_SIZE`] bytes over [`KEYS`] keys, each awaited, spread over `tasks`
/// tasks at once. The rate, and the mean time of one put as a task sees it.
pub(crate) async fn kv_put(
    url: &str,
    count: usize,
    tasks: usize,
) -> Result<(Throughput, f64), BenchError> {
    let (js, store) = fresh_bucket(url).await?;
    let value = Bytes::from(vec![b'v'; VALUE_SIZE]);
    let per_task = count / tasks;
    let start = Instant::now();
    let mut running = Vec::with_capacity(tasks);
    for task in 0..tasks {
        let (store, value) = (store.clone(), value.clone());
        running.push(tokio::spawn(async move {
            for i in 0..per_task {
                store.put(key(task * per_task + i), value.clone()).await?;
            }
            Ok::<(), BenchError>(())
        }));
    }
    for task in running {
        task.await??;
    }
    let elapsed = start.elapsed();
    js.delete_key_value(KV_BUCKET).await?;
    let done = per_task * tasks;
    let mean_us = elapsed.as_secs_f64() * 1e6 * tasks as f64 / done as f64;
    Ok((Throughput::new(done, VALUE_SIZE, elapsed), mean_us))
}

/// Fills [`KEYS`] keys (untimed), then `count` gets of them spread over `tasks` tasks at once,
/// each checked to find its value.
pub(crate) async fn kv_get(
    url: &str,
    count: usize,
    tasks: usize,
) -> Result<(Throughput, f64), BenchError> {
    let (js, store) = fresh_bucket(url).await?;
    let value = Bytes::from(vec![b'v'; VALUE_SIZE]);
    for i in 0..KEYS {
        store.put(key(i), value.clone()).await?;
    }
    let per_task = count / tasks;
    let start = Instant::now();
    let mut running = Vec::with_capacity(tasks);
    for task in 0..tasks {
        let store = store.clone();
        running.push(tokio::spawn(async move {
            for i in 0..per_task {
                if store.get(key(task * per_task + i)).await?.is_none() {
                    return Err::<(), BenchError>("a stored key read as missing".into());
                }
            }
            Ok(())
        }));
    }
    for task in running {
        task.await??;
    }
    let elapsed = start.elapsed();
    js.delete_key_value(KV_BUCKET).await?;
    let done = per_task * tasks;
    let mean_us = elapsed.as_secs_f64() * 1e6 * tasks as f64 / done as f64;
    Ok((Throughput::new(done, VALUE_SIZE, elapsed), mean_us))
}
