//! NATS over WebSocket (`ws://`, `wss://`): the HTTP upgrade, then a byte stream carried in
//! binary messages.
//!
//! nats-server's websocket listener treats the payloads of the messages it receives as one
//! continuous protocol stream, and frames what it sends without regard for NATS ops: a frame
//! may hold half a `MSG` or a dozen of them. So the payloads are fed to the same parser as
//! TCP bytes, and whatever the engine writes in one go leaves as one binary message (a whole
//! batch of ops, up to [`MAX_MESSAGE`]). For `wss://` the TLS handshake happens first, on
//! the TCP connection, with the same rustls configuration as `tls://`.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use futures_util::Sink;
use http::{HeaderMap, HeaderName, HeaderValue, header};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_websockets::{ClientBuilder, Config, Message, WebSocketStream};

use crate::error::{ConnectCause, ConnectError};
use crate::server_addr::ServerAddr;

/// The most bytes one write puts into one WebSocket message. Batches larger than this go
/// out as several messages; each costs one copy (the client must mask what it sends).
const MAX_MESSAGE: usize = 256 * 1024;

/// A WebSocket connection, read and written as a byte stream, over the stream `S` under it
/// (the connection's TCP or TLS stream; memory in the fuzz targets).
pub(crate) struct WebSocket<S> {
    stream: WebSocketStream<S>,
    /// What is left of the last message received, when it did not fit the reader's buffer.
    pending: Bytes,
    /// Pings received since the queue of frames to send was last seen empty (by a flush,
    /// ours or the engine's): their pongs may still wait.
    pongs_waiting: u32,
}

/// The most pings a server may send while the pongs tokio-websockets queues for them
/// (one each, unconditionally) cannot leave: a server that pings and reads nothing would
/// otherwise grow that queue for ever. About 130 KiB of pongs at most; a server that
/// reads takes them long before (a ping every few seconds is what proxies send).
const MAX_PONGS_WAITING: u32 = 1024;

/// Sends the HTTP upgrade request for `addr` over `stream` (TCP, or TLS for `wss://`), with
/// the application's `headers` beside the protocol's own, and waits for the server to switch
/// protocols.
pub(crate) async fn upgrade<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    addr: &ServerAddr,
    headers: &HeaderMap,
) -> Result<WebSocket<S>, ConnectError> {
    let uri = upgrade_uri(addr);
    let mut builder = ClientBuilder::new()
        .uri(&uri)
        .map_err(|e| websocket_error(format!("{addr} is not a valid WebSocket URI: {e}")))?
        // Whatever is queued past one message is written out before the next is taken, so
        // at most about two messages' worth of bytes wait in the WebSocket layer.
        .config(Config::default().flush_threshold(MAX_MESSAGE));
    for (name, value) in one_line_per_name(headers) {
        builder = builder.add_header(name.clone(), value).map_err(|_| {
            websocket_error(format!(
                "the WebSocket upgrade request cannot carry a `{name}` header of the \
                 application's: the handshake sets it"
            ))
        })?;
    }
    // tokio-websockets 0.13.3 decodes the server's `Sec-WebSocket-Accept` into a 20-byte
    // array with base64's unchecked decoder, which panics on a longer value: a server, or
    // anyone between, could end the connecting task. The panic is caught here and made the
    // failed upgrade it is (the upgrade's own state is dropped with it).
    let upgrade = std::panic::AssertUnwindSafe(builder.connect_on(stream));
    let (stream, _response) = futures_util::FutureExt::catch_unwind(upgrade)
        .await
        .map_err(|_| {
            websocket_error(format!(
                "the WebSocket upgrade with {addr} failed: its Sec-WebSocket-Accept header \
                 does not decode to a SHA-1 digest"
            ))
        })?
        .map_err(|e| websocket_error(format!("the WebSocket upgrade with {addr} failed: {e}")))?;
    Ok(WebSocket {
        stream,
        pending: Bytes::new(),
        pongs_waiting: 0,
    })
}

impl<S: AsyncRead + AsyncWrite + Unpin> WebSocket<S> {
    /// The stream the WebSocket runs over.
    pub(crate) fn inner(&self) -> &S {
        self.stream.get_ref()
    }
}

/// The URL of the upgrade request: the server address without credentials, which NATS
/// sends in CONNECT, never in the HTTP request.
fn upgrade_uri(addr: &ServerAddr) -> String {
    let mut url = addr.clone().into_inner();
    // Both only fail for URLs that cannot carry credentials, which then have none.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.into()
}

/// Each header name once, as the upgrade request sends it (the builder keeps one value per
/// name): several values joined with `, `, as HTTP allows for a repeated field (RFC 9110
/// 5.3), except `Cookie`, whose pairs a client joins with `; ` (RFC 6265 5.4).
fn one_line_per_name(headers: &HeaderMap) -> impl Iterator<Item = (&HeaderName, HeaderValue)> {
    headers.keys().map(move |name| {
        let mut values = headers.get_all(name).iter();
        let first = values
            .next()
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static(""));
        let separator: &[u8] = if name == header::COOKIE { b"; " } else { b", " };
        let joined = values.fold(None::<Vec<u8>>, |joined, value| {
            let mut line = joined.unwrap_or_else(|| first.as_bytes().to_vec());
            line.extend_from_slice(separator);
            line.extend_from_slice(value.as_bytes());
            Some(line)
        });
        // Joined valid values with a visible separator are a valid value again.
        let value = joined
            .and_then(|line| HeaderValue::from_bytes(&line).ok())
            .unwrap_or(first);
        (name, value)
    })
}

fn websocket_error(reason: String) -> ConnectError {
    ConnectCause::WebSocket(reason).into()
}

/// I/O errors stay what they are; protocol errors become `io::Error`s that carry them.
fn io_error(error: tokio_websockets::Error) -> io::Error {
    match error {
        tokio_websockets::Error::Io(e) => e,
        other => io::Error::other(other),
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + fmt::Debug> fmt::Debug for WebSocket<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocket")
            .field("inner", self.inner())
            .field("pending", &self.pending.len())
            .finish()
    }
}

/// Message payloads, in order, as one byte stream. End of file is the server closing the
/// WebSocket (after the close handshake) or the connection under it.
impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for WebSocket<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if !this.pending.is_empty() {
                let n = this.pending.len().min(buf.remaining());
                buf.put_slice(&this.pending.split_to(n));
                return Poll::Ready(Ok(()));
            }
            match ready!(Pin::new(&mut this.stream).poll_next(cx)) {
                None => return Poll::Ready(Ok(())),
                Some(Err(e)) => return Poll::Ready(Err(io_error(e))),
                // nats-server sends binary messages; text would carry the same bytes.
                Some(Ok(message)) if message.is_binary() || message.is_text() => {
                    this.pending = message.into_payload().into();
                }
                // tokio-websockets has queued its pong: see that it can leave. (The task
                // reading is the one writing, so the waker this leaves is the writer's.)
                Some(Ok(message)) if message.is_ping() => {
                    match Pin::new(&mut this.stream).poll_flush(cx) {
                        Poll::Ready(Ok(())) => this.pongs_waiting = 0,
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(io_error(e))),
                        Poll::Pending => this.pongs_waiting += 1,
                    }
                    if this.pongs_waiting > MAX_PONGS_WAITING {
                        return Poll::Ready(Err(io::Error::other(format!(
                            "the server sent {MAX_PONGS_WAITING} WebSocket pings while \
                             taking none of their pongs"
                        ))));
                    }
                }
                // Pongs and the close frame carry no NATS bytes (after a close the stream
                // ends).
                Some(Ok(_)) => {}
            }
        }
    }
}

/// Each write becomes one binary message (the slices of a vectored write joined, up to
/// [`MAX_MESSAGE`]); `poll_flush` puts the queued messages on the wire.
impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for WebSocket<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let len = bufs.iter().map(|b| b.len()).sum::<usize>().min(MAX_MESSAGE);
        if len == 0 {
            return Poll::Ready(Ok(0));
        }
        ready!(Pin::new(&mut this.stream).poll_ready(cx)).map_err(io_error)?;
        let mut payload = BytesMut::with_capacity(len);
        for buf in bufs {
            let take = buf.len().min(len - payload.len());
            payload.extend_from_slice(&buf[..take]);
            if payload.len() == len {
                break;
            }
        }
        Pin::new(&mut this.stream)
            .start_send(Message::binary(payload))
            .map_err(io_error)?;
        Poll::Ready(Ok(len))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = ready!(Pin::new(&mut this.stream).poll_flush(cx)).map_err(io_error);
        if flushed.is_ok() {
            // Every pong queued so far has left with the rest.
            this.pongs_waiting = 0;
        }
        Poll::Ready(flushed)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream)
            .poll_close(cx)
            .map_err(io_error)
    }
}

/// Reads `server_bytes`, the frames a WebSocket server sends after the upgrade, through the
/// client's reader in `read_size`-byte reads (at least 1), and returns the NATS bytes it
/// yields and the error that ended the stream, if any. For the fuzz targets: the stream under
/// it is in memory, so every poll is ready and no runtime is needed.
pub(crate) fn read_frames(server_bytes: &[u8], read_size: usize) -> (Vec<u8>, Option<String>) {
    let under = tokio::io::join(server_bytes, tokio::io::sink());
    let mut ws = WebSocket {
        stream: ClientBuilder::new().take_over(under),
        pending: Bytes::new(),
        pongs_waiting: 0,
    };
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut scratch = vec![0; read_size.max(1)];
    let mut out = Vec::new();
    loop {
        let mut buf = ReadBuf::new(&mut scratch);
        match Pin::new(&mut ws).poll_read(&mut cx, &mut buf) {
            Poll::Ready(Ok(())) if buf.filled().is_empty() => return (out, None),
            Poll::Ready(Ok(())) => out.extend_from_slice(buf.filled()),
            Poll::Ready(Err(e)) => return (out, Some(e.to_string())),
            // Memory never makes a reader wait; say so rather than spin.
            Poll::Pending => return (out, Some("pending".to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages_read_as_one_byte_stream_whatever_the_read_size() {
        let mut frames = vec![0x82, 6];
        frames.extend_from_slice(b"INFO {");
        frames.extend_from_slice(&[0x89, 0]); // a ping: answered, carries no NATS bytes
        frames.extend_from_slice(&[0x81, 3]);
        frames.extend_from_slice(b"}\r\n");
        frames.extend_from_slice(&[0x88, 2, 0x03, 0xe8]); // close, 1000
        for read_size in [1, 2, 5, 4096] {
            assert_eq!(
                read_frames(&frames, read_size),
                (b"INFO {}\r\n".to_vec(), None),
                "{read_size}"
            );
        }
        // A masked frame from the server breaks the protocol (RFC 6455 5.1): an error, not
        // bytes.
        let (bytes, error) = read_frames(&[0x82, 0x81, 1, 2, 3, 4, b'x' ^ 1], 64);
        assert!(bytes.is_empty() && error.is_some(), "{error:?}");
    }

    /// Reads `pings` empty ping frames, then `INFO {}`, over a connection whose far end
    /// takes what the client sends, or (`takes_nothing`) nothing.
    fn read_pings(pings: usize, takes_nothing: bool) -> io::Result<Vec<u8>> {
        let mut frames = [0x89, 0].repeat(pings);
        frames.extend_from_slice(&[0x82, 9]);
        frames.extend_from_slice(b"INFO {}\r\n");
        match takes_nothing {
            true => read_once(tokio::io::join(&frames[..], Gate::default())),
            false => read_once(tokio::io::join(&frames[..], tokio::io::sink())),
        }
    }

    /// One read of a WebSocket client over `under` (in memory: it never waits to read).
    fn read_once<S: AsyncRead + AsyncWrite + Unpin>(under: S) -> io::Result<Vec<u8>> {
        let mut ws = WebSocket {
            stream: ClientBuilder::new().take_over(under),
            pending: Bytes::new(),
            pongs_waiting: 0,
        };
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut scratch = [0; 64];
        let mut buf = ReadBuf::new(&mut scratch);
        match Pin::new(&mut ws).poll_read(&mut cx, &mut buf) {
            Poll::Ready(result) => result.map(|()| buf.filled().to_vec()),
            Poll::Pending => panic!("memory never makes a reader wait"),
        }
    }

    #[test]
    fn a_flush_that_empties_the_queue_clears_the_count() {
        let mut frames = [0x89, 0].repeat(MAX_PONGS_WAITING as usize);
        frames.extend_from_slice(&[0x82, 9]);
        frames.extend_from_slice(b"INFO {}\r\n");
        frames.extend_from_slice(&[0x89, 0].repeat(MAX_PONGS_WAITING as usize));
        frames.extend_from_slice(&[0x82, 9]);
        frames.extend_from_slice(b"INFO {}\r\n");
        let gate = Gate::default();
        let mut ws = WebSocket {
            stream: ClientBuilder::new().take_over(tokio::io::join(&frames[..], gate.clone())),
            pending: Bytes::new(),
            pongs_waiting: 0,
        };
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut read = |ws: &mut WebSocket<_>| {
            let mut scratch = [0; 64];
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(ws).poll_read(&mut cx, &mut buf) {
                Poll::Ready(result) => result.map(|()| buf.filled().to_vec()),
                Poll::Pending => panic!("memory never makes a reader wait"),
            }
        };
        // The limit's worth of pings whose pongs wait, then the engine's own flush gets
        // them out: as many again are allowed.
        assert_eq!(read(&mut ws).unwrap(), b"INFO {}\r\n");
        gate.open();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(matches!(
            Pin::new(&mut ws).poll_flush(&mut cx),
            Poll::Ready(Ok(()))
        ));
        gate.close();
        assert_eq!(read(&mut ws).unwrap(), b"INFO {}\r\n");
    }

    /// A far end that takes nothing until opened (closed when made).
    #[derive(Clone, Default)]
    struct Gate(std::sync::Arc<std::sync::atomic::AtomicBool>);

    impl Gate {
        fn open(&self) {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }

        fn close(&self) {
            self.0.store(false, std::sync::atomic::Ordering::Relaxed);
        }

        fn is_open(&self) -> bool {
            self.0.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    impl AsyncWrite for Gate {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            match self.is_open() {
                true => Poll::Ready(Ok(buf.len())),
                false => Poll::Pending,
            }
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            match self.is_open() {
                true => Poll::Ready(Ok(())),
                false => Poll::Pending,
            }
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Pending
        }
    }

    #[test]
    fn pings_whose_pongs_cannot_leave_end_the_connection() {
        let error = read_pings(5000, true).unwrap_err();
        assert!(error.to_string().contains("pings"), "{error}");
        // Up to the limit they are only pings.
        let limit = MAX_PONGS_WAITING as usize;
        assert_eq!(read_pings(limit, true).unwrap(), b"INFO {}\r\n");
        // Pongs that leave never add up, however many pings came.
        assert_eq!(read_pings(5000, false).unwrap(), b"INFO {}\r\n");
    }

    #[test]
    fn a_repeated_header_goes_out_once_with_its_values_joined() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1"));
        headers.append(header::COOKIE, HeaderValue::from_static("b=2"));
        headers.append("x-trace", HeaderValue::from_static("one"));
        headers.append("x-trace", HeaderValue::from_static("two"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        let mut lines: Vec<_> = one_line_per_name(&headers)
            .map(|(name, value)| format!("{name}: {}", value.to_str().unwrap()))
            .collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "authorization: Bearer t",
                "cookie: a=1; b=2",
                "x-trace: one, two"
            ]
        );
    }

    #[test]
    fn the_upgrade_request_carries_no_credentials() {
        let addr: ServerAddr = "ws://alice:secret@127.0.0.1:8080/nats?x=1".parse().unwrap();
        assert_eq!(upgrade_uri(&addr), "ws://127.0.0.1:8080/nats?x=1");
        let addr: ServerAddr = "wss://token@localhost".parse().unwrap();
        assert_eq!(upgrade_uri(&addr), "wss://localhost/");
    }
}
