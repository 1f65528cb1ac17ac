//! The byte stream under a connection: plain TCP (tokio's or the runtime-neutral
//! backend's), a stream the application made, TLS over any of those, or WebSocket over any
//! of those.
//!
//! Plain TCP is the hot path: the engine takes the socket out (`socket::Socket`), shares it
//! with callers that write directly (see `Writes::socket`) and never goes through this
//! enum's dispatch for it; the `AsyncRead`/`AsyncWrite` impls below serve it only during the
//! handshake and under TLS or WebSocket. The others need `&mut` access to their stream
//! state, so the engine alone reads and writes them through those impls.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::connector::BoxedStream;
use crate::socket::Socket;
#[cfg(feature = "runtime-neutral")]
use crate::socket::neutral::NeutralSocket;

/// The runtime-neutral backend's TCP stream, behind tokio's I/O traits.
#[cfg(feature = "runtime-neutral")]
pub(crate) type NeutralTcp = crate::connector::FuturesIo<async_io::Async<std::net::TcpStream>>;

#[cfg(feature = "websockets")]
use crate::websocket::WebSocket;

/// One connection's stream.
pub(crate) enum Transport {
    /// Tokio's plain TCP.
    Tcp(TcpStream),
    /// The runtime-neutral backend's plain TCP; the engine takes the socket out of it, as
    /// it does tokio's.
    #[cfg(feature = "runtime-neutral")]
    Neutral(NeutralTcp),
    /// Any other byte stream: the application's (`ConnectOptions::transport`).
    Stream(BoxedStream),
    /// TLS over a [`Transport::Tcp`] or a [`Transport::Stream`].
    Tls(Box<TlsStream<Transport>>),
    /// WebSocket (`ws://`, `wss://`) over any of the above; never nested deeper.
    #[cfg(feature = "websockets")]
    WebSocket(Box<WebSocket<Transport>>),
}

impl Transport {
    /// The plain TCP socket, for the engine's hot path; any other stream back as it was.
    pub(crate) fn into_socket(self) -> Result<Socket, Transport> {
        match self {
            Transport::Tcp(tcp) => Ok(Socket::Tokio(tcp)),
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(tcp) => Ok(Socket::Neutral(NeutralSocket::new(tcp.into_inner()))),
            other => Err(other),
        }
    }

    /// Whether nothing is layered on the stream yet (no TLS, no WebSocket): TLS may go on.
    pub(crate) fn is_plain(&self) -> bool {
        match self {
            Transport::Tcp(_) | Transport::Stream(_) => true,
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(_) => true,
            Transport::Tls(_) => false,
            #[cfg(feature = "websockets")]
            Transport::WebSocket(_) => false,
        }
    }

    /// Whether the bytes travel encrypted: TLS, or WebSocket over TLS (`wss://`).
    pub(crate) fn is_tls(&self) -> bool {
        match self {
            Transport::Tcp(_) | Transport::Stream(_) => false,
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(_) => false,
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
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(_) => f.write_str("Transport::Neutral"),
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
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(s) => Pin::new(s).poll_read(cx, buf),
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
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(s) => Pin::new(s).poll_write(cx, buf),
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
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Transport::Tcp(s) => s.is_write_vectored(),
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(s) => s.is_write_vectored(),
            Transport::Stream(s) => s.is_write_vectored(),
            Transport::Tls(s) => s.is_write_vectored(),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(s) => Pin::new(s).poll_flush(cx),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "runtime-neutral")]
            Transport::Neutral(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Stream(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            #[cfg(feature = "websockets")]
            Transport::WebSocket(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
