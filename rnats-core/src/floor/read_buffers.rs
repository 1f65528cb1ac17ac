//! Read buffers a connection recycles.
//!
//! Messages are slices of the buffer they were read into, so a buffer cannot be written
//! again while a subscriber still holds one of its messages: the next read needs another.
//! Allocated fresh each time, every byte of a stream lands in memory the kernel must fault
//! in and zero, and the allocator gives back at once (a receiving run of 1 KiB messages
//! took four times the page faults of the raw client, a fault per 4 KiB received). So the
//! buffers a connection reads into are kept once left behind, and reused once every message
//! sliced from them is gone (`BytesMut::try_reclaim` says so without allocating).

use bytes::BytesMut;

/// At most this many left-behind buffers are kept (each at most the largest read, 256 KiB
/// by default): a subscriber that keeps up has released a buffer's messages by the time a
/// few more have been read; one that lags pins them anyway.
const KEPT: usize = 4;

/// A connection's left-behind read buffers.
#[derive(Debug, Default)]
pub(crate) struct ReadBuffers {
    kept: Vec<BytesMut>,
    /// Bytes read since the socket was last found empty.
    streamed: usize,
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
    }

    /// The socket has nothing more to read. Returns whether the connection is streaming (it
    /// read at least `streaming` bytes since the socket was last empty): then its buffers
    /// stay for the next read. Otherwise the kept ones are let go (the caller lets go of its
    /// empty read buffer too), so a quiet connection holds none: at the latest the server's
    /// answer to a keepalive PING is such a quiet read.
    pub(crate) fn drained(&mut self, streaming: usize) -> bool {
        let streamed = std::mem::take(&mut self.streamed);
        if streamed >= streaming {
            return true;
        }
        self.kept.clear();
        false
    }

    /// The link is gone: nothing is kept for the next one.
    pub(crate) fn clear(&mut self) {
        self.kept.clear();
        self.streamed = 0;
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

    #[test]
    fn a_quiet_connection_keeps_no_buffers() {
        let mut buffers = ReadBuffers::default();
        let mut buf = BytesMut::with_capacity(64);
        let held = read_message(&mut buf, 60);
        buffers.make_room(&mut buf, 64);
        assert_eq!(buffers.kept.len(), 1);
        buffers.note_read(100);
        assert!(buffers.drained(64), "a stream keeps its buffers");
        assert_eq!(buffers.kept.len(), 1);
        buffers.note_read(10);
        assert!(!buffers.drained(64), "a quiet read lets them go");
        assert!(buffers.kept.is_empty());
        drop(held);
    }
}
