//! Replies to requests, for both drivers: one reply's outcome, and request-many (ADR-47):
//! the limits of a gathering and the pure state machine ([`Gather`]) that decides, from the
//! replies and the time, when it ends. The tokio client's `Replies` stream and the blocking
//! client's iterator both drive it, so the two end for the same reasons at the same moments.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{PublishError, RequestCause, RequestError};
use crate::message::Message;
use crate::status::StatusCode;
use crate::subject::{Subject, ToSubject};

/// A reply as its request's outcome: a 503 status says nobody was subscribed. Shared by
/// every request path of both clients.
pub(crate) fn reply_outcome(message: Message) -> Result<Message, RequestError> {
    if message.status == Some(StatusCode::NO_RESPONDERS) {
        return Err(RequestCause::NoResponders.into());
    }
    Ok(message)
}

/// The outcome of a request whose reply comes on an inbox of its own: the subscription's
/// next message, or `None` when it ended with the client.
pub(crate) fn inbox_reply_outcome(reply: Option<Message>) -> Result<Message, RequestError> {
    reply.map_or_else(|| Err(RequestCause::Closed.into()), reply_outcome)
}

/// A predicate over each reply: `true` to keep gathering, `false` to end (ADR-47's sentinel;
/// the message it stops at is not yielded).
pub type Sentinel = Arc<dyn Fn(&Message) -> bool + Send + Sync>;

/// When a request-many ends: the limits of ADR-47. Build it with the setters, then pass it to
/// [`Client::request_many`](crate::Client::request_many)'s builder or the blocking client's `request_many`.
#[derive(Clone, Default)]
pub struct ManyLimits {
    timeout: Option<Duration>,
    stall: Option<Duration>,
    max_messages: Option<usize>,
    sentinel: Option<Sentinel>,
}

impl ManyLimits {
    /// The total time to gather replies, counted from the request. Default: the client's
    /// request timeout (none when the client has none).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The longest wait between two replies once the first has come: a gap this long ends the
    /// request. A stall of zero, or one not shorter than the total timeout, is ignored, as
    /// ADR-47 specifies.
    pub fn stall_wait(mut self, stall: Duration) -> Self {
        self.stall = Some(stall);
        self
    }

    /// The most replies to take; the request ends with the `n`-th. The server is told to stop
    /// delivering after as many.
    pub fn max_messages(mut self, n: usize) -> Self {
        self.max_messages = Some(n);
        self
    }

    /// Ends the request at the first reply for which `keep_going` returns `false`; that reply
    /// is not yielded. ADR-47's predicate: `true` means continue.
    pub fn sentinel<F>(mut self, keep_going: F) -> Self
    where
        F: Fn(&Message) -> bool + Send + Sync + 'static,
    {
        self.sentinel = Some(Arc::new(keep_going));
        self
    }

    /// ADR-47's standard sentinel: a reply with an empty payload (and no status) ends the
    /// request, and is not yielded.
    pub fn sentinel_empty(self) -> Self {
        self.sentinel(|message| !message.payload.is_empty() || message.status.is_some())
    }

    /// The limit on replies, if one was set.
    pub(crate) fn max(&self) -> Option<usize> {
        self.max_messages
    }

    /// Starts the gathering clock at `now`; `default_timeout` is the client's request timeout.
    pub(crate) fn start(&self, now: Instant, default_timeout: Option<Duration>) -> Gather {
        let total = self.timeout.or(default_timeout);
        // ADR-47: a stall of zero or one that is not shorter than the total does nothing.
        let stall = self
            .stall
            .filter(|stall| !stall.is_zero() && total.is_none_or(|total| *stall < total));
        Gather {
            deadline: total.and_then(|total| now.checked_add(total)),
            stall,
            max: self.max_messages,
            sentinel: self.sentinel.clone(),
            received: 0,
            last: now,
            ended: None,
        }
    }
}

impl fmt::Debug for ManyLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManyLimits")
            .field("timeout", &self.timeout)
            .field("stall", &self.stall)
            .field("max_messages", &self.max_messages)
            .field("sentinel", &self.sentinel.is_some())
            .finish()
    }
}

/// Why a request-many ended.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManyEnd {
    /// The total timeout passed.
    Timeout,
    /// No reply came within the stall wait after the previous one.
    Stalled,
    /// The maximum number of replies came.
    MaxMessages,
    /// The sentinel stopped it.
    Sentinel,
    /// The server answered that nobody subscribes to the subject (a 503 status).
    NoResponders,
    /// The subscription ended before any limit: the client closed or drained.
    Closed,
}

/// What to do with a reply.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Hand it to the caller.
    Yield(Message),
    /// The request ended; nothing to hand over.
    End(ManyEnd),
    /// A 503: the request ended, and the caller is told with an error.
    NoResponders,
}

/// The state of one gathering: what has come, and when it must end. Pure: it is told the
/// time, it reads none.
pub(crate) struct Gather {
    deadline: Option<Instant>,
    stall: Option<Duration>,
    max: Option<usize>,
    sentinel: Option<Sentinel>,
    received: usize,
    last: Instant,
    ended: Option<ManyEnd>,
}

impl Gather {
    /// Why it ended, once it has.
    pub(crate) fn ended(&self) -> Option<ManyEnd> {
        self.ended
    }

    /// Takes a reply that came at `now`. A reply that comes after a limit passed, or after
    /// the request ended, is not judged: the verdict is the end.
    pub(crate) fn handle_reply(&mut self, now: Instant, message: Message) -> Verdict {
        if let Some(end) = self.handle_timeout(now) {
            return Verdict::End(end);
        }
        if message.status == Some(StatusCode::NO_RESPONDERS) {
            self.ended = Some(ManyEnd::NoResponders);
            return Verdict::NoResponders;
        }
        if let Some(keep_going) = &self.sentinel
            && !keep_going(&message)
        {
            return self.end(ManyEnd::Sentinel);
        }
        self.received += 1;
        self.last = now;
        if self.max.is_some_and(|max| self.received >= max) {
            self.ended = Some(ManyEnd::MaxMessages);
        }
        Verdict::Yield(message)
    }

    /// Ends the gathering if a time limit passed by `now`; returns the reason it ended.
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> Option<ManyEnd> {
        if self.ended.is_none() {
            if self.deadline.is_some_and(|deadline| now >= deadline) {
                self.ended = Some(ManyEnd::Timeout);
            } else if self.stall_deadline().is_some_and(|stall| now >= stall) {
                self.ended = Some(ManyEnd::Stalled);
            }
        }
        self.ended
    }

    /// The subscription ended under it (the client closed).
    pub(crate) fn handle_closed(&mut self) -> ManyEnd {
        *self.ended.get_or_insert(ManyEnd::Closed)
    }

    /// When the next time limit falls: the total deadline, or the stall wait after the last
    /// reply if that is sooner. `None` while nothing bounds the wait.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        match (self.deadline, self.stall_deadline()) {
            (Some(deadline), Some(stall)) => Some(deadline.min(stall)),
            (deadline, stall) => deadline.or(stall),
        }
    }

    /// The stall limit applies only after the first reply (ADR-47: the first wait is the
    /// total timeout's).
    fn stall_deadline(&self) -> Option<Instant> {
        if self.received == 0 {
            return None;
        }
        self.stall.and_then(|stall| self.last.checked_add(stall))
    }

    fn end(&mut self, end: ManyEnd) -> Verdict {
        self.ended = Some(end);
        Verdict::End(end)
    }
}

/// Checks a request's subject up front, as every publish does, so that the builder carries a
/// typed error rather than a half-made request.
pub(crate) fn checked_request_subject<S: ToSubject + ?Sized>(
    subject: &S,
) -> Result<Subject, RequestError> {
    let subject = subject.to_subject();
    rnats_proto::validate_publish_subject(subject.as_bytes())
        .map_err(|cause| RequestError::from(PublishError::from(cause)))?;
    Ok(subject)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn reply(payload: &'static str) -> Message {
        Message {
            subject: Subject::from_static("_INBOX.x"),
            reply: None,
            payload: Bytes::from_static(payload.as_bytes()),
            headers: None,
            status: None,
            description: None,
            length: payload.len(),
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_first_reply_waits_the_total_and_later_ones_the_stall() {
        let t0 = Instant::now();
        let mut gather = ManyLimits::default()
            .timeout(ms(1000))
            .stall_wait(ms(100))
            .start(t0, None);
        // Before the first reply only the total bounds the wait.
        assert_eq!(gather.poll_timeout(), Some(t0 + ms(1000)));
        assert_eq!(gather.handle_timeout(t0 + ms(500)), None);
        assert!(matches!(
            gather.handle_reply(t0 + ms(500), reply("a")),
            Verdict::Yield(_)
        ));
        assert_eq!(gather.poll_timeout(), Some(t0 + ms(600)));
        assert_eq!(gather.handle_timeout(t0 + ms(599)), None);
        assert_eq!(gather.handle_timeout(t0 + ms(600)), Some(ManyEnd::Stalled));
    }

    #[test]
    fn the_stall_never_stretches_past_the_total() {
        let t0 = Instant::now();
        let mut gather = ManyLimits::default()
            .timeout(ms(1000))
            .stall_wait(ms(300))
            .start(t0, None);
        assert!(matches!(
            gather.handle_reply(t0 + ms(900), reply("a")),
            Verdict::Yield(_)
        ));
        assert_eq!(gather.poll_timeout(), Some(t0 + ms(1000)));
        assert_eq!(gather.handle_timeout(t0 + ms(1000)), Some(ManyEnd::Timeout));
    }

    #[test]
    fn a_reply_that_comes_after_a_limit_is_the_end_not_a_message() {
        let t0 = Instant::now();
        let mut gather = ManyLimits::default().timeout(ms(100)).start(t0, None);
        assert_eq!(
            gather.handle_reply(t0 + ms(100), reply("late")),
            Verdict::End(ManyEnd::Timeout)
        );
        assert_eq!(gather.ended(), Some(ManyEnd::Timeout));
    }

    #[test]
    fn a_stall_of_zero_or_not_shorter_than_the_total_is_ignored() {
        let t0 = Instant::now();
        for stall in [ms(0), ms(1000), ms(5000)] {
            let mut gather = ManyLimits::default()
                .timeout(ms(1000))
                .stall_wait(stall)
                .start(t0, None);
            let _ = gather.handle_reply(t0 + ms(10), reply("a"));
            assert_eq!(gather.poll_timeout(), Some(t0 + ms(1000)), "{stall:?}");
        }
    }

    #[test]
    fn the_client_timeout_is_the_default_and_none_means_unbounded() {
        let t0 = Instant::now();
        let gather = ManyLimits::default().start(t0, Some(ms(2000)));
        assert_eq!(gather.poll_timeout(), Some(t0 + ms(2000)));
        let gather = ManyLimits::default().start(t0, None);
        assert_eq!(gather.poll_timeout(), None);
    }

    #[test]
    fn max_messages_ends_with_the_last_reply_yielded() {
        let t0 = Instant::now();
        let mut gather = ManyLimits::default().max_messages(2).start(t0, None);
        assert!(matches!(
            gather.handle_reply(t0, reply("a")),
            Verdict::Yield(_)
        ));
        assert_eq!(gather.ended(), None);
        assert!(matches!(
            gather.handle_reply(t0, reply("b")),
            Verdict::Yield(_)
        ));
        assert_eq!(gather.ended(), Some(ManyEnd::MaxMessages));
        assert_eq!(
            gather.handle_reply(t0, reply("c")),
            Verdict::End(ManyEnd::MaxMessages)
        );
    }

    #[test]
    fn the_standard_sentinel_stops_at_an_empty_reply_without_yielding_it() {
        let t0 = Instant::now();
        let mut gather = ManyLimits::default().sentinel_empty().start(t0, None);
        assert!(matches!(
            gather.handle_reply(t0, reply("a")),
            Verdict::Yield(_)
        ));
        assert_eq!(
            gather.handle_reply(t0, reply("")),
            Verdict::End(ManyEnd::Sentinel)
        );
        assert_eq!(gather.ended(), Some(ManyEnd::Sentinel));
    }

    #[test]
    fn a_503_ends_the_request_as_no_responders() {
        let t0 = Instant::now();
        let mut gather = ManyLimits::default().sentinel_empty().start(t0, None);
        let mut status = reply("");
        status.status = Some(StatusCode::NO_RESPONDERS);
        // Judged before the sentinel: an empty 503 is not a sentinel.
        assert_eq!(gather.handle_reply(t0, status), Verdict::NoResponders);
        assert_eq!(gather.ended(), Some(ManyEnd::NoResponders));
    }

    #[test]
    fn a_closed_subscription_ends_it_unless_a_limit_already_did() {
        let t0 = Instant::now();
        let mut gather = ManyLimits::default().start(t0, None);
        assert_eq!(gather.handle_closed(), ManyEnd::Closed);
        let mut gather = ManyLimits::default().max_messages(1).start(t0, None);
        let _ = gather.handle_reply(t0, reply("a"));
        assert_eq!(gather.handle_closed(), ManyEnd::MaxMessages);
    }
}
