//! [`Subscriber`]: a stream of the messages of one subscription.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::Message;
use crate::error::{FlushCause, FlushError, SubscriberError, UnsubscribeError};
use crate::shared::{ClientHandle, Shared, Sink};
use crate::sub_queue::SubQueue;
use rnats_proto::MsgFrame;

/// The messages of one subscription, as a [`Stream`]. Dropping it unsubscribes.
pub struct Subscriber {
    client: Arc<ClientHandle>,
    sid: u64,
    queue: Arc<SubQueue>,
    /// Messages taken from the queue in one go, handed out one by one (each cut from its
    /// frame as it goes).
    local: VecDeque<MsgFrame>,
    /// Messages taken from the queue so far: those handed out are these less `local`'s, so
    /// counting them costs nothing a message.
    taken: u64,
    /// UNSUB already sent (or the subscription ended on its own); nothing to do on drop.
    unsubscribed: bool,
}

impl Subscriber {
    pub(crate) fn new(client: Arc<ClientHandle>, sid: u64, queue: Arc<SubQueue>) -> Subscriber {
        Subscriber {
            client,
            sid,
            queue,
            local: VecDeque::new(),
            taken: 0,
            unsubscribed: false,
        }
    }

    /// The subscription id on this connection.
    pub fn sid(&self) -> u64 {
        self.sid
    }

    /// Unsubscribes now. Messages already received stay readable; then the stream ends.
    pub async fn unsubscribe(&mut self) -> Result<(), UnsubscribeError> {
        self.unsubscribe_now()
    }

    /// Ends the subscription after `n` messages in all (counting those already delivered).
    /// The server stops sending at the same count.
    pub async fn unsubscribe_after(&mut self, n: u64) -> Result<(), UnsubscribeError> {
        let shared = self.shared();
        let Some(done) = shared.session().subs.set_max(self.sid, n) else {
            return Ok(());
        };
        if done {
            return self.unsubscribe_now();
        }
        let sid = self.sid;
        if !shared.push_control(|buf| rnats_proto::encode_unsub(buf, sid, Some(n))) {
            return Err(UnsubscribeError::closed());
        }
        Ok(())
    }

    /// Drains the subscription: tells the server to stop sending, waits until every message it
    /// sent before that has arrived, then ends the stream after the last one. While the
    /// connection is down nothing is on its way: the stream ends at once. Dropping the
    /// future ends the stream too (after what it already holds).
    pub async fn drain(&mut self) -> Result<(), UnsubscribeError> {
        let sid = self.sid;
        if self.unsubscribed {
            return Ok(());
        }
        self.unsubscribed = true;
        let shared = self.client.shared();
        let mut guard = DrainGuard::new(shared, vec![sid], false);
        let flushed: Result<(), FlushError> =
            match shared.push_control_live(|buf| rnats_proto::encode_unsub(buf, sid, None)) {
                Some(true) => shared.flush().await,
                // The link is down or being left (a planned move): nothing more comes for
                // this subscription, and ending it now keeps the replay from restoring it.
                Some(false) => Ok(()),
                None => Err(FlushCause::NotSent.into()),
            };
        guard.finish();
        flushed.map_err(UnsubscribeError::from)
    }

    /// Messages dropped because this subscription's queue was full.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped()
    }

    /// Messages received for this subscription and not yet handed out, and their bytes
    /// (headers and payloads, as the server sent them): how far it lags (nats.go's
    /// `Pending`). What the client has not read off the socket yet is not counted. It
    /// walks the messages taken from the queue and not yet handed out: a call for a
    /// periodic metric, not one per message.
    pub fn pending(&self) -> (usize, usize) {
        let (messages, bytes) = self.queue.queued();
        let taken: usize = self.local.iter().map(MsgFrame::length).sum();
        (messages + self.local.len(), bytes + taken)
    }

    /// Messages handed out so far (nats.go's `Delivered`).
    pub fn delivered(&self) -> u64 {
        self.taken - self.local.len() as u64
    }

    /// Why the subscription ended early (permission denied, connection lost), if it did.
    pub fn take_error(&mut self) -> Option<SubscriberError> {
        self.queue.take_error()
    }

    fn shared(&self) -> &Shared {
        self.client.shared()
    }

    fn unsubscribe_now(&mut self) -> Result<(), UnsubscribeError> {
        if self.unsubscribed {
            return Ok(());
        }
        self.unsubscribed = true;
        close_subscriptions(self.shared(), &[self.sid]);
        let sid = self.sid;
        if !self
            .shared()
            .push_control(|buf| rnats_proto::encode_unsub(buf, sid, None))
        {
            return Err(UnsubscribeError::closed());
        }
        Ok(())
    }
}

impl Stream for Subscriber {
    type Item = Message;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Message>> {
        let this = self.get_mut();
        if let Some(frame) = this.local.pop_front() {
            return Poll::Ready(Some(Message::from_frame(frame)));
        }
        match this.queue.poll_take(cx, &mut this.local) {
            Poll::Ready(true) => {
                this.taken += this.local.len() as u64;
                Poll::Ready(this.local.pop_front().map(Message::from_frame))
            }
            Poll::Ready(false) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let _ = self.unsubscribe_now();
    }
}

impl fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscriber")
            .field("sid", &self.sid)
            .finish_non_exhaustive()
    }
}

/// Removes subscriptions from the engine's table and ends their streams after what they hold.
pub(crate) fn close_subscriptions(shared: &Shared, sids: &[u64]) {
    let mut session = shared.session();
    let subs = &mut session.subs;
    for sid in sids {
        if let Some(entry) = subs.remove(*sid)
            && let Sink::Queue(queue) = entry.sink
        {
            queue.close(None);
        }
    }
}

/// Makes a drain cancel-safe: whenever it is dropped (the drain finished, failed, or its
/// future was dropped mid-way), the drained subscriptions are out of the table and their
/// streams end, and for a client drain the client is asked to close. Without it a dropped
/// drain left the entries in the table, so the streams never ended and a reconnect
/// re-subscribed them.
pub(crate) struct DrainGuard<'a> {
    shared: &'a Shared,
    sids: Vec<u64>,
    close_client: bool,
    done: bool,
}

impl<'a> DrainGuard<'a> {
    pub(crate) fn new(shared: &'a Shared, sids: Vec<u64>, close_client: bool) -> Self {
        DrainGuard {
            shared,
            sids,
            close_client,
            done: false,
        }
    }

    pub(crate) fn sids(&self) -> &[u64] {
        &self.sids
    }

    /// Ends the drained subscriptions now.
    pub(crate) fn end_subscriptions(&self) {
        close_subscriptions(self.shared, &self.sids);
    }

    /// Ends the subscriptions and, for a client drain, asks the client to close.
    pub(crate) fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        self.end_subscriptions();
        if self.close_client {
            self.shared.request_close();
        }
    }
}

impl Drop for DrainGuard<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}
