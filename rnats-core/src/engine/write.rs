//! The engine's write step: the batch it holds goes to the socket (or through TLS or
//! WebSocket), and the write watch (`ConnectOptions::write_timeout`) is told when the
//! socket has no room.
//!
//! The watch counts the bytes the engine wrote itself (`Engine::written`), not the
//! connection's statistics, which the application may reset. Nobody else writes while the
//! engine holds a batch (the writer is `Writing`; a caller's bulk run hands its queue to the
//! engine once its turns write nothing), so only the engine's own writes can move a batch
//! the watch is judging. Under TLS and WebSocket, progress shows as the stream layer takes
//! the engine's bytes, in pieces as large as the layer buffers (docs/faults.md).

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::AsyncWrite;

use super::{Ending, Engine, no_socket};
use crate::floor::frames::IOVECS;
use crate::floor::keepalive::WriteWatch;
use crate::socket::try_write;
use crate::statistics::Statistics;

impl Engine {
    /// Writes queued frames: takes the shared queue when the previous batch is fully written,
    /// so frames queued meanwhile go out together in one (vectored) write. Goes until the
    /// queue is empty or the socket full, so it leaves nothing for another pass.
    pub(super) fn drive_write(&mut self, cx: &mut Context<'_>) -> Result<bool, Ending> {
        loop {
            if self.out.is_empty() && !self.take_queued(cx) {
                return self.flush_stream(cx).map(|()| false);
            }
            if let Some(stream) = &mut self.stream {
                let mut slices = [IoSlice::new(&[]); IOVECS];
                let count = self.out.io_slices(&mut slices);
                match Pin::new(stream).poll_write_vectored(cx, &slices[..count]) {
                    Poll::Pending => {
                        self.note_refused();
                        return self.flush_stream(cx).map(|()| false);
                    }
                    Poll::Ready(Ok(0)) => {
                        return Err(Ending::Lost("write failed: no bytes taken".into()));
                    }
                    Poll::Ready(Ok(n)) => {
                        self.out.advance(n);
                        self.written += n as u64;
                        Statistics::add(&self.shared.statistics.out_bytes, n as u64);
                        self.stream_needs_flush = true;
                    }
                    Poll::Ready(Err(e)) => return Err(Ending::Lost(format!("write failed: {e}"))),
                }
                continue;
            }
            let socket = self.socket.as_ref().ok_or_else(no_socket)?;
            match socket.poll_write_ready(cx) {
                Poll::Pending => {
                    self.note_refused();
                    return Ok(false);
                }
                Poll::Ready(Err(e)) => return Err(Ending::Lost(format!("write failed: {e}"))),
                Poll::Ready(Ok(())) => {}
            }
            match try_write(&mut self.out, socket) {
                Ok(0) => {} // stale readiness: the next poll registers for a wake-up
                Ok(n) => {
                    self.written += n as u64;
                    Statistics::add(&self.shared.statistics.out_bytes, n as u64);
                }
                Err(e) => return Err(Ending::Lost(format!("write failed: {e}"))),
            }
        }
    }

    /// Pushes what rustls or the WebSocket layer buffered onto the socket. What they hold
    /// is not owed to the watch, as what the kernel holds is not: a stalled server is found
    /// when the engine's next batch finds no room.
    pub(super) fn flush_stream(&mut self, cx: &mut Context<'_>) -> Result<(), Ending> {
        if let (Some(stream), true) = (&mut self.stream, self.stream_needs_flush) {
            match Pin::new(stream).poll_flush(cx) {
                Poll::Pending => {}
                Poll::Ready(Ok(())) => self.stream_needs_flush = false,
                Poll::Ready(Err(e)) => return Err(Ending::Lost(format!("write failed: {e}"))),
            }
        }
        Ok(())
    }

    /// The socket is full with bytes still owed to it: the write watch's clock starts,
    /// unless it runs already from the same count of bytes written.
    fn note_refused(&mut self) {
        let rt = self.shared.rt;
        self.write_watch.handle_refused(self.written, || rt.now());
    }
}

/// The write watch's time came (`ConnectOptions::write_timeout`): a link that took none of
/// the `written` bytes' successors while they were `owed` for the whole timeout ends.
pub(super) fn watch_writes(
    watch: &mut WriteWatch,
    now: Instant,
    written: u64,
    owed: bool,
) -> Result<(), Ending> {
    match watch.handle_timeout(now, written, owed) {
        Some(stalled) => Err(Ending::Lost(format!(
            "write stalled: the socket took no byte for {stalled:.1?}"
        ))),
        None => Ok(()),
    }
}
