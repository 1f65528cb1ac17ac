//! The capabilities of a [`Context`] as traits, under async-nats' names, so that code generic
//! over "something that can send JetStream requests" (KV and Object Store helpers, test
//! doubles) is written once.
//!
//! A [`Context`] also implements the Core client's
//! [`Requester`](rnats_core::client::traits::Requester) and
//! [`Publisher`](rnats_core::client::traits::Publisher): those send raw, unprefixed
//! messages through its client.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use rnats_core::subject::ToSubject;
use rnats_core::{Client, Request};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Context, PublishAckFuture, PublishError, RequestError};
use crate::message::OutboundMessage;
use crate::publish::PublishMessage;

/// Sends a JetStream API request and decodes its JSON reply.
pub trait Requester {
    /// `payload` as JSON to the API subject `subject` (under the context's prefix), the reply
    /// decoded as `V`.
    fn request<S, T, V>(
        &self,
        subject: S,
        payload: &T,
    ) -> impl Future<Output = Result<V, RequestError>>
    where
        S: ToSubject,
        T: ?Sized + Serialize,
        V: DeserializeOwned;
}

/// Publishes an API request whose reply goes to an inbox the caller reads.
pub trait RequestSender {
    /// Publishes `request` to the API subject `subject` without waiting for the reply.
    fn send_request<S: ToSubject>(
        &self,
        subject: S,
        request: Request,
    ) -> impl Future<Output = Result<(), rnats_core::PublishError>>;
}

/// Publishes to streams and hands back the ack to await.
pub trait Publisher {
    /// Publishes `payload` to `subject`; the returned future resolves to the stream's ack.
    fn publish<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> impl Future<Output = Result<PublishAckFuture, PublishError>>;

    /// Publishes a whole message (subject, payload and headers).
    fn publish_message(
        &self,
        message: OutboundMessage,
    ) -> impl Future<Output = Result<PublishAckFuture, PublishError>>;
}

/// Hands out the Core client underneath.
pub trait ClientProvider {
    /// A handle on the client.
    fn client(&self) -> Client;
}

/// The timeout that bounds API requests and awaited acks.
pub trait TimeoutProvider {
    /// The context's timeout, else the client's request timeout, else 5 seconds.
    fn timeout(&self) -> Duration;
}

impl Requester for Context {
    fn request<S, T, V>(
        &self,
        subject: S,
        payload: &T,
    ) -> impl Future<Output = Result<V, RequestError>>
    where
        S: ToSubject,
        T: ?Sized + Serialize,
        V: DeserializeOwned,
    {
        Context::request(self, subject, payload)
    }
}

impl RequestSender for Context {
    fn send_request<S: ToSubject>(
        &self,
        subject: S,
        request: Request,
    ) -> impl Future<Output = Result<(), rnats_core::PublishError>> {
        Context::send_request(self, subject, request)
    }
}

impl Publisher for Context {
    fn publish<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> impl Future<Output = Result<PublishAckFuture, PublishError>> {
        Context::publish(self, subject, payload)
    }

    fn publish_message(
        &self,
        message: OutboundMessage,
    ) -> impl Future<Output = Result<PublishAckFuture, PublishError>> {
        let mut publish = PublishMessage::build().payload(message.payload);
        if let Some(headers) = message.headers {
            publish = publish.headers(headers);
        }
        Context::send_publish(self, message.subject, publish)
    }
}

impl ClientProvider for Context {
    fn client(&self) -> Client {
        Context::client(self)
    }
}

impl TimeoutProvider for Context {
    fn timeout(&self) -> Duration {
        self.timeout_or_default()
    }
}

impl rnats_core::client::traits::Requester for Context {
    /// A raw request on the subject as given, without the API prefix, bounded by the context's
    /// timeout unless the request names its own.
    fn send_request<S: ToSubject>(
        &self,
        subject: S,
        request: Request,
    ) -> impl Future<Output = Result<rnats_core::Message, rnats_core::RequestError>> {
        self.client
            .send_request(subject, self.bound_request(request))
    }
}

impl rnats_core::client::traits::Publisher for Context {
    fn publish_with_reply<S: ToSubject, R: ToSubject>(
        &self,
        subject: S,
        reply: R,
        payload: Bytes,
    ) -> impl Future<Output = Result<(), rnats_core::PublishError>> {
        self.client.publish_with_reply(subject, reply, payload)
    }

    fn publish_message(
        &self,
        message: rnats_core::message::OutboundMessage,
    ) -> impl Future<Output = Result<(), rnats_core::PublishError>> {
        rnats_core::client::traits::Publisher::publish_message(&self.client, message)
    }
}
