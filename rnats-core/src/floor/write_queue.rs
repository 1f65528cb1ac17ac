//! The write side's state, the same for both drivers: the frames callers queued, the link
//! they are for, and the link transitions (`handle_connected`, `handle_move`,
//! `handle_disconnected`, `handle_closed`). Who takes the frames to the socket, and when, is
//! each driver's own rule (the tokio client's in `writer.rs`, the blocking client's in
//! `blocking/write_side.rs`); this type only says what there is to write and for which link.
//!
//! The queue is either the live link's (frames go out on it) or the reconnect buffer (no
//! link: publishes are kept up to the reconnect buffer's size and written, behind the
//! subscription replay, on the next link). A planned move turns the live queue into the
//! reconnect buffer at once and hands what was accepted so far, with a last PING, to the
//! old link ([`Handover`]): nothing accepted for a link is ever written to another.
//!
//! Every PING is numbered here, where it is queued, so numbers follow wire order and the
//! n-th PONG on a link answers its n-th PING (`session::Pings` counts the PONGs).
//!
//! `L` is the driver's handle on the link's socket: a tokio `TcpStream` callers may write
//! directly, a blocking connection. The queue never touches it; it only keeps it with the
//! frames it belongs to.

use bytes::{Bytes, BytesMut};
use rnats_proto::{Pub, same_subject};

use super::frames::Frames;

/// Frames waiting for a link, and that link. See the module docs.
#[derive(Debug)]
pub(crate) struct WriteQueue<L> {
    frames: Frames,
    /// The live link's socket handle, when the driver has one callers may use.
    link: Option<L>,
    /// The number of the link the frames are for (the session's `Pings::link`, or any
    /// number the driver keeps): a failed write ends that link only.
    link_id: u64,
    /// The frames are for a live link; otherwise they are the reconnect buffer.
    live: bool,
    /// No more frames are taken; what is queued may still be written.
    closed: bool,
    /// PINGs queued on the current link.
    pings: u64,
    /// Messages queued and not yet counted in the statistics (they are counted once
    /// handed to a socket).
    messages: u64,
    /// The write limit a new queue is sized for.
    limit: usize,
    /// The control line of the last plain `PUB` queued ([`WriteQueue::push_pub`]).
    last_head: LastHead,
    /// Where the last PONG queued leaves the queue: the frames' [`Frames::gone`] once it
    /// has (see [`WriteQueue::push_pong`]). Only for the frames of now.
    pong_leaves_at: Option<u64>,
}

/// The control line of the last plain `PUB` (no reply, no headers) queued, `PUB <subject>
/// <size>\r\n` (up to [`MAX_KEPT_LINE`] long), and what it was for. A publisher that sends
/// one subject at one size (a stream of readings, a benchmark) copies it whole rather than
/// encoding it again: encoding is five appends and a number's formatting, and was about 140
/// of the 530 instructions a 32-byte publish took (callgrind); with the line copied, the
/// whole push, payload included, takes about 120.
#[derive(Debug, Default)]
struct LastHead {
    line: Vec<u8>,
    /// Where the subject ends in `line` (it starts after `PUB `).
    subject_end: usize,
    payload_len: usize,
}

impl LastHead {
    /// The line for a plain `PUB` to `subject` of `payload_len` bytes, if it is the one kept.
    #[inline(always)]
    fn get(&self, subject: &str, payload_len: usize) -> Option<&[u8]> {
        let same = self.payload_len == payload_len && self.has_subject(subject);
        same.then_some(&self.line[..])
    }

    /// Whether `subject` is the kept line's.
    #[inline(always)]
    fn has_subject(&self, subject: &str) -> bool {
        self.line
            .get(PUB_OP.len()..self.subject_end)
            .is_some_and(|last| same_subject(last, subject.as_bytes()))
    }

    /// Keeps `line`, just encoded for `subject` and `payload_len`, unless it is longer than
    /// [`MAX_KEPT_LINE`] (the last one kept stays).
    fn set(&mut self, line: &[u8], subject: &str, payload_len: usize) {
        if line.len() > MAX_KEPT_LINE {
            return;
        }
        self.line.clear();
        self.line.extend_from_slice(line);
        self.subject_end = PUB_OP.len() + subject.len();
        self.payload_len = payload_len;
    }
}

/// The longest control line [`LastHead`] keeps: a subject of some 230 bytes. Longer ones
/// are encoded each time, so that one huge subject does not leave its size allocated for the
/// connection's life.
const MAX_KEPT_LINE: usize = 256;

/// What a plain `PUB` line starts with.
const PUB_OP: &[u8] = b"PUB ";

/// What a planned move leaves to the old link: everything accepted before the move, in
/// order, ending with the move's last PING.
#[derive(Debug)]
pub(crate) struct Handover<L> {
    pub(crate) link: Option<L>,
    pub(crate) link_id: u64,
    pub(crate) frames: Frames,
    /// Messages among `frames`, for the statistics.
    pub(crate) messages: u64,
    /// The number of the last PING (its PONG ends the old link: `Pings::note_last_ping`).
    pub(crate) last_ping: u64,
}

/// A batch of the live link's frames taken by a writer (see [`WriteQueue::take_batch`]).
#[derive(Debug)]
pub(crate) struct Taken<L> {
    /// The live link's handle, if the driver gave one.
    pub(crate) link: Option<L>,
    pub(crate) link_id: u64,
    /// Messages in the batch, for the statistics.
    pub(crate) messages: u64,
}

impl<L> WriteQueue<L> {
    /// An empty queue with no link yet (frames queued now wait for the first one), sized
    /// for the write limit `limit`.
    pub(crate) fn new(limit: usize) -> WriteQueue<L> {
        WriteQueue {
            frames: Frames::with_limit(limit),
            link: None,
            link_id: 0,
            live: false,
            closed: false,
            pings: 0,
            messages: 0,
            limit,
            last_head: LastHead::default(),
            pong_leaves_at: None,
        }
    }

    /// Bytes queued.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.frames.len()
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The frames are for a live link (not the reconnect buffer).
    #[inline]
    pub(crate) fn is_live(&self) -> bool {
        self.live
    }

    /// No more frames are taken.
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// The number of the link the frames are for.
    #[inline]
    pub(crate) fn link_id(&self) -> u64 {
        self.link_id
    }

    /// The live link's handle, if the driver lets writers use one.
    #[inline]
    pub(crate) fn link(&self) -> Option<&L> {
        self.link.as_ref()
    }

    /// The queued frames, for a writer that writes them where they are.
    #[inline]
    pub(crate) fn frames_mut(&mut self) -> &mut Frames {
        &mut self.frames
    }

    /// The queued frames and the live link's handle at once, for a writer that writes
    /// them where they are.
    #[inline]
    pub(crate) fn frames_and_link(&mut self) -> (&mut Frames, Option<&L>) {
        (&mut self.frames, self.link.as_ref())
    }

    /// Queues a message: `head` encodes its control line (and header block); the payload
    /// follows, referenced rather than copied when large.
    #[inline]
    pub(crate) fn push_message(&mut self, head: impl FnOnce(&mut BytesMut), payload: &Bytes) {
        self.frames.push_message(head, payload);
        self.messages += 1;
    }

    /// Queues a PUB or HPUB of `payload`. The control line of a plain `PUB` to the subject
    /// and size of the last one is copied rather than encoded ([`LastHead`]).
    #[inline]
    pub(crate) fn push_pub(&mut self, frame: &Pub<'_>, payload: &Bytes) {
        let payload_len = payload.len();
        if frame.reply.is_some() || frame.headers.is_some() {
            self.push_message(|buf| frame.encode_head(buf, payload_len), payload);
            return;
        }
        let last = &mut self.last_head;
        match last.get(frame.subject, payload_len) {
            Some(line) => self
                .frames
                .push_message(|buf| buf.extend_from_slice(line), payload),
            None => self.frames.push_message(
                |buf| {
                    let start = buf.len();
                    frame.encode_head(buf, payload_len);
                    last.set(&buf[start..], frame.subject, payload_len);
                },
                payload,
            ),
        }
        self.messages += 1;
    }

    /// Whether `subject` is that of the plain `PUB` line this queue keeps ([`LastHead`]: the
    /// last one queued, on any link, unless it was too long to keep), so that it passed the
    /// publish check when it was queued.
    #[inline(always)]
    pub(crate) fn is_last_subject(&self, subject: &str) -> bool {
        self.last_head.has_subject(subject)
    }

    /// Queues a control frame (SUB, UNSUB, PONG) encoded by `encode`.
    #[inline]
    pub(crate) fn push_control(&mut self, encode: impl FnOnce(&mut BytesMut)) {
        self.frames.push_with(encode);
    }

    /// Queues a PONG, the answer to a server's PING, unless the last one queued has not left
    /// the queue yet; true when it queued one. nats-server takes one PONG as the answer to
    /// every PING it has outstanding, and a server that keeps sending PINGs while it reads
    /// nothing (its socket full) would otherwise have them pile up here, the write limit
    /// holding back publishes only.
    pub(crate) fn push_pong(&mut self) -> bool {
        if self
            .pong_leaves_at
            .is_some_and(|at| self.frames.gone() < at)
        {
            return false;
        }
        self.frames
            .push_with(|buf| buf.extend_from_slice(rnats_proto::PONG));
        self.pong_leaves_at = Some(self.frames.gone() + self.frames.len() as u64);
        true
    }

    /// Queues a PING on the current link and returns its number.
    #[inline]
    pub(crate) fn push_ping(&mut self) -> u64 {
        self.frames
            .push_with(|buf| buf.extend_from_slice(rnats_proto::PING));
        self.pings += 1;
        self.pings
    }

    /// How many PINGs were queued on the current link (the number of the last one): the
    /// most PONGs the link can owe, which the session caps its PONG count with
    /// (`Pings::on_pong`).
    #[inline]
    pub(crate) fn pings_queued(&self) -> u64 {
        self.pings
    }

    /// The messages queued since the last call, for the statistics.
    #[inline]
    pub(crate) fn take_messages(&mut self) -> u64 {
        std::mem::take(&mut self.messages)
    }

    /// Takes no more frames; what is queued may still be written.
    pub(crate) fn refuse(&mut self) {
        self.closed = true;
    }

    /// Moves the live link's frames into `out` (which must be empty) for a writer, with
    /// the link they go to; `None` when no link is live, or nothing is queued.
    pub(crate) fn take_batch(&mut self, out: &mut Frames) -> Option<Taken<L>>
    where
        L: Clone,
    {
        if !self.live || self.frames.is_empty() {
            return None;
        }
        let link = self.link.clone();
        self.frames.take_into(out);
        Some(Taken {
            link,
            link_id: self.link_id,
            messages: self.take_messages(),
        })
    }

    /// A new link is up: `restore` (the subscription replay) goes first, then whatever was
    /// kept meanwhile. `link` is the socket handle the driver lets writers use, if any.
    pub(crate) fn handle_connected(&mut self, link: Option<L>, link_id: u64, mut restore: Frames) {
        // The kept frames go behind the replay, whose buffer becomes the queue: the one
        // taken out here is dropped, so it need not be a sized one.
        restore.append(std::mem::take(&mut self.frames));
        self.frames = restore;
        self.pong_leaves_at = None;
        self.link = link;
        self.link_id = link_id;
        self.pings = 0;
        self.live = true;
    }

    /// A planned move off the live link: what was accepted so far, with a last PING, is
    /// handed to the old link, and the queue becomes the reconnect buffer. `None` when no
    /// link is live (lost, or moving already).
    pub(crate) fn handle_move(&mut self) -> Option<Handover<L>> {
        if !self.live {
            return None;
        }
        // Its PONG comes after every message the old server sends in answer to what it was
        // given, so none of them is cut off by leaving.
        let last_ping = self.push_ping();
        self.live = false;
        Some(Handover {
            link: self.link.take(),
            link_id: self.link_id,
            frames: self.replace_frames(Frames::with_limit(self.limit)),
            messages: self.take_messages(),
            last_ping,
        })
    }

    /// The link is gone. Frames queued for it are dropped with it (they may hold SUBs and
    /// PINGs of that link, which must not be replayed), unless a planned move already made
    /// the queue the reconnect buffer.
    pub(crate) fn handle_disconnected(&mut self) {
        if self.live {
            self.replace_frames(Frames::with_limit(self.limit));
            self.messages = 0;
        }
        self.live = false;
        self.link = None;
        self.pings = 0;
    }

    /// Closed for good: no more frames, nothing left to write.
    pub(crate) fn handle_closed(&mut self) {
        self.closed = true;
        self.live = false;
        self.link = None;
        self.replace_frames(Frames::default());
        self.messages = 0;
    }

    /// Puts `frames` in place of the queue's, returning those.
    fn replace_frames(&mut self, frames: Frames) -> Frames {
        self.pong_leaves_at = None;
        std::mem::replace(&mut self.frames, frames)
    }
}

#[cfg(test)]
mod tests {
    use std::io::IoSlice;

    use super::*;
    use crate::floor::frames::IOVECS;

    /// Every byte of `frames`, in order, as a writer would send them.
    fn drain(frames: &mut Frames) -> Vec<u8> {
        let mut all = Vec::new();
        while !frames.is_empty() {
            let mut slices = [IoSlice::new(&[]); IOVECS];
            let n = frames.io_slices(&mut slices);
            let len: usize = slices[..n].iter().map(|s| s.len()).sum();
            for slice in &slices[..n] {
                all.extend_from_slice(slice);
            }
            frames.advance(len);
        }
        all
    }

    fn publish(q: &mut WriteQueue<&'static str>, subject: &str, payload: &'static [u8]) {
        let payload = Bytes::from_static(payload);
        q.push_message(
            |buf| {
                buf.extend_from_slice(format!("PUB {subject} {}\r\n", payload.len()).as_bytes());
            },
            &payload,
        );
    }

    fn replay(bytes: &[u8]) -> Frames {
        let mut frames = Frames::with_limit(1024);
        frames.push_with(|buf| buf.extend_from_slice(bytes));
        frames
    }

    #[test]
    fn one_pong_waits_to_leave_however_many_pings_come() {
        let mut q = WriteQueue::new(1024);
        q.handle_connected(Some("link 1"), 1, Frames::default());
        // A server that pings while it reads nothing: one PONG answers them all.
        assert!(q.push_pong());
        publish(&mut q, "a", b"1");
        for _ in 0..1000 {
            assert!(!q.push_pong());
        }
        assert_eq!(q.len(), b"PONG\r\nPUB a 1\r\n1\r\n".len());
        // Written in place up to the PONG's last byte: the next PING gets its own.
        let (frames, _) = q.frames_and_link();
        frames.advance(5);
        assert!(!q.push_pong(), "one byte of it left");
        q.frames_and_link().0.advance(1);
        assert!(q.push_pong());
        // Taken by a writer: the queue's PONG has left, though not the socket yet.
        let mut out = Frames::default();
        q.take_batch(&mut out).unwrap();
        assert!(q.push_pong());
        assert!(!q.push_pong());
        assert_eq!(drain(&mut out), b"PUB a 1\r\n1\r\nPONG\r\n");
        let mut again = Frames::default();
        q.take_batch(&mut again).unwrap();
        assert_eq!(drain(&mut again), b"PONG\r\n");
        // A new link starts with none waiting.
        assert!(q.push_pong());
        q.handle_disconnected();
        q.handle_connected(Some("link 2"), 2, Frames::default());
        assert!(q.push_pong());
    }

    #[test]
    fn frames_queued_before_the_first_link_follow_its_replay() {
        let mut q = WriteQueue::new(1024);
        publish(&mut q, "early", b"1");
        let mut out = Frames::default();
        assert!(q.take_batch(&mut out).is_none(), "no link yet");
        q.handle_connected(Some("link 1"), 1, replay(b"SUB a 1\r\n"));
        let taken = q.take_batch(&mut out).expect("a live link with frames");
        assert_eq!(
            (taken.link, taken.link_id, taken.messages),
            (Some("link 1"), 1, 1)
        );
        assert_eq!(drain(&mut out), b"SUB a 1\r\nPUB early 1\r\n1\r\n");
        assert!(q.take_batch(&mut out).is_none(), "nothing left");
    }

    #[test]
    fn a_lost_link_takes_its_frames_with_it() {
        let mut q = WriteQueue::new(1024);
        q.handle_connected(Some("link 1"), 1, Frames::default());
        publish(&mut q, "lost", b"x");
        assert_eq!(q.pings_queued(), 0, "a PONG now answers nothing");
        assert_eq!(q.push_ping(), 1);
        assert_eq!(q.pings_queued(), 1);
        q.handle_disconnected();
        assert_eq!(q.pings_queued(), 0);
        assert!(q.is_empty() && !q.is_live() && q.frames_and_link().1.is_none());
        assert_eq!(
            q.take_messages(),
            0,
            "lost messages are not counted as sent"
        );
        // Publishes meanwhile are kept for the next link, whose PINGs count from one.
        publish(&mut q, "kept", b"y");
        q.handle_connected(Some("link 2"), 2, replay(b"SUB a 1\r\n"));
        assert_eq!(q.push_ping(), 1);
        let mut out = Frames::default();
        let taken = q.take_batch(&mut out).expect("frames for link 2");
        assert_eq!(taken.link_id, 2);
        assert_eq!(drain(&mut out), b"SUB a 1\r\nPUB kept 1\r\ny\r\nPING\r\n");
    }

    #[test]
    fn a_move_hands_what_was_accepted_to_the_old_link_with_a_last_ping() {
        let mut q = WriteQueue::new(1024);
        q.handle_connected(Some("old"), 1, Frames::default());
        assert_eq!(q.push_ping(), 1);
        publish(&mut q, "before", b"b");
        let mut handover = q.handle_move().expect("a live link to move off");
        assert_eq!(handover.link, Some("old"));
        assert_eq!((handover.link_id, handover.messages), (1, 1));
        assert_eq!(handover.last_ping, 2, "numbered after the flush's PING");
        assert_eq!(q.pings_queued(), 2, "the old link's, until it is gone");
        assert_eq!(
            drain(&mut handover.frames),
            b"PING\r\nPUB before 1\r\nb\r\nPING\r\n"
        );
        assert!(q.handle_move().is_none(), "already moving");
        // Later publishes fill the reconnect buffer, which the old link's loss keeps.
        publish(&mut q, "after", b"a");
        let mut out = Frames::default();
        assert!(q.take_batch(&mut out).is_none(), "not for the old link");
        q.handle_disconnected();
        q.handle_connected(Some("new"), 2, Frames::default());
        let taken = q.take_batch(&mut out).expect("kept for the new link");
        assert_eq!((taken.link, taken.messages), (Some("new"), 1));
        assert_eq!(drain(&mut out), b"PUB after 1\r\na\r\n");
    }

    #[test]
    fn refused_frames_may_still_leave_but_closed_ones_are_dropped() {
        let mut q = WriteQueue::new(1024);
        q.handle_connected(Some("link"), 1, Frames::default());
        publish(&mut q, "last", b"z");
        q.refuse();
        assert!(q.is_closed());
        let mut out = Frames::default();
        assert!(
            q.take_batch(&mut out).is_some(),
            "a closing client writes what it had"
        );
        publish(&mut q, "gone", b"g");
        q.handle_closed();
        assert!(q.is_empty() && !q.is_live());
        assert!(q.take_batch(&mut Frames::default()).is_none());
    }

    #[test]
    fn a_link_without_a_handle_is_live_all_the_same() {
        // The tokio driver's TLS and WebSocket links: only the engine writes them.
        let mut q: WriteQueue<&str> = WriteQueue::new(1024);
        q.handle_connected(None, 1, Frames::default());
        publish(&mut q, "s", b"p");
        assert!(q.is_live() && q.frames_and_link().1.is_none());
        let mut out = Frames::default();
        let taken = q.take_batch(&mut out).expect("the engine takes them");
        assert!(taken.link.is_none());
        assert_eq!(drain(&mut out), b"PUB s 1\r\np\r\n");
        publish(&mut q, "t", b"q");
        let handover = q.handle_move().expect("moves all the same");
        assert!(handover.link.is_none());
    }

    #[test]
    fn reused_pub_lines_are_the_lines_encoding_would_write() {
        // Runs of one subject and size, and every way the next publish can differ from the
        // last: its size (and its size's digits), a subject of the same length or a prefix
        // of it or longer, a reply or headers (never reused, and not disturbing the kept
        // line), a large payload sent by reference.
        let mut headers = rnats_proto::HeaderMap::new();
        headers.insert("k", "v");
        let small = Bytes::from_static(b"0123456789");
        let large = Bytes::from(vec![b'x'; 5000]);
        let cases: Vec<(&str, Option<&str>, Option<&rnats_proto::HeaderMap>, &Bytes)> = vec![
            ("orders.eu", None, None, &small),
            ("orders.eu", None, None, &small),
            ("orders.eu", None, None, &large),
            ("orders.eu", None, None, &large),
            ("orders.us", None, None, &large),
            ("orders.u", None, None, &large),
            ("orders.us.created.today", None, None, &large),
            ("orders.us.created.today", Some("_INBOX.1"), None, &large),
            ("orders.us.created.today", None, Some(&headers), &small),
            ("orders.us.created.today", None, None, &large),
            ("orders.us.created.todax", None, None, &large),
            ("a", None, None, &small),
            ("a", None, None, &small),
            ("b", None, None, &small),
            ("orders.eu", None, None, &small),
        ];
        let mut q: WriteQueue<&'static str> = WriteQueue::new(1 << 20);
        q.handle_connected(Some("link"), 1, Frames::default());
        let mut want = BytesMut::new();
        for &(subject, reply, headers, payload) in &cases {
            let frame = Pub {
                subject,
                reply,
                headers,
            };
            q.push_pub(&frame, payload);
            frame.encode(&mut want, payload);
        }
        let mut out = Frames::default();
        let taken = q.take_batch(&mut out).expect("a live link with frames");
        assert_eq!(taken.messages, cases.len() as u64);
        assert_eq!(drain(&mut out), want);
    }

    #[test]
    fn only_the_last_plain_pubs_subject_is_known() {
        let mut q: WriteQueue<&'static str> = WriteQueue::new(1024);
        assert!(!q.is_last_subject(""), "nothing queued yet");
        assert!(!q.is_last_subject("orders.eu"));
        let payload = Bytes::from_static(b"1");
        let plain = |subject| Pub {
            subject,
            reply: None,
            headers: None,
        };
        q.push_pub(&plain("orders.eu"), &payload);
        assert!(q.is_last_subject("orders.eu"));
        for other in [
            "orders.e",
            "orders.eu.",
            "orders.ev",
            "Orders.eu",
            "",
            "PUB orders.eu",
        ] {
            assert!(!q.is_last_subject(other), "{other:?}");
        }
        // A publish with a reply leaves the kept line as it was.
        let with_reply = Pub {
            subject: "other",
            reply: Some("inbox"),
            headers: None,
        };
        q.push_pub(&with_reply, &payload);
        assert!(q.is_last_subject("orders.eu") && !q.is_last_subject("other"));
        q.push_pub(&plain("other"), &payload);
        assert!(q.is_last_subject("other") && !q.is_last_subject("orders.eu"));
    }

    #[test]
    fn a_line_over_the_kept_length_leaves_the_last_one_kept() {
        let mut q: WriteQueue<&'static str> = WriteQueue::new(1 << 20);
        let payload = Bytes::from_static(b"1");
        let long = "x".repeat(MAX_KEPT_LINE);
        for subject in ["short", long.as_str()] {
            let frame = Pub {
                subject,
                reply: None,
                headers: None,
            };
            q.push_pub(&frame, &payload);
        }
        assert!(q.is_last_subject("short") && !q.is_last_subject(&long));
        // Growing by doubling, the kept line never holds more than twice the longest kept.
        assert!(q.last_head.line.capacity() <= 2 * MAX_KEPT_LINE);
    }
}
