//! Timers and tasks for the crates built on the client (JetStream, Key-Value, Object Store,
//! the Service API), on whichever runtime their caller runs under: tokio's when a tokio
//! runtime is current, else, with the `runtime-neutral` feature, the runtime-neutral backend
//! the client itself uses there (async-io's timers, rnats' own task thread). So JetStream
//! works under smol or a plain `block_on` as the Core client does.
//!
//! Not a public API for users: its shape follows what rnats' crates need, and may change.
//! Clocks: [`now`] is tokio's clock inside a tokio runtime (paused in tests with
//! `start_paused`) and the system's monotonic clock elsewhere; compare only instants taken
//! from it with deadlines given to it.

use std::fmt;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::connector::BoxedStream;
use crate::floor::deadline::saturating_add;
use crate::rt::{Rt, Timer};

pub use crate::rt::Elapsed;

/// The time now, on the clock of the runtime the caller runs under.
pub fn now() -> Instant {
    Rt::here().now()
}

/// A timer: ready once the clock reaches its deadline, and from then on until it is reset.
/// `Unpin`, so it can be kept and polled in place.
#[derive(Debug)]
pub struct Sleep {
    timer: Timer,
}

/// A timer that fires after `delay` (a delay past the clock's range never fires).
pub fn sleep(delay: Duration) -> Sleep {
    let rt = Rt::here();
    Sleep {
        timer: rt.timer(saturating_add(rt.now(), delay)),
    }
}

/// A timer that fires at `at`.
pub fn sleep_until(at: Instant) -> Sleep {
    Sleep {
        timer: Rt::here().timer(at),
    }
}

impl Sleep {
    /// When it fires.
    pub fn deadline(&self) -> Instant {
        self.timer.deadline()
    }

    /// Moves the deadline to `at`.
    pub fn reset(&mut self, at: Instant) {
        self.timer.reset(at);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.get_mut().timer).poll(cx)
    }
}

/// Runs `work` until it is done or `limit` has passed, whichever comes first.
pub async fn timeout<F: Future>(limit: Duration, work: F) -> Result<F::Output, Elapsed> {
    Rt::here().timeout(limit, work).await
}

/// Runs `work` until it is done or the clock reaches `at`, whichever comes first.
pub async fn timeout_at<F: Future>(at: Instant, work: F) -> Result<F::Output, Elapsed> {
    Rt::here().timeout_at(at, work).await
}

/// `timeout` from [`now`], or far enough ahead to never come when that overflows.
pub fn deadline_after(timeout: Duration) -> Instant {
    saturating_add(now(), timeout)
}

/// Runs `work`, which may block (an `fsync`, say), off the caller's thread and waits for its
/// result: tokio's blocking pool, or the `blocking` crate's on the runtime-neutral backend.
pub async fn unblock<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> io::Result<T> {
    Rt::here().unblock(work).await
}

/// Opens the file at `path` to read, off the caller's thread (tokio's file, or the
/// `blocking` pool's on the runtime-neutral backend).
pub async fn open_file(path: &Path) -> io::Result<BoxedStream> {
    file(path.to_owned(), |path| std::fs::File::open(path)).await
}

/// Creates (or truncates) the file at `path` to write, off the caller's thread.
pub async fn create_file(path: &Path) -> io::Result<BoxedStream> {
    file(path.to_owned(), |path| std::fs::File::create(path)).await
}

async fn file(
    path: PathBuf,
    open: fn(&Path) -> io::Result<std::fs::File>,
) -> io::Result<BoxedStream> {
    match Rt::here() {
        Rt::Tokio => {
            let file = tokio::task::spawn_blocking(move || open(&path))
                .await
                .map_err(io::Error::other)??;
            Ok(Box::new(tokio::fs::File::from_std(file)))
        }
        #[cfg(feature = "runtime-neutral")]
        Rt::Neutral => {
            let file = blocking::unblock(move || open(&path)).await?;
            Ok(crate::connector::from_futures_io(blocking::Unblock::new(
                file,
            )))
        }
    }
}

/// Runs `task` in the background: on tokio when a tokio runtime is current, else on rnats'
/// task thread. Dropping the handle leaves the task running, as with tokio's.
pub fn spawn<T: Send + 'static>(task: impl Future<Output = T> + Send + 'static) -> JoinHandle<T> {
    match Rt::here() {
        Rt::Tokio => JoinHandle(Inner::Tokio(tokio::spawn(task))),
        #[cfg(feature = "runtime-neutral")]
        Rt::Neutral => JoinHandle(Inner::Neutral(Some(crate::rt::neutral_spawn_task(
            CatchUnwind(Box::pin(task)),
        )))),
    }
}

/// A task started by [`spawn`]; awaiting it gives the task's output, or how it failed.
pub struct JoinHandle<T>(Inner<T>);

enum Inner<T> {
    Tokio(tokio::task::JoinHandle<T>),
    #[cfg(feature = "runtime-neutral")]
    Neutral(Option<async_executor::Task<std::thread::Result<T>>>),
}

impl<T> JoinHandle<T> {
    /// Whether the task has ended.
    pub fn is_finished(&self) -> bool {
        match &self.0 {
            Inner::Tokio(handle) => handle.is_finished(),
            #[cfg(feature = "runtime-neutral")]
            Inner::Neutral(task) => task.as_ref().is_none_or(async_executor::Task::is_finished),
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            Inner::Tokio(handle) => Pin::new(handle).poll(cx).map_err(|error| JoinError {
                panicked: error.is_panic(),
            }),
            #[cfg(feature = "runtime-neutral")]
            Inner::Neutral(slot) => {
                let Some(task) = slot.as_mut() else {
                    return Poll::Ready(Err(JoinError { panicked: false }));
                };
                let joined = std::task::ready!(Pin::new(task).poll(cx));
                *slot = None;
                Poll::Ready(joined.map_err(|_| JoinError { panicked: true }))
            }
        }
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // async-executor cancels a task whose handle is dropped; tokio lets it run on.
        #[cfg(feature = "runtime-neutral")]
        if let Inner::Neutral(slot) = &mut self.0
            && let Some(task) = slot.take()
        {
            task.detach();
        }
    }
}

/// Why a task gave no output: it panicked, or it was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinError {
    panicked: bool,
}

impl JoinError {
    /// Whether the task panicked.
    pub fn is_panic(&self) -> bool {
        self.panicked
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.panicked {
            "task panicked"
        } else {
            "task was cancelled"
        })
    }
}

impl std::error::Error for JoinError {}

/// A task's future, its panics caught and returned as its output (on rnats' task thread a
/// panic must not take the thread down with every client's engine on it). Boxed, so that it
/// is `Unpin` without unsafe code; spawning is rare.
#[cfg(feature = "runtime-neutral")]
struct CatchUnwind<F>(Pin<Box<F>>);

#[cfg(feature = "runtime-neutral")]
impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.get_mut().0.as_mut();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}
