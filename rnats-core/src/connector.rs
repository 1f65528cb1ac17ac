//! Connections the application makes itself: [`ConnectOptions::transport`] takes a function
//! that opens a byte stream to a server (a tunnel, a TLS stream of its own, an in-memory
//! pipe), called once per connect attempt, reconnects included. The async client (on tokio
//! or runtime-neutral) then speaks NATS over that stream; TLS and the WebSocket upgrade are
//! still layered on top as the server address and the options say.
//!
//! [`ConnectOptions::transport`]: crate::ConnectOptions::transport

use std::fmt;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

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
    Box::new(FuturesIo::new(stream))
}

/// A `futures-io` stream behind tokio's I/O traits. Written here rather than taken from
/// `tokio_util::compat`, whose adapter does two things that cost on a stream of messages:
/// it writes only the first slice of a vectored write (a `send` per frame, two for a large
/// message), and it zeroes all the room a read is given before every read, since
/// `futures-io` reads into initialised bytes only (the engine gives 64 to 256 KiB, so a
/// 100-byte reply cost a 64 KiB `memset`). Here the room a read is given doubles while
/// reads fill it and halves while they bring under a quarter of it.
pub(crate) struct FuturesIo<S> {
    inner: S,
    /// How much room the next read is given (zeroed first).
    read_room: usize,
}

/// The room a read starts with, and the least it is given.
pub(crate) const MIN_READ_ROOM: usize = 4 * 1024;

/// The room the next read into zeroed memory gets, after one that was given `given` bytes
/// of room (at most `current`) and read `read`: twice as much while reads fill it, half while
/// they bring under a quarter of it, so a 100-byte reply does not pay for zeroing a whole
/// buffer. Shared by [`FuturesIo`] and the runtime-neutral socket's reads.
pub(crate) fn next_read_room(current: usize, given: usize, read: usize) -> usize {
    if read == given {
        current.saturating_mul(2)
    } else if read < given / 4 {
        (current / 2).max(MIN_READ_ROOM)
    } else {
        current
    }
}

impl<S> FuturesIo<S> {
    pub(crate) fn new(inner: S) -> FuturesIo<S> {
        FuturesIo {
            inner,
            read_room: MIN_READ_ROOM,
        }
    }

    /// The stream itself; the adapter holds no bytes of it.
    #[cfg(feature = "runtime-neutral")]
    pub(crate) fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: futures_io::AsyncRead + Unpin> AsyncRead for FuturesIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let room = buf.remaining().min(this.read_room);
        let read =
            ready!(Pin::new(&mut this.inner).poll_read(cx, buf.initialize_unfilled_to(room)))?;
        buf.advance(read);
        this.read_room = next_read_room(this.read_room, room, read);
        Poll::Ready(Ok(()))
    }
}

impl<S: futures_io::AsyncWrite + Unpin> AsyncWrite for FuturesIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    /// `futures-io` cannot tell; a stream that does not write vectors writes the first slice,
    /// which is what tokio's callers do for a stream that says it does not.
    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
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

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;

    /// A `futures-io` stream that records what it is given: the slices of each write, the
    /// room of each read (filled with up to `incoming.pop()` bytes).
    #[derive(Default)]
    struct Recorder {
        slices_per_write: Vec<usize>,
        rooms: Vec<usize>,
        incoming: Vec<usize>,
    }

    impl futures_io::AsyncRead for Recorder {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            this.rooms.push(buf.len());
            let coming = this.incoming.pop().unwrap_or(0);
            Poll::Ready(Ok(coming.min(buf.len())))
        }
    }

    impl futures_io::AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.get_mut().slices_per_write.push(1);
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            bufs: &[IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            self.get_mut().slices_per_write.push(bufs.len());
            Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[test]
    fn a_vectored_write_reaches_the_stream_whole() {
        let mut stream = FuturesIo::new(Recorder::default());
        let (head, payload, tail) = (b"PUB a 5\r\n", b"hello", b"\r\n");
        let slices = [
            IoSlice::new(head),
            IoSlice::new(payload),
            IoSlice::new(tail),
        ];
        let mut cx = Context::from_waker(Waker::noop());
        let written = Pin::new(&mut stream).poll_write_vectored(&mut cx, &slices);
        assert!(matches!(written, Poll::Ready(Ok(16))));
        assert!(stream.is_write_vectored());
        assert_eq!(
            stream.inner.slices_per_write,
            [3],
            "one write of three slices"
        );
    }

    #[test]
    fn a_read_gets_room_for_about_what_reads_bring() {
        const FULL: usize = 1 << 20;
        let mut stream = FuturesIo::new(Recorder::default());
        // Popped from the end: two reads that fill their room, then small ones.
        stream.inner.incoming = vec![100, 100, 100, usize::MAX, usize::MAX];
        let mut cx = Context::from_waker(Waker::noop());
        let mut memory = vec![std::mem::MaybeUninit::uninit(); 64 * 1024];
        for _ in 0..5 {
            let mut buf = ReadBuf::uninit(&mut memory);
            assert!(matches!(
                Pin::new(&mut stream).poll_read(&mut cx, &mut buf),
                Poll::Ready(Ok(()))
            ));
        }
        let min = MIN_READ_ROOM;
        assert_eq!(
            stream.inner.rooms,
            [min, 2 * min, 4 * min, 2 * min, min],
            "doubled while filled, halved while reads bring under a quarter"
        );
        // Never more than the buffer has.
        stream.read_room = FULL;
        stream.inner.incoming = vec![1];
        let mut buf = ReadBuf::uninit(&mut memory);
        let _ = Pin::new(&mut stream).poll_read(&mut cx, &mut buf);
        assert_eq!(stream.inner.rooms.last(), Some(&(64 * 1024)));
    }
}
