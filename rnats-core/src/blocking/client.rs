//! The blocking [`Client`].

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats_proto::{HeaderMap, Pub, QueueGroup, ServerInfo, Subject};

use super::events::Events;
use super::handle::Handle;
use super::state::{Inner, SubState};
use super::subscriber::Subscriber;
use super::time::deadline_after;
use super::writer::Urgency;
use crate::connection::{LinkState, State};
use crate::error::{
    DrainError, FlushCause, FlushError, PublishCause, PublishError, ReconnectError, RequestCause,
    RequestError, RttCause, RttError, ServerPoolError, ServerPoolErrorKind, SetServerPoolError,
    SetServerPoolErrorKind, SubscribeCause, SubscribeError,
};
use crate::events::ConnectionEvent;
use crate::floor::server_pool::{Server, ServerPool};
use crate::floor::session::SubEntry;
use crate::floor::sync::lock;
use crate::message::Message;
use crate::otel::Arrival;
use crate::server_addr::{ServerAddr, ToServerAddrs};
use crate::statistics::Statistics;
use crate::status::StatusCode;
use crate::subject::{SubjectCheck, ToSubject, check_publish};

/// A blocking NATS client: every call runs on the calling thread. Cheap to clone; all
/// clones share one connection, which closes when the last clone (or [`Subscriber`]) is
/// dropped, or at [`Client::close`].
#[derive(Clone)]
pub struct Client {
    handle: Arc<Handle>,
}

impl Client {
    pub(super) fn new(inner: Arc<Inner>) -> Client {
        Client {
            handle: Arc::new(Handle::new(inner)),
        }
    }

    pub(super) fn inner(&self) -> &Inner {
        self.handle.inner()
    }

    #[cfg(any(test, feature = "opentelemetry"))]
    pub(super) fn inner_arc(&self) -> &Arc<Inner> {
        self.handle.inner_arc()
    }

    /// Publishes `payload` to `subject`.
    ///
    /// Returns once the message is in the write buffer: written at once when the
    /// connection is idle, batched with others under load. It waits only while the buffer
    /// is over the write limit. Use [`Client::flush`] to know the server has it.
    pub fn publish<S: ToSubject>(&self, subject: S, payload: Bytes) -> Result<(), PublishError> {
        let mut owned = None;
        // Checked under the write lock, where a subject the queue just took needs no check.
        let subject = crate::subject::text_of(&subject, &mut owned);
        let check = SubjectCheck::Publish {
            skip_validation: self.inner().options.skip_subject_validation,
        };
        self.send(subject, None, None, &payload, Urgency::Normal, check)
    }

    /// Publishes with headers.
    pub fn publish_with_headers<S: ToSubject>(
        &self,
        subject: S,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<(), PublishError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        self.send(
            subject,
            None,
            Some(&headers),
            &payload,
            Urgency::Normal,
            SubjectCheck::Done,
        )
    }

    /// Publishes with a reply subject for the receiver to answer on.
    pub fn publish_with_reply<S: ToSubject, R: ToSubject>(
        &self,
        subject: S,
        reply: R,
        payload: Bytes,
    ) -> Result<(), PublishError> {
        let (mut owned, mut owned_reply) = (None, None);
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let reply = self.checked_publish_subject(&reply, &mut owned_reply)?;
        self.send(
            subject,
            Some(reply),
            None,
            &payload,
            Urgency::Normal,
            SubjectCheck::Done,
        )
    }

    /// Publishes with a reply subject and headers.
    pub fn publish_with_reply_and_headers<S: ToSubject, R: ToSubject>(
        &self,
        subject: S,
        reply: R,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<(), PublishError> {
        let (mut owned, mut owned_reply) = (None, None);
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let reply = self.checked_publish_subject(&reply, &mut owned_reply)?;
        self.send(
            subject,
            Some(reply),
            Some(&headers),
            &payload,
            Urgency::Normal,
            SubjectCheck::Done,
        )
    }

    /// Sends a request and waits for the first reply, up to the options' request timeout.
    /// A 503 status (nobody subscribed) is [`RequestErrorKind::NoResponders`](crate::RequestErrorKind).
    pub fn request<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> Result<Message, RequestError> {
        let timeout = self.inner().options.request_timeout;
        self.request_with_headers_and_timeout(subject, None, payload, timeout)
    }

    /// Sends a request with headers; see [`Client::request`].
    pub fn request_with_headers<S: ToSubject>(
        &self,
        subject: S,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<Message, RequestError> {
        let timeout = self.inner().options.request_timeout;
        self.request_with_headers_and_timeout(subject, Some(headers), payload, timeout)
    }

    /// Sends a request with its own timeout (`None`: wait until the connection closes).
    pub fn request_with_timeout<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
        timeout: Option<Duration>,
    ) -> Result<Message, RequestError> {
        self.request_with_headers_and_timeout(subject, None, payload, timeout)
    }

    /// Sends a request with optional headers and its own timeout.
    pub fn request_with_headers_and_timeout<S: ToSubject>(
        &self,
        subject: S,
        headers: Option<HeaderMap>,
        payload: Bytes,
        timeout: Option<Duration>,
    ) -> Result<Message, RequestError> {
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let inner = self.inner();
        let token = inner.next_token();
        let mut reply = String::with_capacity(inner.request_prefix.len() + 20);
        reply.push_str(&inner.request_prefix);
        reply.push_str(itoa::Buffer::new().format(token));
        let (lost, mut clock) = inner
            .register_request(token)
            .ok_or_else(|| RequestError::from(RequestCause::Closed))?;
        // Never held back: written by this thread when the socket is free.
        if let Err(error) = self.send(
            subject,
            Some(&reply),
            headers.as_ref(),
            &payload,
            Urgency::Now,
            SubjectCheck::Done,
        ) {
            inner.forget_request(token);
            return Err(error.into());
        }
        let deadline = timeout.and_then(deadline_after);
        let outcome = inner.wait_for(deadline, |core| Inner::request_outcome(core, token, lost));
        // Timed from this thread, which waited for the reply: it wakes when the reply comes.
        clock.finish(
            Arrival::none(),
            || inner.core().durations.recorders(),
            || match &outcome {
                Some(Ok(reply)) => (reply.status == Some(StatusCode::NO_RESPONDERS))
                    .then_some(RequestCause::NoResponders),
                Some(Err(cause)) => Some(cause.clone()),
                None => Some(RequestCause::TimedOut(timeout.unwrap_or_default())),
            },
        );
        match outcome {
            Some(Ok(reply)) => crate::floor::replies::reply_outcome(reply),
            Some(Err(cause)) => {
                inner.forget_request(token);
                Err(cause.into())
            }
            None => {
                inner.forget_request(token);
                Err(RequestCause::TimedOut(timeout.unwrap_or_default()).into())
            }
        }
    }

    /// Sends a request built with [`Request`](crate::Request): payload, headers, timeout and
    /// a reply subject of the caller's choosing, each optional. With an inbox of its own the
    /// request subscribes to it for this one reply; otherwise it goes over the shared request
    /// inbox as [`Client::request`] does.
    pub fn send_request<S: ToSubject>(
        &self,
        subject: S,
        request: crate::request_builder::Request,
    ) -> Result<Message, RequestError> {
        let timeout = request
            .timeout
            .unwrap_or(self.inner().options.request_timeout);
        let payload = request.payload.unwrap_or_default();
        let Some(inbox) = request.inbox else {
            return self.request_with_headers_and_timeout(
                subject,
                request.headers,
                payload,
                timeout,
            );
        };
        let mut owned = None;
        let subject = self.checked_publish_subject(&subject, &mut owned)?;
        let mut replies = self.subscribe(inbox.as_str())?;
        // The server forgets the inbox after the first reply.
        replies.unsubscribe_after(1).ok();
        let mut clock = self.inner().clock_outside_table();
        self.send(
            subject,
            Some(&inbox),
            request.headers.as_ref(),
            &payload,
            Urgency::Now,
            SubjectCheck::Done,
        )?;
        let reply = match timeout {
            Some(limit) => replies
                .next_timeout(limit)
                .map_err(|_| RequestCause::TimedOut(limit)),
            None => Ok(replies.next()),
        };
        let outcome = reply.map(crate::floor::replies::inbox_reply_outcome);
        clock.finish(
            Arrival::none(),
            || self.inner().core().durations.recorders(),
            || match &outcome {
                Err(cause) => Some(cause.clone()),
                Ok(Err(error)) => error.cause().cloned(),
                Ok(Ok(_)) => None,
            },
        );
        outcome?
    }

    /// Subscribes to `subject`, which may contain wildcards.
    ///
    /// The SUB is written at once; to be sure the server has it before *other* connections
    /// publish, call [`Client::flush`].
    pub fn subscribe<S: ToSubject>(&self, subject: S) -> Result<Subscriber, SubscribeError> {
        self.subscribe_inner(checked_subject(&subject)?, None)
    }

    /// Subscribes as a member of a queue group: each message goes to one member.
    pub fn queue_subscribe<S: ToSubject>(
        &self,
        subject: S,
        queue_group: String,
    ) -> Result<Subscriber, SubscribeError> {
        let queue_group = QueueGroup::try_from(queue_group.as_str())?;
        self.subscribe_inner(checked_subject(&subject)?, Some(queue_group))
    }

    fn subscribe_inner(
        &self,
        subject: Subject,
        queue_group: Option<QueueGroup>,
    ) -> Result<Subscriber, SubscribeError> {
        let inner = self.inner();
        let sid = inner.next_sid();
        let mut core = inner.core();
        if core.state == LinkState::Closed || inner.write.is_closed() {
            return Err(SubscribeCause::Closed.into());
        }
        if core.session.link.draining() {
            // As nats.go: a subscription made now would be cut off by the close ahead.
            return Err(SubscribeCause::Draining.into());
        }
        let group = queue_group.as_ref().map(|q| q.as_str().to_owned());
        let entry = SubEntry::new(subject.clone(), queue_group, SubState::default());
        core.session.subs.insert(sid, entry);
        core.expect_inbound();
        // While disconnected the reconnect's replay sends the SUB.
        if core.state == LinkState::Connected {
            let writes = inner.write.writes();
            drop(core);
            inner.write.send_control_locked(inner, writes, |buf| {
                rnats_proto::encode_sub(buf, subject.as_str(), group.as_deref(), sid);
            });
        }
        Ok(Subscriber::new(Arc::clone(&self.handle), sid))
    }

    /// Waits until the server has processed everything this client sent before the call (a
    /// PING/PONG round trip, ADR-40), up to the request timeout of the options (or forever
    /// without one). During an outage it waits for the reconnect, so it covers the
    /// publishes kept for it.
    pub fn flush(&self) -> Result<(), FlushError> {
        let deadline = self
            .inner()
            .options
            .request_timeout
            .and_then(deadline_after);
        self.flush_until(deadline)
    }

    /// [`Client::flush`] bounded by `timeout`.
    pub fn flush_timeout(&self, timeout: Duration) -> Result<(), FlushError> {
        self.flush_until(deadline_after(timeout))
            .map_err(|e| match e.cause() {
                Some(FlushCause::TimedOut(_)) => FlushCause::TimedOut(timeout).into(),
                _ => e,
            })
    }

    /// Measures a round trip to the server on the live connection, as the async
    /// [`Client::rtt`](crate::Client::rtt) does: a flush's PING, timed until its PONG, within
    /// the request timeout of the options (the error's cause is then
    /// [`RttCause::TimedOut`]). It fails at once with [`RttCause::NotConnected`] while the
    /// client is reconnecting, rather than timing the outage.
    ///
    /// ```no_run
    /// # fn run() -> Result<(), rnats_core::Error> {
    /// let client = rnats_core::blocking::connect("nats://127.0.0.1:4222")?;
    /// println!("round trip to the server: {:?}", client.rtt()?);
    /// # Ok(()) }
    /// ```
    pub fn rtt(&self) -> Result<Duration, RttError> {
        match self.inner().core().state {
            LinkState::Connected => {}
            LinkState::Closed => return Err(RttCause::Closed.into()),
            LinkState::Disconnected | LinkState::Pending => {
                return Err(RttCause::NotConnected.into());
            }
        }
        let timeout = self.inner().options.request_timeout;
        let start = Instant::now();
        match self.flush_until(timeout.and_then(deadline_after)) {
            Ok(()) => Ok(start.elapsed()),
            Err(error) => Err(match error.cause() {
                Some(FlushCause::TimedOut(_)) => RttCause::TimedOut(timeout.unwrap_or_default()),
                Some(cause) => RttCause::from(cause.clone()),
                None => RttCause::Disconnected,
            }
            .into()),
        }
    }

    pub(super) fn flush_until(&self, deadline: Option<Instant>) -> Result<(), FlushError> {
        super::handle::flush_until(self.inner(), deadline)
    }

    /// Unsubscribes every subscription, waits (up to the drain timeout) until the server
    /// has sent what it had for them, then closes. Messages already received stay readable
    /// from their subscribers. From the start of a drain new subscriptions are refused
    /// (`SubscribeCause::Draining`), and a link lost before the drain ends is not
    /// re-established: the client closes and the drain fails. While the connection is down,
    /// or moving to another server (`force_reconnect`, lame duck mode), nothing can be
    /// drained: the client closes at once and the error's cause is
    /// [`FlushCause::NotConnected`].
    pub fn drain(&self) -> Result<(), DrainError> {
        let inner = self.inner();
        let connected = {
            let mut core = inner.core();
            core.session.handle_drain();
            core.session.link.drains_link()
        };
        inner.events.emit(ConnectionEvent::Draining);
        if !connected {
            // As nats.go, which refuses to drain while reconnecting: nothing is on its way,
            // and waiting for a reconnect would only restore what is being taken down.
            inner.close();
            return Err(FlushError::from(FlushCause::NotConnected).into());
        }
        let sids: Vec<u64> = inner
            .core()
            .session
            .subs
            .by_sid
            .iter()
            .filter(|(_, entry)| entry.sink.active())
            .map(|(sid, _)| *sid)
            .collect();
        for sid in &sids {
            inner.unsubscribe(*sid, None, true);
        }
        let flushed = self.flush_until(deadline_after(inner.options.drain_timeout));
        inner.end_subscriptions(&sids);
        inner
            .write
            .finish_writes(inner, inner.options.drain_timeout);
        inner.close();
        flushed.map_err(DrainError::from)
    }

    /// Closes the connection: what was queued is written first (bounded by the connection
    /// timeout); then subscriptions end, waiting requests and flushes fail.
    pub fn close(&self) {
        let inner = self.inner();
        inner
            .write
            .finish_writes(inner, inner.options.connection_timeout);
        inner.close();
    }

    /// Moves to the next server of the pool (a planned move, as off a lame duck server):
    /// what was published before the call is written to the current server, which is
    /// still read until it has answered everything sent to it (replies and flushes in
    /// flight complete), at most for the connection timeout; publishes from now on are
    /// kept for the next link, where subscriptions are restored. Returns once the move has
    /// started; a [`Client::flush`] waits for the next link.
    pub fn force_reconnect(&self) -> Result<(), ReconnectError> {
        if !self.inner().request_move() {
            return Err(ReconnectError::closed());
        }
        Ok(())
    }

    /// The connection events from now on, as an iterator; see [`Events`]. The first
    /// connect's `Connected` came before this client was returned: an `event_callback` in
    /// the options sees it.
    pub fn events(&self) -> Events {
        self.inner().events.listen()
    }

    /// The servers the client (re)connects to, with what it knows of each: those given at
    /// connect (or to [`Client::set_server_pool`]) and those the cluster advertised.
    pub fn server_pool(&self) -> Result<Vec<Server>, ServerPoolError> {
        let inner = self.inner();
        if inner.core().state == LinkState::Closed {
            return Err(ServerPoolError::new(ServerPoolErrorKind::Send));
        }
        Ok(lock(&inner.pool).snapshot())
    }

    /// The server the connection is up to, as the pool names it (the URL given at connect, or
    /// the one the cluster announced; its `Display` leaves out a user and password the URL
    /// carries, which `as_url_str` keeps), as nats.go's
    /// `ConnectedUrl`: which node of a cluster a client landed on after a failover. `None`
    /// while not connected. `server_info()` says what the server says of itself, whose
    /// `host` is often the address it listens on (`0.0.0.0`).
    pub fn connected_server(&self) -> Option<ServerAddr> {
        let inner = self.inner();
        if inner.core().state != LinkState::Connected {
            return None;
        }
        lock(&inner.pool).current().cloned()
    }

    /// Replaces the servers the client reconnects to; the current connection stays up, and
    /// the next reconnect (after a loss, a lame duck move or [`Client::force_reconnect`])
    /// starts with the first of them. Servers the cluster advertises are added to the new
    /// pool as before. Refused as in the async client (an empty pool, an address that does
    /// not parse, WebSocket and plain addresses mixed, a closed client), and also for any
    /// WebSocket address, which the blocking client cannot dial
    /// ([`SetServerPoolErrorKind::InvalidAddress`]).
    pub fn set_server_pool<A: ToServerAddrs>(&self, addrs: A) -> Result<(), SetServerPoolError> {
        let servers = ServerPool::replacement(addrs)?;
        if servers.iter().any(|server| server.is_websocket()) {
            return Err(SetServerPoolError::with_source(
                SetServerPoolErrorKind::InvalidAddress,
                std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    "the blocking client does not support WebSocket",
                ),
            ));
        }
        let inner = self.inner();
        if inner.core().state == LinkState::Closed {
            return Err(SetServerPoolError::new(SetServerPoolErrorKind::Send));
        }
        lock(&inner.pool).replace(servers);
        Ok(())
    }

    /// The latest INFO the server sent.
    pub fn server_info(&self) -> ServerInfo {
        // The Arc is cloned under the lock the readers take, the INFO itself after.
        let info = Arc::clone(self.inner().core().session.info());
        ServerInfo::clone(&info)
    }

    /// Whether the connection's user is bound to the server's system account (the one that
    /// may ask the `$SYS.REQ.>` requests), as the server said in answer to the CONNECT:
    /// nats-server 2.12 and later say so right behind the handshake's PONG, so it is known
    /// once the connect returns, or at the latest once a `flush` after it returns. `false`
    /// from older servers and while disconnected; the account's name is
    /// [`ServerInfo::remote_account`].
    pub fn is_system_account(&self) -> bool {
        let core = self.inner().core();
        core.state == LinkState::Connected && core.session.info().is_system_account
    }

    /// The largest message (headers and payload) the server accepts.
    pub fn max_payload(&self) -> usize {
        self.inner()
            .max_payload
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the connection is up, down, or not made yet.
    pub fn connection_state(&self) -> State {
        self.inner().core().state.public()
    }

    /// Whether the connection is up.
    pub fn is_connected(&self) -> bool {
        self.inner().core().state == LinkState::Connected
    }

    /// Whether the client is closed for good (by `close`, `drain`, or reconnecting giving up).
    pub fn is_closed(&self) -> bool {
        self.inner().core().state == LinkState::Closed
    }

    /// How many times the server told of a changed cluster (each a
    /// [`ConnectionEvent::ClusterChanged`](crate::ConnectionEvent::ClusterChanged)): for
    /// rnats' crates, with
    /// [`Subscriber::next_or_news_watching`](super::Subscriber::next_or_news_watching).
    #[doc(hidden)]
    pub fn cluster_changes(&self) -> u64 {
        self.inner().core().cluster_changes
    }

    /// The client's counters, shared by every clone.
    pub fn statistics(&self) -> Arc<Statistics> {
        Arc::clone(&self.inner().statistics)
    }

    /// A new unique inbox subject under the configured prefix.
    pub fn new_inbox(&self) -> String {
        format!(
            "{}.{}",
            self.inner().options.inbox_prefix,
            crate::id::next()
        )
    }

    /// The request timeout set in the options.
    pub fn timeout(&self) -> Option<Duration> {
        self.inner().options.request_timeout
    }

    /// Checks the size and headers, then queues the frame.
    #[inline]
    fn send(
        &self,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&HeaderMap>,
        payload: &Bytes,
        urgency: Urgency,
        check: SubjectCheck,
    ) -> Result<(), PublishError> {
        let inner = self.inner();
        let header_len = match headers {
            Some(headers) => {
                if !inner
                    .headers_supported
                    .load(std::sync::atomic::Ordering::Relaxed)
                {
                    return Err(PublishCause::HeadersNotSupported.into());
                }
                headers.check().map_err(PublishCause::InvalidHeader)?;
                rnats_proto::encoded_len(headers)
            }
            None => 0,
        };
        let size = header_len + payload.len();
        let max = inner.max_payload.load(std::sync::atomic::Ordering::Relaxed);
        if max != 0 && size > max {
            check.run_now(subject)?;
            return Err(PublishCause::MaxPayloadExceeded { size, max }.into());
        }
        let frame = Pub {
            subject,
            reply,
            headers,
        };
        if inner
            .write
            .publish(inner, &frame, payload, urgency, check)?
        {
            inner.read_behind_publishes();
        }
        Ok(())
    }

    /// Validates a subject for publishing: valid, no wildcards (with
    /// `skip_subject_validation`, only what would break the framing is refused).
    fn checked_publish_subject<'s>(
        &self,
        subject: &'s impl ToSubject,
        owned: &'s mut Option<Subject>,
    ) -> Result<&'s str, PublishError> {
        let text = crate::subject::text_of(subject, owned);
        check_publish(text, self.inner().options.skip_subject_validation)?;
        Ok(text)
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Client")
            .field("state", &self.connection_state())
            .finish_non_exhaustive()
    }
}

/// A subscription subject, checked (wildcards allowed).
fn checked_subject(subject: &impl ToSubject) -> Result<Subject, SubscribeError> {
    let subject = subject.to_subject();
    rnats_proto::validate_subject(subject.as_bytes())?;
    Ok(subject)
}
