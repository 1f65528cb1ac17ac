//! The runtime-neutral backend: rnats' tasks on one thread of its own, sockets and timers on
//! async-io's reactor, blocking work on the `blocking` pool. Nothing here needs a runtime in
//! the caller's thread, so a client works under smol, async-executor, `futures::executor` or
//! a plain `async_io::block_on`.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::Once;

use async_executor::Executor;
use async_io::Async;
use socket2::{Domain, Protocol, Socket, Type};

use super::SocketSettings;
use crate::connector::FuturesIo;

/// A TCP stream on async-io's reactor, behind tokio's I/O traits.
pub(crate) type Stream = FuturesIo<Async<TcpStream>>;

/// Every runtime-neutral client's tasks: engines, event callbacks, blocking-pool results.
static TASKS: Executor<'static> = Executor::new();

std::thread_local! {
    /// Set on the thread that runs [`TASKS`].
    static ON_TASK_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread is not the one that runs rnats' tasks: a publish from there
/// into an idle connection is written by its caller (`shared::Shared::caller_elsewhere`).
pub(crate) fn off_the_task_thread() -> bool {
    !ON_TASK_THREAD.with(std::cell::Cell::get)
}

/// Starts the thread that runs [`TASKS`], once per process. It parks in async-io's reactor
/// (or on its own parker while another thread's `block_on` drives the reactor) whenever no
/// task is ready, and lives as long as the process.
fn start() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("rnats-tasks".to_owned())
            .spawn(|| {
                ON_TASK_THREAD.with(|on| on.set(true));
                async_io::block_on(TASKS.run(std::future::pending::<()>()))
            });
        if let Err(error) = spawned {
            // Tasks then wait until a later spawn finds a thread; nothing else can be done.
            tracing::error!(%error, "could not start rnats' task thread");
        }
    });
}

/// Runs `task` on rnats' task thread.
pub(crate) fn spawn(task: impl Future<Output = ()> + Send + 'static) {
    start();
    TASKS.spawn(task).detach();
}

/// Runs `task` on rnats' task thread; the handle gives its output, and dropping the handle
/// cancels it.
pub(crate) fn spawn_task<T: Send + 'static>(
    task: impl Future<Output = T> + Send + 'static,
) -> async_executor::Task<T> {
    start();
    TASKS.spawn(task)
}

/// Opens a TCP connection to `addr` with `settings`, without blocking the caller's thread.
pub(crate) async fn connect(addr: SocketAddr, settings: SocketSettings) -> io::Result<Stream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if let Some(size) = settings.send_buffer {
        socket.set_send_buffer_size(size)?;
    }
    if let Some(size) = settings.recv_buffer {
        socket.set_recv_buffer_size(size)?;
    }
    if let Some(local) = settings.local {
        socket.bind(&local.into())?;
    }
    socket.set_nonblocking(true)?;
    socket.set_tcp_nodelay(true)?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    let stream = Async::new(TcpStream::from(socket))?;
    // Writable once the connection is made or has failed; the socket's error tells which.
    stream.writable().await?;
    if let Some(error) = stream.get_ref().take_error()? {
        return Err(error);
    }
    // Connected, or the peer address is missing: then the connect failed.
    stream.get_ref().peer_addr()?;
    Ok(FuturesIo::new(stream))
}
