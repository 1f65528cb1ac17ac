//! `--sleep` and `--throughput`: holding a client back to a pause per message or a rate.

use std::time::{Duration, Instant};

/// How one client is held back; the default holds nothing back.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Pace {
    /// A pause after every message.
    sleep: Option<Duration>,
    /// This client's share of the `--throughput` cap, in messages a second.
    rate: Option<f64>,
}

/// A [`Pace`] applied from the moment a client started.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pacer {
    pace: Pace,
    start: Instant,
}

impl Pace {
    /// The pace of one of `clients` clients given `--sleep` and `--throughput`.
    pub(super) fn new(sleep: Option<Duration>, throughput: Option<u64>, clients: usize) -> Pace {
        Pace {
            sleep: sleep.filter(|d| !d.is_zero()),
            rate: throughput
                .filter(|rate| *rate > 0)
                .map(|rate| rate as f64 / clients.max(1) as f64),
        }
    }

    /// Whether this pace holds anything back (so hot loops skip it entirely when not).
    pub(super) fn is_free(&self) -> bool {
        self.sleep.is_none() && self.rate.is_none()
    }

    /// Starts the clock of one client.
    pub(super) fn start(self) -> Pacer {
        Pacer {
            pace: self,
            start: Instant::now(),
        }
    }
}

impl Pacer {
    /// How long to wait after the `sent`-th message: the pause, and whatever keeps the
    /// client at its rate (natscli's throttle: `sent` messages take at least sent/rate
    /// seconds from the start).
    fn due(&self, sent: u64) -> Duration {
        let pause = self.pace.sleep.unwrap_or_default();
        let behind = self.pace.rate.map_or(Duration::ZERO, |rate| {
            let target = Duration::from_secs_f64(sent as f64 / rate);
            target.saturating_sub(self.start.elapsed())
        });
        pause.max(behind)
    }

    /// Waits as the pace says after the `sent`-th message.
    pub(super) async fn after(&self, sent: u64) {
        let wait = self.due(sent);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    /// [`after`](Pacer::after) for the blocking client's threads.
    pub(super) fn after_blocking(&self, sent: u64) {
        let wait = self.due(sent);
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_flags_hold_nothing_back() {
        let pace = Pace::new(None, None, 4);
        assert!(pace.is_free());
        assert!(Pace::new(Some(Duration::ZERO), Some(0), 1).is_free());
        assert_eq!(pace.start().due(1_000_000), Duration::ZERO);
    }

    #[test]
    fn throughput_is_shared_between_clients() {
        let pacer = Pace::new(None, Some(1_000), 4).start();
        // 250 msgs/s each: the 250th message is due a second after the start.
        let wait = pacer.due(250);
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1));
    }

    #[test]
    fn sleep_pauses_after_each_message() {
        let pacer = Pace::new(Some(Duration::from_millis(2)), None, 1).start();
        assert_eq!(pacer.due(1), Duration::from_millis(2));
    }
}
