//! The scale probes, written once against the API rnats and async-nats share.
//!
//! This file is compiled once per client: as [`rnats_bench::scale::rnats_side::probes`] and
//! as `async_nats_side::probes` in `benches/scale.rs`. In each, `super::connect`,
//! `super::jetstream` and `super::HeaderMap` are that client's, and everything else is the
//! same method names on different types, so both clients run exactly the same steps.
//! Memory figures come from [`heap`]: live heap bytes where the binary counts its
//! allocations (the `scale` bench), resident memory otherwise.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use rnats_bench::memory;
use rnats_bench::scale::fake_server::FakeServer;
use rnats_bench::scale::pattern::PatternReader;
use rnats_bench::scale::responder::Responder;
use rnats_bench::scale::{Axis, ScaleError, heap};

use super::{HeaderMap, connect, jetstream};

/// Messages delivered at every point of the subscriptions axis.
const DELIVERIES: usize = 20_000;
/// Messages sent at every point of the headers axis.
const HEADER_MESSAGES: usize = 5_000;
/// INFO updates per point of the servers axis; the median flush is reported.
const INFO_UPDATES: usize = 5;
/// How long a probe waits for one message before it fails.
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an object put, or one read of an object get, may take before the probe fails
/// and says which step stalled.
const OBJECT_STEP_LIMIT: Duration = Duration::from_secs(60);
const REQ_SUBJECT: &str = "scale.req";
const KV_BUCKET: &str = "SCALE_KV";
const OBJ_BUCKET: &str = "scale_obj";

/// Runs `axis` at point `n`; the figures are in the order of [`Axis::metrics`].
pub async fn measure(axis: Axis, url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    match axis {
        Axis::Subs => subscriptions(url, n).await,
        Axis::Requests => requests(url, n).await,
        Axis::Servers => servers(n).await,
        Axis::Connections => connections(url, n).await,
        Axis::Headers => headers(url, n).await,
        Axis::KvKeys => kv_keys(url, n).await,
        Axis::Objects => objects(url, n).await,
    }
}

/// `n` subscriptions on distinct subjects of one connection: subscribe time per
/// subscription (until a flush confirms them all), then [`DELIVERIES`] messages published
/// on this connection to the last subscription's subject and received (time per message),
/// and the memory the subscriptions hold, per subscription.
async fn subscriptions(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    let client = connect(url, DELIVERIES + 1024).await?;
    client.flush().await?;
    settle().await;
    let before = heap::in_use();
    let started = Instant::now();
    let mut subscribers = Vec::with_capacity(n);
    for i in 0..n {
        subscribers.push(client.subscribe(format!("scale.sub.{i}")).await?);
    }
    client.flush().await?;
    let subscribe_us = per_item_us(started.elapsed(), n);
    let bytes_per_sub = per_item_bytes(before, n);

    let subject = format!("scale.sub.{}", n.saturating_sub(1));
    let target = subscribers.last_mut().ok_or("no subscription")?;
    let payload = Bytes::from_static(b"0123456789abcdef");
    let started = Instant::now();
    for _ in 0..DELIVERIES {
        client.publish(subject.clone(), payload.clone()).await?;
    }
    for received in 0..DELIVERIES {
        match tokio::time::timeout(RECEIVE_TIMEOUT, target.next()).await {
            Ok(Some(_)) => {}
            _ => return Err(format!("{received} of {DELIVERIES} messages arrived").into()),
        }
    }
    let deliver_us = per_item_us(started.elapsed(), DELIVERIES);
    drop(subscribers);
    client.flush().await?;
    Ok(vec![subscribe_us, deliver_us, bytes_per_sub])
}

/// `n` requests in flight at once on one connection, answered by a raw responder that holds
/// nothing per request ([`Responder`]): time per request (all started, until the last reply)
/// and the peak memory above the start, per request.
async fn requests(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    let responder = Responder::start(url, REQ_SUBJECT)?;
    let client = connect(url, n + 1024).await?;
    let payload = Bytes::from_static(b"0123456789abcdef");
    // The first request sets up the reply subscription; it is not measured.
    client.request(REQ_SUBJECT, payload.clone()).await?;
    settle().await;
    heap::reset_peak();
    let before = heap::in_use();
    let started = Instant::now();
    let mut pending: FuturesUnordered<_> = (0..n)
        .map(|_| client.request(REQ_SUBJECT, payload.clone()))
        .collect();
    let mut answered = 0;
    while let Some(reply) = pending.next().await {
        reply?;
        answered += 1;
    }
    let elapsed = started.elapsed();
    let peak = heap::peak().saturating_sub(before);
    drop(pending);
    responder.stop();
    if answered != n {
        return Err(format!("{answered} of {n} requests answered").into());
    }
    Ok(vec![per_item_us(elapsed, n), peak as f64 / n.max(1) as f64])
}

/// A server whose INFO announces `n` cluster members ([`FakeServer`]): connect time, then
/// the median time until a message published right after an INFO update announcing `n` new
/// members comes back (the server sends it behind the INFO, so the client handles the INFO
/// first). A message, not a flush: async-nats's `flush()` only writes out its buffer, with
/// no round trip to wait behind the INFO.
async fn servers(n: usize) -> Result<Vec<f64>, ScaleError> {
    let server = FakeServer::start(n)?;
    let started = Instant::now();
    let client = connect(&server.url(), 1024).await?;
    client.flush().await?;
    let connect_us = started.elapsed().as_secs_f64() * 1e6;
    let mut echo = client.subscribe("scale.echo").await?;
    client.flush().await?;
    let payload = Bytes::from_static(b"0123456789abcdef");
    let mut round_trips = Vec::with_capacity(INFO_UPDATES);
    for generation in 1..=INFO_UPDATES {
        server.announce(n, generation)?;
        let started = Instant::now();
        client.publish("scale.echo", payload.clone()).await?;
        match tokio::time::timeout(RECEIVE_TIMEOUT, echo.next()).await {
            Ok(Some(_)) => {}
            _ => return Err(format!("no message back after update {generation}").into()),
        }
        round_trips.push(started.elapsed().as_secs_f64() * 1e6);
    }
    round_trips.sort_by(f64::total_cmp);
    Ok(vec![connect_us, round_trips[round_trips.len() / 2]])
}

/// `n` connections in this process, each with a subscription, opened one after another:
/// time per connection (connect, subscribe, flush), memory and threads per connection.
async fn connections(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    settle().await;
    let threads_before = memory::self_status_kib("Threads").unwrap_or(0);
    let before = heap::in_use();
    let started = Instant::now();
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        let client = connect(url, 1024).await?;
        let subscriber = client.subscribe(format!("scale.conn.{i}")).await?;
        client.flush().await?;
        held.push((client, subscriber));
    }
    let connect_us = per_item_us(started.elapsed(), n);
    let kib_per_conn = per_item_bytes(before, n) / 1024.0;
    let threads = memory::self_status_kib("Threads").unwrap_or(0);
    let threads_per_conn = threads.saturating_sub(threads_before) as f64 / n.max(1) as f64;
    drop(held);
    Ok(vec![connect_us, kib_per_conn, threads_per_conn])
}

/// [`HEADER_MESSAGES`] messages with `n` headers each, published and received on one
/// connection: time per message, and per byte of header block.
async fn headers(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    let client = connect(url, HEADER_MESSAGES + 1024).await?;
    let mut subscriber = client.subscribe("scale.hdr").await?;
    client.flush().await?;
    let mut headers = HeaderMap::new();
    // "NATS/1.0\r\n", each "name: value\r\n", and the blank line.
    let mut header_bytes = 12;
    for i in 0..n {
        let (name, value) = (format!("X-Scale-{i}"), format!("value-{i}"));
        header_bytes += name.len() + value.len() + 4;
        headers.insert(name.as_str(), value.as_str());
    }
    let payload = Bytes::from_static(b"0123456789abcdef");
    let started = Instant::now();
    for _ in 0..HEADER_MESSAGES {
        client
            .publish_with_headers("scale.hdr", headers.clone(), payload.clone())
            .await?;
    }
    for received in 0..HEADER_MESSAGES {
        match tokio::time::timeout(RECEIVE_TIMEOUT, subscriber.next()).await {
            Ok(Some(message)) if n == 0 || message.headers.is_some() => {}
            Ok(Some(_)) => return Err("a message lost its headers".into()),
            _ => return Err(format!("{received} of {HEADER_MESSAGES} messages arrived").into()),
        }
    }
    let elapsed = started.elapsed();
    let per_msg_us = per_item_us(elapsed, HEADER_MESSAGES);
    let per_byte_ns = if n == 0 {
        f64::NAN
    } else {
        per_msg_us * 1e3 / header_bytes as f64
    };
    Ok(vec![per_msg_us, per_byte_ns])
}

/// A bucket of `n` keys (written unmeasured with core publishes, then one acked put that
/// orders after them; at least 95% must have been stored): `keys()` time per key held, and
/// the peak memory while listing, in KiB (a streamed listing holds no more for more keys).
async fn kv_keys(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    let client = connect(url, 1024).await?;
    let js = jetstream::new(client.clone());
    let _ = js.delete_key_value(KV_BUCKET).await;
    let store = js
        .create_key_value(jetstream::kv::Config {
            bucket: KV_BUCKET.to_string(),
            history: 1,
            storage: jetstream::stream::StorageType::Memory,
            ..Default::default()
        })
        .await?;
    let value = Bytes::from_static(b"0123456789abcdef");
    for i in 1..n {
        client
            .publish(format!("$KV.{KV_BUCKET}.k{i}"), value.clone())
            .await?;
    }
    // Acked once the stream stored it, so after every publish before it.
    store.put("k0", value).await?;
    // A fast core publisher can outrun the stream's intake, which then drops some: the
    // listing is checked against what the bucket holds, and timed per key it holds.
    let stream = js.get_stream(format!("KV_{KV_BUCKET}")).await?;
    let held = usize::try_from(stream.cached_info().state.messages)?;
    if held * 100 < n * 95 {
        return Err(format!("the bucket holds {held} of {n} keys written").into());
    }
    heap::reset_peak();
    let before = heap::in_use();
    let started = Instant::now();
    let mut keys = store.keys().await?;
    let mut listed = 0;
    while let Some(key) = keys.next().await {
        key?;
        listed += 1;
    }
    let elapsed = started.elapsed();
    let peak_kib = heap::peak().saturating_sub(before) as f64 / 1024.0;
    drop(keys);
    js.delete_key_value(KV_BUCKET).await?;
    if listed != held {
        return Err(format!("keys() listed {listed} of the {held} keys held").into());
    }
    Ok(vec![per_item_us(elapsed, held), peak_kib])
}

/// One object of `mib` MiB put into a bucket and read back: MB/s each way, and the peak
/// memory while doing so, in MiB. The object's bytes are made as they are put
/// ([`PatternReader`]) and counted, not kept, as they are read, so the probe itself holds
/// nothing that grows with the size. Objects of a GiB or more go to a file-backed bucket
/// (the server would hold them in memory otherwise).
async fn objects(url: &str, mib: usize) -> Result<Vec<f64>, ScaleError> {
    use tokio::io::AsyncReadExt;

    let size = mib * 1024 * 1024;
    let js = jetstream::new(connect(url, 1024).await?);
    let _ = js.delete_object_store(OBJ_BUCKET).await;
    let storage = if mib >= 1024 {
        jetstream::stream::StorageType::File
    } else {
        jetstream::stream::StorageType::Memory
    };
    let bucket = js
        .create_object_store(jetstream::object_store::Config {
            bucket: OBJ_BUCKET.to_string(),
            storage,
            ..Default::default()
        })
        .await?;
    let mut data = PatternReader::new(size);
    let step_limit = OBJECT_STEP_LIMIT * (mib / 64).max(1) as u32;
    heap::reset_peak();
    let before = heap::in_use();
    let started = Instant::now();
    let info = tokio::time::timeout(step_limit, bucket.put("scale.bin", &mut data))
        .await
        .map_err(|_| format!("put of {mib} MiB: no result within {step_limit:?}"))??;
    let put = started.elapsed();
    if info.size != size {
        return Err(format!("stored {} bytes of {size}", info.size).into());
    }
    let mut buf = vec![0u8; 256 * 1024];
    let started = Instant::now();
    let mut object = bucket.get("scale.bin").await?;
    let mut total = 0;
    loop {
        let read = tokio::time::timeout(OBJECT_STEP_LIMIT, object.read(&mut buf))
            .await
            .map_err(|_| {
                format!("get of {mib} MiB: stalled after {total} bytes for {OBJECT_STEP_LIMIT:?}")
            })??;
        if read == 0 {
            break;
        }
        total += read;
    }
    let get = started.elapsed();
    let peak_mib = heap::peak().saturating_sub(before) as f64 / (1024.0 * 1024.0);
    drop(object);
    js.delete_object_store(OBJ_BUCKET).await?;
    if total != size {
        return Err(format!("read {total} bytes of {size}").into());
    }
    let mb_per_s = |elapsed: Duration| size as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9);
    Ok(vec![mb_per_s(put), mb_per_s(get), peak_mib])
}

/// Lets connections dropped by the previous probe finish closing (their tasks free memory
/// as they end), so a memory figure measured next does not go down under it.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// Bytes in use now minus `before`, per item; negative when something else freed more.
fn per_item_bytes(before: usize, items: usize) -> f64 {
    (heap::in_use() as f64 - before as f64) / items.max(1) as f64
}

fn per_item_us(elapsed: Duration, items: usize) -> f64 {
    elapsed.as_secs_f64() * 1e6 / items.max(1) as f64
}
