//! The Core scenarios run with rnats's blocking client ([`rnats::blocking`]): the same steps,
//! subjects, payloads and measuring points as the async clients' `benches/compare/scenarios.rs`
//! and the raw client's [`crate::raw::scenarios`], on the calling thread and threads of its
//! own.

use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats::blocking::{Client, Subscriber};

use crate::stats::{Latency, Throughput};
use crate::workload::{
    LAT_SUBJECT, LATENCY_WARM_UP, PUB_SUBJECT, RECEIVE_TIMEOUT, REQ_SUBJECT, ROUND_TRIP_TIMEOUT,
    SMALL_PAYLOAD, SUB_SUBJECT, payload, room_for_run,
};

/// Any failure of a blocking scenario; its message ends up in the report.
pub type BlockingError = Box<dyn std::error::Error + Send + Sync>;

/// Connects with default options, or with subscriptions that hold `(messages, bytes)`.
fn connect(url: &str, capacity: Option<(usize, usize)>) -> Result<Client, BlockingError> {
    let mut options = rnats::ConnectOptions::new();
    if let Some((messages, bytes)) = capacity {
        options = options
            .subscription_capacity(messages)
            .subscription_capacity_bytes(bytes);
    }
    Ok(options.connect_blocking(url)?)
}

/// Publishes `count` messages of `size` bytes on one connection with no subscribers, then
/// flushes. Timed from the first publish until the flush returns.
pub fn publish(url: &str, size: usize, count: usize) -> Result<Throughput, BlockingError> {
    let client = connect(url, None)?;
    let payload = Bytes::from(payload(size));
    let start = Instant::now();
    for _ in 0..count {
        client.publish(PUB_SUBJECT, payload.clone())?;
    }
    client.flush()?;
    let elapsed = start.elapsed();
    client.close();
    Ok(Throughput::new(count, size, elapsed))
}

/// A second connection publishes `count` messages of `size` bytes; the subscriber, on its own
/// thread, times from the first message it receives to the last. Fewer than `count` messages
/// within [`RECEIVE_TIMEOUT`] makes the run invalid.
pub fn subscribe(url: &str, size: usize, count: usize) -> Result<Throughput, BlockingError> {
    let receiver = connect(url, Some(room_for_run(count, size)))?;
    let subscriber = receiver.subscribe(SUB_SUBJECT)?;
    receiver.flush()?;
    let receiving = thread::spawn(move || receive(subscriber, count));

    let published = publish_to_subscriber(url, size, count);
    if published.is_err() {
        // Ends the subscription, so the receiving thread returns.
        receiver.close();
    }
    let received = receiving.join().map_err(|_| "the subscriber panicked")?;
    receiver.close();
    published?;
    let (first, last) = received?;
    Ok(Throughput::new(count, size, last - first))
}

/// The receiving side of [`subscribe`]: the times of the first and the last message.
fn receive(mut subscriber: Subscriber, count: usize) -> Result<(Instant, Instant), BlockingError> {
    let mut first = None;
    for received in 0..count {
        let why = match subscriber.next_timeout(RECEIVE_TIMEOUT) {
            Ok(Some(_)) => {
                first.get_or_insert_with(Instant::now);
                continue;
            }
            Ok(None) => "the subscription ended",
            Err(_) => "timed out",
        };
        return Err(format!(
            "DROPPED MESSAGES: received {received} of {count} ({why}, limit {RECEIVE_TIMEOUT:?})"
        )
        .into());
    }
    let last = Instant::now();
    Ok((first.ok_or("no message received")?, last))
}

/// The publishing side of [`subscribe`].
fn publish_to_subscriber(url: &str, size: usize, count: usize) -> Result<(), BlockingError> {
    let publisher = connect(url, None)?;
    let payload = Bytes::from(payload(size));
    for _ in 0..count {
        publisher.publish(SUB_SUBJECT, payload.clone())?;
    }
    publisher.flush()?;
    publisher.close();
    Ok(())
}

/// `count` sequential 32-byte requests to a responder on another connection (and thread)
/// that echoes each payload back to the reply subject. Returns the request rate and
/// per-request latency.
pub fn request(url: &str, count: usize) -> Result<(Throughput, Latency), BlockingError> {
    let responder = connect(url, None)?;
    let requests = responder.subscribe(REQ_SUBJECT)?;
    responder.flush()?;
    let replier = responder.clone();
    let responding = thread::spawn(move || {
        for message in requests {
            if let Some(reply) = message.reply
                && replier.publish(reply, message.payload).is_err()
            {
                break;
            }
        }
    });

    let outcome = requests_to(url, count);
    // Closing ends the subscription, and with it the responder's loop.
    responder.close();
    let _ = responding.join();
    outcome
}

/// The requesting side of [`request`].
fn requests_to(url: &str, count: usize) -> Result<(Throughput, Latency), BlockingError> {
    let requester = connect(url, None)?;
    let payload = Bytes::from(payload(SMALL_PAYLOAD));
    // One unmeasured request, as the other clients make one.
    requester.request(REQ_SUBJECT, payload.clone())?;
    let mut samples = Vec::with_capacity(count);
    let start = Instant::now();
    for _ in 0..count {
        let sent = Instant::now();
        requester.request(REQ_SUBJECT, payload.clone())?;
        samples.push(sent.elapsed());
    }
    let elapsed = start.elapsed();
    requester.close();
    let latency = Latency::from_durations(&samples).ok_or("no requests made")?;
    Ok((Throughput::new(count, SMALL_PAYLOAD, elapsed), latency))
}

/// publish -> flush -> receive on one connection subscribed to its own subject, `iterations`
/// times. With `idle_gap`, the thread sleeps that long before each iteration (not timed).
pub fn latency(
    url: &str,
    iterations: usize,
    idle_gap: Option<Duration>,
) -> Result<Latency, BlockingError> {
    let client = connect(url, None)?;
    let mut subscriber = client.subscribe(LAT_SUBJECT)?;
    client.flush()?;
    let payload = Bytes::from(payload(SMALL_PAYLOAD));
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..LATENCY_WARM_UP + iterations {
        if let Some(gap) = idle_gap.filter(|_| i >= LATENCY_WARM_UP) {
            thread::sleep(gap);
        }
        let start = Instant::now();
        client.publish(LAT_SUBJECT, payload.clone())?;
        client.flush()?;
        match subscriber.next_timeout(ROUND_TRIP_TIMEOUT) {
            Ok(Some(_)) => {}
            Ok(None) => return Err("subscription ended during the latency run".into()),
            Err(_) => return Err(format!("no message within {ROUND_TRIP_TIMEOUT:?}").into()),
        }
        if i >= LATENCY_WARM_UP {
            samples.push(start.elapsed());
        }
    }
    client.close();
    Latency::from_durations(&samples).ok_or_else(|| "no iterations".into())
}
