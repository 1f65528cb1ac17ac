//! The smallest executor that runs one future to completion on the calling thread: the
//! shared options hold async callbacks (auth, JWT signing, event callbacks, the
//! reconnect-to-server choice), and the blocking client has no runtime to run them on.
//!
//! Written here rather than taken from a crate: the `futures-util` dependency has no
//! executor (that is `futures-executor`, which the workspace does not depend on), and the
//! whole job is a waker that unparks the waiting thread.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

/// Wakes the thread that polls the future.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` on this thread until it is done, parking between polls. A wake that comes
/// before the park is not lost: `unpark` leaves a token the next `park` consumes. A future
/// that needs a tokio runtime (its timers, its sockets) cannot run here.
pub(super) fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        // Spurious returns are fine: the future is only polled again.
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_future_woken_from_another_thread_completes() {
        let (tx, rx) = std::sync::mpsc::channel::<Waker>();
        let waker_thread = std::thread::spawn(move || {
            if let Ok(waker) = rx.recv() {
                waker.wake();
            }
        });
        let mut sent = false;
        let polls = block_on(std::future::poll_fn(|cx| {
            if sent {
                return Poll::Ready(2);
            }
            sent = true;
            tx.send(cx.waker().clone()).ok();
            Poll::Pending
        }));
        assert_eq!(polls, 2);
        waker_thread.join().ok();
    }
}
