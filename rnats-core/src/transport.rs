//! The byte stream under a connection: tokio's plain TCP, any other stream (the
//! runtime-neutral backend's TCP, or one the application made), TLS over either, or
//! WebSocket over any of those.
//!
//! Tokio's plain TCP is the hot path: the engine shares the socket with callers that write
//! directly (see `Writes::socket`) and never goes through this enum's dispatch for it. The
//! others need `&mut` access to their stream state, so the engine alone reads and writes
//! them through the `AsyncRead`/`AsyncWrite` impls below.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::connector::BoxedStream;

#[cfg(feature = "websockets")]
use crate::websocket::WebSocket;

/// One connection's stream.
pub(crate) enum Transport {
    /// Tokio's plain TCP.
    Tcp(TcpStream),
    /// Any other byte stream: the runtime-neutral backend's TCP, or the application's
    /// (`ConnectOptions::transport`).
    Stream(BoxedStream),
    /// TLS over a [`Transport::Tcp`] or a [`Transport::Stream`].
    Tls(Box<TlsStream<Transport>>),
    /// WebSocket (`ws://`, `wss://`) over any of the above; never nested deeper.
    #[cfg(feature = "websockets")]
    WebSocket(Box<WebSocket<Transport>>),
}

impl Transport {
    /// Whether the bytes travel encrypted: TLS, or WebSocket over TLS (`wss://`).
    pub(crate) fn is_tls(&self) -> bool {
        match self {
            Transport::Tcp(_) | Transport::Stream(_) => false,
            Transport::Tls(_) => true,
            #[cfg(feature = "websockets")]
            Transport::WebSocket(ws) => ws.inner().is_tls(),
        }
    }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Tcp(_) => f.write_str("Transport::Tcp"),
            Transport::Stream(_) => f.write_str("Transport::Stream"),
            Transport::Tls(_) => f.write_str("Transport::Tls"),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(ws) => write!(f, "Transport::WebSocket({:?})", ws.inner()),
        }
    }
}

impl AsyncRead for Transport {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Transport {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Tcp(s) => s.is_write_vectored(),
            Transport::Stream(s) => s.is_write_vectored(),
            Transport::Tls(s) => s.is_write_vectored(),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_flush(cx),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// One non-blocking read of tokio's plain TCP into `buf` (the engine's hot path). A read that
/// leaves room in the buffer has emptied the socket (epoll is edge-triggered), so it also
/// clears the socket's read readiness: the next `poll_read_ready` then registers for a
/// wake-up at once, instead of the engine paying one more `recvfrom` that fails with
/// `WouldBlock` on every read (one extra syscall per round trip). Tokio's own `poll_read`
/// does the same; `try_read_buf` does not. The readiness cleared is the one observed
/// *before* the read (`try_io` takes it first and clears it only if no newer event arrived
/// since), so data landing after the read still wakes the engine.
pub(crate) fn read_draining(socket: &TcpStream, buf: &mut BytesMut) -> io::Result<usize> {
    let room = buf.capacity() - buf.len();
    let mut read = 0;
    let outcome = socket.try_io(tokio::io::Interest::READABLE, || {
        read = socket.try_read_buf(buf)?;
        match read {
            // `WouldBlock` makes `try_io` clear the readiness; the bytes are kept in `read`.
            n if n > 0 && n < room => Err(io::ErrorKind::WouldBlock.into()),
            n => Ok(n),
        }
    });
    match outcome {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock && read > 0 => Ok(read),
        other => other,
    }
}
