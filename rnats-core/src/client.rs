//! The [`Client`]: a cheap, cloneable handle to one connection.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_proto::{HeaderMap, Pub, QueueGroup, ServerInfo, Subject};
use tokio::sync::futures::Notified;

use crate::caller_write;
use crate::connection::{LinkState, State};
use crate::engine::Engine;
use crate::error::{
    ConnectError, FlushCause, PublishCause, RequestCause, RttCause, RttError, SubscribeCause,
};
pub use crate::error::{
    DrainError, FlushError, FlushErrorKind, PublishError, PublishErrorKind, ReconnectError,
    RequestError, RequestErrorKind, ServerPoolError, ServerPoolErrorKind, SetServerPoolError,
    SetServerPoolErrorKind, SubscribeError, SubscribeErrorKind,
};
use crate::floor::handshake::DEFAULT_MAX_PAYLOAD;
use crate::floor::server_pool::Server;

mod events;
pub mod traits;
use crate::caller_write::Turn;
use crate::events::ConnectionEvent;
use crate::floor::server_pool::ServerPool;
use crate::options::ConnectOptions;
use crate::otel::Arrival;
use crate::reconnect;
pub use crate::request::PendingReply;
pub use crate::request_builder::Request;
use crate::rt::Rt;
use crate::server_addr::{ServerAddr, ToServerAddrs};
use crate::shared::{ClientHandle, Shared, Sink, SubEntry, outside_workers};
pub use crate::statistics::Statistics;
use crate::sub_queue::{Limits, SubQueue};
use crate::subject::{SubjectCheck, ToSubject, check_publish};
use crate::writer::{After, Urgency, Writer};
use crate::{Message, Subscriber, request};
pub use events::Events;
use events::spawn_callback;

/// A connection to a NATS server. Clones share the connection; it closes when the last clone
/// and the last [`Subscriber`] are dropped, or on [`Client::close`].
pub struct Client {
    handle: Arc<ClientHandle>,
    /// This clone's wait for room in the write queue, for its `Sink` implementation.
    pub(crate) sink_wait: SinkWait,
}

impl Clone for Client {
    fn clone(&self) -> Client {
        Client {
            handle: Arc::clone(&self.handle),
            sink_wait: SinkWait::default(),
        }
    }
}

/// A wait for room in the write queue, boxed.
pub(crate) type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One clone's pending wait for room, for `Client`'s `Sink` implementation (`crate::sink`).
/// Only touched through `&mut Client`; the mutex exists to keep `Client: Sync` with a
/// future that is only `Send`, and is never contended.
#[derive(Default)]
pub(crate) struct SinkWait(pub(crate) std::sync::Mutex<Option<Wait>>);

impl ConnectOptions {
    /// Connects to `addrs` (one URL such as `nats://[user:pass@]host[:port]`, several
    /// separated by commas, or any other [`ToServerAddrs`]) with these options.
    pub async fn connect<A: ToServerAddrs>(self, addrs: A) -> Result<Client, ConnectError> {
        Client::connect_with(addrs, self).await
    }
}

/// A message ready to be queued: subject checked, size checked against `max_payload`.
pub(crate) struct Outbound<'a> {
    pub(crate) subject: &'a str,
    pub(crate) reply: Option<&'a str>,
    pub(crate) headers: Option<&'a HeaderMap>,
    pub(crate) payload: &'a Bytes,
    /// Whether `subject` is still to be checked (under the write lock).
    pub(crate) check: SubjectCheck,
}

impl Client {
    /// Connects to `addrs` with `options`; see [`ConnectOptions`].
    pub(crate) async fn connect_with(
        addrs: impl ToServerAddrs,
        options: ConnectOptions,
    ) -> Result<Client, ConnectError> {
        // Tokio when it runs here, else the runtime-neutral backend (or an error without it).
        let rt = Rt::current()?;
        let mut pool = ServerPool::for_connect(
            addrs,
            &options.inbox_prefix,
            options.reconnect.retain_servers_order,
        )?;
        // A bad proxy URL fails here, as a bad server URL does, before any connection.
        options.proxy_to_use()?;
        // With `retry_on_initial_connect` the client comes back at once and connects in the
        // background, from its first attempt on, as in async-nats. Unless it may not
        // reconnect at all: then the one try is made here.
        let established = if options.reconnect.connects_in_background() {
            None
        } else {
            match reconnect::first_connect(rt, &options, &mut pool).await {
                Ok(established) => Some(established),
                Err(error) if !options.reconnect.retry_on_initial_connect => return Err(error),
                Err(error) => {
                    tracing::debug!(%error, "initial connect failed and reconnecting is off");
                    None
                }
            }
        };
        let info = established
            .as_ref()
            .map(|e| e.info.clone())
            .unwrap_or_default();
        let connected = established.is_some();
        // Made before the engine starts and before the first event, so the callback sees
        // the first `Connected`.
        let callback_events = (options.event_callback.clone()).map(|call| spawn_callback(rt, call));
        let shared = Arc::new(Shared::new(rt, options, info, pool, callback_events));
        if !connected {
            // Until the first INFO says otherwise: the server default, as in async-nats.
            shared
                .max_payload
                .store(DEFAULT_MAX_PAYLOAD, Ordering::Relaxed);
            // Until a server says otherwise, assume it takes headers (every server since 2.2
            // does): header publishes are kept for the first connect like any other.
            shared.headers_supported.store(true, Ordering::Relaxed);
        }
        let engine = Engine::new(Arc::clone(&shared), established);
        request::subscribe_inbox(&shared);
        let guard = crate::engine::DriverGuard(Arc::clone(&shared));
        rt.spawn(async move {
            // Releases every waiter if the engine ends without finishing (a panic).
            let _guard = guard;
            engine.run().await;
        });
        if connected {
            Statistics::add(&shared.statistics.connects, 1);
            shared.emit(ConnectionEvent::Connected);
        }
        Ok(Client {
            handle: Arc::new(ClientHandle::new(shared)),
            sink_wait: SinkWait::default(),
        })
    }

    pub(crate) fn shared(&self) -> &Shared {
        self.handle.shared()
    }

    /// Publishes `payload` to `subject`.
    ///
    /// Returns once the message is queued for the connection, which is nearly always at once;
    /// it waits only while the write queue is over its limit. Use [`Client::flush`] to know the
    /// server has it.
    ///
    /// Awaited on the thread of `#[tokio::main]` (a multi-threaded runtime's `block_on`,
    /// which is no worker), a publish that finds the queue at its limit writes the queue to
    /// the socket itself rather than waiting for a worker to: while the socket is full it
    /// may hold that thread for up to 5 ms before it waits as above, so other futures
    /// joined with it on that thread wait as long.
    pub async fn publish<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> Result<(), PublishError> {
        let mut owned = None;
        // Checked under the write lock, where a subject the queue just took needs no check.
        let subject = crate::subject::text_of(&subject, &mut owned);
        let (_span, trace) =
            crate::otel::publish_plain(self.header_support(), subject, payload.len());
        let out = Outbound {
            subject,
            reply: None,
            headers: trace.headers(),
            payload: &payload,
            check: SubjectCheck::Publish {
                skip_validation: self.shared().options.skip_subject_validation,
            },
        };
        // The fast path inline: no nested future on the hottest call (see `Client::send`).
        let Some(held) = self.try_send(&out, Urgency::Normal, true)? else {
            return Ok(());
        };
        Box::pin(self.send_when_space(held, out, Urgency::Normal)).await
    }

    /// Publishes with headers.
    pub async fn publish_with_headers<S: ToSubject>(
        &self,
        subject: S,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<(), PublishError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let (_span, headers) =
            crate::otel::publish(self.header_support(), subject, Some(headers), payload.len());
        let out = Outbound {
            subject,
            reply: None,
            headers: headers.as_ref(),
            payload: &payload,
            check: SubjectCheck::Done,
        };
        self.send(out, Urgency::Normal).await
    }

    /// Publishes with a reply subject for the receiver to answer on.
    pub async fn publish_with_reply<S: ToSubject, R: ToSubject>(
        &self,
        subject: S,
        reply: R,
        payload: Bytes,
    ) -> Result<(), PublishError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let mut owned_reply = None;
        let reply = self.checked_publish_subject(&reply, &mut owned_reply)?;
        let (_span, trace) =
            crate::otel::publish_plain(self.header_support(), subject, payload.len());
        let out = Outbound {
            subject,
            reply: Some(reply),
            headers: trace.headers(),
            payload: &payload,
            check: SubjectCheck::Done,
        };
        self.send(out, Urgency::Normal).await
    }

    /// Publishes with a reply subject and headers.
    pub async fn publish_with_reply_and_headers<S: ToSubject, R: ToSubject>(
        &self,
        subject: S,
        reply: R,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<(), PublishError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let mut owned_reply = None;
        let reply = self.checked_publish_subject(&reply, &mut owned_reply)?;
        let (_span, headers) =
            crate::otel::publish(self.header_support(), subject, Some(headers), payload.len());
        let out = Outbound {
            subject,
            reply: Some(reply),
            headers: headers.as_ref(),
            payload: &payload,
            check: SubjectCheck::Done,
        };
        self.send(out, Urgency::Normal).await
    }

    /// Sends a request and waits for the first reply, up to the configured request timeout.
    /// A 503 status (nobody subscribed) becomes [`RequestErrorKind::NoResponders`].
    pub async fn request<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> Result<Message, RequestError> {
        let timeout = self.shared().options.request_timeout;
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        self.request_inner(subject, None, payload, timeout).await
    }

    /// Sends a request with headers; see [`Client::request`].
    pub async fn request_with_headers<S: ToSubject>(
        &self,
        subject: S,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<Message, RequestError> {
        let timeout = self.shared().options.request_timeout;
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        self.request_inner(subject, Some(headers), payload, timeout)
            .await
    }

    /// Sends a request with its own timeout (`None`: wait until the connection closes).
    pub async fn request_with_timeout<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
        timeout: Option<Duration>,
    ) -> Result<Message, RequestError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        self.request_inner(subject, None, payload, timeout).await
    }

    /// Sends a [`Request`] built with its own payload, headers, timeout or inbox, as in
    /// async-nats. With a custom inbox the reply is awaited on a subscription made for this one
    /// request; otherwise it goes through the shared request inbox like [`Client::request`].
    pub async fn send_request<S: ToSubject>(
        &self,
        subject: S,
        request: Request,
    ) -> Result<Message, RequestError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let timeout = request
            .timeout
            .unwrap_or(self.shared().options.request_timeout);
        let payload = request.payload.unwrap_or_default();
        let Some(inbox) = request.inbox else {
            return self
                .request_inner(subject, request.headers, payload, timeout)
                .await;
        };
        let mut replies = self.subscribe(inbox.as_str()).await?;
        replies.unsubscribe_after(1).await.ok();
        let mut clock = request::clock_outside_table(self.shared());
        let (_span, headers) = crate::otel::request(
            self.header_support(),
            subject,
            request.headers,
            payload.len(),
        );
        let out = Outbound {
            subject,
            reply: Some(&inbox),
            headers: headers.as_ref(),
            payload: &payload,
            check: SubjectCheck::Done,
        };
        self.send(out, Urgency::Flush).await?;
        let reply = match timeout {
            Some(limit) => (self.shared().rt.timeout(limit, replies.next()))
                .await
                .map_err(|_| RequestCause::TimedOut(limit)),
            None => Ok(replies.next().await),
        };
        let outcome = reply.map(crate::floor::replies::inbox_reply_outcome);
        clock.finish(
            Arrival::none(),
            || self.shared().requests().durations.recorders(),
            || match &outcome {
                Err(cause) => Some(cause.clone()),
                Ok(Err(error)) => error.cause().cloned(),
                Ok(Ok(_)) => None,
            },
        );
        outcome?
    }

    /// Sends a request and returns at once with its [`PendingReply`], to be awaited later: for
    /// callers that keep many requests in flight (JetStream's pipelined publishing). The
    /// request is queued like a publish (no flush urgency), so a burst of them leaves in
    /// few writes.
    pub async fn start_request<S: ToSubject>(
        &self,
        subject: S,
        headers: Option<HeaderMap>,
        payload: Bytes,
    ) -> Result<PendingReply, RequestError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let (_span, headers) =
            crate::otel::request(self.header_support(), subject, headers, payload.len());
        let (pending, clock) = request::Pending::register(self.handle.shared());
        let out = Outbound {
            subject,
            reply: Some(pending.reply()),
            headers: headers.as_ref(),
            payload: &payload,
            check: SubjectCheck::Done,
        };
        self.send(out, Urgency::Normal).await?;
        Ok(PendingReply::new(pending, clock))
    }

    async fn request_inner(
        &self,
        subject: &str,
        headers: Option<HeaderMap>,
        payload: Bytes,
        timeout: Option<Duration>,
    ) -> Result<Message, RequestError> {
        // The span lasts until the reply comes: the request's whole round trip.
        let (_span, headers) =
            crate::otel::request(self.header_support(), subject, headers, payload.len());
        let (pending, clock) = request::Pending::register(self.handle.shared());
        let out = Outbound {
            subject,
            reply: Some(pending.reply()),
            headers: headers.as_ref(),
            payload: &payload,
            check: SubjectCheck::Done,
        };
        // Never held back by linger; written by the caller when the connection is idle.
        self.send(out, Urgency::Request).await?;
        pending.wait(timeout, clock).await
    }

    /// Subscribes to `subject`, which may contain wildcards.
    ///
    /// The SUB is queued like a publish; messages published by this client after the call
    /// are matched, but to be sure the server has the subscription before *other*
    /// connections publish, call [`Client::flush`].
    pub async fn subscribe<S: ToSubject>(&self, subject: S) -> Result<Subscriber, SubscribeError> {
        self.subscribe_inner(checked_subject(&subject)?, None, None)
    }

    /// Subscribes to `subject` with queue bounds of its own (`messages`, `bytes`) instead of
    /// the client's [`subscription_capacity`](crate::ConnectOptions::subscription_capacity)
    /// and [`subscription_capacity_bytes`](crate::ConnectOptions::subscription_capacity_bytes):
    /// for a subscription whose sender bounds what it has in flight by other means, such as a
    /// flow-controlled JetStream push consumer, which would lose messages to a smaller queue.
    pub async fn subscribe_with_capacity<S: ToSubject>(
        &self,
        subject: S,
        messages: usize,
        bytes: usize,
    ) -> Result<Subscriber, SubscribeError> {
        let capacity = Capacity {
            messages: messages.max(1),
            bytes: bytes.max(1),
        };
        self.subscribe_inner(checked_subject(&subject)?, None, Some(capacity))
    }

    /// Subscribes as a member of a queue group: each message goes to one member of the group.
    pub async fn queue_subscribe<S: ToSubject>(
        &self,
        subject: S,
        queue_group: String,
    ) -> Result<Subscriber, SubscribeError> {
        let queue_group = QueueGroup::try_from(queue_group.as_str())?;
        self.subscribe_inner(checked_subject(&subject)?, Some(queue_group), None)
    }

    /// Joins a queue group with queue bounds of its own (`messages`, `bytes`), as
    /// [`Client::subscribe_with_capacity`] does for a plain subscription: for a member that
    /// must shed load sooner (or later) than the client's other subscriptions, such as a
    /// service endpoint with pending limits of its own. Past either bound, messages are
    /// dropped and reported as a slow consumer of this subscription.
    pub async fn queue_subscribe_with_capacity<S: ToSubject>(
        &self,
        subject: S,
        queue_group: String,
        messages: usize,
        bytes: usize,
    ) -> Result<Subscriber, SubscribeError> {
        let queue_group = QueueGroup::try_from(queue_group.as_str())?;
        let capacity = Capacity {
            messages: messages.max(1),
            bytes: bytes.max(1),
        };
        self.subscribe_inner(
            checked_subject(&subject)?,
            Some(queue_group),
            Some(capacity),
        )
    }

    fn subscribe_inner(
        &self,
        subject: Subject,
        queue_group: Option<QueueGroup>,
        capacity: Option<Capacity>,
    ) -> Result<Subscriber, SubscribeError> {
        let shared = self.shared();
        if shared.writes().queue.is_closed() {
            return Err(SubscribeCause::Closed.into());
        }
        let sid = shared.next_sid.fetch_add(1, Ordering::Relaxed);
        let capacity = capacity.unwrap_or(Capacity {
            messages: shared.options.subscription_capacity,
            bytes: shared.options.subscription_capacity_bytes,
        });
        let queue = Arc::new(SubQueue::new(Limits {
            messages: capacity.messages,
            bytes: capacity.bytes,
            copy_below: shared.options.read_buffer_capacity / 4,
        }));
        let group = queue_group.as_ref().map(|q| q.as_str().to_owned());
        {
            let mut session = shared.session();
            // Under the lock the drain takes its subscriptions with: none slips between.
            if session.link.draining() {
                // As nats.go: a subscription made now would be cut off by the close ahead.
                return Err(SubscribeCause::Draining.into());
            }
            let entry = SubEntry::new(
                subject.clone(),
                queue_group,
                Sink::Queue(Arc::clone(&queue)),
            );
            session.subs.insert(sid, entry);
        }
        let sent = shared.push_control(|buf| {
            rnats_proto::encode_sub(buf, subject.as_str(), group.as_deref(), sid);
        });
        if !sent {
            shared.session().subs.remove(sid);
            return Err(SubscribeCause::Closed.into());
        }
        Ok(Subscriber::new(Arc::clone(&self.handle), sid, queue))
    }

    /// Waits until the server has processed everything this client queued before the call
    /// (a PING/PONG round trip, ADR-40). Writes queued after the call are not waited for.
    ///
    /// A flush whose PING is lost with its connection fails with `FlushCause::Disconnected`.
    /// A flush made while reconnecting covers what was kept for the next connection (the
    /// reconnect buffer) but not writes that had already gone to the connection that died:
    /// those may be lost, which `Event::Disconnected` announces.
    pub async fn flush(&self) -> Result<(), FlushError> {
        self.shared().flush().await
    }

    /// Measures a round trip to the server on the live connection: the time from queuing a
    /// PING to reading its PONG (nats.go's `RTT`). The PING is a flush's PING, so it goes out
    /// behind whatever this client queued before the call and the measure includes writing
    /// that out, as [`Client::flush`] would wait for it; nothing queued after the call is
    /// waited for.
    ///
    /// While the client is reconnecting there is nothing to measure, and it fails at once
    /// with [`RttCause::NotConnected`]; a connection lost
    /// before the PONG gives [`RttCause::Disconnected`], a
    /// closed client [`RttCause::Closed`].
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rnats_core::Error> {
    /// let client = rnats_core::connect("nats://127.0.0.1:4222").await?;
    /// let rtt = client.rtt().await?;
    /// println!("round trip to the server: {rtt:?}");
    /// # Ok(()) }
    /// ```
    pub async fn rtt(&self) -> Result<Duration, RttError> {
        let shared = self.shared();
        match shared.state() {
            LinkState::Connected => {}
            LinkState::Closed => return Err(RttCause::Closed.into()),
            LinkState::Disconnected | LinkState::Pending => {
                return Err(RttCause::NotConnected.into());
            }
        }
        let start = Instant::now();
        let pong = shared.push_ping().ok_or(RttCause::Closed)?;
        match pong.await {
            Ok(Ok(())) => Ok(start.elapsed()),
            Ok(Err(cause)) => Err(RttCause::from(cause).into()),
            Err(_) => Err(RttCause::Disconnected.into()),
        }
    }

    /// Drains the connection: unsubscribes every subscription, lets the messages already on
    /// their way reach the subscribers, flushes, then closes. Subscriber streams end after
    /// their last message. If the flush does not complete within the drain timeout, the
    /// client closes anyway and the error (its source a [`FlushError`] with
    /// [`FlushCause::TimedOut`]) says that messages may have been left behind.
    ///
    /// While the connection is down, or moving to another server (`force_reconnect`, lame
    /// duck mode), nothing can be drained: the client closes at once and
    /// the error's cause is [`FlushCause::NotConnected`] (as nats.go, which refuses to drain
    /// while reconnecting). A drain once started always finishes: dropping its future
    /// still ends the subscriptions and closes the client.
    pub async fn drain(&self) -> Result<(), DrainError> {
        let shared = self.shared();
        let (sids, live) = {
            let mut session = shared.session();
            session.handle_drain();
            let sids: Vec<u64> = session
                .subs
                .by_sid
                .iter()
                .filter(|(_, e)| matches!(e.sink, Sink::Queue(_)))
                .map(|(sid, _)| *sid)
                .collect();
            (sids, session.link.drains_link())
        };
        // The engine re-arms its timer for the draining link.
        shared.engine_waker.wake();
        shared.emit(ConnectionEvent::Draining);
        let mut guard = crate::subscriber::DrainGuard::new(shared, sids, true);
        if !live {
            guard.finish();
            shared.wait_done().await;
            return Err(FlushError::from(FlushCause::NotConnected).into());
        }
        for sid in guard.sids() {
            shared.push_control(|buf| rnats_proto::encode_unsub(buf, *sid, None));
        }
        // The PONG comes after every message the server sent before it saw the UNSUBs.
        let limit = shared.options.drain_timeout;
        let flushed = match shared.rt.timeout(limit, self.flush()).await {
            Ok(flushed) => flushed,
            Err(_) => Err(FlushCause::TimedOut(limit).into()),
        };
        guard.end_subscriptions();
        self.close().await;
        guard.finish();
        flushed.map_err(DrainError::from)
    }

    /// Closes the connection after a bounded attempt to send what is queued. Subscriber
    /// streams end, pending requests and flushes fail with a `Closed` error.
    pub async fn close(&self) {
        let shared = self.shared();
        // While disconnected nothing can be sent; do not wait for a reconnect.
        if shared.state() == LinkState::Connected {
            let grace = shared.options.connection_timeout;
            let _ = shared.rt.timeout(grace, self.flush()).await;
        }
        shared.request_close();
        shared.wait_done().await;
    }

    /// The latest INFO the server sent (a default one before the first connect).
    pub fn server_info(&self) -> ServerInfo {
        // The Arc is cloned under the lock the read path takes, the INFO itself after.
        let info = Arc::clone(self.shared().session().info());
        ServerInfo::clone(&info)
    }

    /// The latest INFO the server sent, or `None` before the first connect.
    pub fn try_server_info(&self) -> Option<ServerInfo> {
        let connected = self.shared().statistics.connects.load(Ordering::Acquire) > 0;
        connected.then(|| self.server_info())
    }

    /// Whether the connection's user is bound to the server's system account (the one that
    /// may ask the `$SYS.REQ.>` requests), as the server said in answer to the CONNECT:
    /// nats-server 2.12 and later say so right behind the handshake's PONG, so it is known
    /// once the connect returns, or at the latest once a `flush` after it returns. `false`
    /// from older servers and while disconnected; the account's name is
    /// [`ServerInfo::remote_account`].
    pub fn is_system_account(&self) -> bool {
        let shared = self.shared();
        shared.state() == LinkState::Connected && shared.session().info().is_system_account
    }

    /// The largest message (headers and payload) the server accepts.
    pub fn max_payload(&self) -> usize {
        self.shared().max_payload.load(Ordering::Relaxed)
    }

    /// Whether the connected server's version is at least `major.minor.patch`. A version
    /// that does not parse (or none yet) is not compatible.
    pub fn is_server_compatible(&self, major: i64, minor: i64, patch: i64) -> bool {
        server_version(&self.server_info().version)
            .is_some_and(|version| version >= (major, minor, patch))
    }

    /// The client's counters, shared by every clone: a live handle whose fields keep
    /// changing as the connection works.
    pub fn statistics(&self) -> Arc<Statistics> {
        Arc::clone(&self.shared().statistics)
    }

    /// Whether the connection is up, down, or not made yet.
    pub fn connection_state(&self) -> State {
        self.shared().state().public()
    }

    /// The servers the client (re)connects to, with what it knows of each.
    pub async fn server_pool(&self) -> Result<Vec<Server>, ServerPoolError> {
        let shared = self.shared();
        if shared.state() == LinkState::Closed {
            return Err(ServerPoolError::new(ServerPoolErrorKind::Send));
        }
        Ok(crate::floor::sync::lock(&shared.pool).snapshot())
    }

    /// The server the connection is up to, as the pool names it (the URL given at connect, or
    /// the one the cluster announced; its `Display` leaves out a user and password the URL
    /// carries, which `as_url_str` keeps), as nats.go's
    /// `ConnectedUrl`: which node of a cluster a client landed on after a failover. `None`
    /// while not connected. `server_info()` says what the server says of itself, whose
    /// `host` is often the address it listens on (`0.0.0.0`).
    pub fn connected_server(&self) -> Option<ServerAddr> {
        let shared = self.shared();
        if shared.state() != LinkState::Connected {
            return None;
        }
        crate::floor::sync::lock(&shared.pool).current().cloned()
    }

    /// Replaces the servers the client reconnects to (the current connection stays up). All
    /// must be WebSocket addresses or none; servers the cluster advertises are added to the
    /// new pool as before.
    pub async fn set_server_pool<A: ToServerAddrs>(
        &self,
        addrs: A,
    ) -> Result<(), SetServerPoolError> {
        let servers = ServerPool::replacement(addrs)?;
        let shared = self.shared();
        if shared.state() == LinkState::Closed {
            return Err(SetServerPoolError::new(SetServerPoolErrorKind::Send));
        }
        crate::floor::sync::lock(&shared.pool).replace(servers);
        Ok(())
    }

    /// Whether the client is closed for good (by `close`, `drain`, or reconnecting giving up).
    pub fn is_closed(&self) -> bool {
        self.shared().state() == LinkState::Closed
    }

    /// A new unique inbox subject under the configured prefix.
    pub fn new_inbox(&self) -> String {
        format!(
            "{}.{}",
            self.shared().options.inbox_prefix,
            crate::id::next()
        )
    }

    /// Drops the current connection and reconnects (to the next server of the pool), as
    /// after a failure: subscriptions are restored and publishes meanwhile are kept. Returns
    /// once the reconnect is asked for, not when it is done (watch the events for that).
    pub async fn force_reconnect(&self) -> Result<(), ReconnectError> {
        let shared = self.shared();
        if shared.state() == LinkState::Closed {
            return Err(ReconnectError::closed());
        }
        shared.reconnect_requested.store(true, Ordering::Release);
        shared.engine_waker.wake();
        Ok(())
    }

    /// A stream of connection events from now on.
    pub fn events(&self) -> Events {
        Events::new(self.shared().events.subscribe())
    }

    /// The request timeout set in the options.
    pub fn timeout(&self) -> Option<Duration> {
        self.shared().options.request_timeout
    }

    pub(crate) fn shared_arc(&self) -> &Arc<Shared> {
        self.handle.shared()
    }

    /// Whether the server takes headers (HPUB): the OpenTelemetry hooks add none otherwise.
    /// (Without the feature the hooks never read it, and the call compiles away.)
    fn header_support(&self) -> &AtomicBool {
        &self.shared().headers_supported
    }

    /// Queues a message, waiting only while the write queue is over its limit.
    ///
    /// The common case never awaits: [`Client::try_send`] queues synchronously and the slow
    /// path is a separate future, so a publish does not move a large nested future state
    /// around (profiling showed those copies costing a quarter of the publish path). That
    /// future is boxed, made only when the queue is full: unboxed, its room in every publish
    /// and request future made them 592 and 896 bytes, against 208 and 568 now, each copied
    /// whenever a caller's future moves.
    async fn send(&self, out: Outbound<'_>, urgency: Urgency) -> Result<(), PublishError> {
        let Some(held) = self.try_send(&out, urgency, true)? else {
            return Ok(());
        };
        Box::pin(self.send_when_space(held, out, urgency)).await
    }

    /// Waits for room in the write queue, then queues.
    async fn send_when_space(
        &self,
        mut held: Held<'_>,
        out: Outbound<'_>,
        urgency: Urgency,
    ) -> Result<(), PublishError> {
        loop {
            match held {
                Held::Room(space) => space.await,
                Held::Turn => caller_write::YieldOnce::default().await,
            }
            match self.try_send(&out, urgency, true)? {
                None => return Ok(()),
                Some(next) => held = next,
            }
        }
    }

    /// Queues the message if the write queue has room, and says what holds the publish back,
    /// if anything ([`Held`]): the notification of room, made while the lock was held so the
    /// engine's `notify_waiters()` after it takes the queue cannot be missed, or, for a
    /// caller whose bulk run's turn paused on a full socket ([`caller_write::Turn::Paused`]),
    /// one yield to its executor before it tries again. With `bounded` false the message is
    /// queued even over the limit (the `Sink` checked for room in `poll_ready`; another clone
    /// may have filled it since).
    ///
    /// Always inlined: its result is some 80 bytes, and in a call it goes through memory and
    /// back on every publish, where inlined the common `Ok(None)` is a branch.
    #[inline(always)]
    pub(crate) fn try_send(
        &self,
        out: &Outbound<'_>,
        urgency: Urgency,
        bounded: bool,
    ) -> Result<Option<Held<'_>>, PublishError> {
        let shared = self.shared();
        let header_len = match out.headers {
            Some(headers) => {
                if !shared.headers_supported.load(Ordering::Relaxed) {
                    return Err(PublishCause::HeadersNotSupported.into());
                }
                // The map refuses bad names and values as they go in; this reports the first.
                headers.check().map_err(PublishCause::InvalidHeader)?;
                rnats_proto::encoded_len(headers)
            }
            None => 0,
        };
        let payload_len = out.payload.len();
        let size = header_len + payload_len;
        let max = shared.max_payload.load(Ordering::Relaxed);
        if max != 0 && size > max {
            out.check.run_now(out.subject)?;
            return Err(PublishCause::MaxPayloadExceeded { size, max }.into());
        }
        let frame = Pub {
            subject: out.subject,
            reply: out.reply,
            headers: out.headers,
        };
        let mut writes = shared.writes();
        let lingering = shared.options.linger.is_some();
        // How this call's turn as the writer at the limit ended, if it took one: at most one,
        // after which the queue has room or the caller waits like any publisher.
        let mut turn = None;
        let full = loop {
            out.check.run(&writes.queue, out.subject)?;
            if writes.queue.is_closed() {
                return Err(PublishCause::Closed.into());
            }
            if !writes.queue.is_live() {
                // Kept for after the reconnect, up to the reconnect buffer; never waits.
                let limit = shared.options.reconnect.buffer_size;
                if writes.queue.len() + frame.encoded_len(payload_len) > limit {
                    return Err(PublishCause::ReconnectBufferFull { limit }.into());
                }
                writes.queue.push_pub(&frame, out.payload);
                return Ok(None);
            }
            let full = bounded
                && writes.queue.len() >= shared.options.write_buffer_limit
                && !writes.queue.is_empty();
            if !full
                || turn.is_some()
                || !caller_write::may_take_over(&writes, lingering, outside_workers)
            {
                break full;
            }
            // From `#[tokio::main]`'s thread, with nothing in flight, the caller writes the
            // queue itself rather than waiting for a worker (`caller_write.rs`).
            if urgency != Urgency::Normal {
                // A request: queued, then written with the rest or left to the engine, whose
                // write its reply's timeout does not wait on.
                writes.queue.push_pub(&frame, out.payload);
                let _ = caller_write::write_as_caller(
                    &shared.write_side(),
                    writes,
                    After::Direct,
                    caller_write::WAIT,
                );
                return Ok(None);
            }
            // A publish queues its frame into the room its turn made, on a later poll if the
            // turn paused: a publish still pending has queued nothing, and a socket that
            // stays full keeps the queue at the limit.
            turn = Some(caller_write::write_as_caller(
                &shared.write_side(),
                writes,
                After::Bulk,
                caller_write::WAIT,
            ));
            writes = shared.writes();
        };
        // A turn that paused owes the caller's executor a yield (`caller_write::YieldOnce`)
        // before the publish queues its frame or takes its next turn.
        if turn == Some(Turn::Paused) {
            return Ok(Some(Held::Turn));
        }
        // An empty queue always takes one message, however large.
        if full {
            // From a task, it writes the queue the engine was woken for but has not taken.
            if caller_write::write_for_task(&shared.write_side(), &mut writes, lingering)
                && writes.queue.len() < shared.options.write_buffer_limit
            {
                writes.queue.push_pub(&frame, out.payload);
                // Publishers parked for room have some now too.
                let waiters = std::mem::take(&mut writes.space_waiters);
                shared.submit(writes, urgency);
                if waiters {
                    shared.space.notify_waiters();
                }
                return Ok(None);
            }
            writes.space_waiters = true;
            let outside = outside_workers();
            // Such a caller gets the queue at the end of the engine's batch instead.
            writes.outside_waiter |= outside;
            // A task is not left behind a run of `block_on`'s caller, which may be paused on a
            // full socket: the engine takes the queue.
            let kick = !outside && writes.writer == Writer::Bulk;
            if kick {
                writes.kick(&shared.kicks);
            }
            let space = shared.space.notified();
            drop(writes);
            if kick {
                shared.engine_waker.wake();
            }
            return Ok(Some(Held::Room(space)));
        }
        writes.queue.push_pub(&frame, out.payload);
        shared.submit(writes, urgency);
        Ok(None)
    }
}

/// What holds a publish back ([`Client::try_send`]).
pub(crate) enum Held<'a> {
    /// Room in the write queue, which the engine or a writing caller notifies; then it tries
    /// again.
    Room(Notified<'a>),
    /// One yield to the executor, then it tries again (queueing its frame, or taking its next
    /// turn): its bulk run's turn paused on a full socket (`caller_write::Turn::Paused`).
    Turn,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("state", &self.connection_state())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Validates a subject for publishing: valid, and no wildcard tokens. With
    /// `skip_subject_validation` only what would break the protocol's framing is refused.
    pub(crate) fn checked_publish_subject<'s>(
        &self,
        subject: &'s impl ToSubject,
        owned: &'s mut Option<Subject>,
    ) -> Result<&'s str, PublishError> {
        let text = crate::subject::text_of(subject, owned);
        check_publish(text, self.shared().options.skip_subject_validation)?;
        Ok(text)
    }
}

/// A subscription queue's bounds, in messages and in bytes.
#[derive(Debug, Clone, Copy)]
struct Capacity {
    messages: usize,
    bytes: usize,
}

/// A subscription subject, checked (wildcards allowed).
fn checked_subject(subject: &impl ToSubject) -> Result<Subject, SubscribeError> {
    let subject = subject.to_subject();
    rnats_proto::validate_subject(subject.as_bytes())?;
    Ok(subject)
}

/// `major.minor.patch` of a server version such as `2.10.14` or `2.11.0-RC.1`.
fn server_version(version: &str) -> Option<(i64, i64, i64)> {
    let mut parts = version.trim_start_matches('v').splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch_text = parts.next()?;
    let digits = patch_text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(patch_text.len());
    let patch = patch_text[..digits].parse().ok()?;
    Some((major, minor, patch))
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
