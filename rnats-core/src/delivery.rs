//! Messages one read produced, collected per subscription and handed over at the end of the
//! read: one lock and at most one wake per subscription per read, not per message.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::events::{ConnectionEvent, Event, LISTENER_CAPACITY};
use crate::floor::session;
use crate::request_table::Answer;
use crate::shared::{ClientSession, Shared, SidMap, Sink};
use crate::statistics::Statistics;
use crate::sub_queue::SubQueue;
use crate::{Message, Subject};
use rnats_proto::MsgFrame;

/// The messages of the current read, by subscription.
#[derive(Debug, Default)]
pub(crate) struct Deliveries {
    pending: Vec<Pending>,
    /// Where each sid's entry is in `pending`, for reads that feed many subscriptions.
    index: SidMap<usize>,
    /// Emptied containers kept for the next read, so steady state does not allocate.
    spare: Vec<VecDeque<MsgFrame>>,
}

#[derive(Debug)]
struct Pending {
    sid: u64,
    queue: Arc<SubQueue>,
    messages: VecDeque<MsgFrame>,
    bytes: usize,
    /// The subscription reached its `unsubscribe_after` count: end it after this batch.
    close: bool,
}

impl Deliveries {
    /// Hands one message to its subscription's batch (or to the request it answers).
    #[inline]
    pub(crate) fn deliver(&mut self, shared: &Shared, session: &mut ClientSession, msg: MsgFrame) {
        let sid = msg.sid();
        // A message for an unknown sid raced an unsubscribe; dropping it is correct.
        let Some((sink, last)) = session.handle_msg(sid) else {
            return;
        };
        match sink {
            Sink::Queue(queue) => self.add(sid, queue, msg),
            Sink::Requests => deliver_reply(shared, msg),
        }
        if last {
            session.subs.remove(sid);
            self.close_after(sid);
        }
    }

    /// Adds a message for subscription `sid`. It is stored whole (a [`MsgFrame`], 80 bytes)
    /// and cut into a [`Message`] (168 bytes) where the subscriber takes it: the batch, its
    /// hand-over and the subscriber's first read of it, on another core, each touch half
    /// the memory.
    #[inline]
    fn add(&mut self, sid: u64, queue: &Arc<SubQueue>, msg: MsgFrame) {
        let at = match self.pending.last() {
            // Most reads feed one subscription, or runs of the same one.
            Some(last) if last.sid == sid => self.pending.len() - 1,
            _ => self.entry(sid, queue),
        };
        let pending = &mut self.pending[at];
        pending.bytes += msg.length();
        pending.messages.push_back(msg);
    }

    /// Where subscription `sid`'s batch is in `pending`, made on its first message of a read.
    #[inline(never)]
    fn entry(&mut self, sid: u64, queue: &Arc<SubQueue>) -> usize {
        if let Some(&at) = self.index.get(&sid) {
            return at;
        }
        let at = self.pending.len();
        self.pending.push(Pending {
            sid,
            queue: Arc::clone(queue),
            messages: self.spare.pop().unwrap_or_default(),
            bytes: 0,
            close: false,
        });
        self.index.insert(sid, at);
        at
    }

    /// Marks `sid` to be ended once its messages are handed over.
    fn close_after(&mut self, sid: u64) {
        if let Some(&at) = self.index.get(&sid) {
            self.pending[at].close = true;
        }
    }

    /// Hands every collected batch to its subscriber and reports slow consumers: each new
    /// episode to the listeners, each dropped message to the event callback (as async-nats
    /// does; never more at once than the callback's queue holds).
    /// `buffer`: how large the read buffer the messages are slices of may be (see
    /// [`SubQueue::push_batch`]).
    pub(crate) fn hand_over(&mut self, shared: &Shared, buffer: usize) {
        self.index.clear();
        for mut pending in self.pending.drain(..) {
            // A subscription that ends with this batch has already left the table; its last
            // message's subject is the one left to name it by. Only such batches pay for it.
            let last_subject = pending
                .close
                .then(|| {
                    pending
                        .messages
                        .back()
                        .map(|m| m.subject().as_str().to_owned())
                })
                .flatten();
            let pushed = pending
                .queue
                .push_batch(&mut pending.messages, pending.bytes, buffer);
            Statistics::add(&shared.statistics.dropped_messages, pushed.dropped);
            let reports = pushed.dropped.min(LISTENER_CAPACITY as u64);
            for _ in 0..reports {
                shared.emit_to_callback(Event::SlowConsumer(pending.sid));
            }
            if pushed.new_episode {
                let dropped = pending.queue.dropped();
                shared.emit(ConnectionEvent::SlowConsumer {
                    sid: pending.sid,
                    subject: subscription_subject(shared, pending.sid, last_subject),
                    dropped,
                });
            }
            if pending.close {
                pending.queue.close(None);
            }
            self.spare.push(pending.messages);
        }
    }
}

/// Completes the request whose token ends the reply subject.
fn deliver_reply(shared: &Shared, msg: MsgFrame) {
    let msg = msg.into_msg();
    let token = session::reply_token(&shared.reply_prefix, msg.subject.as_str());
    // Replies to requests that already gave up (timed out, dropped) are discarded.
    if let Some((sender, timed)) = token.and_then(|token| shared.requests().take_for_reply(token)) {
        // The clock is read (for a timed request only) once the table is unlocked.
        let _ = sender.send(Answer::Reply(Message::from(msg), timed.arrival()));
    }
}

/// The subject subscription `sid` was made with, for a slow-consumer report: looked up only
/// when an episode starts, so the delivery path never pays for it. `ended` names a
/// subscription that has already left the table (it ended with the batch that overflowed).
/// (Its text is copied out: a slice of the read buffer would pin that buffer while the event
/// waits in the listeners' queue.)
fn subscription_subject(shared: &Shared, sid: u64, ended: Option<String>) -> Subject {
    let subject = shared
        .session()
        .subs
        .get(sid)
        .map(|entry| entry.subject.clone());
    subject.unwrap_or_else(|| Subject::from(ended.unwrap_or_default()))
}
