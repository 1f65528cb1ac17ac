//! The blocking [`Context`]: the API prefix and timeout JetStream calls go through, API
//! requests, and publishing with acks.

use std::time::Duration;

use bytes::Bytes;
use rnats_core::RequestErrorKind as CoreRequestErrorKind;
use rnats_core::blocking::Client;
use rnats_core::header::HeaderMap;
use rnats_core::subject::ToSubject;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::account::Account;
use crate::context::{
    AccountError, AccountErrorKind, RequestError, RequestErrorKind, request_error,
};
use crate::features::{Feature, ServerVersion, Unsupported};
use crate::publish::{PublishAck, PublishError, PublishErrorKind, PublishMessage};
use crate::response::Response;

/// The wait for API replies and publish acks when neither the context nor the client sets
/// one: every call of a blocking context is bounded.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Publishes sent again while no stream answers, and the wait between them (ADR-22, as the
/// async context does by default).
const RETRY_ATTEMPTS: usize = 2;
const RETRY_WAIT: Duration = Duration::from_millis(250);

/// A handle to JetStream through one blocking client. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub(super) client: Client,
    /// `$JS.API`, `$JS.<domain>.API` or a custom prefix; no trailing dot.
    prefix: String,
    timeout: Option<Duration>,
}

impl Context {
    pub(super) fn new(client: Client, prefix: String) -> Context {
        Context {
            client,
            prefix,
            timeout: None,
        }
    }

    /// Sets the timeout of API requests, publish acks and double acks, for this context and
    /// the handles made from it afterwards. Without one, API requests wait for the client's
    /// request timeout and acks 5 s (API requests too when the client has none).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = Some(timeout);
    }

    /// The wait of API requests: the context's timeout, else the client's, else 5 s.
    pub fn timeout(&self) -> Duration {
        self.timeout
            .or_else(|| self.client.timeout())
            .unwrap_or(DEFAULT_TIMEOUT)
    }

    /// The wait for acks and double acks: the context's timeout, else 5 s.
    pub(super) fn ack_timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// The client this context uses.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The API prefix requests go under (`$JS.API`, `$JS.<domain>.API`, ...).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The version of the connected server, when it announced one that reads as
    /// `major.minor.patch`.
    pub fn server_version(&self) -> Option<ServerVersion> {
        self.client.server_info().version.parse().ok()
    }

    /// Whether the connected server has `feature`; true when its version is unknown.
    pub fn supports(&self, feature: Feature) -> bool {
        self.server_version()
            .is_none_or(|version| feature.is_supported_by(version))
    }

    /// Publishes `payload` to `subject`, which a stream must store, and waits for the
    /// stream's ack.
    pub fn publish<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> Result<PublishAck, PublishError> {
        self.send_publish(subject, PublishMessage::build().payload(payload))
    }

    /// Publishes with headers and waits for the ack; see [`Context::publish`].
    pub fn publish_with_headers<S: ToSubject>(
        &self,
        subject: S,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<PublishAck, PublishError> {
        self.send_publish(
            subject,
            PublishMessage::build().payload(payload).headers(headers),
        )
    }

    /// Publishes a message built with [`PublishMessage`] (message id for deduplication,
    /// expected last sequence or message id, TTL, ...) and waits for the ack. A failed
    /// expectation is `PublishErrorKind::WrongLastSequence` or `WrongLastMessageId`.
    ///
    /// ```no_run
    /// # fn run(jetstream: rnats_jetstream::blocking::Context) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::publish::PublishMessage;
    /// let ack = jetstream.send_publish(
    ///     "orders.new",
    ///     PublishMessage::build().payload("order 1".into()).message_id("order-1"),
    /// )?;
    /// println!("duplicate: {}", ack.duplicate);
    /// # Ok(()) }
    /// ```
    pub fn send_publish<S: ToSubject>(
        &self,
        subject: S,
        publish: PublishMessage,
    ) -> Result<PublishAck, PublishError> {
        // An older server would store the message and ignore its TTL (ADR-43).
        if publish.has_ttl() {
            self.require([Feature::MessageTtl])
                .map_err(|e| PublishError::with_source(PublishErrorKind::Other, e))?;
        }
        let subject = subject.subject_text();
        let mut attempts = 0;
        loop {
            let reply = self.client.request_with_headers_and_timeout(
                subject.as_ref(),
                publish.headers.clone(),
                publish.payload.clone(),
                Some(self.ack_timeout()),
            );
            match reply {
                // No stream answered: it may be between leaders or just being made (ADR-22).
                Err(error)
                    if error.kind() == CoreRequestErrorKind::NoResponders
                        && attempts < RETRY_ATTEMPTS =>
                {
                    attempts += 1;
                    std::thread::sleep(RETRY_WAIT);
                }
                Err(error) if error.kind() == CoreRequestErrorKind::MaxPayloadExceeded => {
                    return Err(PublishError::with_source(
                        PublishErrorKind::MaxPayloadExceeded,
                        error,
                    ));
                }
                reply => return crate::publish::finish(reply),
            }
        }
    }

    /// The account's JetStream usage and limits.
    pub fn query_account(&self) -> Result<Account, AccountError> {
        let response: Response<Account> = self.request("INFO", &()).map_err(|e| {
            let kind = match e.kind() {
                RequestErrorKind::NoResponders => AccountErrorKind::JetStreamUnavailable,
                RequestErrorKind::TimedOut => AccountErrorKind::TimedOut,
                RequestErrorKind::InvalidSubject | RequestErrorKind::Other => {
                    AccountErrorKind::Other
                }
            };
            AccountError::with_source(kind, e)
        })?;
        response
            .into_result()
            .map_err(|error| AccountError::new(AccountErrorKind::JetStream(error)))
    }

    /// Sends a JetStream API request: `payload` as JSON to `<prefix>.<subject>`, the reply
    /// decoded as `V` (usually a [`Response`](crate::response::Response)).
    pub fn request<S, T, V>(&self, subject: S, payload: &T) -> Result<V, RequestError>
    where
        S: ToSubject,
        T: ?Sized + Serialize,
        V: DeserializeOwned,
    {
        let body = serde_json::to_vec(payload)
            .map_err(|e| RequestError::with_source(RequestErrorKind::Other, e))?;
        // A request with nothing to say sends no body, not `null`.
        let body = if body == b"null" { Vec::new() } else { body };
        let message = self.api_request(&subject.subject_text(), Bytes::from(body))?;
        serde_json::from_slice(&message.payload)
            .map_err(|e| RequestError::with_source(RequestErrorKind::Other, e))
    }

    /// Sends `payload` to `<prefix>.<subject>` and waits for the raw reply.
    pub(super) fn api_request(
        &self,
        subject: &str,
        payload: Bytes,
    ) -> Result<rnats_core::Message, RequestError> {
        let subject = format!("{}.{subject}", self.prefix);
        self.client
            .request_with_timeout(subject, payload, Some(self.timeout()))
            .map_err(request_error)
    }

    /// The connections the client has made so far
    /// ([`Statistics::connects`](rnats_core::Statistics::connects)): a consumer's reader
    /// compares it with the count when its requests went out.
    pub(super) fn connects(&self) -> u64 {
        self.client
            .statistics()
            .connects
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Asks the server to delete `consumer` of `stream` without waiting for its answer (the
    /// server deletes a consumer on a request with no reply subject all the same): for a
    /// reader that must not wait on the network, as in a drop. Best effort: a request that
    /// cannot be sent leaves the consumer to its inactivity threshold.
    pub(super) fn delete_consumer_unanswered(&self, stream: &str, consumer: &str) {
        let subject = format!("{}.CONSUMER.DELETE.{stream}.{consumer}", self.prefix);
        let _ = self.client.publish(subject, Bytes::new());
    }

    /// [`api_request`](Self::api_request), waiting at most `bound` (or the context's
    /// timeout, if shorter).
    pub(super) fn api_request_within(
        &self,
        subject: &str,
        payload: Bytes,
        bound: Duration,
    ) -> Result<rnats_core::Message, RequestError> {
        let subject = format!("{}.{subject}", self.prefix);
        let timeout = self.timeout().min(bound);
        self.client
            .request_with_timeout(subject, payload, Some(timeout))
            .map_err(request_error)
    }

    /// Fails with [`Unsupported`] when the connected server lacks one of `needed`.
    fn require(&self, needed: impl IntoIterator<Item = Feature>) -> Result<(), Unsupported> {
        crate::features::first_missing(self.server_version(), needed)
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
