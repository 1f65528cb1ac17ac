//! Continuous pull consumption (ADR-37): one reply subscription, pull requests sent whenever
//! the buffered count falls to a threshold (half a request unless set), idle heartbeats
//! watched, and recovery from expiries, missed heartbeats, reconnects, leader changes and no
//! responders without ending the stream (see [`recovery`](super::recovery) for what is recovered silently).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::Select;
use futures_util::{FutureExt, StreamExt};
use rnats_core::header::NATS_PIN_ID;
use rnats_core::runtime::{self, Sleep};
use rnats_core::{ConnectionEvent, Events, PublishError, Subject, Subscriber, UnsubscribeError};

use super::batch::reply_error;
use super::builders::{BatchConfig, PullRequest};
use super::lost::{LostPull, PROBE_HEARTBEAT, PROBE_LIMIT, Probe, ProbeSilence, is_missing};
use super::pending::{Pending, Reply, message_size};
use super::recovery::{Recoveries, Unserved, is_leader_change, leader_advisories};
use super::{Config, MessagesError, MessagesErrorKind};
use crate::consumer::heartbeat::{Monitor, Silence};
use crate::consumer::{Consumer, PriorityPolicy, StreamError, StreamErrorKind};
use crate::context::Context;
use crate::message::Message;

/// Subscription messages handled in one poll before yielding to the runtime.
const MAX_ROUNDS: usize = 64;
/// Slack past a request's expiry before a silent consumer (no heartbeats asked for) is
/// presumed to have lost it.
const EXPIRY_SLACK: Duration = Duration::from_secs(5);
/// The wait before pulling again after `Exceeded MaxWaiting` or no responders, when there is
/// no heartbeat interval to go by.
const RETRY_WAIT: Duration = Duration::from_secs(1);

/// The messages of a pull consumer, pulled continuously; from
/// [`Consumer::messages`](Consumer::messages) or [`StreamBuilder`](super::StreamBuilder).
///
/// Error items are warnings unless said otherwise: after
/// [`MissingHeartbeat`](MessagesErrorKind::MissingHeartbeat) a new pull request goes out and
/// the stream goes on. That item comes only for a heartbeat the caller asked for
/// ([`Consumer::messages`](Consumer::messages) asks for 15 s); the heartbeats a
/// [`StreamBuilder`](super::StreamBuilder) asks for without being told are missed quietly. It ends after `ConsumerDeleted`, `PushBasedConsumer`, a request over
/// the consumer's limits, and 400 Bad Request; with
/// [`end_if_consumer_missing`](super::StreamBuilder::end_if_consumer_missing), also when the
/// server says the consumer is gone (as `ConsumerDeleted`).
///
/// A request the client knows to be lost (after a reconnect, a leader change, or a reply of
/// no responders while the consumer elects a leader) is sent again at once or after a short
/// backoff, without an error item; [`recoveries`](Self::recoveries) counts these. No
/// responders lasting two idle heartbeats is reported as
/// [`NoResponders`](MessagesErrorKind::NoResponders), and the stream keeps asking.
///
/// A request the server dropped without a word is found out sooner than by two missed
/// heartbeats: for a while after a fault the requests ask for a heartbeat every second, and
/// a heartbeat late by half an interval is asked after with `$JS.API.CONSUMER.INFO` (a
/// client that may not send it gets a permissions error for the question, and the missed
/// heartbeat then tells as before). Both are counted in
/// [`Recoveries::lost_pulls`](super::Recoveries::lost_pulls).
///
/// [`drain`](Self::drain) stops it gracefully: no more pull requests, and the stream ends
/// after the last message the server sent, so that every message delivered can be acked
/// (ADR-37 "Stop and Drain"). Dropping the stream instead loses what it held, which the
/// server sends again only after the consumer's `ack_wait`.
pub struct Stream {
    subscriber: Subscriber,
    context: Context,
    /// `CONSUMER.MSG.NEXT.<stream>.<consumer>` with the prefix.
    subject: String,
    inbox: Subject,
    request: BatchConfig,
    pending: Pending,
    heartbeat: Monitor,
    /// Whether a missed heartbeat is reported (heartbeats were asked for) or only acted on
    /// (the monitor watches the request's expiry instead).
    report_missed: bool,
    events: Events,
    /// No pull requests go out while the connection is down (ADR-37).
    connected: bool,
    /// The pull request being published.
    pull: Option<BoxFuture<'static, Result<(), PublishError>>>,
    /// No pull before this fires (after the server turned one away).
    hold: Option<Pin<Box<Sleep>>>,
    /// The pin id, tracked for a `PinnedClient` consumer only.
    pin_id: Option<Option<String>>,
    /// New leaders of the consumer and its stream: a request at the old one may be gone.
    advisories: Option<Select<Subscriber, Subscriber>>,
    /// The requests nobody served, in a row.
    no_responders: Option<Unserved>,
    /// Whether no responders is reported at once (an ordered consumer recreates itself).
    eager_no_responders: bool,
    recoveries: Recoveries,
    /// Requests after a fault ask for a heartbeat a second (see `lost`).
    probe: Probe,
    /// The silence that is a miss outside a probe's watch.
    usual_limit: Duration,
    /// Questions after a late heartbeat (see `lost`).
    lost: LostPull,
    /// Draining (ADR-37): no pull requests, no heartbeats owed, warnings of what would only
    /// matter to the next request kept back; the subscription ends after its last message.
    draining: bool,
    /// With [`StreamBuilder::end_if_consumer_missing`](super::StreamBuilder::end_if_consumer_missing):
    /// the consumer's `CONSUMER.INFO` subject, asked while nobody serves its requests.
    missing: Option<String>,
    /// That question on its way: whether the consumer or its stream is gone.
    asking_missing: Option<BoxFuture<'static, bool>>,
    terminated: bool,
}

/// What a stream makes of the idle heartbeats its requests ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Heartbeats {
    /// Chosen by the user: a miss is an error item, and a late one is asked after.
    Reported,
    /// Chosen by the client (ADR-37): a miss only makes the stream pull again.
    Quiet,
}

impl Stream {
    /// Subscribes to a fresh inbox; the first pull request goes out on the first poll.
    /// Requests are refilled at half a request, and missed heartbeats reported.
    pub(crate) async fn start(
        consumer: &Consumer<Config>,
        request: BatchConfig,
    ) -> Result<Stream, StreamError> {
        let pending = Pending::new(request.batch, request.max_bytes);
        Stream::start_with(consumer, request, pending, Heartbeats::Reported).await
    }

    /// [`start`](Self::start), refilled as `pending` says and with `heartbeats`.
    pub(crate) async fn start_with(
        consumer: &Consumer<Config>,
        request: BatchConfig,
        pending: Pending,
        heartbeats: Heartbeats,
    ) -> Result<Stream, StreamError> {
        let client = &consumer.context.client;
        // Subscribe to the events before the inbox so that no reconnect falls between.
        let events = client.events();
        let inbox = Subject::from(client.new_inbox());
        let subscriber = client
            .subscribe(inbox.clone())
            .await
            .map_err(|error| StreamError::with_source(StreamErrorKind::Other, error))?;
        let (heartbeat, report_missed) = match (request.idle_heartbeat, request.expires) {
            (heartbeat, _) if !heartbeat.is_zero() && heartbeats == Heartbeats::Reported => {
                (Monitor::new(heartbeat).warning_when_overdue(), true)
            }
            // No questions and no probes either: a program written for async-nats sees no
            // more traffic after a fault than it did (a client without the permission to
            // ask would see a permissions error).
            (heartbeat, _) if !heartbeat.is_zero() => (Monitor::new(heartbeat), false),
            (_, Some(expires)) if !expires.is_zero() => (
                Monitor::with_limit(expires.saturating_add(EXPIRY_SLACK)),
                false,
            ),
            _ => (Monitor::new(Duration::ZERO), false),
        };
        let pinned = consumer.config.priority_policy == PriorityPolicy::PinnedClient;
        let advisories = match leader_advisories(
            consumer.context.prefix(),
            &consumer.info.stream_name,
            &consumer.info.name,
        ) {
            // Interest only: the servers publish here on an election, never in steady state.
            Some([consumer_leader, stream_leader]) => {
                let consumer_leader = client.subscribe(consumer_leader).await;
                let stream_leader = client.subscribe(stream_leader).await;
                match (consumer_leader, stream_leader) {
                    (Ok(a), Ok(b)) => Some(futures_util::stream::select(a, b)),
                    // Without them a lost request is noticed by its heartbeats, as before.
                    _ => None,
                }
            }
            None => None,
        };
        let lost = LostPull::new(
            consumer.context.clone(),
            &consumer.info.stream_name,
            &consumer.info.name,
            heartbeat.limit(),
        );
        let window = if report_missed {
            heartbeat.limit()
        } else {
            Duration::ZERO
        };
        let probe = Probe::new(request.idle_heartbeat, request.expires, window);
        let usual_limit = heartbeat.limit();
        Ok(Stream {
            subscriber,
            context: consumer.context.clone(),
            subject: consumer.next_subject(),
            inbox,
            pending,
            request,
            heartbeat,
            report_missed,
            events,
            connected: true,
            pull: None,
            hold: None,
            pin_id: pinned.then_some(None),
            advisories,
            no_responders: None,
            eager_no_responders: false,
            recoveries: Recoveries::default(),
            probe,
            usual_limit,
            lost,
            draining: false,
            missing: None,
            asking_missing: None,
            terminated: false,
        })
    }

    /// Stops the stream gracefully (ADR-37 "Stop and Drain"): sends no more pull requests,
    /// unsubscribes the reply inbox and waits (a PING/PONG round trip) until every message the
    /// server sent before that has arrived. The stream then yields what it holds, to be acked
    /// as usual, and ends with `None`. Requests still open at the server lapse: it delivers
    /// nothing to an inbox nobody listens on.
    ///
    /// On an error (the connection went down or closed) the stream ends after what already
    /// arrived; messages the server sent meanwhile come again after the consumer's
    /// `ack_wait`.
    ///
    /// ```no_run
    /// # async fn run(consumer: rnats_jetstream::consumer::PullConsumer) -> Result<(), rnats_core::Error> {
    /// use futures_util::StreamExt;
    /// let mut messages = consumer.messages().await?;
    /// let shutdown = tokio::signal::ctrl_c();
    /// tokio::pin!(shutdown);
    /// loop {
    ///     tokio::select! {
    ///         _ = &mut shutdown => break,
    ///         Some(message) = messages.next() => message?.ack().await?,
    ///     }
    /// }
    /// messages.drain().await?;
    /// while let Some(message) = messages.next().await {
    ///     message?.ack().await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn drain(&mut self) -> Result<(), UnsubscribeError> {
        self.draining = true;
        self.hold = None;
        self.asking_missing = None;
        self.advisories = None;
        self.lost.end();
        self.heartbeat.pause();
        // A request being published goes out ahead of the UNSUB, so whatever the server
        // sends for it before the UNSUB is in by the flush. Its failure changes nothing now.
        if let Some(pull) = self.pull.take() {
            let _ = pull.await;
        }
        self.subscriber.drain().await
    }

    /// What this stream recovered from without an error item.
    pub fn recoveries(&self) -> Recoveries {
        self.recoveries
    }

    /// Ends with [`ConsumerDeleted`](MessagesErrorKind::ConsumerDeleted) once the server
    /// says that the consumer or its stream does not exist (see
    /// [`StreamBuilder::end_if_consumer_missing`](super::StreamBuilder::end_if_consumer_missing)).
    pub(crate) fn end_if_consumer_missing(mut self, consumer: &Consumer<Config>) -> Stream {
        self.missing = Some(format!(
            "CONSUMER.INFO.{}.{}",
            consumer.info.stream_name, consumer.info.name
        ));
        self
    }

    /// Reports no responders at once, for a caller that recreates the consumer on it.
    pub(crate) fn eager_no_responders(mut self) -> Stream {
        self.eager_no_responders = true;
        self
    }

    /// Every open request is presumed gone after a fault: the next poll asks again without
    /// waiting, with a probe's heartbeat.
    fn pull_again_now(&mut self) {
        self.pending.reset();
        self.hold = None;
        self.start_probe();
    }

    /// A fault: for a while the requests ask for a heartbeat a second, and a few seconds of
    /// silence tell that one is gone (see `lost`).
    fn start_probe(&mut self) {
        self.lost.end();
        if self.probe.start(runtime::now()) {
            self.heartbeat.set_limit(PROBE_LIMIT);
            self.heartbeat.set_warning(false);
        }
    }

    /// The probe's watch is over: silence is judged by the requests' own heartbeat again.
    fn end_probe(&mut self) {
        self.heartbeat.set_limit(self.usual_limit);
        self.heartbeat.set_warning(true);
    }

    /// Whether the server said that the consumer or its stream is gone.
    fn poll_missing(&mut self, cx: &mut TaskContext<'_>) -> bool {
        let Some(asking) = self.asking_missing.as_mut() else {
            return false;
        };
        match asking.poll_unpin(cx) {
            Poll::Pending => false,
            Poll::Ready(missing) => {
                self.asking_missing = None;
                missing && !self.draining
            }
        }
    }

    /// Whether the last request is known to be gone without a word; then the next
    /// [`drive_pull`](Self::drive_pull) pulls again at once.
    fn poll_lost(&mut self, cx: &mut TaskContext<'_>) -> bool {
        let lost = self
            .lost
            .poll_lost(cx, self.connected, self.pending.has_open());
        if lost {
            self.pending.reset();
            self.hold = None;
            self.recoveries.lost_pulls += 1;
        }
        lost
    }

    /// Follows the connection: pause on disconnect, pull anew on reconnect (ADR-37).
    fn drive_events(&mut self, cx: &mut TaskContext<'_>) {
        while let Poll::Ready(Some(event)) = self.events.poll_next_unpin(cx) {
            match event {
                ConnectionEvent::Disconnected { .. } => {
                    self.connected = false;
                    self.heartbeat.pause();
                }
                ConnectionEvent::Reconnected | ConnectionEvent::Connected => {
                    self.connected = true;
                    self.heartbeat.resume();
                    // The old requests may be gone with the old connection (or server).
                    self.pull_again_now();
                    self.recoveries.reconnects += 1;
                }
                // A request routed to the consumer's leader may have died with the route,
                // and the leader, still leader, elects nobody: nothing else would tell.
                ConnectionEvent::ClusterChanged if self.connected => {
                    self.pull_again_now();
                    self.recoveries.cluster_changes += 1;
                }
                _ => {}
            }
        }
        // A new leader holds none of the old one's requests.
        while let Some(advisories) = self.advisories.as_mut() {
            match advisories.poll_next_unpin(cx) {
                Poll::Ready(Some(_)) => {
                    self.pull_again_now();
                    self.recoveries.leader_changes += 1;
                }
                Poll::Ready(None) => self.advisories = None,
                Poll::Pending => break,
            }
        }
    }

    /// Nobody served a request: ask again after a backoff. An error item only where it is
    /// one: at once for an ordered consumer, for a stream with no heartbeats to go by, or
    /// when it has lasted as long as a missed heartbeat would take to tell.
    fn handle_no_responders(&mut self) -> Option<Result<Message, MessagesError>> {
        self.pending.handle_ended(None, None);
        self.recoveries.no_responders += 1;
        // The retry may reach a leader about to step down (see `lost`).
        self.start_probe();
        let now = runtime::now();
        // Judged by the requests' own heartbeat, not a probe's.
        let step = self
            .no_responders
            .get_or_insert_with(|| Unserved::new(now))
            .next(
                now,
                self.request.idle_heartbeat,
                self.usual_limit,
                self.eager_no_responders,
            );
        if let Some(subject) = self
            .missing
            .as_ref()
            .filter(|_| step.ask_missing && self.asking_missing.is_none())
        {
            self.asking_missing = Some(is_missing(self.context.clone(), subject.clone()).boxed());
        }
        self.hold = Some(Box::pin(rnats_core::runtime::sleep(step.wait)));
        let kind = step.report?;
        if kind == MessagesErrorKind::MissingHeartbeat {
            self.recoveries.missed_heartbeats += 1;
        }
        Some(Err(MessagesError::new(kind)))
    }

    /// Sends a pull request when the buffer ran low; an error if one could not be sent.
    fn drive_pull(&mut self, cx: &mut TaskContext<'_>) -> Option<MessagesError> {
        if let Some(hold) = self.hold.as_mut() {
            if hold.poll_unpin(cx).is_pending() {
                return None;
            }
            self.hold = None;
        }
        if self.pull.is_none() && self.connected && !self.draining && self.pending.wants_pull() {
            let now = runtime::now();
            let was_probing = self.probe.is_on();
            let probing = self.probe.request(now);
            if was_probing && !probing {
                self.end_probe();
            }
            let probe_batch;
            let batch = if probing {
                probe_batch = BatchConfig {
                    idle_heartbeat: PROBE_HEARTBEAT,
                    ..self.request.clone()
                };
                &probe_batch
            } else {
                &self.request
            };
            let pin_id = self.pin_id.as_ref().and_then(|pin| pin.as_deref());
            let request = PullRequest { batch, pin_id };
            let payload = match serde_json::to_vec(&request) {
                Ok(payload) => Bytes::from(payload),
                Err(error) => {
                    return Some(MessagesError::with_source(MessagesErrorKind::Pull, error));
                }
            };
            let (client, subject, inbox) = (
                self.context.client.clone(),
                self.subject.clone(),
                self.inbox.clone(),
            );
            self.pending.handle_pull_sent();
            // Heartbeats are counted from the request on: an idle consumer between requests
            // owes none.
            self.heartbeat.seen_at(now);
            self.lost.pulled();
            self.pull = Some(Box::pin(async move {
                client.publish_with_reply(subject, inbox, payload).await
            }));
        }
        let pull = self.pull.as_mut()?;
        match pull.poll_unpin(cx) {
            Poll::Pending => None,
            Poll::Ready(Ok(())) => {
                self.pull = None;
                None
            }
            Poll::Ready(Err(error)) => {
                self.pull = None;
                self.pending.handle_pull_failed();
                Some(MessagesError::with_source(MessagesErrorKind::Pull, error))
            }
        }
    }

    /// Acts on one message of the subscription: a message or error for the user, or `None`
    /// for bookkeeping only.
    fn handle_reply(
        &mut self,
        message: rnats_core::Message,
    ) -> Option<Result<Message, MessagesError>> {
        self.heartbeat.seen();
        let reply = Reply::classify(&message);
        if matches!(reply, Reply::Message | Reply::Heartbeat) {
            self.no_responders = None;
            self.asking_missing = None;
            self.lost.end();
        }
        match reply {
            Reply::Message => {
                self.pending.handle_message(message_size(&message));
                if let Some(pin) = self.pin_id.as_mut() {
                    let id = message
                        .headers
                        .as_ref()
                        .and_then(|h| h.get_last(NATS_PIN_ID));
                    if let Some(id) = id.filter(|id| pin.as_deref() != Some(id.as_str())) {
                        *pin = Some(id.as_str().to_owned());
                    }
                }
                let context = self.context.clone();
                Some(Ok(Message { message, context }))
            }
            Reply::Heartbeat => None,
            Reply::Ended {
                messages,
                bytes,
                pin_lost,
                ..
            } => {
                if is_leader_change(&message) {
                    // Every request lived on the leader that stepped down.
                    self.pull_again_now();
                    self.recoveries.leader_changes += 1;
                } else {
                    self.pending.handle_ended(messages, bytes);
                }
                if let (true, Some(pin)) = (pin_lost, self.pin_id.as_mut()) {
                    *pin = None;
                }
                None
            }
            // Nobody serves the consumer: no leader yet (an election after a fault), or no
            // consumer at all.
            Reply::NoResponders => self.handle_no_responders(),
            // Too many requests wait: this one is gone; pull again after a pause so that a
            // busy consumer is not hammered.
            reply @ Reply::TooManyWaiting(_) => {
                self.pending.handle_ended(None, None);
                let wait = match self.request.idle_heartbeat {
                    heartbeat if heartbeat.is_zero() => RETRY_WAIT,
                    heartbeat => heartbeat.min(RETRY_WAIT),
                };
                self.hold = Some(Box::pin(rnats_core::runtime::sleep(wait)));
                Some(Err(reply_error(reply)))
            }
            // Terminal (ADR-37); a request over the consumer's limits would be refused again
            // every time, so it ends the stream too.
            reply => {
                self.terminated = true;
                Some(Err(reply_error(reply)))
            }
        }
    }
}

/// What a quiet subscription comes to, for [`Stream::poll_next`].
enum Quiet {
    /// Nothing to do until woken.
    Pending,
    /// Something changed (a pull to send, a question asked): go round again.
    Again,
    /// Heartbeats were missed: tell the caller.
    Missed,
}

impl Stream {
    /// Judges a silence: the questions and probes of `lost`, then the missed heartbeat.
    fn drive_silence(&mut self, cx: &mut TaskContext<'_>) -> Quiet {
        // Asked after only now, so that an answer is weighed against every reply that came
        // before it.
        if !self.draining && self.poll_lost(cx) {
            return Quiet::Again;
        }
        match self.heartbeat.poll_silence(cx) {
            None => return Quiet::Pending,
            Some(Silence::Missed) => {}
            // A heartbeat is late: ask whether the request is still there, then wait for the
            // miss as before.
            Some(Silence::Overdue) => {
                self.lost.ask_now();
                return Quiet::Again;
            }
        }
        match self.probe.silence(self.pending.has_open()) {
            ProbeSilence::Unwatched => {}
            // A request sent after a fault is gone: again at once, quietly.
            ProbeSilence::Lost => {
                self.pending.reset();
                self.recoveries.lost_pulls += 1;
                return Quiet::Again;
            }
            // Judged by the usual heartbeat from here.
            ProbeSilence::Over => {
                self.end_probe();
                return Quiet::Again;
            }
        }
        self.lost.end();
        // Whatever requests were open are presumed lost: pull anew.
        self.pending.reset();
        self.recoveries.missed_heartbeats += 1;
        if self.report_missed {
            Quiet::Missed
        } else {
            Quiet::Again
        }
    }
}

impl futures_util::Stream for Stream {
    type Item = Result<Message, MessagesError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.terminated {
            return Poll::Ready(None);
        }
        // A drained stream pulls no more, so reconnects and leader changes are nothing to it.
        if !this.draining {
            this.drive_events(cx);
        }
        for _ in 0..MAX_ROUNDS {
            if this.poll_missing(cx) {
                this.terminated = true;
                return Poll::Ready(Some(Err(MessagesError::new(
                    MessagesErrorKind::ConsumerDeleted,
                ))));
            }
            if let Some(error) = this.drive_pull(cx) {
                return Poll::Ready(Some(Err(error)));
            }
            match this.subscriber.poll_next_unpin(cx) {
                Poll::Ready(Some(message)) => match this.handle_reply(message) {
                    // A warning asks for nothing once no request is to follow.
                    Some(Err(_)) if this.draining && !this.terminated => {}
                    Some(item) => return Poll::Ready(Some(item)),
                    None => {}
                },
                Poll::Ready(None) => {
                    this.terminated = true;
                    return Poll::Ready(None);
                }
                // Drained: only now does silence count (buffered messages prove life).
                Poll::Pending => match this.drive_silence(cx) {
                    Quiet::Pending => return Poll::Pending,
                    Quiet::Again => {}
                    Quiet::Missed => {
                        return Poll::Ready(Some(Err(MessagesError::new(
                            MessagesErrorKind::MissingHeartbeat,
                        ))));
                    }
                },
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
