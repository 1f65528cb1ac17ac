//! `Client` as a [`futures_util::Sink`] of [`OutboundMessage`]s, as in async-nats: for
//! `stream.forward(client)` and `sink.send_all(..)` pipelines.
//!
//! `poll_ready` waits while the write queue is over its limit (the same backpressure as
//! `publish`), `start_send` queues, `poll_flush` is a no-op as far as the server goes (the
//! engine writes on its own); call `Client::flush` to know the server has the messages.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::Sink;

use crate::client::{Client, Outbound, Wait};
use crate::error::{PublishCause, PublishError};
use crate::message::OutboundMessage;
use crate::subject::SubjectCheck;
use crate::writer::Urgency;

impl Sink<OutboundMessage> for Client {
    type Error = PublishError;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), PublishError>> {
        let this = self.get_mut();
        let shared = Arc::clone(this.shared_arc());
        let slot = this
            .sink_wait
            .0
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(wait) = slot.as_mut() {
                if wait.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                *slot = None;
            }
            let mut writes = shared.writes();
            if writes.queue.is_closed() {
                return Poll::Ready(Err(PublishCause::Closed.into()));
            }
            let full = writes.queue.is_live()
                && !writes.queue.is_empty()
                && writes.queue.len() >= shared.options.write_buffer_limit;
            if !full {
                return Poll::Ready(Ok(()));
            }
            writes.space_waiters = true;
            // Polled once under the lock, so the `Notified` exists before the engine can take
            // the queue and call `notify_waiters`.
            let waiter = Arc::clone(&shared);
            let mut wait: Wait = Box::pin(async move { waiter.space.notified().await });
            let ready = wait.as_mut().poll(cx).is_ready();
            drop(writes);
            if !ready {
                *slot = Some(wait);
                return Poll::Pending;
            }
        }
    }

    fn start_send(self: Pin<&mut Self>, message: OutboundMessage) -> Result<(), PublishError> {
        let client = self.get_mut();
        let (mut owned, mut owned_reply) = (None, None);
        let subject = client.checked_publish_subject(&message.subject, &mut owned)?;
        let reply = match &message.reply {
            Some(reply) => Some(client.checked_publish_subject(reply, &mut owned_reply)?),
            None => None,
        };
        let out = Outbound {
            subject,
            reply,
            headers: message.headers.as_ref(),
            payload: &message.payload,
            check: SubjectCheck::Done,
        };
        client.try_send(&out, Urgency::Normal, false).map(drop)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), PublishError>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), PublishError>> {
        Poll::Ready(Ok(()))
    }
}
