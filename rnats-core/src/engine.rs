//! The connection engine: the tokio driver of one connection. One task owns the socket and
//! drives reads, writes, socket flushes and the link's timers from a single poll loop, so no
//! direction ever waits for another. `docs/engine.md` has the whole picture.
//!
//! # The state and who owns it
//!
//! - The [`Session`](crate::floor::session::Session), sans-IO, behind `Shared::session`: the
//!   link's phase (`Disconnected`, `Connected`, `Moving`, `Draining`, `Closed`) with
//!   keepalive, stale detection, lame duck mode and planned moves; the subscription table
//!   (sids, subjects, auto-unsubscribe counts, where messages go, the replay they encode);
//!   the PING/PONG pairing by number with the flushes deferred through an outage; the
//!   latest INFO. This driver feeds it (`handle_connected`, `handle_msg`, `handle_pong`,
//!   `handle_info`, `handle_server_error`, `handle_disconnected`, `handle_timeout`,
//!   `handle_move_requested`, `handle_drain`, `handle_closed`), arms one timer at its
//!   `poll_timeout`, and carries out what comes back. The blocking client drives the same
//!   type. The handshake (`ExpectInfo`, then `ExpectPong` after CONNECT + PING) runs
//!   before a link exists, in `handshake.rs`.
//! - [`Writes`](crate::writer::Writes), under a mutex shared with every caller: the floor's
//!   write queue (the frames, whether they are a live link's or the reconnect buffer, and
//!   the link transitions `handle_connected`, `handle_move`, `handle_disconnected`,
//!   `handle_closed`, which the blocking client drives too) and this driver's rule for who
//!   writes next ([`Writer`]). Callers encode their frames straight into it under a short
//!   lock: that is the hot path, why this part is not behind a channel, and why it is not
//!   inside the session (a publish never waits for a read batch being dispatched).
//!
//! Lock order: `session`, then `writes`. Every PING is numbered by `writes` where it is
//! queued, so the n-th PONG answers the n-th PING; a flush leaves its waiter there too
//! (it never waits for the session's lock, which the read path holds while it dispatches a
//! batch), and the engine moves the waiters into the session before it counts a PONG or
//! ends the link. A link transition changes both under the same session lock.
//!
//! # Transitions
//!
//! ```text
//!  connect ──▶ Connected ──(read error, EOF, fatal -ERR, stale)──▶ disconnected()
//!                │                                                   │ queue dropped; lost
//!                │ force_reconnect / lame duck deadline              │ PINGs fail their flush
//!                ▼                                                   │ (FlushCause::Disconnected)
//!              Moving: the queue goes to the old link with a        ▼
//!              last PING; callers now fill the reconnect       reconnect (backoff, pool)
//!              buffer; ends when all is written and every            │
//!              PONG is in, or at the deadline ───────────────────────┤
//!                                                                    ▼
//!  replay(): SUB (+ UNSUB max) per subscription, the kept publishes, one PING for the
//!  outage's flushes; built with the session locked until callers may write again, so no
//!  subscribe or unsubscribe racing it is lost ──▶ Connected
//!
//!  close / drain / last handle dropped ──▶ finish(): Closed, every waiter released
//!  (a [`DriverGuard`] does the same if the task ends any other way, a panic included)
//! ```
//!
//! # The driver loop
//!
//! Each pass runs the `drive_*` steps in turn; a step that cannot progress has registered its
//! wake-up (socket readiness, the shared [`AtomicWaker`](futures_util::task::AtomicWaker), the
//! link timer) and returns. Each goes as far as it can, so the loop repeats only while a step
//! left work for another pass (a read that filled its buffer, a timer that queued a PING), up
//! to [`ROUNDS`] times, then yields: a busy connection cannot starve other tasks, and the
//! subscribers its reads woke on its worker run before it reads further ahead.
//!
//! Writes are adaptive and timer-free: whatever publishers queued while the previous write was
//! in flight goes out together in the next one, so idle traffic leaves at once and heavy
//! traffic leaves in large batches. A caller may also write a small queue to the socket
//! itself while the engine is idle (see [`Writer`] for the rule and its invariant).

use std::future::Future;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::BytesMut;
use rnats_proto::{Parser, ServerError, ServerInfo, ServerOp};

use crate::connection::LinkState;
use crate::delivery::Deliveries;
use crate::dial::Established;
use crate::error::{FlushCause, SubscriberError};
use crate::events::ConnectionEvent;
use crate::floor::frames::Frames;
use crate::floor::handshake::inbound_limit;
use crate::floor::keepalive::WriteWatch;
use crate::floor::link::LinkAction;
use crate::floor::read_buffers::ReadBuffers;
use crate::floor::session::Pong;
use crate::reconnect;
use crate::request_table::Answer;
use crate::rt::Timer;
use crate::shared::{ClientSession, Shared, Sink};
use crate::socket::Socket;
use crate::statistics::Statistics;
use crate::transport::Transport;
use crate::writer::{Look, Writer, Writes};

mod write;

/// Passes through the loop before yielding to the runtime: each may read a full buffer, so
/// this bounds how far the engine reads ahead of a subscriber it woke on its own worker (a
/// woken task runs there only once the engine yields). Two reads stay within the buffers the
/// connection keeps (`ReadBuffers`), still in cache; 32 let a stream of 8 KiB messages run
/// 8 MiB ahead into fresh memory, at up to 15% more CPU a message (issue 31, fifteenth stop).
pub(crate) const ROUNDS: usize = 2;

/// A read buffer grows to at most this many times `read_buffer_capacity` while the socket
/// keeps filling it: for large messages a 64 KiB read holds only eight 8 KiB messages, and
/// 256 KiB reads took 3.4x fewer `recvfrom` calls and 9% fewer instructions for the same
/// stream. Bounded, so a subscriber that lags pins at most 16 such buffers (see `sub_queue`).
pub(crate) const READ_GROWTH: usize = 4;

/// Why the engine stopped.
#[derive(Debug)]
enum Ending {
    /// `close()` or the last client handle was dropped.
    Requested,
    /// The connection broke; the text says how.
    Lost(String),
}

/// The engine for one connection.
pub(crate) struct Engine {
    shared: Arc<Shared>,
    /// The plain TCP socket; `None` while disconnected or under TLS or WebSocket. Shared
    /// with callers that write directly while the engine is idle (see [`Writer`]); reading
    /// is the engine's alone.
    socket: Option<Arc<Socket>>,
    /// The stream when the connection is not plain TCP: TLS, or WebSocket (over TCP or
    /// TLS). It needs `&mut` access, so callers never write to it directly; every byte goes
    /// through the engine.
    stream: Option<Transport>,
    /// Bytes were written to `stream` since its last flush.
    stream_needs_flush: bool,
    read_buf: BytesMut,
    /// Read buffers left behind while subscribers still hold their messages, for reuse.
    buffers: ReadBuffers,
    read_capacity: usize,
    /// How much the next read may take: `read_capacity`, doubled (up to
    /// [`READ_GROWTH`] times it) while reads keep filling all the room they are given.
    read_size: usize,
    parser: Parser,
    /// The batch being written; owned by the engine while [`Writer::Writing`].
    out: Frames,
    /// The one timer of the session, armed at [`Session::poll_timeout`].
    ///
    /// [`Session::poll_timeout`]: crate::floor::session::Session::poll_timeout
    timer: Timer,
    /// Where `timer` is armed, if anywhere.
    timer_at: Option<Instant>,
    /// The earliest request deadline the timer watches besides the session's (see
    /// `request.rs`), as last read from [`Shared::requests`].
    request_at: Option<Instant>,
    /// Armed while queued frames linger (opt-in policy, see `ConnectOptions::linger`).
    linger_timer: Option<Timer>,
    /// The tail watch of a caller's bulk run (`caller_write.rs`), and when it is due.
    tail_timer: Option<Timer>,
    tail_at: Option<Instant>,
    /// Messages of the current read, handed to subscribers at its end.
    deliveries: Deliveries,
    /// The engine itself last left the writer [`Idle`](Writer::Idle) and has not touched the
    /// queue since (see [`Engine::take_queued`]).
    writer_idle: bool,
    /// [`Shared::kicks`] when the engine last held the write lock.
    seen_kicks: u64,
    /// The engine took a batch since its last read (`Writes::quiet` is false).
    took_since_read: bool,
    /// Ends a link whose socket takes none of the bytes owed to it for
    /// `ConnectOptions::write_timeout`; told only when a write finds the socket full.
    write_watch: WriteWatch,
    /// Bytes the engine itself has written, what the write watch counts progress by.
    written: u64,
}

impl Engine {
    /// An engine for `conn`, a connection whose handshake is done (its read buffer holds
    /// whatever the server sent after the handshake PONG), or for none yet: then it starts
    /// by reconnecting (`retry_on_initial_connect`).
    pub(crate) fn new(shared: Arc<Shared>, conn: Option<Established>) -> Engine {
        let read_capacity = shared.options.read_buffer_capacity;
        let write_limit = shared.options.write_buffer_limit;
        let write_timeout = shared.options.write_timeout;
        let timer = shared.rt.timer(shared.rt.now());
        let (stream, read_buf, parser, info) = match conn {
            Some(conn) => {
                conn.traffic.count_in(&shared.statistics);
                (
                    Some(conn.stream),
                    conn.read_buf,
                    conn.parser,
                    Some(Arc::new(conn.info)),
                )
            }
            None => (None, BytesMut::new(), Parser::default(), None),
        };
        let mut engine = Engine {
            shared,
            socket: None,
            stream: None,
            stream_needs_flush: false,
            read_buf,
            buffers: ReadBuffers::default(),
            read_capacity,
            read_size: read_capacity,
            parser,
            out: Frames::with_limit(write_limit),
            timer,
            timer_at: None,
            request_at: None,
            linger_timer: None,
            tail_timer: None,
            tail_at: None,
            deliveries: Deliveries::default(),
            writer_idle: false,
            seen_kicks: 0,
            took_since_read: false,
            write_watch: WriteWatch::new(write_timeout),
            written: 0,
        };
        engine.reserve_read_buffer();
        // The servers the greeting advertises join the pool now (the server sends INFO again
        // only when its cluster changes), quietly, as async-nats does at connect: no event
        // may come before `Connected`.
        let discover = !engine.shared.options.reconnect.ignore_discovered_servers;
        if let (Some(info), true) = (&info, discover) {
            crate::floor::sync::lock(&engine.shared.pool).take_announced(Arc::clone(info), false);
        }
        let direct = stream.map(|stream| engine.install(stream));
        {
            let mut session = engine.shared.session();
            if let (Some(info), true) = (info, engine.is_connected()) {
                let now = engine.shared.rt.now();
                session.handle_connected(now, info);
            }
            let mut writes = engine.shared.writes();
            if engine.is_connected() {
                let link = session.pings.link();
                writes
                    .queue
                    .handle_connected(direct.flatten(), link, Frames::default());
            } else {
                // Publishes until the first connect are kept, as after a disconnect.
                writes.writer = Writer::Writing;
                engine.shared.set_state(LinkState::Pending);
            }
        }
        engine
    }

    /// Takes `stream` as the connection; returns the socket callers may write to directly
    /// (plain TCP only).
    fn install(&mut self, stream: Transport) -> Option<Arc<Socket>> {
        self.stream_needs_flush = false;
        match stream.into_socket() {
            Ok(socket) => {
                let socket = Arc::new(socket);
                self.socket = Some(Arc::clone(&socket));
                self.stream = None;
                Some(socket)
            }
            Err(other) => {
                self.socket = None;
                self.stream = Some(other);
                None
            }
        }
    }

    fn is_connected(&self) -> bool {
        self.socket.is_some() || self.stream.is_some()
    }

    fn reserve_read_buffer(&mut self) {
        if self.read_buf.capacity() < self.read_capacity {
            self.read_buf
                .reserve(self.read_capacity - self.read_buf.len());
        }
    }

    /// Runs the connection, reconnecting as the policy allows, until the client is closed or
    /// reconnecting gives up; then releases everyone waiting on it.
    pub(crate) async fn run(mut self) {
        let mut ending = match self.is_connected() {
            true => self.drive_connection().await,
            false => Ending::Lost("the initial connect failed".to_owned()),
        };
        while let Ending::Lost(reason) = &ending {
            if self.shared.options.reconnect.max_reconnects == Some(0) {
                break;
            }
            if !self.shared.session().link.reconnects() {
                // A draining client closes once its drain ends; a new link would only
                // restore subscriptions it is taking down.
                break;
            }
            if self.shared.state() == LinkState::Connected {
                // A link the client left on purpose is not one the server dropped.
                let planned = self.shared.session().link.moving().is_some();
                crate::floor::sync::lock(&self.shared.pool)
                    .link_ended(self.shared.rt.now(), planned);
                self.disconnected(reason.clone());
            }
            // A client closed (or every handle dropped) meanwhile never dials again.
            if self.shared.close_requested.load(Ordering::Acquire) {
                ending = Ending::Requested;
                break;
            }
            let shared = Arc::clone(&self.shared);
            let mut reconnecting = std::pin::pin!(reconnect::reconnect(&shared));
            let reconnected = poll_fn(|cx| {
                self.drive_request_deadlines(cx);
                reconnecting.as_mut().poll(cx)
            })
            .await;
            let conn = match reconnected {
                Ok(conn) => conn,
                Err(gave_up) => {
                    ending = gave_up.map_or(Ending::Requested, Ending::Lost);
                    break;
                }
            };
            self.resume(conn);
            ending = self.drive_connection().await;
        }
        self.finish(ending);
    }

    /// Drives the current connection until it ends.
    async fn drive_connection(&mut self) -> Ending {
        // Frames the server sent right behind its handshake PONG are already buffered.
        match self.handle_input() {
            Ok(()) => poll_fn(|cx| self.poll_drive(cx)).await,
            Err(ending) => ending,
        }
    }

    /// The connection is lost: stop direct writes, drop what was in flight, fail the flushes
    /// whose PINGs went with it, keep the flushes made while disconnected for after the
    /// reconnect, and tell the application.
    fn disconnected(&mut self, reason: String) {
        self.writer_idle = false;
        self.write_watch.handle_link_changed();
        // A bulk run ends with its link; the next link's queue is the engine's.
        self.tail_at = None;
        let shared = Arc::clone(&self.shared);
        shared.set_state(LinkState::Disconnected);
        self.socket = None;
        self.stream = None;
        self.out = Frames::with_limit(shared.options.write_buffer_limit);
        self.linger_timer = None;
        self.read_buf.clear();
        self.buffers.clear();
        self.read_size = self.read_capacity;
        let lost_pings = {
            // Both at once: a flush sees the link either up or down in both.
            let mut session = shared.session();
            let mut writes = shared.writes();
            writes.hand_flushes_to(&mut session.pings);
            writes.handle_disconnected();
            drop(writes);
            session.handle_disconnected()
        };
        // Their PINGs, and maybe publishes before them, were lost with the link.
        for (_, waiting) in lost_pings {
            waiting.resolve(Err(FlushCause::Disconnected));
        }
        // Blocked publishers retry and now go to the reconnect buffer.
        shared.space.notify_waiters();
        if shared.options.reconnect.fail_requests_on_disconnect {
            // Counted with the failure: by the time a waiter looks, a fast reconnect may
            // already be done, so the state cannot tell it why.
            let mut requests = shared.requests();
            shared
                .requests_failed_by_disconnect
                .fetch_add(1, Ordering::Relaxed);
            let failed = requests.take_all();
            drop(requests);
            drop(failed);
        }
        tracing::debug!(%reason, "disconnected");
        shared.emit(ConnectionEvent::Disconnected { reason });
    }

    /// A new connection is up: restore every subscription, then send the publishes kept
    /// while disconnected, then one PING for the flushes that waited.
    fn resume(&mut self, conn: Established) {
        self.writer_idle = false;
        self.write_watch.handle_link_changed();
        let shared = Arc::clone(&self.shared);
        conn.traffic.count_in(&shared.statistics);
        let direct = self.install(conn.stream);
        self.read_buf = conn.read_buf;
        self.reserve_read_buffer();
        self.parser = conn.parser;
        let info = Arc::new(conn.info);
        self.apply_info(&info);
        let now = self.shared.rt.now();
        shared.session().handle_connected(now, info);
        replay(&shared, direct);
        shared.set_state(LinkState::Connected);
        // With `retry_on_initial_connect` the first connection is made here too.
        let first = shared.statistics.connects.fetch_add(1, Ordering::Relaxed) == 0;
        shared.emit(if first {
            ConnectionEvent::Connected
        } else {
            ConnectionEvent::Reconnected
        });
    }

    /// During a planned move: whether the old link is done (everything written and its
    /// last PING, so every PING, answered). Its deadline is the session's
    /// ([`LinkAction::GiveUp`]).
    #[inline]
    fn move_done(&self, session: &ClientSession) -> Option<Ending> {
        let reason = session.link.moving()?;
        let done = self.out.is_empty() && !self.stream_needs_flush && session.pings.move_answered();
        done.then(|| Ending::Lost(reason.to_owned()))
    }

    fn poll_drive(&mut self, cx: &mut Context<'_>) -> Poll<Ending> {
        self.shared.engine_waker.register(cx.waker());
        for _ in 0..ROUNDS {
            if self.shared.close_requested.load(Ordering::Acquire) {
                // Best effort: whatever is writable right now still goes out, a bulk run's
                // last publishes too: the run is over, and the look waits for the lock
                // (`take_queued`). A caller's turn still under way (waiting for the socket
                // to take more) keeps the queue; what it has not written when the client
                // ends is dropped with it.
                self.shared.writes().end_bulk();
                self.tail_at = None;
                let _ = self.drive_write(cx);
                return Poll::Ready(Ending::Requested);
            }
            if self
                .shared
                .reconnect_requested
                .swap(false, Ordering::AcqRel)
            {
                let now = self.shared.rt.now();
                let mut session = self.shared.session();
                if session.handle_move_requested(now, "reconnect requested") {
                    self.writer_idle = false;
                    self.tail_at = None;
                    hand_over_queue(&self.shared, &mut session, &mut self.out);
                }
            }
            // Each step goes until it would wait (its wake-up registered) or says it left
            // work for another pass: a pass of nothing but confirmations costs a poll of the
            // socket, the write lock, the session lock and the timer (issue 31).
            #[cfg(test)]
            self.shared.engine_passes.fetch_add(1, Ordering::Relaxed);
            let mut again = false;
            for step in [Self::drive_read, Self::drive_write, Self::drive_timers] {
                match step(self, cx) {
                    Ok(more) => again |= more,
                    Err(ending) => return Poll::Ready(ending),
                }
            }
            if !again {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Reads what the socket has into the read buffer and handles every complete op in it.
    fn drive_read(&mut self, cx: &mut Context<'_>) -> Result<bool, Ending> {
        // Keep room for a large read: many small messages per syscall (see the read-buffer
        // sizing notes in the design), in a buffer whose messages are all gone, or one the
        // connection kept (`ReadBuffers`). TLS, WebSocket and other streams read here; a
        // stream with nothing to read lets the kept buffers go unless it streams, as the
        // plain socket below does when it runs empty.
        if let Some(stream) = &mut self.stream {
            if self.read_buf.capacity() - self.read_buf.len() < self.read_size / 4 {
                self.buffers.make_room(&mut self.read_buf, self.read_size);
            }
            let room = self.read_buf.capacity() - self.read_buf.len();
            return match tokio_util::io::poll_read_buf(Pin::new(stream), cx, &mut self.read_buf) {
                Poll::Pending => {
                    let now = || self.shared.rt.now();
                    let capacity = self.read_capacity;
                    self.buffers.socket_empty(&mut self.read_buf, capacity, now);
                    Ok(false)
                }
                Poll::Ready(Ok(0)) => Err(Ending::Lost("the server closed the connection".into())),
                Poll::Ready(Ok(n)) => {
                    Statistics::add(&self.shared.statistics.in_bytes, n as u64);
                    self.buffers.note_read(n);
                    self.adapt_read_size(n, room);
                    self.handle_input().map(|()| true)
                }
                Poll::Ready(Err(e)) => Err(Ending::Lost(format!("read failed: {e}"))),
            };
        }
        let filled = loop {
            if !self.poll_readable(cx)? {
                return Ok(false);
            }
            let socket = self.socket.as_ref().ok_or_else(no_socket)?;
            // Reserved only once there is something to read, so an idle connection does not
            // take a buffer back at every wake-up.
            if self.read_buf.capacity() - self.read_buf.len() < self.read_size / 4 {
                self.buffers.make_room(&mut self.read_buf, self.read_size);
            }
            let room = self.read_buf.capacity() - self.read_buf.len();
            match socket.read_draining(&mut self.read_buf) {
                Ok(0) => return Err(Ending::Lost("the server closed the connection".into())),
                Ok(n) => {
                    // Every protocol byte counts, as in async-nats: one add per read.
                    Statistics::add(&self.shared.statistics.in_bytes, n as u64);
                    self.buffers.note_read(n);
                    self.adapt_read_size(n, room);
                    break n == room;
                }
                // Readiness was stale; polling again registers for the next wake-up.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(Ending::Lost(format!("read failed: {e}"))),
            }
        };
        // Traffic came back (`Writes::answered`); the flags spare the lock otherwise. While a
        // caller holds it (writing a flush's PING as its publish's answer came, say) they are
        // kept for the next read: waiting would only have it wake this worker (issue 19).
        let direct = self.shared.directly_written.swap(false, Ordering::AcqRel);
        if (direct || self.took_since_read) && !Writes::answered(&self.shared.writes) {
            self.shared
                .directly_written
                .fetch_or(direct, Ordering::Release);
        } else {
            self.took_since_read = false;
        }
        self.handle_input()?;
        // A read that filled its room leaves more behind: the next pass reads it, after the
        // writes. One that did not cleared the readiness; looking again now registers the
        // wake-up, so the pass need not come back just to find the socket empty.
        if filled {
            Ok(true)
        } else {
            self.poll_readable(cx)
        }
    }

    /// Whether the socket has something to read; if not, its wake-up is registered, and a
    /// connection that does not stream gives its read buffers back (issue 22).
    fn poll_readable(&mut self, cx: &mut Context<'_>) -> Result<bool, Ending> {
        let socket = self.socket.as_ref().ok_or_else(no_socket)?;
        match socket.poll_read_ready(cx) {
            Poll::Ready(Ok(())) => Ok(true),
            Poll::Ready(Err(e)) => Err(Ending::Lost(format!("read failed: {e}"))),
            Poll::Pending => {
                let now = || self.shared.rt.now();
                let capacity = self.read_capacity;
                self.buffers.socket_empty(&mut self.read_buf, capacity, now);
                Ok(false)
            }
        }
    }

    /// Grows the next read while reads fill all their room (the socket has more waiting), and
    /// returns to the configured size once a read comes back well short of it.
    fn adapt_read_size(&mut self, read: usize, room: usize) {
        if read == room {
            self.read_size = (self.read_size * 2).min(self.read_capacity * READ_GROWTH);
        } else if read < self.read_capacity / 2 {
            self.read_size = self.read_capacity;
        }
    }

    /// Decodes and dispatches every complete op in the read buffer, then wakes each subscriber
    /// that got messages once.
    fn handle_input(&mut self) -> Result<(), Ending> {
        let shared = Arc::clone(&self.shared);
        let mut session = None;
        let mut in_messages = 0u64;
        let result = loop {
            // Each message is stored whole where the decoder checks it (a `MsgFrame`, cut
            // into its `Message` by the subscriber): a match on a returned op would copy it
            // out first.
            let decoded = self.parser.decode_frame_with(
                &mut self.read_buf,
                |msg| {
                    in_messages += 1;
                    let session = session.get_or_insert_with(|| shared.session());
                    self.deliveries.deliver(&shared, session, msg);
                    None
                },
                Some,
            );
            match decoded {
                Ok(Some(None)) => {}
                Ok(None) => break Ok(()),
                Err(e) => break Err(Ending::Lost(format!("protocol error: {e}"))),
                Ok(Some(Some(other))) => {
                    // Ops other than MSG may touch the write lock or the subscriptions, and a
                    // PONG may complete a drain: everything before it must be handed over.
                    session = None;
                    self.deliveries.hand_over(&shared, self.read_size);
                    if let Err(ending) = self.handle_op(other) {
                        break Err(ending);
                    }
                }
            }
        };
        drop(session);
        self.deliveries.hand_over(&shared, self.read_size);
        Statistics::add(&shared.statistics.in_messages, in_messages);
        result
    }

    fn handle_op(&mut self, op: ServerOp) -> Result<(), Ending> {
        match op {
            ServerOp::Ping => self.shared.push_pong(),
            ServerOp::Pong => match self.shared.count_pong() {
                Pong::Answered(Some(waiting)) => waiting.resolve(Ok(())),
                Pong::Answered(None) => {}
                // nats-server never sends one: a broken server or something in between did.
                // Not worth ending a working link for.
                Pong::Unasked => tracing::debug!("ignored a PONG that answers no PING"),
            },
            ServerOp::Ok => {}
            ServerOp::Info(info) => {
                let info = Arc::new(*info);
                self.apply_info(&info);
                let now = self.shared.rt.now();
                // A lame duck's clients move at random moments, so that they do not all land
                // on the next server at once (ADR-40).
                let news = self.shared.session().handle_info(
                    now,
                    info,
                    crate::floor::backoff::lame_duck_delay,
                );
                if news.cluster_changed {
                    self.shared.emit(ConnectionEvent::ClusterChanged);
                }
                if news.lame_duck {
                    self.shared.emit(ConnectionEvent::LameDuckMode);
                }
            }
            ServerOp::Err(error) => return self.handle_server_error(error),
            ServerOp::Msg(_) => {}
        }
        Ok(())
    }

    /// Takes in what an INFO says: the payload limit and the servers the cluster advertises.
    fn apply_info(&mut self, info: &Arc<ServerInfo>) {
        self.parser.set_max_payload(inbound_limit(info));
        self.shared
            .max_payload
            .store(info.max_payload, Ordering::Relaxed);
        self.shared
            .headers_supported
            .store(info.headers, Ordering::Relaxed);
        // Taking in thousands of announced servers for a listener is work per URL (hashing
        // them, to report the new ones): a thread of the blocking pool does it, so the ops
        // read behind this INFO (a PONG, messages) are not held up, and no worker of the
        // runtime is (issue 22). Without a listener it is only keeping the newest INFO,
        // done here. Parsing them into the pool waits until the pool is used.
        if !self.shared.options.reconnect.ignore_discovered_servers
            && crate::floor::sync::lock(&self.shared.announcements).offer(Arc::clone(info))
            && !crate::reconnect::take_announced_here(&self.shared)
        {
            let shared = Arc::clone(&self.shared);
            let rt = shared.rt;
            rt.spawn_blocking(move || crate::reconnect::merge_announced(&shared));
        }
    }

    fn handle_server_error(&mut self, error: ServerError) -> Result<(), Ending> {
        let (verdict, refused) = {
            let mut session = self.shared.session();
            let verdict = session.handle_server_error(&error);
            let refused: Vec<_> = verdict
                .refused
                .iter()
                .filter_map(|sid| session.subs.remove(*sid))
                .collect();
            (verdict, refused)
        };
        if let ServerError::PermissionViolation { subject, .. } = &error {
            for entry in refused {
                if let Sink::Queue(queue) = entry.sink {
                    queue.close(Some(SubscriberError::PermissionViolation {
                        subject: subject.clone(),
                    }));
                }
            }
        }
        self.shared.emit(ConnectionEvent::ServerError(error));
        // After these the server closes the connection; do not wait for it to do so.
        match verdict.ends_link {
            Some(reason) => Err(Ending::Lost(reason)),
            None => Ok(()),
        }
    }

    /// Moves the shared queue into `out`. Returns false, and marks the engine idle so callers
    /// may write directly again, when nothing is queued; also false while lingering.
    fn take_queued(&mut self, cx: &mut Context<'_>) -> bool {
        let mut writes = if self.writer_idle && self.shared.options.linger.is_none() {
            // The engine left the writer `Idle` and nobody kicked it since, so the writer is
            // `Idle` or `DirectlyWritten`: a caller holding the lock now (a direct write from
            // `block_on` right after the engine resolved its flush, say) either writes what
            // it queues or kicks the engine when it unlocks (`Shared::submit`). Nothing to
            // wait for, then: blocking on the lock would only make that caller wake this
            // worker when it unlocks (issue 19). After a kick the queue may hold frames
            // behind a `Woken` writer whose wake-up was this very poll: take the lock.
            match crate::floor::sync::try_lock(&self.shared.writes) {
                Some(writes) => writes,
                None if self.shared.kicks.load(Ordering::Acquire) == self.seen_kicks => {
                    return false;
                }
                None => self.shared.writes(),
            }
        } else if self.tail_at.is_some() && self.shared.options.linger.is_none() {
            // The engine watches a caller's bulk run (`Look::Caller`; the watch ends with the
            // link, a planned move or a close), and that caller holds the lock through each
            // write it makes (`caller_write::write_as_caller`), most of its time at 8 KiB:
            // blocking on the lock at each tail look parked this worker until the write
            // ended, and the caller's unlock had to wake it. A caller holding the lock is a
            // run still going, so unless someone kicked the engine since, it watches on.
            let tried = crate::floor::sync::try_lock(&self.shared.writes);
            if tried.is_none() && self.shared.kicks.load(Ordering::Acquire) == self.seen_kicks {
                drop(tried);
                return self.watch_run_in_writing(cx);
            }
            tried.unwrap_or_else(|| self.shared.writes())
        } else {
            self.shared.writes()
        };
        self.seen_kicks = self.shared.kicks.load(Ordering::Relaxed);
        // Under linger, one clock read serves the watch and the hold below.
        let linger_now = self.shared.options.linger.map(|linger| {
            let (rt, now) = (self.shared.rt, self.shared.rt.now());
            writes.watch_lingers(&mut self.linger_timer, rt, linger.delay, now, cx);
            now
        });
        let look = writes.engine_look();
        if look != Look::Caller {
            self.tail_at = None;
        }
        match look {
            Look::Frames => {
                self.writer_idle = false;
                if writes.hand_to_outside_waiter(self.shared.options.linger.is_some()) {
                    drop(writes);
                    self.shared.space.notify_waiters();
                    let now = self.shared.rt.now();
                    return self.watch_tail(now, false, cx);
                }
            }
            Look::Idle => {
                self.writer_idle = true;
                return false;
            }
            // A planned move: the queue is the reconnect buffer now.
            Look::NotForThisLink => {
                self.writer_idle = false;
                return false;
            }
            Look::Caller => {
                self.writer_idle = false;
                let now = self.shared.rt.now();
                let due = self.tail_at.is_some_and(|at| now >= at);
                if !(due && writes.tail_due()) {
                    drop(writes);
                    return self.watch_tail(now, due, cx);
                }
                self.tail_at = None;
                // The run is over: what it left is the engine's, like any queue (the caller
                // may have written it all).
                if writes.engine_look() == Look::Idle {
                    self.writer_idle = true;
                    return false;
                }
            }
        }
        if let (Some(linger), Some(now)) = (self.shared.options.linger, linger_now) {
            let limit = self.shared.options.write_buffer_limit;
            // The linger timer, armed above for the same deadline, brings the engine back
            // (unless it has fired: then the queue goes now).
            if writes.linger_armed && writes.linger_until(linger, limit, now).is_some() {
                writes.engine_holds();
                return false;
            }
        }
        let wake_publishers = writes.engine_take(&mut self.out, &self.shared.statistics);
        self.took_since_read = true;
        drop(writes);
        if wake_publishers {
            self.shared.space.notify_waiters();
        }
        true
    }

    /// A caller's bulk run holds the lock ([`Engine::take_queued`]): it is going on, so the
    /// tail watch goes on, from now if its period is over.
    fn watch_run_in_writing(&mut self, cx: &mut Context<'_>) -> bool {
        let now = self.shared.rt.now();
        let due = self.tail_at.is_some_and(|at| now >= at);
        self.watch_tail(now, due, cx)
    }

    /// Keeps watching a caller's bulk run (`caller_write.rs`): arms the tail timer a period
    /// from `now` when it is not armed or was `due`. Returns whether the queue is to be
    /// taken now (the timer was already past, and the run had stopped).
    fn watch_tail(&mut self, now: Instant, due: bool, cx: &mut Context<'_>) -> bool {
        let rt = self.shared.rt;
        let rearm = due || self.tail_at.is_none();
        let at = match self.tail_at {
            Some(at) if !rearm => at,
            _ => now + crate::caller_write::TAIL,
        };
        self.tail_at = Some(at);
        let timer = self.tail_timer.get_or_insert_with(|| rt.timer(at));
        if rearm {
            timer.reset(at);
        }
        // Registers the wake-up; a deadline already past is caught on the next pass.
        Pin::new(timer).poll(cx).is_ready() && self.take_queued(cx)
    }

    /// Runs the session's timers (keepalive PINGs, stale detection, the lame duck move and
    /// a planned move's deadline, all decided by the [`Session`]) and the requests'
    /// deadlines, and ends a planned move whose old link is done. This only arms one timer,
    /// at the earlier of the session's `poll_timeout` and the watched request deadline, and
    /// carries out the [`LinkAction`]s; one session lock per pass covers it all.
    ///
    /// [`Session`]: crate::floor::session::Session
    fn drive_timers(&mut self, cx: &mut Context<'_>) -> Result<bool, Ending> {
        let shared = &*self.shared;
        let mut session = shared.session();
        if let Some(ending) = self.move_done(&session) {
            return Err(ending);
        }
        look_at_request_watch(shared, &mut self.request_at);
        let mut progress = false;
        loop {
            let Some(at) = session
                .poll_timeout()
                .into_iter()
                .chain(self.request_at)
                .chain(self.write_watch.poll_timeout())
                .min()
            else {
                return Ok(progress);
            };
            if !fired(&mut self.timer, &mut self.timer_at, at, cx) {
                return Ok(progress);
            }
            let now = self.shared.rt.now();
            let mut acted = false;
            if self.request_at.is_some_and(|at| at <= now) {
                acted = true;
                self.request_at = expire_requests(shared, now);
            }
            if self.write_watch.poll_timeout().is_some_and(|at| at <= now) {
                acted = true;
                let owed = !self.out.is_empty();
                write::watch_writes(&mut self.write_watch, now, self.written, owed)?;
            }
            while let Some(action) = session.handle_timeout(now) {
                acted = true;
                match action {
                    LinkAction::Ping => {
                        // Numbered by the queue like every PING; nobody waits for its PONG.
                        self.writer_idle = false;
                        shared.writes().push_ping();
                        shared.keepalive_pings.fetch_add(1, Ordering::Relaxed);
                    }
                    LinkAction::Stale { outstanding } => {
                        return Err(Ending::Lost(format!(
                            "stale connection: {outstanding} PINGs unanswered"
                        )));
                    }
                    LinkAction::StartMove { .. } => {
                        self.writer_idle = false;
                        self.tail_at = None;
                        hand_over_queue(shared, &mut session, &mut self.out);
                    }
                    LinkAction::GiveUp { reason } => return Err(Ending::Lost(reason.to_owned())),
                }
            }
            if !acted {
                // The timer and the clock disagree by a hair; re-arm and look again later.
                self.timer_at = None;
                return Ok(progress);
            }
            progress = true;
        }
    }

    /// Times requests out while no link is up: the session's timers rest while the engine
    /// reconnects, but a request's deadline does not. Registers the engine's waker, so a
    /// request with an earlier deadline re-arms the timer.
    fn drive_request_deadlines(&mut self, cx: &mut Context<'_>) {
        let shared = &*self.shared;
        shared.engine_waker.register(cx.waker());
        look_at_request_watch(shared, &mut self.request_at);
        while let Some(at) = self.request_at {
            if !fired(&mut self.timer, &mut self.timer_at, at, cx) {
                return;
            }
            self.request_at = expire_requests(shared, shared.rt.now());
        }
    }

    /// Marks the client closed and releases every waiter: flushes and requests fail,
    /// subscriptions end after what they already hold, blocked publishers wake.
    fn finish(self, ending: Ending) {
        let shared = Arc::clone(&self.shared);
        // A disconnect already reported (before reconnecting gave up) is not reported twice.
        let was_connected = shared.state() == LinkState::Connected;
        let error = match &ending {
            Ending::Requested => None,
            Ending::Lost(reason) => Some(SubscriberError::ConnectionClosed(reason.clone())),
        };
        release_all(&shared, error);
        if let (Ending::Lost(reason), true) = (ending, was_connected) {
            tracing::debug!(%reason, "connection lost");
            shared.emit(ConnectionEvent::Disconnected { reason });
        }
        shared.emit(ConnectionEvent::Closed);
        shared.done.send_replace(true);
    }
}

/// Starts a planned move away from a healthy server: callers queue for the next link from
/// now on, while the engine finishes writing what this one accepted (handed to `out`).
fn hand_over_queue(shared: &Shared, session: &mut ClientSession, out: &mut Frames) {
    let last_ping = shared.writes().handle_move(out, &shared.statistics);
    let Some(last_ping) = last_ping else {
        return;
    };
    session.pings.note_last_ping(last_ping);
    // Blocked publishers retry and now go to the reconnect buffer.
    shared.space.notify_waiters();
}

/// Closes the client for good and releases everyone waiting on the engine. Run when the
/// engine ends, and by [`DriverGuard`] if the engine is gone without ending (a panic, or its
/// task dropped with the runtime): no caller may wait for ever on a driver that is gone.
pub(crate) fn release_all(shared: &Shared, error: Option<SubscriberError>) {
    shared.set_state(LinkState::Closed);
    let (pings, new_flushes, entries) = {
        let mut session = shared.session();
        // Flushes made while disconnected fail now instead of waiting for a reconnect.
        let pings = session.handle_closed();
        let new_flushes = shared.writes().handle_closed();
        let entries: Vec<_> = session.subs.take_all().collect();
        (pings, new_flushes, entries)
    };
    // Dropped unanswered: their flushes report `Closed`.
    drop((pings, new_flushes));
    shared.space.notify_waiters();
    for (_, entry) in entries {
        if let Sink::Queue(queue) = entry.sink {
            queue.close(error.clone());
        }
    }
    let requests = shared.requests().take_all();
    drop(requests);
}

/// Arms `timer` at `at` unless it is armed there already, and tells whether it has fired.
fn fired(
    timer: &mut Timer,
    timer_at: &mut Option<Instant>,
    at: Instant,
    cx: &mut Context<'_>,
) -> bool {
    if *timer_at != Some(at) {
        timer.reset(at);
        *timer_at = Some(at);
    }
    Pin::new(timer).poll(cx).is_ready()
}

/// Reads the request deadline to watch into `request_at` when a request moved it earlier
/// since the last look (one atomic load otherwise).
fn look_at_request_watch(shared: &Shared, request_at: &mut Option<Instant>) {
    if shared.request_watch_moved.load(Ordering::Relaxed)
        && shared.request_watch_moved.swap(false, Ordering::Acquire)
    {
        *request_at = shared.requests().watch();
    }
}

/// Answers every request whose deadline is not after `now` with [`Answer::TimedOut`];
/// returns the deadline to watch next.
fn expire_requests(shared: &Shared, now: Instant) -> Option<Instant> {
    let (expired, watch) = {
        let mut requests = shared.requests();
        (requests.expire(now), requests.watch())
    };
    // Sent once the table is unlocked (the session's lock may still be held: a send only
    // schedules the waiting task).
    for sender in expired {
        let _ = sender.send(Answer::TimedOut);
    }
    watch
}

/// Owned by the engine's task for its whole life; if the task ends without the engine
/// having finished (it panicked, or the runtime dropped it), releases every waiter with an
/// error and marks the client closed.
pub(crate) struct DriverGuard(pub(crate) Arc<Shared>);

impl Drop for DriverGuard {
    fn drop(&mut self) {
        if *self.0.done.borrow() {
            return;
        }
        tracing::error!("the connection engine ended without closing; releasing its waiters");
        release_all(
            &self.0,
            Some(SubscriberError::ConnectionClosed(
                "the connection engine stopped".to_owned(),
            )),
        );
        self.0.emit(ConnectionEvent::Closed);
        self.0.done.send_replace(true);
    }
}

/// Queues, for a new link, what restores the old one's state: a SUB (and the remaining
/// auto-unsubscribe count) for every subscription, then the publishes kept while
/// disconnected, then one PING for every flush that waited. Then lets callers write to the
/// link.
///
/// The session stays locked until callers may write again, so a `subscribe` or
/// `unsubscribe` racing the replay is either in it or sends its own frame after it, never
/// neither (issue 9, bug 1). Lock order: `session`, then `writes`.
pub(crate) fn replay(shared: &Shared, direct: Option<Arc<Socket>>) {
    let mut session = shared.session();
    let mut restore = Frames::with_limit(shared.options.write_buffer_limit);
    restore.push_with(|buf| session.encode_replay(buf, |_| true));
    let resumed = session.pings.resume();
    let link = session.pings.link();
    let seq = shared
        .writes()
        .handle_connected(restore, direct, link, resumed.is_some());
    if let (Some(waiters), Some(seq)) = (resumed, seq) {
        session.pings.register_resumed(seq, waiters);
    }
    drop(session);
}

/// The engine drives a connection only while it has a socket; this is the ending if not.
fn no_socket() -> Ending {
    Ending::Lost("no connection".to_owned())
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
