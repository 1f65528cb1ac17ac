//! The write side of a blocking client's state: one shared buffer that callers encode frames
//! into under a short lock, the link it goes to, and a planned move's [`Handover`] (what was
//! accepted for the old link, and a last PING, written ahead of anything else while the
//! buffer becomes the reconnect buffer of the next link). Who writes it, and when, is
//! `write_side.rs`'s rule.

use std::mem;
use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;

use super::conn::Conn;

/// How soon a frame must leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Urgency {
    /// A publish: batched with others under load.
    Normal,
    /// Requests, flush PINGs, SUB/UNSUB, PONGs: written at once when the socket is free.
    Now,
}

/// The write buffer and who is writing it, behind `Inner::writes`.
pub(super) struct Writes {
    /// Frames not written yet; while disconnected or moving, the reconnect buffer.
    pub(super) buf: BytesMut,
    /// The buffer of the last write, cleared, to swap in next.
    pub(super) spare: BytesMut,
    /// A thread is writing (the caller or the flusher): others only append.
    pub(super) writing: bool,
    pub(super) connected: bool,
    pub(super) closed: bool,
    pub(super) conn: Option<Arc<Conn>>,
    /// The number of the link `buf` is for (`Pings::link`): a failed write ends that link
    /// only.
    pub(super) generation: u64,
    /// PINGs queued on this link (flushes', keepalives', a planned move's last): a PING's
    /// number, which the n-th PONG answers (`Pings` in the session counts those).
    pub(super) pings: u64,
    /// Messages in `buf`, counted in the statistics once written.
    pub(super) out_messages: u64,
    pub(super) last_write: Instant,
    /// When the last frame a thread reads the answer to (a flush's PING, a request, a
    /// SUB) was queued: bytes arriving soon after are likely that answer. Publishes do not
    /// count: a bulk publisher reads nothing, and what its subscriptions get must be read
    /// meanwhile, or the server cuts the connection as a slow consumer.
    pub(super) last_urgent: Instant,
    /// `Inner::reads` when the last write ended.
    pub(super) reads_at_write: u64,
    /// Frames queued so far: the flusher tells a running burst from a finished one.
    pub(super) appends: u64,
    /// When the oldest deferred frame was queued.
    pub(super) oldest: Instant,
    pub(super) flusher_kicked: bool,
    pub(super) space_waiters: usize,
    /// During a planned move: what the old link still has to write.
    pub(super) handover: Option<Handover>,
}

/// The frames a planned move leaves to the old link: everything accepted before the move,
/// ending with the move's last PING.
pub(super) struct Handover {
    pub(super) conn: Arc<Conn>,
    pub(super) generation: u64,
    /// Not taken by a writer yet.
    pub(super) frames: Option<BytesMut>,
    pub(super) messages: u64,
    /// Every byte of `frames` was handed to the socket.
    pub(super) written: bool,
}

impl Writes {
    pub(super) fn new() -> Writes {
        Writes {
            buf: BytesMut::new(),
            spare: BytesMut::new(),
            writing: false,
            connected: false,
            closed: false,
            conn: None,
            generation: 0,
            pings: 0,
            out_messages: 0,
            last_write: Instant::now(),
            last_urgent: Instant::now(),
            reads_at_write: 0,
            appends: 0,
            oldest: Instant::now(),
            flusher_kicked: false,
            space_waiters: 0,
            handover: None,
        }
    }

    /// The link is gone. Frames queued for it are dropped (they may hold SUBs and PINGs of
    /// that link); after a planned move the buffer is already the reconnect buffer and is
    /// kept.
    pub(super) fn handle_disconnected(&mut self, generation: u64) {
        if self.connected {
            self.buf.clear();
            self.out_messages = 0;
        }
        self.connected = false;
        self.conn = None;
        self.handover = None;
        self.generation = generation;
        self.pings = 0;
    }

    /// Starts a planned move: what was accepted so far and a last PING are left to the
    /// old link, and the buffer becomes the reconnect buffer. Returns the number of that
    /// PING (its PONG ends the old link), or `None` if there is no live link.
    pub(super) fn hand_over(&mut self) -> Option<u64> {
        if !self.connected {
            return None;
        }
        let conn = self.conn.take()?;
        self.buf.extend_from_slice(rnats_proto::PING);
        self.pings += 1;
        self.handover = Some(Handover {
            conn,
            generation: self.generation,
            frames: Some(mem::take(&mut self.buf)),
            messages: mem::take(&mut self.out_messages),
            written: false,
        });
        self.connected = false;
        Some(self.pings)
    }

    /// Whether the old link of a planned move has had every byte handed to its socket.
    pub(super) fn handover_written(&self) -> bool {
        self.handover.as_ref().is_some_and(|h| h.written)
    }

    /// Whether a writer has something to write: the old link's frames of a planned move,
    /// or the live link's buffer.
    pub(super) fn has_batch(&self) -> bool {
        let handover = self.handover.as_ref().is_some_and(|h| h.frames.is_some());
        handover || self.connected && !self.buf.is_empty()
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
                handover: true,
            });
        }
        if !self.connected || self.buf.is_empty() {
            return None;
        }
        let conn = self.conn.clone()?;
        let spare = mem::take(&mut self.spare);
        Some(Batch {
            conn,
            generation: self.generation,
            frames: mem::replace(&mut self.buf, spare),
            messages: mem::take(&mut self.out_messages),
            handover: false,
        })
    }

    /// A new link: `replay` (its SUBs) goes out ahead of the publishes kept meanwhile.
    pub(super) fn handle_connected(&mut self, conn: Arc<Conn>, generation: u64, replay: BytesMut) {
        let mut replay = replay;
        replay.extend_from_slice(&self.buf);
        self.buf = replay;
        self.conn = Some(conn);
        self.generation = generation;
        self.connected = true;
    }

    pub(super) fn handle_closed(&mut self) {
        self.closed = true;
        self.connected = false;
        self.conn = None;
        self.handover = None;
        self.buf.clear();
    }
}

/// One round of writing: frames taken out of the shared buffer, for one link.
pub(super) struct Batch {
    pub(super) conn: Arc<Conn>,
    pub(super) generation: u64,
    pub(super) frames: BytesMut,
    pub(super) messages: u64,
    /// The old link's frames of a planned move.
    pub(super) handover: bool,
}
