//! The bounded queue between the engine and one [`Subscriber`](crate::Subscriber).
//!
//! Written by hand instead of using `tokio::sync::mpsc` for two reasons: the bound is in
//! messages AND bytes, and the engine must push a whole read batch and wake the subscriber
//! once at the end of the batch rather than once per message.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;

use crate::Message;
use crate::error::SubscriberError;

/// Why a queue stopped accepting messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Push {
    /// Queued; when `wake` is true the caller must call [`SubQueue::wake`] at the end of its
    /// batch (it is false when an earlier push of the same batch already asked for that).
    Queued {
        /// Whether this push is the first since the last wake.
        wake: bool,
    },
    /// Dropped because the queue is full; `first` is true for the first drop of an episode.
    Dropped { first: bool },
    /// The subscription is closed; the message is discarded.
    Closed,
}

/// Capacity limits for one subscription queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) messages: usize,
    pub(crate) bytes: usize,
}

#[derive(Debug)]
struct Inner {
    messages: VecDeque<Message>,
    bytes: usize,
    closed: bool,
    error: Option<SubscriberError>,
    dropped: u64,
    in_slow_episode: bool,
    wake_pending: bool,
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
            inner: Mutex::new(Inner {
                messages: VecDeque::new(),
                bytes: 0,
                closed: false,
                error: None,
                dropped: 0,
                in_slow_episode: false,
                wake_pending: false,
            }),
            waker: AtomicWaker::new(),
            limits,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding this lock cannot leave the queue half-updated in a way that
        // matters more than losing the subscription, so poisoning is ignored.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a message without waking the consumer (see [`SubQueue::wake`]).
    pub(crate) fn push(&self, message: Message) -> Push {
        let mut inner = self.lock();
        if inner.closed {
            return Push::Closed;
        }
        let size = message.length;
        let full = inner.messages.len() >= self.limits.messages
            || (inner.bytes + size > self.limits.bytes && !inner.messages.is_empty());
        if full {
            inner.dropped += 1;
            let first = !inner.in_slow_episode;
            inner.in_slow_episode = true;
            return Push::Dropped { first };
        }
        inner.in_slow_episode = false;
        inner.bytes += size;
        inner.messages.push_back(message);
        let wake = !inner.wake_pending;
        inner.wake_pending = true;
        Push::Queued { wake }
    }

    /// Wakes the consumer; called once per read batch that queued something.
    pub(crate) fn wake(&self) {
        self.lock().wake_pending = false;
        self.waker.wake();
    }

    /// Ends the stream after what is already queued, optionally recording why.
    pub(crate) fn close(&self, error: Option<SubscriberError>) {
        {
            let mut inner = self.lock();
            inner.closed = true;
            if inner.error.is_none() {
                inner.error = error;
            }
        }
        self.waker.wake();
    }

    /// Messages dropped so far because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.lock().dropped
    }

    /// Takes the error that closed the subscription, if any.
    pub(crate) fn take_error(&self) -> Option<SubscriberError> {
        self.lock().error.take()
    }

    /// Next message, `Ready(None)` once closed and empty.
    pub(crate) fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Message>> {
        if let Some(ready) = self.try_next() {
            return Poll::Ready(ready);
        }
        self.waker.register(cx.waker());
        // Check again: a push may have landed between the first look and the registration.
        match self.try_next() {
            Some(ready) => Poll::Ready(ready),
            None => Poll::Pending,
        }
    }

    fn try_next(&self) -> Option<Option<Message>> {
        let mut inner = self.lock();
        match inner.messages.pop_front() {
            Some(message) => {
                inner.bytes -= message.length;
                Some(Some(message))
            }
            None if inner.closed => Some(None),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use rnats_proto::Subject;

    fn message(len: usize) -> Message {
        Message {
            subject: Subject::from_static("a"),
            reply: None,
            payload: Bytes::from(vec![0; len]),
            headers: None,
            status: None,
            description: None,
            length: len,
        }
    }

    #[test]
    fn bounded_by_message_count_with_one_report_per_episode() {
        let q = SubQueue::new(Limits {
            messages: 2,
            bytes: 1 << 20,
        });
        assert_eq!(q.push(message(1)), Push::Queued { wake: true });
        assert_eq!(q.push(message(1)), Push::Queued { wake: false });
        assert_eq!(q.push(message(1)), Push::Dropped { first: true });
        assert_eq!(q.push(message(1)), Push::Dropped { first: false });
        assert_eq!(q.dropped(), 2);
        assert!(q.try_next().is_some());
        q.wake();
        assert_eq!(q.push(message(1)), Push::Queued { wake: true });
        assert_eq!(q.push(message(1)), Push::Dropped { first: true });
    }

    #[test]
    fn bounded_by_bytes_but_one_oversize_message_still_fits_an_empty_queue() {
        let q = SubQueue::new(Limits {
            messages: 100,
            bytes: 10,
        });
        assert!(matches!(q.push(message(50)), Push::Queued { .. }));
        assert_eq!(q.push(message(1)), Push::Dropped { first: true });
        assert!(q.try_next().is_some());
        assert!(matches!(q.push(message(6)), Push::Queued { .. }));
        assert!(matches!(q.push(message(4)), Push::Queued { .. }));
        assert_eq!(q.push(message(1)), Push::Dropped { first: true });
    }

    #[test]
    fn close_ends_after_queued_messages() {
        let q = SubQueue::new(Limits {
            messages: 10,
            bytes: 1000,
        });
        q.push(message(1));
        q.close(None);
        assert_eq!(q.push(message(1)), Push::Closed);
        assert!(matches!(q.try_next(), Some(Some(_))));
        assert!(matches!(q.try_next(), Some(None)));
    }
}
