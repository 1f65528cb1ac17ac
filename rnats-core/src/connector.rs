//! Connections the application makes itself: [`ConnectOptions::transport`] takes a function
//! that opens a byte stream to a server (a tunnel, a TLS stream of its own, an in-memory
//! pipe), called once per connect attempt, reconnects included. The async client (on tokio
//! or runtime-neutral) then speaks NATS over that stream; TLS and the WebSocket upgrade are
//! still layered on top as the server address and the options say.
//!
//! [`ConnectOptions::transport`]: crate::ConnectOptions::transport

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::compat::FuturesAsyncReadCompatExt;

use crate::server_addr::ServerAddr;

/// A byte stream the client can run over: tokio's `AsyncRead + AsyncWrite`, sendable, and
/// `Unpin`. Every such type is one; [`from_futures_io`] adapts a `futures-io` stream.
pub trait AsyncStream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> AsyncStream for T {}

/// A boxed [`AsyncStream`]: what a transport function returns.
pub type BoxedStream = Box<dyn AsyncStream>;

/// Boxes a `futures-io` stream (smol's, async-std's, async-io's `Async<TcpStream>`) as a
/// [`BoxedStream`].
pub fn from_futures_io<S>(stream: S) -> BoxedStream
where
    S: futures_io::AsyncRead + futures_io::AsyncWrite + Send + Unpin + 'static,
{
    Box::new(stream.compat())
}

/// The future a transport function returns.
pub(crate) type Dialing = Pin<Box<dyn Future<Output = io::Result<BoxedStream>> + Send>>;

/// The application's transport function, as [`ConnectOptions`](crate::ConnectOptions) keeps
/// it.
#[derive(Clone)]
pub(crate) struct Connector(Arc<dyn Fn(ServerAddr) -> Dialing + Send + Sync>);

impl Connector {
    pub(crate) fn new<F, Fut, S>(connect: F) -> Connector
    where
        F: Fn(ServerAddr) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = io::Result<S>> + Send + 'static,
        S: AsyncStream,
    {
        Connector(Arc::new(move |addr| {
            let dialing = connect(addr);
            Box::pin(async move { Ok(Box::new(dialing.await?) as BoxedStream) })
        }))
    }

    /// Opens a stream to `addr`.
    pub(crate) fn dial(&self, addr: ServerAddr) -> Dialing {
        (self.0)(addr)
    }
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Connector")
    }
}
