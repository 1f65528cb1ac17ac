//! The bounded queue between the engine and one [`Subscriber`](crate::Subscriber).
//!
//! Written by hand instead of using `tokio::sync::mpsc` because the bound is in messages AND
//! bytes, and because both sides move whole batches under one lock: the engine hands over
//! everything a read produced for the subscription at once (and wakes the subscriber once),
//! and the subscriber takes everything queued at once. When the subscriber keeps up, a batch
//! changes hands by swapping two `VecDeque`s, without moving a single message.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;

use rnats_proto::MsgFrame;

use crate::error::SubscriberError;
use crate::floor::sync::lock;

/// Capacity limits for one subscription queue. The subscriber's own batch, taken out of the
/// queue, is not counted, so up to twice these may be held in all.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) messages: usize,
    pub(crate) bytes: usize,
    /// A lagging subscription copies out batches smaller than this (a quarter of the read
    /// buffer): those pin a whole read buffer for few bytes. Larger batches use their
    /// buffer well and stay zero-copy.
    pub(crate) copy_below: usize,
}

/// What happened to a batch handed to [`SubQueue::push_batch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Pushed {
    /// Messages queued.
    pub(crate) queued: usize,
    /// Messages dropped because the queue was full.
    pub(crate) dropped: u64,
    /// The drops began a new slow-consumer episode, to be reported once.
    pub(crate) new_episode: bool,
}

/// Batches a lagging subscription may hold as slices of the engine's read buffers before
/// small batches are copied out as they are queued (see [`Limits::copy_below`]). Each batch
/// is one read, so what a subscription pins is about this many buffers plus four times its
/// queued bytes: without it, 65,536 queued 32-byte messages could pin 65,536 buffers of
/// 64 KiB (issue 9, bug 6), since the byte limit counts message lengths, not what they pin.
const MAX_PINNED_BATCHES: usize = 16;

#[derive(Debug, Default)]
struct Inner {
    messages: VecDeque<MsgFrame>,
    bytes: usize,
    /// Batches queued since the subscriber last took the queue.
    batches: usize,
    closed: bool,
    error: Option<SubscriberError>,
    dropped: u64,
    in_slow_episode: bool,
}

/// One subscription's queue; shared by the engine (producer) and the subscriber (consumer).
#[derive(Debug)]
pub(crate) struct SubQueue {
    inner: Mutex<Inner>,
    waker: AtomicWaker,
    limits: Limits,
}

impl SubQueue {
    pub(crate) fn new(limits: Limits) -> SubQueue {
        SubQueue {
            inner: Mutex::new(Inner::default()),
            waker: AtomicWaker::new(),
            limits,
        }
    }

    /// Queues `batch` (`bytes` is the sum of its messages' lengths), leaving `batch` empty,
    /// and wakes the subscriber if anything was queued. Messages past the limits are dropped.
    /// `buffer` is the size of the read buffer the messages are slices of: a lagging
    /// subscription copies out batches under a quarter of it (and under
    /// [`Limits::copy_below`]), so what it pins stays within four times its queued bytes
    /// however large the engine's reads have grown.
    #[inline]
    pub(crate) fn push_batch(
        &self,
        batch: &mut VecDeque<MsgFrame>,
        bytes: usize,
        buffer: usize,
    ) -> Pushed {
        let mut pushed = Pushed::default();
        {
            let mut inner = lock(&self.inner);
            if inner.closed {
                batch.clear();
                return pushed;
            }
            let fits = inner.messages.len() + batch.len() <= self.limits.messages
                && inner.bytes + bytes <= self.limits.bytes;
            if fits && inner.messages.is_empty() {
                // The subscriber kept up: trade containers instead of moving messages.
                std::mem::swap(&mut inner.messages, batch);
                inner.bytes = bytes;
                inner.batches = 1;
                pushed.queued = inner.messages.len();
                inner.in_slow_episode = false;
            } else {
                pushed = self.push_behind(&mut inner, batch, bytes, buffer, fits);
            }
        }
        if pushed.queued > 0 {
            self.waker.wake();
        }
        pushed
    }

    /// The slow path of [`SubQueue::push_batch`]: the subscriber lags, so the batch goes
    /// behind what is queued, within the limits (`fits`: all of it is within them). Out of
    /// line so the path of a subscriber that keeps up stays small.
    #[inline(never)]
    fn push_behind(
        &self,
        inner: &mut Inner,
        batch: &mut VecDeque<MsgFrame>,
        bytes: usize,
        buffer: usize,
        fits: bool,
    ) -> Pushed {
        let mut pushed = Pushed::default();
        inner.batches += 1;
        let copy_below = self.limits.copy_below.max(buffer / 4);
        let copy = inner.batches > MAX_PINNED_BATCHES && bytes < copy_below;
        if fits && !copy && !batch.is_empty() {
            // A subscriber a few batches behind: the batch moves in one block copy rather
            // than one call per message.
            pushed.queued = batch.len();
            inner.bytes += bytes;
            inner.messages.append(batch);
            inner.in_slow_episode = false;
            return pushed;
        }
        for mut message in batch.drain(..) {
            let room = inner.messages.len() < self.limits.messages
                && (inner.bytes + message.length() <= self.limits.bytes
                    || inner.messages.is_empty());
            if room {
                if copy {
                    message.detach();
                }
                inner.bytes += message.length();
                inner.messages.push_back(message);
                inner.in_slow_episode = false;
                pushed.queued += 1;
            } else {
                pushed.dropped += 1;
                if !inner.in_slow_episode {
                    inner.in_slow_episode = true;
                    pushed.new_episode = true;
                }
            }
        }
        inner.dropped += pushed.dropped;
        pushed
    }

    /// Ends the stream after what is already queued, optionally recording why.
    pub(crate) fn close(&self, error: Option<SubscriberError>) {
        {
            let mut inner = lock(&self.inner);
            inner.closed = true;
            if inner.error.is_none() {
                inner.error = error;
            }
        }
        self.waker.wake();
    }

    /// The messages queued and their bytes.
    pub(crate) fn queued(&self) -> (usize, usize) {
        let inner = lock(&self.inner);
        (inner.messages.len(), inner.bytes)
    }

    /// Messages dropped so far because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        lock(&self.inner).dropped
    }

    /// Takes the error that closed the subscription, if any.
    pub(crate) fn take_error(&self) -> Option<SubscriberError> {
        lock(&self.inner).error.take()
    }

    /// Moves everything queued into `local` (which must be empty). `Ready(false)` once closed
    /// and empty; `Pending` (with the waker registered) when there is nothing yet.
    pub(crate) fn poll_take(
        &self,
        cx: &mut Context<'_>,
        local: &mut VecDeque<MsgFrame>,
    ) -> Poll<bool> {
        if let Some(ready) = self.try_take(local) {
            return Poll::Ready(ready);
        }
        self.waker.register(cx.waker());
        // Look again: a push may have landed between the first look and the registration.
        match self.try_take(local) {
            Some(ready) => Poll::Ready(ready),
            None => Poll::Pending,
        }
    }

    fn try_take(&self, local: &mut VecDeque<MsgFrame>) -> Option<bool> {
        let mut inner = lock(&self.inner);
        if !inner.messages.is_empty() {
            std::mem::swap(&mut inner.messages, local);
            inner.bytes = 0;
            inner.batches = 0;
            Some(true)
        } else if inner.closed {
            Some(false)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use bytes::{Bytes, BytesMut};
    use rnats_proto::Parser;

    /// A read buffer: where its memory lies, and the part of it no message took, which
    /// holds on to it so that the memory is not reused while a test looks at where messages
    /// point.
    struct Buffer {
        memory: std::ops::Range<usize>,
        _rest: Bytes,
    }

    impl Buffer {
        fn holds(&self, message: &MsgFrame) -> bool {
            self.memory
                .contains(&(message.as_bytes().as_ptr() as usize))
        }
    }

    /// A read buffer of at least `buffer_len` bytes holding `MSG`s with payloads of `lens`
    /// bytes (each byte `r`), then filler; returns those messages as the engine decodes them
    /// (views into the buffer), and the buffer.
    fn read(lens: &[usize], buffer_len: usize) -> (VecDeque<MsgFrame>, Buffer) {
        let mut wire = Vec::new();
        for &len in lens {
            wire.extend_from_slice(format!("MSG a 1 {len}\r\n").as_bytes());
            wire.resize(wire.len() + len, b'r');
            wire.extend_from_slice(b"\r\n");
        }
        read_wire(&wire, lens.len(), buffer_len)
    }

    /// A read buffer of at least `buffer_len` bytes holding `wire`, then filler; returns the
    /// `count` messages `wire` holds as the engine decodes them, and the buffer.
    fn read_wire(wire: &[u8], count: usize, buffer_len: usize) -> (VecDeque<MsgFrame>, Buffer) {
        let mut buf = BytesMut::with_capacity(buffer_len.max(wire.len()));
        buf.extend_from_slice(wire);
        buf.resize(buf.capacity(), b'-');
        let start = buf.as_ptr() as usize;
        let memory = start..start + buf.len();
        let mut parser = Parser::default();
        let frames = (0..count)
            .map(|_| {
                let decoded = parser.decode_frame_with(&mut buf, Some, |_| None);
                decoded.ok().flatten().flatten().expect("a whole MSG")
            })
            .collect();
        let buffer = Buffer {
            memory,
            _rest: buf.freeze(),
        };
        (frames, buffer)
    }

    fn batch(lens: &[usize]) -> (VecDeque<MsgFrame>, usize) {
        (read(lens, 0).0, lens.iter().sum())
    }

    fn take_all(q: &SubQueue) -> Vec<usize> {
        let mut local = VecDeque::new();
        match q.try_take(&mut local) {
            Some(true) => local.iter().map(|m| m.length()).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn bounded_by_message_count_with_one_report_per_episode() {
        let q = SubQueue::new(Limits {
            messages: 2,
            bytes: 1 << 20,
            copy_below: 16 * 1024,
        });
        let (mut b, n) = batch(&[1, 1, 1, 1]);
        let pushed = q.push_batch(&mut b, n, 0);
        assert_eq!(
            pushed,
            Pushed {
                queued: 2,
                dropped: 2,
                new_episode: true
            }
        );
        let (mut b, n) = batch(&[1]);
        assert_eq!(
            q.push_batch(&mut b, n, 0),
            Pushed {
                queued: 0,
                dropped: 1,
                new_episode: false
            }
        );
        assert_eq!(q.dropped(), 3);
        assert_eq!(take_all(&q), [1, 1]);
        let (mut b, n) = batch(&[1, 1, 1]);
        assert_eq!(
            q.push_batch(&mut b, n, 0),
            Pushed {
                queued: 2,
                dropped: 1,
                new_episode: true
            }
        );
    }

    #[test]
    fn bounded_by_bytes_but_one_oversize_message_still_fits_an_empty_queue() {
        let q = SubQueue::new(Limits {
            messages: 100,
            bytes: 10,
            copy_below: 16 * 1024,
        });
        let (mut b, n) = batch(&[50, 1]);
        assert_eq!(q.push_batch(&mut b, n, 0).queued, 1);
        assert_eq!(take_all(&q), [50]);
        let (mut b, n) = batch(&[6, 4, 1]);
        assert_eq!(
            q.push_batch(&mut b, n, 0),
            Pushed {
                queued: 2,
                dropped: 1,
                new_episode: true
            }
        );
    }

    #[test]
    fn a_batch_that_fits_an_empty_queue_is_swapped_in_whole() {
        let q = SubQueue::new(Limits {
            messages: 10,
            bytes: 1000,
            copy_below: 16 * 1024,
        });
        let (mut b, n) = batch(&[1, 2, 3]);
        assert_eq!(q.push_batch(&mut b, n, 0).queued, 3);
        assert!(b.is_empty());
        assert_eq!(take_all(&q), [1, 2, 3]);
    }

    #[test]
    fn batches_behind_a_lagging_subscriber_keep_their_order_and_the_limits() {
        let q = SubQueue::new(Limits {
            messages: 6,
            bytes: 100,
            copy_below: 0,
        });
        for lens in [&[1, 2][..], &[3, 4], &[5]] {
            let (mut b, n) = batch(lens);
            assert_eq!(q.push_batch(&mut b, n, 0).queued, lens.len());
            assert!(b.is_empty());
        }
        // One more message fits by count; the second of this batch does not.
        let (mut b, n) = batch(&[6, 7]);
        let pushed = q.push_batch(&mut b, n, 0);
        assert_eq!((pushed.queued, pushed.dropped), (1, 1));
        assert_eq!(take_all(&q), [1, 2, 3, 4, 5, 6]);
        // Taking the queue gave back its byte count: a full batch fits again.
        let (mut b, n) = batch(&[50, 50]);
        assert_eq!(q.push_batch(&mut b, n, 0).queued, 2);
        let (mut b, n) = batch(&[1]);
        assert_eq!(
            q.push_batch(&mut b, n, 0).dropped,
            1,
            "100 bytes are queued"
        );
    }

    /// Pushes `count` batches of one message each, its payload `len` bytes at the start of a
    /// fresh read buffer of `buffer_len` bytes (from a read of `read_len`, 0: the default
    /// size); returns the buffers.
    fn push_sliced_batches(
        q: &SubQueue,
        count: usize,
        buffer_len: usize,
        len: usize,
        read_len: usize,
    ) -> Vec<Buffer> {
        (0..count)
            .map(|_| {
                let (mut b, buffer) = read(&[len], buffer_len);
                q.push_batch(&mut b, len, read_len);
                buffer
            })
            .collect()
    }

    /// How many of `messages` still point into one of `buffers`.
    fn pinning(messages: &VecDeque<MsgFrame>, buffers: &[Buffer]) -> usize {
        messages
            .iter()
            .filter(|m| buffers.iter().any(|b| b.holds(m)))
            .count()
    }

    #[test]
    fn a_lagging_subscription_stops_pinning_read_buffers() {
        let q = SubQueue::new(Limits {
            messages: 1 << 20,
            bytes: 1 << 30,
            copy_below: 16 * 1024,
        });
        // Each batch is one 64 KiB read buffer with one small message sliced out of it.
        let buffers = push_sliced_batches(&q, 100, 64 * 1024, 32, 0);
        let mut local = VecDeque::new();
        assert_eq!(q.try_take(&mut local), Some(true));
        let pinning = pinning(&local, &buffers);
        assert_eq!(local.len(), 100, "nothing dropped");
        assert!(
            pinning <= MAX_PINNED_BATCHES,
            "{pinning} queued messages still pin a read buffer each"
        );
        assert!(local.iter().all(|m| {
            let payload = m.clone().into_msg().payload;
            payload.len() == 32 && payload[0] == b'r'
        }));
    }

    #[test]
    fn a_lagging_subscription_whose_batches_fill_their_buffers_stays_zero_copy() {
        let q = SubQueue::new(Limits {
            messages: 1 << 20,
            bytes: 1 << 30,
            copy_below: 16 * 1024,
        });
        // One read's batch: 1,000 messages of 32 bytes out of one buffer, handed over 100
        // times.
        let (read_batch, buffer) = read(&[32; 1000], 64 * 1024);
        for _ in 0..100 {
            let mut b = read_batch.clone();
            q.push_batch(&mut b, 32_000, 0);
        }
        let mut local = VecDeque::new();
        assert_eq!(q.try_take(&mut local), Some(true));
        assert_eq!(local.len(), 100_000);
        assert!(local.iter().all(|m| buffer.holds(m)));
    }

    #[test]
    fn batches_under_a_quarter_of_a_grown_read_buffer_are_copied_when_lagging() {
        let q = SubQueue::new(Limits {
            messages: 1 << 20,
            bytes: 1 << 30,
            copy_below: 16 * 1024,
        });
        // Reads grew to 256 KiB; each batch is 32 KiB of it: over `copy_below`, but it would
        // pin eight times its bytes.
        let buffers = push_sliced_batches(&q, 40, 256 * 1024, 32 * 1024, 256 * 1024);
        let mut local = VecDeque::new();
        assert_eq!(q.try_take(&mut local), Some(true));
        let pinning = pinning(&local, &buffers);
        assert_eq!(local.len(), 40, "nothing dropped");
        assert!(pinning <= MAX_PINNED_BATCHES, "{pinning} pin a buffer each");
    }

    #[test]
    fn a_message_copied_out_keeps_its_subject_reply_headers_and_payload() {
        let q = SubQueue::new(Limits {
            messages: 1 << 20,
            bytes: 1 << 30,
            copy_below: 16 * 1024,
        });
        let count = 2 * MAX_PINNED_BATCHES + 8;
        let buffers: Vec<Buffer> = (0..count)
            .map(|i| {
                let payload = format!("payload {i}");
                let block = format!("NATS/1.0\r\nSeq: {i}\r\n\r\n");
                let (head, total) = (block.len(), block.len() + payload.len());
                let wire = format!("HMSG a.{i} 1 r.{i} {head} {total}\r\n{block}{payload}\r\n");
                let (mut b, buffer) = read_wire(wire.as_bytes(), 1, 64 * 1024);
                q.push_batch(&mut b, total, 0);
                buffer
            })
            .collect();
        let mut local = VecDeque::new();
        assert_eq!(q.try_take(&mut local), Some(true));
        assert_eq!(local.len(), count, "nothing dropped");
        let pinning = pinning(&local, &buffers);
        assert!(pinning <= MAX_PINNED_BATCHES, "{pinning} pin a buffer each");
        for (i, frame) in local.into_iter().enumerate() {
            let msg = frame.into_msg();
            assert_eq!(msg.subject.as_str(), format!("a.{i}"));
            let reply = msg.reply.as_ref().map(|r| r.as_str().to_owned());
            assert_eq!(reply, Some(format!("r.{i}")));
            let headers = msg.headers.expect("headers");
            assert_eq!(headers.get("Seq").unwrap().as_str(), i.to_string());
            assert_eq!(&msg.payload[..], format!("payload {i}").as_bytes());
        }
    }

    /// What the delivery's documentation says of a message's size against its frame's.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_message_takes_168_bytes_where_its_frame_takes_80() {
        assert_eq!(std::mem::size_of::<crate::Message>(), 168);
        assert_eq!(std::mem::size_of::<MsgFrame>(), 80);
    }

    #[test]
    fn close_ends_after_queued_messages() {
        let q = SubQueue::new(Limits {
            messages: 10,
            bytes: 1000,
            copy_below: 16 * 1024,
        });
        let (mut b, n) = batch(&[1]);
        q.push_batch(&mut b, n, 0);
        q.close(None);
        let (mut b, n) = batch(&[1]);
        assert_eq!(q.push_batch(&mut b, n, 0).queued, 0);
        let mut local = VecDeque::new();
        assert_eq!(q.try_take(&mut local), Some(true));
        assert_eq!(local.len(), 1);
        local.clear();
        assert_eq!(q.try_take(&mut local), Some(false));
    }
}
