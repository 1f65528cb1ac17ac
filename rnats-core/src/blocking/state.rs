//! What the threads of a blocking client share: the read side under the reader role, and
//! behind `core` the protocol state, one [`Session`] as the tokio engine holds it (the
//! link's phase and timers, the subscriptions with their queues, the PING/PONG pairing,
//! the server's INFO), with the request slots and the driver's own bookkeeping (the
//! published `LinkState`, the socket, who holds the reader role).
//!
//! PINGs are paired with PONGs by number: every PING this client queues (a flush's, a
//! keepalive, a planned move's last) is numbered by the write buffer where it is queued,
//! so numbers follow wire order, and the n-th PONG on a link, counted by `session.pings`,
//! answers its n-th PING. A flush registers no waiter: it keeps its `PingId` and looks it up
//! (`Pings::outcome`) whenever it wakes, hence `Session<SubState, Infallible>`. The
//! session's link number (`Pings::link`) also tells the bytes and writes of a gone link
//! from the live one's.
//!
//! Lock order: `read` (only the reader-role holder takes it), then `core`, then `writes`.
//! No lock is held across a blocking socket call except `read` by the reader and the
//! writer's socket handle (see `writer.rs`).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use rnats_proto::{MsgFrame, Parser, ServerError, ServerInfo, ServerOp};

use super::conn::Conn;
use super::events::EventHub;
use super::write_side::{Host, WriteSide};
use super::writer::Urgency;
use crate::connection::LinkState;
use crate::error::{RequestCause, SubscriberError};
use crate::events::ConnectionEvent;
use crate::floor::server_pool::{Announcements, ServerPool};
use crate::floor::session::{self, Session};
use crate::floor::sync::lock;
use crate::message::Message;
use crate::options::ConnectOptions;
use crate::otel::{RequestClock, RequestDurations};
use crate::statistics::Statistics;

/// The longest one read blocks: a reader whose wait has no deadline still comes back this
/// often, and hands the role over if others want it.
pub(super) const READ_SLICE: Duration = Duration::from_millis(100);
/// How long a publisher reading behind its batch waits for bytes
/// ([`Inner::read_behind_publishes`]); the socket's timeout granularity, about a
/// millisecond.
const DRAIN_WAIT: Duration = Duration::from_millis(1);
/// The sid of the one subscription all requests' replies come in on (ADR: requests
/// multiplex over one inbox).
pub(super) const REQUEST_SID: u64 = 1;

/// Everything the threads of one client share.
pub(super) struct Inner {
    pub(super) options: ConnectOptions,
    core: Mutex<Core>,
    /// Signalled when a result may be in (a message, a reply, a PONG), the reader role is
    /// free, or the link changed; only when somebody waits (`Core::waiters`).
    changed: Condvar,
    /// Wakes the background thread (a lost link, a lame duck INFO, close).
    pub(super) background: Condvar,
    /// The write side: the write queue and who writes it (`write_side.rs`).
    pub(super) write: WriteSide,
    /// The read side: the socket's read buffer and parser, for the reader-role holder.
    pub(super) read: Mutex<ReadSide>,
    pub(super) statistics: Arc<Statistics>,
    pub(super) pool: Mutex<ServerPool>,
    /// INFO updates whose servers the background thread has yet to merge into `pool`: the
    /// thread that reads an INFO may be waiting for a reply behind it.
    pub(super) announcements: Mutex<Announcements>,
    pub(super) max_payload: AtomicUsize,
    pub(super) headers_supported: AtomicBool,
    next_sid: AtomicU64,
    next_token: AtomicU64,
    /// `<inbox prefix>.<nuid>.`: a request's reply subject is this and its token.
    pub(super) request_prefix: String,
    /// The listeners of connection events (`Client::events`, the event callback).
    pub(super) events: EventHub,
}

/// State the waiting threads look at, behind `Inner::core`.
pub(super) struct Core {
    pub(super) state: LinkState,
    /// A thread holds the reader role: it alone reads and parses the socket.
    pub(super) reader_busy: bool,
    /// Threads blocked on `changed`.
    waiters: usize,
    /// When a user thread last gave up the reader role; the background thread reads only
    /// once nobody has for a while, so it does not steal the socket between requests.
    last_user_read: Instant,
    /// A subscription was made, or messages came that no thread was waiting for (the
    /// background thread read them), and no read behind a publisher's batch has found the
    /// socket empty since: a thread publishing in bulk then reads behind its batches
    /// ([`Inner::read_behind_publishes`]).
    inbound_for_nobody: bool,
    /// Bumped when requests are failed at a disconnect (`fail_requests_on_disconnect`).
    pub(super) lost_requests: u64,
    /// Bumped at each INFO that tells of a changed cluster (a `ClusterChanged` event), for
    /// the waiters of `Subscriber::next_or_news_watching`.
    pub(super) cluster_changes: u64,
    pub(super) conn: Option<Arc<Conn>>,
    requests: HashMap<u64, Option<Message>>,
    /// The request-duration histograms of the client's metrics registrations
    /// (`otel::metrics`), found under the lock a request takes anyway. Without the
    /// `opentelemetry` feature, an empty type.
    pub(super) durations: RequestDurations,
    /// The protocol state: the link's phase and timers, the subscriptions, the PING/PONG
    /// pairing, the server's INFO. Flushes look their PING up (`Pings::outcome`) rather
    /// than register, so no waiter type.
    pub(super) session: Session<SubState, Infallible>,
}

/// Where one subscription's messages wait: the reader fills it and its `Subscriber` empties
/// it. What the server knows of the subscription (subject, group, counts) is its
/// [`SubEntry`](crate::floor::session::SubEntry) in the table. Messages wait whole, as the
/// tokio engine's do (`sub_queue.rs`): its `Subscriber` takes them all at once and cuts each
/// into its [`Message`] as it hands it out.
#[derive(Default)]
pub(super) struct SubState {
    messages: VecDeque<MsgFrame>,
    bytes: usize,
    /// Unsubscribed (or drained) but still taking what the server sent before the UNSUB.
    pub(super) draining: bool,
    /// No more messages will come; the queue may still hold some.
    pub(super) ended: bool,
    pub(super) dropped: u64,
    slow: bool,
    pub(super) error: Option<SubscriberError>,
}

impl SubState {
    /// Moves every queued message, whole, into `local` (empty), freeing the room they took:
    /// its `Subscriber` hands them out one by one without the state lock or a look at the
    /// clock, cutting each as it goes, as the tokio client's subscriber takes its queue.
    /// Returns whether there was any.
    pub(super) fn take_all(&mut self, local: &mut VecDeque<MsgFrame>) -> bool {
        if self.messages.is_empty() {
            return false;
        }
        debug_assert!(local.is_empty(), "taken while messages were left");
        std::mem::swap(&mut self.messages, local);
        self.bytes = 0;
        true
    }

    /// The messages queued and their bytes.
    pub(super) fn queued(&self) -> (usize, usize) {
        (self.messages.len(), self.bytes)
    }

    /// Whether the subscription is live on the server (replayed after a reconnect).
    pub(super) fn active(&self) -> bool {
        !self.ended && !self.draining
    }
}

/// The socket's read buffer and parser: only the reader-role holder touches them.
pub(super) struct ReadSide {
    buf: BytesMut,
    parser: Parser,
    scratch: Vec<u8>,
    /// The read timeout set on the socket, so it is set again only when it changes.
    timeout: Option<Duration>,
}

impl ReadSide {
    /// Starts on a new link with what its handshake read past its end (`buf`, `parser`)
    /// and the read timeout set on its socket.
    pub(super) fn start(&mut self, buf: BytesMut, parser: Parser, timeout: Option<Duration>) {
        self.buf = buf;
        self.parser = parser;
        self.timeout = timeout;
    }
}

/// What one read gave: its messages, whole, and the few other ops, each with the number of
/// messages that came before it (its place in the stream).
#[derive(Default)]
struct Batch {
    frames: Vec<MsgFrame>,
    others: Vec<(usize, ServerOp)>,
    /// The link failed (end of stream, read error, bad bytes).
    error: Option<String>,
}

/// Who is reading: a user thread, or the background thread covering for nobody.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    User,
    Background,
}

impl Core {
    /// A subscription was made: messages may come for it that nobody waits for, so a
    /// publisher writing its own batches looks for them ([`Inner::read_behind_publishes`])
    /// until a look finds none.
    pub(super) fn expect_inbound(&mut self) {
        self.inbound_for_nobody = true;
    }

    /// When a user thread last gave up the reader role.
    pub(super) fn last_user_read(&self) -> Instant {
        self.last_user_read
    }
}

impl Inner {
    pub(super) fn new(options: ConnectOptions, pool: ServerPool) -> Inner {
        let session = Session::new(
            options.ping_interval,
            options.max_pings_outstanding,
            options.connection_timeout,
        );
        let request_prefix = format!("{}.{}.", options.inbox_prefix, crate::id::next());
        let read_capacity = options.read_buffer_capacity;
        let statistics = Arc::new(Statistics::default());
        Inner {
            core: Mutex::new(Core {
                state: LinkState::Pending,
                reader_busy: false,
                waiters: 0,
                last_user_read: Instant::now(),
                inbound_for_nobody: false,
                lost_requests: 0,
                cluster_changes: 0,
                conn: None,
                requests: HashMap::new(),
                durations: Default::default(),
                session,
            }),
            changed: Condvar::new(),
            background: Condvar::new(),
            write: WriteSide::new(&options, Arc::clone(&statistics)),
            read: Mutex::new(ReadSide {
                buf: BytesMut::new(),
                parser: Parser::new(Default::default()),
                scratch: vec![0; read_capacity],
                timeout: None,
            }),
            statistics,
            pool: Mutex::new(pool),
            announcements: Mutex::default(),
            // Until the first INFO says otherwise: the server default, as in async-nats.
            max_payload: AtomicUsize::new(crate::floor::handshake::DEFAULT_MAX_PAYLOAD),
            headers_supported: AtomicBool::new(true),
            next_sid: AtomicU64::new(REQUEST_SID + 1),
            next_token: AtomicU64::new(1),
            request_prefix,
            events: EventHub::new(),
            options,
        }
    }

    pub(super) fn core(&self) -> MutexGuard<'_, Core> {
        lock(&self.core)
    }

    pub(super) fn next_sid(&self) -> u64 {
        self.next_sid.fetch_add(1, Ordering::Relaxed)
    }

    pub(super) fn next_token(&self) -> u64 {
        self.next_token.fetch_add(1, Ordering::Relaxed)
    }

    /// Waits until `ready` gives a value or `deadline` passes (`None`), reading the socket on
    /// this thread whenever no other thread holds the reader role.
    pub(super) fn wait_for<T>(
        &self,
        deadline: Option<Instant>,
        mut ready: impl FnMut(&mut Core) -> Option<T>,
    ) -> Option<T> {
        let mut core = self.core();
        loop {
            if let Some(value) = ready(&mut core) {
                return Some(value);
            }
            let left = match deadline {
                None => None,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    Some(left)
                }
            };
            if core.state == LinkState::Connected && !core.reader_busy {
                let timeout = left.map_or(READ_SLICE, |left| left.min(READ_SLICE));
                core = self.read_as(core, Reader::User, timeout);
                continue;
            }
            core.waiters += 1;
            core = match left {
                None => self
                    .changed
                    .wait(core)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(left) => {
                    self.changed
                        .wait_timeout(core, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
            core.waiters -= 1;
        }
    }

    /// Whether the background thread should read now: the role is free, nobody waits for
    /// it, and no user thread has read for `idle`.
    pub(super) fn background_may_read(core: &Core, idle: Duration) -> bool {
        Inner::role_unwanted(core) && core.last_user_read.elapsed() >= idle
    }

    /// Sets the socket's read timeout back to [`READ_SLICE`] if a reader left a shorter one
    /// (near its deadline), so that waiting for bytes without the role does not spin.
    /// Only while the role is free: then no thread holds `read` (the lock order's
    /// exception, as in [`Inner::install`]).
    pub(super) fn restore_read_timeout(&self, core: &Core, conn: &Conn) {
        if core.reader_busy {
            return;
        }
        let mut read = lock(&self.read);
        if read.timeout != Some(READ_SLICE) && conn.set_read_timeout(READ_SLICE).is_ok() {
            read.timeout = Some(READ_SLICE);
        }
    }

    /// Whether the reader role is free and no user thread waits for it.
    pub(super) fn role_unwanted(core: &Core) -> bool {
        core.state == LinkState::Connected && !core.reader_busy && core.waiters == 0
    }

    /// Called by a publisher that just wrote a batch itself: while messages come that
    /// nobody waits for (its own subscriptions', most likely), it reads them too, once per
    /// batch, before it publishes more. The background thread alone may fall behind a
    /// publishing loop (both want the CPU), and what it has not read piles up in the
    /// server, which cuts the connection as a slow consumer past its `max_pending` (64 MB
    /// by default); read here, the publisher slows to what its subscriptions take in, as
    /// the async client's engine does by reading and writing in turn. A read that finds
    /// nothing within [`DRAIN_WAIT`] ends that until the background thread reads messages
    /// for nobody again, so a publisher without such traffic never waits here.
    pub(super) fn read_behind_publishes(&self) {
        let core = self.core();
        if !core.inbound_for_nobody || !Inner::role_unwanted(&core) {
            return;
        }
        let reads = self.write.reads();
        // Read as the background thread would: not a user read, which would keep the
        // background thread off the socket for a while.
        let mut core = self.read_as(core, Reader::Background, DRAIN_WAIT);
        if self.write.reads() == reads {
            core.inbound_for_nobody = false;
        }
    }

    /// Takes the reader role, reads once (up to `timeout`), dispatches what came, and hands
    /// the role back, waking whoever waits.
    pub(super) fn read_as<'a>(
        &'a self,
        mut core: MutexGuard<'a, Core>,
        reader: Reader,
        timeout: Duration,
    ) -> MutexGuard<'a, Core> {
        let Some(conn) = core.conn.clone() else {
            return core;
        };
        core.reader_busy = true;
        let generation = core.session.pings.link();
        drop(core);
        let batch = self.read_batch(&conn, timeout);
        let mut core = self.core();
        core.reader_busy = false;
        if reader == Reader::User {
            core.last_user_read = Instant::now();
        }
        let (pong, messages) = self.dispatch(&mut core, generation, batch);
        if reader == Reader::Background && messages > 0 {
            core.inbound_for_nobody = true;
        }
        self.notify_changed(&core);
        if pong {
            drop(core);
            // The background thread never writes (see `Urgency::Soon`).
            let urgency = match reader {
                Reader::User => Urgency::Now,
                Reader::Background => Urgency::Soon,
            };
            self.write.send_pong(self, urgency);
            core = self.core();
        }
        core
    }

    /// Wakes the threads waiting on `changed`, if there are any.
    pub(super) fn notify_changed(&self, core: &Core) {
        if core.waiters > 0 {
            self.changed.notify_all();
        }
    }

    /// Waits on `changed` (for the reader role to be free, say).
    pub(super) fn wait_changed<'a>(
        &'a self,
        mut core: MutexGuard<'a, Core>,
        timeout: Duration,
    ) -> MutexGuard<'a, Core> {
        core.waiters += 1;
        let mut core = self
            .changed
            .wait_timeout(core, timeout)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
        core.waiters -= 1;
        core
    }

    fn read_batch(&self, conn: &Conn, timeout: Duration) -> Batch {
        let mut read = lock(&self.read);
        let read = &mut *read;
        let mut batch = Batch::default();
        // Whole ops left from the handshake or the last read go first, without a read.
        parse(read, &mut batch);
        if !batch.frames.is_empty() || !batch.others.is_empty() || batch.error.is_some() {
            return batch;
        }
        if read.timeout != Some(timeout) {
            if let Err(e) = conn.set_read_timeout(timeout) {
                batch.error = Some(format!("cannot set the read timeout: {e}"));
                return batch;
            }
            read.timeout = Some(timeout);
        }
        let capacity = self.options.read_buffer_capacity;
        if read.buf.capacity() - read.buf.len() < capacity / 4 {
            read.buf.reserve(capacity);
        }
        match conn.read_into(&mut read.buf, &mut read.scratch) {
            Ok(Some(n)) => {
                // Every protocol byte counts, as in async-nats (plaintext under TLS).
                Statistics::add(&self.statistics.in_bytes, n as u64);
                self.write.note_read();
                parse(read, &mut batch);
            }
            Ok(None) => batch.error = Some("connection closed by the server".to_owned()),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => batch.error = Some(format!("read failed: {e}")),
        }
        batch
    }

    /// Hands what one read parsed to its waiters. Returns whether the server PINGed us,
    /// and the messages delivered.
    fn dispatch(&self, core: &mut Core, generation: u64, mut batch: Batch) -> (bool, u64) {
        if core.session.pings.link() != generation || core.state != LinkState::Connected {
            // Bytes of a link that is gone (or a client closed meanwhile).
            return (false, 0);
        }
        let mut pinged = false;
        let messages = batch.frames.len() as u64;
        let mut frames = batch.frames.into_iter();
        let mut delivered = 0;
        for (at, op) in batch.others {
            // The messages before this op first, in the order they came.
            for frame in frames.by_ref().take(at - delivered) {
                self.deliver(core, frame);
            }
            delivered = at;
            match op {
                // Decoded as frames, never here.
                ServerOp::Msg(_) => {}
                ServerOp::Ping => pinged = true,
                ServerOp::Pong => {
                    // The flushes look their PINGs up (`Pings::outcome`): no waiters come
                    // back. The count is this link's: every link transition of the queue
                    // holds `core` too.
                    let queued = self.write.pings_queued();
                    if let session::Pong::Unasked = core.session.handle_pong(queued) {
                        // As in the tokio engine: logged, never fatal.
                        tracing::debug!("ignored a PONG that answers no PING");
                    }
                    if core.session.pings.move_answered() {
                        // The old link of a planned move has answered everything.
                        self.background.notify_all();
                    }
                }
                ServerOp::Info(info) => self.handle_info(core, *info),
                ServerOp::Ok => {}
                ServerOp::Err(error) => {
                    if let Some(reason) = self.handle_server_error(core, error) {
                        // The server closes the link after these; do not wait for it to.
                        batch.error.get_or_insert(reason);
                    }
                }
            }
        }
        for frame in frames {
            self.deliver(core, frame);
        }
        Statistics::add(&self.statistics.in_messages, messages);
        if let Some(reason) = batch.error {
            self.fail_link_locked(core, generation, &reason);
        }
        (pinged, messages)
    }

    fn deliver(&self, core: &mut Core, frame: MsgFrame) {
        if frame.sid() == REQUEST_SID {
            let msg = frame.into_msg();
            let token = session::reply_token(&self.request_prefix, msg.subject.as_str());
            if let Some(slot) = token.and_then(|token| core.requests.get_mut(&token)) {
                // The first reply wins; later ones are for nobody.
                if slot.is_none() {
                    *slot = Some(Message::from(msg));
                }
            }
            return;
        }
        let sid = frame.sid();
        let Some((sub, last)) = core.session.handle_msg(sid) else {
            return;
        };
        if sub.ended {
            return;
        }
        let mut new_episode = None;
        // An empty queue takes one message however large, as the tokio client's does: a
        // message over the byte limit is not lost to every subscription with that limit.
        let full = sub.messages.len() >= self.options.subscription_capacity
            || (sub.bytes + frame.length() > self.options.subscription_capacity_bytes
                && !sub.messages.is_empty());
        if full {
            // The reader never blocks on a slow consumer (it may be that consumer): the
            // message is dropped, counted, and the episode reported once to listeners; the
            // event callback hears of every dropped message, as in async-nats.
            sub.dropped += 1;
            Statistics::add(&self.statistics.dropped_messages, 1);
            self.events
                .emit_to_callback(crate::events::Event::SlowConsumer(sid));
            if !sub.slow {
                sub.slow = true;
                tracing::warn!(sid, subject = %frame.subject(), "slow consumer: dropping messages");
                new_episode = Some(sub.dropped);
            }
        } else {
            sub.slow = false;
            sub.bytes += frame.length();
            sub.messages.push_back(frame);
        }
        if last {
            // The server stops at the same count.
            sub.ended = true;
        }
        if let Some(dropped) = new_episode
            && let Some(entry) = core.session.subs.get(sid)
        {
            self.events.emit(ConnectionEvent::SlowConsumer {
                sid,
                subject: entry.subject.clone(),
                dropped,
            });
        }
    }

    /// Takes in an INFO that came on the live link: limits, discovered servers, lame duck
    /// mode.
    fn handle_info(&self, core: &mut Core, info: ServerInfo) {
        self.store_limits(&info);
        let info = Arc::new(info);
        // Taking in thousands of announced servers for a listener is work per URL, and this
        // thread may be waiting for a reply behind the INFO: the background thread does it
        // (issue 22). Without a listener it is only keeping the newest INFO, done here.
        if !self.options.reconnect.ignore_discovered_servers
            && lock(&self.announcements).offer(Arc::clone(&info))
            && !self.take_announced_here()
        {
            self.background.notify_all();
        }
        let news =
            core.session
                .handle_info(Instant::now(), info, crate::floor::backoff::lame_duck_delay);
        if news.cluster_changed {
            // Under the state lock; the reader wakes the waiters once the batch is in.
            core.cluster_changes += 1;
            self.events.emit(ConnectionEvent::ClusterChanged);
        }
        if news.lame_duck {
            tracing::info!("server entered lame duck mode; moving");
            self.events.emit(ConnectionEvent::LameDuckMode);
            self.background.notify_all();
        }
    }

    /// What an INFO (the handshake's or a later one) means beyond the session: the
    /// limits publishers check, and the servers it makes known.
    pub(super) fn apply_limits(&self, info: &Arc<ServerInfo>) {
        self.store_limits(info);
        if !self.options.reconnect.ignore_discovered_servers {
            self.merge_discovered(Arc::clone(info));
        }
    }

    /// The limits an INFO sets, which publishers check.
    fn store_limits(&self, info: &ServerInfo) {
        self.max_payload.store(info.max_payload, Ordering::Relaxed);
        self.headers_supported
            .store(info.headers, Ordering::Relaxed);
    }

    /// Takes in a `-ERR`; returns why the link ends if the error ends it.
    fn handle_server_error(&self, core: &mut Core, error: ServerError) -> Option<String> {
        let verdict = core.session.handle_server_error(&error);
        match &error {
            ServerError::PermissionViolation { subject, .. } if !verdict.refused.is_empty() => {
                // Only the refused subscriptions end, in place: their subscribers still read
                // what they hold. The connection stays up.
                for sid in verdict.refused {
                    let Some(entry) = core.session.subs.get_mut(sid) else {
                        continue;
                    };
                    let sub = &mut entry.sink;
                    if !sub.ended {
                        sub.ended = true;
                        sub.error = Some(SubscriberError::PermissionViolation {
                            subject: subject.clone(),
                        });
                    }
                }
            }
            _ => tracing::warn!(%error, "server error"),
        }
        self.events.emit(ConnectionEvent::ServerError(error));
        verdict.ends_link
    }

    /// Registers a request and returns the value `request_outcome` compares against, with the
    /// clock of its duration for the client's metrics (one that reads no time when none asks
    /// for it).
    pub(super) fn register_request(&self, token: u64) -> Option<(u64, RequestClock)> {
        let mut core = self.core();
        if core.state == LinkState::Closed {
            return None;
        }
        core.requests.insert(token, None);
        Some((core.lost_requests, core.durations.start()))
    }

    /// The clock of a request that waits on an inbox of its own: it takes the lock to learn
    /// whether some registration times requests, and so only with the `opentelemetry`
    /// feature.
    #[inline(always)]
    pub(super) fn clock_outside_table(&self) -> RequestClock {
        #[cfg(feature = "opentelemetry")]
        return self.core().durations.start();
        #[cfg(not(feature = "opentelemetry"))]
        RequestClock::untimed()
    }

    pub(super) fn forget_request(&self, token: u64) {
        self.core().requests.remove(&token);
    }

    /// The reply of request `token`, if in; or why it will not come.
    pub(super) fn request_outcome(
        core: &mut Core,
        token: u64,
        lost: u64,
    ) -> Option<Result<Message, RequestCause>> {
        if let Some(Some(_)) = core.requests.get(&token) {
            return core.requests.remove(&token).flatten().map(Ok);
        }
        if core.state == LinkState::Closed {
            return Some(Err(RequestCause::Closed));
        }
        if core.lost_requests != lost {
            return Some(Err(RequestCause::Disconnected));
        }
        None
    }

    /// Closes for good: the socket is shut, subscriptions end, every waiter wakes.
    pub(super) fn close(&self) {
        let mut core = self.core();
        if core.state == LinkState::Closed {
            return;
        }
        core.state = LinkState::Closed;
        // Unanswered PINGs report `Closed` from now on; no waiters come back.
        let _ = core.session.handle_closed();
        if let Some(conn) = core.conn.take() {
            conn.shutdown();
        }
        for entry in core.session.subs.by_sid.values_mut() {
            entry.sink.ended = true;
        }
        self.write.writes().handle_closed();
        // The last event: every listener ends after it.
        self.events.emit(ConnectionEvent::Closed);
        self.events.end();
        self.changed.notify_all();
        self.background.notify_all();
        self.write.notify_closed();
    }
}

impl Host for Inner {
    fn link_failed(&self, generation: u64, reason: &str) {
        self.fail_link(generation, reason);
    }

    fn handover_written(&self) {
        // Taking `core` orders this after the background thread's look at the move (it
        // holds `core` from that look until it waits), so the wake-up is not missed.
        let _core = self.core();
        self.background.notify_all();
    }
}

fn parse(read: &mut ReadSide, batch: &mut Batch) {
    loop {
        // Each message is pushed whole where the decoder checks it, not copied out of a
        // returned op.
        let frames = &mut batch.frames;
        let decoded = read.parser.decode_frame_with(
            &mut read.buf,
            |frame| {
                frames.push(frame);
                None
            },
            Some,
        );
        match decoded {
            Ok(Some(None)) => {}
            Ok(Some(Some(op))) => batch.others.push((batch.frames.len(), op)),
            Ok(None) => return,
            Err(e) => {
                batch.error = Some(format!("protocol error: {e}"));
                return;
            }
        }
    }
}
