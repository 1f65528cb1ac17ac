//! [`Messages`]: a pull consumer's messages, one pull request after another (ADR-37), and
//! the recoveries that keep them coming after a fault, as the async stream's
//! (`consumer::pull::stream`): the same books (`Pending`), the same no-responders run
//! (`Unserved`), the same probes and questions (`consumer::pull::lost`), driven by the
//! caller's thread instead of a task.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats_core::Statistics;
use rnats_core::blocking::{Subscriber, Woken};

use super::consumer::{DEFAULT_EXPIRES, EXPIRY_SLACK, heartbeat_of};
use super::context::Context;
use super::message::Message;
use crate::consumer::pull::batch::reply_error;
use crate::consumer::pull::lost::{
    ASK_BOUND, PROBE_HEARTBEAT, PROBE_LIMIT, Probe, ProbeSilence, Questions, says_missing,
    waiting_in,
};
use crate::consumer::pull::pending::{Pending, Reply, message_size};
use crate::consumer::pull::recovery::{Unserved, is_leader_change, leader_advisories};
use crate::consumer::pull::{BatchConfig, MessagesError, MessagesErrorKind, Recoveries};

/// The pause before pulling again after `Exceeded MaxWaiting`, at most (the idle heartbeat
/// if shorter).
const TOO_MANY_WAITING_PAUSE: Duration = Duration::from_secs(1);

/// A pull consumer's messages, one pull request after another, from
/// [`Consumer::messages`](super::Consumer::messages). A new request goes out when half of
/// what was asked for has come (ADR-37). Missed heartbeats and `Exceeded MaxWaiting` are
/// errors the iteration goes on after; a deleted consumer or a refused request end it.
///
/// It recovers as the async stream does from what it can tell of: after a reconnect it pulls
/// again at once (the request went with the old connection), and no pulls go out while the
/// connection is down; a request nobody serves (503: the consumer has no leader during an
/// election, or does not exist) is asked again after 250 ms, doubling to 2 s, and is an
/// error item ([`NoResponders`](MessagesErrorKind::NoResponders)) only once it has lasted
/// as long as two idle heartbeats, the iteration going on; a 409 `Leadership Change`, or a
/// new leader of the consumer or its stream announced on their advisory subjects (under the
/// default `$JS.API` prefix), pulls again at once. [`recoveries`](Self::recoveries) counts
/// these.
///
/// A request the server dropped without a word (a leader that stepped down before it could
/// hand the request on, a request whose reply interest was lost across a cut route or leaf
/// link) is found out before two heartbeats are missed, as in the async stream (see
/// [`Recoveries::lost_pulls`]): after a fault (a reconnect, a leader change, no
/// responders) requests ask for a heartbeat a second for as long as missed heartbeats would
/// take to tell, and four silent seconds mean the request is gone; otherwise, when a
/// heartbeat is late (one and a half intervals without a word), the consumer's leader is
/// asked whether anybody waits (`CONSUMER.INFO`, at once and then about 6 and 12 s later),
/// and nobody waiting for a request still open means it is gone. Either way the iteration
/// pulls again at once, without an error item. A question does not hold the caller: its
/// answer is read when it comes (within 3 s, or it counts as none), in that call or a later
/// one, so a caller waiting briefly with [`next_timeout`](Self::next_timeout) gets it too.
/// Silence is judged only once what came while the caller was away has been read.
pub struct Messages {
    subscriber: Subscriber,
    inbox: String,
    subject: String,
    context: Context,
    request: BatchConfig,
    pending: Pending,
    heartbeat: Option<Duration>,
    /// How long a pull request may stay unanswered before it counts as lost.
    expiry: Duration,
    /// When the last message or status was read (or the last pull request went out).
    /// Silence is judged only once the subscription was found empty (`drained`), so what
    /// came while the caller was away is read first.
    last_heard: Instant,
    /// Whether the subscription was found empty since the last message read in this call.
    drained: bool,
    /// Whether this silence was found late yet (questions are asked once a silence).
    late_told: bool,
    /// Requests after a fault ask for a heartbeat a second (see `pull::lost`).
    probe: Probe,
    /// The questions after a late heartbeat, while a spell of them is on.
    questions: Option<Questions>,
    /// The last question's answer, the leader's count of waiting requests (`None` inside:
    /// no answer that counts), weighed once the replies that came before it are read.
    answer: Option<Option<usize>>,
    /// The client's connections made when the requests open now went out
    /// ([`Statistics::connects`](rnats_core::Statistics::connects)).
    connects: u64,
    /// The client's counters, looked at each round for a new connection (kept, so that the
    /// look is one load, not a count of references up and down).
    statistics: Arc<Statistics>,
    /// The changes of the server's cluster the client had been told of when the requests
    /// open now went out
    /// ([`Client::cluster_changes`](rnats_core::blocking::Client::cluster_changes)).
    cluster_changes: u64,
    /// No pull before this (after no responders).
    hold_until: Option<Instant>,
    /// The requests nobody served, in a row.
    no_responders: Option<Unserved>,
    recoveries: Recoveries,
    /// `CONSUMER.INFO.<stream>.<consumer>`, without the prefix.
    info_subject: String,
    /// [`end_if_consumer_missing`](Messages::end_if_consumer_missing) was asked for.
    end_if_missing: bool,
    /// No responders is an item at once (an ordered consumer makes itself again on it).
    eager_no_responders: bool,
    /// What the wait for the next reply also watches: first the subscriptions to the
    /// election advisories of the consumer's and its stream's leaders (`advisories` of them;
    /// none under another API prefix, or when they could not be made), followed as the
    /// async stream follows them (`take_news`); then, once a question was asked, the
    /// subscription its answers come to (`take_answer`).
    watched: Vec<Subscriber>,
    advisories: usize,
    /// The inbox of the questions' answers, each question's own subject under it.
    answers: Option<String>,
    /// The question out, by number, and when it was asked.
    asked: Option<(u64, Instant)>,
    /// Questions asked so far.
    questions_asked: u64,
    done: bool,
}

impl Messages {
    /// Pulls from `consumer` of `stream`, whose next-message subject is `subject`, with
    /// `request`, the replies coming to `inbox`, which `subscriber` reads. Nothing is sent
    /// before the first call but the subscriptions to the leaders' election advisories.
    pub(super) fn new(
        context: Context,
        request: BatchConfig,
        subscriber: Subscriber,
        inbox: String,
        subject: String,
        [stream, consumer]: [&str; 2],
    ) -> Messages {
        // Interest only: the servers publish there on an election, never in steady state.
        // Without them a lost request is found by the probes, questions and heartbeats.
        let watched: Vec<Subscriber> = leader_advisories(context.prefix(), stream, consumer)
            .map(|subjects| {
                subjects
                    .iter()
                    .map(|subject| context.client.subscribe(subject.as_str()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .and_then(Result::ok)
            .unwrap_or_default();
        let info_subject = format!("CONSUMER.INFO.{stream}.{consumer}");
        let heartbeat = heartbeat_of(request.idle_heartbeat);
        let window = heartbeat.unwrap_or_default();
        Messages {
            pending: Pending::new(request.batch, request.max_bytes),
            probe: Probe::new(request.idle_heartbeat, request.expires, window),
            heartbeat,
            // A request also ends at its expiry: waiting past it means it is lost.
            expiry: request
                .expires
                .unwrap_or(DEFAULT_EXPIRES)
                .saturating_add(EXPIRY_SLACK),
            request,
            subscriber,
            inbox,
            subject,
            connects: context.connects(),
            statistics: context.client.statistics(),
            cluster_changes: context.client.cluster_changes(),
            context,
            last_heard: Instant::now(),
            drained: false,
            late_told: false,
            questions: None,
            answer: None,
            hold_until: None,
            no_responders: None,
            recoveries: Recoveries::default(),
            info_subject,
            end_if_missing: false,
            eager_no_responders: false,
            advisories: watched.len(),
            watched,
            answers: None,
            asked: None,
            questions_asked: 0,
            done: false,
        }
    }

    /// The next message, waiting up to `timeout`: `Ok(None)` if none came in time or the
    /// iteration ended (a terminal error is returned first).
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Message>, MessagesError> {
        let deadline = Instant::now().checked_add(timeout);
        self.next_until(deadline).transpose().map(Option::flatten)
    }

    /// What this iteration recovered from without an error item.
    pub fn recoveries(&self) -> Recoveries {
        self.recoveries
    }

    /// Ends the iteration with [`ConsumerDeleted`](MessagesErrorKind::ConsumerDeleted)
    /// when the server says that the consumer or its stream does not exist, as the async
    /// [`StreamBuilder::end_if_consumer_missing`](crate::consumer::pull::StreamBuilder::end_if_consumer_missing)
    /// does: asked (`$JS.API.CONSUMER.INFO`, waiting up to 3 s) when nobody served two
    /// requests in a row, and again after four, eight... Without it, a consumer deleted
    /// while the connection was down is asked for again and again.
    pub fn end_if_consumer_missing(mut self) -> Messages {
        self.end_if_missing = true;
        self
    }

    /// Reports no responders at once, for a caller that makes the consumer again on it.
    pub(super) fn eager_no_responders(mut self) -> Messages {
        self.eager_no_responders = true;
        self
    }

    /// The next message or error; `Some(Ok(None))` when `deadline` passed first, `None`
    /// when the iteration is over.
    pub(super) fn next_until(
        &mut self,
        deadline: Option<Instant>,
    ) -> Option<Result<Option<Message>, MessagesError>> {
        // What came while the caller was away is read before any silence is judged.
        self.drained = false;
        while !self.done {
            // A reconnect between two calls: the open requests went with the old link, and
            // the next pull must not go out before the books are reset.
            if self.statistics.connects.load(Ordering::Relaxed) != self.connects {
                self.reconnected();
            }
            if self.hold_until.is_some_and(|hold| Instant::now() >= hold) {
                self.hold_until = None;
            }
            // No pulls while held back after a refusal, nor while the connection is down
            // (the state's lock, so only when one is due): the reconnect wakes the wait
            // below, and a pull goes out then.
            if self.hold_until.is_none()
                && self.pending.wants_pull()
                && self.context.client.is_connected()
            {
                // Signs of a fault already in (an advisory behind replies taken earlier,
                // say) are taken first, so that this pull is the one they call for.
                self.take_news();
                if let Err(error) = self.pull_if_due() {
                    return Some(Err(error));
                }
            }
            let now = Instant::now();
            // Heartbeats are missed when none came for two intervals since the server was
            // last heard (over as many calls as it takes); without heartbeats a request is
            // given up once its expiry passed. After a fault a probing request's four silent
            // seconds tell sooner.
            let silence = match self.probe.is_on() {
                true => PROBE_LIMIT,
                false => self.heartbeat.unwrap_or(self.expiry),
            };
            let quiet_until = self.last_heard.checked_add(silence).unwrap_or(now);
            if self.drained && now >= quiet_until {
                self.heard(now);
                self.questions = None;
                self.answer = None;
                self.asked = None;
                if !self.context.client.is_connected() {
                    // Silence while the connection is down is nobody's fault.
                    continue;
                }
                match self.probe.silence(self.pending.has_open()) {
                    ProbeSilence::Unwatched => {}
                    // A request sent after a fault is gone: again at once, quietly.
                    ProbeSilence::Lost => {
                        self.pending.reset();
                        self.recoveries.lost_pulls += 1;
                        continue;
                    }
                    // Judged by the usual heartbeat from here.
                    ProbeSilence::Over => continue,
                }
                // Every open request is presumed gone; the next round pulls again.
                self.pending.reset();
                self.recoveries.missed_heartbeats += 1;
                if self.heartbeat.is_some() {
                    let error = MessagesError::new(MessagesErrorKind::MissingHeartbeat);
                    return Some(Err(error));
                }
                continue;
            }
            let mut until = quiet_until;
            if self.drained
                && let Some(question) = self.drive_questions(now)
            {
                until = until.min(question);
            }
            if self.answer.is_some() {
                // What came before the answer (during the question) is read before it is
                // weighed.
                self.drained = false;
            }
            if !self.drained {
                // Only a look at what is already here.
                until = now;
            }
            if let Some(hold) = self.hold_until {
                until = until.min(hold);
            }
            if let Some(deadline) = deadline {
                until = until.min(deadline);
            }
            let message = match self.subscriber.next_or_news_watching(
                Some(until),
                self.connects,
                self.cluster_changes,
                &mut self.watched,
            ) {
                Woken::Message(message) => message,
                Woken::Ended => {
                    self.done = true;
                    return None;
                }
                Woken::TimedOut => {
                    self.drained = true;
                    if let Some(waiting) = self.answer.take() {
                        self.weigh(waiting);
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Some(Ok(None));
                    }
                    // The silence and the hold are judged at the top.
                    continue;
                }
                // A reconnect; a changed cluster (a request routed to the consumer's leader
                // may have died with a cut route, and the leader, still leader, elects
                // nobody: nothing else would tell); an election advisory.
                Woken::Reconnected | Woken::ClusterChanged | Woken::Watched => {
                    self.take_news();
                    self.take_answer();
                    // What came on this subscription with the news is read before any
                    // silence is judged.
                    self.drained = false;
                    continue;
                }
            };
            self.drained = false;
            self.heard(Instant::now());
            if let Some(result) = self.handle(message, deadline) {
                return Some(result.map(Some));
            }
        }
        None
    }

    /// The client connected again: the open requests went with the old connection, so the
    /// next round pulls again at once.
    fn reconnected(&mut self) {
        self.connects = self.context.connects();
        self.pending.reset();
        self.hold_until = None;
        self.heard(Instant::now());
        self.start_probe();
        self.recoveries.reconnects += 1;
    }

    /// Takes in every sign of a fault already here (a new connection, a changed cluster,
    /// election advisories), each counted, and presumes the open requests gone if there was
    /// one: the next round's one pull covers them all, as one poll of the async stream
    /// does, rather than one pull each.
    fn take_news(&mut self) {
        let mut news = false;
        if self.statistics.connects.load(Ordering::Relaxed) != self.connects {
            self.reconnected();
            news = true;
        }
        let changes = self.context.client.cluster_changes();
        if changes != self.cluster_changes {
            self.cluster_changes = changes;
            self.recoveries.cluster_changes += 1;
            news = true;
        }
        // A new leader of the consumer holds none of the old one's requests; one of the
        // stream is followed as the async stream follows it (a request on a consumer
        // leader that stays may be pulled again once, which costs a batch's room).
        for advisory in &mut self.watched[..self.advisories] {
            while advisory.try_next().is_some() {
                self.recoveries.leader_changes += 1;
                news = true;
            }
        }
        if news {
            self.pending.reset();
            self.hold_until = None;
            self.start_probe();
        }
    }

    /// The server was heard from (or a request just went out) at `now`: the silence starts
    /// again.
    fn heard(&mut self, now: Instant) {
        self.last_heard = now;
        self.late_told = false;
    }

    /// A fault: for a while the requests ask for a heartbeat a second, and four seconds of
    /// silence tell that one is gone; questions about the old requests are dropped.
    fn start_probe(&mut self) {
        self.questions = None;
        self.answer = None;
        self.asked = None;
        self.probe.start(Instant::now());
    }

    /// Asks the consumer's leader whether the request still waits when a heartbeat is late
    /// (three quarters of the missed-heartbeat limit without a word, once a silence): at
    /// once, then about 6 and 12 s later, until the silence ends or is a miss (see
    /// `pull::lost`). The question goes out without waiting for its answer, which comes to
    /// a watched subscription and wakes the wait (`take_answer`), in this call or a later
    /// one, so a caller waiting any time gets it; one not in within 3 s counts as none. The
    /// answer is left in `answer`. Returns when to look again, while a question may still
    /// come or be answered this silence.
    fn drive_questions(&mut self, now: Instant) -> Option<Instant> {
        let limit = self.heartbeat?;
        if self.probe.is_on() || self.answer.is_some() {
            return None;
        }
        if let Some((_, at)) = self.asked {
            let bound = at.checked_add(self.ask_bound())?;
            if now < bound {
                return Some(bound);
            }
            self.asked = None;
            self.unanswered();
            return None;
        }
        let late_at = self.last_heard.checked_add(limit / 4 * 3)?;
        if !self.late_told && now >= late_at {
            // Late again within a spell (a status in between) brings its question on.
            self.late_told = true;
            match self.questions.as_mut() {
                Some(questions) => questions.ask_now(now),
                None => self.questions = Some(Questions::new(now, limit)),
            }
        }
        let Some(next) = self.questions.as_ref().map(Questions::next_at) else {
            return (!self.late_told).then_some(late_at);
        };
        if now < next {
            return Some(next);
        }
        let over = self.questions.as_ref()?.is_over(now);
        if over || !self.context.client.is_connected() {
            // The connection's return brings a pull, and a probe watches it.
            self.questions = None;
            return None;
        }
        match self.ask() {
            Some(id) => {
                self.asked = Some((id, now));
                now.checked_add(self.ask_bound())
            }
            None => {
                self.unanswered();
                None
            }
        }
    }

    /// How long a question's answer may take: 3 s, or the context's timeout if shorter.
    fn ask_bound(&self) -> Duration {
        ASK_BOUND.min(self.context.timeout())
    }

    /// Sends a question for the leader's count of waiting requests (see
    /// `pull::lost::waiting_in`), to be answered on a subject of its own; its number, or
    /// `None` when it could not go out.
    fn ask(&mut self) -> Option<u64> {
        let client = &self.context.client;
        let inbox = match &self.answers {
            Some(inbox) => inbox.clone(),
            None => {
                let inbox = client.new_inbox();
                let subscriber = client.subscribe(format!("{inbox}.*")).ok()?;
                self.watched.push(subscriber);
                self.answers = Some(inbox.clone());
                inbox
            }
        };
        self.questions_asked += 1;
        let id = self.questions_asked;
        let subject = format!("{}.{}", self.context.prefix(), self.info_subject);
        client
            .publish_with_reply(subject, format!("{inbox}.{id}"), Bytes::new())
            .ok()?;
        Some(id)
    }

    /// Reads the answers that came: the one to the question out gives the verdict; any
    /// other answers a question about requests since replaced, and is dropped.
    fn take_answer(&mut self) {
        let Some(answers) = self.watched.get_mut(self.advisories) else {
            return;
        };
        while let Some(answer) = answers.try_next() {
            let Some((id, _)) = self.asked else {
                continue;
            };
            let number = answer.subject.as_str().rsplit('.').next();
            if number.and_then(|n| n.parse::<u64>().ok()) != Some(id) {
                continue;
            }
            self.asked = None;
            self.answer = Some(waiting_in(&answer.payload));
        }
    }

    /// The question out has no answer that counts (none within its bound, or it could not
    /// be asked).
    fn unanswered(&mut self) {
        self.answer = Some(None);
    }

    /// Acts on the leader's answer, `waiting` requests, now that the replies before it are
    /// read: nobody waits for a request still open, so it is gone and the next round pulls
    /// again.
    fn weigh(&mut self, waiting: Option<usize>) {
        let open = self.pending.has_open();
        let Some(questions) = self.questions.as_mut() else {
            return;
        };
        let verdict = questions.answered(Instant::now(), waiting, open);
        if verdict.over {
            self.questions = None;
        }
        if verdict.lost {
            self.pending.reset();
            self.recoveries.lost_pulls += 1;
        }
    }

    /// Reads one message of the pull subscription: a stream message or an error for the
    /// caller, or `None` for a status that only changes the books. `deadline` bounds the
    /// question [`end_if_consumer_missing`](Self::end_if_consumer_missing) may ask.
    fn handle(
        &mut self,
        message: rnats_core::Message,
        deadline: Option<Instant>,
    ) -> Option<Result<Message, MessagesError>> {
        let reply = Reply::classify(&message);
        if matches!(reply, Reply::Message | Reply::Heartbeat) {
            // The request lives: a question about it, or its answer, is beside the point.
            self.no_responders = None;
            self.questions = None;
            self.answer = None;
            self.asked = None;
        }
        match reply {
            Reply::Message => {
                self.pending.handle_message(message_size(&message));
                let context = self.context.clone();
                Some(Ok(Message { message, context }))
            }
            Reply::Heartbeat => None,
            Reply::Ended {
                messages, bytes, ..
            } => {
                if is_leader_change(&message) {
                    // Every open request lived on the leader that stepped down.
                    self.pending.reset();
                    self.hold_until = None;
                    self.start_probe();
                    self.recoveries.leader_changes += 1;
                    // The election's advisory, if already here, needs no pull of its own.
                    self.take_news();
                } else {
                    self.pending.handle_ended(messages, bytes);
                }
                None
            }
            Reply::TooManyWaiting(description) => {
                // This request was refused; another goes out after a pause, so that a busy
                // consumer is not hammered (as the async stream does).
                self.pending.handle_ended(None, None);
                let pause = match self.request.idle_heartbeat {
                    beat if beat.is_zero() => TOO_MANY_WAITING_PAUSE,
                    beat => beat.min(TOO_MANY_WAITING_PAUSE),
                };
                self.hold_until = Instant::now().checked_add(pause);
                Some(Err(MessagesError::with_source(
                    MessagesErrorKind::RequestLimitExceeded,
                    description,
                )))
            }
            Reply::NoResponders => self.handle_no_responders(deadline),
            other => {
                self.done = true;
                Some(Err(reply_error(other)))
            }
        }
    }

    /// Nobody served a request: ask again after a backoff; an error item only once it has
    /// lasted as long as missed heartbeats would take to tell (at once without heartbeats),
    /// and the end when asked to end on a missing consumer and the server says it is.
    fn handle_no_responders(
        &mut self,
        deadline: Option<Instant>,
    ) -> Option<Result<Message, MessagesError>> {
        self.pending.handle_ended(None, None);
        self.recoveries.no_responders += 1;
        // The retry may reach a leader about to step down (see `pull::lost`).
        self.start_probe();
        let now = Instant::now();
        let step = self
            .no_responders
            .get_or_insert_with(|| Unserved::new(now))
            .next(
                now,
                self.request.idle_heartbeat,
                self.heartbeat.unwrap_or_default(),
                self.eager_no_responders,
            );
        self.hold_until = now.checked_add(step.wait);
        if step.ask_missing && self.consumer_missing(deadline) {
            self.done = true;
            return Some(Err(MessagesError::new(MessagesErrorKind::ConsumerDeleted)));
        }
        let kind = step.report?;
        if kind == MessagesErrorKind::MissingHeartbeat {
            self.recoveries.missed_heartbeats += 1;
        }
        Some(Err(MessagesError::new(kind)))
    }

    /// Whether, asked to end on a missing consumer, the server says that the consumer or
    /// its stream does not exist (10014, 10059; see `pull::lost::is_missing`). The question
    /// waits at most 3 s, and not past `deadline`.
    fn consumer_missing(&self, deadline: Option<Instant>) -> bool {
        if !self.end_if_missing {
            return false;
        }
        let Some(bound) = question_bound(deadline) else {
            return false;
        };
        let answer = self
            .context
            .api_request_within(&self.info_subject, Bytes::new(), bound)
            .ok()
            .and_then(|message| serde_json::from_slice(&message.payload).ok());
        answer.is_some_and(|answer| says_missing(&answer))
    }

    /// Sends a pull request when what is still to come ran down to the threshold.
    fn pull_if_due(&mut self) -> Result<(), MessagesError> {
        if !self.pending.wants_pull() {
            return Ok(());
        }
        let now = Instant::now();
        // After a fault, a heartbeat a second (see `pull::lost`).
        let probe;
        let request = match self.probe.request(now) {
            true => {
                probe = BatchConfig {
                    idle_heartbeat: PROBE_HEARTBEAT,
                    ..self.request.clone()
                };
                &probe
            }
            false => &self.request,
        };
        let payload = serde_json::to_vec(request)
            .map_err(|error| MessagesError::with_source(MessagesErrorKind::Pull, error))?;
        self.context
            .client
            .publish_with_reply(
                self.subject.as_str(),
                self.inbox.as_str(),
                Bytes::from(payload),
            )
            .map_err(|error| MessagesError::with_source(MessagesErrorKind::Pull, error))?;
        self.pending.handle_pull_sent();
        // A request just sent has had no time to be answered: its silence starts now, and
        // an answer about the requests before it is beside the point.
        self.heard(now);
        self.answer = None;
        self.asked = None;
        if let Some(questions) = self.questions.as_mut() {
            questions.pulled(now);
        }
        Ok(())
    }
}

impl Iterator for Messages {
    type Item = Result<Message, MessagesError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_until(None)? {
                Ok(Some(message)) => return Some(Ok(message)),
                // No deadline: only a lost request gets here; pull again.
                Ok(None) => continue,
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages")
            .field("subject", &self.subject)
            .field("pending", &self.pending)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

/// How long a question to the server may wait: 3 s, and not past `deadline`; `None` when
/// the deadline has passed.
fn question_bound(deadline: Option<Instant>) -> Option<Duration> {
    let bound = match deadline {
        Some(deadline) => ASK_BOUND.min(deadline.saturating_duration_since(Instant::now())),
        None => ASK_BOUND,
    };
    (!bound.is_zero()).then_some(bound)
}
