//! The runtime under the async client: spawning its tasks, its clock and timers, dialing TCP
//! and resolving names, and running blocking work elsewhere. Two backends: tokio (a client
//! made inside a tokio runtime) and, with the `runtime-neutral` feature, one built from
//! smol's parts (`async-io`'s reactor and timers, `blocking`'s thread pool, one thread of
//! rnats' own for its tasks) that needs no runtime at all. Each client picks its backend once,
//! at connect ([`Rt::current`]), and keeps it: its engine, timers and reconnects all use it.
//!
//! Only what differs between runtimes is here. Tokio's channels and `Notify` work on any
//! executor, so the client keeps them on both backends.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

#[cfg(not(feature = "runtime-neutral"))]
use crate::error::ConnectCause;
use crate::error::ConnectError;

#[cfg(feature = "runtime-neutral")]
#[path = "rt_neutral.rs"]
mod neutral;

#[cfg(feature = "runtime-neutral")]
pub(crate) use neutral::off_the_task_thread;
#[cfg(feature = "runtime-neutral")]
pub(crate) use neutral::spawn_task as neutral_spawn_task;

/// Which runtime a client runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rt {
    /// Tokio: the runtime current at connect.
    Tokio,
    /// No runtime of anyone's: async-io's reactor and rnats' own task thread.
    #[cfg(feature = "runtime-neutral")]
    Neutral,
}

/// A deadline passed before the work was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl Rt {
    /// The backend for a client made here and now: tokio when a tokio runtime is current,
    /// else the runtime-neutral one when built with it, else an error that says so.
    pub(crate) fn current() -> Result<Rt, ConnectError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Ok(Rt::Tokio);
        }
        #[cfg(feature = "runtime-neutral")]
        {
            Ok(Rt::Neutral)
        }
        #[cfg(not(feature = "runtime-neutral"))]
        Err(ConnectCause::NoRuntime.into())
    }

    /// The backend for a timer or a task made here and now, by a crate built on the client
    /// (`crate::runtime`): tokio when a tokio runtime is current, else the runtime-neutral
    /// one when built with it, else tokio (whose timers then panic, as they always did).
    pub(crate) fn here() -> Rt {
        #[cfg(feature = "runtime-neutral")]
        if tokio::runtime::Handle::try_current().is_err() {
            return Rt::Neutral;
        }
        Rt::Tokio
    }

    /// Runs `task` in the background until it ends.
    pub(crate) fn spawn(self, task: impl Future<Output = ()> + Send + 'static) {
        match self {
            Rt::Tokio => drop(tokio::spawn(task)),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => neutral::spawn(task),
        }
    }

    /// Runs `work` on a thread where blocking is fine, and forgets it.
    pub(crate) fn spawn_blocking(self, work: impl FnOnce() + Send + 'static) {
        match self {
            Rt::Tokio => drop(tokio::task::spawn_blocking(work)),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => neutral::spawn(blocking::unblock(work)),
        }
    }

    /// The time now, on this runtime's clock (tokio's may be paused in tests).
    pub(crate) fn now(self) -> Instant {
        match self {
            Rt::Tokio => tokio::time::Instant::now().into_std(),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => Instant::now(),
        }
    }

    /// A timer that fires at `at`; [`Timer::reset`] moves it.
    pub(crate) fn timer(self, at: Instant) -> Timer {
        match self {
            Rt::Tokio => Timer::Tokio(Box::pin(tokio::time::sleep_until(at.into()))),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => Timer::Neutral(async_io::Timer::at(at), at),
        }
    }

    /// Waits for `delay`.
    pub(crate) async fn sleep(self, delay: Duration) {
        // A delay past the clock's range (a callback's `Duration::MAX`) sleeps as good as
        // for ever, where adding it would panic.
        let at = crate::floor::deadline::saturating_add(self.now(), delay);
        self.timer(at).await;
    }

    /// Runs `work` until it is done or `limit` has passed, whichever comes first.
    pub(crate) async fn timeout<F: Future>(
        self,
        limit: Duration,
        work: F,
    ) -> Result<F::Output, Elapsed> {
        match self {
            Rt::Tokio => tokio::time::timeout(limit, work).await.map_err(|_| Elapsed),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => {
                // A limit past the clock's range never fires.
                let Some(at) = Instant::now().checked_add(limit) else {
                    return Ok(work.await);
                };
                self.timeout_at(at, work).await
            }
        }
    }

    /// Runs `work` until it is done or the clock reaches `at`, whichever comes first.
    pub(crate) async fn timeout_at<F: Future>(
        self,
        at: Instant,
        work: F,
    ) -> Result<F::Output, Elapsed> {
        match self {
            Rt::Tokio => tokio::time::timeout_at(at.into(), work)
                .await
                .map_err(|_| Elapsed),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => {
                let mut work = std::pin::pin!(work);
                let mut timer = self.timer(at);
                std::future::poll_fn(|cx| {
                    if let Poll::Ready(done) = work.as_mut().poll(cx) {
                        return Poll::Ready(Ok(done));
                    }
                    Pin::new(&mut timer).poll(cx).map(|()| Err(Elapsed))
                })
                .await
            }
        }
    }

    /// Resolves `host:port` to socket addresses.
    pub(crate) async fn lookup(self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        match self {
            Rt::Tokio => Ok(tokio::net::lookup_host((host, port)).await?.collect()),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => {
                let host = host.to_owned();
                blocking::unblock(move || {
                    use std::net::ToSocketAddrs;
                    Ok((host.as_str(), port).to_socket_addrs()?.collect())
                })
                .await
            }
        }
    }

    /// Runs `work`, which may block, off the caller's thread and waits for its result.
    pub(crate) async fn unblock<T: Send + 'static>(
        self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<T> {
        match self {
            Rt::Tokio => tokio::task::spawn_blocking(work)
                .await
                .map_err(io::Error::other),
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => Ok(blocking::unblock(work).await),
        }
    }
}

/// A resettable timer for the engine and the request-many gathering. Level-triggered on
/// both backends: once its deadline has passed it stays ready until it is reset (tokio's
/// `Sleep` does so; async-io's `Timer` fires once, so its deadline is kept beside it).
#[derive(Debug)]
pub(crate) enum Timer {
    /// Tokio's.
    Tokio(Pin<Box<tokio::time::Sleep>>),
    /// async-io's, with its deadline.
    #[cfg(feature = "runtime-neutral")]
    Neutral(async_io::Timer, Instant),
}

impl Timer {
    /// When it fires.
    pub(crate) fn deadline(&self) -> Instant {
        match self {
            Timer::Tokio(sleep) => sleep.deadline().into_std(),
            #[cfg(feature = "runtime-neutral")]
            Timer::Neutral(_, deadline) => *deadline,
        }
    }

    /// Moves the deadline to `at` unless it is there already (a reset registers the timer
    /// with the runtime's timer wheel anew, under its lock).
    pub(crate) fn arm(&mut self, at: Instant) {
        if self.deadline() != at {
            self.reset(at);
        }
    }

    /// Moves the deadline to `at`.
    pub(crate) fn reset(&mut self, at: Instant) {
        match self {
            Timer::Tokio(sleep) => sleep.as_mut().reset(at.into()),
            #[cfg(feature = "runtime-neutral")]
            Timer::Neutral(timer, deadline) => {
                timer.set_at(at);
                *deadline = at;
            }
        }
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.get_mut() {
            Timer::Tokio(sleep) => sleep.as_mut().poll(cx),
            #[cfg(feature = "runtime-neutral")]
            Timer::Neutral(timer, deadline) => {
                if Instant::now() >= *deadline {
                    return Poll::Ready(());
                }
                Pin::new(timer).poll(cx).map(drop)
            }
        }
    }
}

/// What a TCP connection is made with, besides the address.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SocketSettings {
    pub(crate) send_buffer: Option<usize>,
    pub(crate) recv_buffer: Option<usize>,
    pub(crate) local: Option<SocketAddr>,
}

/// A connected TCP stream of either backend.
pub(crate) enum Tcp {
    /// Tokio's, which callers may write directly.
    Tokio(tokio::net::TcpStream),
    /// async-io's, behind tokio's I/O traits.
    #[cfg(feature = "runtime-neutral")]
    Neutral(neutral::Stream),
}

impl Rt {
    /// Connects to `addr` with `settings`.
    pub(crate) async fn connect_tcp(
        self,
        addr: SocketAddr,
        settings: SocketSettings,
    ) -> io::Result<Tcp> {
        match self {
            Rt::Tokio => {
                let socket = if addr.is_ipv4() {
                    tokio::net::TcpSocket::new_v4()?
                } else {
                    tokio::net::TcpSocket::new_v6()?
                };
                if let Some(size) = settings.send_buffer {
                    socket.set_send_buffer_size(u32::try_from(size).unwrap_or(u32::MAX))?;
                }
                if let Some(size) = settings.recv_buffer {
                    socket.set_recv_buffer_size(u32::try_from(size).unwrap_or(u32::MAX))?;
                }
                if let Some(local) = settings.local {
                    socket.bind(local)?;
                }
                let stream = socket.connect(addr).await?;
                stream.set_nodelay(true)?;
                Ok(Tcp::Tokio(stream))
            }
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => neutral::connect(addr, settings).await.map(Tcp::Neutral),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_client_made_inside_tokio_runs_on_tokio() {
        assert_eq!(Rt::current().ok(), Some(Rt::Tokio));
    }

    /// A delay past the clock's range (a reconnect delay callback's `Duration::MAX`) is a
    /// sleep without end, not a panic.
    #[tokio::test]
    async fn a_sleep_past_the_clock_s_range_waits() {
        let slept = Rt::Tokio.timeout(Duration::from_millis(20), Rt::Tokio.sleep(Duration::MAX));
        assert_eq!(slept.await, Err(Elapsed));
    }

    #[cfg(feature = "runtime-neutral")]
    #[test]
    fn outside_any_runtime_the_neutral_backend_is_picked() {
        assert_eq!(Rt::current().ok(), Some(Rt::Neutral));
    }

    /// The engine polls its timer again after acting on it; a fired timer must stay ready
    /// until it is reset, as tokio's `Sleep` does, and a reset must re-arm it.
    #[cfg(feature = "runtime-neutral")]
    #[test]
    fn a_neutral_timer_stays_ready_until_reset() {
        let rt = Rt::Neutral;
        let mut timer = rt.timer(rt.now());
        async_io::block_on(async {
            (&mut timer).await;
            let ready = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut timer).poll(cx)));
            assert!(ready.await.is_ready());
            timer.reset(rt.now() + Duration::from_secs(3600));
            let ready = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut timer).poll(cx)));
            assert!(ready.await.is_pending());
            timer.reset(rt.now());
            (&mut timer).await;
        });
        let slow = rt.timeout(Duration::from_millis(1), std::future::pending::<()>());
        assert_eq!(async_io::block_on(slow), Err(Elapsed));
    }
}
