//! Read buffers a connection recycles.
//!
//! Messages are slices of the buffer they were read into, so a buffer cannot be written
//! again while a subscriber still holds one of its messages: the next read needs another.
//! Allocated fresh each time, every byte of a stream lands in memory the kernel must fault
//! in and zero, and the allocator gives back at once (a receiving run of 1 KiB messages
//! took four times the page faults of the raw client, a fault per 4 KiB received). So the
//! buffers a connection reads into are kept once left behind, and reused once every message
//! sliced from them is gone (`BytesMut::try_reclaim` says so without allocating).

use std::time::{Duration, Instant};

use bytes::BytesMut;

/// At most this many left-behind buffers are kept (each at most the largest read, 256 KiB
/// by default). As many as a lagging subscription may pin before its small batches are
/// copied out (`sub_queue::MAX_PINNED_BATCHES`): with fewer, a subscriber a few reads behind
/// a stream of 8 KiB messages pinned every kept buffer, each read took a new one, and the
/// buffers let go were given back to the kernel as they were freed: 0.5 to 0.6 page faults
/// per message received, against 0.002 for raw-tokio. Kept buffers cost memory only
/// once their messages are gone, and only while the connection streams.
const KEPT: usize = 16;

/// How long a connection that read at least the streaming amount within such a span keeps
/// its buffers through the socket running empty. The socket of a fast stream runs empty
/// between the server's writes many times a second, each time after less than a full read
/// buffer: judged one empty socket at a time, such a stream let its buffers go (and faulted
/// fresh ones in) over and over.
const WINDOW: Duration = Duration::from_millis(100);

/// A connection that reads at least this many times within a [`WINDOW`] streams, however
/// little each read brings: what keeping its buffers saves is an allocation and a free for
/// every read, so a connection that reads small frames often (the replies to a stream of
/// requests: about 80 bytes each, thousands a second) pays for them as often as one that
/// reads large ones. 64 reads in 100 ms is one every 1.6 ms on average.
const STREAMING_READS: u32 = 64;

/// A connection's left-behind read buffers.
#[derive(Debug, Default)]
pub(crate) struct ReadBuffers {
    kept: Vec<BytesMut>,
    /// Bytes read since the window began (while streaming) or since the buffers were last
    /// let go (while not).
    streamed: usize,
    /// Reads since then.
    reads: u32,
    /// While the connection streams, when its current window began; `None` while it does
    /// not (it read less than the streaming amount, in bytes and in reads, in its last whole
    /// window, or has not streamed yet).
    window_at: Option<Instant>,
}

impl ReadBuffers {
    /// Makes room in `buf` for a read of `size` bytes, keeping the bytes it holds (a partly
    /// read frame): reclaims `buf` itself if nothing else uses it, else moves to a kept
    /// buffer that has been released, else to a new one; `buf`'s old allocation is kept, in
    /// place of the oldest when [`KEPT`] are.
    pub(crate) fn make_room(&mut self, buf: &mut BytesMut, size: usize) {
        if buf.try_reclaim(size) {
            return;
        }
        let want = buf.len() + size;
        let reused = self.kept.iter_mut().position(|kept| kept.try_reclaim(want));
        let mut next = match reused {
            Some(at) => self.kept.swap_remove(at),
            None => BytesMut::with_capacity(want),
        };
        next.extend_from_slice(buf);
        let mut old = std::mem::replace(buf, next);
        old.clear();
        // The newest are kept: an older one may be too small for reads that have grown
        // since, or pinned by a subscriber that lags.
        if self.kept.len() == KEPT {
            self.kept.remove(0);
        }
        self.kept.push(old);
    }

    /// `read` bytes came in.
    pub(crate) fn note_read(&mut self, read: usize) {
        self.streamed = self.streamed.saturating_add(read);
        self.reads = self.reads.saturating_add(1);
    }

    /// Whether what was read since the count last began makes a stream.
    fn read_enough(&self, streaming: usize) -> bool {
        self.streamed >= streaming || self.reads >= STREAMING_READS
    }

    /// The socket has nothing more to read. Returns whether the connection streams: it
    /// has read at least `streaming` bytes, or made [`STREAMING_READS`] reads, since it
    /// connected or last streamed, or within the current or the last [`WINDOW`] (`now` is
    /// called only then). A connection that streams keeps its buffers for the next read.
    /// Otherwise the kept ones are let go (the caller lets go of its empty read buffer too),
    /// so a quiet connection holds none: a stream that stops lets them go at the first empty
    /// socket a window after its last full window, at the latest the server's answer to a
    /// keepalive PING.
    pub(crate) fn drained(&mut self, streaming: usize, now: impl FnOnce() -> Instant) -> bool {
        match self.window_at {
            // Not streaming: counted since it connected or last streamed, without the clock.
            None if !self.read_enough(streaming) => {
                self.kept.clear();
                return false;
            }
            None => self.window_at = Some(now()),
            Some(at) => {
                let now = now();
                if now.duration_since(at) < WINDOW {
                    return true;
                }
                // A window ended: the next one streams if this one read enough.
                self.window_at = self.read_enough(streaming).then_some(now);
            }
        }
        self.streamed = 0;
        self.reads = 0;
        if self.window_at.is_none() {
            self.kept.clear();
        }
        self.window_at.is_some()
    }

    /// A read found the socket empty: the kept buffers go unless the connection streams
    /// (see [`ReadBuffers::drained`]), and `buf` too if it holds nothing (no part of a
    /// frame), so an idle connection holds no read buffer; the next read reserves one.
    pub(crate) fn socket_empty(
        &mut self,
        buf: &mut BytesMut,
        streaming: usize,
        now: impl FnOnce() -> Instant,
    ) {
        if !self.drained(streaming, now) && buf.is_empty() {
            *buf = BytesMut::new();
        }
    }

    /// The link is gone: nothing is kept for the next one.
    pub(crate) fn clear(&mut self) {
        *self = ReadBuffers::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    /// Reads `n` bytes into `buf` and takes them out as one message, as the parser does.
    fn read_message(buf: &mut BytesMut, n: usize) -> Bytes {
        buf.extend_from_slice(&vec![b'm'; n]);
        buf.split_to(n).freeze()
    }

    #[test]
    fn a_buffer_whose_messages_are_gone_is_used_again() {
        let mut buffers = ReadBuffers::default();
        let mut buf = BytesMut::with_capacity(1024);
        let first = read_message(&mut buf, 1000);
        let first_allocation = first.as_ptr();
        // Still held by `first`: a new buffer, the old one kept.
        buffers.make_room(&mut buf, 1024);
        let second = read_message(&mut buf, 1000);
        assert_ne!(second.as_ptr(), first_allocation);
        drop(first);
        // `second` pins the current buffer; the first one is free again.
        buffers.make_room(&mut buf, 1024);
        let third = read_message(&mut buf, 10);
        assert_eq!(
            third.as_ptr(),
            first_allocation,
            "the released buffer was not reused"
        );
        drop(second);
    }

    #[test]
    fn a_partly_read_frame_moves_with_the_buffer() {
        let mut buffers = ReadBuffers::default();
        let mut buf = BytesMut::with_capacity(64);
        let held = read_message(&mut buf, 60);
        buf.extend_from_slice(b"PART");
        buffers.make_room(&mut buf, 64);
        assert_eq!(&buf[..], b"PART");
        assert!(buf.capacity() - buf.len() >= 64);
        drop(held);
    }

    /// The clock of a connection that never streamed: asking it fails the test.
    fn never_asked() -> Instant {
        panic!("a connection that never streamed looked at the clock")
    }

    /// Leaves one left-behind buffer in `buffers`, as a read while a subscriber holds a
    /// message of the last one does; returns that message.
    fn leave_one_behind(buffers: &mut ReadBuffers) -> Bytes {
        let mut buf = BytesMut::with_capacity(64);
        let held = read_message(&mut buf, 60);
        buffers.make_room(&mut buf, 64);
        assert_eq!(buffers.kept.len(), 1);
        held
    }

    #[test]
    fn a_quiet_connection_keeps_no_buffers() {
        let mut buffers = ReadBuffers::default();
        let _held = leave_one_behind(&mut buffers);
        buffers.note_read(10);
        assert!(
            !buffers.drained(64, never_asked),
            "a quiet read lets them go"
        );
        assert!(buffers.kept.is_empty());
    }

    #[test]
    fn a_quiet_connection_gives_back_its_read_buffer_unless_it_holds_part_of_a_frame() {
        let mut buffers = ReadBuffers::default();
        let mut buf = BytesMut::with_capacity(64);
        buf.extend_from_slice(b"MSG a 1 5\r\nhe");
        buffers.socket_empty(&mut buf, 64, never_asked);
        assert_eq!(&buf[..], b"MSG a 1 5\r\nhe", "part of a frame was dropped");
        buf.clear();
        buffers.socket_empty(&mut buf, 64, never_asked);
        assert_eq!(buf.capacity(), 0, "an idle connection kept its read buffer");
    }

    /// A fast stream empties the socket between the server's writes, each time after less
    /// than the streaming amount: what counts is what it reads in all.
    #[test]
    fn a_stream_read_in_small_pieces_keeps_its_buffers() {
        let t0 = Instant::now();
        let mut buffers = ReadBuffers::default();
        let _held = leave_one_behind(&mut buffers);
        buffers.note_read(40);
        assert!(!buffers.drained(64, || t0), "not streaming yet");
        let _held = leave_one_behind(&mut buffers);
        for i in 1..20u32 {
            buffers.note_read(40);
            let now = t0 + Duration::from_millis(10) * i;
            assert!(
                buffers.drained(64, || now),
                "let go while streaming, read {i}"
            );
        }
        assert_eq!(buffers.kept.len(), 1);
    }

    /// A stream that stops keeps its buffers through the window it last streamed in and the
    /// next one, then lets them go at the first empty socket.
    #[test]
    fn a_stream_that_stops_lets_its_buffers_go_a_window_later() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut buffers = ReadBuffers::default();
        let _held = leave_one_behind(&mut buffers);
        buffers.note_read(100);
        assert!(buffers.drained(64, || at(0)), "a full read streams");
        buffers.note_read(100);
        assert!(buffers.drained(64, || at(50)));
        // The window that began at 0 read enough: the next one keeps them, however quiet.
        buffers.note_read(1);
        assert!(buffers.drained(64, || at(120)));
        assert!(buffers.drained(64, || at(200)));
        assert_eq!(buffers.kept.len(), 1);
        // The window that began at 120 read nothing.
        assert!(
            !buffers.drained(64, || at(230)),
            "kept after the stream stopped"
        );
        assert!(buffers.kept.is_empty());
    }

    /// Replies to a stream of requests: many reads of a few bytes each, never the
    /// streaming amount of bytes, still stream, and keep the read buffer between reads.
    #[test]
    fn a_connection_that_reads_often_keeps_its_read_buffer() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut buffers = ReadBuffers::default();
        let mut buf = BytesMut::with_capacity(64);
        for _ in 1..STREAMING_READS {
            buffers.note_read(1);
            buffers.socket_empty(&mut buf, 64, never_asked);
            assert_eq!(
                buf.capacity(),
                0,
                "given back before the reads made a stream"
            );
            buf.reserve(64);
        }
        buffers.note_read(1);
        buffers.socket_empty(&mut buf, 64, || at(0));
        assert!(
            buf.capacity() >= 64,
            "a connection that reads often gave its buffer back"
        );
        // Reading as often in the next window keeps it; a window with fewer reads lets go.
        for _ in 0..STREAMING_READS {
            buffers.note_read(1);
        }
        assert!(buffers.drained(64, || at(110)));
        buffers.note_read(1);
        assert!(
            buffers.drained(64, || at(150)),
            "kept through the next window"
        );
        buffers.note_read(1);
        assert!(
            !buffers.drained(64, || at(220)),
            "kept after the reads slowed"
        );
    }

    #[test]
    fn a_lost_link_keeps_nothing() {
        let t0 = Instant::now();
        let mut buffers = ReadBuffers::default();
        let _held = leave_one_behind(&mut buffers);
        buffers.note_read(100);
        assert!(buffers.drained(64, || t0));
        buffers.clear();
        assert!(buffers.kept.is_empty());
        buffers.note_read(10);
        assert!(
            !buffers.drained(64, || t0),
            "the new link streams before it read"
        );
    }
}
