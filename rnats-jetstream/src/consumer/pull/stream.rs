//! Continuous pull consumption (ADR-37): one reply subscription, pull requests sent whenever
//! the buffered count falls to half a request, idle heartbeats watched, and recovery from
//! expiries, missed heartbeats and reconnects without ending the stream.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::header::NATS_PIN_ID;
use rnats_core::{ConnectionEvent, Events, PublishError, Subject, Subscriber};
use tokio::time::Sleep;

use super::batch::reply_error;
use super::builders::{BatchConfig, PullRequest};
use super::pending::{Pending, Reply, message_size};
use super::{Config, MessagesError, MessagesErrorKind};
use crate::consumer::heartbeat::Monitor;
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
/// the stream goes on. It ends after `ConsumerDeleted`, `PushBasedConsumer`, a request over
/// the consumer's limits, and 400 Bad Request.
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
    terminated: bool,
}

impl Stream {
    /// Subscribes to a fresh inbox; the first pull request goes out on the first poll.
    pub(crate) async fn start(
        consumer: &Consumer<Config>,
        request: BatchConfig,
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
            (heartbeat, _) if !heartbeat.is_zero() => (Monitor::new(heartbeat), true),
            (_, Some(expires)) if !expires.is_zero() => {
                (Monitor::with_limit(expires + EXPIRY_SLACK), false)
            }
            _ => (Monitor::new(Duration::ZERO), false),
        };
        let pinned = consumer.config.priority_policy == PriorityPolicy::PinnedClient;
        Ok(Stream {
            subscriber,
            context: consumer.context.clone(),
            subject: consumer.next_subject(),
            inbox,
            pending: Pending::new(request.batch, request.max_bytes),
            request,
            heartbeat,
            report_missed,
            events,
            connected: true,
            pull: None,
            hold: None,
            pin_id: pinned.then_some(None),
            terminated: false,
        })
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
                    self.pending.reset();
                }
                _ => {}
            }
        }
    }

    /// Sends a pull request when the buffer ran low; an error if one could not be sent.
    fn drive_pull(&mut self, cx: &mut TaskContext<'_>) -> Option<MessagesError> {
        if let Some(hold) = self.hold.as_mut() {
            if hold.poll_unpin(cx).is_pending() {
                return None;
            }
            self.hold = None;
        }
        if self.pull.is_none() && self.connected && self.pending.wants_pull() {
            let pin_id = self.pin_id.as_ref().and_then(|pin| pin.as_deref());
            let request = PullRequest {
                batch: &self.request,
                pin_id,
            };
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
            self.heartbeat.seen();
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
        match Reply::classify(&message) {
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
                self.pending.handle_ended(messages, bytes);
                if let (true, Some(pin)) = (pin_lost, self.pin_id.as_mut()) {
                    *pin = None;
                }
                None
            }
            // Nobody serves the consumer (deleted, or JetStream down). As in async-nats, no
            // new request goes out at once: the watch on heartbeats (or on the request's
            // expiry) presumes the request lost when it fires, reports `MissingHeartbeat`
            // where heartbeats were asked for, and pulls again.
            Reply::NoResponders if self.heartbeat.is_watching() => {
                Some(Err(reply_error(Reply::NoResponders)))
            }
            // Transient refusals: the request is gone; pull again after a pause so that a
            // busy consumer is not hammered.
            reply @ (Reply::TooManyWaiting(_) | Reply::NoResponders) => {
                self.pending.handle_ended(None, None);
                let wait = match self.request.idle_heartbeat {
                    heartbeat if heartbeat.is_zero() => RETRY_WAIT,
                    heartbeat => heartbeat.min(RETRY_WAIT),
                };
                self.hold = Some(Box::pin(tokio::time::sleep(wait)));
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

impl futures_util::Stream for Stream {
    type Item = Result<Message, MessagesError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.terminated {
            return Poll::Ready(None);
        }
        this.drive_events(cx);
        for _ in 0..MAX_ROUNDS {
            if let Some(error) = this.drive_pull(cx) {
                return Poll::Ready(Some(Err(error)));
            }
            match this.subscriber.poll_next_unpin(cx) {
                Poll::Ready(Some(message)) => {
                    if let Some(item) = this.handle_reply(message) {
                        return Poll::Ready(Some(item));
                    }
                }
                Poll::Ready(None) => {
                    this.terminated = true;
                    return Poll::Ready(None);
                }
                // Drained: only now does silence count (buffered messages prove life).
                Poll::Pending => {
                    if !this.heartbeat.poll_missed(cx) {
                        return Poll::Pending;
                    }
                    // Whatever requests were open are presumed lost: pull anew.
                    this.pending.reset();
                    if this.report_missed {
                        return Poll::Ready(Some(Err(MessagesError::new(
                            MessagesErrorKind::MissingHeartbeat,
                        ))));
                    }
                }
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
