//! The tokio client's write side: the floor's [`WriteQueue`] (the frames and the link
//! transitions both drivers share) under one lock with this driver's rule for who writes
//! the socket, and when: the engine, or a caller writing directly into an idle connection
//! ([`Writer`]). Every decision on who writes is made here: by a caller after it queued
//! ([`Writes::submit`]) and by the engine when it looks for work ([`Writes::engine_look`], [`Writes::engine_take`]).
//!
//! Lock order: the session before `writes`. A flush takes `writes` alone: the queue numbers
//! its PING, and the engine moves the waiter into the session
//! ([`Writes::hand_flushes_to`]) before it counts a PONG.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Context;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::error::FlushCause;
use crate::floor::deadline::saturating_add;
use crate::floor::frames::Frames;
use crate::floor::session::{Pings, PongWaiter};
use crate::floor::write_queue::WriteQueue;
use crate::options::Linger;
use crate::rt::{Rt, Timer};
use crate::socket::{Socket, try_write};
use crate::statistics::Statistics;

/// Where a flush's outcome goes. Dropped unsent when the client closes (`Closed`).
pub(crate) type FlushWaiter = oneshot::Sender<Result<(), FlushCause>>;

impl PongWaiter for FlushWaiter {
    #[inline]
    fn resolve(self, outcome: Result<(), FlushCause>) {
        // A flush caller may have given up; that is fine.
        let _ = self.send(outcome);
    }

    fn abandoned(&self) -> bool {
        self.is_closed()
    }
}

/// The write side: the queue, and who writes it next. Behind `Shared::writes`.
#[derive(Debug)]
pub(crate) struct Writes {
    /// The frames and the link they are for; the socket in it is the one callers may
    /// write directly (plain TCP only).
    pub(crate) queue: WriteQueue<Arc<Socket>>,
    pub(crate) writer: Writer,
    /// Flushes whose PINGs were queued since the engine last looked, with their numbers:
    /// the engine moves them into the session, so a flush never waits for the session's
    /// lock, which the read path holds while it dispatches a batch.
    pub(crate) new_flushes: Vec<(u64, FlushWaiter)>,
    /// Publishers are parked on `Shared::space`.
    pub(crate) space_waiters: bool,
    /// One of them runs outside the runtime's workers: the engine hands it the queue at the
    /// end of its batch ([`Writes::hand_to_outside_waiter`]).
    pub(crate) outside_waiter: bool,
    /// The engine holds a batch it has not finished writing (set and cleared by the engine
    /// under this lock): the writer invariant is that no caller writes directly then. Kept in
    /// debug builds only, where the invariant is asserted.
    #[cfg(debug_assertions)]
    pub(crate) engine_holds_batch: bool,
    /// With linger on: when the oldest queued frame was queued.
    pub(crate) linger_since: Option<Instant>,
    /// A flush is queued: the engine writes without lingering.
    pub(crate) urgent: bool,
    /// With linger on: when the last linger began (unlike `linger_since`, kept when the
    /// queue is written).
    pub(crate) last_linger_start: Option<Instant>,
    /// With linger on: the engine's linger timer is armed for a delay after
    /// `last_linger_start`, so the engine will look at the queue again by the deadline of any
    /// linger that starts now (set by the engine under this lock at each look). A linger
    /// that starts then needs no wake-up: a publisher that flushes after its publishes (from
    /// `block_on`, where a wake-up crosses threads) wakes nobody, and each publish leaves
    /// with the flush's PING in one write, the flush's caller writing both.
    pub(crate) linger_armed: bool,
    /// Publishes queued by callers outside the workers while [`Writer::Bulk`]; the engine's
    /// tail watch compares it with `bulk_seen` to tell whether they stopped.
    pub(crate) bulk_publishes: u64,
    /// `bulk_publishes` when the engine's tail watch last looked.
    pub(crate) bulk_seen: u64,
    /// The engine's last look found a caller writing or publishing in bulk, so its tail
    /// watch is armed: a caller that starts a bulk run needs to wake it only when not.
    pub(crate) bulk_watched: bool,
    /// The bulk run's last turn found no room (`caller_write::Turn::Paused`): its publishes
    /// queue up to the write limit, where the next turn starts and waits for room, rather
    /// than each trying the full socket again from [`BULK_WRITE_AT`] on. Cleared when a turn
    /// starts.
    pub(crate) bulk_paused: bool,
    /// Since when a bulk run's turns have written nothing (set when a turn's wait runs out;
    /// cleared by any byte a turn or a task writes, and when the engine takes a batch or
    /// hands a run over): past `caller_write::STALL` the run goes to the engine.
    pub(crate) bulk_stuck_since: Option<Instant>,
    /// A bulk run stalled and went to the engine: the engine takes the queue as a batch
    /// rather than handing it straight back to the caller waiting for room
    /// ([`Writes::hand_to_outside_waiter`]), which would only pause and stall again. Cleared
    /// when the engine takes a batch.
    pub(crate) bulk_stalled: bool,
    /// Queues a task wrote at the write limit since the engine last took one
    /// (`caller_write::write_for_task`).
    pub(crate) task_turns: u32,
    /// The engine has read since it last took a batch (set by its read path, cleared by
    /// [`Writes::engine_take`]): the connection's rhythm is request and answer, not a
    /// stream of publishes. Only then does a publish from outside the engine's thread write
    /// into an idle connection itself (see [`Writer`]).
    pub(crate) quiet: bool,
}

/// What a caller does after queueing ([`Writes::submit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing more: the frame was written, or a writer will take it.
    Done,
    /// Wake the engine, once the lock is let go.
    Wake,
    /// Write the queue as the writer (`caller_write::write_as_caller`).
    WriteAsCaller(After),
}

/// How a caller's turn as the writer ends once it has written the whole queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// A publish: the bulk run goes on ([`Writer::Bulk`]).
    Bulk,
    /// A flush or a request: the run ends as a direct write does
    /// ([`Writer::DirectlyWritten`]), and the engine is back once traffic comes back.
    Direct,
}

/// In a bulk run, a publish that brings the queue to this many bytes (or the write limit,
/// if lower) writes it: as the raw client and the blocking client write every 64 KiB, so
/// the server parses one piece while the next is filled.
pub(crate) const BULK_WRITE_AT: usize = 64 * 1024;

/// What the shared state gives [`Writes::submit`] besides the lock.
pub(crate) struct Submit<'a> {
    pub(crate) statistics: &'a Statistics,
    /// Set when a caller wrote directly (see `Shared::directly_written`).
    pub(crate) directly_written: &'a AtomicBool,
    /// Counts the engine's wake-ups by callers (see `Shared::kicks`).
    pub(crate) kicks: &'a AtomicU64,
    /// Whether the caller runs outside the runtime's workers (`shared::outside_workers`);
    /// asked only for a publish into an idle connection.
    pub(crate) outside_workers: fn() -> bool,
}

/// What the engine finds when it looks for frames ([`Writes::engine_look`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    /// Frames for the live link.
    Frames,
    /// Nothing queued: the writer is `Idle` now, callers may write directly.
    Idle,
    /// Nothing for this link: the queue is the reconnect buffer (a planned move, or the
    /// link is gone).
    NotForThisLink,
    /// A caller is the writer ([`Writer::Caller`], [`Writer::Bulk`]): the engine keeps its
    /// tail watch ([`Writes::tail_due`]) and leaves the queue alone.
    Caller,
}

/// Who writes queued frames next. Lives under the same lock as the queue.
///
/// A flush or a request that finds the engine [`Idle`](Writer::Idle) writes the queue to the
/// socket itself: an idle connection then sends at once, without waking another task. If that
/// caller's next frame comes before the engine has run again, it queues and wakes the engine
/// instead, so a burst batches into large writes rather than paying one syscall per frame.
///
/// A publish (or SUB, UNSUB, PONG) from a task never writes directly: it queues and wakes an
/// idle engine, so that whatever the caller queues right behind it (typically the PING of a
/// `flush()`) leaves in the same write. Written apart, a publish and its flush reach the
/// server as two segments, the server may answer with the MSG and the PONG as two segments,
/// and the round trip pays two writes, two reads and up to two wake-ups instead of one each. From a tokio
/// task the wake is cheap: the engine lands in that worker's LIFO slot (or the current-thread
/// runtime's queue) and runs as soon as the task yields. From `block_on` on a multi-threaded
/// runtime (the body of `#[tokio::main]`) it would cross threads: a futex wake-up of a worker,
/// which often unparks a second one to search for work, about two context switches per
/// publish. There the caller writes a publish into an idle connection itself, as a request
/// (`Shared::submit`, `shared::outside_workers`): the flush behind it then writes its PING
/// directly too, two `writev`s that the server reads as one and answers with one segment, and
/// no worker runs until the reply comes (docs/engine.md, issue 19). It does so only while the
/// connection is [`quiet`](Writes::quiet), the server having answered since the engine last
/// took a batch: in a stream of publishes the engine, once it catches up, would otherwise
/// get one of them written alone, a small segment more for the server to read, and be woken
/// by the next anyway. On the runtime-neutral backend every thread but rnats' task thread
/// counts as outside (`Shared::caller_elsewhere`). A tokio client's publish from a plain
/// thread outside any runtime, or on the current-thread runtime, still wakes the engine.
///
/// At the write limit, such a caller outside the workers takes the writer role for the
/// whole queue instead of waiting for the engine ([`Writer::Caller`], then a bulk run,
/// [`Writer::Bulk`]; `caller_write.rs`), under the same invariant. A task at the write
/// limit writes the queue the engine was woken for but has not taken, as far as the socket
/// takes it, and leaves the engine `Woken` for the rest (`caller_write::write_for_task`).
///
/// **The writer invariant:** a caller writes directly only when nothing is in flight, that is
/// when the engine holds no partly written batch (`Writes::engine_holds_batch`, set by the
/// engine when it takes the queue and cleared when it finds the queue empty with its batch
/// done). Bytes then leave in queue order whoever writes them. `Shared::submit`
/// `debug_assert`s it. Direct writes are further limited to small queues
/// ([`Frames::is_small`]) because they run under the lock every publish takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Writer {
    /// Nothing in flight and the engine is not woken: a caller may write directly.
    #[default]
    Idle,
    /// A caller just wrote directly; the next publish queues and wakes the engine.
    DirectlyWritten,
    /// The engine has been woken for the queue but has not taken it yet.
    Woken,
    /// The engine holds a batch being written; callers only queue behind it.
    Writing,
    /// A caller outside the runtime's workers writes the queue to the socket itself, within
    /// one call and never across an await (`caller_write.rs`): nobody else writes, and
    /// callers queue behind it.
    Caller,
    /// A caller outside the workers publishes in bulk: it writes each queue that reaches the
    /// write limit itself, its publishes below the limit queue without waking anyone, and
    /// the engine's tail watch writes what is left once they stop (`caller_write.rs`).
    Bulk,
}

/// How urgently a caller wants its frame on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Urgency {
    /// A publish or control frame: left to the engine, even when it is idle (see [`Writer`];
    /// `Shared::submit` makes it a [`Urgency::Request`] for a caller outside the runtime's
    /// workers), and batched when traffic is heavy.
    Normal,
    /// A flush: it waits for the server, so write now unless a batch is already in flight.
    Flush,
    /// A request: written at once by its caller when the connection is idle (a lone request
    /// pays no wake-up), but batched like a publish when others are being written or queued
    /// (many concurrent requesters then share one write instead of a syscall each, which
    /// also spares the server a read per request). Never lingers.
    Request,
}

impl Writer {
    /// Whether a caller with `urgency` may write the queue to the socket itself.
    pub(crate) fn may_write_directly(self, urgency: Urgency) -> bool {
        match self {
            // A publish is left to the engine: see the type's docs.
            Writer::Idle => urgency != Urgency::Normal,
            Writer::DirectlyWritten | Writer::Woken => urgency == Urgency::Flush,
            // `Request` writes directly only when idle (above).
            Writer::Writing => false,
            // A caller is the writer: see `Writes::submit`.
            Writer::Caller | Writer::Bulk => false,
        }
    }
}

impl Writes {
    /// An empty write side with no link yet, for a write limit of `write_limit`.
    pub(crate) fn new(write_limit: usize) -> Writes {
        Writes {
            queue: WriteQueue::new(write_limit),
            writer: Writer::Idle,
            new_flushes: Vec::new(),
            space_waiters: false,
            outside_waiter: false,
            #[cfg(debug_assertions)]
            engine_holds_batch: false,
            linger_since: None,
            urgent: false,
            last_linger_start: None,
            linger_armed: false,
            bulk_publishes: 0,
            bulk_seen: 0,
            bulk_watched: false,
            bulk_paused: false,
            bulk_stuck_since: None,
            bulk_stalled: false,
            task_turns: 0,
            quiet: true,
        }
    }

    /// The engine took a batch to write (`true`), or has none in flight (`false`); see the
    /// writer invariant on [`Writer`].
    #[inline(always)]
    pub(crate) fn note_engine_batch(&mut self, holds: bool) {
        #[cfg(debug_assertions)]
        {
            self.engine_holds_batch = holds;
        }
        let _ = holds;
    }

    /// A PING, queued on the current link: returns its number.
    #[inline]
    pub(crate) fn push_ping(&mut self) -> u64 {
        self.queue.push_ping()
    }

    /// Adds the publishes counted since the last call to the statistics.
    pub(crate) fn count_out(&mut self, statistics: &Statistics) {
        Statistics::add(&statistics.out_messages, self.queue.take_messages());
    }

    /// Moves the flushes queued since the last call into the session's `pings`, in the
    /// order of their numbers. The engine calls it, with both locks held, before it counts
    /// a PONG and before the link ends: a flush's PING is queued (and so here) before its
    /// PONG can come.
    #[inline]
    pub(crate) fn hand_flushes_to(&mut self, pings: &mut Pings<FlushWaiter>) {
        for (seq, waiter) in self.new_flushes.drain(..) {
            pings.register(seq, waiter);
        }
    }

    /// A new link is up (see [`WriteQueue::handle_connected`]); then, if `ping`, one PING
    /// for the flushes that waited (its number is returned). Callers write to the new link
    /// (through `socket` directly, when plain TCP) from now on, and the engine takes the
    /// queue on its next pass.
    pub(crate) fn handle_connected(
        &mut self,
        restore: Frames,
        socket: Option<Arc<Socket>>,
        link_id: u64,
        ping: bool,
    ) -> Option<u64> {
        self.queue.handle_connected(socket, link_id, restore);
        let seq = ping.then(|| self.queue.push_ping());
        self.writer = Writer::Woken;
        seq
    }

    /// A planned move off a healthy link (see [`WriteQueue::handle_move`]): the old link's
    /// frames go to `out`, behind the engine's batch in flight, and are counted as sent.
    /// Returns the last PING's number (for `Pings::note_last_ping`), or `None` if the link
    /// is already down.
    pub(crate) fn handle_move(&mut self, out: &mut Frames, statistics: &Statistics) -> Option<u64> {
        let handover = self.queue.handle_move()?;
        Statistics::add(&statistics.out_messages, handover.messages);
        out.append(handover.frames);
        self.writer = Writer::Writing;
        self.note_engine_batch(true);
        self.linger_since = None;
        self.last_linger_start = None;
        self.linger_armed = false;
        Some(handover.last_ping)
    }

    /// The link is gone: nothing writes until a reconnect hands over a new socket (see
    /// [`WriteQueue::handle_disconnected`]). The caller has handed the new flushes to the
    /// session first ([`Writes::hand_flushes_to`]): they were the lost link's.
    pub(crate) fn handle_disconnected(&mut self) {
        debug_assert!(self.new_flushes.is_empty());
        self.queue.handle_disconnected();
        self.writer = Writer::Writing;
        self.note_engine_batch(false);
        self.linger_since = None;
        self.urgent = false;
        self.last_linger_start = None;
        self.linger_armed = false;
    }

    /// Closed for good: no more frames, nothing to write. Returns the flushes not handed to
    /// the session yet, for the caller to drop (they report `Closed`) outside the lock.
    pub(crate) fn handle_closed(&mut self) -> Vec<(u64, FlushWaiter)> {
        self.queue.handle_closed();
        self.note_engine_batch(false);
        std::mem::take(&mut self.new_flushes)
    }

    /// A caller queued a frame of `urgency`: writes the queue to the socket directly when
    /// [`Writer`] allows it, and tells whether the engine must be woken (the caller wakes
    /// it once it has let go of the lock).
    #[inline]
    pub(crate) fn submit(&mut self, urgency: Urgency, cx: &Submit<'_>) -> Step {
        let writer = self.writer;
        match writer {
            // The caller's own turn writes it, and whatever comes behind it.
            Writer::Caller => return Step::Done,
            Writer::Bulk => return self.submit_in_bulk(urgency, cx),
            _ => {}
        }
        // A caller outside the runtime's workers would pay a cross-thread wake-up for the
        // engine: it writes a publish into an idle connection itself (see `Writer`).
        let urgency = match urgency {
            Urgency::Normal if writer == Writer::Idle && self.quiet && (cx.outside_workers)() => {
                Urgency::Request
            }
            other => other,
        };
        // Only a small queue is written under the lock: a large one could hold the
        // lock (which every publish takes) for a long copy into the socket buffer.
        if writer.may_write_directly(urgency) && self.queue.frames_mut().is_small() {
            #[cfg(debug_assertions)]
            debug_assert!(
                !self.engine_holds_batch,
                "a caller writes directly only while nothing is in flight"
            );
            self.count_out(cx.statistics);
            if let (frames, Some(socket)) = self.queue.frames_and_link() {
                // A partial write, a full socket buffer or an error all leave the rest to the
                // engine, which meets any error itself and ends the connection with it.
                if let Ok(written) = try_write(frames, socket) {
                    Statistics::add(&cx.statistics.out_bytes, written as u64);
                }
            }
            if self.queue.is_empty() {
                if writer != Writer::Woken {
                    self.writer = Writer::DirectlyWritten;
                    cx.directly_written.store(true, Ordering::Release);
                }
                return Step::Done;
            }
        }
        if matches!(writer, Writer::Idle | Writer::DirectlyWritten) {
            self.kick(cx.kicks);
            return Step::Wake;
        }
        Step::Done
    }

    /// [`Writes::submit`] during a caller's bulk run: a publish from outside the workers
    /// joins it; a flush or request from there ends it by writing everything at once, as
    /// the writer; anyone else hands the queue back to the engine (a task's frame is not
    /// left waiting for the bulk publisher's next write or the tail watch).
    #[inline]
    fn submit_in_bulk(&mut self, urgency: Urgency, cx: &Submit<'_>) -> Step {
        // A run only starts outside the workers; what tells a task from there is its id
        // (cheaper than `outside_workers`, which clones the runtime's handle).
        if tokio::task::try_id().is_some() {
            self.kick(cx.kicks);
            return Step::Wake;
        }
        match urgency {
            Urgency::Normal if self.queue.len() < BULK_WRITE_AT || self.bulk_paused => {
                self.bulk_publishes += 1;
                Step::Done
            }
            Urgency::Normal => Step::WriteAsCaller(After::Bulk),
            Urgency::Flush | Urgency::Request => Step::WriteAsCaller(After::Direct),
        }
    }

    /// The engine is to take the queue: marks the writer `Woken` and counts, in `kicks`
    /// (`Shared::kicks`), the wake-up the caller owes it.
    pub(crate) fn kick(&mut self, kicks: &AtomicU64) {
        self.writer = Writer::Woken;
        kicks.fetch_add(1, Ordering::Release);
    }

    /// A publish under the linger policy (`max` bytes, never more than the write limit):
    /// it stays queued until the engine's linger timer fires or `max` bytes pile up. Returns
    /// whether the engine must be woken: to arm its timer when the first frame of a linger
    /// comes and the timer is not armed ([`Writes::linger_armed`]), or to write once `max`
    /// bytes are queued. `now` is asked only when a linger starts. (Flushes and requests go
    /// through [`Writes::submit`] and [`Writes::urgent_submitted`].)
    pub(crate) fn submit_lingering(&mut self, max: usize, now: impl FnOnce() -> Instant) -> bool {
        let starts = self.linger_since.is_none();
        if starts {
            self.linger_since = Some(now());
            self.last_linger_start = self.linger_since;
        }
        let wake = (self.queue.len() >= max || starts && !self.linger_armed)
            && self.writer != Writer::Writing;
        if wake {
            self.writer = Writer::Woken;
        }
        wake
    }

    /// With linger on, a flush or a request went through [`Writes::submit`]: written with
    /// everything queued before it (nothing lingers then), or left to the engine, which must
    /// then write without lingering.
    pub(crate) fn urgent_submitted(&mut self) {
        if self.queue.is_empty() {
            self.linger_since = None;
            self.urgent = false;
        } else {
            self.urgent = true;
        }
    }

    /// The engine, under linger, keeps the queue back until its timer; any batch it had is
    /// written (it looks only once its batch is out). The writer is `Idle`, as the engine
    /// waits for nothing but its timer: a flush or a request writes the queue directly or
    /// wakes the engine ([`Writes::submit`]), a publish lingers on.
    pub(crate) fn engine_holds(&mut self) {
        self.writer = Writer::Idle;
        self.note_engine_batch(false);
    }

    /// With linger on (`delay`): until when the engine keeps its linger timer armed at
    /// `now`, a delay after the last linger began, or `None` once that has passed.
    pub(crate) fn linger_watch(&self, delay: Duration, now: Instant) -> Option<Instant> {
        let at = saturating_add(self.last_linger_start?, delay);
        (at > now).then_some(at)
    }

    /// The engine, under linger, keeps its linger `timer` armed until a delay after the last
    /// linger began ([`Writes::linger_watch`]) at `now`, and says whether it is
    /// ([`Writes::linger_armed`]): lingers that start meanwhile need not wake it.
    pub(crate) fn watch_lingers(
        &mut self,
        timer: &mut Option<Timer>,
        rt: Rt,
        delay: Duration,
        now: Instant,
        cx: &mut Context<'_>,
    ) {
        self.linger_armed = self.linger_watch(delay, now).is_some_and(|at| {
            let timer = timer.get_or_insert_with(|| rt.timer(at));
            timer.arm(at);
            Pin::new(timer).poll(cx).is_pending()
        });
    }

    /// The engine looks for frames for its link. Finding none on a live link makes the
    /// writer `Idle`: callers may write directly until the engine is woken again.
    pub(crate) fn engine_look(&mut self) -> Look {
        if self.queue.is_live() && matches!(self.writer, Writer::Caller | Writer::Bulk) {
            self.bulk_watched = true;
            return Look::Caller;
        }
        self.bulk_watched = false;
        match (self.queue.is_empty(), self.queue.is_live()) {
            (_, false) => Look::NotForThisLink,
            (true, true) => {
                self.writer = Writer::Idle;
                self.note_engine_batch(false);
                Look::Idle
            }
            (false, true) => Look::Frames,
        }
    }

    /// The engine read: a caller that wrote directly may do so again, and the connection is
    /// [`quiet`](Writes::quiet). Returns false, and changes nothing, while a caller holds
    /// the lock (the engine does not wait for it).
    pub(crate) fn answered(writes: &Mutex<Writes>) -> bool {
        let Some(mut writes) = crate::floor::sync::try_lock(writes) else {
            return false;
        };
        if writes.writer == Writer::DirectlyWritten {
            writes.writer = Writer::Idle;
        }
        writes.quiet = true;
        true
    }

    /// The engine takes what is queued into `out` (empty) and is the writer until it finds
    /// the queue empty again. Returns whether publishers wait for the room this made.
    pub(crate) fn engine_take(&mut self, out: &mut Frames, statistics: &Statistics) -> bool {
        self.linger_since = None;
        self.urgent = false;
        if let Some(taken) = self.queue.take_batch(out) {
            Statistics::add(&statistics.out_messages, taken.messages);
        }
        self.writer = Writer::Writing;
        self.note_engine_batch(true);
        self.bulk_stalled = false;
        self.bulk_stuck_since = None;
        self.outside_waiter = false;
        self.task_turns = 0;
        self.quiet = false;
        std::mem::take(&mut self.space_waiters)
    }

    /// The engine, with no batch in flight, finds frames queued while a publisher outside
    /// the workers waits for room (`lingering`: the linger policy is on). Rather than take
    /// them, it hands that publisher the writer role as a bulk run (`caller_write.rs`):
    /// woken, it finds the queue still at the limit and writes it itself, where it would
    /// otherwise queue behind the engine's next batch and wait again, and the role would stay
    /// the engine's for as long as the stream goes on. Returns whether it did; the engine
    /// then wakes the waiters and watches the run's tail, which takes the queue back should
    /// that publisher not come back (its future dropped).
    pub(crate) fn hand_to_outside_waiter(&mut self, lingering: bool) -> bool {
        let hand = cfg!(unix)
            && self.outside_waiter
            && self.space_waiters
            && !lingering
            && !self.bulk_stalled
            && self.queue.link().is_some();
        if hand {
            self.space_waiters = false;
            self.outside_waiter = false;
            self.writer = Writer::Bulk;
            self.bulk_paused = false;
            self.bulk_stuck_since = None;
            self.note_engine_batch(false);
            // The engine arms its tail watch right after: the publisher's turn need not wake it.
            self.bulk_watched = true;
            // A sign of life for the tail watch: it takes the queue back only after a whole
            // period in which the woken publisher did nothing.
            self.bulk_publishes += 1;
        }
        hand
    }

    /// The engine's tail watch is due: if a bulk run's publishes stopped since the last
    /// look, the engine takes the queue back (returns true, the writer is `Woken`);
    /// otherwise it notes where they are and watches on.
    pub(crate) fn tail_due(&mut self) -> bool {
        let quiet = self.writer == Writer::Bulk && self.bulk_publishes == self.bulk_seen;
        self.bulk_seen = self.bulk_publishes;
        if quiet {
            self.writer = Writer::Woken;
        }
        quiet
    }

    /// The engine takes the queue of a bulk run now (the client is closing): the writer is
    /// `Woken` unless a caller is writing it this moment.
    pub(crate) fn end_bulk(&mut self) {
        if self.writer == Writer::Bulk {
            self.writer = Writer::Woken;
        }
    }

    /// With linger on (`ConnectOptions::linger`): until when the engine may keep the queue
    /// back at `now`, or `None` to write it now. It writes at once for a flush or a request,
    /// when publishers wait for room, once `max_bytes` (never more than the write limit,
    /// where publishers would wait) have piled up, and once the oldest frame has waited
    /// the delay.
    pub(crate) fn linger_until(
        &self,
        linger: Linger,
        write_limit: usize,
        now: Instant,
    ) -> Option<Instant> {
        // Saturates: a linger past the clock's range never fires on its own.
        let deadline = saturating_add(self.linger_since?, linger.delay);
        let max_bytes = linger.max_bytes.min(write_limit);
        let hold =
            !self.urgent && !self.space_waiters && self.queue.len() < max_bytes && now < deadline;
        hold.then_some(deadline)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn only_flushes_may_write_past_a_recent_direct_write() {
        assert!(Writer::Idle.may_write_directly(Urgency::Flush));
        assert!(Writer::Idle.may_write_directly(Urgency::Request));
        assert!(!Writer::DirectlyWritten.may_write_directly(Urgency::Normal));
        assert!(Writer::DirectlyWritten.may_write_directly(Urgency::Flush));
        assert!(Writer::Woken.may_write_directly(Urgency::Flush));
        assert!(!Writer::Writing.may_write_directly(Urgency::Flush));
        assert!(!Writer::DirectlyWritten.may_write_directly(Urgency::Request));
        assert!(!Writer::Woken.may_write_directly(Urgency::Request));
    }

    #[test]
    fn a_publish_leaves_an_idle_engine_to_write() {
        assert!(!Writer::Idle.may_write_directly(Urgency::Normal));
    }

    /// What [`Writes::submit`] counts into, for tests without a client; callers are outside
    /// the workers.
    #[derive(Default)]
    struct Counters {
        statistics: Statistics,
        directly_written: AtomicBool,
        kicks: AtomicU64,
    }

    impl Counters {
        fn cx(&self) -> Submit<'_> {
            Submit {
                statistics: &self.statistics,
                directly_written: &self.directly_written,
                kicks: &self.kicks,
                outside_workers: || true,
            }
        }
    }

    /// Both ends of a TCP connection on the loopback interface: ours, and the peer's (also
    /// for `caller_write`'s tests).
    pub(crate) async fn loopback() -> (tokio::net::TcpStream, tokio::net::TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let (ours, theirs) = tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
        (ours.expect("connect"), theirs.expect("accept").0)
    }

    /// A publish from outside the engine's thread is written by its caller into an idle
    /// connection only while the connection is quiet: once the engine has taken a batch it
    /// wakes the engine instead, until the engine reads again.
    #[tokio::test]
    async fn a_publish_from_outside_writes_directly_only_into_a_quiet_connection() {
        let (ours, _theirs) = loopback().await;
        let socket = Arc::new(Socket::Tokio(ours));
        let counters = Counters::default();
        let (cx, statistics, kicks) = (counters.cx(), &counters.statistics, &counters.kicks);
        let shared = Mutex::new(Writes::new(1 << 16));
        let mut writes = shared.lock().expect("not poisoned");
        writes.handle_connected(Frames::default(), Some(socket), 1, false);
        let mut out = Frames::default();
        // The engine has taken a batch and found nothing more: idle, and not quiet.
        writes.engine_take(&mut out, statistics);
        assert_eq!(writes.engine_look(), Look::Idle);
        let publish = |writes: &mut Writes| {
            writes
                .queue
                .push_control(|buf| buf.extend_from_slice(b"PUB a 1\r\nx\r\n"));
            writes.submit(Urgency::Normal, &cx)
        };
        assert_eq!(
            publish(&mut writes),
            Step::Wake,
            "right after a batch, the engine writes"
        );
        assert_eq!(writes.writer, Writer::Woken);
        writes.engine_take(&mut out, statistics);
        assert_eq!(writes.engine_look(), Look::Idle);
        // The server answered: the next publish is written by its caller. (While a caller
        // holds the lock, the engine leaves it be and tries again at its next read.)
        assert!(!Writes::answered(&shared), "the lock is held");
        assert!(!writes.quiet);
        drop(writes);
        assert!(Writes::answered(&shared));
        let mut writes = shared.lock().expect("not poisoned");
        assert_eq!(publish(&mut writes), Step::Done);
        assert_eq!(writes.writer, Writer::DirectlyWritten);
        assert!(writes.queue.is_empty(), "written to the socket");
        assert_eq!(
            kicks.load(Ordering::Relaxed),
            1,
            "one wake-up, for the first publish"
        );
    }

    /// A bulk run whose last turn found no room (`caller_write::Turn::Paused`) queues its
    /// publishes past [`BULK_WRITE_AT`] without a turn each (every one of them would try
    /// the full socket again); the publish at the write limit takes the next turn
    /// (`Client::try_send`). A run that did not pause writes from [`BULK_WRITE_AT`] on.
    #[tokio::test]
    async fn a_paused_bulk_run_queues_its_publishes_up_to_the_limit() {
        let (ours, _theirs) = loopback().await;
        let counters = Counters::default();
        let (cx, kicks) = (counters.cx(), &counters.kicks);
        let mut writes = Writes::new(4 * BULK_WRITE_AT);
        writes.handle_connected(
            Frames::default(),
            Some(Arc::new(Socket::Tokio(ours))),
            1,
            false,
        );
        let publish = |writes: &mut Writes| {
            writes.queue.push_control(|buf| {
                buf.extend_from_slice(b"PUB a 1000\r\n");
                buf.extend_from_slice(&[b'x'; 1000]);
                buf.extend_from_slice(b"\r\n");
            });
            writes.submit(Urgency::Normal, &cx)
        };
        writes.writer = Writer::Bulk;
        writes.bulk_paused = true;
        let runs = writes.bulk_publishes;
        while writes.queue.len() < 2 * BULK_WRITE_AT {
            assert_eq!(
                publish(&mut writes),
                Step::Done,
                "a paused run's publish queues"
            );
        }
        assert!(
            writes.bulk_publishes > runs,
            "the tail watch saw no sign of the run"
        );
        assert_eq!(writes.writer, Writer::Bulk);
        writes.bulk_paused = false;
        assert_eq!(
            publish(&mut writes),
            Step::WriteAsCaller(After::Bulk),
            "past BULK_WRITE_AT a running publish writes"
        );
        assert_eq!(kicks.load(Ordering::Relaxed), 0, "nobody woke the engine");
    }
}
