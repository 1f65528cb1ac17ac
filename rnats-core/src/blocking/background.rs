//! The background thread of a blocking client: what nobody waits for.
//!
//! It drives the session's timers with `Instant`s (`Session::poll_timeout` and
//! `handle_timeout`: keepalive PINGs, stale detection, lame duck moves), finishes planned
//! moves (reading the old link for its last PONG when nobody else does, then ending it),
//! reconnects after a lost link, and covers an idle socket: once no user thread has read
//! for a while it waits for bytes without the reader role (so a user thread coming back
//! reads its own reply), and reads them only if the role is still free and nobody waits
//! for it; server PINGs are answered and subscription queues fill while nobody calls
//! `next`. It gives the role back after every read.
//!
//! It never waits on the socket to write (`Urgency::Soon`; a lame duck move's old link it
//! writes for one slice at most, then hands to the flusher thread): it is what finds a link
//! whose server stopped reading stale, and shuts the socket every blocked writer waits on.

use std::sync::{Arc, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::conn;
use super::state::{Core, Inner, READ_SLICE, Reader};
use super::time::saturating_deadline;
use super::writer::Urgency;
use crate::connection::LinkState;
use crate::error::{ConnectCause, ConnectError};
use crate::events::ConnectionEvent;
use crate::floor::attempts::Plan;
use crate::floor::link::LinkAction;
use crate::floor::sync::lock;

/// How long no user thread must have read before the background thread does.
const IDLE: Duration = Duration::from_millis(5);
/// How often the background thread looks when it has nothing scheduled.
const TICK: Duration = Duration::from_millis(10);
/// The longest [`IDLE`] grows to while user threads read everything themselves. Short
/// enough to answer the PINGs of a server with a sub-second `ping_interval` in time.
const MAX_IDLE: Duration = Duration::from_millis(100);
/// A wait for bytes shorter than this found them already there.
const STILL_THERE: Duration = Duration::from_millis(1);

/// What one look at the socket by the background thread found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watch {
    /// No bytes within the read timeout, or the link changed.
    Quiet,
    /// Bytes a user thread reads or is about to read.
    LeftToUser,
    /// Bytes nobody was there for: this thread read and dispatched them.
    ReadForNobody,
}

impl Inner {
    /// The background thread's loop; returns when the client is closed.
    pub(super) fn run_background(self: &Arc<Self>) {
        let mut core = self.core();
        // How long no user thread must have read before this thread watches the socket:
        // grows while the bytes it wakes for turn out to be user threads' (each such wake
        // is a wasted thread wake-up on their round trip), back to [`IDLE`] once it finds
        // bytes nobody takes.
        let mut idle = IDLE;
        // What the last look at the socket found.
        let mut last = Watch::Quiet;
        // When a user thread had last read as this thread went to sleep.
        let mut seen_read = None;
        loop {
            match core.state {
                LinkState::Closed => return,
                LinkState::Disconnected | LinkState::Pending if !core.session.link.reconnects() => {
                    // A draining client closes once its drain ends; a new link would only
                    // restore subscriptions it is taking down.
                    drop(core);
                    self.close();
                    return;
                }
                LinkState::Disconnected | LinkState::Pending => {
                    drop(core);
                    self.reconnect();
                    core = self.core();
                    continue;
                }
                LinkState::Connected => {}
            }
            if lock(&self.announcements).waiting() {
                // Not under the core lock: readers and writers go on meanwhile.
                drop(core);
                self.merge_announced();
                core = self.core();
                continue;
            }
            let now = Instant::now();
            let mut ping = false;
            let mut moved = false;
            while let Some(action) = core.session.handle_timeout(now) {
                let generation = core.session.pings.link();
                match action {
                    LinkAction::Ping => ping = true,
                    LinkAction::Stale { outstanding } => {
                        tracing::debug!(outstanding, "stale connection");
                        self.fail_link_locked(&mut core, generation, "stale connection");
                    }
                    // A move off a lame duck server: the old link finishes what it
                    // accepted while the next one waits (below).
                    LinkAction::StartMove { .. } => {
                        self.hand_over_locked(&mut core);
                        moved = true;
                    }
                    // The old server did not finish in time: what it still had is lost,
                    // as on any lost link.
                    LinkAction::GiveUp { reason } => {
                        self.fail_link_locked(&mut core, generation, reason);
                    }
                }
            }
            if core.state != LinkState::Connected {
                continue;
            }
            if moved {
                drop(core);
                self.write.write_pending(&**self);
                core = self.core();
                continue;
            }
            if let Some(reason) = core.session.link.moving() {
                core = self.drive_move(core, reason, now);
                continue;
            }
            if ping {
                drop(core);
                self.write.push_ping(&**self, Urgency::Soon);
                core = self.core();
                // Its PONG is for nobody but the link: watch for it soon.
                idle = IDLE;
                continue;
            }
            let until_timer = core
                .session
                .poll_timeout()
                .map(|at| at.saturating_duration_since(now));
            if Inner::background_may_read(&core, idle) {
                let watch;
                (core, watch) = self.watch_socket(core, last);
                last = watch;
                idle = match watch {
                    Watch::Quiet => idle,
                    Watch::LeftToUser => (idle * 2).min(MAX_IDLE),
                    Watch::ReadForNobody => IDLE,
                };
                continue;
            }
            last = Watch::Quiet;
            if seen_read.replace(core.last_user_read()) != Some(core.last_user_read()) {
                // User threads are reading for themselves: look less often.
                idle = (idle * 2).min(MAX_IDLE);
            }
            // Sleep until the watch may start (no user thread having read since), not in
            // ticks: a user thread's round trip is then rarely met by a wake-up of this one.
            let until_watch = match Inner::role_unwanted(&core) {
                true => core
                    .last_user_read()
                    .checked_add(idle)
                    .map_or(TICK, |at| at.saturating_duration_since(now)),
                false => TICK,
            };
            let wait = until_timer.map_or(until_watch, |t| t.min(until_watch));
            core = self
                .background
                .wait_timeout(core, wait.max(STILL_THERE))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Waits for bytes *without* the reader role, so that a user thread arriving meanwhile
    /// takes the role and reads its reply itself (no hand-off through this thread); reads
    /// them only if the role is still free and nobody wants it. Bytes that come right
    /// after a write are most likely its answer, which the writing thread is about to read
    /// (a publish followed by a flush writes, then writes again, then reads): those are
    /// left for one [`TICK`] first, and read if still unread then. After a read for
    /// nobody, the next bytes are read at once too: nobody is reading.
    fn watch_socket<'a>(
        &'a self,
        core: MutexGuard<'a, Core>,
        last: Watch,
    ) -> (MutexGuard<'a, Core>, Watch) {
        let Some(conn) = core.conn.clone() else {
            return (core, Watch::Quiet);
        };
        let generation = core.session.pings.link();
        self.restore_read_timeout(&core, &conn);
        drop(core);
        // Up to the socket's read timeout (at most READ_SLICE): timers run that late at
        // worst, well within any keepalive interval.
        let started = Instant::now();
        let ready = match conn.wait_readable() {
            Ok(_) => true,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        };
        let core = self.core();
        if !ready || core.session.pings.link() != generation {
            return (core, Watch::Quiet);
        }
        // Bytes there at once after a deferral are the ones left then, still unread: a
        // publisher that never reads must not keep them (and server PINGs) waiting.
        let eager = match last {
            Watch::Quiet => false,
            Watch::LeftToUser => started.elapsed() < STILL_THERE,
            Watch::ReadForNobody => true,
        };
        if Inner::role_unwanted(&core) && (eager || !self.write.answer_expected_within(IDLE)) {
            // The bytes (or the end of the stream) are there: this read does not block.
            let core = self.read_as(core, Reader::Background, READ_SLICE);
            return (core, Watch::ReadForNobody);
        }
        // A user thread reads them (or is about to); look again after a while.
        let core = self
            .background
            .wait_timeout(core, TICK)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
        (core, Watch::LeftToUser)
    }

    /// One step of a planned move: ends the old link once it is done (then the loop
    /// reconnects), or else reads it for its last PONG when no user thread does, or waits
    /// until one of them has read it (the dispatch of that PONG wakes this thread), at
    /// most until the move's deadline.
    fn drive_move<'a>(
        &'a self,
        mut core: MutexGuard<'a, Core>,
        reason: &'static str,
        now: Instant,
    ) -> MutexGuard<'a, Core> {
        if self.move_finished(&core) {
            tracing::debug!(reason, "planned move: the old link is done");
            let generation = core.session.pings.link();
            self.fail_link_locked(&mut core, generation, reason);
            return core;
        }
        let until_deadline = core
            .session
            .poll_timeout()
            .map_or(READ_SLICE, |at| at.saturating_duration_since(now));
        if Inner::role_unwanted(&core) {
            return self.read_as(core, Reader::Background, until_deadline.min(READ_SLICE));
        }
        self.background
            .wait_timeout(core, until_deadline.clamp(STILL_THERE, TICK))
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }

    /// Tries servers until one accepts, as the policy says (see `reconnect::Attempts`);
    /// closes the client when the attempts run out.
    fn reconnect(&self) {
        loop {
            if self.core().state == LinkState::Closed {
                return;
            }
            let attempt = match self.next_attempt(true) {
                Some(Plan::Dial(attempt)) => attempt,
                Some(Plan::GiveUp(why)) => {
                    tracing::warn!(%why, "giving up reconnecting");
                    // As in the async client: reported when attempts ran out, not when none
                    // were allowed.
                    if self.options.reconnect.max_reconnects != Some(0) {
                        self.events.emit(ConnectionEvent::ClientError(why));
                    }
                    self.close();
                    return;
                }
                None => {
                    self.close();
                    return;
                }
            };
            if !attempt.delay.is_zero() && !self.sleep_unless_closed(attempt.delay) {
                return;
            }
            match conn::dial(&attempt.addr, attempt.tls_name(), &self.options) {
                Ok(dialed) => {
                    lock(&self.pool).connected(&attempt, Instant::now());
                    self.install(dialed, Urgency::Soon);
                    return;
                }
                Err(error) => {
                    tracing::debug!(attempt = attempt.number, server = ?attempt.addr, %error, "reconnect failed");
                    let try_ended = lock(&self.pool).note_failure(&attempt, &error);
                    self.events.emit(attempt.failed(&error));
                    if let Some(event) = try_ended {
                        self.events.emit_to_callback(event);
                    }
                }
            }
        }
    }

    /// Sleeps `delay`; false if the client closed meanwhile.
    fn sleep_unless_closed(&self, delay: Duration) -> bool {
        let deadline = saturating_deadline(delay);
        let mut core = self.core();
        loop {
            if core.state == LinkState::Closed {
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            core = self
                .background
                .wait_timeout(core, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The first connect: one try (see `reconnect::Attempts`), with no `max_reconnects`
    /// limit.
    pub(super) fn first_connect(&self) -> Result<(), ConnectError> {
        let mut last_error = None;
        while let Some(Plan::Dial(attempt)) = self.next_attempt(false) {
            if !attempt.delay.is_zero() && !self.sleep_unless_closed(attempt.delay) {
                break;
            }
            match conn::dial(&attempt.addr, attempt.tls_name(), &self.options) {
                Ok(dialed) => {
                    lock(&self.pool).connected(&attempt, Instant::now());
                    self.install(dialed, Urgency::Now);
                    return Ok(());
                }
                Err(error) => {
                    let try_ended = lock(&self.pool).note_failure(&attempt, &error).is_some();
                    last_error = Some(error);
                    if try_ended {
                        break;
                    }
                }
            }
        }
        Err(last_error.unwrap_or_else(|| ConnectCause::NoServers.into()))
    }
}
