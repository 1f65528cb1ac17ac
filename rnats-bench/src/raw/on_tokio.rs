//! The raw client on tokio: the same wire handling as the blocking raw client (its
//! [`ReadBuffer`], parser and encoders) on a [`tokio::net::TcpStream`], driven by the task
//! that uses it, and the Core scenarios written with it as the async clients' scenarios are
//! written (a spawned subscriber or responder, the rest in the calling code).
//!
//! It is the `raw-tokio` client of the compare bench: what any client pays for running on
//! tokio, with nothing of a library in between (no engine task, no channels, no subscription
//! table). Run in the same shape as rnats (`block_on` or a spawned task), its figures are the
//! floor of that shape: a row where rnats is level with it costs tokio's wake-ups, not rnats'.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::connection::{
    CONNECT, HANDSHAKE_TIMEOUT, Located, READ_BUFFER, ReadBuffer, WRITE_BUFFER, address,
    check_info, encode_publish, encode_subscribe,
};
use super::{Msg, Op, RawError};
use crate::stats::{Latency, Throughput};
use crate::workload::{
    LAT_SUBJECT, LATENCY_WARM_UP, PUB_SUBJECT, RECEIVE_TIMEOUT, REQ_SUBJECT, ROUND_TRIP_TIMEOUT,
    SMALL_PAYLOAD, SUB_SUBJECT, payload,
};

/// The sid of the only subscription each connection makes.
const SID: u64 = 1;

/// One handshaken connection, read and written by the task that holds it.
#[derive(Debug)]
pub struct TokioConnection {
    stream: TcpStream,
    reader: ReadBuffer,
    /// Frames queued and not yet written.
    out: Vec<u8>,
}

impl TokioConnection {
    /// Connects to `url` and handshakes as [`super::Connection::connect`] does.
    pub async fn connect(url: &str) -> Result<TokioConnection, RawError> {
        within(HANDSHAKE_TIMEOUT, async {
            let stream = TcpStream::connect(address(url)?).await?;
            // Latency scenarios write one small frame at a time; Nagle would hold them back.
            stream.set_nodelay(true)?;
            let mut connection = TokioConnection {
                stream,
                reader: ReadBuffer::new(READ_BUFFER),
                out: Vec::with_capacity(WRITE_BUFFER + 1024),
            };
            let located = connection.next_frame().await?;
            match connection.reader.op(&located) {
                Op::Info(json) => check_info(json)?,
                _ => return Err(RawError::Unexpected("a frame before INFO")),
            }
            connection.out.extend_from_slice(CONNECT);
            connection.flush().await?;
            Ok(connection)
        })
        .await
    }

    /// Queues a publish; it is written once [`WRITE_BUFFER`] bytes are queued, on
    /// [`TokioConnection::flush`], or before the next read.
    pub async fn publish(
        &mut self,
        subject: &[u8],
        reply: Option<&[u8]>,
        payload: &[u8],
    ) -> Result<(), RawError> {
        encode_publish(&mut self.out, subject, reply, payload);
        if self.out.len() >= WRITE_BUFFER {
            self.write_out().await?;
        }
        Ok(())
    }

    /// Queues a subscription.
    pub fn subscribe(&mut self, subject: &[u8], sid: u64) {
        encode_subscribe(&mut self.out, subject, sid);
    }

    /// Writes what is queued plus a PING and reads until the PONG. Returns how many messages
    /// arrived before the PONG; they are consumed.
    pub async fn flush(&mut self) -> Result<usize, RawError> {
        self.out.extend_from_slice(b"PING\r\n");
        let mut messages = 0;
        loop {
            let located = self.next_frame().await?;
            match self.reader.op(&located) {
                Op::Pong => return Ok(messages),
                Op::Msg(_) => messages += 1,
                Op::Err(text) => return Err(RawError::server(text)),
                Op::Ok | Op::Info(_) | Op::Ping => {}
            }
        }
    }

    /// The next message, writing what is queued first if it has to wait.
    pub async fn next_msg(&mut self) -> Result<Msg<'_>, RawError> {
        let located = loop {
            let located = self.next_frame().await?;
            match self.reader.op(&located) {
                Op::Msg(_) => break located,
                Op::Err(text) => return Err(RawError::server(text)),
                Op::Ok | Op::Info(_) | Op::Ping | Op::Pong => {}
            }
        };
        match self.reader.op(&located) {
            Op::Msg(msg) => Ok(msg),
            _ => Err(RawError::Unexpected("a frame that is not a message")),
        }
    }

    /// The next frame other than `PING`, which is answered. What is queued is written
    /// before the task waits for the socket.
    async fn next_frame(&mut self) -> Result<Located, RawError> {
        loop {
            match self.reader.next_buffered()? {
                Some(located) if located.is_ping() => self.out.extend_from_slice(b"PONG\r\n"),
                Some(located) => return Ok(located),
                None => {
                    self.write_out().await?;
                    match self.stream.read(self.reader.room()).await? {
                        0 => return Err(RawError::Closed),
                        n => self.reader.filled(n),
                    }
                }
            }
        }
    }

    /// Writes everything queued.
    async fn write_out(&mut self) -> Result<(), RawError> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out).await?;
            self.out.clear();
        }
        Ok(())
    }
}

/// `work`, failed with [`RawError::Timeout`] when it takes longer than `limit`.
async fn within<T>(
    limit: Duration,
    work: impl Future<Output = Result<T, RawError>>,
) -> Result<T, RawError> {
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or(Err(RawError::Timeout))
}

/// Publishes `count` messages of `size` bytes on one connection with no subscribers, then
/// flushes. Timed from the first publish until the flush returns.
pub async fn publish(url: &str, size: usize, count: usize) -> Result<Throughput, RawError> {
    let mut connection = TokioConnection::connect(url).await?;
    let payload = payload(size);
    let start = Instant::now();
    for _ in 0..count {
        connection
            .publish(PUB_SUBJECT.as_bytes(), None, &payload)
            .await?;
    }
    within(ROUND_TRIP_TIMEOUT, connection.flush()).await?;
    Ok(Throughput::new(count, size, start.elapsed()))
}

/// A second connection publishes `count` messages of `size` bytes; the subscriber, a spawned
/// task, times from the first message it receives to the last. Fewer than `count` messages
/// within [`RECEIVE_TIMEOUT`] makes the run invalid.
pub async fn subscribe(url: &str, size: usize, count: usize) -> Result<Throughput, RawError> {
    let mut receiver = TokioConnection::connect(url).await?;
    receiver.subscribe(SUB_SUBJECT.as_bytes(), SID);
    receiver.flush().await?;
    let receiving = tokio::spawn(async move {
        let mut received = 0usize;
        let mut first = None;
        let finished = within(RECEIVE_TIMEOUT, async {
            while received < count {
                receiver.next_msg().await?;
                if received == 0 {
                    first = Some(Instant::now());
                }
                received += 1;
            }
            Ok(())
        })
        .await;
        match finished {
            Ok(()) => Ok((first, Instant::now())),
            Err(cause) => Err(RawError::Dropped {
                received,
                expected: count,
                cause: Box::new(cause),
            }),
        }
    });

    let published = async {
        let mut publisher = TokioConnection::connect(url).await?;
        let payload = payload(size);
        for _ in 0..count {
            publisher
                .publish(SUB_SUBJECT.as_bytes(), None, &payload)
                .await?;
        }
        within(RECEIVE_TIMEOUT, publisher.flush()).await
    };
    if let Err(e) = published.await {
        // Do not leave a subscriber behind to take the next runs' messages.
        receiving.abort();
        return Err(e);
    }
    let (first, last) = receiving.await.map_err(|_| RawError::ThreadPanicked)??;
    let first = first.ok_or(RawError::Unexpected("no message"))?;
    Ok(Throughput::new(count, size, last - first))
}

/// `count` sequential 32-byte requests to a responder, a spawned task on another connection
/// that echoes each payload back to the reply subject. Returns the request rate and
/// per-request latency.
pub async fn request(url: &str, count: usize) -> Result<(Throughput, Latency), RawError> {
    let mut responder = TokioConnection::connect(url).await?;
    responder.subscribe(REQ_SUBJECT.as_bytes(), SID);
    responder.flush().await?;
    let responding = tokio::spawn(respond(responder));
    let outcome = requests(url, count).await;
    responding.abort();
    outcome
}

/// Answers every request on `connection` with its own payload until the task is aborted.
/// Replies go out when nothing more is buffered (the read writes before it waits), so a burst
/// of requests is answered in one write.
async fn respond(mut connection: TokioConnection) -> Result<(), RawError> {
    loop {
        let located = connection.next_frame().await?;
        if let Op::Msg(msg) = connection.reader.op(&located)
            && let Some(reply) = msg.reply
        {
            encode_publish(&mut connection.out, reply, None, msg.payload);
        }
    }
}

/// The requesting side of [`request`].
async fn requests(url: &str, count: usize) -> Result<(Throughput, Latency), RawError> {
    let mut requester = TokioConnection::connect(url).await?;
    let inbox = super::scenarios::unique_inbox();
    requester.subscribe(inbox.as_bytes(), SID);
    requester.flush().await?;
    let payload = payload(SMALL_PAYLOAD);
    // One unmeasured request, as the other clients make one.
    request_once(&mut requester, inbox.as_bytes(), &payload).await?;
    let mut samples = Vec::with_capacity(count);
    let start = Instant::now();
    for _ in 0..count {
        let sent = Instant::now();
        request_once(&mut requester, inbox.as_bytes(), &payload).await?;
        samples.push(sent.elapsed());
    }
    let elapsed = start.elapsed();
    let latency = Latency::from_durations(&samples).ok_or(RawError::Unexpected("no requests"))?;
    Ok((Throughput::new(count, SMALL_PAYLOAD, elapsed), latency))
}

/// One request: PUB with the inbox as reply subject, then read until the reply's MSG, within
/// [`ROUND_TRIP_TIMEOUT`] as a library's request would be.
async fn request_once(
    connection: &mut TokioConnection,
    inbox: &[u8],
    payload: &[u8],
) -> Result<(), RawError> {
    within(ROUND_TRIP_TIMEOUT, async {
        connection
            .publish(REQ_SUBJECT.as_bytes(), Some(inbox), payload)
            .await?;
        let reply = connection.next_msg().await?;
        if reply.sid != SID || reply.payload.len() != payload.len() {
            return Err(RawError::Unexpected("a reply that is not the echo"));
        }
        Ok(())
    })
    .await
}

/// publish -> flush (PING/PONG) -> receive on one connection subscribed to its own subject,
/// `iterations` times. With `idle_gap`, the task sleeps that long before each iteration (not
/// timed).
pub async fn latency(
    url: &str,
    iterations: usize,
    idle_gap: Option<Duration>,
) -> Result<Latency, RawError> {
    let mut connection = TokioConnection::connect(url).await?;
    connection.subscribe(LAT_SUBJECT.as_bytes(), SID);
    connection.flush().await?;
    let payload = payload(SMALL_PAYLOAD);
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..LATENCY_WARM_UP + iterations {
        if let Some(gap) = idle_gap.filter(|_| i >= LATENCY_WARM_UP) {
            tokio::time::sleep(gap).await;
        }
        let start = Instant::now();
        within(ROUND_TRIP_TIMEOUT, async {
            connection
                .publish(LAT_SUBJECT.as_bytes(), None, &payload)
                .await?;
            // The server sends our own message back before the PONG, so the flush usually
            // consumes it already; otherwise wait for it.
            if connection.flush().await? == 0 {
                connection.next_msg().await?;
            }
            Ok(())
        })
        .await?;
        if i >= LATENCY_WARM_UP {
            samples.push(start.elapsed());
        }
    }
    Latency::from_durations(&samples).ok_or(RawError::Unexpected("no iterations"))
}
