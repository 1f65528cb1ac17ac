//! Who writes a blocking client's buffer to the socket, and when.
//!
//! A caller writes from its own thread when the socket is free and either the frame is
//! urgent (a request, a flush's PING, a SUB) or the connection was idle: idle traffic and
//! request/reply leave at once. While a write is in progress frames pile up and leave
//! together in the writer's next round. A publish right after another write, with no bytes
//! read since, is left to the flusher thread (woken once, "kick once") unless the buffer
//! has grown past [`WRITE_AT`], where the caller writes it itself, as a `BufWriter` would:
//! a publishing loop makes one write per tens of KiB, not one per message. Past the write
//! limit publishers wait for room.
//!
//! A caller with an answer to wait for (urgent frames), and whoever starts a planned move,
//! is not held by a socket that takes nothing: after [`WRITE_SLICE`] it hands the rest of
//! its batch, and the writer's role, to the flusher thread. The background thread never
//! writes more than that slice (`Urgency::Soon`).
//!
//! A planned move ([`WriteSide::handle_move`]) splits the queue (see [`Writes`]).
//!
//! The write side is its own part of the client's state, beside the read side and the
//! protocol state behind `Inner::core`: it locks only its own [`Writes`], and tells the
//! rest of the client what happened on the wire through [`Host`].

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use rnats_proto::Pub;

use super::conn::{WRITE_SLICE, Written};
use super::writer::{Batch, Urgency, Writes};
use crate::error::{PublishCause, PublishError};
use crate::floor::session::PingId;
use crate::floor::sync::lock;
use crate::options::ConnectOptions;
use crate::statistics::Statistics;
use crate::subject::SubjectCheck;

/// A deferred buffer this large is written by the publisher that grows it.
const WRITE_AT: usize = 64 * 1024;
/// A publish within this of the last write ends is part of a burst: deferred.
const BURST_GAP: Duration = Duration::from_micros(20);
/// The flusher writes deferred publishes once none came for this long (the burst is
/// over)...
const LINGER: Duration = Duration::from_micros(200);
/// ...or once the oldest of them waited this long. Meanwhile a publishing loop writes its
/// own buffer every [`WRITE_AT`] bytes, so the flusher does not compete with it (and the
/// server) for the CPU.
const MAX_DELAY: Duration = Duration::from_millis(1);

/// What the write side tells the rest of the client.
pub(super) trait Host {
    /// A write to link `generation` failed: the link is lost.
    fn link_failed(&self, generation: u64, reason: &str);
    /// A planned move's old link has had every byte it was left handed to its socket.
    fn handover_written(&self);
}

/// A blocking client's write side: its queue under one lock, and the threads waiting on it.
pub(super) struct WriteSide {
    writes: Mutex<Writes>,
    /// Signalled when the queue was taken (room for blocked publishers) or a writer
    /// finished.
    space: Condvar,
    /// Wakes the flusher thread for publishes left to it.
    flusher: Condvar,
    /// Reads that brought bytes, counted by the read side: a publish after one is not part
    /// of a burst (see [`WriteSide::submit`]).
    reads: AtomicU64,
    statistics: Arc<Statistics>,
    /// Publishers wait while a writer empties a queue this long.
    write_limit: usize,
    /// The most a disconnected client keeps for the next link.
    reconnect_buffer: usize,
    /// How long a planned move's old link may take to be written.
    move_grace: Duration,
}

impl WriteSide {
    pub(super) fn new(options: &ConnectOptions, statistics: Arc<Statistics>) -> WriteSide {
        WriteSide {
            writes: Mutex::new(Writes::new(options.write_buffer_limit)),
            space: Condvar::new(),
            flusher: Condvar::new(),
            reads: AtomicU64::new(0),
            statistics,
            write_limit: options.write_buffer_limit,
            reconnect_buffer: options.reconnect.buffer_size,
            move_grace: options.connection_timeout,
        }
    }

    pub(super) fn writes(&self) -> MutexGuard<'_, Writes> {
        lock(&self.writes)
    }

    /// The read side read bytes.
    pub(super) fn note_read(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }

    /// How many reads brought bytes so far.
    pub(super) fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// Queues a PUB/HPUB, waiting while the queue is over the write limit (never while
    /// disconnected: then the reconnect buffer's limit is an error). Returns whether this
    /// thread wrote a publishing loop's batch itself: it then reads what came for nobody
    /// meanwhile, if anything did (`Inner::read_behind_publishes`).
    pub(super) fn publish(
        &self,
        host: &impl Host,
        frame: &Pub<'_>,
        payload: &Bytes,
        urgency: Urgency,
        check: SubjectCheck,
    ) -> Result<bool, PublishError> {
        let payload_len = payload.len();
        let mut writes = self.writes();
        check.run(&writes.queue, frame.subject)?;
        loop {
            if writes.queue.is_closed() {
                return Err(PublishCause::Closed.into());
            }
            if !writes.queue.is_live() {
                let limit = self.reconnect_buffer;
                if writes.queue.len() + frame.encoded_len(payload_len) > limit {
                    return Err(PublishCause::ReconnectBufferFull { limit }.into());
                }
                writes.queue.push_pub(frame, payload);
                return Ok(false);
            }
            // An empty queue always takes one message, however large; a full one waits
            // only for a writer that is emptying it.
            if writes.writing && writes.queue.len() >= self.write_limit {
                writes.space_waiters += 1;
                writes = self
                    .space
                    .wait(writes)
                    .unwrap_or_else(PoisonError::into_inner);
                writes.space_waiters -= 1;
                continue;
            }
            break;
        }
        let was_empty = writes.queue.is_empty();
        writes.queue.push_pub(frame, payload);
        writes.appends += 1;
        // A publishing loop writes its own buffer every WRITE_AT bytes.
        let bulk = urgency == Urgency::Normal && writes.queue.len() >= self.write_at();
        Ok(self.submit(host, writes, urgency, was_empty) && bulk)
    }

    /// Answers a server PING, unless the PONG already queued answers it too
    /// (`WriteQueue::push_pong`).
    pub(super) fn send_pong(&self, host: &impl Host, urgency: Urgency) {
        let mut writes = self.writes();
        if writes.queue.is_live() && writes.queue.push_pong() {
            self.submit(host, writes, urgency, false);
        }
    }

    /// Sends what is already queued on a locked buffer (a new link's subscriptions), as
    /// `urgency` says.
    pub(super) fn send_queued(
        &self,
        host: &impl Host,
        writes: MutexGuard<'_, Writes>,
        urgency: Urgency,
    ) {
        self.submit(host, writes, urgency, false);
    }

    /// Queues a control frame built by `encode` on an already locked buffer.
    pub(super) fn send_control_locked(
        &self,
        host: &impl Host,
        mut writes: MutexGuard<'_, Writes>,
        encode: impl FnOnce(&mut BytesMut),
    ) {
        if !writes.queue.is_live() {
            return;
        }
        writes.queue.push_control(encode);
        self.submit(host, writes, Urgency::Now, false);
    }

    /// Queues a PING and writes it; returns its number, for its outcome
    /// (`Pings::outcome`), or `None` when no link is up to take it (disconnected, moving,
    /// closed). The write buffer numbers it where it is queued, so numbers follow wire
    /// order and the n-th PONG on the link answers PING n; the session is not locked.
    pub(super) fn push_ping(&self, host: &impl Host, urgency: Urgency) -> Option<PingId> {
        let mut writes = self.writes();
        if !writes.queue.is_live() {
            return None;
        }
        let id = PingId {
            seq: writes.queue.push_ping(),
            link: writes.queue.link_id(),
        };
        self.submit(host, writes, urgency, false);
        Some(id)
    }

    /// How many PINGs were queued on the current link, for the session's PONG count
    /// (`Pings::on_pong`).
    pub(super) fn pings_queued(&self) -> u64 {
        self.writes().queue.pings_queued()
    }

    /// Whether a frame whose answer a thread reads (not a publish) was queued less than
    /// `gap` ago: that thread is likely about to read the bytes that came.
    pub(super) fn answer_expected_within(&self, gap: Duration) -> bool {
        self.writes().last_urgent.elapsed() < gap
    }

    /// Whether the queue takes no more frames.
    pub(super) fn is_closed(&self) -> bool {
        self.writes().queue.is_closed()
    }

    /// The size past which a publisher writes the buffer itself.
    fn write_at(&self) -> usize {
        WRITE_AT.min(self.write_limit)
    }

    /// Decides who writes what was just queued; true when this thread wrote it.
    #[inline]
    fn submit(
        &self,
        host: &impl Host,
        mut writes: MutexGuard<'_, Writes>,
        urgency: Urgency,
        was_empty: bool,
    ) -> bool {
        let now = match urgency {
            Urgency::Now => {
                let now = Instant::now();
                writes.last_urgent = now;
                Some(now)
            }
            Urgency::Normal | Urgency::Soon => None,
        };
        if writes.writing || !writes.queue.is_live() {
            // The writer's next round takes it (or the next link does).
            return false;
        }
        let write = match urgency {
            Urgency::Now => true,
            Urgency::Soon => false,
            // Past the write limit nobody else may be writing yet: this publisher does.
            Urgency::Normal if writes.queue.len() >= self.write_at() => true,
            // Already deferred: the flusher is on it.
            Urgency::Normal if !was_empty => false,
            // Idle: no write for a while, or bytes were read since the last one (a reply
            // to a request just read, say: the connection waited for input, whatever the
            // time since its last write).
            Urgency::Normal => {
                let now = Instant::now();
                writes.oldest = now;
                now.duration_since(writes.last_write) >= BURST_GAP
                    || self.reads.load(Ordering::Relaxed) != writes.reads_at_write
            }
        };
        if write {
            // A caller with an answer to wait for (a request, a flush) is not held by a
            // socket that takes nothing: after a slice the flusher writes on. A publisher
            // is: its wait is the back-pressure.
            self.write_now(host, writes, now.map(|now| now + WRITE_SLICE));
        } else if !writes.flusher_kicked {
            writes.flusher_kicked = true;
            self.flusher.notify_one();
        }
        write
    }

    /// Writes the buffer from this thread, unless another thread is writing; past
    /// `hand_off`, what is left goes to the flusher thread (see [`WriteSide::write_out`]).
    pub(super) fn write_now(
        &self,
        host: &impl Host,
        writes: MutexGuard<'_, Writes>,
        hand_off: Option<Instant>,
    ) {
        if !writes.writing {
            drop(self.write_out(host, writes, None, hand_off));
        }
    }

    /// Writes rounds of the buffer until it is empty, from `first` if given (a batch the
    /// last writer handed over): frames queued during a write leave together in the next
    /// round.
    ///
    /// A writer that is still writing at `hand_off` leaves the rest of its batch, and the
    /// writer's role with it, to the flusher thread ([`Writes::hand_off`]), and returns:
    /// nobody else writes meanwhile, so no byte changes places. A planned move's old link
    /// is dropped if it has not taken its batch by the move's deadline.
    fn write_out<'a>(
        &'a self,
        host: &impl Host,
        mut writes: MutexGuard<'a, Writes>,
        first: Option<Batch>,
        hand_off: Option<Instant>,
    ) -> MutexGuard<'a, Writes> {
        writes.writing = true;
        let mut next = first.or_else(|| self.take_batch(&mut writes));
        while let Some(batch) = next {
            if writes.space_waiters > 0 {
                self.space.notify_all();
            }
            drop(writes);
            let Batch {
                conn,
                generation,
                mut frames,
                handover_until,
                ..
            } = batch;
            // A planned move's old link is given up at the move's deadline, whoever writes
            // it; a writer with a slice of its own hands it over sooner, as any batch.
            let until = match (handover_until, hand_off) {
                (Some(end), Some(slice)) => Some(end.min(slice)),
                (end, slice) => end.or(slice),
            };
            let result = conn.write_frames(&mut frames, until);
            writes = self.writes();
            match result {
                Ok(Written::Stopped) if handover_until.is_none_or(|end| Instant::now() < end) => {
                    writes.hand_off = Some(Batch {
                        conn,
                        generation,
                        frames,
                        messages: 0,
                        handover_until,
                    });
                    writes.flusher_kicked = true;
                    self.flusher.notify_one();
                    // A close waiting for the writer takes it if the flusher has ended.
                    if writes.space_waiters > 0 {
                        self.space.notify_all();
                    }
                    return writes;
                }
                Ok(Written::Stopped) => {
                    drop(writes);
                    let reason = "the old link had not taken everything by the move's deadline";
                    host.link_failed(generation, reason);
                    writes = self.writes();
                }
                Err(error) => {
                    drop(writes);
                    // A write stalled past `write_timeout` says so itself (`write_frames`).
                    let reason = match error.kind() {
                        io::ErrorKind::TimedOut => error.to_string(),
                        _ => format!("write failed: {error}"),
                    };
                    host.link_failed(generation, &reason);
                    writes = self.writes();
                }
                Ok(Written::All) if handover_until.is_some() => {
                    self.note_handover_written(host, writes, generation);
                    writes = self.writes();
                }
                Ok(Written::All) => {}
            }
            writes.return_spare(frames);
            writes.last_write = Instant::now();
            writes.reads_at_write = self.reads();
            next = self.take_batch(&mut writes);
        }
        writes.writing = false;
        if writes.space_waiters > 0 {
            self.space.notify_all();
        }
        writes
    }

    /// The next batch to write (see [`Writes::take_batch`]), counted in the statistics as
    /// handed to the socket, before the write: a reply may beat the return of the write
    /// call.
    fn take_batch(&self, writes: &mut Writes) -> Option<Batch> {
        let batch = writes.take_batch()?;
        Statistics::add(&self.statistics.out_messages, batch.messages);
        // Every protocol byte counts, as in async-nats: frames, not only payloads.
        Statistics::add(&self.statistics.out_bytes, batch.frames.len() as u64);
        Some(batch)
    }

    /// The flusher thread: writes the publishes left to it, and the batches writers hand
    /// it, until the client closes.
    pub(super) fn run_flusher(&self, host: &impl Host) {
        let mut writes = self.writes();
        loop {
            writes = self
                .flusher
                .wait_while(writes, |w| {
                    !w.flusher_kicked && w.hand_off.is_none() && !w.queue.is_closed()
                })
                .unwrap_or_else(PoisonError::into_inner);
            // First, even when closing: the writer's role came with it.
            if let Some(batch) = writes.hand_off.take() {
                writes = self.write_out(host, writes, Some(batch), None);
                writes.flusher_kicked = false;
                continue;
            }
            if writes.queue.is_closed() {
                return;
            }
            loop {
                let seen = writes.appends;
                writes = self
                    .flusher
                    .wait_timeout(writes, LINGER)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                if writes.hand_off.is_some() || writes.queue.is_closed() {
                    break;
                }
                if writes.queue.is_empty() || !writes.queue.is_live() {
                    // Its publisher wrote it.
                    break;
                }
                let quiet = writes.appends == seen;
                if !writes.writing && (quiet || writes.oldest.elapsed() >= MAX_DELAY) {
                    writes = self.write_out(host, writes, None, None);
                    break;
                }
            }
            writes.flusher_kicked = false;
        }
    }

    /// Writes what is queued now, from this thread, unless another thread is writing.
    pub(super) fn write_pending(&self, host: &impl Host) {
        let writes = self.writes();
        if writes.has_batch() {
            // The background thread calls this too: it must not be held (see `Urgency::Soon`).
            self.write_now(host, writes, Some(Instant::now() + WRITE_SLICE));
        }
    }

    /// Starts a planned move on the write side (see [`Writes::handle_move`]). Returns the
    /// number of the old link's last PING, for the session (`Pings::note_last_ping`: its
    /// PONG ends the old link), or `None` if there is no live link. The caller holds
    /// `core`, so the old link's frames are written later, by [`WriteSide::write_pending`]
    /// or the writer in progress.
    pub(super) fn handle_move(&self) -> Option<u64> {
        let mut writes = self.writes();
        // A server that stops reading must not hold the old link's writes past the move's
        // deadline (the background thread ends the move then).
        let last_ping = writes.handle_move(super::time::saturating_deadline(self.move_grace))?;
        // Publishers waiting for room now fill the reconnect buffer.
        if writes.space_waiters > 0 {
            self.space.notify_all();
        }
        Some(last_ping)
    }

    /// The old link's frames of the move on link `generation` are all written: the
    /// background thread, which ends the move, may be waiting for that.
    fn note_handover_written(
        &self,
        host: &impl Host,
        mut writes: MutexGuard<'_, Writes>,
        generation: u64,
    ) {
        match writes.handover.as_mut() {
            Some(handover) if handover.generation == generation => handover.written = true,
            _ => return,
        }
        drop(writes);
        host.handover_written();
    }

    /// Before closing: refuses new publishes and writes out what was queued (waiting up to
    /// `timeout` for a writer in progress).
    pub(super) fn finish_writes(&self, host: &impl Host, timeout: Duration) {
        let deadline = super::time::saturating_deadline(timeout);
        let mut writes = self.writes();
        writes.queue.refuse();
        self.flusher.notify_all();
        loop {
            if !writes.has_batch() && !writes.writing {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            // A batch handed over now has nobody else to take it: the flusher may have
            // ended as the queue closed.
            if let Some(batch) = writes.hand_off.take() {
                writes = self.write_out(host, writes, Some(batch), Some(deadline));
                continue;
            }
            if !writes.writing {
                writes = self.write_out(host, writes, None, Some(deadline));
                continue;
            }
            writes.space_waiters += 1;
            writes = self
                .space
                .wait_timeout(writes, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            writes.space_waiters -= 1;
        }
    }

    /// The client closed: the flusher ends and blocked publishers return.
    pub(super) fn notify_closed(&self) {
        self.flusher.notify_all();
        self.space.notify_all();
    }
}
