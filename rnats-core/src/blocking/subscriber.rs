//! The blocking [`Subscriber`]: an iterator over one subscription's messages.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::handle::Handle;
use super::state::{Inner, SubState};
use super::time::{TimedOut, deadline_after};
use crate::connection::LinkState;
use crate::error::{SubscriberError, UnsubscribeError};
use crate::message::Message;
use rnats_proto::MsgFrame;

/// One subscription. Iterating blocks until a message comes or the subscription ends
/// (unsubscribed, drained, auto-unsubscribed, refused by the server, or the client closed).
/// A thread waiting here reads the socket itself when no other thread does. Dropping it
/// unsubscribes.
///
/// It takes every message queued for it at once and hands them out one by one: a
/// subscription's limits (`subscription_capacity`, `subscription_capacity_bytes`) bound what
/// waits in its queue, not what its `Subscriber` has taken and not yet handed out.
pub struct Subscriber {
    client: Arc<Handle>,
    sid: u64,
    /// Messages taken from the queue in one go, handed out one by one (each cut from its
    /// frame as it goes).
    local: VecDeque<MsgFrame>,
    /// Messages taken from the queue so far: those handed out are these less `local`'s.
    taken: u64,
}

impl Subscriber {
    pub(super) fn new(client: Arc<Handle>, sid: u64) -> Subscriber {
        Subscriber {
            client,
            sid,
            local: VecDeque::new(),
            taken: 0,
        }
    }

    /// The subscription's id on the connection.
    pub fn sid(&self) -> u64 {
        self.sid
    }

    /// The next message, waiting up to `timeout`: `Ok(None)` once the subscription ended.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Message>, TimedOut> {
        // One taken already needs no deadline: no look at the clock a message. (Cut right
        // into the result: a `Message` moved out of an `Option` into it is a call to
        // `memcpy`, 5% of the CPU receiving 32-byte messages.)
        if let Some(frame) = self.local.pop_front() {
            return Ok(Some(Message::from_frame(frame)));
        }
        self.next_until(deadline_after(timeout))
            .ok_or(TimedOut(timeout))
    }

    /// The next message if one is already received; never waits.
    pub fn try_next(&mut self) -> Option<Message> {
        if self.local.is_empty() {
            let local = &mut self.local;
            queue_of(&self.client, self.sid, |queue| queue.take_all(local));
            self.taken += self.local.len() as u64;
        }
        self.local.pop_front().map(Message::from_frame)
    }

    /// Unsubscribes now. Messages already received stay readable; then the iterator ends.
    pub fn unsubscribe(&mut self) -> Result<(), UnsubscribeError> {
        self.check_open()?;
        self.inner().unsubscribe(self.sid, None, false);
        Ok(())
    }

    /// Ends the subscription after `n` messages in all (counting those already delivered).
    /// The server stops sending at the same count.
    pub fn unsubscribe_after(&mut self, n: u64) -> Result<(), UnsubscribeError> {
        self.check_open()?;
        self.inner().unsubscribe(self.sid, Some(n), false);
        Ok(())
    }

    /// Unsubscribes and waits (up to the drain timeout) until the server has sent what it
    /// had for this subscription; those messages stay readable, then the iterator ends.
    pub fn drain(&mut self) -> Result<(), UnsubscribeError> {
        self.check_open()?;
        let inner = self.inner();
        inner.unsubscribe(self.sid, None, true);
        let flushed =
            super::handle::flush_until(inner, deadline_after(inner.options.drain_timeout));
        inner.end_subscriptions(&[self.sid]);
        flushed.map_err(UnsubscribeError::from)
    }

    /// Messages dropped because this subscriber fell behind its queue limits.
    pub fn dropped(&self) -> u64 {
        self.with_queue(|queue| queue.dropped).unwrap_or(0)
    }

    /// Messages received for this subscription and not yet handed out, and their bytes
    /// (headers and payloads, as the server sent them): how far it lags (nats.go's
    /// `Pending`). What the client has not read off the socket yet is not counted. It
    /// walks the messages taken from the queue and not yet handed out: a call for a
    /// periodic metric, not one per message.
    pub fn pending(&self) -> (usize, usize) {
        let (messages, bytes) = self.with_queue(|queue| queue.queued()).unwrap_or((0, 0));
        let taken: usize = self.local.iter().map(MsgFrame::length).sum();
        (messages + self.local.len(), bytes + taken)
    }

    /// Messages handed out so far (nats.go's `Delivered`).
    pub fn delivered(&self) -> u64 {
        self.taken - self.local.len() as u64
    }

    /// Why the subscription ended early (permission denied), if it did.
    pub fn take_error(&mut self) -> Option<SubscriberError> {
        self.with_queue(|queue| queue.error.take()).flatten()
    }

    /// Runs `f` on this subscription's queue, if it is still in the table.
    fn with_queue<T>(&self, f: impl FnOnce(&mut SubState) -> T) -> Option<T> {
        queue_of(&self.client, self.sid, f)
    }

    fn inner(&self) -> &Inner {
        self.client.inner()
    }

    fn check_open(&self) -> Result<(), UnsubscribeError> {
        if self.inner().core().state == LinkState::Closed {
            return Err(UnsubscribeError::closed());
        }
        Ok(())
    }

    /// The next message, waiting until `deadline` (`None`: as long as it takes), or until the
    /// client has made a connection since it had made `connects` of them
    /// ([`Statistics::connects`](crate::Statistics::connects)): for rnats' crates (a pull
    /// consumer's request is gone with the connection it went out on).
    #[doc(hidden)]
    pub fn next_or_reconnect(&mut self, deadline: Option<Instant>, connects: u64) -> Woken {
        self.next_or(deadline, connects, None, &mut [])
    }

    /// [`next_or_reconnect`](Self::next_or_reconnect), also woken when the server has told
    /// of a changed cluster since the client counted `cluster_changes` of them
    /// ([`Client::cluster_changes`](super::Client::cluster_changes)): a pull request routed
    /// through a cut route may be gone without a word. And woken by messages on `watched`,
    /// other subscriptions of the same client (a debug build asserts it; a release one passes
    /// over any of another client), ahead of what waits in this one's queue (what this
    /// `Subscriber` has already taken comes first): [`Woken::Watched`] says some came, and
    /// they wait in those `Subscriber`s to be taken ([`try_next`](Self::try_next)); until
    /// they are, the wait returns at once. For rnats' crates (a pull consumer follows its
    /// leaders' election advisories and reads the answers to its questions).
    #[doc(hidden)]
    pub fn next_or_news_watching(
        &mut self,
        deadline: Option<Instant>,
        connects: u64,
        cluster_changes: u64,
        watched: &mut [Subscriber],
    ) -> Woken {
        debug_assert!(
            watched
                .iter()
                .all(|other| Arc::ptr_eq(&other.client, &self.client)),
            "watched subscriptions belong to the same client"
        );
        self.next_or(deadline, connects, Some(cluster_changes), watched)
    }

    fn next_or(
        &mut self,
        deadline: Option<Instant>,
        connects: u64,
        cluster_changes: Option<u64>,
        watched: &mut [Subscriber],
    ) -> Woken {
        if let Some(frame) = self.local.pop_front() {
            return Woken::Message(Message::from_frame(frame));
        }
        if watched.iter().any(|other| !other.local.is_empty()) {
            return Woken::Watched;
        }
        let sid = self.sid;
        let local = &mut self.local;
        let client = &self.client;
        let inner = client.inner();
        /// What the wait found, before the messages are cut outside the state lock.
        enum Found {
            Messages,
            Ended,
            Reconnected,
            ClusterChanged,
            Watched,
        }
        let found = inner.wait_for(deadline, |core| {
            // Every delivery wakes every waiter (one condition variable), so messages on a
            // watched subscription are seen here as soon as this one's would be, and first,
            // as news that may change what this one's mean.
            let mut news = false;
            for other in watched.iter_mut() {
                if !Arc::ptr_eq(&other.client, client) {
                    continue;
                }
                if let Some(entry) = core.session.subs.get_mut(other.sid) {
                    news |= entry.sink.take_all(&mut other.local);
                }
            }
            if news {
                return Some(Found::Watched);
            }
            let closed = core.state == LinkState::Closed;
            let Some(sub) = core.session.subs.get_mut(sid).map(|entry| &mut entry.sink) else {
                return Some(Found::Ended);
            };
            if sub.take_all(local) {
                return Some(Found::Messages);
            }
            if sub.ended || closed {
                return Some(Found::Ended);
            }
            // Bumped under this lock when a link is made, and the waiters woken.
            if inner.statistics.connects.load(Ordering::Relaxed) != connects {
                return Some(Found::Reconnected);
            }
            cluster_changes
                .is_some_and(|seen| core.cluster_changes != seen)
                .then_some(Found::ClusterChanged)
        });
        match found {
            None => Woken::TimedOut,
            Some(Found::Messages) => {
                self.taken += self.local.len() as u64;
                match self.local.pop_front() {
                    Some(frame) => Woken::Message(Message::from_frame(frame)),
                    None => Woken::Ended,
                }
            }
            Some(Found::Ended) => Woken::Ended,
            Some(Found::Reconnected) => Woken::Reconnected,
            Some(Found::ClusterChanged) => Woken::ClusterChanged,
            Some(Found::Watched) => {
                for other in watched.iter_mut() {
                    other.taken += other.local.len() as u64;
                }
                Woken::Watched
            }
        }
    }

    /// The next message (`Some(None)`: ended), or `None` when the deadline passed.
    fn next_until(&mut self, deadline: Option<Instant>) -> Option<Option<Message>> {
        if let Some(frame) = self.local.pop_front() {
            return Some(Some(Message::from_frame(frame)));
        }
        let sid = self.sid;
        let local = &mut self.local;
        let taken = self.client.inner().wait_for(deadline, |core| {
            let closed = core.state == LinkState::Closed;
            let Some(sub) = core.session.subs.get_mut(sid).map(|entry| &mut entry.sink) else {
                return Some(false);
            };
            if sub.take_all(local) {
                return Some(true);
            }
            (sub.ended || closed).then_some(false)
        })?;
        self.taken += self.local.len() as u64;
        // Cut outside the state lock, which the reader needs to deliver the next ones.
        Some(match taken {
            true => self.local.pop_front().map(Message::from_frame),
            false => None,
        })
    }
}

/// Runs `f` on the queue of subscription `sid` of `client`, if it is still in the table
/// (apart from [`Subscriber::with_queue`] so that a caller may lend `f` its own fields).
fn queue_of<T>(client: &Handle, sid: u64, f: impl FnOnce(&mut SubState) -> T) -> Option<T> {
    let mut core = client.inner().core();
    core.session
        .subs
        .get_mut(sid)
        .map(|entry| f(&mut entry.sink))
}

/// What [`Subscriber::next_or_reconnect`] came back with.
#[doc(hidden)]
#[derive(Debug)]
pub enum Woken {
    /// The next message.
    Message(Message),
    /// The subscription ended (unsubscribed, refused, or the client closed).
    Ended,
    /// The deadline passed first.
    TimedOut,
    /// The client connected again first.
    Reconnected,
    /// The server told of a changed cluster first (only from
    /// [`Subscriber::next_or_news_watching`]).
    ClusterChanged,
    /// Messages came on watched subscriptions first (only from
    /// [`Subscriber::next_or_news_watching`]); they wait in those `Subscriber`s.
    Watched,
}

impl Iterator for Subscriber {
    type Item = Message;

    fn next(&mut self) -> Option<Message> {
        self.next_until(None).flatten()
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let inner = self.inner();
        inner.unsubscribe(self.sid, None, false);
        inner.core().session.subs.remove(self.sid);
    }
}

impl fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Subscriber")
            .field("sid", &self.sid)
            .finish_non_exhaustive()
    }
}

impl Inner {
    /// Sends UNSUB (`max`: after that many messages in all). With `drain` the subscription
    /// keeps taking messages until [`Inner::end_subscriptions`].
    pub(super) fn unsubscribe(&self, sid: u64, max: Option<u64>, drain: bool) {
        let mut core = self.core();
        let connected = core.state == LinkState::Connected;
        let Some(entry) = core.session.subs.get_mut(sid) else {
            return;
        };
        if entry.sink.ended || entry.sink.draining {
            return;
        }
        match max {
            Some(n) => {
                entry.max = Some(n);
                entry.sink.ended = entry.delivered >= n;
            }
            None if drain => entry.sink.draining = true,
            None => entry.sink.ended = true,
        }
        if connected {
            let writes = self.write.writes();
            drop(core);
            self.write
                .send_control_locked(self, writes, |buf| rnats_proto::encode_unsub(buf, sid, max));
        }
    }

    /// Ends drained subscriptions: nothing more comes for them.
    pub(super) fn end_subscriptions(&self, sids: &[u64]) {
        let mut core = self.core();
        for sid in sids {
            if let Some(entry) = core.session.subs.get_mut(*sid) {
                entry.sink.ended = true;
            }
        }
        self.notify_changed(&core);
    }
}
