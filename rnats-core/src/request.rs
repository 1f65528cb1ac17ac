//! Requests multiplexed over one wildcard inbox subscription made at connect.
//!
//! Each request gets a reply subject `<prefix>.<nuid>.<counter>`: a counter, not a random
//! string, so starting a request costs one atomic increment and one map insert.
//!
//! A request arms no timer of its own. Its deadline goes into the request table
//! ([`Waiting`](crate::request_table::Waiting)), and the engine's one timer watches the
//! earliest deadline there (`Engine::drive_timers`): a tokio timer per request locked the
//! timer wheel twice per request and, whenever the wheel was otherwise empty, woke a parked
//! worker through the I/O driver's eventfd so it could shorten its sleep, about 1.7 system
//! calls per request under `strace -c`. Now a request touches the engine only when its
//! deadline is earlier than the one being watched: the first request after a quiet spell,
//! or one with a shorter timeout than those in flight.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rnats_proto::Subject;
use tokio::sync::oneshot;

use crate::Message;
use crate::error::{RequestCause, RequestError};
use crate::otel::{Arrival, RequestClock};
use crate::request_table::Answer;
use crate::shared::{Shared, Sink, SubEntry};
use crate::status::StatusCode;

/// Subscribes the connection's request inbox (`<prefix>.<nuid>.*`).
pub(crate) fn subscribe_inbox(shared: &Shared) {
    let sid = shared.next_sid.fetch_add(1, Ordering::Relaxed);
    let pattern = format!("{}*", shared.reply_prefix);
    // `connect` checked the prefix, so this fails only if that check is wrong.
    let Ok(subject) = Subject::validated(pattern.as_str()) else {
        tracing::error!(%pattern, "request inbox is not a valid subject");
        return;
    };
    shared
        .session()
        .subs
        .insert(sid, SubEntry::new(subject, None, Sink::Requests));
    shared.push_control(|buf| rnats_proto::encode_sub(buf, &pattern, None, sid));
}

/// A request already sent whose reply is awaited later, from [`Client::start_request`]: many
/// can be in flight at once over the client's one request inbox (pipelined JetStream publish
/// acks are made of these). Dropping it frees its slot; a reply arriving after that is
/// dropped.
///
/// With the `opentelemetry` feature and a metrics registration (`otel::metrics`) that
/// times requests, its duration runs from sending to the reply's arrival (not to when it is
/// awaited), and is recorded when [`PendingReply::wait`] ends.
///
/// [`Client::start_request`]: crate::Client::start_request
pub struct PendingReply {
    pending: Pending,
    clock: RequestClock,
}

impl std::fmt::Debug for PendingReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingReply")
            .field("reply_subject", &self.reply_subject())
            .finish()
    }
}

impl PendingReply {
    pub(crate) fn new(pending: Pending, clock: RequestClock) -> PendingReply {
        PendingReply { pending, clock }
    }

    /// The reply subject the request was sent with.
    pub fn reply_subject(&self) -> &str {
        self.pending.reply()
    }

    /// Waits for the reply, up to `timeout` (`None`: until the client closes). A 503 status
    /// becomes `RequestErrorKind::NoResponders`.
    pub async fn wait(self, timeout: Option<Duration>) -> Result<Message, RequestError> {
        self.pending.wait(timeout, self.clock).await
    }

    /// Waits as [`PendingReply::wait`] does, and hands back the request's timing instead of
    /// recording it as a request: for a layer above the client that records the exchange as
    /// an operation of its own (JetStream's publish, with the stream that acked it). `None`
    /// while no registration of the client records durations.
    #[cfg(feature = "opentelemetry")]
    #[cfg_attr(docsrs, doc(cfg(feature = "opentelemetry")))]
    pub async fn wait_timed(
        self,
        timeout: Option<Duration>,
    ) -> (
        Result<Message, RequestError>,
        Option<crate::otel::OperationTiming>,
    ) {
        let PendingReply {
            mut pending,
            mut clock,
        } = self;
        let answer = pending.answer(timeout).await;
        let arrival = match &answer {
            Ok(Answer::Reply(_, arrival)) => *arrival,
            _ => Arrival::none(),
        };
        let timing = clock.stop(arrival, || pending.shared.requests().durations.recorders());
        (outcome(answer, timeout), timing)
    }
}

/// One request waiting for its reply. Dropping it frees its slot, so a cancelled request
/// leaves nothing behind.
pub(crate) struct Pending {
    shared: Arc<Shared>,
    token: u64,
    reply: String,
    rx: Option<oneshot::Receiver<Answer>>,
    /// [`Shared::requests_failed_by_disconnect`] when this request was registered.
    disconnects_at_start: u64,
    /// The engine answered the request (a reply, or its deadline) and removed the entry
    /// itself.
    answered: bool,
}

impl Pending {
    /// A request, with the clock of its duration for the client's metrics (one that reads no
    /// time when none asks for it), to hand to [`Pending::wait`].
    pub(crate) fn register(shared: &Arc<Shared>) -> (Pending, RequestClock) {
        let token = shared.next_token.fetch_add(1, Ordering::Relaxed);
        let mut reply = String::with_capacity(shared.reply_prefix.len() + 20);
        reply.push_str(&shared.reply_prefix);
        reply.push_str(itoa::Buffer::new().format(token));
        let (tx, rx) = oneshot::channel();
        let (disconnects_at_start, clock) = {
            let mut requests = shared.requests();
            let clock = requests.durations.start();
            requests.insert(token, tx, clock.timed());
            let failures = shared.requests_failed_by_disconnect.load(Ordering::Relaxed);
            (failures, clock)
        };
        let pending = Pending {
            disconnects_at_start,
            shared: Arc::clone(shared),
            token,
            reply,
            rx: Some(rx),
            answered: false,
        };
        (pending, clock)
    }

    pub(crate) fn reply(&self) -> &str {
        &self.reply
    }

    /// Waits for the answer, up to `timeout`, and tells `clock` how the request ended.
    ///
    /// The wait is written out here rather than awaited from a shared `async fn`: a nested
    /// future, and the answer moved out of it, cost every request, timed or not, three more
    /// copies of its state (`memcpy`, callgrind).
    pub(crate) async fn wait(
        mut self,
        timeout: Option<Duration>,
        mut clock: RequestClock,
    ) -> Result<Message, RequestError> {
        let rx = match self.arm(timeout) {
            Ok(rx) => rx,
            Err(cause) => return Err(cause.into()),
        };
        let answer = rx.await.map_err(|_| {
            let cause = self.lost();
            clock.finish(
                Arrival::none(),
                || self.shared.requests().durations.recorders(),
                || Some(cause.clone()),
            );
            cause
        })?;
        self.answered = true;
        // The clock is told the outcome's cause rather than shown the outcome: the result is
        // made where it is returned, not kept in a local for a look first, which cost every
        // request, timed or not, a copy of it (one `memcpy`, callgrind).
        let arrival = match &answer {
            Answer::Reply(_, arrival) => *arrival,
            Answer::TimedOut => Arrival::none(),
        };
        clock.finish(
            arrival,
            || self.shared.requests().durations.recorders(),
            || failure_of(&answer, timeout),
        );
        match answer {
            Answer::Reply(message, _) => crate::floor::replies::reply_outcome(message),
            // Only a request with a limit gets a deadline.
            Answer::TimedOut => Err(RequestCause::TimedOut(timeout.unwrap_or_default()).into()),
        }
    }

    /// Waits for the engine's answer, up to `timeout`, or the reason none will come.
    #[cfg(feature = "opentelemetry")]
    async fn answer(&mut self, timeout: Option<Duration>) -> Result<Answer, RequestCause> {
        let rx = self.arm(timeout)?;
        let answer = rx.await.map_err(|_| self.lost())?;
        self.answered = true;
        Ok(answer)
    }

    /// The receiver of the engine's answer, its deadline set when there is a `timeout`; a
    /// request whose receiver was taken already is closed.
    fn arm(
        &mut self,
        timeout: Option<Duration>,
    ) -> Result<oneshot::Receiver<Answer>, RequestCause> {
        let rx = self.rx.take().ok_or(RequestCause::Closed)?;
        // A limit past the clock's range never ends the wait.
        if let Some(at) = timeout.and_then(|limit| self.shared.rt.now().checked_add(limit)) {
            self.shared.watch_request(self.token, at);
        }
        Ok(rx)
    }

    /// Why the answer's sender went without a word. The engine drops every waiting sender
    /// on a disconnect (with `fail_requests_on_disconnect`) and when the client closes; the
    /// state at wake-up may already be a later one, and the disconnect count says which it
    /// was.
    fn lost(&self) -> RequestCause {
        let failures = self
            .shared
            .requests_failed_by_disconnect
            .load(Ordering::Relaxed);
        match failures > self.disconnects_at_start {
            true => RequestCause::Disconnected,
            false => RequestCause::Closed,
        }
    }
}

/// The request's result, from its answer.
#[cfg(feature = "opentelemetry")]
fn outcome(
    answer: Result<Answer, RequestCause>,
    timeout: Option<Duration>,
) -> Result<Message, RequestError> {
    match answer? {
        Answer::Reply(message, _) => crate::floor::replies::reply_outcome(message),
        Answer::TimedOut => Err(RequestCause::TimedOut(timeout.unwrap_or_default()).into()),
    }
}

/// The clock of a request that waits for its reply outside the request table (on an inbox of
/// its own, or a request-many's gathering): it takes the table's lock to learn whether some
/// registration times requests, and so only with the `opentelemetry` feature.
#[inline(always)]
pub(crate) fn clock_outside_table(shared: &Shared) -> RequestClock {
    #[cfg(feature = "opentelemetry")]
    return shared.requests().durations.start();
    #[cfg(not(feature = "opentelemetry"))]
    {
        let _ = shared;
        RequestClock::untimed()
    }
}

/// Why `answer` fails its request, if it does: what the outcome's cause will be.
fn failure_of(answer: &Answer, timeout: Option<Duration>) -> Option<RequestCause> {
    match answer {
        Answer::Reply(message, _) => (message.status == Some(StatusCode::NO_RESPONDERS))
            .then_some(RequestCause::NoResponders),
        Answer::TimedOut => Some(RequestCause::TimedOut(timeout.unwrap_or_default())),
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // A request dropped before its answer (cancelled) still has an entry; one that timed
        // out was taken out by the engine.
        if !self.answered {
            self.shared.requests().remove(self.token);
        }
    }
}
