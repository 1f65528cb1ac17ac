//! Keepalive and stale-connection detection as a sans-IO state machine (ADR-40): a PING
//! every interval, and the connection is stale once too many go unanswered.
//!
//! No clock and no timer inside: the driver passes `now` in and arms its own timer for
//! [`Keepalive::poll_timeout`], so the same type serves the tokio engine and a blocking
//! driver, and the tests below run on a virtual clock.

use std::time::{Duration, Instant};

/// What the driver must do when the keepalive timer fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeepaliveAction {
    /// Send a PING (its PONG is a keepalive one, not a flush's).
    Ping,
    /// Too many PINGs went unanswered: the connection is stale; end it.
    Stale {
        /// PINGs outstanding when the timer fired.
        outstanding: u32,
    },
}

/// The PING schedule of one connection and the count of PINGs not answered yet.
#[derive(Debug, Clone)]
pub(crate) struct Keepalive {
    interval: Duration,
    max_outstanding: u32,
    outstanding: u32,
    /// When the next PING is due; `None` when never (an interval past the clock's range).
    next: Option<Instant>,
}

impl Keepalive {
    /// A schedule of one PING per `interval`, stale after `max_outstanding` unanswered; not
    /// armed until [`Keepalive::handle_connected`].
    pub(crate) fn new(interval: Duration, max_outstanding: u32) -> Keepalive {
        Keepalive {
            interval,
            max_outstanding,
            outstanding: 0,
            next: None,
        }
    }

    /// A connection is up at `now`: nothing is outstanding, the first PING is due an
    /// interval from now. The addition saturates: `Duration::MAX` means never.
    pub(crate) fn handle_connected(&mut self, now: Instant) {
        self.outstanding = 0;
        self.next = now.checked_add(self.interval);
    }

    /// Any PONG proves the server is alive.
    pub(crate) fn handle_pong(&mut self) {
        self.outstanding = 0;
    }

    /// When the driver must call [`Keepalive::handle_timeout`] next; `None`: never.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }

    /// Time has passed: returns what to do if a PING was due at `now`, and schedules the
    /// next one.
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> Option<KeepaliveAction> {
        let due = self.next.is_some_and(|next| now >= next);
        if !due {
            return None;
        }
        if self.outstanding >= self.max_outstanding {
            self.next = None;
            return Some(KeepaliveAction::Stale {
                outstanding: self.outstanding,
            });
        }
        self.outstanding += 1;
        self.next = now.checked_add(self.interval);
        Some(KeepaliveAction::Ping)
    }
}

/// The write side's watch for a peer that stops reading (opt-in,
/// `ConnectOptions::write_timeout`): once the socket refuses bytes the driver owes it, the
/// link counts as lost if a whole `timeout` passes without the socket taking one. nats.go
/// calls this its flusher timeout; pings alone find such a peer only after two or three
/// ping intervals.
///
/// Progress is read from the count of bytes written (any writer's, the engine's or a
/// caller's), so the hot path only tells the watch when a write found no room.
#[derive(Debug, Clone)]
pub(crate) struct WriteWatch {
    timeout: Option<Duration>,
    /// When the socket was first seen refusing bytes with the count written then; `None`
    /// while nothing is owed (or nothing has been refused since the last progress).
    since: Option<(Instant, u64)>,
}

impl WriteWatch {
    /// A watch that ends a link after `timeout` without progress; `None`: never.
    pub(crate) fn new(timeout: Option<Duration>) -> WriteWatch {
        WriteWatch {
            timeout,
            since: None,
        }
    }

    /// A write found the socket full with bytes still owed, `written` bytes written so
    /// far. Starts the clock, unless it already runs from the same count; reads the clock
    /// (`now`) only then.
    pub(crate) fn handle_refused(&mut self, written: u64, now: impl FnOnce() -> Instant) {
        if self.timeout.is_none() {
            return;
        }
        match self.since {
            Some((_, at)) if at == written => {}
            _ => self.since = Some((now(), written)),
        }
    }

    /// A new link, or a lost one: nothing is owed to it yet.
    pub(crate) fn handle_link_changed(&mut self) {
        self.since = None;
    }

    /// When the driver must call [`WriteWatch::handle_timeout`]; `None`: not watching.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        let (since, _) = self.since?;
        since.checked_add(self.timeout?)
    }

    /// The watch's time came: `written` bytes written by now, `owed` whether any are
    /// still waiting for the socket. Returns how long the socket took nothing when that
    /// is the whole timeout (the link is to end); otherwise the watch stops or, after
    /// progress, starts again from now.
    pub(crate) fn handle_timeout(
        &mut self,
        now: Instant,
        written: u64,
        owed: bool,
    ) -> Option<Duration> {
        let (since, at) = self.since?;
        let timeout = self.timeout?;
        let stalled = now.saturating_duration_since(since);
        if stalled < timeout {
            return None;
        }
        if !owed {
            self.since = None;
            return None;
        }
        if at != written {
            self.since = Some((now, written));
            return None;
        }
        self.since = None;
        Some(stalled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn pings_every_interval_and_a_pong_resets_the_count() {
        let start = Instant::now();
        let mut keepalive = Keepalive::new(SECOND, 2);
        assert_eq!(
            keepalive.poll_timeout(),
            None,
            "not armed before a connection"
        );
        keepalive.handle_connected(start);
        assert_eq!(keepalive.poll_timeout(), Some(start + SECOND));
        assert_eq!(
            keepalive.handle_timeout(start + SECOND / 2),
            None,
            "not due"
        );
        assert_eq!(
            keepalive.handle_timeout(start + SECOND),
            Some(KeepaliveAction::Ping)
        );
        assert_eq!(keepalive.poll_timeout(), Some(start + 2 * SECOND));
        keepalive.handle_pong();
        for k in 2..10 {
            assert_eq!(
                keepalive.handle_timeout(start + k * SECOND),
                Some(KeepaliveAction::Ping),
                "answered PINGs never make the connection stale"
            );
            keepalive.handle_pong();
        }
    }

    #[test]
    fn unanswered_pings_make_the_connection_stale() {
        let start = Instant::now();
        let mut keepalive = Keepalive::new(SECOND, 2);
        keepalive.handle_connected(start);
        assert_eq!(
            keepalive.handle_timeout(start + SECOND),
            Some(KeepaliveAction::Ping)
        );
        assert_eq!(
            keepalive.handle_timeout(start + 2 * SECOND),
            Some(KeepaliveAction::Ping)
        );
        assert_eq!(
            keepalive.handle_timeout(start + 3 * SECOND),
            Some(KeepaliveAction::Stale { outstanding: 2 })
        );
        assert_eq!(keepalive.poll_timeout(), None, "a stale link pings no more");
        // A new connection starts over.
        keepalive.handle_connected(start + 4 * SECOND);
        assert_eq!(
            keepalive.handle_timeout(start + 5 * SECOND),
            Some(KeepaliveAction::Ping)
        );
    }

    #[test]
    fn a_late_timer_sends_one_ping_not_a_burst() {
        let start = Instant::now();
        let mut keepalive = Keepalive::new(SECOND, 5);
        keepalive.handle_connected(start);
        // The driver was busy for ten intervals: one PING, then the next an interval later.
        let late = start + 10 * SECOND;
        assert_eq!(keepalive.handle_timeout(late), Some(KeepaliveAction::Ping));
        assert_eq!(keepalive.handle_timeout(late), None);
        assert_eq!(keepalive.poll_timeout(), Some(late + SECOND));
    }

    #[test]
    fn an_interval_past_the_clock_means_never() {
        let start = Instant::now();
        let mut keepalive = Keepalive::new(Duration::MAX, 2);
        keepalive.handle_connected(start);
        assert_eq!(keepalive.poll_timeout(), None);
        assert_eq!(keepalive.handle_timeout(start + 1000 * SECOND), None);
    }

    #[test]
    fn a_write_watch_ends_a_link_only_after_a_whole_timeout_without_progress() {
        let start = Instant::now();
        let mut watch = WriteWatch::new(Some(SECOND));
        assert_eq!(watch.poll_timeout(), None, "nothing refused yet");
        watch.handle_refused(100, || start);
        assert_eq!(watch.poll_timeout(), Some(start + SECOND));
        // Refused again with the same count: the clock keeps its start.
        watch.handle_refused(100, || unreachable!("the clock runs already"));
        assert_eq!(watch.handle_timeout(start + SECOND / 2, 100, true), None);
        assert_eq!(
            watch.handle_timeout(start + SECOND, 100, true),
            Some(SECOND),
            "a whole second with bytes owed and none taken"
        );
        assert_eq!(watch.poll_timeout(), None, "reported once");
    }

    #[test]
    fn a_write_watch_starts_over_after_progress_and_stops_when_nothing_is_owed() {
        let start = Instant::now();
        let mut watch = WriteWatch::new(Some(SECOND));
        watch.handle_refused(100, || start);
        // The socket took bytes meanwhile and is full again: watched from now.
        assert_eq!(watch.handle_timeout(start + SECOND, 150, true), None);
        assert_eq!(watch.poll_timeout(), Some(start + 2 * SECOND));
        // Refused later with a newer count: the clock starts at that refusal.
        watch.handle_refused(200, || start + 3 * SECOND / 2);
        assert_eq!(watch.poll_timeout(), Some(start + 5 * SECOND / 2));
        // Everything went out before the time came: nothing to watch.
        assert_eq!(watch.handle_timeout(start + 3 * SECOND, 200, false), None);
        assert_eq!(watch.poll_timeout(), None);
        // A link change forgets a running clock.
        watch.handle_refused(300, || start + 4 * SECOND);
        watch.handle_link_changed();
        assert_eq!(watch.poll_timeout(), None);
    }

    #[test]
    fn a_write_watch_without_a_timeout_never_reads_the_clock() {
        let mut watch = WriteWatch::new(None);
        watch.handle_refused(1, || unreachable!("off: no clock"));
        assert_eq!(watch.poll_timeout(), None);
        assert_eq!(watch.handle_timeout(Instant::now(), 1, true), None);
    }
}
