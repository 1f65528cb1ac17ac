//! Fast-ingest batches (ADR-50) against pipelined JetStream publish, side by side on one
//! nats-server: both put `count` messages of `size` bytes into a fresh memory stream that
//! allows batch publishing, and are timed from the first publish until the last ack (the
//! final batch ack, or the last publish ack). Runs alternate so drift hits both alike; the
//! medians and their ratio are printed. Only rnats has fast ingest, so this is rnats
//! against itself: the question is what the batch protocol buys over per-message acks.
//!
//! `cargo bench -p rnats-bench --bench fast_ingest -- [count] [size] [runs]`
//! (defaults: 1,000,000 messages of 32 bytes, 5 runs each).

use std::collections::VecDeque;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats::jetstream::{self, Context};
use rnats_bench::JS_IN_FLIGHT;
use rnats_bench::small_bench::{self, BenchError};

const STREAM: &str = "BENCH_INGEST";
const SUBJECT: &str = "bench.ingest";

fn main() -> ExitCode {
    small_bench::run("fast_ingest", |number| {
        compare(number(0, 1_000_000), number(1, 32), number(2, 5))
    })
}

async fn compare(count: usize, size: usize, runs: usize) -> Result<(), BenchError> {
    let server = rnats_test_server::NatsServer::builder()
        .jetstream(true)
        .spawn()?;
    let client = rnats::connect(server.url()).await?;
    let js = jetstream::new(client);
    let payload = Bytes::from(vec![b'x'; size]);
    // One untimed round of each to warm up connections, allocator and server.
    pipelined(&js, &payload, count / 10).await?;
    ingest(&js, &payload, count / 10).await?;
    let (mut pipe, mut fast) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        pipe.push(rate(count, pipelined(&js, &payload, count).await?));
        fast.push(rate(count, ingest(&js, &payload, count).await?));
    }
    let (pipe, fast) = (median(pipe), median(fast));
    println!("messages: {count} x {size} B, {runs} runs each, medians");
    println!("js-pipe{size} ({JS_IN_FLIGHT} acks in flight): {pipe:>12.0} msgs/s");
    println!("js-ingest{size} (fast-ingest batch):      {fast:>12.0} msgs/s");
    println!("ratio ingest / pipe: {:.2}x (target 1.5x)", fast / pipe);
    Ok(())
}

/// The `js-pipe` scenario's loop: at most [`JS_IN_FLIGHT`] acks outstanding.
async fn pipelined(js: &Context, payload: &Bytes, count: usize) -> Result<Duration, BenchError> {
    fresh_stream(js).await?;
    let mut pending = VecDeque::with_capacity(JS_IN_FLIGHT);
    let start = Instant::now();
    for _ in 0..count {
        pending.push_back(js.publish(SUBJECT, payload.clone()).await?);
        if pending.len() >= JS_IN_FLIGHT
            && let Some(ack) = pending.pop_front()
        {
            ack.await?;
        }
    }
    for ack in pending {
        ack.await?;
    }
    Ok(start.elapsed())
}

/// One fast-ingest batch of `count` messages, ended without an extra message.
async fn ingest(js: &Context, payload: &Bytes, count: usize) -> Result<Duration, BenchError> {
    fresh_stream(js).await?;
    let start = Instant::now();
    let mut batch = js.fast_ingest().start().await?;
    for _ in 0..count {
        batch.publish(SUBJECT, payload.clone()).await?;
    }
    let ack = batch.finish().await?;
    let elapsed = start.elapsed();
    if ack.batch_size != Some(count as u64) {
        return Err(format!("the batch stored {:?} of {count}", ack.batch_size).into());
    }
    Ok(elapsed)
}

async fn fresh_stream(js: &Context) -> Result<(), BenchError> {
    let _ = js.delete_stream(STREAM).await;
    js.create_stream(jetstream::stream::Config {
        name: STREAM.to_owned(),
        subjects: vec![SUBJECT.to_owned()],
        storage: jetstream::stream::StorageType::Memory,
        allow_batch_publish: true,
        ..Default::default()
    })
    .await?;
    Ok(())
}

fn rate(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
