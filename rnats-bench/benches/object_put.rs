//! Object Store puts (ADR-20) of one large object, over the pipelined chunked upload and
//! over fast ingest (ADR-50), side by side on one nats-server: each run puts `size` MiB in
//! 128 KiB chunks into a fresh memory bucket, one without and one with
//! `Config::fast_ingest`, timed from the call until the put returned (metadata stored).
//! Runs alternate so drift hits both alike; the medians in MB/s and their ratio are printed.
//!
//! `cargo bench -p rnats-bench --bench object_put -- [size MiB] [runs]`
//! (defaults: 64 MiB, 5 runs each).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use rnats::jetstream::object_store::Config;
use rnats::jetstream::{self, Context};

const BUCKET: &str = "bench_put";

type BenchError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench binaries without `--bench`: hundreds of MiB
        // hashed in a debug build would only cost CI minutes.
        eprintln!(
            "object_put: not run without --bench; use `cargo bench -p rnats-bench --bench object_put`"
        );
        return ExitCode::SUCCESS;
    }
    let mut args = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse::<usize>());
    let mut next = |default: usize| args.next().and_then(Result::ok).unwrap_or(default);
    let (mib, runs) = (next(64), next(5));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(compare(mib, runs)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("object_put bench failed: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn compare(mib: usize, runs: usize) -> Result<(), BenchError> {
    let server = rnats_test_server::NatsServer::builder()
        .jetstream(true)
        .spawn()?;
    let js = jetstream::new(rnats::connect(server.url()).await?);
    let data: Vec<u8> = (0..mib * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    // One untimed round of each to warm up connection, allocator and server.
    put(&js, &data, false).await?;
    put(&js, &data, true).await?;
    let (mut chunked, mut fast) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        chunked.push(rate(data.len(), put(&js, &data, false).await?));
        fast.push(rate(data.len(), put(&js, &data, true).await?));
    }
    let (chunked, fast) = (median(chunked), median(fast));
    println!("object: {mib} MiB in 128 KiB chunks, memory bucket, {runs} runs each, medians");
    println!("chunked (pipelined acks): {chunked:>8.1} MB/s");
    println!("fast ingest:              {fast:>8.1} MB/s");
    println!("ratio fast / chunked: {:.2}x", fast / chunked);
    Ok(())
}

/// One put of `data` into a fresh bucket, with or without fast ingest.
async fn put(js: &Context, data: &[u8], fast_ingest: bool) -> Result<Duration, BenchError> {
    let _ = js.delete_object_store(BUCKET).await;
    let store = js
        .create_object_store(Config {
            bucket: BUCKET.to_owned(),
            storage: jetstream::stream::StorageType::Memory,
            fast_ingest,
            ..Default::default()
        })
        .await?;
    let start = Instant::now();
    let info = store.put("object", &mut &data[..]).await?;
    let elapsed = start.elapsed();
    if info.size != data.len() {
        return Err(format!("stored {} of {} bytes", info.size, data.len()).into());
    }
    Ok(elapsed)
}

/// MB/s (10^6 bytes).
fn rate(bytes: usize, elapsed: Duration) -> f64 {
    bytes as f64 / elapsed.as_secs_f64() / 1e6
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
