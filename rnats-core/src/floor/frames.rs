//! Encoded frames waiting to be written. Who writes them is each driver's rule (the tokio
//! client's is in `writer.rs`).
//!
//! Callers encode their frames straight into the shared [`Frames`] under a short lock, so a
//! publish costs one lock and a memcpy instead of a channel message. Small frames are
//! flattened into one contiguous buffer; a payload at or above [`VECTOR_THRESHOLD`] is kept as
//! its own `Bytes` segment and written zero-copy with a vectored write.

use std::collections::VecDeque;
use std::io::IoSlice;

use bytes::{Buf, Bytes, BytesMut};

/// Payloads this large or larger are not copied into the flat buffer but sent as their own
/// slice. Below it a memcpy is cheaper than an extra iovec and the refcount traffic. At 16 KiB,
/// copying 8 KiB payloads was half of all the instructions of an 8 KiB publishing run (and 6x
/// what async-nats spends copying); referenced, the run costs 3.6x fewer instructions. At
/// 4 KiB a batch under the default write limit still fits in one vectored write (two slices
/// per message, [`MAX_IOVECS`] slices).
pub(crate) const VECTOR_THRESHOLD: usize = 4 * 1024;

/// At most this many slices go into one vectored write.
const MAX_IOVECS: usize = 64;

/// Array size for [`Frames::io_slices`]: the pieces plus the flat tail.
pub(crate) const IOVECS: usize = MAX_IOVECS + 1;

/// Room past the write limit for the frame that crosses it (publishers check the limit before
/// queueing a frame, not after).
const FRAME_SLACK: usize = 64 * 1024;

/// The flat buffer keeps its capacity between batches unless a burst grew it past this.
const KEEP_FLAT_CAPACITY: usize = 4 * 1024 * 1024;

/// A new flat buffer's capacity: a few hundred small frames. It grows with the batches (by
/// doubling, so a burst up to the default write limit costs five reallocations) and goes
/// back to this once they are small again ([`QUIET_BATCHES`]), so an idle connection holds
/// kilobytes, not the write limit (issue 22: 192 KiB reserved per queue, two per
/// connection, were most of an idle connection's 544 KiB).
const START_CAPACITY: usize = 8 * 1024;

/// A flat buffer larger than [`START_CAPACITY`] is replaced by a small one once this many
/// batches in a row have used under a quarter of it: a burst's buffer does not outlive the
/// burst, and a steady stream whose batch sizes vary does not reallocate at every small one.
const QUIET_BATCHES: u8 = 4;

/// A caller writes the queue to the socket itself (see [`Writer`]) only when it is flat and
/// at most this long: the write happens under the lock every publish takes.
const DIRECT_WRITE_MAX: usize = 64 * 1024;

/// Frames in order. Small frames are bytes of `flat`; a large payload is a `Bytes` of its
/// own, referenced rather than copied. `pieces` lists the order when large payloads are
/// queued: each `Flat(n)` is the next `n` bytes of `flat`. Whatever `flat` holds past the
/// pieces (`flat.len() - in_pieces` bytes) comes last. Without large payloads `pieces` stays
/// empty and a publish touches nothing but `flat`.
#[derive(Debug, Default)]
pub(crate) struct Frames {
    flat: BytesMut,
    pieces: VecDeque<Piece>,
    /// Bytes of `flat` covered by `Flat` pieces.
    in_pieces: usize,
    len: usize,
    /// `flat` is to be replaced by a small buffer once everything is written: it grew past
    /// [`KEEP_FLAT_CAPACITY`] (and the write limit), or [`QUIET_BATCHES`] batches in a row
    /// used little of it. Decided when a batch changes hands, while the capacity still
    /// counts the unwritten bytes (`advance` consumes capacity from the front, so it cannot
    /// be measured afterwards).
    oversized: bool,
    /// The most capacity kept between batches however they are used: the write limit plus
    /// [`FRAME_SLACK`], at least [`KEEP_FLAT_CAPACITY`].
    sized_for: usize,
    /// Batches in a row, up to the last handed over, that used under a quarter of `flat`.
    quiet: u8,
    /// Bytes that have left the front since these frames were made, written (`advance`) or
    /// handed to a writer (`take_into`): where a frame queued at a known point has got to.
    gone: u64,
}

/// A run of queued bytes; see [`Frames`].
#[derive(Debug)]
enum Piece {
    Flat(usize),
    Shared(Bytes),
}

impl Frames {
    /// Frames for a queue limited to `limit` bytes: the flat buffer starts small
    /// ([`START_CAPACITY`]) and grows with the batches, kept up to `limit` between them while
    /// they keep using it.
    pub(crate) fn with_limit(limit: usize) -> Frames {
        Frames {
            flat: BytesMut::with_capacity(START_CAPACITY),
            sized_for: limit + FRAME_SLACK,
            ..Frames::default()
        }
    }

    /// Bytes not yet written.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes that have left the front so far, written or handed over: a frame pushed when
    /// `gone() + len()` was `n` has left once `gone()` reaches `n`.
    pub(crate) fn gone(&self) -> u64 {
        self.gone
    }

    /// True when everything has been written.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Short enough for a caller to write it directly. Payloads sent by reference count like
    /// copied ones: since [`VECTOR_THRESHOLD`] is 4 KiB, a lone 8 KiB publish is vectored,
    /// and it must not lose the direct write a copied one had.
    pub(crate) fn is_small(&self) -> bool {
        self.len <= DIRECT_WRITE_MAX
    }

    /// Appends a small frame with `encode`.
    pub(crate) fn push_with(&mut self, encode: impl FnOnce(&mut BytesMut)) {
        let before = self.flat.len();
        encode(&mut self.flat);
        self.len += self.flat.len() - before;
    }

    /// Appends a message: `head` writes the control line (and header block), then the payload
    /// and the closing CRLF follow. Large payloads are referenced, not copied.
    #[inline]
    pub(crate) fn push_message(&mut self, head: impl FnOnce(&mut BytesMut), payload: &Bytes) {
        let before = self.flat.len();
        head(&mut self.flat);
        let head_len = self.flat.len() - before;
        if payload.len() >= VECTOR_THRESHOLD {
            self.close_flat_run();
            self.pieces.push_back(Piece::Shared(payload.clone()));
        } else {
            self.flat.extend_from_slice(payload);
        }
        self.flat.extend_from_slice(b"\r\n");
        self.len += head_len + payload.len() + 2;
    }

    /// Turns the bytes of `flat` not yet in a piece into one, so a shared piece can follow.
    fn close_flat_run(&mut self) {
        let tail = self.flat.len() - self.in_pieces;
        if tail > 0 {
            self.pieces.push_back(Piece::Flat(tail));
            self.in_pieces += tail;
        }
    }

    /// Appends everything in `other` after what is here (used once per reconnect).
    pub(crate) fn append(&mut self, other: Frames) {
        let mut offset = 0;
        for piece in other.pieces {
            match piece {
                Piece::Flat(n) => {
                    self.flat.extend_from_slice(&other.flat[offset..offset + n]);
                    offset += n;
                }
                Piece::Shared(bytes) => {
                    self.close_flat_run();
                    self.pieces.push_back(Piece::Shared(bytes));
                }
            }
        }
        self.flat.extend_from_slice(&other.flat[offset..]);
        self.len += other.len;
    }

    /// Swaps contents with `other`, which must be empty: the engine takes a whole batch this
    /// way, and the two flat buffers trade allocations instead of allocating.
    pub(crate) fn take_into(&mut self, other: &mut Frames) {
        debug_assert!(other.is_empty());
        let gone = self.gone + self.len as u64;
        std::mem::swap(self, other);
        self.gone = gone;
        other.note_batch();
        // A busy stream: the queue (empty now) takes the limit's worth at once, rather than
        // doubling past it while it fills.
        if other.flat.len() >= self.sized_for / 2 && self.flat.capacity() < self.sized_for {
            self.flat = BytesMut::with_capacity(self.sized_for);
        }
    }

    /// Decides, as a batch is handed over, whether `flat` is to be replaced by a small
    /// buffer once the batch is written: it grew past what is kept, or it has been mostly
    /// unused for [`QUIET_BATCHES`] batches.
    fn note_batch(&mut self) {
        let capacity = self.flat.capacity();
        if capacity > START_CAPACITY && self.flat.len() < capacity / 4 {
            self.quiet = self.quiet.saturating_add(1);
        } else {
            self.quiet = 0;
        }
        self.oversized |=
            capacity > KEEP_FLAT_CAPACITY.max(self.sized_for) || self.quiet >= QUIET_BATCHES;
    }

    /// Fills `slices` with what to write next, in order; returns how many were filled.
    pub(crate) fn io_slices<'a>(&'a self, slices: &mut [IoSlice<'a>; IOVECS]) -> usize {
        let mut n = 0;
        let mut offset = 0;
        for piece in &self.pieces {
            if n == MAX_IOVECS {
                // The rest, and the flat tail behind it, go in a later write.
                return n;
            }
            slices[n] = match piece {
                Piece::Flat(len) => {
                    offset += len;
                    IoSlice::new(&self.flat[offset - len..offset])
                }
                Piece::Shared(bytes) => IoSlice::new(bytes),
            };
            n += 1;
        }
        if offset < self.flat.len() {
            slices[n] = IoSlice::new(&self.flat[offset..]);
            n += 1;
        }
        n
    }

    /// Records that `written` bytes from the front have gone out.
    pub(crate) fn advance(&mut self, mut written: usize) {
        self.len -= written;
        self.gone += written as u64;
        while written > 0 {
            let Some(front) = self.pieces.front_mut() else {
                break;
            };
            let (piece_len, flat) = match front {
                Piece::Flat(len) => (*len, true),
                Piece::Shared(bytes) => (bytes.len(), false),
            };
            let step = written.min(piece_len);
            written -= step;
            if flat {
                self.flat.advance(step);
                self.in_pieces -= step;
            }
            if step == piece_len {
                self.pieces.pop_front();
            } else {
                match front {
                    Piece::Flat(len) => *len -= step,
                    Piece::Shared(bytes) => bytes.advance(step),
                }
            }
        }
        self.flat.advance(written);
        if self.len == 0 {
            // Everything is written: take back the capacity `advance` consumed from the front
            // (nothing to copy), so the next batch starts at the buffer's start and
            // `note_batch` sees the whole allocation.
            let _ = self.flat.try_reclaim(self.flat.capacity() + 1);
            let capacity = self.flat.capacity();
            if self.oversized || capacity > KEEP_FLAT_CAPACITY.max(self.sized_for) {
                self.flat = BytesMut::with_capacity(START_CAPACITY);
                self.oversized = false;
                self.quiet = 0;
            } else if capacity > self.sized_for && self.sized_for > 0 {
                // Doubling overshot the limit: a busy queue needs the limit's worth, no more
                // (two such buffers are what a publishing burst holds).
                self.flat = BytesMut::with_capacity(self.sized_for);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One partial write: takes at most `budget` bytes from the front of `frames` into
    /// `out`, as a socket that takes only part of a vectored write would. Returns how many.
    fn write_some(frames: &mut Frames, budget: usize, out: &mut Vec<u8>) -> usize {
        let mut slices = [IoSlice::new(&[]); IOVECS];
        let n = frames.io_slices(&mut slices);
        let mut written = 0;
        for s in &slices[..n] {
            let take = s.len().min(budget - written);
            out.extend_from_slice(&s[..take]);
            written += take;
        }
        frames.advance(written);
        written
    }

    fn drain(frames: &mut Frames) -> Vec<u8> {
        let mut all = Vec::new();
        while !frames.is_empty() {
            // At most 5 bytes at a time, to exercise partial writes.
            write_some(frames, 5, &mut all);
        }
        all
    }

    /// Frames pushed while earlier ones are partly written (a caller writing the queue it
    /// fills, `caller_write.rs`) keep one byte stream, whatever the mix of sizes.
    #[test]
    fn pushes_between_partial_writes_keep_the_stream() {
        let mut q = Frames::with_limit(16 * 1024);
        let mut want = Vec::new();
        let mut got = Vec::new();
        let mut seed = 7u64;
        let mut next = |bound: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % bound
        };
        for i in 0..3000u64 {
            let size = match next(3) {
                0 => 8192,
                1 => 1024,
                _ => 32,
            } as usize;
            let payload = Bytes::from(vec![(i % 251) as u8; size]);
            let head = format!("PUB s {size}\r\n");
            q.push_message(|b| b.extend_from_slice(head.as_bytes()), &payload);
            want.extend_from_slice(head.as_bytes());
            want.extend_from_slice(&payload);
            want.extend_from_slice(b"\r\n");
            if next(4) == 0 {
                let mut slices = [IoSlice::new(&[]); IOVECS];
                let n = q.io_slices(&mut slices);
                let total: usize = slices[..n].iter().map(|s| s.len()).sum();
                assert!(
                    total > 0 || q.is_empty(),
                    "nothing to write with {} queued",
                    q.len()
                );
                write_some(&mut q, next(total as u64 + 1) as usize, &mut got);
            }
        }
        got.extend(drain(&mut q));
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the stream changed");
    }

    #[test]
    fn small_and_large_frames_keep_their_order() {
        let mut q = Frames::default();
        let big = Bytes::from(vec![b'x'; VECTOR_THRESHOLD]);
        q.push_with(|b| b.extend_from_slice(b"PING\r\n"));
        q.push_message(
            |b| b.extend_from_slice(b"PUB a 2\r\n"),
            &Bytes::from_static(b"hi"),
        );
        q.push_message(|b| b.extend_from_slice(b"PUB b 16384\r\n"), &big);
        q.push_with(|b| b.extend_from_slice(b"PONG\r\n"));
        let expected_len = q.len();
        let mut out = Frames::default();
        q.take_into(&mut out);
        assert!(q.is_empty());
        let all = drain(&mut out);
        assert_eq!(all.len(), expected_len);
        let mut want = b"PING\r\nPUB a 2\r\nhi\r\nPUB b 16384\r\n".to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(b"\r\nPONG\r\n");
        assert_eq!(all, want);
    }

    #[test]
    fn append_keeps_the_order_of_both() {
        let big = Bytes::from(vec![b'y'; VECTOR_THRESHOLD]);
        let mut first = Frames::default();
        first.push_with(|b| b.extend_from_slice(b"SUB a 1\r\n"));
        let mut second = Frames::default();
        second.push_message(|b| b.extend_from_slice(b"PUB a 16384\r\n"), &big);
        second.push_with(|b| b.extend_from_slice(b"PING\r\n"));
        first.append(second);
        let mut want = b"SUB a 1\r\nPUB a 16384\r\n".to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(b"\r\nPING\r\n");
        assert_eq!(first.len(), want.len());
        assert_eq!(drain(&mut first), want);
    }

    #[test]
    fn more_pieces_than_one_write_takes_stay_in_order() {
        let mut q = Frames::default();
        let mut want = Vec::new();
        for i in 0..100u8 {
            let payload = Bytes::from(vec![i; VECTOR_THRESHOLD + usize::from(i)]);
            let head = format!("PUB s {}\r\n", payload.len());
            q.push_message(|b| b.extend_from_slice(head.as_bytes()), &payload);
            want.extend_from_slice(head.as_bytes());
            want.extend_from_slice(&payload);
            want.extend_from_slice(b"\r\n");
        }
        assert_eq!(q.len(), want.len());
        let mut all = Vec::new();
        while !q.is_empty() {
            let mut slices = [IoSlice::new(&[]); IOVECS];
            let n = q.io_slices(&mut slices);
            assert!(n <= MAX_IOVECS + 1);
            // Take whole slices but stop partway through the last one.
            let mut written = 0;
            for (k, s) in slices[..n].iter().enumerate() {
                let take = if k + 1 == n { s.len() / 2 + 1 } else { s.len() };
                all.extend_from_slice(&s[..take]);
                written += take;
            }
            q.advance(written);
        }
        assert!(all == want, "bytes out of order");
    }

    #[test]
    fn buffers_are_reused_between_batches() {
        let mut q = Frames::default();
        let mut out = Frames::default();
        for round in 0..3 {
            q.push_message(
                |b| b.extend_from_slice(b"PUB a 1\r\n"),
                &Bytes::from_static(b"z"),
            );
            q.take_into(&mut out);
            assert_eq!(drain(&mut out), b"PUB a 1\r\nz\r\n", "round {round}");
        }
    }

    #[test]
    fn a_flat_buffer_grown_by_a_burst_is_freed_once_written() {
        // Issue 9: the capacity was measured after `advance`, which consumes it from the
        // front, so a burst's buffer was freed only if the burst left much of it unused.
        let mut q = Frames::default();
        let payload = Bytes::from(vec![b'p'; 1024]);
        // Grow past the threshold by doubling, then fill the buffer almost to the end.
        while q.flat.capacity() <= KEEP_FLAT_CAPACITY || q.flat.capacity() - q.flat.len() > 2048 {
            q.push_message(|b| b.extend_from_slice(b"PUB a 1024\r\n"), &payload);
        }
        let mut out = Frames::default();
        q.take_into(&mut out);
        while !out.is_empty() {
            let n = out.len().min(1 << 20);
            out.advance(n);
        }
        // The next batch must not get the burst's allocation back.
        out.push_with(|b| b.extend_from_slice(&[b'x'; 4096]));
        assert!(
            out.flat.capacity() <= KEEP_FLAT_CAPACITY,
            "kept {} bytes",
            out.flat.capacity()
        );
    }

    /// Queues `bytes` bytes as one batch, hands it over and writes it; returns the capacity
    /// of the flat buffer the batch used.
    fn batch(q: &mut Frames, out: &mut Frames, bytes: usize) -> usize {
        q.push_with(|b| b.extend_from_slice(&vec![b'x'; bytes]));
        q.take_into(out);
        let capacity = out.flat.capacity();
        out.advance(out.len());
        capacity
    }

    #[test]
    fn a_burst_holds_two_buffers_of_the_limit_not_more() {
        let limit = 128 * 1024;
        let mut q = Frames::with_limit(limit);
        let mut out = Frames::with_limit(limit);
        let frame = vec![b'x'; 1000];
        for _ in 0..4 {
            // Publishers stop at the limit; the frame that crosses it is queued.
            while q.len() <= limit {
                q.push_with(|b| b.extend_from_slice(&frame));
            }
            q.take_into(&mut out);
            out.advance(out.len());
        }
        assert_eq!(q.flat.capacity(), limit + FRAME_SLACK);
        assert_eq!(out.flat.capacity(), limit + FRAME_SLACK);
    }

    #[test]
    fn a_new_queue_holds_little_whatever_its_limit() {
        let q = Frames::with_limit(2 * KEEP_FLAT_CAPACITY);
        assert_eq!(q.flat.capacity(), START_CAPACITY);
    }

    #[test]
    fn a_large_buffer_is_kept_while_batches_use_it_and_shrinks_after_quiet_ones() {
        let limit = 2 * KEEP_FLAT_CAPACITY;
        let mut q = Frames::with_limit(limit);
        let mut out = Frames::with_limit(limit);
        // Both buffers grow with a burst of large batches.
        for _ in 0..2 {
            assert!(batch(&mut q, &mut out, 1 << 20) >= 1 << 20);
        }
        // A few small batches in between do not cost a reallocation each...
        for _ in 0..2 * (QUIET_BATCHES as usize - 1) {
            assert!(
                batch(&mut q, &mut out, 100) >= 1 << 20,
                "no churn per batch"
            );
        }
        assert!(batch(&mut q, &mut out, 1 << 20) >= 1 << 20);
        assert!(batch(&mut q, &mut out, 1 << 20) >= 1 << 20);
        // ...but once the burst is over, each buffer goes back to a small one.
        for _ in 0..2 * QUIET_BATCHES {
            batch(&mut q, &mut out, 100);
        }
        assert_eq!(batch(&mut q, &mut out, 100), START_CAPACITY);
        assert_eq!(batch(&mut q, &mut out, 100), START_CAPACITY);
    }

    #[test]
    fn only_small_queues_are_written_directly() {
        let mut q = Frames::default();
        q.push_with(|b| b.extend_from_slice(b"PING\r\n"));
        assert!(q.is_small());
        q.push_message(
            |b| b.extend_from_slice(b"PUB b 8192\r\n"),
            &Bytes::from(vec![b'x'; 8192]),
        );
        assert!(
            q.is_small(),
            "a payload sent by reference may be written directly"
        );
        q.push_message(
            |b| b.extend_from_slice(b"PUB b 65536\r\n"),
            &Bytes::from(vec![b'x'; DIRECT_WRITE_MAX]),
        );
        assert!(!q.is_small(), "a large queue goes through the engine");
    }
}
