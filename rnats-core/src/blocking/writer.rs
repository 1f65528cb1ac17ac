//! The write side of a blocking client's state: the floor's [`WriteQueue`] (the frames
//! callers encode under a short lock, the link they are for, and the link transitions the
//! tokio client drives too), a planned move's [`Handover`] (what was accepted for the old
//! link, ending with a last PING, written ahead of anything else while the queue is the
//! reconnect buffer of the next link), and the bookkeeping of this driver's rule. Who
//! writes, and when, is that rule, in `write_side.rs`.

use std::mem;
use std::sync::Arc;
use std::time::Instant;

use super::conn::Conn;
use crate::floor::frames::Frames;
use crate::floor::write_queue::WriteQueue;

/// How soon a frame must leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Urgency {
    /// A publish: batched with others under load.
    Normal,
    /// Requests, flush PINGs, SUB/UNSUB, PONGs: written at once when the socket is free,
    /// by a caller that hands what is left after a slice to the flusher thread (it has an
    /// answer to wait for, under its own deadline).
    Now,
    /// Written by the flusher thread within its linger, never by the thread that queued
    /// it: the background thread's frames (keepalive PINGs, the PONGs it owes, a new
    /// link's subscriptions). That thread finds a stale link and shuts its socket, which
    /// is what frees a thread blocked writing to a server that stopped reading; blocked
    /// in a write itself, it would find nothing.
    Soon,
}

/// The write queue and who is writing it, behind `WriteSide::writes`.
pub(super) struct Writes {
    /// Frames not written yet, and the link they are for; while disconnected or moving,
    /// the reconnect buffer.
    pub(super) queue: WriteQueue<Arc<Conn>>,
    /// The frames of the last write, emptied, to swap in next.
    spare: Frames,
    /// A thread is writing (the caller or the flusher): others only append.
    pub(super) writing: bool,
    pub(super) last_write: Instant,
    /// When the last frame a thread reads the answer to (a flush's PING, a request, a
    /// SUB) was queued: bytes arriving soon after are likely that answer. Publishes do not
    /// count: a bulk publisher reads nothing, and what its subscriptions get must be read
    /// meanwhile, or the server cuts the connection as a slow consumer.
    pub(super) last_urgent: Instant,
    /// `ReadSide`'s count of reads when the last write ended.
    pub(super) reads_at_write: u64,
    /// Frames queued so far: the flusher tells a running burst from a finished one.
    pub(super) appends: u64,
    /// When the oldest deferred frame was queued.
    pub(super) oldest: Instant,
    pub(super) flusher_kicked: bool,
    pub(super) space_waiters: usize,
    /// During a planned move: what the old link still has to write.
    pub(super) handover: Option<Handover>,
    /// The rest of a batch a writer with somewhere else to be left unwritten, for the
    /// flusher thread, with the writer's role (`writing` stays set): it leaves before
    /// anything else.
    pub(super) hand_off: Option<Batch>,
}

/// The frames a planned move leaves to the old link: everything accepted before the move,
/// ending with the move's last PING.
pub(super) struct Handover {
    pub(super) conn: Arc<Conn>,
    pub(super) generation: u64,
    /// The move's deadline: the old link is not written past it.
    until: Instant,
    /// Not taken by a writer yet.
    frames: Option<Frames>,
    messages: u64,
    /// Every byte of `frames` was handed to the socket.
    pub(super) written: bool,
}

impl Writes {
    /// An empty write side with no link yet, for a write limit of `write_limit`.
    pub(super) fn new(write_limit: usize) -> Writes {
        let now = Instant::now();
        Writes {
            queue: WriteQueue::new(write_limit),
            spare: Frames::default(),
            writing: false,
            last_write: now,
            last_urgent: now,
            reads_at_write: 0,
            appends: 0,
            oldest: now,
            flusher_kicked: false,
            space_waiters: 0,
            handover: None,
            hand_off: None,
        }
    }

    /// The link is gone (see [`WriteQueue::handle_disconnected`]); so is a planned move's
    /// old link.
    pub(super) fn handle_disconnected(&mut self) {
        self.queue.handle_disconnected();
        self.handover = None;
    }

    /// Starts a planned move (see [`WriteQueue::handle_move`]): what was accepted so far
    /// and a last PING are left to the old link, and the queue becomes the reconnect
    /// buffer. Returns the number of that PING (its PONG ends the old link), or `None` if
    /// there is no live link.
    pub(super) fn handle_move(&mut self, until: Instant) -> Option<u64> {
        let handover = self.queue.handle_move()?;
        // A live link of this driver always has its connection (`handle_connected`).
        let conn = handover.link?;
        self.handover = Some(Handover {
            conn,
            generation: handover.link_id,
            until,
            frames: Some(handover.frames),
            messages: handover.messages,
            written: false,
        });
        Some(handover.last_ping)
    }

    /// Whether the old link of a planned move has had every byte handed to its socket.
    pub(super) fn handover_written(&self) -> bool {
        self.handover.as_ref().is_some_and(|h| h.written)
    }

    /// Whether a writer has something to write: the old link's frames of a planned move,
    /// or the live link's queue.
    pub(super) fn has_batch(&self) -> bool {
        let handover = self.handover.as_ref().is_some_and(|h| h.frames.is_some());
        handover || self.queue.is_live() && !self.queue.is_empty()
    }

    /// The next batch to write, in order: a planned move's frames for the old link come
    /// before anything queued for the next one. Takes the batch's statistics with it.
    pub(super) fn take_batch(&mut self) -> Option<Batch> {
        if let Some(handover) = self.handover.as_mut()
            && let Some(frames) = handover.frames.take()
        {
            return Some(Batch {
                conn: Arc::clone(&handover.conn),
                generation: handover.generation,
                frames,
                messages: handover.messages,
                handover_until: Some(handover.until),
            });
        }
        let mut frames = mem::take(&mut self.spare);
        let Some(taken) = self.queue.take_batch(&mut frames) else {
            self.spare = frames;
            return None;
        };
        // A live link of this driver always has its connection (`handle_connected`).
        let conn = taken.link?;
        Some(Batch {
            conn,
            generation: taken.link_id,
            frames,
            messages: taken.messages,
            handover_until: None,
        })
    }

    /// Keeps the frames of a finished write for the next one (its buffer is reused); a
    /// write that failed part way leaves them unwritten, and they are dropped.
    pub(super) fn return_spare(&mut self, frames: Frames) {
        if frames.is_empty() {
            self.spare = frames;
        }
    }

    /// A new link: `replay` (its SUBs) goes out ahead of the publishes kept meanwhile.
    pub(super) fn handle_connected(&mut self, conn: Arc<Conn>, generation: u64, replay: Frames) {
        self.queue.handle_connected(Some(conn), generation, replay);
    }

    /// Closed for good (see [`WriteQueue::handle_closed`]).
    pub(super) fn handle_closed(&mut self) {
        self.queue.handle_closed();
        self.handover = None;
    }
}

/// One round of writing: frames taken out of the shared queue, for one link.
pub(super) struct Batch {
    pub(super) conn: Arc<Conn>,
    pub(super) generation: u64,
    pub(super) frames: Frames,
    pub(super) messages: u64,
    /// The old link's frames of a planned move: the move's deadline, past which the old
    /// link is given up on.
    pub(super) handover_until: Option<Instant>,
}
