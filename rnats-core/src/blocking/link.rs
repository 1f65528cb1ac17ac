//! A blocking client's links: installing one a dial made, a planned move off a healthy one
//! (`force_reconnect`, lame duck mode), and losing one, whose end the background thread
//! then reconnects from.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::conn::Dialed;
use super::state::{Core, Inner, READ_SLICE, REQUEST_SID, SubState};
use super::writer::Urgency;
use crate::connection::LinkState;
use crate::events::ConnectionEvent;
use crate::floor::frames::Frames;
use crate::floor::sync::lock;

impl Inner {
    /// Marks the link of `generation` lost (or, at the end of a planned move, done), once:
    /// its socket is shut, unwritten frames are dropped (they may hold SUBs and PINGs of
    /// the dead link; a move's reconnect buffer is kept), flushes on it fail, and the
    /// background thread reconnects.
    pub(super) fn fail_link(&self, generation: u64, reason: &str) {
        let mut core = self.core();
        self.fail_link_locked(&mut core, generation, reason);
    }

    pub(super) fn fail_link_locked(&self, core: &mut Core, generation: u64, reason: &str) {
        if core.session.pings.link() != generation || core.state != LinkState::Connected {
            return;
        }
        tracing::debug!(reason, "connection lost");
        // A link the client left on purpose is not one the server dropped. (The pool's
        // lock is never held while this one is taken.)
        let planned = core.session.link.moving().is_some();
        lock(&self.pool).link_ended(Instant::now(), planned);
        core.state = LinkState::Disconnected;
        // The next link gets the next number; the ended one's PONG count stays for
        // flushes that look late. No waiters come back (flushes look their PINGs up).
        let _ = core.session.handle_disconnected();
        if let Some(conn) = core.conn.take() {
            conn.shutdown();
        }
        if self.options.reconnect.fail_requests_on_disconnect {
            core.lost_requests += 1;
        }
        self.write.writes().handle_disconnected();
        self.events.emit(ConnectionEvent::Disconnected {
            reason: reason.to_owned(),
        });
        self.notify_changed(core);
        self.background.notify_all();
    }

    /// `force_reconnect`: starts a planned move off the current link, if it is up and not
    /// moving already (otherwise there is nothing to move off, and the reconnect under way
    /// serves). Returns false if the client is closed.
    pub(super) fn request_move(&self) -> bool {
        let mut core = self.core();
        if core.state == LinkState::Closed {
            return false;
        }
        if core.state == LinkState::Connected
            && core
                .session
                .handle_move_requested(Instant::now(), "reconnect requested")
        {
            self.hand_over_locked(&mut core);
            drop(core);
            self.write.write_pending(self);
        }
        true
    }

    /// The write side of a planned move the link has entered (`Link` is `Moving`): the
    /// frames accepted so far and a last PING go to the old link, new ones to the
    /// reconnect buffer. The old link stays up (and is read) until
    /// [`Inner::move_finished`] or the move's deadline; the background thread ends it.
    /// The caller writes the old link's frames (`WriteSide::write_pending`) once it has let go
    /// of `core`.
    pub(super) fn hand_over_locked(&self, core: &mut Core) {
        if let Some(last_ping) = self.write.handle_move() {
            core.session.pings.note_last_ping(last_ping);
            tracing::debug!(reason = core.session.link.moving(), "planned move started");
        }
        self.background.notify_all();
    }

    /// Whether the old link of a planned move is done: every byte it was given is written
    /// and every PING on it (the move's last one included) has its PONG, so no reply or
    /// flush it carried is cut off.
    pub(super) fn move_finished(&self, core: &Core) -> bool {
        core.session.pings.move_answered() && self.write.writes().handover_written()
    }

    /// Makes `dialed` the link: resets the read side, replays the subscriptions (with what
    /// is left of their auto-unsubscribe counts) ahead of the publishes kept meanwhile, and
    /// sends them as `urgency` says. Returns false if the client was closed meanwhile.
    pub(super) fn install(&self, dialed: Dialed, urgency: Urgency) -> bool {
        let mut core = self.core();
        while core.reader_busy {
            core = self.wait_changed(core, READ_SLICE);
        }
        if core.state == LinkState::Closed {
            dialed.conn.shutdown();
            return false;
        }
        // Never without a timeout: the background thread waits for bytes with it.
        let timeout = dialed
            .conn
            .set_read_timeout(READ_SLICE)
            .ok()
            .map(|()| READ_SLICE);
        lock(&self.read).start(dialed.read_buf, dialed.parser, timeout);
        // The handshake's INFO: a lame duck flag in it is not news yet (the link is not
        // up when it is read), as before the session.
        let info = Arc::new(dialed.info);
        self.apply_limits(&info);
        dialed.traffic.count_in(&self.statistics);
        core.session.handle_connected(Instant::now(), info);
        let mut replay = Frames::with_limit(self.options.write_buffer_limit);
        let inbox = format!("{}*", self.request_prefix);
        replay.push_with(|buf| {
            rnats_proto::encode_sub(buf, &inbox, None, REQUEST_SID);
            core.session.encode_replay(buf, SubState::active);
        });
        // No `Pings::resume`: a blocking flush is never deferred (it waits for a
        // link, then pings), so there is no PING to send for flushes made meanwhile.
        core.conn = Some(Arc::clone(&dialed.conn));
        core.state = LinkState::Connected;
        let mut writes = self.write.writes();
        writes.handle_connected(dialed.conn, core.session.pings.link(), replay);
        // The first link is `Connected` also when the background thread made it
        // (`retry_on_initial_connect`); every later one is `Reconnected`.
        let first = self.statistics.connects.fetch_add(1, Ordering::Relaxed) == 0;
        self.events.emit(match first {
            true => ConnectionEvent::Connected,
            false => ConnectionEvent::Reconnected,
        });
        self.notify_changed(&core);
        drop(core);
        self.write.send_queued(self, writes, urgency);
        true
    }
}
