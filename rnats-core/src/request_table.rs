//! The requests waiting for their replies: the table the engine answers them from, with
//! each request's deadline and the deadline the engine's timer watches for them all (why
//! there is no timer per request: `request.rs`).

use std::time::Instant;

use tokio::sync::oneshot;

use crate::Message;
use crate::floor::session::SidMap;

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
    /// Adds `token`'s request, without a deadline yet.
    pub(crate) fn insert(&mut self, token: u64, sender: ReplySender) {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

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
