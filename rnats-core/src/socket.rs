//! The plain TCP socket under a connection, on either backend: the engine's hot path reads
//! and writes it, and callers write to it directly while the engine is idle (see
//! `writer::Writer`). Tokio's `TcpStream` and the runtime-neutral backend's
//! `Async<TcpStream>` answer the same four calls here, so the engine and the direct writes
//! do not care which runtime woke them.
//!
//! The neutral socket keeps its own readiness, as tokio's sockets do. Async-io's
//! `poll_readable` answers `Ready` once per reactor event and registers again on the next
//! call, so an engine that asked it before every read would wait for a reactor turn after
//! each read that filled its buffer. Readiness is instead assumed until a read or write
//! meets `WouldBlock` (or a read comes back short: the socket is empty), and only then asked
//! of the reactor (see `neutral::poll_ready`).

use std::io::{self, IoSlice};
use std::task::{Context, Poll};

use bytes::BytesMut;
use tokio::net::TcpStream;

use crate::floor::frames::{Frames, IOVECS};

/// A connection's plain TCP socket; shared (in an `Arc`) by the engine and direct writers.
#[derive(Debug)]
pub(crate) enum Socket {
    /// Tokio's.
    Tokio(TcpStream),
    /// The runtime-neutral backend's, on async-io's reactor.
    #[cfg(feature = "runtime-neutral")]
    Neutral(neutral::NeutralSocket),
}

impl Socket {
    /// Whether the socket may have something to read; if not, the engine's wake-up is
    /// registered.
    pub(crate) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Socket::Tokio(tcp) => tcp.poll_read_ready(cx),
            #[cfg(feature = "runtime-neutral")]
            Socket::Neutral(s) => s.poll_read_ready(cx),
        }
    }

    /// Whether the socket may have room; if not, the engine's wake-up is registered.
    pub(crate) fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Socket::Tokio(tcp) => tcp.poll_write_ready(cx),
            #[cfg(feature = "runtime-neutral")]
            Socket::Neutral(s) => s.poll_write_ready(cx),
        }
    }

    /// One non-blocking read into `buf`'s spare capacity. A read that leaves room has
    /// emptied the socket, so it also clears the read readiness: the next
    /// [`Socket::poll_read_ready`] registers for a wake-up at once, instead of the engine
    /// paying one more `recvfrom` that fails with `WouldBlock` on every read.
    pub(crate) fn read_draining(&self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Socket::Tokio(tcp) => read_draining(tcp, buf),
            #[cfg(feature = "runtime-neutral")]
            Socket::Neutral(s) => s.read_draining(buf),
        }
    }

    /// One non-blocking vectored write; `WouldBlock` when the socket is full.
    fn try_write_vectored(&self, slices: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Socket::Tokio(tcp) => tcp.try_write_vectored(slices),
            #[cfg(feature = "runtime-neutral")]
            Socket::Neutral(s) => s.try_write_vectored(slices),
        }
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for Socket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Socket::Tokio(tcp) => tcp.as_fd(),
            #[cfg(feature = "runtime-neutral")]
            Socket::Neutral(s) => s.as_fd(),
        }
    }
}

/// Writes as much of `frames` as the socket takes without waiting, and advances them past
/// it. Returns the bytes written: 0 when the socket is full.
pub(crate) fn try_write(frames: &mut Frames, socket: &Socket) -> io::Result<usize> {
    let mut slices = [IoSlice::new(&[]); IOVECS];
    let count = frames.io_slices(&mut slices);
    match socket.try_write_vectored(&slices[..count]) {
        Ok(0) => Err(io::ErrorKind::WriteZero.into()),
        Ok(n) => {
            frames.advance(n);
            Ok(n)
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
        Err(e) => Err(e),
    }
}

/// [`Socket::read_draining`] on tokio's socket. The readiness cleared is the one observed
/// *before* the read (`try_io` takes it first and clears it only if no newer event arrived
/// since), so data landing after the read still wakes the engine. Tokio's own `poll_read`
/// does the same; `try_read_buf` does not.
fn read_draining(socket: &TcpStream, buf: &mut BytesMut) -> io::Result<usize> {
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

#[cfg(feature = "runtime-neutral")]
pub(crate) mod neutral {
    use std::io::{self, IoSlice, Read, Write};
    use std::net::TcpStream;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::task::{Context, Poll};

    use async_io::Async;
    use bytes::BytesMut;

    use crate::connector::{MIN_READ_ROOM, next_read_room};

    /// Ready while `flag` says the socket may be ready; else asks the reactor. A `Pending`
    /// from the reactor sets the flag again, so that the wake-up it registered is met with
    /// the read or write itself: async-io counts an event of the reactor turn in which the
    /// interest was registered as possibly stale, and asking it again first would cost a
    /// second turn (a second wake-up of the engine's thread) for each message that comes.
    /// A wake-up for something else costs one read or write that finds `WouldBlock`.
    fn poll_ready(
        flag: &AtomicBool,
        cx: &mut Context<'_>,
        poll: impl FnOnce(&mut Context<'_>) -> Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>> {
        if flag.load(Ordering::Acquire) {
            return Poll::Ready(Ok(()));
        }
        let ready = poll(cx);
        if ready.is_pending() || matches!(ready, Poll::Ready(Ok(()))) {
            flag.store(true, Ordering::Release);
        }
        ready
    }

    /// async-io's socket with the readiness the engine expects (see the module's docs).
    #[derive(Debug)]
    pub(crate) struct NeutralSocket {
        io: Async<TcpStream>,
        /// Reads may find bytes: set when the reactor says so or registers a wake-up
        /// ([`poll_ready`]), cleared by a read that emptied the socket. Only the engine reads.
        readable: AtomicBool,
        /// Writes may find room: set as `readable` is, cleared by a write (the engine's or a
        /// direct writer's) that found none.
        writable: AtomicBool,
        /// How much zeroed room the next read gets (the engine's alone).
        read_room: AtomicUsize,
    }

    impl NeutralSocket {
        pub(crate) fn new(io: Async<TcpStream>) -> NeutralSocket {
            NeutralSocket {
                io,
                readable: AtomicBool::new(true),
                writable: AtomicBool::new(true),
                read_room: AtomicUsize::new(MIN_READ_ROOM),
            }
        }

        pub(super) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            poll_ready(&self.readable, cx, |cx| self.io.poll_readable(cx))
        }

        pub(super) fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            poll_ready(&self.writable, cx, |cx| self.io.poll_writable(cx))
        }

        /// Reads into zeroed room at the end of `buf`, as `std`'s safe `read` needs
        /// initialised memory, in room that follows what reads bring
        /// (`connector::next_read_room`, as `FuturesIo`'s reads); `buf` keeps exactly what
        /// was read.
        pub(super) fn read_draining(&self, buf: &mut BytesMut) -> io::Result<usize> {
            let spare = buf.capacity() - buf.len();
            let current = self.read_room.load(Ordering::Relaxed);
            let room = spare.min(current).max(1);
            let start = buf.len();
            buf.resize(start + room, 0);
            let mut stream: &TcpStream = self.io.get_ref();
            let outcome = stream.read(&mut buf[start..]);
            let read = *outcome.as_ref().unwrap_or(&0);
            buf.truncate(start + read);
            match outcome {
                Ok(n) => {
                    let next = next_read_room(current, room, n);
                    self.read_room.store(next, Ordering::Relaxed);
                    // A read short of its room emptied the socket.
                    if n > 0 && n < room {
                        self.readable.store(false, Ordering::Release);
                    }
                    Ok(n)
                }
                Err(e) => {
                    if e.kind() == io::ErrorKind::WouldBlock {
                        self.readable.store(false, Ordering::Release);
                    }
                    Err(e)
                }
            }
        }

        pub(super) fn try_write_vectored(&self, slices: &[IoSlice<'_>]) -> io::Result<usize> {
            let mut stream: &TcpStream = self.io.get_ref();
            let outcome = stream.write_vectored(slices);
            if matches!(&outcome, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                self.writable.store(false, Ordering::Release);
            }
            outcome
        }

        #[cfg(unix)]
        pub(super) fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
            use std::os::fd::AsFd;
            self.io.get_ref().as_fd()
        }
    }
}

#[cfg(all(test, feature = "runtime-neutral"))]
mod tests {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::task::{Context, Poll};

    use async_io::Async;
    use bytes::BytesMut;

    use super::Socket;
    use super::neutral::NeutralSocket;

    /// A neutral socket connected to a plain blocking peer on loopback.
    fn pair() -> (Socket, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let ours = TcpStream::connect(addr).expect("connect");
        let (peer, _) = listener.accept().expect("accept");
        let io = Async::new(ours).expect("registered");
        (Socket::Neutral(NeutralSocket::new(io)), peer)
    }

    fn poll_readable(socket: &Socket) -> Poll<std::io::Result<()>> {
        let waker = futures_util::task::noop_waker();
        socket.poll_read_ready(&mut Context::from_waker(&waker))
    }

    /// Reads keep exactly the bytes that came (the zeroed room a read is given is cut off
    /// again), a read short of its room marks the socket empty so that the engine's next
    /// look registers with the reactor instead of reading again, and the room grows while
    /// reads fill it.
    #[test]
    fn a_neutral_read_keeps_what_came_and_marks_an_emptied_socket() {
        let (socket, mut peer) = pair();
        let mut buf = BytesMut::with_capacity(1 << 20);
        peer.write_all(b"PING\r\n").expect("write");
        assert!(
            poll_readable(&socket).is_ready(),
            "assumed readable at first"
        );
        let read = async_io::block_on(async {
            loop {
                std::future::poll_fn(|cx| socket.poll_read_ready(cx)).await?;
                match socket.read_draining(&mut buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    other => break other,
                }
            }
        });
        assert_eq!(read.ok(), Some(6));
        assert_eq!(&buf[..], b"PING\r\n", "no zeroed room left behind");
        assert!(
            poll_readable(&socket).is_pending(),
            "a short read emptied the socket; the next look asks the reactor"
        );

        // A stream larger than any one read: reads grow past the first room and bring it
        // all, in order.
        let sent: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let writer = {
            let sent = sent.clone();
            std::thread::spawn(move || peer.write_all(&sent).map(|()| peer))
        };
        buf.clear();
        let mut largest = 0;
        async_io::block_on(async {
            while buf.len() < sent.len() {
                std::future::poll_fn(|cx| socket.poll_read_ready(cx))
                    .await
                    .expect("ready");
                let before = buf.len();
                match socket.read_draining(&mut buf) {
                    Ok(n) => {
                        assert_eq!(buf.len(), before + n);
                        largest = largest.max(n);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("read failed: {e}"),
                }
            }
        });
        assert!(buf[..] == sent[..], "the bytes arrived whole and in order");
        assert!(
            largest > 4096,
            "reads grew past their first room: {largest}"
        );
        let _peer = writer.join().expect("writer").expect("written");
    }
}
