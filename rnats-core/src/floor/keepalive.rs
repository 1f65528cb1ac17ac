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
}
