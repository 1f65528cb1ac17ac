//! Watching the threads of a blocking run: progress bar, stall detection, collecting
//! results; the thread-based counterpart of the tokio [`Supervisor`].
//!
//! [`Supervisor`]: super::super::supervisor::Supervisor

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use super::super::supervisor::{Counter, Sampler, TICK, progress_bar};
use crate::error::CliError;

/// One worker: run on a thread of its own.
pub(super) type Job<T> = Box<dyn FnOnce() -> Result<T, CliError> + Send>;

/// Owns the progress bar and the counters of one run, and waits for its worker threads.
#[derive(Debug)]
pub(super) struct Watch {
    bar: ProgressBar,
    counters: Vec<Counter>,
    stop: StopFlag,
    stall_limit: Option<Duration>,
    /// (seconds from the start of [`wait`](Watch::wait), rate over the tick before).
    timeline: std::sync::Mutex<Vec<(f64, f64)>>,
}

/// Tells a worker that waits for messages to give up; see [`Watch::stall_limit`].
#[derive(Debug, Clone, Default)]
pub(super) struct StopFlag(Arc<AtomicBool>);

impl Watch {
    /// A watch expecting `total` counted messages, drawing a bar labelled `label` when
    /// `visible`.
    pub(super) fn new(label: &'static str, total: u64, visible: bool) -> Watch {
        Watch {
            bar: progress_bar(label, total, visible),
            counters: Vec::new(),
            stop: StopFlag::default(),
            stall_limit: None,
            timeline: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Raises the [`StopFlag`] once the counters have not moved for `limit`, so workers
    /// waiting for messages that will never come end and report what they got.
    pub(super) fn stall_limit(mut self, limit: Duration) -> Watch {
        self.stall_limit = Some(limit);
        self
    }

    /// A new counter whose value is part of the progress shown.
    pub(super) fn counter(&mut self) -> Counter {
        let counter = Counter::default();
        self.counters.push(counter.clone());
        counter
    }

    /// A handle on the stop flag, for a worker that waits for messages.
    pub(super) fn stop_flag(&self) -> StopFlag {
        self.stop.clone()
    }

    /// Runs every job on a thread of its own, keeping the bar current, and returns their
    /// results in the order given. The first failure is returned at once; the other workers
    /// are told to stop and left to end on their own. A worker's panic is passed on.
    pub(super) fn wait<T: Send + 'static>(&self, jobs: Vec<Job<T>>) -> Result<Vec<T>, CliError> {
        let (done, finished) = mpsc::channel();
        let count = jobs.len();
        for (i, job) in jobs.into_iter().enumerate() {
            let done = done.clone();
            thread::Builder::new()
                .name(format!("rnats-bench-{i}"))
                .spawn(move || {
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    let _ = done.send((i, result));
                })
                .map_err(CliError::Runtime)?;
        }
        drop(done);
        let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
        let mut left = count;
        let mut seen = 0;
        let mut last_change = Instant::now();
        let mut sampler = Sampler::new();
        while left > 0 {
            match finished.recv_timeout(TICK) {
                Ok((i, Ok(Ok(value)))) => {
                    results[i] = Some(value);
                    left -= 1;
                }
                Ok((_, Ok(Err(e)))) => return Err(self.fail(e)),
                Ok((_, Err(panic))) => {
                    self.stop.raise();
                    std::panic::resume_unwind(panic)
                }
                // Every thread reports before it ends, so this means none is left.
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                // A whole tick went by: a point of the rate over time.
                Err(mpsc::RecvTimeoutError::Timeout) => self.record(sampler.sample(self.total())),
            }
            let total = self.total();
            self.bar.set_position(total);
            if total != seen {
                seen = total;
                last_change = Instant::now();
            } else if self
                .stall_limit
                .is_some_and(|limit| last_change.elapsed() >= limit)
            {
                self.stop.raise();
            }
        }
        self.bar.set_position(self.total());
        self.record(sampler.sample(self.total()));
        Ok(results.into_iter().flatten().collect())
    }

    /// The rate over time seen while waiting, as [`Supervisor::timeline`] gives it.
    ///
    /// [`Supervisor::timeline`]: super::super::supervisor::Supervisor::timeline
    pub(super) fn timeline(&self) -> Vec<(f64, f64)> {
        self.timeline
            .lock()
            .map(|timeline| timeline.clone())
            .unwrap_or_default()
    }

    /// Adds a point to the timeline.
    fn record(&self, point: Option<(f64, f64)>) {
        if let (Some(point), Ok(mut timeline)) = (point, self.timeline.lock()) {
            timeline.push(point);
        }
    }

    /// Tells the remaining workers to stop and passes `e` on.
    fn fail(&self, e: CliError) -> CliError {
        self.stop.raise();
        e
    }

    /// The sum of all counters.
    fn total(&self) -> u64 {
        self.counters.iter().map(Counter::get).sum()
    }
}

impl Drop for Watch {
    /// Clears the bar so the report starts on a clean line, and stops stragglers.
    fn drop(&mut self) {
        self.stop.raise();
        self.bar.finish_and_clear();
    }
}

impl StopFlag {
    /// Whether the watch said stop.
    pub(super) fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order() {
        let mut watch = Watch::new("test", 2, false);
        let counters = [watch.counter(), watch.counter()];
        let jobs: Vec<Job<u32>> = counters
            .into_iter()
            .zip([1u32, 2])
            .map(|(counter, n)| -> Job<u32> {
                Box::new(move || {
                    thread::sleep(Duration::from_millis(u64::from(3 - n) * 10));
                    counter.set(1);
                    Ok(n)
                })
            })
            .collect();
        assert_eq!(watch.wait(jobs).expect("no failure"), vec![1, 2]);
        assert_eq!(watch.total(), 2);
    }

    #[test]
    fn a_failure_stops_the_others() {
        let watch = Watch::new("test", 1, false);
        let stop = watch.stop_flag();
        let waiting: Job<()> = Box::new(move || {
            while !stop.is_raised() {
                thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        });
        let failing: Job<()> = Box::new(|| Err(CliError::SubscriptionEnded));
        let result = watch.wait(vec![waiting, failing]);
        assert!(matches!(result, Err(CliError::SubscriptionEnded)));
        assert!(watch.stop_flag().is_raised());
    }

    #[test]
    fn a_stall_raises_the_stop_flag() {
        let watch = Watch::new("test", 1, false).stall_limit(Duration::from_millis(150));
        let stop = watch.stop_flag();
        let stalled: Job<bool> = Box::new(move || {
            while !stop.is_raised() {
                thread::sleep(Duration::from_millis(5));
            }
            Ok(true)
        });
        assert_eq!(watch.wait(vec![stalled]).expect("ends"), vec![true]);
    }
}
