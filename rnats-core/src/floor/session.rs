//! The protocol state of a client that outlives any one link, as one sans-IO type both
//! drivers (the tokio engine and the blocking client) hold: [`Session`]. It brings together
//! the link's phase and timers ([`Link`]), the subscription table with its auto-unsubscribe
//! counts and the replay it encodes ([`SubTable`]), the pairing of PINGs with PONGs by
//! number with the flushes deferred through an outage ([`Pings`]), the latest server INFO,
//! and the protocol's decisions about server ops (which `-ERR` ends the link, which
//! subscriptions a permission violation ends, which request a reply answers).
//!
//! No tokio, no sockets, no clock: each driver keeps its `Session` behind one lock (the
//! tokio client's `Shared::session`, the blocking client's `Core`), separate from the write
//! queue, so that publishing never contends with delivering; it feeds the session what the
//! wire, the clock and the callers do and carries out what comes back. The tests below run
//! it on byte literals and a virtual clock.
//!
//! ```text
//!  subscribe ──insert──▶ SubTable ◀──count_message── MSG
//!                          │  └──refused── -ERR 'Permissions Violation for Subscription'
//!                          └──encode_replay──▶ SUB (+ UNSUB <left>) per entry, on reconnect
//!
//!  flush: PING n queued ──register(n)──▶ Pings ◀──on_pong── PONG (the n-th answers PING n;
//!                                         │                 none past the PINGs queued)
//!  (link down) ─defer─▶                   │  ├──lose_link── link lost: its PINGs' flushes fail
//!                                         │  └──resume── reconnect: one PING for them all
//! ```

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use rnats_proto::{PermissionOp, QueueGroup, ServerError, ServerInfo, Subject};

use crate::error::FlushCause;
use crate::floor::link::{Link, LinkAction};

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

    /// The sids of the subscriptions a permission violation for `subject` (in `queue`)
    /// refused: the server refuses a SUB by subject and queue group, so every entry with
    /// both ends. They stay in the table, for the driver to take out or end in place.
    pub(crate) fn refused(&self, subject: &str, queue: Option<&str>) -> Vec<u64> {
        self.by_sid
            .iter()
            .filter(|(_, e)| e.is(subject, queue))
            .map(|(sid, _)| *sid)
            .collect()
    }

    /// Empties the table (the client is closing).
    pub(crate) fn take_all(&mut self) -> impl Iterator<Item = (u64, SubEntry<S>)> {
        std::mem::take(&mut self.by_sid).into_iter()
    }
}

/// Whether a server `-ERR` ends the link: after these the server closes the connection, so
/// the driver does not wait for it to (ADR-40's error list; nats.go reconnects after them
/// too). The others (a permission violation, `maximum subscriptions exceeded`, an unknown
/// text) leave the connection up: they are reported, and the link goes on.
pub(crate) fn ends_link(error: &ServerError) -> bool {
    matches!(
        error,
        ServerError::AuthorizationViolation
            | ServerError::AuthenticationExpired
            | ServerError::AuthenticationRevoked
            | ServerError::AccountAuthenticationExpired
            | ServerError::MaxConnectionsExceeded
            | ServerError::MaxAccountConnectionsExceeded
            | ServerError::StaleConnection
            | ServerError::MaxPayload
    )
}

/// The request token a reply subject carries: replies come on `<prefix><token>`.
#[inline]
pub(crate) fn reply_token(prefix: &str, subject: &str) -> Option<u64> {
    subject.strip_prefix(prefix)?.parse().ok()
}

/// What a PONG answered ([`Pings::on_pong`]).
#[derive(Debug)]
pub(crate) enum Pong<W> {
    /// The link's next unanswered PING, and the flushes that wait for it (none for a
    /// keepalive's).
    Answered(Option<Waiting<W>>),
    /// No PING: every one queued on the link has its PONG already. The PONG is ignored.
    Unasked,
}

/// Someone waiting for a PONG: told once how its PING went.
pub(crate) trait PongWaiter {
    fn resolve(self, outcome: Result<(), FlushCause>);
    /// The waiter gave up (its future was dropped): it need not be kept.
    fn abandoned(&self) -> bool;
}

/// A driver whose flushes look up their PING's outcome ([`Pings::outcome`]) instead of
/// being told (the blocking client's threads wait on a condition variable): it registers
/// no waiters, so none ever exists.
impl PongWaiter for std::convert::Infallible {
    fn resolve(self, _: Result<(), FlushCause>) {
        match self {}
    }

    fn abandoned(&self) -> bool {
        match *self {}
    }
}

/// Who waits for one PING's PONG.
#[derive(Debug)]
pub(crate) enum Waiting<W> {
    /// One flush.
    One(W),
    /// The flushes made while disconnected: one PING after the reconnect serves them all.
    Many(Vec<W>),
}

impl<W: PongWaiter> Waiting<W> {
    /// Tells the flushes this PONG was for how it went.
    #[inline]
    pub(crate) fn resolve(self, outcome: Result<(), FlushCause>) {
        match self {
            Waiting::One(waiter) => waiter.resolve(outcome),
            Waiting::Many(waiters) => resolve_all(waiters, outcome),
        }
    }
}

#[cold]
fn resolve_all<W: PongWaiter>(waiters: Vec<W>, outcome: Result<(), FlushCause>) {
    for waiter in waiters {
        waiter.resolve(outcome.clone());
    }
}

/// One PING: the link it went out on (links are numbered from 0 as they are lost) and its
/// number on that link (from 1, in the order the PINGs were queued).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PingId {
    pub(crate) link: u64,
    pub(crate) seq: u64,
}

/// How many ended links keep their PONG count, for a flush that looks late.
const ENDED_LINKS: usize = 8;

/// The pairing of PINGs with PONGs, by number. The server answers PINGs in order, so the n-th
/// PONG on a link answers its n-th PING. The driver's write queue numbers each PING where it
/// is queued (under the lock callers write with, so numbers follow wire order, and without
/// this session's lock: a flush never waits for the read path); the session counts PONGs.
/// A driver either registers a waiter with the number ([`Pings::register`]: the tokio
/// client, whose flushes are futures told through a channel) or looks the number up when it
/// wakes ([`Pings::outcome`]: the blocking client). Flushes made while no link is up are
/// deferred, and one PING after the reconnect serves them all.
///
/// A PONG counts only up to the PINGs queued on its link ([`Pings::on_pong`]): one that
/// nobody asked for (nats-server sends none, but a broken server or something in between
/// may) would otherwise answer every later PING one PING early, a flush among them.
#[derive(Debug)]
pub(crate) struct Pings<W> {
    /// The current link's number: how many links were lost before it.
    link: u64,
    /// PONGs received on the current link.
    answered: u64,
    /// Registered waiters by PING number, ascending.
    waiters: VecDeque<(u64, Waiting<W>)>,
    deferred: Vec<W>,
    /// `deferred` is pruned of abandoned flushes when it reaches this length, which then
    /// doubles: amortised O(1) per flush, bounded by the live flushes.
    prune_at: usize,
    /// `(link, answered)` of the last few links when they ended: a flush whose PONG came
    /// just before its link ended (a planned move ends right after its last PONG) may look
    /// only after that, and must still see its answer.
    ended: VecDeque<(u64, u64)>,
    /// During a planned move: the number of the old link's last PING.
    last_ping: Option<u64>,
    closed: bool,
}

impl<W> Default for Pings<W> {
    fn default() -> Self {
        Pings {
            link: 0,
            answered: 0,
            waiters: VecDeque::new(),
            deferred: Vec::new(),
            prune_at: 0,
            ended: VecDeque::with_capacity(ENDED_LINKS),
            last_ping: None,
            closed: false,
        }
    }
}

impl<W: PongWaiter> Pings<W> {
    /// PING `seq` of the current link was queued for `waiter`, which is told when its PONG
    /// comes (at once if it already came). Registrations come in the order of their
    /// numbers. (A keepalive PING is not registered: its PONG only proves the server is
    /// alive.)
    #[inline]
    pub(crate) fn register(&mut self, seq: u64, waiter: W) {
        self.register_waiting(seq, Waiting::One(waiter));
    }

    fn register_waiting(&mut self, seq: u64, waiting: Waiting<W>) {
        debug_assert!(
            self.waiters.back().is_none_or(|&(last, _)| last < seq),
            "PINGs are registered in the order they were numbered"
        );
        if seq <= self.answered {
            waiting.resolve(Ok(()));
            return;
        }
        self.waiters.push_back((seq, waiting));
    }

    /// A planned move's last PING, number `seq` of the old link, was queued: every PING
    /// before it is answered once it is ([`Pings::move_answered`]).
    pub(crate) fn note_last_ping(&mut self, seq: u64) {
        self.last_ping = Some(seq);
    }

    /// A flush made while no link is up: it waits for the PING [`Pings::resume`] asks for.
    pub(crate) fn defer(&mut self, waiter: W) {
        if self.deferred.len() >= self.prune_at {
            self.deferred.retain(|w| !w.abandoned());
            self.prune_at = (2 * self.deferred.len()).max(16);
        }
        self.deferred.push(waiter);
    }

    /// A PONG came on the current link, on which the driver's write queue has numbered
    /// `queued` PINGs so far: what it answers.
    ///
    /// The queue's count is passed in, not kept here, because PINGs are numbered under the
    /// write lock alone (a flush never waits for the session's), and a keepalive's is never
    /// registered; the driver reads the count under both locks, as it counts the PONG. A
    /// PING's PONG cannot come before the PING is queued, so the cap never drops a real
    /// answer. During a planned move the queue already fills for the next link, so the old
    /// link's last PING is the move's ([`Pings::note_last_ping`]), whatever the queue says.
    #[inline]
    pub(crate) fn on_pong(&mut self, queued: u64) -> Pong<W> {
        let sent = self.last_ping.unwrap_or(queued);
        if self.answered >= sent {
            return Pong::Unasked;
        }
        self.answered += 1;
        Pong::Answered(match self.waiters.front() {
            Some(&(seq, _)) if seq <= self.answered => self.waiters.pop_front().map(|(_, w)| w),
            _ => None,
        })
    }

    /// How PING `id` went: `None` while its PONG is still due.
    pub(crate) fn outcome(&self, id: PingId) -> Option<Result<(), FlushCause>> {
        if id.link != self.link {
            let answered = self
                .ended
                .iter()
                .any(|&(link, answered)| link == id.link && answered >= id.seq);
            return Some(match answered {
                true => Ok(()),
                false => Err(FlushCause::Disconnected),
            });
        }
        if self.answered >= id.seq {
            return Some(Ok(()));
        }
        if self.closed {
            return Some(Err(FlushCause::Closed));
        }
        None
    }

    /// Whether the old link of a planned move has answered its last PING, and so every
    /// PING before it.
    pub(crate) fn move_answered(&self) -> bool {
        self.last_ping.is_some_and(|last| self.answered >= last)
    }

    /// The current link's number.
    pub(crate) fn link(&self) -> u64 {
        self.link
    }

    /// Flushes waiting for the next link.
    #[cfg(test)]
    pub(crate) fn deferred(&self) -> usize {
        self.deferred.len()
    }

    /// Flushes waiting for a PONG on the current link (a deferred batch counts once).
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiters.len()
    }

    /// The first registered waiter, and its PING's number.
    #[cfg(test)]
    pub(crate) fn oldest(&self) -> Option<(u64, &Waiting<W>)> {
        self.waiters.front().map(|(seq, w)| (*seq, w))
    }

    /// The link is gone, and with it the PINGs sent on it: returns the waiters of the
    /// unanswered ones, for the caller to fail (outside its locks). The next link's PINGs
    /// count from 1 again. Deferred flushes keep waiting.
    pub(crate) fn lose_link(&mut self) -> VecDeque<(u64, Waiting<W>)> {
        if self.ended.len() == ENDED_LINKS {
            self.ended.pop_front();
        }
        self.ended.push_back((self.link, self.answered));
        self.link += 1;
        self.answered = 0;
        self.last_ping = None;
        std::mem::take(&mut self.waiters)
    }

    /// A new link is up: the deferred flushes still wanted, if any. The driver queues one
    /// PING for them all (behind the replay and the kept publishes) and registers them with
    /// its number ([`Pings::register_resumed`]).
    pub(crate) fn resume(&mut self) -> Option<Vec<W>> {
        let mut waiting = std::mem::take(&mut self.deferred);
        waiting.retain(|w| !w.abandoned());
        self.prune_at = 0;
        (!waiting.is_empty()).then_some(waiting)
    }

    /// The deferred flushes [`Pings::resume`] gave wait for PING `seq`.
    pub(crate) fn register_resumed(&mut self, seq: u64, waiters: Vec<W>) {
        self.register_waiting(seq, Waiting::Many(waiters));
    }

    /// The client is closing: every waiter, sent or deferred, for the caller to drop or
    /// fail; unanswered PINGs report `Closed` from now on.
    pub(crate) fn close(&mut self) -> (VecDeque<(u64, Waiting<W>)>, Vec<W>) {
        self.closed = true;
        self.last_ping = None;
        (
            std::mem::take(&mut self.waiters),
            std::mem::take(&mut self.deferred),
        )
    }
}

/// The protocol state of one client, as one sans-IO type both drivers hold (the tokio
/// engine behind `Shared::session`, the blocking client inside its `Core`): the link's
/// phase and timers ([`Link`]: keepalive, stale detection, lame duck, planned moves,
/// draining), the subscription table with its auto-unsubscribe counts and the replay it
/// encodes, the PING/PONG pairing with the flushes deferred through an outage, and the
/// latest server INFO. `S` is where a subscription's messages go and `W` who waits for a
/// PONG, both the driver's choice.
///
/// Inputs are the `handle_*` methods (a connection up, a PONG, an INFO, a `-ERR`, a MSG, a
/// lost link, time passing, the user's drain, move and close); outputs are what they
/// return (waiters to resolve, subscriptions to end, whether the link ends, the bytes of a
/// replay) and [`Session::poll_timeout`]. The write queue stays the driver's byte buffer,
/// under its own lock: it numbers the PINGs it holds, and the driver registers flushes
/// here with those numbers.
#[derive(Debug)]
pub(crate) struct Session<S, W> {
    pub(crate) link: Link,
    pub(crate) subs: SubTable<S>,
    pub(crate) pings: Pings<W>,
    info: Arc<ServerInfo>,
}

/// What an INFO update means to the driver ([`Session::handle_info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InfoNews {
    /// Lame duck mode was announced for the first time: report it; the link moves.
    pub(crate) lame_duck: bool,
    /// The server names other cluster peers than before (`connect_urls`): a server joined
    /// or left its cluster, or a route between them was cut or came back. Reported as
    /// `ConnectionEvent::ClusterChanged`.
    pub(crate) cluster_changed: bool,
}

/// What a server `-ERR` means for the session.
#[derive(Debug)]
pub(crate) struct ErrorVerdict {
    /// The server closes the link after it: the driver ends the link now, with this reason.
    pub(crate) ends_link: Option<String>,
    /// The sids of the subscriptions a permission violation refused (still in the table):
    /// they end with a permission error, the link stays up.
    pub(crate) refused: Vec<u64>,
}

impl<S, W: PongWaiter> Session<S, W> {
    /// A session with no link yet, pinging every `ping_interval` once connected, stale
    /// after `max_pings_outstanding` unanswered, giving planned moves `move_grace`.
    pub(crate) fn new(
        ping_interval: Duration,
        max_pings_outstanding: u32,
        move_grace: Duration,
    ) -> Self {
        Session {
            link: Link::new(ping_interval, max_pings_outstanding, move_grace),
            subs: SubTable::default(),
            pings: Pings::default(),
            info: Arc::new(ServerInfo::default()),
        }
    }

    /// The latest INFO the server sent (a default one before the first connect).
    pub(crate) fn info(&self) -> &Arc<ServerInfo> {
        &self.info
    }

    /// A link is up at `now`, its handshake done with `info`. The driver then queues, in
    /// this order: [`Session::encode_replay`], what it kept while disconnected, and a PING
    /// for the deferred flushes [`Pings::resume`] gives, if any.
    pub(crate) fn handle_connected(&mut self, now: Instant, info: impl Into<Arc<ServerInfo>>) {
        self.link.handle_connected(now);
        self.info = info.into();
    }

    /// Encodes what restores the subscriptions on a new link (see
    /// [`SubTable::encode_replay`]).
    pub(crate) fn encode_replay(&self, buf: &mut BytesMut, include: impl Fn(&S) -> bool) {
        self.subs.encode_replay(buf, include);
    }

    /// The link is lost (read or write error, EOF, a fatal `-ERR`, stale): returns the
    /// waiters of its unanswered PINGs, which the driver fails with
    /// `FlushCause::Disconnected`.
    pub(crate) fn handle_disconnected(&mut self) -> VecDeque<(u64, Waiting<W>)> {
        self.link.handle_disconnected();
        self.pings.lose_link()
    }

    /// A PONG came, with `queued` PINGs queued on the link so far (see [`Pings::on_pong`]):
    /// what it answers. An unasked one changes nothing, the keepalive's count included.
    #[inline]
    pub(crate) fn handle_pong(&mut self, queued: u64) -> Pong<W> {
        let pong = self.pings.on_pong(queued);
        if let Pong::Answered(_) = pong {
            self.link.handle_pong();
        }
        pong
    }

    /// A MSG for `sid` came: see [`SubTable::count_message`].
    #[inline]
    pub(crate) fn handle_msg(&mut self, sid: u64) -> Option<(&mut S, bool)> {
        self.subs.count_message(sid)
    }

    /// An INFO came at `now`: what it means for the driver to report (see [`InfoNews`]). A
    /// lame duck announced for the first time moves the link after `lame_duck_delay`
    /// (randomised by the driver, so a server's clients do not all land on the next one at
    /// once, ADR-40).
    pub(crate) fn handle_info(
        &mut self,
        now: Instant,
        info: impl Into<Arc<ServerInfo>>,
        lame_duck_delay: impl FnOnce() -> Duration,
    ) -> InfoNews {
        let mut info = info.into();
        // Only the INFO that answers CONNECT names the user's account; the ones the server
        // sends later (a cluster change, lame duck) leave it out, and it has not changed.
        if !info.connect_info && self.info.connect_info {
            let info = Arc::make_mut(&mut info);
            info.connect_info = true;
            info.remote_account.clone_from(&self.info.remote_account);
            info.is_system_account = self.info.is_system_account;
        }
        let lame_duck = info.lame_duck_mode && self.link.handle_lame_duck(now, lame_duck_delay());
        let cluster_changed = info.connect_urls != self.info.connect_urls
            || info.ws_connect_urls != self.info.ws_connect_urls;
        self.info = info;
        InfoNews {
            lame_duck,
            cluster_changed,
        }
    }

    /// A `-ERR` came: whether it ends the link, and which subscriptions it refused.
    pub(crate) fn handle_server_error(&self, error: &ServerError) -> ErrorVerdict {
        let refused = match error {
            ServerError::PermissionViolation {
                operation: PermissionOp::Subscribe,
                subject,
                queue,
            } => self.subs.refused(subject, queue.as_deref()),
            _ => Vec::new(),
        };
        ErrorVerdict {
            ends_link: ends_link(error).then(|| format!("server error: {error}")),
            refused,
        }
    }

    /// When the driver must call [`Session::handle_timeout`] next; `None`: only on input.
    #[inline]
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.link.poll_timeout()
    }

    /// Time has passed: the next thing due at `now` (see [`Link::handle_timeout`]). The
    /// driver queues a keepalive PING for `LinkAction::Ping`; for `StartMove` it hands the
    /// queue over with a last PING and tells its number to [`Pings::note_last_ping`].
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> Option<LinkAction> {
        self.link.handle_timeout(now)
    }

    /// The user asked for a move (`force_reconnect`) at `now`: whether one starts.
    pub(crate) fn handle_move_requested(&mut self, now: Instant, reason: &'static str) -> bool {
        self.link.handle_move_requested(now, reason)
    }

    /// The user started a drain: whether this is news (see [`Link::handle_drain`]).
    pub(crate) fn handle_drain(&mut self) -> bool {
        self.link.handle_drain()
    }

    /// Closed for good: returns every flush waiter, sent or deferred, for the driver to
    /// drop or fail outside its locks. The subscriptions stay for the driver to end
    /// ([`SubTable::take_all`]).
    pub(crate) fn handle_closed(&mut self) -> (VecDeque<(u64, Waiting<W>)>, Vec<W>) {
        self.link.handle_closed();
        self.pings.close()
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
    fn a_permission_violation_refuses_only_its_subject_and_group() {
        let table = table();
        assert_eq!(table.refused("a.b", Some("workers")), [2]);
        assert_eq!(table.refused("a.b", None), [1]);
        assert_eq!(table.refused("c", None), [3]);
        assert!(table.refused("c", Some("workers")).is_empty());
        assert!(table.contains(1) && table.contains(2) && table.contains(3));
    }

    #[test]
    fn fatal_server_errors_end_the_link() {
        assert!(ends_link(&ServerError::AuthorizationViolation));
        assert!(ends_link(&ServerError::StaleConnection));
        assert!(ends_link(&ServerError::MaxPayload));
        assert!(ends_link(&ServerError::AuthenticationRevoked));
        assert!(ends_link(&ServerError::AccountAuthenticationExpired));
        assert!(ends_link(&ServerError::MaxConnectionsExceeded));
        assert!(ends_link(&ServerError::MaxAccountConnectionsExceeded));
        assert!(!ends_link(&ServerError::MaxSubscriptionsExceeded));
        assert!(!ends_link(&ServerError::Other(
            "Invalid Publish Subject".into()
        )));
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

    /// PING `seq` of link `link`.
    fn ping(link: u64, seq: u64) -> PingId {
        PingId { link, seq }
    }

    /// A PONG on a link with `queued` PINGs queued, which must answer one: its waiters.
    fn answer<W: PongWaiter>(pings: &mut Pings<W>, queued: u64) -> Option<Waiting<W>> {
        match pings.on_pong(queued) {
            Pong::Answered(waiting) => waiting,
            Pong::Unasked => panic!("a PONG owed with {queued} PINGs queued was ignored"),
        }
    }

    #[test]
    fn pongs_answer_pings_by_number() {
        let (log, mut waiters) = probes(2);
        let mut pings = Pings::default();
        // PING 1 a flush's, 2 a keepalive's (not registered), 3 a flush's.
        pings.register(1, waiters.remove(0));
        pings.register(3, waiters.remove(0));
        assert_eq!(pings.outcome(ping(0, 2)), None, "not answered yet");
        let resolved: Vec<bool> = (0..3)
            .map(|_| match answer(&mut pings, 3) {
                Some(waiting) => {
                    waiting.resolve(Ok(()));
                    true
                }
                None => false,
            })
            .collect();
        assert_eq!(resolved, [true, false, true], "the keepalive has no waiter");
        assert_eq!(pings.outcome(ping(0, 2)), Some(Ok(())));
        assert_eq!(*log.borrow(), [(0, Ok(())), (1, Ok(()))]);
        assert_eq!(pings.waiting(), 0);
    }

    #[test]
    fn a_waiter_registered_after_its_pong_is_answered_at_once() {
        let (log, mut waiters) = probes(1);
        let mut pings = Pings::default();
        // PING 1 is queued, and its PONG counted before the flush registers.
        assert!(answer(&mut pings, 1).is_none());
        pings.register(1, waiters.remove(0));
        assert_eq!(*log.borrow(), [(0, Ok(()))]);
        assert_eq!(pings.waiting(), 0);
    }

    #[test]
    fn a_lost_link_fails_its_pings_and_keeps_the_deferred_flushes() {
        let (log, mut waiters) = probes(3);
        let mut pings = Pings::default();
        // PING 1 a flush's, 2 and 3 keepalives; PONGs 1 and 2 come, then the link goes.
        pings.register(1, waiters.remove(0));
        answer(&mut pings, 3).expect("the flush").resolve(Ok(()));
        assert!(answer(&mut pings, 3).is_none());
        assert!(
            pings.lose_link().is_empty(),
            "no registered PING was unanswered"
        );
        assert_eq!(
            pings.outcome(ping(0, 2)),
            Some(Ok(())),
            "answered before the end"
        );
        assert_eq!(
            pings.outcome(ping(0, 3)),
            Some(Err(FlushCause::Disconnected))
        );
        pings.defer(waiters.remove(0));
        pings.defer(waiters.remove(0));
        assert_eq!(*log.borrow(), [(0, Ok(()))]);
        let resumed = pings.resume().expect("two deferred flushes");
        assert_eq!((resumed.len(), pings.deferred()), (2, 0));
        pings.register_resumed(1, resumed);
        answer(&mut pings, 1)
            .expect("the resume PING")
            .resolve(Ok(()));
        assert_eq!(log.borrow()[1..], [(1, Ok(())), (2, Ok(()))]);
        assert!(pings.resume().is_none(), "nothing deferred: no PING");
    }

    #[test]
    fn the_unanswered_pings_of_a_lost_link_fail_their_flushes() {
        let (log, mut waiters) = probes(2);
        let mut pings = Pings::default();
        pings.register(1, waiters.remove(0));
        pings.register(2, waiters.remove(0));
        answer(&mut pings, 2).expect("the first").resolve(Ok(()));
        let lost: Vec<u64> = pings
            .lose_link()
            .into_iter()
            .map(|(seq, waiting)| {
                waiting.resolve(Err(FlushCause::Disconnected));
                seq
            })
            .collect();
        assert_eq!(lost, [2]);
        assert_eq!(
            *log.borrow(),
            [(0, Ok(())), (1, Err(FlushCause::Disconnected))]
        );
        assert_eq!(pings.link(), 1);
        assert_eq!(
            pings.outcome(ping(1, 1)),
            None,
            "the next link counts afresh"
        );
    }

    #[test]
    fn a_planned_move_is_done_when_its_last_ping_is_answered() {
        let mut pings: Pings<Probe> = Pings::default();
        assert!(!pings.move_answered(), "no move under way");
        pings.note_last_ping(2);
        assert!(answer(&mut pings, 2).is_none() && !pings.move_answered());
        assert!(answer(&mut pings, 2).is_none() && pings.move_answered());
        pings.lose_link();
        assert!(!pings.move_answered(), "a new link has no move");
    }

    #[test]
    fn a_pong_before_any_ping_does_not_answer_ping_1() {
        let (log, mut waiters) = probes(1);
        let mut pings = Pings::default();
        assert!(matches!(pings.on_pong(0), Pong::Unasked), "no PING queued");
        // A flush's PING 1 is queued after it: the stray PONG is not its answer.
        pings.register(1, waiters.remove(0));
        assert_eq!(pings.outcome(ping(0, 1)), None);
        assert!(log.borrow().is_empty(), "the flush is not answered yet");
        answer(&mut pings, 1).expect("the flush").resolve(Ok(()));
        assert_eq!(*log.borrow(), [(0, Ok(()))]);
        // Once every PING queued has its PONG, one more answers nothing again.
        assert!(matches!(pings.on_pong(1), Pong::Unasked));
        assert_eq!(pings.outcome(ping(0, 2)), None, "PING 2 is not answered");
    }

    #[test]
    fn an_unasked_pong_during_a_move_answers_nothing_past_its_last_ping() {
        let mut pings: Pings<Probe> = Pings::default();
        // PING 1 and the move's last, PING 2, went to the old link; the write queue now
        // fills for the next link, and may have numbered a PING 3 there.
        pings.note_last_ping(2);
        assert!(answer(&mut pings, 3).is_none() && !pings.move_answered());
        assert!(answer(&mut pings, 3).is_none() && pings.move_answered());
        assert!(
            matches!(pings.on_pong(3), Pong::Unasked),
            "no PING 3 went to the old link"
        );
        pings.lose_link();
        assert_eq!(
            pings.outcome(ping(0, 3)),
            Some(Err(FlushCause::Disconnected)),
            "the old link answered two PINGs, not three"
        );
    }

    #[test]
    fn abandoned_deferred_flushes_are_pruned() {
        let (_log, waiters) = probes(100);
        let mut pings = Pings::default();
        for waiter in waiters {
            *waiter.2.borrow_mut() = true;
            pings.defer(waiter);
        }
        assert!(
            pings.deferred() <= 32,
            "kept {} abandoned flushes",
            pings.deferred()
        );
        assert!(
            pings.resume().is_none(),
            "no PING for flushes nobody waits for"
        );
    }

    #[test]
    fn closing_hands_back_every_waiter() {
        let (_log, mut waiters) = probes(2);
        let mut pings = Pings::default();
        pings.register(1, waiters.remove(0));
        pings.defer(waiters.remove(0));
        let (sent, deferred) = pings.close();
        assert_eq!((sent.len(), deferred.len()), (1, 1));
        assert_eq!(pings.outcome(ping(0, 2)), Some(Err(FlushCause::Closed)));
        assert_eq!(pings.deferred(), 0);
    }

    /// A session as the blocking client holds it: no registered waiters.
    type Polled = Session<&'static str, std::convert::Infallible>;

    const MS: Duration = Duration::from_millis(1);

    fn session(now: Instant) -> Polled {
        let mut session = Polled::new(1000 * MS, 2, 500 * MS);
        session.handle_connected(now, ServerInfo::default());
        session
    }

    /// A scripted conversation: subscriptions and their counts survive a lost link, the
    /// replay restores them, and PINGs are counted per link.
    #[test]
    fn a_session_survives_a_lost_link_with_its_subscriptions_and_counts() {
        let start = Instant::now();
        let mut session = session(start);
        session.subs = table();
        session.subs.set_max(3, 4);
        // PING 1 is queued; a MSG for sid 3 comes, then PONG 1.
        assert_eq!(
            session.handle_msg(3).map(|(s, last)| (*s, last)),
            Some(("three", false))
        );
        assert!(matches!(session.handle_pong(1), Pong::Answered(None)));
        assert_eq!(session.pings.outcome(ping(0, 1)), Some(Ok(())));
        // PING 2 is queued, and the link goes before its PONG.
        assert!(
            session.handle_disconnected().is_empty(),
            "nobody registered"
        );
        assert_eq!(
            session.pings.outcome(ping(0, 2)),
            Some(Err(FlushCause::Disconnected))
        );
        assert_eq!(
            session.poll_timeout(),
            None,
            "no timers while the link is down"
        );
        session.handle_connected(start + 50 * MS, ServerInfo::default());
        let mut replay = BytesMut::new();
        session.encode_replay(&mut replay, |s| *s != "two");
        let mut lines: Vec<&str> = std::str::from_utf8(&replay)
            .expect("ASCII")
            .split_terminator("\r\n")
            .collect();
        lines.sort_unstable();
        assert_eq!(lines, ["SUB a.b 1", "SUB c 3", "UNSUB 3 3"]);
        assert!(
            session.pings.resume().is_none(),
            "no deferred flush, no PING"
        );
        assert_eq!(session.pings.link(), 1);
        assert_eq!(
            session.poll_timeout(),
            Some(start + 1050 * MS),
            "keepalive restarts with the link"
        );
    }

    #[test]
    fn an_unasked_pong_leaves_the_session_as_it_was() {
        let start = Instant::now();
        let mut session = session(start);
        assert!(matches!(session.handle_pong(0), Pong::Unasked));
        // The blocking client's flush looks its PING up: PING 1, queued now, is unanswered.
        assert_eq!(session.pings.outcome(ping(0, 1)), None);
        assert!(matches!(session.handle_pong(1), Pong::Answered(None)));
        assert_eq!(session.pings.outcome(ping(0, 1)), Some(Ok(())));
    }

    #[test]
    fn an_info_naming_other_cluster_peers_is_news_and_the_same_again_is_not() {
        let start = Instant::now();
        let mut session = session(start);
        let peers = |urls: &[&str]| ServerInfo {
            connect_urls: urls.iter().map(|u| u.to_string()).collect(),
            ..ServerInfo::default()
        };
        session.handle_connected(start, peers(&["a:4222", "b:4222"]));
        let same = session.handle_info(start, peers(&["a:4222", "b:4222"]), || MS);
        assert!(!same.cluster_changed && !same.lame_duck);
        // A route cut: the server no longer names the peer behind it, and names it again once
        // the route is back.
        assert!(
            session
                .handle_info(start, peers(&["a:4222"]), || MS)
                .cluster_changed
        );
        assert!(
            session
                .handle_info(start, peers(&["a:4222", "b:4222"]), || MS)
                .cluster_changed
        );
    }

    #[test]
    fn the_account_named_by_the_connect_answer_outlives_later_infos() {
        let start = Instant::now();
        let mut session = session(start);
        session.handle_connected(start, ServerInfo::default());
        let answer = ServerInfo {
            connect_info: true,
            remote_account: Some("SYS".to_owned()),
            is_system_account: true,
            ..ServerInfo::default()
        };
        session.handle_info(start, answer, || MS);
        // A cluster change: a full INFO, without the account.
        let later = ServerInfo {
            connect_urls: vec!["b:4222".to_owned()],
            ..ServerInfo::default()
        };
        session.handle_info(start, later, || MS);
        assert!(session.info().is_system_account);
        assert_eq!(session.info().remote_account.as_deref(), Some("SYS"));
        assert_eq!(session.info().connect_urls, ["b:4222"]);
        // A new link starts from its own handshake's INFO.
        session.handle_connected(start, ServerInfo::default());
        assert!(!session.info().is_system_account);
        assert_eq!(session.info().remote_account, None);
    }

    #[test]
    fn a_lame_duck_info_starts_a_move_after_its_delay() {
        let start = Instant::now();
        let mut session = session(start);
        let info = ServerInfo {
            lame_duck_mode: true,
            ..ServerInfo::default()
        };
        assert!(
            session
                .handle_info(start, info.clone(), || 100 * MS)
                .lame_duck
        );
        assert!(
            !session.handle_info(start, info, || 100 * MS).lame_duck,
            "reported once"
        );
        assert!(session.info().lame_duck_mode);
        assert_eq!(session.poll_timeout(), Some(start + 100 * MS));
        assert_eq!(
            session.handle_timeout(start + 100 * MS),
            Some(LinkAction::StartMove {
                reason: "server in lame duck mode"
            })
        );
        session.pings.note_last_ping(1);
        assert!(!session.pings.move_answered());
        assert!(matches!(session.handle_pong(1), Pong::Answered(None)));
        assert!(session.pings.move_answered(), "the old link is done");
    }

    #[test]
    fn a_permission_violation_ends_only_the_refused_subscription() {
        let mut session = session(Instant::now());
        session.subs = table();
        let verdict = session.handle_server_error(&ServerError::PermissionViolation {
            operation: PermissionOp::Subscribe,
            subject: "c".into(),
            queue: None,
        });
        assert!(verdict.ends_link.is_none());
        assert_eq!(verdict.refused, [3]);
        let fatal = session.handle_server_error(&ServerError::AuthorizationViolation);
        assert!(fatal.ends_link.is_some() && fatal.refused.is_empty());
    }

    #[test]
    fn a_draining_session_does_not_move_and_a_closed_one_fails_its_pings() {
        let start = Instant::now();
        let mut session = session(start);
        assert!(session.handle_drain());
        assert!(!session.handle_move_requested(start, "reconnect requested"));
        let (sent, deferred) = session.handle_closed();
        assert!(sent.is_empty() && deferred.is_empty());
        assert_eq!(
            session.pings.outcome(ping(0, 1)),
            Some(Err(FlushCause::Closed))
        );
        assert!(!session.link.reconnects());
    }
}
