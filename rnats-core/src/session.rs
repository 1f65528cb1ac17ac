//! The protocol state of a client that outlives any one link, as sans-IO types both drivers
//! (the tokio engine and the blocking client) build on: the subscription table with its
//! auto-unsubscribe counts, the pairing of PINGs with PONGs, what a reconnect replays, and
//! the protocol's decisions about server ops (which `-ERR` ends the link, which
//! subscriptions a permission violation ends, which request a reply answers).
//!
//! No tokio, no sockets, no clock: the drivers keep these behind whatever locks their
//! callers need (the tokio client puts the subscription table and the write side behind
//! separate mutexes, so that publishing never contends with delivering) and feed them what
//! the wire and the callers do. The tests below run them on byte literals.
//!
//! ```text
//!  subscribe ──insert──▶ SubTable ◀──count_message── MSG
//!                          │  └──take_refused── -ERR 'Permissions Violation for Subscription'
//!                          └──encode_replay──▶ SUB (+ UNSUB <left>) per entry, on reconnect
//!
//!  flush ──push_flush──▶ Pongs ◀──on_pong── PONG
//!  (link down) ─defer─▶   │  ├──lose_link── link lost: its PINGs' flushes fail
//!                         │  └──resume── reconnect: one PING for every deferred flush
//!  keepalive ─push_keepalive─┘
//! ```

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use bytes::BytesMut;
use rnats_proto::{QueueGroup, ServerError, Subject};

use crate::error::FlushCause;

/// A map keyed by sids or request tokens: small integers this client hands out in sequence.
pub(crate) type SidMap<V> = HashMap<u64, V, BuildHasherDefault<SidHasher>>;

/// Hashes sids with one multiply. SipHash's resistance to chosen keys buys nothing for keys
/// we pick ourselves, and the driver looks a sid up for every message. Multiplying by an odd
/// constant keeps sequential keys distinct in the low bits and mixes them into the high ones.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct SidHasher(u64);

impl Hasher for SidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// One subscription: what the server knows of it, and where its messages go (`S`, the
/// driver's choice).
#[derive(Debug)]
pub(crate) struct SubEntry<S> {
    pub(crate) subject: Subject,
    pub(crate) queue_group: Option<QueueGroup>,
    pub(crate) sink: S,
    /// Messages received so far, over every link.
    pub(crate) delivered: u64,
    /// Auto-unsubscribe once `delivered` reaches this.
    pub(crate) max: Option<u64>,
}

impl<S> SubEntry<S> {
    pub(crate) fn new(subject: Subject, queue_group: Option<QueueGroup>, sink: S) -> Self {
        SubEntry {
            subject,
            queue_group,
            sink,
            delivered: 0,
            max: None,
        }
    }

    fn is(&self, subject: &str, queue: Option<&str>) -> bool {
        self.subject.as_str() == subject && self.queue_group.as_ref().map(|q| q.as_str()) == queue
    }
}

/// The live subscriptions by sid.
#[derive(Debug)]
pub(crate) struct SubTable<S> {
    pub(crate) by_sid: SidMap<SubEntry<S>>,
}

impl<S> Default for SubTable<S> {
    fn default() -> Self {
        SubTable {
            by_sid: SidMap::default(),
        }
    }
}

impl<S> SubTable<S> {
    pub(crate) fn insert(&mut self, sid: u64, entry: SubEntry<S>) {
        self.by_sid.insert(sid, entry);
    }

    pub(crate) fn remove(&mut self, sid: u64) -> Option<SubEntry<S>> {
        self.by_sid.remove(&sid)
    }

    pub(crate) fn get(&self, sid: u64) -> Option<&SubEntry<S>> {
        self.by_sid.get(&sid)
    }

    pub(crate) fn get_mut(&mut self, sid: u64) -> Option<&mut SubEntry<S>> {
        self.by_sid.get_mut(&sid)
    }

    #[cfg(test)]
    pub(crate) fn contains(&self, sid: u64) -> bool {
        self.by_sid.contains_key(&sid)
    }

    /// Counts a message the server sent for `sid`: its sink, and whether it was the last one
    /// an auto-unsubscribe allows (the server sends no more after it; the driver ends the
    /// subscription once it has delivered this one). `None` for a sid that is not in the
    /// table: the message raced an unsubscribe and is dropped.
    #[inline]
    pub(crate) fn count_message(&mut self, sid: u64) -> Option<(&mut S, bool)> {
        let entry = self.by_sid.get_mut(&sid)?;
        entry.delivered += 1;
        let last = entry.max.is_some_and(|max| entry.delivered >= max);
        Some((&mut entry.sink, last))
    }

    /// Sets `sid` to end after `max` messages in all. Returns whether that many have come
    /// already (the subscription is over); `None` for an unknown sid.
    pub(crate) fn set_max(&mut self, sid: u64, max: u64) -> Option<bool> {
        let entry = self.by_sid.get_mut(&sid)?;
        entry.max = Some(max);
        Some(entry.delivered >= max)
    }

    /// Encodes what restores the table on a new link: a SUB for each entry `include` keeps,
    /// and for an auto-unsubscribe an `UNSUB <sid> <left>` with the messages still due.
    pub(crate) fn encode_replay(&self, buf: &mut BytesMut, include: impl Fn(&S) -> bool) {
        for (sid, entry) in self.by_sid.iter().filter(|(_, e)| include(&e.sink)) {
            let group = entry.queue_group.as_ref().map(|q| q.as_str());
            rnats_proto::encode_sub(buf, entry.subject.as_str(), group, *sid);
            if let Some(max) = entry.max {
                let left = max.saturating_sub(entry.delivered);
                rnats_proto::encode_unsub(buf, *sid, Some(left));
            }
        }
    }

    /// Takes out the subscriptions a permission violation for `subject` (in `queue`) refused;
    /// the server refuses a SUB by subject and queue group, so every entry with both ends.
    pub(crate) fn take_refused(
        &mut self,
        subject: &str,
        queue: Option<&str>,
    ) -> Vec<(u64, SubEntry<S>)> {
        let refused: Vec<u64> = self
            .by_sid
            .iter()
            .filter(|(_, e)| e.is(subject, queue))
            .map(|(sid, _)| *sid)
            .collect();
        refused
            .into_iter()
            .filter_map(|sid| self.by_sid.remove(&sid).map(|e| (sid, e)))
            .collect()
    }

    /// Every entry refused by a permission violation for `subject` (in `queue`), left in
    /// the table: for a driver that ends them in place.
    pub(crate) fn refused_mut<'a>(
        &'a mut self,
        subject: &'a str,
        queue: Option<&'a str>,
    ) -> impl Iterator<Item = &'a mut SubEntry<S>> + 'a {
        self.by_sid
            .values_mut()
            .filter(move |e| e.is(subject, queue))
    }

    /// Empties the table (the client is closing).
    pub(crate) fn take_all(&mut self) -> impl Iterator<Item = (u64, SubEntry<S>)> {
        std::mem::take(&mut self.by_sid).into_iter()
    }
}

/// Whether a server `-ERR` ends the link: after these the server closes the connection, so
/// the driver does not wait for it to.
pub(crate) fn ends_link(error: &ServerError) -> bool {
    matches!(
        error,
        ServerError::AuthorizationViolation
            | ServerError::AuthenticationExpired
            | ServerError::StaleConnection
            | ServerError::MaxPayload
    )
}

/// The request token a reply subject carries: replies come on `<prefix><token>`.
#[inline]
pub(crate) fn reply_token(prefix: &str, subject: &str) -> Option<u64> {
    subject.strip_prefix(prefix)?.parse().ok()
}

/// Someone waiting for a PONG: told once how its PING went.
pub(crate) trait PongWaiter {
    fn resolve(self, outcome: Result<(), FlushCause>);
    /// The waiter gave up (its future was dropped): it need not be kept.
    fn abandoned(&self) -> bool;
}

/// What one PING on the wire is waiting for, in the order the PINGs were sent.
#[derive(Debug)]
pub(crate) enum Pong<W> {
    /// A keepalive PING (or a planned move's last one): its PONG only proves the server
    /// is alive.
    Keepalive,
    /// One flush.
    Flush(W),
    /// The flushes made while disconnected: one PING after the reconnect serves them all.
    Flushes(Vec<W>),
}

impl<W: PongWaiter> Pong<W> {
    /// Tells the flushes this PONG was for how it went.
    #[inline]
    pub(crate) fn resolve(self, outcome: Result<(), FlushCause>) {
        match self {
            Pong::Keepalive => {}
            Pong::Flush(waiter) => waiter.resolve(outcome),
            Pong::Flushes(waiters) => resolve_all(waiters, outcome),
        }
    }
}

#[cold]
fn resolve_all<W: PongWaiter>(waiters: Vec<W>, outcome: Result<(), FlushCause>) {
    for waiter in waiters {
        waiter.resolve(outcome.clone());
    }
}

/// The PINGs of the current link awaiting their PONGs, and the flushes made while no link
/// was up, which wait for the next one.
#[derive(Debug)]
pub(crate) struct Pongs<W> {
    sent: VecDeque<Pong<W>>,
    deferred: Vec<W>,
    /// `deferred` is pruned of abandoned flushes when it reaches this length, which then
    /// doubles: amortised O(1) per flush, bounded by the live flushes.
    prune_at: usize,
}

impl<W> Default for Pongs<W> {
    fn default() -> Self {
        Pongs {
            sent: VecDeque::new(),
            deferred: Vec::new(),
            prune_at: 0,
        }
    }
}

impl<W: PongWaiter> Pongs<W> {
    /// A keepalive PING was queued on the current link.
    pub(crate) fn push_keepalive(&mut self) {
        self.sent.push_back(Pong::Keepalive);
    }

    /// A flush's PING was queued on the current link.
    #[inline]
    pub(crate) fn push_flush(&mut self, waiter: W) {
        self.sent.push_back(Pong::Flush(waiter));
    }

    /// A flush made while no link is up: it waits for the PING [`Pongs::resume`] sends.
    pub(crate) fn defer(&mut self, waiter: W) {
        if self.deferred.len() >= self.prune_at {
            self.deferred.retain(|w| !w.abandoned());
            self.prune_at = (2 * self.deferred.len()).max(16);
        }
        self.deferred.push(waiter);
    }

    /// A PONG came: what its PING was for (`None` for an unsolicited one).
    #[inline]
    pub(crate) fn on_pong(&mut self) -> Option<Pong<W>> {
        self.sent.pop_front()
    }

    /// Whether every PING sent on the link has its PONG.
    pub(crate) fn all_answered(&self) -> bool {
        self.sent.is_empty()
    }

    /// The oldest PING awaiting its PONG.
    #[cfg(test)]
    pub(crate) fn oldest(&self) -> Option<&Pong<W>> {
        self.sent.front()
    }

    /// PINGs awaiting their PONG.
    #[cfg(test)]
    pub(crate) fn outstanding(&self) -> usize {
        self.sent.len()
    }

    /// Flushes waiting for the next link.
    #[cfg(test)]
    pub(crate) fn deferred(&self) -> usize {
        self.deferred.len()
    }

    /// The link is gone, and with it the PINGs sent on it: the caller fails their flushes
    /// (outside its locks). Deferred flushes keep waiting.
    pub(crate) fn lose_link(&mut self) -> VecDeque<Pong<W>> {
        std::mem::take(&mut self.sent)
    }

    /// A new link is up: if any deferred flush is still wanted, one PING on it serves them
    /// all; returns whether that PING must be queued (behind the replay and kept publishes).
    pub(crate) fn resume(&mut self) -> bool {
        let mut waiting = std::mem::take(&mut self.deferred);
        waiting.retain(|w| !w.abandoned());
        self.prune_at = 0;
        if waiting.is_empty() {
            return false;
        }
        self.sent.push_back(Pong::Flushes(waiting));
        true
    }

    /// The client is closing: every waiter, sent or deferred, for the caller to drop or fail.
    pub(crate) fn close(&mut self) -> (VecDeque<Pong<W>>, Vec<W>) {
        (
            std::mem::take(&mut self.sent),
            std::mem::take(&mut self.deferred),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    fn subject(s: &str) -> Subject {
        Subject::from(s)
    }

    fn table() -> SubTable<&'static str> {
        let mut table = SubTable::default();
        table.insert(1, SubEntry::new(subject("a.b"), None, "one"));
        let group = QueueGroup::try_from("workers").expect("valid group");
        table.insert(2, SubEntry::new(subject("a.b"), Some(group), "two"));
        table.insert(3, SubEntry::new(subject("c"), None, "three"));
        table
    }

    fn replay_lines(
        table: &SubTable<&'static str>,
        include: impl Fn(&&str) -> bool,
    ) -> Vec<String> {
        let mut buf = BytesMut::new();
        table.encode_replay(&mut buf, include);
        let mut lines: Vec<String> = String::from_utf8(buf.to_vec())
            .expect("ASCII")
            .split_terminator("\r\n")
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    }

    #[test]
    fn replay_restores_every_subscription_with_its_group() {
        assert_eq!(
            replay_lines(&table(), |_| true),
            ["SUB a.b 1", "SUB a.b workers 2", "SUB c 3"]
        );
    }

    #[test]
    fn replay_sends_what_is_left_of_an_auto_unsubscribe() {
        let mut table = table();
        assert_eq!(table.set_max(3, 5), Some(false));
        for _ in 0..2 {
            let (_, last) = table.count_message(3).expect("known sid");
            assert!(!last);
        }
        assert_eq!(
            replay_lines(&table, |s| *s == "three"),
            ["SUB c 3", "UNSUB 3 3"],
            "the new server must stop after the 3 still due, not 5"
        );
    }

    #[test]
    fn replay_skips_what_the_driver_leaves_out() {
        assert_eq!(
            replay_lines(&table(), |s| *s != "two"),
            ["SUB a.b 1", "SUB c 3"]
        );
    }

    #[test]
    fn the_message_reaching_max_is_the_last() {
        let mut table = table();
        table.set_max(1, 2);
        assert_eq!(
            table.count_message(1).map(|(s, last)| (*s, last)),
            Some(("one", false))
        );
        assert_eq!(
            table.count_message(1).map(|(s, last)| (*s, last)),
            Some(("one", true))
        );
        assert_eq!(table.get(1).map(|e| e.delivered), Some(2));
        assert!(table.count_message(9).is_none(), "unknown sid");
        assert_eq!(table.set_max(1, 1), Some(true), "already past a lower max");
        assert_eq!(table.set_max(9, 1), None);
    }

    #[test]
    fn a_permission_violation_takes_only_the_refused_subject_and_group() {
        let mut table = table();
        let refused: Vec<u64> = table
            .take_refused("a.b", Some("workers"))
            .into_iter()
            .map(|(sid, _)| sid)
            .collect();
        assert_eq!(refused, [2]);
        assert!(table.contains(1) && table.contains(3) && !table.contains(2));
        let plain: Vec<u64> = table
            .take_refused("a.b", None)
            .into_iter()
            .map(|(sid, _)| sid)
            .collect();
        assert_eq!(plain, [1]);
        assert_eq!(table.refused_mut("c", None).count(), 1);
        assert_eq!(table.refused_mut("c", Some("workers")).count(), 0);
    }

    #[test]
    fn fatal_server_errors_end_the_link() {
        assert!(ends_link(&ServerError::AuthorizationViolation));
        assert!(ends_link(&ServerError::StaleConnection));
        assert!(ends_link(&ServerError::MaxPayload));
        assert!(!ends_link(&ServerError::PermissionViolation {
            operation: rnats_proto::PermissionOp::Publish,
            subject: "x".into(),
            queue: None,
        }));
    }

    #[test]
    fn reply_tokens_come_after_the_prefix() {
        assert_eq!(reply_token("_INBOX.abc.", "_INBOX.abc.42"), Some(42));
        assert_eq!(reply_token("_INBOX.abc.", "_INBOX.abd.42"), None);
        assert_eq!(reply_token("_INBOX.abc.", "_INBOX.abc.x"), None);
    }

    /// Which waiter was told what, in order.
    type Log = Rc<RefCell<Vec<(u32, Result<(), FlushCause>)>>>;

    /// A waiter that records its outcome, and can be marked abandoned.
    #[derive(Clone)]
    struct Probe(Log, u32, Rc<RefCell<bool>>);

    impl PongWaiter for Probe {
        fn resolve(self, outcome: Result<(), FlushCause>) {
            self.0.borrow_mut().push((self.1, outcome));
        }
        fn abandoned(&self) -> bool {
            *self.2.borrow()
        }
    }

    fn probes(n: u32) -> (Log, Vec<Probe>) {
        let log = Rc::new(RefCell::new(Vec::new()));
        let probes = (0..n)
            .map(|i| Probe(Rc::clone(&log), i, Rc::new(RefCell::new(false))))
            .collect();
        (log, probes)
    }

    #[test]
    fn pongs_resolve_their_pings_in_order() {
        let (log, mut waiters) = probes(2);
        let mut pongs = Pongs::default();
        pongs.push_flush(waiters.remove(0));
        pongs.push_keepalive();
        pongs.push_flush(waiters.remove(0));
        assert_eq!(pongs.outstanding(), 3);
        for _ in 0..3 {
            pongs.on_pong().expect("a PING awaits").resolve(Ok(()));
        }
        assert!(
            pongs.on_pong().is_none(),
            "an unsolicited PONG is for nobody"
        );
        assert!(pongs.all_answered());
        assert_eq!(*log.borrow(), [(0, Ok(())), (1, Ok(()))]);
    }

    #[test]
    fn a_lost_link_fails_its_pings_and_keeps_the_deferred_flushes() {
        let (log, mut waiters) = probes(3);
        let mut pongs = Pongs::default();
        pongs.push_flush(waiters.remove(0));
        let lost = pongs.lose_link();
        for pong in lost {
            pong.resolve(Err(FlushCause::Disconnected));
        }
        pongs.defer(waiters.remove(0));
        pongs.defer(waiters.remove(0));
        assert_eq!(*log.borrow(), [(0, Err(FlushCause::Disconnected))]);
        assert!(pongs.resume(), "one PING for the two deferred flushes");
        assert_eq!(pongs.outstanding(), 1);
        assert_eq!(pongs.deferred(), 0);
        pongs.on_pong().expect("the resume PING").resolve(Ok(()));
        assert_eq!(log.borrow()[1..], [(1, Ok(())), (2, Ok(()))]);
        assert!(!pongs.resume(), "nothing deferred: no PING");
    }

    #[test]
    fn abandoned_deferred_flushes_are_pruned() {
        let (_log, waiters) = probes(100);
        let mut pongs = Pongs::default();
        for waiter in waiters {
            *waiter.2.borrow_mut() = true;
            pongs.defer(waiter);
        }
        assert!(
            pongs.deferred() <= 32,
            "kept {} abandoned flushes",
            pongs.deferred()
        );
        assert!(!pongs.resume(), "no PING for flushes nobody waits for");
    }

    #[test]
    fn closing_hands_back_every_waiter() {
        let (_log, mut waiters) = probes(2);
        let mut pongs = Pongs::default();
        pongs.push_flush(waiters.remove(0));
        pongs.defer(waiters.remove(0));
        let (sent, deferred) = pongs.close();
        assert_eq!((sent.len(), deferred.len()), (1, 1));
        assert!(pongs.all_answered() && pongs.deferred() == 0);
    }
}
