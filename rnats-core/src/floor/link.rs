//! The time-driven protocol state of one connection as a sans-IO state machine: which phase
//! the link is in, keepalive and stale detection, lame duck mode, and planned moves to
//! another server.
//!
//! No tokio and no clock inside: the driver feeds inputs through `handle_*` (a PONG, an
//! INFO saying lame duck, a `force_reconnect`, time passing) and pulls what to do through
//! [`Link::poll_timeout`] (when to call back) and the [`LinkAction`]s `handle_timeout`
//! returns. The tokio engine drives it with one timer; a blocking driver can drive it with
//! a socket read timeout. The tests below run it on a virtual clock.
//!
//! ```text
//!                 handle_connected
//!  Disconnected ───────────────────▶ Connected ──handle_move_requested──▶ Moving
//!       ▲                              │   ▲       (or the lame duck        │
//!       │        handle_disconnected   │   │        deadline passing)       │
//!       └──────────────────────────────┘   └──── handle_connected ◀─────────┘
//!                                               (after the driver reconnects)
//!  Connected ──handle_drain──▶ Draining ──handle_closed──▶ Closed
//!  any ──handle_closed──▶ Closed
//! ```
//!
//! While `Moving`, the old link only finishes what it accepted: no keepalive PINGs (the
//! shared queue already belongs to the next link), and a deadline after which the driver
//! gives up on the old server. While `Draining` (`Client::drain`: the subscriptions are
//! unsubscribed and what the server sent before is let in, then the client closes) keepalive
//! goes on, but no planned move starts, and a link lost meanwhile is not re-established:
//! [`Link::reconnects`] says so to the driver.

use std::time::{Duration, Instant};

use crate::floor::deadline::saturating_add;

use crate::floor::keepalive::{Keepalive, KeepaliveAction};

/// Where the link is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No connection: the driver is reconnecting (or has not connected yet).
    Disconnected,
    /// Up and working.
    Connected,
    /// Leaving a healthy server on purpose: writing what it accepted and waiting for the
    /// last PONG, until `deadline`.
    Moving {
        reason: &'static str,
        deadline: Instant,
    },
    /// The client is draining: it closes once what the server sent before the UNSUBs is in.
    Draining,
    /// Closed for good.
    Closed,
}

/// What the driver must do after time passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkAction {
    /// Queue a keepalive PING.
    Ping,
    /// The link is stale (PINGs unanswered): end it and reconnect.
    Stale { outstanding: u32 },
    /// Start a planned move (the lame duck delay is over): hand the queue to the next link,
    /// finish writing this one.
    StartMove { reason: &'static str },
    /// A planned move took too long: drop the old link now.
    GiveUp { reason: &'static str },
}

/// The link's phase and timers.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    phase: Phase,
    keepalive: Keepalive,
    /// Lame duck mode: move away at this point (randomised by the driver, ADR-40).
    lame_duck_at: Option<Instant>,
    /// How long a planned move may take before the old link is dropped.
    move_grace: Duration,
    /// The client drains: it closes when done, and never reconnects.
    draining: bool,
}

impl Link {
    /// A link not connected yet, pinging every `ping_interval` once connected, stale after
    /// `max_pings_outstanding` unanswered, giving planned moves `move_grace`.
    pub(crate) fn new(
        ping_interval: Duration,
        max_pings_outstanding: u32,
        move_grace: Duration,
    ) -> Link {
        Link {
            phase: Phase::Disconnected,
            keepalive: Keepalive::new(ping_interval, max_pings_outstanding),
            lame_duck_at: None,
            move_grace,
            draining: false,
        }
    }

    /// The current phase.
    #[cfg(test)]
    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// The reason of the planned move under way, if one is.
    pub(crate) fn moving(&self) -> Option<&'static str> {
        match self.phase {
            Phase::Moving { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// Whether the client drains (see [`Link::handle_drain`]).
    pub(crate) fn draining(&self) -> bool {
        self.draining
    }

    /// Whether the drain runs on a live link: the link was up, and not moving to another
    /// server, when the drain started. Otherwise nothing can be drained (as nats.go refuses
    /// to drain while reconnecting): the driver closes at once.
    pub(crate) fn drains_link(&self) -> bool {
        self.phase == Phase::Draining
    }

    /// Whether a lost link is to be re-established: not once the client drains or closes.
    pub(crate) fn reconnects(&self) -> bool {
        !self.draining && self.phase != Phase::Closed
    }

    /// The client started draining. Returns whether this is news. A drain that starts while
    /// the link is down or moving still keeps a lost link from being re-established.
    pub(crate) fn handle_drain(&mut self) -> bool {
        if self.draining || self.phase == Phase::Closed {
            return false;
        }
        self.draining = true;
        if self.phase == Phase::Connected {
            self.phase = Phase::Draining;
            self.lame_duck_at = None;
        }
        true
    }

    /// A connection is up at `now` (the first, or after a reconnect).
    pub(crate) fn handle_connected(&mut self, now: Instant) {
        if self.phase == Phase::Closed {
            return;
        }
        self.phase = match self.draining {
            true => Phase::Draining,
            false => Phase::Connected,
        };
        self.lame_duck_at = None;
        self.keepalive.handle_connected(now);
    }

    /// The connection is gone.
    pub(crate) fn handle_disconnected(&mut self) {
        if self.phase != Phase::Closed {
            self.phase = Phase::Disconnected;
        }
        self.lame_duck_at = None;
    }

    /// The client is closed for good.
    pub(crate) fn handle_closed(&mut self) {
        self.phase = Phase::Closed;
        self.lame_duck_at = None;
    }

    /// A PONG arrived.
    pub(crate) fn handle_pong(&mut self) {
        self.keepalive.handle_pong();
    }

    /// The server entered lame duck mode at `now`: move away after `delay`. Returns whether
    /// this is news (to be reported once).
    pub(crate) fn handle_lame_duck(&mut self, now: Instant, delay: Duration) -> bool {
        if self.phase != Phase::Connected || self.lame_duck_at.is_some() {
            return false;
        }
        self.lame_duck_at = Some(saturating_add(now, delay));
        true
    }

    /// The user asked to move (`force_reconnect`) at `now`. Returns whether a move starts:
    /// not when one is under way, the link is down, or the client drains.
    pub(crate) fn handle_move_requested(&mut self, now: Instant, reason: &'static str) -> bool {
        if self.phase != Phase::Connected {
            return false;
        }
        self.start_move(now, reason);
        true
    }

    fn start_move(&mut self, now: Instant, reason: &'static str) {
        self.lame_duck_at = None;
        let deadline = saturating_add(now, self.move_grace);
        self.phase = Phase::Moving { reason, deadline };
    }

    /// When the driver must call [`Link::handle_timeout`] next; `None`: only on input.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        match self.phase {
            Phase::Connected => match (self.keepalive.poll_timeout(), self.lame_duck_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            Phase::Draining => self.keepalive.poll_timeout(),
            Phase::Moving { deadline, .. } => Some(deadline),
            Phase::Disconnected | Phase::Closed => None,
        }
    }

    /// Time has passed: what to do at `now`, if anything. Call again until `None`: several
    /// things may be due at once.
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> Option<LinkAction> {
        match self.phase {
            Phase::Connected => {
                if self.lame_duck_at.is_some_and(|at| now >= at) {
                    let reason = "server in lame duck mode";
                    self.start_move(now, reason);
                    return Some(LinkAction::StartMove { reason });
                }
                self.keepalive_due(now)
            }
            Phase::Draining => self.keepalive_due(now),
            Phase::Moving { reason, deadline } if now >= deadline => {
                self.handle_disconnected();
                Some(LinkAction::GiveUp { reason })
            }
            Phase::Moving { .. } | Phase::Disconnected | Phase::Closed => None,
        }
    }

    /// The keepalive's part of [`Link::handle_timeout`] on a working link.
    fn keepalive_due(&mut self, now: Instant) -> Option<LinkAction> {
        match self.keepalive.handle_timeout(now)? {
            KeepaliveAction::Ping => Some(LinkAction::Ping),
            KeepaliveAction::Stale { outstanding } => {
                // The driver drops the link: nothing more is due on it.
                self.handle_disconnected();
                Some(LinkAction::Stale { outstanding })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn link(start: Instant) -> Link {
        let mut link = Link::new(1000 * MS, 2, 500 * MS);
        link.handle_connected(start);
        link
    }

    /// Drains every action due at `now`.
    fn due(link: &mut Link, now: Instant) -> Vec<LinkAction> {
        std::iter::from_fn(|| link.handle_timeout(now))
            .take(10)
            .collect()
    }

    #[test]
    fn keepalive_runs_only_while_connected() {
        let t0 = Instant::now();
        let mut link = Link::new(1000 * MS, 2, 500 * MS);
        assert_eq!(link.poll_timeout(), None, "nothing to do before connecting");
        link.handle_connected(t0);
        assert_eq!(link.poll_timeout(), Some(t0 + 1000 * MS));
        assert_eq!(due(&mut link, t0 + 1000 * MS), [LinkAction::Ping]);
        link.handle_pong();
        assert_eq!(due(&mut link, t0 + 2000 * MS), [LinkAction::Ping]);
        assert_eq!(due(&mut link, t0 + 3000 * MS), [LinkAction::Ping]);
        assert_eq!(
            due(&mut link, t0 + 4000 * MS),
            [LinkAction::Stale { outstanding: 2 }]
        );
        link.handle_disconnected();
        assert_eq!(link.poll_timeout(), None);
        assert_eq!(due(&mut link, t0 + 9000 * MS), []);
    }

    #[test]
    fn lame_duck_moves_after_its_delay_then_gives_up_after_the_grace() {
        let t0 = Instant::now();
        let mut link = link(t0);
        assert!(
            link.handle_lame_duck(t0 + 100 * MS, 300 * MS),
            "reported once"
        );
        assert!(!link.handle_lame_duck(t0 + 200 * MS, 300 * MS), "not twice");
        assert_eq!(
            link.poll_timeout(),
            Some(t0 + 400 * MS),
            "before the next PING"
        );
        assert_eq!(due(&mut link, t0 + 399 * MS), []);
        let reason = "server in lame duck mode";
        assert_eq!(
            due(&mut link, t0 + 400 * MS),
            [LinkAction::StartMove { reason }]
        );
        assert_eq!(link.moving(), Some(reason));
        // No keepalive on the link being left: its PING would land in the next link's queue.
        assert_eq!(link.poll_timeout(), Some(t0 + 900 * MS));
        assert_eq!(due(&mut link, t0 + 800 * MS), []);
        assert_eq!(
            due(&mut link, t0 + 900 * MS),
            [LinkAction::GiveUp { reason }]
        );
        // The driver reconnects; the new link starts clean.
        link.handle_disconnected();
        link.handle_connected(t0 + 1000 * MS);
        assert_eq!(link.phase(), Phase::Connected);
        assert_eq!(link.poll_timeout(), Some(t0 + 2000 * MS));
    }

    #[test]
    fn a_requested_move_starts_at_once_and_only_on_a_live_link() {
        let t0 = Instant::now();
        let mut link = link(t0);
        assert!(link.handle_move_requested(t0, "reconnect requested"));
        assert!(
            !link.handle_move_requested(t0, "reconnect requested"),
            "one at a time"
        );
        assert_eq!(link.poll_timeout(), Some(t0 + 500 * MS));
        link.handle_disconnected();
        assert!(
            !link.handle_move_requested(t0, "reconnect requested"),
            "nothing to leave"
        );
        assert!(!link.handle_lame_duck(t0, MS), "no lame duck while down");
    }

    #[test]
    fn a_closed_link_stays_closed() {
        let t0 = Instant::now();
        let mut link = link(t0);
        link.handle_closed();
        link.handle_connected(t0);
        link.handle_disconnected();
        assert_eq!(link.phase(), Phase::Closed);
        assert_eq!(link.poll_timeout(), None);
    }

    #[test]
    fn huge_durations_saturate() {
        let t0 = Instant::now();
        let mut link = Link::new(Duration::MAX, 2, Duration::MAX);
        link.handle_connected(t0);
        assert_eq!(link.poll_timeout(), None, "never pings");
        assert!(link.handle_lame_duck(t0, Duration::MAX));
        let far = link.poll_timeout().expect("the lame duck deadline");
        assert!(far > t0 + Duration::from_secs(86_400 * 365), "not at once");
        assert!(link.handle_move_requested(t0, "x"));
        assert!(link.poll_timeout().expect("the move deadline") > far - Duration::from_secs(1));
    }

    #[test]
    fn draining_keeps_the_keepalive_and_refuses_moves_and_reconnects() {
        let t0 = Instant::now();
        let mut link = link(t0);
        assert!(link.reconnects());
        assert!(link.handle_drain(), "news once");
        assert!(!link.handle_drain());
        assert_eq!(link.phase(), Phase::Draining);
        assert!(link.drains_link(), "drained on the live link");
        assert!(!link.reconnects(), "a lost link is not re-established");
        assert!(
            !link.handle_lame_duck(t0, 10 * MS),
            "the drain closes anyway"
        );
        assert!(!link.handle_move_requested(t0, "reconnect requested"));
        assert_eq!(link.poll_timeout(), Some(t0 + 1000 * MS));
        assert_eq!(due(&mut link, t0 + 1000 * MS), [LinkAction::Ping]);
        assert_eq!(due(&mut link, t0 + 2000 * MS), [LinkAction::Ping]);
        assert_eq!(
            due(&mut link, t0 + 3000 * MS),
            [LinkAction::Stale { outstanding: 2 }],
            "a dead server is still detected while draining"
        );
        assert!(!link.reconnects());
        link.handle_closed();
        assert_eq!(link.phase(), Phase::Closed);
    }

    #[test]
    fn a_drain_started_while_disconnected_still_stops_reconnecting() {
        let t0 = Instant::now();
        let mut link = link(t0);
        link.handle_disconnected();
        assert!(link.handle_drain());
        assert_eq!(link.phase(), Phase::Disconnected);
        assert!(!link.drains_link(), "nothing to drain on");
        assert!(!link.reconnects());
        link.handle_connected(t0);
        assert_eq!(
            link.phase(),
            Phase::Draining,
            "a link that comes up anyway drains"
        );
    }

    #[test]
    fn a_drain_started_during_a_planned_move_has_no_link_to_drain() {
        let t0 = Instant::now();
        let mut link = link(t0);
        assert!(link.handle_move_requested(t0, "reconnect requested"));
        assert!(link.handle_drain());
        assert!(
            !link.drains_link(),
            "the queue already belongs to the next link"
        );
        assert!(!link.reconnects(), "and no next link comes");
    }
}
