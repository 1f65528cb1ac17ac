//! The Core scenarios run with the raw client: the same steps, subjects, payloads and
//! measuring points as `benches/compare/scenarios.rs` runs with the async clients, on
//! blocking sockets and threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::{Connection, Op, RawError};
use crate::stats::{Latency, Throughput};
use crate::workload::{
    LAT_SUBJECT, LATENCY_WARM_UP, PUB_SUBJECT, RECEIVE_TIMEOUT, REQ_SUBJECT, ROUND_TRIP_TIMEOUT,
    SMALL_PAYLOAD, SUB_SUBJECT, payload,
};

/// The sid of the only subscription each connection makes.
const SID: u64 = 1;

/// Publishes `count` messages of `size` bytes on one connection with no subscribers, then
/// flushes. Timed from the first publish until the flush returns.
pub fn publish(url: &str, size: usize, count: usize) -> Result<Throughput, RawError> {
    let mut connection = Connection::connect(url)?;
    connection.set_read_timeout(Some(ROUND_TRIP_TIMEOUT))?;
    let payload = payload(size);
    let start = Instant::now();
    for _ in 0..count {
        connection.publish(PUB_SUBJECT.as_bytes(), None, &payload)?;
    }
    connection.flush()?;
    Ok(Throughput::new(count, size, start.elapsed()))
}

/// A second connection publishes `count` messages of `size` bytes; the subscriber, on its own
/// thread, times from the first message it receives to the last. Fewer than `count` messages
/// within [`RECEIVE_TIMEOUT`] of silence makes the run invalid.
pub fn subscribe(url: &str, size: usize, count: usize) -> Result<Throughput, RawError> {
    let mut receiver = Connection::connect(url)?;
    receiver.subscribe(SUB_SUBJECT.as_bytes(), SID)?;
    receiver.flush()?;
    receiver.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
    let stop = receiver.shutdown_handle()?;
    let receiving = thread::spawn(move || {
        let mut received = 0usize;
        let mut first = None;
        while received < count {
            if let Err(cause) = receiver.next_msg() {
                return Err(RawError::Dropped {
                    received,
                    expected: count,
                    cause: Box::new(cause),
                });
            }
            if received == 0 {
                first = Some(Instant::now());
            }
            received += 1;
        }
        Ok((first, Instant::now()))
    });

    if let Err(e) = publish_to_subscriber(url, size, count) {
        // Do not leave a subscriber behind to take the next runs' messages.
        stop.stop();
        let _ = receiving.join();
        return Err(e);
    }

    let (first, last) = receiving.join().map_err(|_| RawError::ThreadPanicked)??;
    let first = first.ok_or(RawError::Unexpected("no message"))?;
    Ok(Throughput::new(count, size, last - first))
}

/// The publishing side of [`subscribe`].
fn publish_to_subscriber(url: &str, size: usize, count: usize) -> Result<(), RawError> {
    let mut publisher = Connection::connect(url)?;
    publisher.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
    let payload = payload(size);
    for _ in 0..count {
        publisher.publish(SUB_SUBJECT.as_bytes(), None, &payload)?;
    }
    publisher.flush().map(drop)
}

/// `count` sequential 32-byte requests to a responder on another connection (and thread)
/// that echoes each payload back to the reply subject. Returns the request rate and
/// per-request latency.
pub fn request(url: &str, count: usize) -> Result<(Throughput, Latency), RawError> {
    let mut responder = Connection::connect(url)?;
    responder.subscribe(REQ_SUBJECT.as_bytes(), SID)?;
    responder.flush()?;
    responder.set_read_timeout(None)?;
    let stop = responder.shutdown_handle()?;
    let responding = thread::spawn(move || respond(responder));

    let outcome = requests(url, count);
    // The responder ends when its socket is shut down under its blocked read.
    stop.stop();
    let _ = responding.join();
    outcome
}

/// Answers every request on `connection` with its own payload until the connection ends.
/// Replies go out when there is nothing more to read (the reader writes before it blocks),
/// so a burst of requests is answered in one write.
fn respond(mut connection: Connection) -> Result<(), RawError> {
    let (reader, writer) = connection.split();
    loop {
        let located = reader.next_frame(writer)?;
        if let Op::Msg(msg) = reader.op(&located)
            && let Some(reply) = msg.reply
        {
            writer.publish(reply, None, msg.payload)?;
        }
    }
}

/// The requesting side of [`request`].
fn requests(url: &str, count: usize) -> Result<(Throughput, Latency), RawError> {
    let mut requester = Connection::connect(url)?;
    let inbox = unique_inbox();
    requester.subscribe(inbox.as_bytes(), SID)?;
    requester.flush()?;
    requester.set_read_timeout(Some(ROUND_TRIP_TIMEOUT))?;
    let payload = payload(SMALL_PAYLOAD);
    // One unmeasured request, as the async clients make one.
    request_once(&mut requester, inbox.as_bytes(), &payload)?;
    let mut samples = Vec::with_capacity(count);
    let start = Instant::now();
    for _ in 0..count {
        let sent = Instant::now();
        request_once(&mut requester, inbox.as_bytes(), &payload)?;
        samples.push(sent.elapsed());
    }
    let elapsed = start.elapsed();
    let latency = Latency::from_durations(&samples).ok_or(RawError::Unexpected("no requests"))?;
    Ok((Throughput::new(count, SMALL_PAYLOAD, elapsed), latency))
}

/// One request: PUB with the inbox as reply subject, then read until the reply's MSG (the
/// read writes the PUB out before it blocks).
fn request_once(connection: &mut Connection, inbox: &[u8], payload: &[u8]) -> Result<(), RawError> {
    connection.publish(REQ_SUBJECT.as_bytes(), Some(inbox), payload)?;
    let reply = connection.next_msg()?;
    if reply.sid != SID || reply.payload.len() != payload.len() {
        return Err(RawError::Unexpected("a reply that is not the echo"));
    }
    Ok(())
}

/// publish -> flush (PING/PONG) -> receive on one connection subscribed to its own subject,
/// `iterations` times. With `idle_gap`, the thread sleeps that long before each iteration (not
/// timed).
pub fn latency(
    url: &str,
    iterations: usize,
    idle_gap: Option<Duration>,
) -> Result<Latency, RawError> {
    let mut connection = Connection::connect(url)?;
    connection.subscribe(LAT_SUBJECT.as_bytes(), SID)?;
    connection.flush()?;
    connection.set_read_timeout(Some(ROUND_TRIP_TIMEOUT))?;
    let payload = payload(SMALL_PAYLOAD);
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..LATENCY_WARM_UP + iterations {
        if let Some(gap) = idle_gap.filter(|_| i >= LATENCY_WARM_UP) {
            thread::sleep(gap);
        }
        let start = Instant::now();
        connection.publish(LAT_SUBJECT.as_bytes(), None, &payload)?;
        // The server sends our own message back before the PONG, so the flush usually
        // consumes it already; otherwise wait for it.
        if connection.flush()? == 0 {
            connection.next_msg()?;
        }
        if i >= LATENCY_WARM_UP {
            samples.push(start.elapsed());
        }
    }
    Latency::from_durations(&samples).ok_or(RawError::Unexpected("no iterations"))
}

/// A reply subject no other connection uses.
pub(super) fn unique_inbox() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "_INBOX.raw.{}.{nanos}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
