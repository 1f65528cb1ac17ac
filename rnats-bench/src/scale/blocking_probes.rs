//! The scale probes run with rnats' blocking client, on the axes where it applies
//! ([`Axis::blocking_applies`]): the same steps as `probes.rs`, written with blocking calls.
//! The caller runs them on a thread of their own, off any async runtime.
//!
//! Requests in flight are many requests sent before the first reply is read: a blocking
//! `request` waits for its reply, so here each request is a publish with its own reply
//! subject under one inbox subscription, and the replies are read as they come, which is
//! how a blocking program keeps many requests in flight on one connection.

use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats::HeaderMap;
use rnats::blocking::Client;

use super::responder::Responder;
use super::{Axis, ScaleError, heap};
use crate::memory;

/// Messages delivered at every point of the subscriptions axis (as in `probes.rs`).
const DELIVERIES: usize = 20_000;
/// Messages sent at every point of the headers axis (as in `probes.rs`).
const HEADER_MESSAGES: usize = 5_000;
/// How long a probe waits for one message before it fails.
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(30);
const REQ_SUBJECT: &str = "scale.req";

/// Runs `axis` at point `n`; the figures are in the order of [`Axis::metrics`]. Fails for an
/// axis the blocking client does not run.
pub fn measure(axis: Axis, url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    match axis {
        Axis::Subs => subscriptions(url, n),
        Axis::Requests => requests(url, n),
        Axis::Connections => connections(url, n),
        Axis::Headers => headers(url, n),
        other => Err(format!("the blocking client does not run the {other} axis").into()),
    }
}

/// Connects with subscriptions that hold `messages` messages (see `rnats_side::connect`).
fn connect(url: &str, messages: usize) -> Result<Client, ScaleError> {
    Ok(rnats::ConnectOptions::new()
        .subscription_capacity(messages)
        .subscription_capacity_bytes(messages.saturating_mul(64 * 1024))
        .connect_blocking(url)?)
}

fn receive(
    subscriber: &mut rnats::blocking::Subscriber,
    received: usize,
    of: usize,
) -> Result<rnats::Message, ScaleError> {
    match subscriber.next_timeout(RECEIVE_TIMEOUT) {
        Ok(Some(message)) => Ok(message),
        _ => Err(format!("{received} of {of} messages arrived").into()),
    }
}

/// See `probes::subscriptions`.
fn subscriptions(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    let client = connect(url, DELIVERIES + 1024)?;
    client.flush()?;
    settle();
    let before = heap::in_use();
    let started = Instant::now();
    let mut subscribers = Vec::with_capacity(n);
    for i in 0..n {
        subscribers.push(client.subscribe(format!("scale.sub.{i}"))?);
    }
    client.flush()?;
    let subscribe_us = per_item_us(started.elapsed(), n);
    let bytes_per_sub = per_item_bytes(before, n);

    let subject = format!("scale.sub.{}", n.saturating_sub(1));
    let target = subscribers.last_mut().ok_or("no subscription")?;
    let payload = Bytes::from_static(b"0123456789abcdef");
    let started = Instant::now();
    for _ in 0..DELIVERIES {
        client.publish(subject.as_str(), payload.clone())?;
    }
    for received in 0..DELIVERIES {
        receive(target, received, DELIVERIES)?;
    }
    let deliver_us = per_item_us(started.elapsed(), DELIVERIES);
    drop(subscribers);
    client.flush()?;
    Ok(vec![subscribe_us, deliver_us, bytes_per_sub])
}

/// See `probes::requests`; the requests are publishes with a reply subject each, under one
/// inbox subscription (module docs).
fn requests(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    let responder = Responder::start(url, REQ_SUBJECT)?;
    let client = connect(url, n + 1024)?;
    let payload = Bytes::from_static(b"0123456789abcdef");
    let inbox = client.new_inbox();
    let mut replies = client.subscribe(format!("{inbox}.*"))?;
    // A first round trip makes sure the responder and the inbox are in place; unmeasured.
    client.publish_with_reply(REQ_SUBJECT, format!("{inbox}.warm"), payload.clone())?;
    receive(&mut replies, 0, 1)?;
    settle();
    heap::reset_peak();
    let before = heap::in_use();
    let started = Instant::now();
    for i in 0..n {
        client.publish_with_reply(REQ_SUBJECT, format!("{inbox}.{i}"), payload.clone())?;
    }
    client.flush()?;
    for answered in 0..n {
        receive(&mut replies, answered, n)?;
    }
    let elapsed = started.elapsed();
    let peak = heap::peak().saturating_sub(before);
    drop(replies);
    responder.stop();
    Ok(vec![per_item_us(elapsed, n), peak as f64 / n.max(1) as f64])
}

/// See `probes::connections`.
fn connections(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    settle();
    let threads_before = memory::self_status_kib("Threads").unwrap_or(0);
    let before = heap::in_use();
    let started = Instant::now();
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        let client = connect(url, 1024)?;
        let subscriber = client.subscribe(format!("scale.conn.{i}"))?;
        client.flush()?;
        held.push((client, subscriber));
    }
    let connect_us = per_item_us(started.elapsed(), n);
    let kib_per_conn = per_item_bytes(before, n) / 1024.0;
    let threads = memory::self_status_kib("Threads").unwrap_or(0);
    let threads_per_conn = threads.saturating_sub(threads_before) as f64 / n.max(1) as f64;
    drop(held);
    Ok(vec![connect_us, kib_per_conn, threads_per_conn])
}

/// See `probes::headers`.
fn headers(url: &str, n: usize) -> Result<Vec<f64>, ScaleError> {
    let client = connect(url, HEADER_MESSAGES + 1024)?;
    let mut subscriber = client.subscribe("scale.hdr")?;
    client.flush()?;
    let mut headers = HeaderMap::new();
    let mut header_bytes = 12;
    for i in 0..n {
        let (name, value) = (format!("X-Scale-{i}"), format!("value-{i}"));
        header_bytes += name.len() + value.len() + 4;
        headers.insert(name.as_str(), value.as_str());
    }
    let payload = Bytes::from_static(b"0123456789abcdef");
    let started = Instant::now();
    for _ in 0..HEADER_MESSAGES {
        client.publish_with_headers("scale.hdr", headers.clone(), payload.clone())?;
    }
    for received in 0..HEADER_MESSAGES {
        let message = receive(&mut subscriber, received, HEADER_MESSAGES)?;
        if n > 0 && message.headers.is_none() {
            return Err("a message lost its headers".into());
        }
    }
    let per_msg_us = per_item_us(started.elapsed(), HEADER_MESSAGES);
    let per_byte_ns = if n == 0 {
        f64::NAN
    } else {
        per_msg_us * 1e3 / header_bytes as f64
    };
    Ok(vec![per_msg_us, per_byte_ns])
}

/// See `probes::settle`: connections dropped by the previous probe finish closing.
fn settle() {
    std::thread::sleep(Duration::from_millis(300));
}

fn per_item_bytes(before: usize, items: usize) -> f64 {
    (heap::in_use() as f64 - before as f64) / items.max(1) as f64
}

fn per_item_us(elapsed: Duration, items: usize) -> f64 {
    elapsed.as_secs_f64() * 1e6 / items.max(1) as f64
}
