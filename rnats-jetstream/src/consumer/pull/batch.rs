//! One pull request's messages ([`Batch`]: fetch and batch) and a series of them
//! ([`Sequence`]).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::{Subject, Subscriber};
use tokio::time::Sleep;

use super::builders::BatchConfig;
use super::pending::Reply;
use super::{BatchError, BatchErrorKind, Config, MessagesError, MessagesErrorKind};
use crate::consumer::Consumer;
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
    done: bool,
}

impl Batch {
    /// Subscribes to a fresh inbox and sends `request` with replies to it.
    pub(crate) async fn start(
        consumer: &Consumer<Config>,
        request: BatchConfig,
    ) -> Result<Batch, BatchError> {
        consumer.check_one_shot()?;
        let client = &consumer.context.client;
        let inbox = client.new_inbox();
        let subscriber = client
            .subscribe(inbox.clone())
            .await
            .map_err(|error| BatchError::with_source(BatchErrorKind::Subscribe, error))?;
        consumer
            .request_batch(request.clone(), Subject::from(inbox))
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
            deadline: wait.map(|wait| Box::pin(tokio::time::sleep(wait + EXPIRY_SLACK))),
            heartbeat: Monitor::new(request.idle_heartbeat),
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
                    let context = this.context.clone();
                    return Poll::Ready(Some(Ok(Message { message, context })));
                }
                Reply::Heartbeat => {}
                Reply::Ended { .. } => break,
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

/// The error a terminal or warning reply stands for.
pub(super) fn reply_error(reply: Reply) -> MessagesError {
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
            Box::pin(async move { Batch::start(&consumer, request).await })
        });
        let result = std::task::ready!(next.poll_unpin(cx));
        this.next = None;
        Poll::Ready(Some(result.map_err(|error| {
            MessagesError::with_source(MessagesErrorKind::Pull, error)
        })))
    }
}
