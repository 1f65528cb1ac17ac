//! Watching the workers of a run: progress bar, stall detection, collecting results.
//!
//! Workers never touch the progress bar. Each one stores its running count in a
//! [`Counter`] (one relaxed store per message), and the supervisor reads the counters on
//! a slow tick, so drawing costs the hot loops nothing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use indicatif::{ProgressBar, ProgressStyle};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use crate::error::CliError;

/// How often counters are read.
pub(super) const TICK: Duration = Duration::from_millis(100);

/// The progress bar's layout.
const TEMPLATE: &str =
    "{msg:>10} [{elapsed_precise}] {wide_bar:.cyan/blue} {human_pos}/{human_len} ({per_sec})";

/// Owns the progress bar and the counters of one run, and waits for its workers.
#[derive(Debug)]
pub(super) struct Supervisor {
    bar: ProgressBar,
    counters: Vec<Arc<AtomicU64>>,
    stop: watch::Sender<bool>,
    stall_limit: Option<Duration>,
    /// (seconds from the start of [`wait`](Supervisor::wait), rate over the tick before).
    timeline: Mutex<Vec<(f64, f64)>>,
}

/// A worker's running count of messages, read by the [`Supervisor`].
#[derive(Debug, Clone, Default)]
pub(super) struct Counter(Arc<AtomicU64>);

/// Tells a worker that waits for messages to give up; see [`Supervisor::stall_limit`].
#[derive(Debug, Clone)]
pub(super) struct StopSignal(watch::Receiver<bool>);

impl Supervisor {
    /// A supervisor expecting `total` counted messages, drawing a bar labelled `label` when
    /// `visible`.
    pub(super) fn new(label: &'static str, total: u64, visible: bool) -> Supervisor {
        Supervisor {
            bar: progress_bar(label, total, visible),
            counters: Vec::new(),
            stop: watch::Sender::new(false),
            stall_limit: None,
            timeline: Mutex::new(Vec::new()),
        }
    }

    /// Raises the [`StopSignal`] once the counters have not moved for `limit`, so workers
    /// waiting for messages that will never come (dropped, or lost with a connection) end
    /// and report what they got.
    pub(super) fn stall_limit(mut self, limit: Duration) -> Supervisor {
        self.stall_limit = Some(limit);
        self
    }

    /// A new counter whose value is part of the progress shown.
    pub(super) fn counter(&mut self) -> Counter {
        let counter = Counter::default();
        self.counters.push(Arc::clone(&counter.0));
        counter
    }

    /// A handle on the stop signal, for a worker that waits for messages.
    pub(super) fn stop_signal(&self) -> StopSignal {
        StopSignal(self.stop.subscribe())
    }

    /// Waits for every task ([`Supervisor::wait`]), then clears the bar: the tasks' results
    /// and the rate over time seen meanwhile ([`Supervisor::timeline`]).
    pub(super) async fn finish<T>(
        self,
        tasks: Vec<JoinHandle<Result<T, CliError>>>,
    ) -> (Result<Vec<T>, CliError>, Vec<(f64, f64)>) {
        let results = self.wait(tasks).await;
        (results, self.timeline())
    }

    /// Waits for every task, keeping the bar current, and returns their results in the
    /// order given. The first failure is returned at once; the other workers are told to
    /// stop and left to end on their own.
    async fn wait<T>(
        &self,
        tasks: Vec<JoinHandle<Result<T, CliError>>>,
    ) -> Result<Vec<T>, CliError> {
        let mut results: Vec<Option<T>> = tasks.iter().map(|_| None).collect();
        let mut pending: FuturesUnordered<_> = tasks
            .into_iter()
            .enumerate()
            .map(|(i, task)| async move { (i, task.await) })
            .collect();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut seen = 0;
        let mut last_change = Instant::now();
        let mut sampler = Sampler::new();
        loop {
            tokio::select! {
                next = pending.next() => match next {
                    Some((i, Ok(Ok(value)))) => results[i] = Some(value),
                    Some((_, Ok(Err(e)))) => return Err(self.fail(e)),
                    Some((_, Err(e))) => return Err(self.fail(e.into())),
                    None => break,
                },
                _ = tick.tick() => {
                    let total = self.total();
                    self.bar.set_position(total);
                    self.record(sampler.sample(total));
                    if total != seen {
                        seen = total;
                        last_change = Instant::now();
                    } else if self.stall_limit.is_some_and(|limit| last_change.elapsed() >= limit) {
                        self.stop.send_replace(true);
                    }
                }
            }
        }
        let total = self.total();
        self.bar.set_position(total);
        self.record(sampler.sample(total));
        Ok(results.into_iter().flatten().collect())
    }

    /// The rate over time seen while waiting: (seconds from the start, messages a second
    /// over the tick before).
    fn timeline(&self) -> Vec<(f64, f64)> {
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
        self.stop.send_replace(true);
        e
    }

    /// The sum of all counters.
    fn total(&self) -> u64 {
        self.counters
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }
}

impl Drop for Supervisor {
    /// Clears the bar so the report starts on a clean line.
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Turns running totals read on each tick into rates over time; shared with the blocking
/// runs' watch.
#[derive(Debug)]
pub(super) struct Sampler {
    start: Instant,
    last: (Instant, u64),
}

impl Sampler {
    /// A sampler whose clock starts now.
    pub(super) fn new() -> Sampler {
        let now = Instant::now();
        Sampler {
            start: now,
            last: (now, 0),
        }
    }

    /// The point for a running total of `total`: seconds from the start and the rate since
    /// the last sample; `None` when no time has passed.
    pub(super) fn sample(&mut self, total: u64) -> Option<(f64, f64)> {
        let now = Instant::now();
        let seconds = now.duration_since(self.last.0).as_secs_f64();
        if seconds <= 0.0 {
            return None;
        }
        let rate = total.saturating_sub(self.last.1) as f64 / seconds;
        self.last = (now, total);
        Some((now.duration_since(self.start).as_secs_f64(), rate))
    }
}

impl Counter {
    /// Records that `n` messages are done so far.
    pub(super) fn set(&self, n: u64) {
        self.0.store(n, Ordering::Relaxed);
    }

    /// The count recorded last.
    pub(super) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A progress bar for `total` messages labelled `label`, hidden unless `visible`; shared
/// with the blocking runs' watch.
pub(super) fn progress_bar(label: &'static str, total: u64, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let style =
        ProgressStyle::with_template(TEMPLATE).unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(total)
        .with_style(style)
        .with_message(label)
}

impl StopSignal {
    /// Resolves once the supervisor says stop, or is gone.
    pub(super) async fn stopped(&mut self) {
        // An error means the sender was dropped: nobody is waiting for this worker anymore.
        let _ = self.0.wait_for(|stop| *stop).await;
    }
}
