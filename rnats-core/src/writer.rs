//! Who writes the tokio client's queued frames to the socket, and when: the engine, or a
//! caller writing directly into an idle connection ([`Writer`]).

use std::io::{self, IoSlice};

use tokio::net::TcpStream;

use crate::floor::frames::{Frames, IOVECS};

/// Who writes queued frames next. Lives under the same lock as the queue.
///
/// A flush or a request that finds the engine [`Idle`](Writer::Idle) writes the queue to the
/// socket itself: an idle connection then sends at once, without waking another task. If that
/// caller's next frame comes before the engine has run again, it queues and wakes the engine
/// instead, so a burst batches into large writes rather than paying one syscall per frame.
///
/// A publish (or SUB, UNSUB, PONG) from a task never writes directly: it queues and wakes an
/// idle engine, so that whatever the caller queues right behind it (typically the PING of a
/// `flush()`) leaves in the same write. Written apart, a publish and its flush reach the
/// server as two segments, the server may answer with the MSG and the PONG as two segments,
/// and the round trip pays two writes, two reads and up to two wake-ups instead of one each. From a tokio
/// task the wake is cheap: the engine lands in that worker's LIFO slot (or the current-thread
/// runtime's queue) and runs as soon as the task yields. From `block_on` on a multi-threaded
/// runtime (the body of `#[tokio::main]`) it would cross threads: a futex wake-up of a worker,
/// which often unparks a second one to search for work, about two context switches per
/// publish. There the caller writes a publish into an idle connection itself, as a request
/// (`Shared::submit`, `shared::outside_workers`): the flush behind it then writes its PING
/// directly too, two `writev`s that the server reads as one and answers with one segment, and
/// no worker runs until the reply comes (docs/engine.md, issue 19). From a plain thread
/// outside any runtime, and on the current-thread runtime, a publish still wakes the engine.
///
/// **The writer invariant:** a caller writes directly only when nothing is in flight, that is
/// when the engine holds no partly written batch (`Writes::engine_holds_batch`, set by the
/// engine when it takes the queue and cleared when it finds the queue empty with its batch
/// done). Bytes then leave in queue order whoever writes them. `Shared::submit`
/// `debug_assert`s it. Direct writes are further limited to small queues
/// ([`Frames::is_small`]) because they run under the lock every publish takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Writer {
    /// Nothing in flight and the engine is not woken: a caller may write directly.
    #[default]
    Idle,
    /// A caller just wrote directly; the next publish queues and wakes the engine.
    DirectlyWritten,
    /// The engine has been woken for the queue but has not taken it yet.
    Woken,
    /// The engine holds a batch being written; callers only queue behind it.
    Writing,
}

/// How urgently a caller wants its frame on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Urgency {
    /// A publish or control frame: left to the engine, even when it is idle (see [`Writer`];
    /// `Shared::submit` makes it a [`Urgency::Request`] for a caller outside the runtime's
    /// workers), and batched when traffic is heavy.
    Normal,
    /// A flush: it waits for the server, so write now unless a batch is already in flight.
    Flush,
    /// A request: written at once by its caller when the connection is idle (a lone request
    /// pays no wake-up), but batched like a publish when others are being written or queued
    /// (many concurrent requesters then share one write instead of a syscall each, which
    /// also spares the server a read per request). Never lingers.
    Request,
}

impl Writer {
    /// Whether a caller with `urgency` may write the queue to the socket itself.
    pub(crate) fn may_write_directly(self, urgency: Urgency) -> bool {
        match self {
            // A publish is left to the engine: see the type's docs.
            Writer::Idle => urgency != Urgency::Normal,
            Writer::DirectlyWritten | Writer::Woken => urgency == Urgency::Flush,
            // `Request` writes directly only when idle (above).
            Writer::Writing => false,
        }
    }
}

/// One non-blocking vectored write of `frames` to `socket`; returns the bytes written (0 if
/// none could be).
pub(crate) fn try_write(frames: &mut Frames, socket: &TcpStream) -> io::Result<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_flushes_may_write_past_a_recent_direct_write() {
        assert!(Writer::Idle.may_write_directly(Urgency::Flush));
        assert!(Writer::Idle.may_write_directly(Urgency::Request));
        assert!(!Writer::DirectlyWritten.may_write_directly(Urgency::Normal));
        assert!(Writer::DirectlyWritten.may_write_directly(Urgency::Flush));
        assert!(Writer::Woken.may_write_directly(Urgency::Flush));
        assert!(!Writer::Writing.may_write_directly(Urgency::Flush));
        assert!(!Writer::DirectlyWritten.may_write_directly(Urgency::Request));
        assert!(!Writer::Woken.may_write_directly(Urgency::Request));
    }

    #[test]
    fn a_publish_leaves_an_idle_engine_to_write() {
        assert!(!Writer::Idle.may_write_directly(Urgency::Normal));
    }
}
