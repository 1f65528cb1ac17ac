//! State shared between the client handles and the connection engine.
//!
//! Lock order: `session` before `writes`. No code path takes `session` while holding
//! `writes`. The write side and its rule are in `writer.rs`.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::BytesMut;
use futures_util::task::AtomicWaker;
use rnats_proto::ServerInfo;
use tokio::sync::{Notify, broadcast, mpsc, oneshot, watch};

use crate::caller_write::{self, WriteSide};
use crate::connection::LinkState;
use crate::error::{FlushCause, FlushError};
use crate::events::{ConnectionEvent, Event};
use crate::floor::server_pool::{Announcements, ServerPool};
pub(crate) use crate::floor::session::SidMap;
use crate::floor::session::{Pong, Session};
use crate::floor::sync::lock;
use crate::options::ConnectOptions;
use crate::request_table::Waiting;
use crate::rt::Rt;
use crate::statistics::Statistics;
use crate::sub_queue::SubQueue;
pub(crate) use crate::writer::FlushWaiter;
use crate::writer::{After, Step, Submit, Urgency, Writes};

/// Everything the client handles and the engine share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) options: ConnectOptions,
    /// The runtime the client runs on, picked at connect.
    pub(crate) rt: Rt,
    pub(crate) writes: Mutex<Writes>,
    /// The engine's waker: publishers wake it when they queue into an idle engine.
    pub(crate) engine_waker: AtomicWaker,
    /// Publishers waiting for room in the write queue.
    pub(crate) space: Notify,
    /// The connection's protocol state (link phase and timers, subscriptions, PING/PONG
    /// pairing, server info): one sans-IO [`Session`].
    pub(crate) session: Mutex<ClientSession>,
    pub(crate) requests: Mutex<Waiting>,
    /// A request moved the [`Waiting`] watch earlier since the engine last looked; the
    /// engine re-arms its timer there.
    pub(crate) request_watch_moved: AtomicBool,
    /// How many times a disconnect failed every waiting request
    /// (`fail_requests_on_disconnect`); changed only under the `requests` lock. A request
    /// whose reply sender is dropped while this is past the count it was registered at was
    /// failed by a disconnect, whatever the state is by the time it looks (issue 9, bug 8).
    pub(crate) requests_failed_by_disconnect: AtomicU64,
    pub(crate) max_payload: AtomicUsize,
    pub(crate) headers_supported: AtomicBool,
    state: AtomicU8,
    pub(crate) close_requested: AtomicBool,
    /// `Client::force_reconnect` or lame duck mode asked the engine to move on.
    pub(crate) reconnect_requested: AtomicBool,
    pub(crate) events: broadcast::Sender<ConnectionEvent>,
    /// The `event_callback`'s queue, in async-nats' shape (see [`Shared::emit_to_callback`]);
    /// `None` without a callback.
    callback_events: Option<mpsc::Sender<Event>>,
    pub(crate) statistics: Arc<Statistics>,
    pub(crate) next_sid: AtomicU64,
    pub(crate) next_token: AtomicU64,
    /// `<inbox prefix>.<nuid>.`: request replies are this plus a counter.
    pub(crate) reply_prefix: String,
    /// The servers to (re)connect to; locked briefly, never across an await.
    pub(crate) pool: Mutex<ServerPool>,
    /// INFO updates whose servers are not merged into `pool` yet (the engine hands them
    /// off, see [`Announcements`]).
    pub(crate) announcements: Mutex<Announcements>,
    /// Becomes true once the engine has stopped and cleaned up.
    pub(crate) done: watch::Sender<bool>,
    /// A caller wrote to the socket directly since the engine last looked ([`Writer`]): lets
    /// the read path skip the write lock unless there is something to reset.
    pub(crate) directly_written: AtomicBool,
    /// Keepalive PINGs sent, over every link (for tests and diagnostics).
    pub(crate) keepalive_pings: AtomicU64,
    /// Passes the engine made through its loop (`Engine::poll_drive`), for tests.
    #[cfg(test)]
    pub(crate) engine_passes: AtomicU64,
    /// Turns a caller outside the workers took as the writer (`caller_write.rs`; for tests
    /// and diagnostics).
    pub(crate) caller_turns: AtomicU64,
    /// How many times a caller made the writer `Woken` and woke the engine; changed only
    /// under the `writes` lock. Lets the engine tell, without that lock, whether a caller
    /// holding it may have left frames for it (`Engine::take_queued`).
    pub(crate) kicks: AtomicU64,
}

/// The tokio client's session: subscriptions deliver into [`Sink`]s, flushes wait on
/// channels.
pub(crate) type ClientSession = Session<Sink, FlushWaiter>;

/// One subscription as the engine sees it.
pub(crate) type SubEntry = crate::floor::session::SubEntry<Sink>;

/// Where a subscription's messages go.
#[derive(Debug)]
pub(crate) enum Sink {
    /// A [`Subscriber`](crate::Subscriber)'s queue.
    Queue(Arc<SubQueue>),
    /// The request multiplexer's wildcard inbox.
    Requests,
}

impl Shared {
    /// The state of a new client; `callback_events` is where the `event_callback`'s events
    /// go, if it has one.
    pub(crate) fn new(
        rt: Rt,
        options: ConnectOptions,
        info: ServerInfo,
        pool: ServerPool,
        callback_events: Option<mpsc::Sender<Event>>,
    ) -> Shared {
        let reply_prefix = format!("{}.{}.", options.inbox_prefix, crate::id::next());
        let write_limit = options.write_buffer_limit;
        let (events, _) = broadcast::channel(crate::events::LISTENER_CAPACITY);
        let (done, _) = watch::channel(false);
        let session = ClientSession::new(
            options.ping_interval,
            options.max_pings_outstanding,
            // A planned move waits this long for the old server to take what it accepted.
            options.connection_timeout,
        );
        Shared {
            options,
            rt,
            writes: Mutex::new(Writes::new(write_limit)),
            engine_waker: AtomicWaker::new(),
            space: Notify::new(),
            session: Mutex::new(session),
            requests: Mutex::new(Waiting::default()),
            request_watch_moved: AtomicBool::new(false),
            requests_failed_by_disconnect: AtomicU64::new(0),
            max_payload: AtomicUsize::new(info.max_payload),
            headers_supported: AtomicBool::new(info.headers),
            state: AtomicU8::new(LinkState::Connected as u8),
            close_requested: AtomicBool::new(false),
            reconnect_requested: AtomicBool::new(false),
            events,
            callback_events,
            statistics: Arc::default(),
            next_sid: AtomicU64::new(1),
            next_token: AtomicU64::new(1),
            reply_prefix,
            pool: Mutex::new(pool),
            announcements: Mutex::default(),
            done,
            directly_written: AtomicBool::new(false),
            keepalive_pings: AtomicU64::new(0),
            #[cfg(test)]
            engine_passes: AtomicU64::new(0),
            caller_turns: AtomicU64::new(0),
            kicks: AtomicU64::new(0),
        }
    }

    #[inline]
    pub(crate) fn writes(&self) -> MutexGuard<'_, Writes> {
        lock(&self.writes)
    }

    pub(crate) fn session(&self) -> MutexGuard<'_, ClientSession> {
        lock(&self.session)
    }

    pub(crate) fn requests(&self) -> MutexGuard<'_, Waiting> {
        lock(&self.requests)
    }

    /// Gives request `token` its deadline, and wakes the engine when its timer must be
    /// re-armed earlier for it.
    pub(crate) fn watch_request(&self, token: u64, at: std::time::Instant) {
        if self.requests().set_deadline(token, at) {
            self.request_watch_moved.store(true, Ordering::Release);
            self.engine_waker.wake();
        }
    }

    pub(crate) fn state(&self) -> LinkState {
        LinkState::from_u8(self.state.load(Ordering::Acquire))
    }

    pub(crate) fn set_state(&self, state: LinkState) {
        self.state.store(state as u8, Ordering::Release);
    }

    /// Reports `event` to every [`Events`](crate::Events) listener, and to the event
    /// callback as [`ConnectionEvent::to_event`] maps it.
    pub(crate) fn emit(&self, event: ConnectionEvent) {
        if let Some(event) = event.callback_event() {
            self.emit_to_callback(event);
        }
        // No listener is not an error.
        let _ = self.events.send(event);
    }

    /// Reports `event` to the event callback only: what async-nats reports and rnats'
    /// listeners get in their own shape, or not at all (a slow consumer's every dropped
    /// message, where listeners get one event per episode). As in async-nats, the event is
    /// dropped when the callback is that far behind.
    pub(crate) fn emit_to_callback(&self, event: Event) {
        if let Some(callback) = &self.callback_events
            && let Err(mpsc::error::TrySendError::Full(event)) = callback.try_send(event)
        {
            tracing::debug!(%event, "event callback too slow; event dropped");
        }
    }

    /// Queues a control frame (SUB, UNSUB, PONG) regardless of the write limit: these are
    /// small and must not wait behind publishes. Returns false once the connection is closed.
    pub(crate) fn push_control(&self, encode: impl FnOnce(&mut BytesMut)) -> bool {
        self.push_control_live(encode).is_some()
    }

    /// [`Shared::push_control`], telling whether the frame went to a live link
    /// (`Some(true)`) or was not queued because the link is down or being left
    /// (`Some(false)`: the reconnect replays the subscription table instead); `None` once
    /// closed.
    pub(crate) fn push_control_live(&self, encode: impl FnOnce(&mut BytesMut)) -> Option<bool> {
        self.push_control_lingering(encode, true)
    }

    /// Answers a server PING. Never held back by linger: a server whose PINGs go unanswered
    /// for `ping_max` of its ping intervals counts the connection stale and closes it.
    /// One PONG waits to leave at most (`WriteQueue::push_pong`): a server that sends PINGs
    /// while it reads nothing does not grow the queue.
    pub(crate) fn push_pong(&self) {
        let mut writes = self.writes();
        if !writes.queue.is_live() || writes.queue.is_closed() || !writes.queue.push_pong() {
            // No link to answer on, or the PONG already queued answers this PING too.
            return;
        }
        if self.options.linger.is_some() {
            writes.urgent = true;
        }
        self.submit(writes, Urgency::Normal);
    }

    /// [`Shared::push_control_live`]; a frame that may not `linger` marks the queue urgent
    /// when the linger policy is on.
    fn push_control_lingering(
        &self,
        encode: impl FnOnce(&mut BytesMut),
        linger: bool,
    ) -> Option<bool> {
        let mut writes = self.writes();
        if writes.queue.is_closed() {
            return None;
        }
        if !writes.queue.is_live() {
            // The reconnect restores subscriptions from the table; nothing to send now.
            return Some(false);
        }
        writes.queue.push_control(encode);
        if !linger && self.options.linger.is_some() {
            writes.urgent = true;
        }
        self.submit(writes, Urgency::Normal);
        Some(true)
    }

    /// Waits until the server has processed everything queued before the call: a PING and
    /// its PONG (`Client::flush`).
    pub(crate) async fn flush(&self) -> Result<(), FlushError> {
        let pong = self
            .push_ping()
            .ok_or_else(|| FlushError::from(FlushCause::NotSent))?;
        match pong.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(cause)) => Err(cause.into()),
            Err(_) => Err(FlushCause::Closed.into()),
        }
    }

    /// Queues a PING whose PONG resolves the returned receiver.
    pub(crate) fn push_ping(&self) -> Option<oneshot::Receiver<Result<(), FlushCause>>> {
        let (tx, rx) = oneshot::channel();
        let mut writes = self.writes();
        if !writes.queue.is_live() && !writes.queue.is_closed() {
            // Deferred in the session (the lock order: `session` first); the reconnect may
            // have come meanwhile, so look again.
            drop(writes);
            let mut session = self.session();
            writes = self.writes();
            if !writes.queue.is_live() && !writes.queue.is_closed() {
                // Resolved by the one PING sent after the reconnect, behind the kept
                // publishes.
                session.pings.defer(tx);
                return Some(rx);
            }
        }
        if writes.queue.is_closed() {
            return None;
        }
        let seq = writes.push_ping();
        writes.new_flushes.push((seq, tx));
        self.submit(writes, Urgency::Flush);
        Some(rx)
    }

    /// Counts a PONG the link sent: what it answers (see `Pings::on_pong`), for the engine
    /// to resolve outside the locks.
    pub(crate) fn count_pong(&self) -> Pong<FlushWaiter> {
        let mut session = self.session();
        let mut writes = self.writes();
        // The flushes queued since the last PONG first: this one may be theirs. The PINGs
        // queued so far with them, under both locks: a PONG past the last answers nothing.
        writes.hand_flushes_to(&mut session.pings);
        let queued = writes.queue.pings_queued();
        drop(writes);
        session.handle_pong(queued)
    }

    /// Gets what was just queued on its way, then releases the lock: the write side's rule
    /// ([`Writes::submit`]) writes it directly or says to wake the engine.
    pub(crate) fn submit(&self, mut writes: MutexGuard<'_, Writes>, urgency: Urgency) {
        let step = match self.options.linger {
            // Publishers wait at the write limit: the batch must leave by then, not at the
            // timer.
            Some(linger) if urgency == Urgency::Normal => {
                let max = linger.max_bytes.min(self.options.write_buffer_limit);
                match writes.submit_lingering(max, || self.rt.now()) {
                    true => Step::Wake,
                    false => Step::Done,
                }
            }
            // A flush or a request is never held back, lingering or not: written at once
            // with what lingers before it when the connection is idle, by its caller.
            linger => {
                let step = writes.submit(
                    urgency,
                    &Submit {
                        statistics: &self.statistics,
                        directly_written: &self.directly_written,
                        kicks: &self.kicks,
                        outside_workers: self.caller_elsewhere(),
                    },
                );
                if linger.is_some() {
                    writes.urgent_submitted();
                }
                step
            }
        };
        match step {
            Step::Done => {}
            Step::Wake => {
                drop(writes);
                self.engine_waker.wake();
            }
            Step::WriteAsCaller(after) => {
                // The frame is queued already, so however the turn ends this caller is done.
                // A publish below the limit needs no room, so it does not wait for any: a
                // full socket pauses the run at once, and the publishes after it queue up to
                // the limit (`Writes::bulk_paused`), where a turn waits.
                let wait = match after {
                    After::Bulk => Duration::ZERO,
                    After::Direct => caller_write::WAIT,
                };
                let _ = caller_write::write_as_caller(&self.write_side(), writes, after, wait);
            }
        }
    }

    /// What tells a caller from a thread the engine does not run on, whose publish into an
    /// idle connection is written directly rather than paying a cross-thread wake-up of the
    /// engine (`Writes::submit`): `block_on`'s thread on tokio's multi-threaded runtime, any
    /// thread but rnats' task thread on the runtime-neutral backend.
    fn caller_elsewhere(&self) -> fn() -> bool {
        match self.rt {
            Rt::Tokio => outside_workers,
            #[cfg(feature = "runtime-neutral")]
            Rt::Neutral => crate::rt::off_the_task_thread,
        }
    }

    /// What a caller that takes the writer role uses (`caller_write.rs`).
    pub(crate) fn write_side(&self) -> WriteSide<'_> {
        WriteSide {
            writes: &self.writes,
            statistics: &self.statistics,
            kicks: &self.kicks,
            engine_waker: &self.engine_waker,
            space: &self.space,
            directly_written: &self.directly_written,
            turns: &self.caller_turns,
        }
    }

    /// Asks the engine to stop.
    pub(crate) fn request_close(&self) {
        self.close_requested.store(true, Ordering::Release);
        self.engine_waker.wake();
    }

    /// Waits until the engine has stopped and cleaned up.
    pub(crate) async fn wait_done(&self) {
        let mut done = self.done.subscribe();
        // An error means the sender is gone, which only happens once the engine is gone too.
        let _ = done.wait_for(|done| *done).await;
    }
}

/// What every clone of a `Client` (and every `Subscriber`, which keeps the connection open as
/// async-nats' does) holds: when the last one is dropped the client closes.
pub(crate) struct ClientHandle {
    shared: Arc<Shared>,
}

impl ClientHandle {
    pub(crate) fn new(shared: Arc<Shared>) -> ClientHandle {
        ClientHandle { shared }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl Drop for ClientHandle {
    fn drop(&mut self) {
        self.shared.request_close();
    }
}

/// Whether the caller runs outside the worker threads of the multi-threaded runtime it is
/// in: the future given to `Runtime::block_on` (the body of `#[tokio::main]`) is polled by
/// the thread that called it, which is not a worker and is in no task. There, waking the
/// engine's task crosses threads (a futex wake-up and a worker unparked, with a second
/// worker often unparked to search), so such a caller writes to an idle socket itself.
/// Tasks (`try_id` is `Some`, blocking ones included) and the current-thread runtime (where
/// the engine runs on the caller's thread anyway, and a publish left to it shares its write
/// with the flush behind it) keep the engine's batching.
pub(crate) fn outside_workers() -> bool {
    tokio::task::try_id().is_none()
        && tokio::runtime::Handle::try_current().is_ok_and(|handle| {
            handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        })
}

#[cfg(test)]
mod tests {
    use super::outside_workers;
    use tokio::runtime::Builder;

    /// What tells `block_on`'s future from a task: on the multi-threaded runtime only the
    /// former is outside the workers; the current-thread runtime and no runtime are not
    /// counted (there a publish stays with the engine).
    #[test]
    fn only_block_on_on_the_multi_threaded_runtime_is_outside_the_workers() {
        assert!(!outside_workers(), "no runtime");
        let multi = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        assert!(multi.block_on(async { outside_workers() }));
        let in_task = multi.block_on(async { tokio::spawn(async { outside_workers() }).await });
        assert_eq!(in_task.ok(), Some(false));
        // A blocking task has an id too: counted as a task (the publish stays with the
        // engine), which is correct if not the cheapest.
        let blocking = multi.block_on(async { tokio::task::spawn_blocking(outside_workers).await });
        assert_eq!(blocking.ok(), Some(false));
        let current = Builder::new_current_thread()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        assert!(!current.block_on(async { outside_workers() }));
    }
}
