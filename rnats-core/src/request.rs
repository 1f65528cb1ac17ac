//! Requests multiplexed over one wildcard inbox subscription made at connect.
//!
//! Each request gets a reply subject `<prefix>.<nuid>.<counter>`: a counter, not a random
//! string, so starting a request costs one atomic increment and one map insert.
//!
//! A request arms no timer of its own. Its deadline goes into the [`Waiting`] table, and the
//! engine's one timer watches the earliest deadline there (`Engine::drive_timers`): a tokio
//! timer per request locked the timer wheel twice per request and, whenever the wheel was
//! otherwise empty, woke a parked worker through the I/O driver's eventfd so it could
//! shorten its sleep, about 1.7 system calls per request under `strace -c`. Now a request
//! touches the engine only when its deadline is earlier than the one being watched: the
//! first request after a quiet spell, or one with a shorter timeout than those in flight.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rnats_proto::Subject;
use tokio::sync::oneshot;

use crate::Message;
use crate::error::{RequestCause, RequestError};
use crate::floor::session::SidMap;
use crate::shared::{Shared, Sink, SubEntry};

/// What ends a request's wait, sent by the engine.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The reply came.
    Reply(Message),
    /// Its deadline passed first.
    TimedOut,
}

/// Where a request's answer goes. Dropped unsent when the request fails; why is told by
/// [`Shared::requests_failed_by_disconnect`].
pub(crate) type ReplySender = oneshot::Sender<Answer>;

/// The requests waiting for their replies, by token, with their deadlines.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    entries: SidMap<Entry>,
    /// Where the engine's timer watches for deadlines: never later than the earliest
    /// deadline of an entry, `None` only when no entry has one. Answered and dropped
    /// requests leave it where it is; the engine moves it on when it fires.
    watch: Option<Instant>,
}

#[derive(Debug)]
struct Entry {
    sender: ReplySender,
    deadline: Option<Instant>,
}

impl Waiting {
    fn insert(&mut self, token: u64, sender: ReplySender) {
        self.entries.insert(
            token,
            Entry {
                sender,
                deadline: None,
            },
        );
    }

    /// Takes out `token`'s request, to answer it.
    pub(crate) fn remove(&mut self, token: u64) -> Option<ReplySender> {
        self.entries.remove(&token).map(|entry| entry.sender)
    }

    /// Gives `token`'s request its deadline. True when that moved the watch earlier: the
    /// engine must then be told to re-arm its timer.
    pub(crate) fn set_deadline(&mut self, token: u64, at: Instant) -> bool {
        let Some(entry) = self.entries.get_mut(&token) else {
            // Answered (or failed) already.
            return false;
        };
        entry.deadline = Some(at);
        let earlier = self.watch.is_none_or(|watch| at < watch);
        if earlier {
            self.watch = Some(at);
        }
        earlier
    }

    /// Takes out every request whose deadline is not after `now`, and moves the watch to the
    /// earliest deadline left. One pass over the table, once per watched deadline.
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<ReplySender> {
        let mut expired = Vec::new();
        let mut earliest: Option<Instant> = None;
        self.entries.retain(|_, entry| match entry.deadline {
            Some(at) if at <= now => {
                // `retain` hands out a borrow; the sender is swapped for a closed one and
                // this entry dropped.
                let (closed, _) = oneshot::channel();
                expired.push(std::mem::replace(&mut entry.sender, closed));
                false
            }
            Some(at) => {
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
                true
            }
            None => true,
        });
        self.watch = earliest;
        expired
    }

    /// The deadline the engine's timer should watch.
    pub(crate) fn watch(&self) -> Option<Instant> {
        self.watch
    }

    /// Takes out every request, to fail them all.
    pub(crate) fn take_all(&mut self) -> Vec<ReplySender> {
        self.watch = None;
        self.entries
            .drain()
            .map(|(_, entry)| entry.sender)
            .collect()
    }

    /// Requests waiting.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Subscribes the connection's request inbox (`<prefix>.<nuid>.*`).
pub(crate) fn subscribe_inbox(shared: &Shared) {
    let sid = shared.next_sid.fetch_add(1, Ordering::Relaxed);
    let pattern = format!("{}*", shared.reply_prefix);
    // `connect` checked the prefix, so this fails only if that check is wrong.
    let Ok(subject) = Subject::validated(pattern.as_str()) else {
        tracing::error!(%pattern, "request inbox is not a valid subject");
        return;
    };
    shared
        .session()
        .subs
        .insert(sid, SubEntry::new(subject, None, Sink::Requests));
    shared.push_control(|buf| rnats_proto::encode_sub(buf, &pattern, None, sid));
}

/// A request already sent whose reply is awaited later, from [`Client::start_request`]: many
/// can be in flight at once over the client's one request inbox (pipelined JetStream publish
/// acks are made of these). Dropping it frees its slot; a reply arriving after that is
/// dropped.
///
/// [`Client::start_request`]: crate::Client::start_request
pub struct PendingReply {
    pending: Pending,
}

impl std::fmt::Debug for PendingReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingReply")
            .field("reply_subject", &self.reply_subject())
            .finish()
    }
}

impl PendingReply {
    pub(crate) fn new(pending: Pending) -> PendingReply {
        PendingReply { pending }
    }

    /// The reply subject the request was sent with.
    pub fn reply_subject(&self) -> &str {
        self.pending.reply()
    }

    /// Waits for the reply, up to `timeout` (`None`: until the client closes). A 503 status
    /// becomes `RequestErrorKind::NoResponders`.
    pub async fn wait(self, timeout: Option<Duration>) -> Result<Message, RequestError> {
        self.pending.wait(timeout).await
    }
}

/// One request waiting for its reply. Dropping it frees its slot, so a cancelled request
/// leaves nothing behind.
pub(crate) struct Pending {
    shared: Arc<Shared>,
    token: u64,
    reply: String,
    rx: Option<oneshot::Receiver<Answer>>,
    /// [`Shared::requests_failed_by_disconnect`] when this request was registered.
    disconnects_at_start: u64,
    /// The engine answered the request (a reply, or its deadline) and removed the entry
    /// itself.
    answered: bool,
}

impl Pending {
    pub(crate) fn register(shared: &Arc<Shared>) -> Pending {
        let token = shared.next_token.fetch_add(1, Ordering::Relaxed);
        let mut reply = String::with_capacity(shared.reply_prefix.len() + 20);
        reply.push_str(&shared.reply_prefix);
        reply.push_str(itoa::Buffer::new().format(token));
        let (tx, rx) = oneshot::channel();
        let disconnects_at_start = {
            let mut requests = shared.requests();
            requests.insert(token, tx);
            shared.requests_failed_by_disconnect.load(Ordering::Relaxed)
        };
        Pending {
            disconnects_at_start,
            shared: Arc::clone(shared),
            token,
            reply,
            rx: Some(rx),
            answered: false,
        }
    }

    pub(crate) fn reply(&self) -> &str {
        &self.reply
    }

    pub(crate) async fn wait(mut self, timeout: Option<Duration>) -> Result<Message, RequestError> {
        let Some(rx) = self.rx.take() else {
            return Err(RequestCause::Closed.into());
        };
        // A limit past the clock's range never ends the wait.
        if let Some(at) = timeout.and_then(|limit| self.shared.rt.now().checked_add(limit)) {
            self.shared.watch_request(self.token, at);
        }
        // The engine drops every waiting sender on a disconnect (with
        // `fail_requests_on_disconnect`) and when the client closes. The state at wake-up may
        // already be a later one; the disconnect count says which it was.
        let answer = rx.await.map_err(|_| {
            let failures = self
                .shared
                .requests_failed_by_disconnect
                .load(Ordering::Relaxed);
            match failures > self.disconnects_at_start {
                true => RequestCause::Disconnected,
                false => RequestCause::Closed,
            }
        })?;
        self.answered = true;
        match answer {
            Answer::Reply(message) => crate::floor::replies::reply_outcome(message),
            // Only a request with a limit gets a deadline.
            Answer::TimedOut => Err(RequestCause::TimedOut(timeout.unwrap_or_default()).into()),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // Requests that timed out or were cancelled still have an entry.
        if !self.answered {
            self.shared.requests().remove(self.token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(tokens: &[u64]) -> (Waiting, Vec<oneshot::Receiver<Answer>>) {
        let mut table = Waiting::default();
        let receivers = tokens
            .iter()
            .map(|&token| {
                let (tx, rx) = oneshot::channel();
                table.insert(token, tx);
                rx
            })
            .collect();
        (table, receivers)
    }

    #[test]
    fn the_watch_moves_only_for_an_earlier_deadline() {
        let t0 = Instant::now();
        let (mut table, _rx) = waiting(&[1, 2, 3]);
        assert_eq!(table.watch(), None);
        assert!(table.set_deadline(1, t0 + Duration::from_secs(10)), "first");
        assert!(
            !table.set_deadline(2, t0 + Duration::from_secs(11)),
            "later"
        );
        assert!(
            table.set_deadline(3, t0 + Duration::from_secs(1)),
            "earlier"
        );
        assert_eq!(table.watch(), Some(t0 + Duration::from_secs(1)));
        // An answered request has no deadline to watch.
        assert!(table.remove(4).is_none());
        assert!(!table.set_deadline(4, t0));
        assert_eq!(table.watch(), Some(t0 + Duration::from_secs(1)));
    }

    #[test]
    fn expiring_takes_the_requests_due_and_watches_the_next() {
        let t0 = Instant::now();
        let (mut table, mut rx) = waiting(&[1, 2, 3, 4]);
        table.set_deadline(1, t0 + Duration::from_secs(1));
        table.set_deadline(2, t0 + Duration::from_secs(2));
        table.set_deadline(3, t0 + Duration::from_secs(3));
        // Request 4 waits without a limit.
        let expired = table.expire(t0 + Duration::from_secs(2));
        assert_eq!(expired.len(), 2, "the deadline itself is due");
        for sender in expired {
            sender.send(Answer::TimedOut).unwrap();
        }
        assert!(matches!(rx[0].try_recv(), Ok(Answer::TimedOut)));
        assert!(matches!(rx[1].try_recv(), Ok(Answer::TimedOut)));
        assert!(rx[2].try_recv().is_err(), "not due yet");
        assert_eq!(table.watch(), Some(t0 + Duration::from_secs(3)));
        assert_eq!(table.len(), 2);

        // Answered before its deadline: the watch stays until the engine looks again.
        assert!(table.remove(3).is_some());
        assert_eq!(table.watch(), Some(t0 + Duration::from_secs(3)));
        assert!(table.expire(t0 + Duration::from_secs(3)).is_empty());
        assert_eq!(
            table.watch(),
            None,
            "only request 4 is left, without a limit"
        );
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn taking_all_clears_the_watch() {
        let t0 = Instant::now();
        let (mut table, mut rx) = waiting(&[1, 2]);
        table.set_deadline(1, t0);
        assert_eq!(table.take_all().len(), 2);
        assert_eq!(table.watch(), None);
        assert_eq!(table.len(), 0);
        assert!(rx[0].try_recv().is_err() && rx[1].try_recv().is_err());
    }
}
