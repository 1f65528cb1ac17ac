//! Messages one read produced, collected per subscription and handed over at the end of the
//! read: one lock and at most one wake per subscription per read, not per message.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::Message;
use crate::events::{ConnectionEvent, Event, LISTENER_CAPACITY};
use crate::shared::{Shared, SidMap};
use crate::sub_queue::SubQueue;

/// The messages of the current read, by subscription.
#[derive(Debug, Default)]
pub(crate) struct Deliveries {
    pending: Vec<Pending>,
    /// Where each sid's entry is in `pending`, for reads that feed many subscriptions.
    index: SidMap<usize>,
    /// Emptied containers kept for the next read, so steady state does not allocate.
    spare: Vec<VecDeque<Message>>,
}

#[derive(Debug)]
struct Pending {
    sid: u64,
    queue: Arc<SubQueue>,
    messages: VecDeque<Message>,
    bytes: usize,
    /// The subscription reached its `unsubscribe_after` count: end it after this batch.
    close: bool,
}

impl Deliveries {
    /// Adds a message for subscription `sid`.
    pub(crate) fn add(&mut self, sid: u64, queue: &Arc<SubQueue>, message: Message) {
        let at = match self.pending.last() {
            // Most reads feed one subscription, or runs of the same one.
            Some(last) if last.sid == sid => self.pending.len() - 1,
            _ => match self.index.get(&sid) {
                Some(&at) => at,
                None => {
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
            },
        };
        let pending = &mut self.pending[at];
        pending.bytes += message.length;
        pending.messages.push_back(message);
    }

    /// Marks `sid` to be ended once its messages are handed over.
    pub(crate) fn close_after(&mut self, sid: u64) {
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
            let pushed = pending
                .queue
                .push_batch(&mut pending.messages, pending.bytes, buffer);
            let reports = pushed.dropped.min(LISTENER_CAPACITY as u64);
            for _ in 0..reports {
                shared.emit_to_callback(Event::SlowConsumer(pending.sid));
            }
            if pushed.new_episode {
                let dropped = pending.queue.dropped();
                shared.emit(ConnectionEvent::SlowConsumer {
                    sid: pending.sid,
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
