//! The writer role for a caller outside the runtime's workers (issue 31).
//!
//! Code awaited in `#[tokio::main]` runs on the thread that called `Runtime::block_on`, which
//! is no worker. A publisher there that fills the write queue used to wait for the engine:
//! it parked at the write limit, a worker woke when the socket drained, wrote, took the
//! queue and unparked the publisher. Two thread wake-ups per 128 KiB, and three busy
//! threads (publisher, worker, server) on the machine's cores. The raw blocking client
//! instead writes its own buffer and sleeps in the kernel until the socket has room: one
//! wake-up, two threads.
//!
//! So such a caller takes the writer role itself ([`Writer::Caller`]) when it reaches the
//! write limit and the engine holds no batch (the writer invariant: bytes leave in queue
//! order whoever writes them). It writes the whole queue, then queues its own frame in the
//! room that made (a request's frame goes first and the turn ends as a direct write), and
//! while the socket is full it waits in `poll(2)` on the socket, for at most [`WAIT`]: the
//! kernel wakes it, no worker. The role is only ever held inside one synchronous call, never
//! across an await, so a dropped future cannot leave it held. The queue stays under the
//! lock the whole time (it is unlocked only while waiting): a link transition that comes
//! meanwhile (a planned move, a lost link) takes the queue, partly written frames and all,
//! as it takes it from the engine, and the caller sees that and leaves.
//!
//! Once the queue is written the connection is in a bulk run ([`Writer::Bulk`]): the
//! caller's next publishes queue without waking anyone until one of them reaches the
//! limit again and writes. A publishing loop then never wakes a worker, as the raw client
//! never does. What the last publishes of a run leave queued goes out through the engine's
//! tail watch: it looks every [`TAIL`] and takes the queue back once a whole period passed
//! with no publish (so two or three milliseconds after the run ends; a flush or a request
//! writes at once, and a publish from a task, or from anywhere after the engine took the
//! queue back, is the engine's again). The engine is woken once, when a run starts, to arm
//! that watch.
//!
//! A caller that reaches the limit while the engine holds a batch parks as any publisher
//! does, flagged as outside the workers (`Writes::outside_waiter`); the engine, once that
//! batch is written, hands it the queue as a bulk run rather than taking it
//! (`Writes::hand_to_outside_waiter`), so a long stream does not stay the engine's because
//! it happened to hold a batch when the queue first filled.
//!
//! A task (on a worker) at the write limit does less: when the engine was woken for the
//! queue but has not taken it, the task writes it itself, as far as the socket takes it
//! without waiting, and queues its own frame if that made room ([`write_for_task`]); the
//! role is never held past that write, and a full socket leaves the rest to the engine and
//! the task awaiting room, as before. A publishing loop in a task and the engine used to
//! take turns through the worker's LIFO slot at every full queue, and tokio wakes a second
//! worker after three such hand-offs in a row; now the task yields to the engine once
//! every [`TASK_TURNS`] queues, or when the socket is full.
//!
//! What is given up: a publish at the limit may hold its thread for up to [`WAIT`], where it
//! used to await, so other futures of the same `block_on` (a `join!`, a timeout around it)
//! wait that long too. Past [`WAIT`] the run stays the caller's ([`Turn::Paused`]): the
//! publish yields to its executor once ([`YieldOnce`]) with its frame not queued (a publish
//! still pending has queued nothing, so a timeout that drops it sends nothing), then queues
//! it into the room the turn made or takes its next turn. Those futures are polled at least
//! once every [`WAIT`] while the socket stays full, and no worker is woken. A stream that
//! outpaces the server meets this all the time: the socket's room comes back in pieces of a
//! third of its buffer, 10-20 ms apart. Handing the queue to the engine there (as this did
//! until issue 31's eighteenth stop) put the rest of the stream on the engine's batches,
//! with a wake-up of a worker and one of the publisher for each. A publish below the limit
//! that brings the queue to 64 KiB writes what the socket takes and never waits for room it
//! does not need; once a turn found the socket full, publishes queue up to the limit
//! (`Writes::bulk_paused`), where the next turn waits. A pause lets publishers parked for
//! room look again.
//! A server that reads nothing at all is another matter: once the run's turns have written
//! nothing for [`STALL`], the queue goes to the engine, which waits for room with no thread
//! awake, and the publisher awaits room (`Writes::bulk_stalled` keeps the engine from
//! handing it straight back). A flush or a request whose turn finds the socket full for
//! [`WAIT`] hands the queue to the engine too, and a task that finds a run's queue full
//! wakes the engine to take it. Should a paused publish be dropped, the tail watch takes
//! the queue back: each pause is a sign of the run, as each publish is. TLS and WebSocket
//! connections, other platforms than Unix, and the linger policy leave a full queue to the
//! engine.

use std::io::{self, IoSlice};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;
use tokio::sync::Notify;

use crate::floor::frames::{Frames, IOVECS};
use crate::floor::sync::lock;
use crate::socket::Socket;
use crate::statistics::Statistics;
use crate::writer::{After, Writer, Writes};

/// The longest a caller waits in `poll(2)` for room in the socket in one turn: then a bulk
/// run pauses ([`Turn::Paused`]), a flush's or request's turn hands the queue to the engine.
pub(crate) const WAIT: Duration = Duration::from_millis(5);

/// How long a bulk run's turns may write nothing at all before the run goes to the engine:
/// the server has stopped reading (a stalled link, a stopped server), not just fallen behind
/// (a stream that outpaces it finds room every 10-20 ms). The engine then waits for room
/// with no thread awake and the publisher awaits room, where paused turns would wake the
/// caller every [`WAIT`] and the engine's tail watch every [`TAIL`] for as long as the
/// stall lasts.
pub(crate) const STALL: Duration = Duration::from_millis(50);

/// How often the engine looks whether a bulk run's publishes stopped (tokio's timers tick
/// in milliseconds, so this is their finest).
pub(crate) const TAIL: Duration = Duration::from_millis(1);

/// What a caller's turn uses of the client's shared state (`Shared::write_side`).
pub(crate) struct WriteSide<'a> {
    pub(crate) writes: &'a Mutex<Writes>,
    pub(crate) statistics: &'a Statistics,
    /// `Shared::kicks`: counts the engine's wake-ups by callers.
    pub(crate) kicks: &'a AtomicU64,
    pub(crate) engine_waker: &'a AtomicWaker,
    /// Publishers waiting for room.
    pub(crate) space: &'a Notify,
    /// `Shared::directly_written`.
    pub(crate) directly_written: &'a AtomicBool,
    /// `Shared::caller_turns`.
    pub(crate) turns: &'a AtomicU64,
}

impl WriteSide<'_> {
    fn writes(&self) -> MutexGuard<'_, Writes> {
        lock(self.writes)
    }
}

/// Whether the caller may take the writer role for a queue at the write limit: the
/// connection is plain TCP on Unix with no linger policy (`lingering` false), nothing is in
/// flight (the engine holds no batch and no other caller is writing), and the caller runs
/// outside the workers (asked last, of `outside_workers`).
pub(crate) fn may_take_over(
    writes: &Writes,
    lingering: bool,
    outside_workers: fn() -> bool,
) -> bool {
    cfg!(unix)
        && !lingering
        && matches!(
            writes.writer,
            Writer::Idle | Writer::DirectlyWritten | Writer::Woken | Writer::Bulk
        )
        // A run that stalled is the engine's until it has taken a batch.
        && !writes.bulk_stalled
        && writes.queue.link().is_some()
        && outside_workers()
}

/// At most this many queues in a row a task writes at the write limit
/// ([`write_for_task`]) before it waits for the engine once: the engine, woken by the
/// task's first publish, sits in that worker's LIFO slot, where no other worker takes it,
/// and reads nothing until the task yields. 32 queues of the default limit are 4 MiB, a
/// few milliseconds of writing: about what tokio's budget lets a task write to a plain
/// socket before it must yield (128 writes).
pub(crate) const TASK_TURNS: u32 = 32;

/// A task (on a worker) at the write limit writes the queue itself, without waiting, when
/// the engine was woken for it but has not taken it (so it holds no batch: the writer
/// invariant), the link is plain TCP and no linger policy is on. It writes until the queue
/// is empty or the socket is full, under the lock, as the engine would, and leaves the
/// writer `Woken`: the engine takes what is left when it runs. Returns whether it wrote;
/// the caller then looks for room again, and awaits it as before if there is none.
///
/// Without it, a task publishing in a loop and the engine took turns through the worker's
/// LIFO slot, task, engine, task, ..., and tokio, after three such hand-offs in a row,
/// queues the next one where other workers may steal it and wakes a parked worker: one
/// wake-up of a second worker (through the I/O driver) for every two queues written.
pub(crate) fn write_for_task(shared: &WriteSide<'_>, writes: &mut Writes, lingering: bool) -> bool {
    if lingering
        || writes.writer != Writer::Woken
        || writes.task_turns >= TASK_TURNS
        || tokio::task::try_id().is_none()
    {
        return false;
    }
    if writes.queue.link().is_none() {
        return false;
    }
    #[cfg(debug_assertions)]
    debug_assert!(
        !writes.engine_holds_batch,
        "a task writes only while nothing is in flight"
    );
    writes.task_turns += 1;
    shared.turns.fetch_add(1, Ordering::Relaxed);
    writes.count_out(shared.statistics);
    // A full socket or an error stops it: the engine waits for room, or meets the error and
    // ends the link with it.
    let mut wrote = false;
    if let (frames, Some(socket)) = writes.queue.frames_and_link() {
        while let Ok(written @ 1..) = crate::socket::try_write(frames, socket) {
            wrote = true;
            Statistics::add(&shared.statistics.out_bytes, written as u64);
            if frames.is_empty() {
                break;
            }
        }
    }
    if wrote {
        writes.bulk_stuck_since = None;
    }
    true
}

/// How a caller's turn as the writer ended ([`write_as_caller`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(crate) enum Turn {
    /// The whole queue is written.
    Written,
    /// A bulk run's socket stayed full for the turn's wait: the run is still the caller's
    /// ([`Writer::Bulk`], nobody writing meanwhile). A publish that has not queued its frame
    /// lets its executor run other futures once ([`YieldOnce`]) and tries again.
    Paused,
    /// The queue went to the engine (an error, not plain TCP, a flush's or request's socket
    /// full for [`WAIT`], a run that wrote nothing for [`STALL`]) or to a link transition.
    Left,
}

/// Writes the queue to the socket as the writer, until it is empty, the socket stays full
/// for `wait` (at most [`WAIT`]; zero for a publish below the write limit, which needs no
/// room), or a link transition takes the queue; see the module's docs. Returns with the
/// lock let go, the engine woken if it is owed a wake-up.
pub(crate) fn write_as_caller(
    shared: &WriteSide<'_>,
    writes: MutexGuard<'_, Writes>,
    after: After,
    wait: Duration,
) -> Turn {
    let link = writes.queue.link_id();
    let Some(socket) = writes.queue.link().cloned() else {
        // Not plain TCP after all: the engine writes.
        hand_back(shared, writes);
        return Turn::Left;
    };
    // Declared before the lock's guard below, so that on unwinding the guard is let go
    // before the role is handed back (which locks again).
    let role = Role { shared };
    let mut writes = writes;
    writes.writer = Writer::Caller;
    writes.bulk_paused = false;
    shared.turns.fetch_add(1, Ordering::Relaxed);
    loop {
        writes.count_out(shared.statistics);
        match send(writes.queue.frames_mut(), &socket) {
            Ok(written) => {
                if written > 0 {
                    writes.bulk_stuck_since = None;
                }
                Statistics::add(&shared.statistics.out_bytes, written as u64);
            }
            // The engine meets the error on its side and ends the link with it.
            Err(_) => break,
        }
        if writes.queue.is_empty() {
            role.keep();
            end_turn(shared, writes, after);
            return Turn::Written;
        }
        let writable = if wait.is_zero() {
            Ok(false)
        } else {
            drop(writes);
            let writable = wait_writable(&socket, wait);
            writes = shared.writes();
            if writes.writer != Writer::Caller || writes.queue.link_id() != link {
                // A link transition took the queue meanwhile, and the role with it.
                role.keep();
                return Turn::Left;
            }
            writable
        };
        match writable {
            Ok(true) => {}
            // A bulk run keeps the queue: the server reads slower than the caller publishes,
            // and handing the queue to the engine here put the whole stream on the engine's
            // batches, with two thread wake-ups each (issue 31, eighteenth stop).
            Ok(false) if after == After::Bulk => {
                if !stalled(&mut writes) {
                    role.keep();
                    pause_run(shared, writes);
                    return Turn::Paused;
                }
                // Nothing written for `STALL`: the engine takes the queue as a batch and
                // waits for room, and the publisher awaits room.
                writes.bulk_stalled = true;
                break;
            }
            // A flush or a request: the engine waits for room and writes it.
            Ok(false) | Err(_) => break,
        }
    }
    role.keep();
    hand_back(shared, writes);
    Turn::Left
}

/// Whether a bulk run whose turn just found no room has written nothing for [`STALL`]; the
/// first such turn starts the clock. A stalled run's clock is stopped, as the run goes to
/// the engine.
fn stalled(writes: &mut Writes) -> bool {
    let now = Instant::now();
    match writes.bulk_stuck_since {
        Some(since) if now.saturating_duration_since(since) >= STALL => {
            writes.bulk_stuck_since = None;
            true
        }
        Some(_) => false,
        None => {
            writes.bulk_stuck_since = Some(now);
            false
        }
    }
}

/// A bulk run's socket stayed full for its turn's wait: the run stays the caller's, written
/// by its next turn, and the engine's tail watch, which takes the queue back once a whole period
/// passes with no sign of the run, is told that it goes on. Publishers parked for room look
/// again, as the turn may have made some.
fn pause_run(shared: &WriteSide<'_>, mut writes: MutexGuard<'_, Writes>) {
    writes.bulk_paused = true;
    writes.bulk_publishes += 1;
    // Otherwise it ends as a turn that wrote the queue does: the run goes on.
    end_turn(shared, writes, After::Bulk);
}

/// Lets the executor run other futures once: wakes its own task and is pending on the first
/// poll, ready on the next. A publish whose bulk run paused ([`Turn::Paused`]) awaits it
/// before its next turn, so a `join!` or `select!` beside it in the same `block_on` (a
/// timeout, a signal) is polled at least once every [`WAIT`] while the socket stays full.
/// Not `tokio::task::yield_now`: the publish may run outside tokio (the runtime-neutral
/// backend), and this needs nothing of a runtime.
#[derive(Debug, Default)]
pub(crate) struct YieldOnce {
    yielded: bool,
}

impl std::future::Future for YieldOnce {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.yielded {
            return std::task::Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// The turn is over (the queue written, or a run paused): the bulk run goes on, or ends as a
/// direct write.
fn end_turn(shared: &WriteSide<'_>, mut writes: MutexGuard<'_, Writes>, after: After) {
    let wake_publishers = std::mem::take(&mut writes.space_waiters);
    writes.outside_waiter = false;
    let wake_engine = match after {
        After::Bulk => {
            writes.writer = Writer::Bulk;
            // The engine watches for the end of the run; it needs waking only when its last
            // look found no caller writing.
            let watched = writes.bulk_watched;
            if !watched {
                shared.kicks.fetch_add(1, Ordering::Release);
            }
            !watched
        }
        After::Direct => {
            writes.writer = Writer::DirectlyWritten;
            shared.directly_written.store(true, Ordering::Release);
            false
        }
    };
    drop(writes);
    if wake_publishers {
        shared.space.notify_waiters();
    }
    if wake_engine {
        shared.engine_waker.wake();
    }
}

/// Gives the queue to the engine: marks the writer `Woken`, lets go of the lock and wakes it.
fn hand_back(shared: &WriteSide<'_>, mut writes: MutexGuard<'_, Writes>) {
    writes.kick(shared.kicks);
    drop(writes);
    shared.engine_waker.wake();
}

/// The writer role while a caller holds it: should the thread unwind during the turn, the
/// queue goes back to the engine.
struct Role<'a> {
    shared: &'a WriteSide<'a>,
}

impl Role<'_> {
    /// The turn ended on its own terms: nothing to hand back here.
    fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Role<'_> {
    fn drop(&mut self) {
        let writes = self.shared.writes();
        if writes.writer == Writer::Caller {
            hand_back(self.shared, writes);
        }
    }
}

/// One non-blocking vectored write of `frames`, straight to the socket: tokio's `try_write`
/// would answer from its cached readiness, which only a worker in the I/O driver sets again
/// after the socket was full, and waking that worker is what this path avoids. Returns the
/// bytes written (0 when the socket is full).
#[cfg(unix)]
fn send(frames: &mut Frames, socket: &Socket) -> io::Result<usize> {
    use rustix::net::{SendAncillaryBuffer, SendFlags, sendmsg};
    let mut slices = [IoSlice::new(&[]); IOVECS];
    let count = frames.io_slices(&mut slices);
    let mut control = SendAncillaryBuffer::default();
    loop {
        match sendmsg(socket, &slices[..count], &mut control, SendFlags::NOSIGNAL) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => {
                frames.advance(written);
                return Ok(written);
            }
            Err(rustix::io::Errno::AGAIN) => return Ok(0),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Waits in `poll(2)` until the socket has room, for at most `bound`: `Ok(false)` if it
/// still has none. An error or hang-up on the socket counts as room: the next write meets it.
#[cfg(unix)]
fn wait_writable(socket: &Socket, bound: Duration) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(socket, PollFlags::OUT)];
    let timeout = Timespec::try_from(bound).map_err(|_| io::ErrorKind::InvalidInput)?;
    match poll(&mut fds, Some(&timeout)) {
        Ok(ready) => Ok(ready > 0),
        // A signal: the caller writes again, and waits again if need be.
        Err(rustix::io::Errno::INTR) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(unix))]
fn send(_: &mut Frames, _: &Socket) -> io::Result<usize> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(not(unix))]
fn wait_writable(_: &Socket, _: Duration) -> io::Result<bool> {
    Ok(false)
}

#[cfg(test)]
#[path = "caller_write_tests.rs"]
mod tests;
