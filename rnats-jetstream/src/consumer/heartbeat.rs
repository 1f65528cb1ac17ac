//! Idle heartbeat monitoring (ADR-9): a consumer that should send a heartbeat every
//! `idle_heartbeat` and sent nothing for twice that is presumed gone.

use std::pin::Pin;
use std::task::Context;
use std::time::Duration;

use futures_util::FutureExt;
use tokio::time::{Instant, Sleep};

/// Tracks the last sign of life and says when it is too long ago.
///
/// Activity is recorded with [`Monitor::seen`] (an instant, no timer work); the timer is
/// armed for the deadline and, when it fires early because activity moved the deadline on,
/// re-armed, so steady traffic costs no timer resets.
#[derive(Debug)]
pub(crate) struct Monitor {
    /// Silence longer than this is a miss; zero turns monitoring off.
    limit: Duration,
    last_seen: Instant,
    timer: Option<Pin<Box<Sleep>>>,
    /// While the connection is down nothing can arrive; misses are not counted (ADR-37).
    paused: bool,
}

impl Monitor {
    /// A monitor for heartbeats every `idle_heartbeat` (missed after twice that).
    pub(crate) fn new(idle_heartbeat: Duration) -> Monitor {
        Monitor::with_limit(idle_heartbeat.saturating_mul(2))
    }

    /// A monitor that reports silence longer than `limit`.
    pub(crate) fn with_limit(limit: Duration) -> Monitor {
        Monitor {
            limit,
            last_seen: Instant::now(),
            timer: None,
            paused: false,
        }
    }

    /// Records a sign of life: any message, status or heartbeat.
    pub(crate) fn seen(&mut self) {
        self.seen_at(Instant::now());
    }

    /// Records a sign of life at `now`.
    pub(crate) fn seen_at(&mut self, now: Instant) {
        self.last_seen = now;
    }

    /// Stops counting (disconnected).
    pub(crate) fn pause(&mut self) {
        self.paused = true;
        self.timer = None;
    }

    /// Counts again from now (reconnected).
    pub(crate) fn resume(&mut self) {
        self.paused = false;
        self.seen();
    }

    /// Makes `limit` the silence that is a miss from now on, keeping the timer (re-armed for
    /// the new deadline when next polled).
    pub(crate) fn set_limit(&mut self, limit: Duration) {
        self.limit = limit;
    }

    /// How long a silence may last before it is a miss; zero when never.
    pub(crate) fn limit(&self) -> Duration {
        self.limit
    }

    /// When silence becomes a miss, if it is being counted (never, for a limit past the
    /// clock's range).
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let counted = !self.limit.is_zero() && !self.paused;
        counted.then(|| self.last_seen.checked_add(self.limit))?
    }

    /// Whether the silence passed the limit at `now`; then counting restarts from `now`.
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> bool {
        match self.deadline() {
            Some(deadline) if now >= deadline => {
                self.seen_at(now);
                true
            }
            _ => false,
        }
    }

    /// [`Monitor::handle_timeout`] driven by a tokio timer: registers the waker for the
    /// deadline unless it has passed.
    pub(crate) fn poll_missed(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            let Some(deadline) = self.deadline() else {
                return false;
            };
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            if timer.deadline() != deadline {
                timer.as_mut().reset(deadline);
            }
            if timer.poll_unpin(cx).is_pending() {
                return false;
            }
            // The timer fired; activity may have moved the deadline on meanwhile.
            if self.handle_timeout(Instant::now()) {
                return true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_past_twice_the_interval_is_a_miss_activity_is_not() {
        let mut monitor = Monitor::new(Duration::from_secs(1));
        let start = Instant::now();
        monitor.seen_at(start);
        let at = |ms| start + Duration::from_millis(ms);
        assert_eq!(monitor.deadline(), Some(at(2000)));
        assert!(!monitor.handle_timeout(at(1500)));
        monitor.seen_at(at(1500));
        assert!(!monitor.handle_timeout(at(3000)));
        assert!(monitor.handle_timeout(at(3600)));
        // Counting restarted at the miss.
        assert!(!monitor.handle_timeout(at(4000)));
        monitor.pause();
        assert_eq!(monitor.deadline(), None);
        assert!(!monitor.handle_timeout(at(60_000)));
    }

    #[test]
    fn a_zero_interval_never_misses() {
        let mut monitor = Monitor::new(Duration::ZERO);
        assert_eq!(monitor.deadline(), None);
        assert!(!monitor.handle_timeout(Instant::now() + Duration::from_secs(3600)));
    }
}
