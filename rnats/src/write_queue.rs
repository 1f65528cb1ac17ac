//! The shared write queue: frames encoded by callers, waiting for the engine to write them.
//!
//! Callers encode their frames straight into this queue under a short lock, so a publish costs
//! one lock and a memcpy instead of a channel message. Small frames are flattened into one
//! contiguous buffer; a payload at or above [`VECTOR_THRESHOLD`] is kept as its own `Bytes`
//! segment and written zero-copy with a vectored write.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use tokio::sync::oneshot;

/// Payloads this large or larger are not copied into the flat buffer but sent as their own
/// slice. Below it a memcpy is cheaper than an extra iovec and the refcount traffic.
pub(crate) const VECTOR_THRESHOLD: usize = 16 * 1024;

/// What a `flush()` caller waits on: resolved when the PONG answering its PING arrives.
pub(crate) type PongWaiter = oneshot::Sender<()>;

/// Frames waiting to be written, in order: every segment in `segments` precedes `flat`.
#[derive(Debug, Default)]
pub(crate) struct WriteQueue {
    segments: VecDeque<Bytes>,
    flat: BytesMut,
    len: usize,
    /// Messages and payload bytes handed over since the engine last took the queue.
    pub(crate) out_messages: u64,
    pub(crate) out_bytes: u64,
}

impl WriteQueue {
    /// Bytes queued and not yet taken by the engine.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a small frame with `encode`, which must write exactly what it means to send.
    pub(crate) fn push_with(&mut self, encode: impl FnOnce(&mut BytesMut)) {
        let before = self.flat.len();
        encode(&mut self.flat);
        self.len += self.flat.len() - before;
    }

    /// Appends a message: `head` writes the control line (and header block), then the payload
    /// and the closing CRLF follow. Large payloads are queued as their own segment.
    pub(crate) fn push_message(&mut self, head: impl FnOnce(&mut BytesMut), payload: &Bytes) {
        let before = self.flat.len();
        head(&mut self.flat);
        let head_len = self.flat.len() - before;
        if payload.len() >= VECTOR_THRESHOLD {
            self.segments.push_back(self.flat.split().freeze());
            self.segments.push_back(payload.clone());
        } else {
            self.flat.extend_from_slice(payload);
        }
        self.flat.extend_from_slice(b"\r\n");
        self.len += head_len + payload.len() + 2;
        self.out_messages += 1;
        self.out_bytes += payload.len() as u64;
    }

    /// Moves everything queued into `out`, leaving this queue empty. `out.flat` must be empty;
    /// its allocation is swapped in so that neither side allocates in steady state.
    pub(crate) fn take_into(&mut self, out: &mut Outgoing) {
        debug_assert!(out.is_empty());
        std::mem::swap(&mut self.segments, &mut out.segments);
        std::mem::swap(&mut self.flat, &mut out.flat);
        out.flat_pos = 0;
        self.len = 0;
    }
}

/// The engine's side of the queue: bytes taken from [`WriteQueue`] and being written.
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    segments: VecDeque<Bytes>,
    flat: BytesMut,
    flat_pos: usize,
}

/// At most this many slices go into one vectored write.
const MAX_IOVECS: usize = 64;

/// The flat buffer keeps its capacity between batches unless a burst grew it past this.
const KEEP_FLAT_CAPACITY: usize = 1024 * 1024;

impl Outgoing {
    /// True when everything taken has been written.
    pub(crate) fn is_empty(&self) -> bool {
        self.segments.is_empty() && self.flat_pos >= self.flat.len()
    }

    /// Fills `slices` with what to write next, in order; returns how many were filled.
    pub(crate) fn io_slices<'a>(&'a self, slices: &mut [std::io::IoSlice<'a>]) -> usize {
        let mut n = 0;
        for segment in self.segments.iter().take(MAX_IOVECS.min(slices.len())) {
            slices[n] = std::io::IoSlice::new(segment);
            n += 1;
        }
        if n < slices.len() && self.flat_pos < self.flat.len() {
            slices[n] = std::io::IoSlice::new(&self.flat[self.flat_pos..]);
            n += 1;
        }
        n
    }

    /// Records that `written` bytes from the front have gone out.
    pub(crate) fn advance(&mut self, mut written: usize) {
        while written > 0 {
            let Some(front) = self.segments.front_mut() else { break };
            if written >= front.len() {
                written -= front.len();
                self.segments.pop_front();
            } else {
                let _ = front.split_to(written);
                return;
            }
        }
        self.flat_pos += written;
        if self.is_empty() {
            self.reset();
        }
    }

    fn reset(&mut self) {
        self.flat_pos = 0;
        if self.flat.capacity() > KEEP_FLAT_CAPACITY {
            self.flat = BytesMut::new();
        } else {
            self.flat.clear();
        }
    }
}

/// Array size for [`Outgoing::io_slices`].
pub(crate) const IOVECS: usize = MAX_IOVECS + 1;

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(out: &mut Outgoing) -> Vec<u8> {
        let mut all = Vec::new();
        while !out.is_empty() {
            let mut slices = [std::io::IoSlice::new(&[]); IOVECS];
            let n = out.io_slices(&mut slices);
            // Write at most 5 bytes at a time to exercise partial writes.
            let mut budget = 5;
            let mut written = 0;
            for s in &slices[..n] {
                let take = s.len().min(budget);
                all.extend_from_slice(&s[..take]);
                budget -= take;
                written += take;
                if budget == 0 {
                    break;
                }
            }
            out.advance(written);
        }
        all
    }

    #[test]
    fn small_and_large_frames_keep_their_order() {
        let mut q = WriteQueue::default();
        let big = Bytes::from(vec![b'x'; VECTOR_THRESHOLD]);
        q.push_with(|b| b.extend_from_slice(b"PING\r\n"));
        q.push_message(|b| b.extend_from_slice(b"PUB a 2\r\n"), &Bytes::from_static(b"hi"));
        q.push_message(|b| b.extend_from_slice(b"PUB b 16384\r\n"), &big);
        q.push_with(|b| b.extend_from_slice(b"PONG\r\n"));
        let expected_len = q.len();
        let mut out = Outgoing::default();
        q.take_into(&mut out);
        assert!(q.is_empty());
        let all = drain(&mut out);
        assert_eq!(all.len(), expected_len);
        let mut want = b"PING\r\nPUB a 2\r\nhi\r\nPUB b 16384\r\n".to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(b"\r\nPONG\r\n");
        assert_eq!(all, want);
        assert_eq!(q.out_messages, 2);
        assert_eq!(q.out_bytes, 2 + VECTOR_THRESHOLD as u64);
    }

    #[test]
    fn buffers_are_reused_between_batches() {
        let mut q = WriteQueue::default();
        let mut out = Outgoing::default();
        for round in 0..3 {
            q.push_message(|b| b.extend_from_slice(b"PUB a 1\r\n"), &Bytes::from_static(b"z"));
            q.take_into(&mut out);
            assert_eq!(drain(&mut out), b"PUB a 1\r\nz\r\n", "round {round}");
        }
    }
}
