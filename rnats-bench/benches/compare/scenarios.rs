//! The async scenarios, written once against the API both async clients share.
//!
//! This file is compiled twice: as `rnats_side::scenarios` and as `async_nats_side::scenarios`.
//! In each, `super::connect` opens a connection with that side's client and everything else is
//! the same method names on different types. One copy of the code is what keeps the comparison
//! honest: both clients run exactly the same steps, with the same payloads and subjects. The
//! Core scenarios take their subjects, payloads and timeouts from [`rnats_bench::workload`],
//! which the raw client's scenarios ([`rnats_bench::raw::scenarios`]) use too.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_bench::memory;
use rnats_bench::workload::{
    self, LAT_SUBJECT, LATENCY_WARM_UP, PUB_SUBJECT, RECEIVE_TIMEOUT, REQ_SUBJECT,
    ROUND_TRIP_TIMEOUT, SMALL_PAYLOAD, SUB_SUBJECT,
};
use rnats_bench::{JS_IN_FLIGHT, Latency, Throughput};

use super::{connect, jetstream};
use crate::{BenchError, Capacity};

#[path = "object_store.rs"]
mod object_store;
/// The Key-Value scenarios, reachable from here as the other scenarios are.
pub(crate) use super::kv;
pub(crate) use object_store::{object_get, object_put};

const JS_STREAM: &str = "BENCH";
const JS_SUBJECT: &str = "bench.js";
const JS_FETCH_STREAM: &str = "BENCH_FETCH";
const JS_FETCH_SUBJECT: &str = "bench.jsf";

/// Publishes `count` messages of `size` bytes on one connection with no subscribers, then
/// flushes. Timed from the first publish until the flush returns.
pub(crate) async fn publish(
    url: &str,
    size: usize,
    count: usize,
) -> Result<Throughput, BenchError> {
    let client = connect(url, None).await?;
    let payload = payload(size);
    let start = Instant::now();
    for _ in 0..count {
        client.publish(PUB_SUBJECT, payload.clone()).await?;
    }
    client.flush().await?;
    Ok(Throughput::new(count, size, start.elapsed()))
}

/// A second connection publishes `count` messages of `size` bytes; the subscriber's rate runs
/// from the first message it receives to the last. Fewer than `count` messages within
/// [`RECEIVE_TIMEOUT`] makes the run invalid: a benchmark that drops messages measures nothing.
pub(crate) async fn subscribe(
    url: &str,
    size: usize,
    count: usize,
) -> Result<Throughput, BenchError> {
    let (messages, bytes) = workload::room_for_run(count, size);
    let capacity = Capacity { messages, bytes };
    let receiver_client = connect(url, Some(capacity)).await?;
    let mut subscriber = receiver_client.subscribe(SUB_SUBJECT).await?;
    receiver_client.flush().await?;

    let receiving = tokio::spawn(async move {
        let mut received = 0usize;
        let mut first = None;
        let finished = tokio::time::timeout(RECEIVE_TIMEOUT, async {
            while received < count {
                if subscriber.next().await.is_none() {
                    break;
                }
                if received == 0 {
                    first = Some(Instant::now());
                }
                received += 1;
            }
        })
        .await;
        let last = Instant::now();
        // Keep the connection open until the subscriber is done with it.
        drop(receiver_client);
        (received, first, last, finished.is_ok())
    });

    let publisher = connect(url, None).await?;
    let payload = payload(size);
    for _ in 0..count {
        publisher.publish(SUB_SUBJECT, payload.clone()).await?;
    }
    publisher.flush().await?;

    let (received, first, last, in_time) = receiving.await?;
    if received != count {
        let why = if in_time {
            "the subscription ended"
        } else {
            "timed out"
        };
        return Err(format!(
            "DROPPED MESSAGES: received {received} of {count} ({why}, limit {RECEIVE_TIMEOUT:?})"
        )
        .into());
    }
    let first = first.ok_or("no message received")?;
    Ok(Throughput::new(count, size, last - first))
}

/// `count` sequential 32-byte requests to a responder on another connection that echoes each
/// payload back to the reply subject. Returns the request rate and per-request latency.
pub(crate) async fn request(url: &str, count: usize) -> Result<(Throughput, Latency), BenchError> {
    let responder = connect(url, None).await?;
    let mut requests = responder.subscribe(REQ_SUBJECT).await?;
    responder.flush().await?;
    let responding = tokio::spawn(async move {
        while let Some(message) = requests.next().await {
            if let Some(reply) = message.reply
                && responder.publish(reply, message.payload).await.is_err()
            {
                break;
            }
        }
    });

    let requester = connect(url, None).await?;
    let payload = payload(SMALL_PAYLOAD);
    // One unmeasured request: a client may set up its reply subscription on first use.
    requester.request(REQ_SUBJECT, payload.clone()).await?;
    let mut samples = Vec::with_capacity(count);
    let start = Instant::now();
    for _ in 0..count {
        let sent = Instant::now();
        requester.request(REQ_SUBJECT, payload.clone()).await?;
        samples.push(sent.elapsed());
    }
    let elapsed = start.elapsed();
    responding.abort();

    let latency = Latency::from_durations(&samples).ok_or("no requests made")?;
    Ok((Throughput::new(count, SMALL_PAYLOAD, elapsed), latency))
}

/// publish -> flush -> receive on one connection subscribed to its own subject, `iterations`
/// times. With `idle_gap`, the connection sleeps that long before each iteration (not timed),
/// which shows what a client costs when it has gone quiet.
pub(crate) async fn latency(
    url: &str,
    iterations: usize,
    idle_gap: Option<Duration>,
) -> Result<Latency, BenchError> {
    let client = connect(url, None).await?;
    let mut subscriber = client.subscribe(LAT_SUBJECT).await?;
    client.flush().await?;
    let payload = payload(SMALL_PAYLOAD);
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..LATENCY_WARM_UP + iterations {
        if let Some(gap) = idle_gap.filter(|_| i >= LATENCY_WARM_UP) {
            tokio::time::sleep(gap).await;
        }
        let start = Instant::now();
        client.publish(LAT_SUBJECT, payload.clone()).await?;
        client.flush().await?;
        match tokio::time::timeout(ROUND_TRIP_TIMEOUT, subscriber.next()).await {
            Ok(Some(_)) => {}
            Ok(None) => return Err("subscription ended during the latency run".into()),
            Err(_) => return Err(format!("no message within {ROUND_TRIP_TIMEOUT:?}").into()),
        }
        if i >= LATENCY_WARM_UP {
            samples.push(start.elapsed());
        }
    }
    Latency::from_durations(&samples).ok_or_else(|| "no iterations".into())
}

/// Publishes `count` messages of `size` bytes as fast as possible, flushes, and returns this
/// process's peak RSS in KiB. Meant for a child process that does nothing else.
pub(crate) async fn peak_rss_publishing(
    url: &str,
    size: usize,
    count: usize,
) -> Result<u64, BenchError> {
    publish(url, size, count).await?;
    Ok(memory::self_status_kib(memory::PEAK_RSS)?)
}

/// Publishes `count` JetStream messages of `size` bytes through a context that allows
/// [`JS_IN_FLIGHT`] acks outstanding, dropping every ack future unawaited, so that only the
/// client's in-flight bound keeps memory in check; then waits for one last ack and returns this
/// process's peak RSS in KiB. The stream keeps its newest 10,000 messages, to bound the server.
pub(crate) async fn peak_rss_jetstream_publishing(
    url: &str,
    size: usize,
    count: usize,
) -> Result<u64, BenchError> {
    let client = connect(url, None).await?;
    let js = jetstream::context::ContextBuilder::new()
        .max_ack_inflight(JS_IN_FLIGHT)
        .build(client);
    let config = serde_json::json!({
        "name": JS_STREAM,
        "subjects": [JS_SUBJECT],
        "storage": "memory",
        "max_msgs": 10_000,
        "discard": "old",
    });
    recreate_bench_stream(&js, &config).await?;
    let payload = payload(size);
    for _ in 0..count {
        drop(js.publish(JS_SUBJECT, payload.clone()).await?);
    }
    js.publish(JS_SUBJECT, payload).await?.await?;
    let peak = memory::self_status_kib(memory::PEAK_RSS)?;
    delete_bench_stream(&js).await?;
    Ok(peak)
}

/// Resident bytes per idle subscription: RSS after `count` subscriptions and a flush, minus
/// RSS before them, divided by `count`.
pub(crate) async fn rss_per_idle_subscription(url: &str, count: usize) -> Result<f64, BenchError> {
    let client = connect(url, None).await?;
    client.flush().await?;
    let before = memory::self_status_kib(memory::RSS)?;
    let mut subscribers = Vec::with_capacity(count);
    for i in 0..count {
        subscribers.push(client.subscribe(format!("bench.idle.{i}")).await?);
    }
    client.flush().await?;
    let after = memory::self_status_kib(memory::RSS)?;
    drop(subscribers);
    Ok(after.saturating_sub(before) as f64 * 1024.0 / count.max(1) as f64)
}

/// Makes the bench stream afresh with `config` (a run that failed half way may have left one),
/// through the JetStream API, which both clients send alike.
async fn recreate_bench_stream(
    js: &jetstream::Context,
    config: &serde_json::Value,
) -> Result<(), BenchError> {
    delete_bench_stream(js).await?;
    let created: serde_json::Value = js
        .request(format!("STREAM.CREATE.{JS_STREAM}"), config)
        .await?;
    match created.get("error") {
        Some(error) => Err(format!("cannot create the bench stream: {error}").into()),
        None => Ok(()),
    }
}

/// Deletes the bench stream; a stream that is not there is no error.
async fn delete_bench_stream(js: &jetstream::Context) -> Result<(), BenchError> {
    let _: serde_json::Value = js
        .request(format!("STREAM.DELETE.{JS_STREAM}"), &())
        .await?;
    Ok(())
}

/// The same bytes for every message of a run; cloning a `Bytes` only bumps a reference count.
fn payload(size: usize) -> Bytes {
    Bytes::from(workload::payload(size))
}

/// Publishes `count` messages of `size` bytes to a memory stream, awaiting each ack before the
/// next publish (`in_flight` 1) or keeping up to `in_flight` acks outstanding. The stream is
/// made fresh for the run through the JetStream API (both clients send the same request) and
/// deleted after it. Timed from the first publish until the last ack.
pub(crate) async fn jetstream_publish(
    url: &str,
    size: usize,
    count: usize,
    in_flight: usize,
) -> Result<Throughput, BenchError> {
    let client = connect(url, None).await?;
    let js = jetstream::new(client);
    let config = serde_json::json!({
        "name": JS_STREAM,
        "subjects": [JS_SUBJECT],
        "storage": "memory",
    });
    recreate_bench_stream(&js, &config).await?;
    let payload = payload(size);
    let mut pending = std::collections::VecDeque::with_capacity(in_flight);
    let start = Instant::now();
    for _ in 0..count {
        pending.push_back(js.publish(JS_SUBJECT, payload.clone()).await?);
        if pending.len() >= in_flight
            && let Some(ack) = pending.pop_front()
        {
            ack.await?;
        }
    }
    for ack in pending {
        ack.await?;
    }
    let elapsed = start.elapsed();
    delete_bench_stream(&js).await?;
    Ok(Throughput::new(count, size, elapsed))
}

/// Fills a memory stream with `count` messages of `size` bytes (pipelined, untimed), then
/// times a durable pull consumer fetching them in batches of `batch`, acking each one.
pub(crate) async fn jetstream_fetch(
    url: &str,
    size: usize,
    count: usize,
    batch: usize,
) -> Result<Throughput, BenchError> {
    let client = connect(url, None).await?;
    let js = jetstream::new(client);
    let stream = js
        .get_or_create_stream(jetstream::stream::Config {
            name: JS_FETCH_STREAM.to_string(),
            subjects: vec![JS_FETCH_SUBJECT.to_string()],
            storage: jetstream::stream::StorageType::Memory,
            ..Default::default()
        })
        .await?;
    stream.purge().await?;
    let payload = payload(size);
    let mut pending = std::collections::VecDeque::with_capacity(256);
    for _ in 0..count {
        pending.push_back(js.publish(JS_FETCH_SUBJECT, payload.clone()).await?);
        if pending.len() >= 256
            && let Some(ack) = pending.pop_front()
        {
            ack.await?;
        }
    }
    for ack in pending {
        ack.await?;
    }
    let _ = stream.delete_consumer("bench").await;
    let consumer = stream
        .create_consumer(jetstream::consumer::pull::Config {
            durable_name: Some("bench".to_string()),
            ack_policy: jetstream::consumer::AckPolicy::Explicit,
            ..Default::default()
        })
        .await?;
    let start = Instant::now();
    let mut received = 0;
    while received < count {
        let mut messages = consumer.fetch().max_messages(batch).messages().await?;
        while let Some(message) = messages.next().await {
            message?.ack().await?;
            received += 1;
        }
    }
    let elapsed = start.elapsed();
    js.delete_stream(JS_FETCH_STREAM).await?;
    Ok(Throughput::new(count, size, elapsed))
}
