//! async-nats' small client traits, for code that is generic over what it publishes,
//! subscribes or requests with (JetStream and the Service API take a `Client` through them).

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;

use super::{Client, PublishError, Request, RequestError, SubscribeError};
use crate::Message;
use crate::message::OutboundMessage;
use crate::subject::ToSubject;

/// Something that publishes.
pub trait Publisher {
    /// Publishes `payload` to `subject` with a reply subject.
    fn publish_with_reply<S, R>(
        &self,
        subject: S,
        reply: R,
        payload: Bytes,
    ) -> impl Future<Output = Result<(), PublishError>>
    where
        S: ToSubject,
        R: ToSubject;

    /// Publishes a whole message: subject, optional reply and headers, payload.
    fn publish_message(
        &self,
        message: OutboundMessage,
    ) -> impl Future<Output = Result<(), PublishError>>;
}

/// Something that subscribes.
pub trait Subscriber {
    /// Subscribes to `subject`.
    fn subscribe<S>(
        &self,
        subject: S,
    ) -> impl Future<Output = Result<crate::Subscriber, SubscribeError>>
    where
        S: ToSubject;
}

/// Something that sends requests.
pub trait Requester {
    /// Sends `request` to `subject` and waits for the reply.
    fn send_request<S>(
        &self,
        subject: S,
        request: Request,
    ) -> impl Future<Output = Result<Message, RequestError>>
    where
        S: ToSubject;
}

/// Something with a default request timeout.
pub trait TimeoutProvider {
    /// The timeout requests get when they name none.
    fn timeout(&self) -> Option<Duration>;
}

impl Publisher for Client {
    fn publish_with_reply<S, R>(
        &self,
        subject: S,
        reply: R,
        payload: Bytes,
    ) -> impl Future<Output = Result<(), PublishError>>
    where
        S: ToSubject,
        R: ToSubject,
    {
        Client::publish_with_reply(self, subject, reply, payload)
    }

    async fn publish_message(&self, message: OutboundMessage) -> Result<(), PublishError> {
        let OutboundMessage {
            subject,
            reply,
            payload,
            headers,
        } = message;
        match (reply, headers) {
            (None, None) => self.publish(subject, payload).await,
            (None, Some(headers)) => self.publish_with_headers(subject, headers, payload).await,
            (Some(reply), None) => Client::publish_with_reply(self, subject, reply, payload).await,
            (Some(reply), Some(headers)) => {
                self.publish_with_reply_and_headers(subject, reply, headers, payload)
                    .await
            }
        }
    }
}

impl Subscriber for Client {
    fn subscribe<S>(
        &self,
        subject: S,
    ) -> impl Future<Output = Result<crate::Subscriber, SubscribeError>>
    where
        S: ToSubject,
    {
        Client::subscribe(self, subject)
    }
}

impl Requester for Client {
    fn send_request<S>(
        &self,
        subject: S,
        request: Request,
    ) -> impl Future<Output = Result<Message, RequestError>>
    where
        S: ToSubject,
    {
        Client::send_request(self, subject, request)
    }
}

impl TimeoutProvider for Client {
    fn timeout(&self) -> Option<Duration> {
        Client::timeout(self)
    }
}
