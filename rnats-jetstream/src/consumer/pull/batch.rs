//! One pull request's messages ([`Batch`]: fetch and batch) and a series of them
//! ([`Sequence`]).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::header::NATS_PIN_ID;
use rnats_core::runtime::Sleep;
use rnats_core::{Subject, Subscriber};

use super::builders::{BatchConfig, PullRequest};
use super::pending::Reply;
use super::{BatchError, BatchErrorKind, Config, MessagesError, MessagesErrorKind};
use crate::consumer::Consumer;
use crate::consumer::PriorityPolicy;
use crate::consumer::heartbeat::Monitor;
use crate::context::Context;
use crate::message::Message;

/// How long past its expiry a request's end is waited for, in case the server's 408 was lost.
const EXPIRY_SLACK: Duration = Duration::from_secs(5);

/// The messages of one pull request; ends when the request is fulfilled, expires, or the
/// server has nothing (fetch).
pub struct Batch {
    subscriber: Subscriber,
    context: Context,
    /// Messages the request may still deliver.
    remaining: usize,
    /// The request's end by the client's clock, in case the server's end never comes.
    deadline: Option<Pin<Box<Sleep>>>,
    heartbeat: Monitor,
    /// The consumer handle's pin (ADR-42), for a `PinnedClient` consumer only.
    pin: Option<Arc<Mutex<Option<String>>>>,
    done: bool,
}

impl Batch {
    /// Subscribes to a fresh inbox and sends `request` with replies to it.
    /// A `PinnedClient` consumer is refused, as async-nats refuses it, unless `keep_pin`
    /// (the builders' `pinned()`, an rnats extension) says the handle keeps the pin.
    pub(crate) async fn start(
        consumer: &Consumer<Config>,
        request: BatchConfig,
        keep_pin: bool,
    ) -> Result<Batch, BatchError> {
        if !keep_pin {
            consumer.check_one_shot()?;
        }
        let client = &consumer.context.client;
        let inbox = client.new_inbox();
        let subscriber = client
            .subscribe(inbox.clone())
            .await
            .map_err(|error| BatchError::with_source(BatchErrorKind::Subscribe, error))?;
        let pinned = consumer.config.priority_policy == PriorityPolicy::PinnedClient;
        let pin = pinned.then(|| consumer.pin.clone());
        // ADR-42: a pull to a pinned-client group carries the pin id this handle holds, if
        // any; without one the server pins the first pull it serves and sends the id.
        let pin_id = pin.as_ref().and_then(|pin| current_pin(pin));
        let payload = serde_json::to_vec(&PullRequest {
            batch: &request,
            pin_id: pin_id.as_deref(),
        })
        .map_err(|error| BatchError::with_source(BatchErrorKind::Pull, error))?;
        client
            .publish_with_reply(
                consumer.next_subject(),
                Subject::from(inbox),
                Bytes::from(payload),
            )
            .await
            .map_err(|error| BatchError::with_source(BatchErrorKind::Pull, error))?;
        let wait = match request.expires {
            Some(expires) if !expires.is_zero() => Some(expires),
            // A no-wait request is answered at once; the API timeout bounds the wait.
            None if request.no_wait => Some(consumer.context.timeout_or_default()),
            _ => None,
        };
        Ok(Batch {
            subscriber,
            context: consumer.context.clone(),
            remaining: request.batch,
            deadline: wait.map(|wait| {
                Box::pin(rnats_core::runtime::sleep(
                    wait.saturating_add(EXPIRY_SLACK),
                ))
            }),
            heartbeat: Monitor::new(request.idle_heartbeat),
            pin,
            done: false,
        })
    }
}

impl futures_util::Stream for Batch {
    type Item = Result<Message, rnats_core::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        while !this.done && this.remaining > 0 {
            let message = match this.subscriber.poll_next_unpin(cx) {
                Poll::Ready(Some(message)) => message,
                Poll::Ready(None) => break,
                Poll::Pending => {
                    let expired = this
                        .deadline
                        .as_mut()
                        .is_some_and(|deadline| deadline.poll_unpin(cx).is_ready());
                    if expired {
                        break;
                    }
                    if this.heartbeat.poll_missed(cx) {
                        this.done = true;
                        let error = MessagesError::new(MessagesErrorKind::MissingHeartbeat);
                        return Poll::Ready(Some(Err(error.into())));
                    }
                    return Poll::Pending;
                }
            };
            this.heartbeat.seen();
            match Reply::classify(&message) {
                Reply::Message => {
                    this.remaining -= 1;
                    if let Some(pin) = &this.pin {
                        let id = message
                            .headers
                            .as_ref()
                            .and_then(|h| h.get_last(NATS_PIN_ID));
                        if let Some(id) = id {
                            set_pin(pin, Some(id.as_str().to_owned()));
                        }
                    }
                    let context = this.context.clone();
                    return Poll::Ready(Some(Ok(Message { message, context })));
                }
                Reply::Heartbeat => {}
                Reply::Ended { pin_lost, .. } => {
                    // 423: another client holds the pin now (or it was unpinned); this pull
                    // ends, and the next one goes without an id to wait for a new pin.
                    if let (true, Some(pin)) = (pin_lost, &this.pin) {
                        set_pin(pin, None);
                    }
                    break;
                }
                other => {
                    this.done = true;
                    return Poll::Ready(Some(Err(reply_error(other).into())));
                }
            }
        }
        this.done = true;
        Poll::Ready(None)
    }
}

/// The pin id held, if any; a poisoned lock (a panic elsewhere) reads as no pin.
fn current_pin(pin: &Mutex<Option<String>>) -> Option<String> {
    pin.lock().ok().and_then(|pin| pin.clone())
}

fn set_pin(pin: &Mutex<Option<String>>, id: Option<String>) {
    if let Ok(mut pin) = pin.lock() {
        *pin = id;
    }
}

/// The error a terminal or warning reply stands for.
pub(crate) fn reply_error(reply: Reply) -> MessagesError {
    match reply {
        Reply::ConsumerDeleted => MessagesError::new(MessagesErrorKind::ConsumerDeleted),
        Reply::PushBased => MessagesError::new(MessagesErrorKind::PushBasedConsumer),
        Reply::NoResponders => MessagesError::new(MessagesErrorKind::NoResponders),
        Reply::RequestRefused(description) | Reply::TooManyWaiting(description) => {
            MessagesError::with_source(MessagesErrorKind::RequestLimitExceeded, description)
        }
        Reply::Error(status, description) => MessagesError::with_source(
            MessagesErrorKind::Other,
            format!(
                "pull request failed with status {}: {}",
                status.as_u16(),
                description.as_deref().unwrap_or("no description")
            ),
        ),
        Reply::Message | Reply::Heartbeat | Reply::Ended { .. } => {
            MessagesError::new(MessagesErrorKind::Other)
        }
    }
}

/// Batch after batch of one pull request each, from [`Consumer::sequence`].
pub struct Sequence {
    consumer: Consumer<Config>,
    request: BatchConfig,
    next: Option<BoxFuture<'static, Result<Batch, BatchError>>>,
}

impl Sequence {
    pub(crate) fn new(consumer: Consumer<Config>, request: BatchConfig) -> Sequence {
        Sequence {
            consumer,
            request,
            next: None,
        }
    }
}

impl futures_util::Stream for Sequence {
    type Item = Result<Batch, MessagesError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let next = this.next.get_or_insert_with(|| {
            let (consumer, request) = (this.consumer.clone(), this.request.clone());
            Box::pin(async move { Batch::start(&consumer, request, false).await })
        });
        let result = std::task::ready!(next.poll_unpin(cx));
        this.next = None;
        Poll::Ready(Some(result.map_err(|error| {
            MessagesError::with_source(MessagesErrorKind::Pull, error)
        })))
    }
}
