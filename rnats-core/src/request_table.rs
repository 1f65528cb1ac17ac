//! The requests waiting for their replies: the table the engine answers them from, with
//! each request's deadline and the deadline the engine's timer watches for them all (why
//! there is no timer per request: `request.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::hash_map::Entry::Occupied;
use std::time::Instant;

use tokio::sync::oneshot;

use crate::Message;
use crate::floor::session::SidMap;
use crate::otel::{Arrival, RequestDurations, Timed};

/// What ends a request's wait, sent by the engine.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The reply came (at `Arrival`, for a timed request).
    Reply(Message, Arrival),
    /// Its deadline passed first.
    TimedOut,
}

/// Where a request's answer goes. Dropped unsent when the request fails; why is told by
/// [`Shared::requests_failed_by_disconnect`].
pub(crate) type ReplySender = oneshot::Sender<Answer>;

/// Stale deadlines (of requests answered before them) the heap may hold beyond twice the
/// requests waiting before it is rebuilt from the table.
const STALE_SLACK: usize = 64;

/// The requests waiting for their replies, by token, with their deadlines.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    entries: SidMap<Entry>,
    /// Every waiting request's deadline, earliest on top, and stale ones of requests
    /// answered or dropped since: those are skipped when they come up, and dropped all at
    /// once when they outnumber the live ones (see [`STALE_SLACK`]). The top is the watch:
    /// never later than the earliest live deadline. A heap, so that requests timing out one
    /// after the other cost a pop each, not a pass over everything in flight.
    deadlines: BinaryHeap<Reverse<(Instant, u64)>>,
    /// The request-duration histograms of the client's metrics registrations
    /// (`otel::metrics`): here so that a request finds them under the lock it takes anyway.
    /// Without the `opentelemetry` feature, an empty type.
    pub(crate) durations: RequestDurations,
}

#[derive(Debug)]
struct Entry {
    sender: ReplySender,
    deadline: Option<Instant>,
    /// Whether the reply is stamped with the time it came (an empty type without the
    /// `opentelemetry` feature).
    timed: Timed,
}

impl Waiting {
    /// Adds `token`'s request, without a deadline yet.
    pub(crate) fn insert(&mut self, token: u64, sender: ReplySender, timed: Timed) {
        self.entries.insert(
            token,
            Entry {
                sender,
                deadline: None,
                timed,
            },
        );
    }

    /// Takes out `token`'s request to answer it with its reply, and whether to stamp it.
    pub(crate) fn take_for_reply(&mut self, token: u64) -> Option<(ReplySender, Timed)> {
        (self.entries.remove(&token)).map(|entry| (entry.sender, entry.timed))
    }

    /// Takes out `token`'s request, to answer it. Its deadline stays in the heap until it
    /// comes up or the heap is rebuilt.
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
        let earlier = self.watch().is_none_or(|watch| at < watch);
        self.deadlines.push(Reverse((at, token)));
        if self.deadlines.len() > 2 * self.entries.len() + STALE_SLACK {
            // Only moves the watch later; the engine's earlier copy costs one look.
            self.deadlines = self
                .entries
                .iter()
                .filter_map(|(&token, entry)| entry.deadline.map(|at| Reverse((at, token))))
                .collect();
        }
        earlier
    }

    /// Takes out every request whose deadline is not after `now`; the watch moves to the
    /// earliest deadline left.
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<ReplySender> {
        let mut expired = Vec::new();
        while let Some(&Reverse((at, token))) = self.deadlines.peek() {
            if at > now {
                break;
            }
            self.deadlines.pop();
            // Skips a stale deadline: its request was answered, or waits no more.
            if let Occupied(entry) = self.entries.entry(token)
                && entry.get().deadline == Some(at)
            {
                expired.push(entry.remove().sender);
            }
        }
        expired
    }

    /// The deadline the engine's timer should watch.
    pub(crate) fn watch(&self) -> Option<Instant> {
        self.deadlines.peek().map(|&Reverse((at, _))| at)
    }

    /// Takes out every request, to fail them all.
    pub(crate) fn take_all(&mut self) -> Vec<ReplySender> {
        self.deadlines.clear();
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

    /// Deadlines in the heap, stale ones included.
    #[cfg(test)]
    fn heap_len(&self) -> usize {
        self.deadlines.len()
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
                table.insert(token, tx, Timed::untimed());
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
    fn answered_requests_leave_a_bounded_heap_and_a_watch_never_late() {
        let t0 = Instant::now();
        let (mut table, _rx) = waiting(&[0]);
        table.set_deadline(0, t0 + Duration::from_secs(100));
        // Sequential requests: each gets a deadline and its reply, one after the other.
        for token in 1..10_000u64 {
            let (tx, _rx) = oneshot::channel();
            table.insert(token, tx, Timed::untimed());
            table.set_deadline(token, t0 + Duration::from_millis(token));
            assert!(table.remove(token).is_some());
            // Bounded by the requests waiting when the last deadline was set (one more).
            assert!(table.heap_len() <= 2 * (table.len() + 1) + STALE_SLACK);
            let watch = table.watch().unwrap();
            assert!(
                watch <= t0 + Duration::from_secs(100),
                "never after a live one"
            );
        }
        // Stale deadlines come up and are skipped; the live one is expired on time only.
        assert!(table.expire(t0 + Duration::from_secs(99)).is_empty());
        assert_eq!(table.watch(), Some(t0 + Duration::from_secs(100)));
        assert_eq!(table.expire(t0 + Duration::from_secs(100)).len(), 1);
        assert_eq!(table.watch(), None);
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
