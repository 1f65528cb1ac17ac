//! Idle heartbeat monitoring (ADR-9): a consumer that should send a heartbeat every
//! `idle_heartbeat` and sent nothing for twice that is presumed gone.

use std::pin::Pin;
use std::task::Context;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use rnats_core::runtime::{self, Sleep};

/// Tracks the last sign of life and says when it is too long ago.
///
/// Activity is recorded with [`Monitor::seen`] (an instant, no timer work); the timer is
/// armed for the deadline and, when it fires early because activity moved the deadline on,
/// re-armed, so steady traffic costs no timer resets.
#[derive(Debug)]
pub(crate) struct Monitor {
    /// Silence longer than this is a miss; zero turns monitoring off.
    limit: Duration,
    /// Whether silence past three quarters of the limit, once a spell, is told before it is
    /// a miss.
    warns: bool,
    /// Whether this spell of silence was warned of.
    warned: bool,
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
            warns: false,
            warned: false,
            last_seen: runtime::now(),
            timer: None,
            paused: false,
        }
    }

    /// Also tells of a silence past three quarters of the limit (one and a half idle
    /// heartbeats), once a spell: [`Silence::Overdue`] from [`Monitor::poll_silence`].
    pub(crate) fn warning_when_overdue(mut self) -> Monitor {
        self.warns = true;
        self
    }

    /// Turns the warning of [`Monitor::warning_when_overdue`] on or off.
    pub(crate) fn set_warning(&mut self, on: bool) {
        self.warns = on;
    }

    /// Records a sign of life: any message, status or heartbeat.
    pub(crate) fn seen(&mut self) {
        self.seen_at(runtime::now());
    }

    /// Records a sign of life at `now`.
    pub(crate) fn seen_at(&mut self, now: Instant) {
        self.last_seen = now;
        self.warned = false;
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

    /// The next thing silence will be, and when.
    fn next_silence(&self) -> Option<(Instant, Silence)> {
        let missed = self.deadline()?;
        let warn = (self.warns && !self.warned)
            .then(|| self.last_seen.checked_add(self.limit / 4 * 3))
            .flatten();
        Some(match warn {
            Some(warn) => (warn, Silence::Overdue),
            None => (missed, Silence::Missed),
        })
    }

    /// What the silence is at `now`, if anything yet: after a miss counting restarts from
    /// `now`, after a warning the next is the miss.
    pub(crate) fn handle_silence(&mut self, now: Instant) -> Option<Silence> {
        match self.next_silence()? {
            (at, Silence::Overdue) if now >= at => {
                self.warned = true;
                Some(Silence::Overdue)
            }
            (at, Silence::Missed) if now >= at => {
                self.seen_at(now);
                Some(Silence::Missed)
            }
            _ => None,
        }
    }

    /// Whether the silence passed the limit, driven by a tokio timer: registers the waker for
    /// the deadline unless it has passed. Counting restarts from a miss.
    pub(crate) fn poll_missed(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            match self.poll_silence(cx) {
                None => return false,
                Some(Silence::Missed) => return true,
                Some(Silence::Overdue) => {}
            }
        }
    }

    /// [`Monitor::handle_silence`] driven by a tokio timer: registers the waker for the next
    /// deadline unless it has passed.
    pub(crate) fn poll_silence(&mut self, cx: &mut Context<'_>) -> Option<Silence> {
        loop {
            let (deadline, _) = self.next_silence()?;
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(rnats_core::runtime::sleep_until(deadline)));
            if timer.deadline() != deadline {
                timer.as_mut().reset(deadline);
            }
            if timer.poll_unpin(cx).is_pending() {
                return None;
            }
            // The timer fired; activity may have moved the deadline on meanwhile.
            if let Some(silence) = self.handle_silence(runtime::now()) {
                return Some(silence);
            }
        }
    }
}

/// What a silence has become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Silence {
    /// Past the warning: a heartbeat is late, not yet missed.
    Overdue,
    /// Past the limit: heartbeats were missed.
    Missed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_past_twice_the_interval_is_a_miss_activity_is_not() {
        let mut monitor = Monitor::new(Duration::from_secs(1));
        let start = runtime::now();
        monitor.seen_at(start);
        let at = |ms| start + Duration::from_millis(ms);
        assert_eq!(monitor.deadline(), Some(at(2000)));
        assert_eq!(monitor.handle_silence(at(1500)), None);
        monitor.seen_at(at(1500));
        assert_eq!(monitor.handle_silence(at(3000)), None);
        assert_eq!(monitor.handle_silence(at(3600)), Some(Silence::Missed));
        // Counting restarted at the miss.
        assert_eq!(monitor.handle_silence(at(4000)), None);
        monitor.pause();
        assert_eq!(monitor.deadline(), None);
        assert_eq!(monitor.handle_silence(at(60_000)), None);
    }

    #[test]
    fn a_warning_comes_once_a_spell_before_the_miss() {
        let mut monitor = Monitor::new(Duration::from_secs(10)).warning_when_overdue();
        let start = runtime::now();
        monitor.seen_at(start);
        let at = |ms| start + Duration::from_millis(ms);
        assert_eq!(monitor.handle_silence(at(14_000)), None);
        assert_eq!(monitor.handle_silence(at(15_000)), Some(Silence::Overdue));
        assert_eq!(monitor.handle_silence(at(16_000)), None);
        assert_eq!(monitor.handle_silence(at(20_000)), Some(Silence::Missed));
        // A new spell from the miss, and from any sign of life.
        assert_eq!(monitor.handle_silence(at(35_000)), Some(Silence::Overdue));
        monitor.seen_at(at(36_000));
        assert_eq!(monitor.handle_silence(at(50_000)), None);
        assert_eq!(monitor.handle_silence(at(51_000)), Some(Silence::Overdue));
        // Without the warning, only misses.
        let mut plain = Monitor::new(Duration::from_secs(10));
        plain.seen_at(start);
        assert_eq!(plain.handle_silence(at(19_000)), None);
        assert_eq!(plain.handle_silence(at(20_000)), Some(Silence::Missed));
    }

    /// Moves the paused clock on by `ms` and polls the monitor's timer.
    async fn after(monitor: &mut Monitor, ms: u64) -> Option<Silence> {
        tokio::time::advance(Duration::from_millis(ms)).await;
        let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
        monitor.poll_silence(&mut cx)
    }

    #[tokio::test(start_paused = true)]
    async fn the_timer_follows_a_limit_switched_either_way() {
        let mut monitor = Monitor::new(Duration::from_secs(15)).warning_when_overdue();
        assert_eq!(after(&mut monitor, 0).await, None, "armed for 22.5 s");
        // A probe: 4 s of silence is a miss, with no warning first.
        monitor.set_limit(Duration::from_secs(4));
        monitor.set_warning(false);
        assert_eq!(after(&mut monitor, 3_900).await, None);
        assert_eq!(after(&mut monitor, 100).await, Some(Silence::Missed));
        // Back to the usual heartbeat: the warning at 22.5 s, the miss at 30 s.
        monitor.set_limit(Duration::from_secs(30));
        monitor.set_warning(true);
        assert_eq!(after(&mut monitor, 22_400).await, None);
        assert_eq!(after(&mut monitor, 100).await, Some(Silence::Overdue));
        assert_eq!(after(&mut monitor, 7_400).await, None);
        assert_eq!(after(&mut monitor, 100).await, Some(Silence::Missed));
    }

    #[test]
    fn a_zero_interval_never_misses() {
        let mut monitor = Monitor::new(Duration::ZERO);
        assert_eq!(monitor.deadline(), None);
        assert_eq!(
            monitor.handle_silence(runtime::now() + Duration::from_secs(3600)),
            None
        );
    }
}
