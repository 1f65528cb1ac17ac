//! The JetStream [`Context`]: the API prefix (or domain) and timeouts JetStream calls go
//! through, publishing with acks, and the account query. Streams and consumers are managed
//! from it too (see the `stream` and `consumer` modules for those methods).

use std::fmt;
use std::future::poll_fn;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use rnats_core::client::PendingReply;
use rnats_core::error::Error;
use rnats_core::header::{HeaderMap, NATS_REQUIRED_API_LEVEL};
use rnats_core::subject::ToSubject;
use rnats_core::{Client, Request};
use rnats_core::{Message, RequestErrorKind as CoreRequestErrorKind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use crate::account::Account;
use crate::features::{Feature, ServerVersion, Unsupported};
pub use crate::publish::{PublishAckFuture, PublishError, PublishErrorKind};
use crate::publish::{PublishMessage, Retry, RetryPolicy};
use crate::publish_timing::wait_ack;
use crate::response::Response;

/// The message builder `send_publish` takes (async-nats' name for [`PublishMessage`]).
pub type Publish = PublishMessage;

/// The wait for publish acks and double acks when the context sets no timeout (async-nats'
/// default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The bound on the requests of background recovery (ordered consumer recreation) when
/// neither the context nor the client bounds requests: nothing awaits those requests, so a
/// lost one must not stall the recovery for ever.
const RECOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// A handle to JetStream through one client: cheap to clone (clones share the in-flight
/// publish limit).
#[derive(Clone)]
pub struct Context {
    pub(crate) client: Client,
    pub(crate) shared: Arc<Shared>,
    pub(crate) timeout: Option<Duration>,
}

/// What clones of a context share.
pub(crate) struct Shared {
    /// `$JS.API`, `$JS.<domain>.API`, or a custom prefix; no trailing dot.
    pub(crate) prefix: String,
    /// Permits for publishes whose ack has not come yet.
    inflight: Arc<Semaphore>,
    capacity: usize,
    backpressure: bool,
    ack_timeout: Duration,
    retry: RetryPolicy,
    /// Sent as `Nats-Required-Api-Level` on every API request when set (ADR-44).
    required_api_level: Option<u32>,
    /// The task that waits out the acks of publish futures dropped unawaited; started the
    /// first time one is dropped.
    acker: OnceLock<mpsc::UnboundedSender<Acking>>,
}

/// A dropped publish future's reply and permit, and how long to wait for the reply.
type Acking = (PendingReply, OwnedSemaphorePermit, Duration);

/// Marks a [`ContextBuilder`] whose API prefix may still be set.
#[derive(Debug, Default)]
pub struct Yes;

/// Marks a [`ContextBuilder`] whose API prefix (or domain) is set.
#[derive(Debug, Default)]
pub struct No;

/// The builder states; see [`ContextBuilder`].
pub trait ToAssign: fmt::Debug {}
impl ToAssign for Yes {}
impl ToAssign for No {}

/// Builds a [`Context`] with a prefix or domain (one of the two), timeouts and the in-flight
/// publish limit.
///
/// ```no_run
/// # async fn run(client: rnats_core::Client) {
/// use std::time::Duration;
/// let jetstream = rnats_jetstream::ContextBuilder::new()
///     .timeout(Duration::from_secs(2))
///     .max_ack_inflight(256)
///     .build(client);
/// # drop(jetstream); }
/// ```
#[derive(Debug)]
pub struct ContextBuilder<PREFIX: ToAssign> {
    prefix: String,
    timeout: Option<Duration>,
    capacity: usize,
    ack_timeout: Duration,
    backpressure: bool,
    retry: RetryPolicy,
    required_api_level: Option<u32>,
    _state: PhantomData<PREFIX>,
}

impl Default for ContextBuilder<Yes> {
    fn default() -> Self {
        ContextBuilder {
            prefix: "$JS.API".to_owned(),
            timeout: None,
            capacity: 5_000,
            ack_timeout: Duration::from_secs(30),
            backpressure: true,
            retry: RetryPolicy::default(),
            required_api_level: None,
            _state: PhantomData,
        }
    }
}

impl ContextBuilder<Yes> {
    /// A builder with the defaults: prefix `$JS.API`, API requests bounded by the client's
    /// request timeout (unbounded when it has none) and acks waited for 5 s, 5,000 publishes
    /// in flight, waiting for room when they are.
    pub fn new() -> ContextBuilder<Yes> {
        ContextBuilder::default()
    }

    /// Sends API requests under `prefix` instead of `$JS.API` (for imported JetStream).
    pub fn api_prefix<T: Into<String>>(self, prefix: T) -> ContextBuilder<No> {
        let mut prefix = prefix.into();
        while prefix.ends_with('.') {
            prefix.pop();
        }
        self.with_prefix(prefix)
    }

    /// Talks to the JetStream of `domain` (`$JS.<domain>.API`).
    pub fn domain<T: Into<String>>(self, domain: T) -> ContextBuilder<No> {
        let domain = domain.into();
        self.with_prefix(format!("$JS.{domain}.API"))
    }

    fn with_prefix(self, prefix: String) -> ContextBuilder<No> {
        ContextBuilder {
            prefix,
            timeout: self.timeout,
            capacity: self.capacity,
            ack_timeout: self.ack_timeout,
            backpressure: self.backpressure,
            retry: self.retry,
            required_api_level: self.required_api_level,
            _state: PhantomData,
        }
    }
}

impl<PREFIX: ToAssign> ContextBuilder<PREFIX> {
    /// The timeout of API requests, awaited publish acks and double acks. It replaces the
    /// client's request timeout for API requests, lower or higher; without it they follow the
    /// client's (and wait for ever when the client has none), and acks wait 5 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How long an ack is waited for after its future was dropped unawaited (default 30 s);
    /// its in-flight permit is held until then.
    pub fn ack_timeout(mut self, ack_timeout: Duration) -> Self {
        self.ack_timeout = ack_timeout;
        self
    }

    /// Publishes whose ack has not come yet, at most (default 5,000).
    pub fn max_ack_inflight(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// Whether a publish over `max_ack_inflight` waits for room (the default) or fails at
    /// once with `PublishErrorKind::MaxAckPending`.
    pub fn backpressure_on_inflight(mut self, enabled: bool) -> Self {
        self.backpressure = enabled;
        self
    }

    /// How a publish that no stream answers (503) is retried (ADR-22): `attempts` more
    /// times, `wait` apart (default 2 and 250 ms; 0 attempts turns retrying off).
    pub fn retry_on_no_responders(mut self, attempts: usize, wait: Duration) -> Self {
        self.retry = RetryPolicy { attempts, wait };
        self
    }

    /// Asks the server answering each API request of this context to refuse it unless it
    /// speaks at least JetStream API level `level` (ADR-44; nats-server 2.12 is level 2). A
    /// refusal is a JetStream error with code
    /// [`ErrorCode::REQUIRED_API_LEVEL`](crate::ErrorCode::REQUIRED_API_LEVEL). Servers older
    /// than 2.12 ignore the header, so rnats refuses to send it to them. An rnats extension.
    pub fn required_api_level(mut self, level: u32) -> Self {
        self.required_api_level = Some(level);
        self
    }

    /// async-nats' limit on the acker's concurrency; rnats' acker waits on every dropped ack
    /// at once at no extra cost, so this is accepted and ignored.
    pub fn concurrency_limit(self, _limit: Option<usize>) -> Self {
        self
    }

    /// The context, on `client`.
    pub fn build(self, client: Client) -> Context {
        Context {
            client,
            shared: Arc::new(Shared {
                prefix: self.prefix,
                inflight: Arc::new(Semaphore::new(self.capacity)),
                capacity: self.capacity,
                backpressure: self.backpressure,
                ack_timeout: self.ack_timeout,
                retry: self.retry,
                required_api_level: self.required_api_level,
                acker: OnceLock::new(),
            }),
            timeout: self.timeout,
        }
    }
}

impl Context {
    /// A context on `client` with the defaults.
    pub(crate) fn new(client: Client) -> Context {
        ContextBuilder::new().build(client)
    }

    /// Sets the timeout of API requests, awaited publish acks and double acks, for this
    /// context and the handles made from it afterwards; see [`ContextBuilder::timeout`].
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = Some(timeout);
    }

    /// The client this context uses.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The API prefix requests go under (`$JS.API`, `$JS.<domain>.API`, ...).
    pub fn prefix(&self) -> &str {
        &self.shared.prefix
    }

    /// The version of the server the client is connected to now, when it announced one that
    /// reads as `major.minor.patch` (ADR-44).
    pub fn server_version(&self) -> Option<ServerVersion> {
        self.client.server_info().version.parse().ok()
    }

    /// Whether the connected server has `feature`; true when its version is unknown, since
    /// the server then has the last word. An rnats extension.
    pub fn supports(&self, feature: Feature) -> bool {
        self.server_version()
            .is_none_or(|version| feature.is_supported_by(version))
    }

    /// Fails with [`Unsupported`] when the connected server lacks one of `needed`.
    pub(crate) fn require(
        &self,
        needed: impl IntoIterator<Item = Feature>,
    ) -> Result<(), Unsupported> {
        crate::features::first_missing(self.server_version(), needed)
    }

    /// The wait for acks and double acks: the context's timeout, else 5 s.
    pub(crate) fn timeout_or_default(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// `request` bounded by the context's timeout, unless it names its own timeout or the
    /// context has none (then the client's request timeout applies).
    pub(crate) fn bound_request(&self, request: Request) -> Request {
        match (request.timeout, self.timeout) {
            (None, Some(timeout)) => request.timeout(Some(timeout)),
            _ => request,
        }
    }

    /// A copy for the requests of background recovery, such as recreating an ordered
    /// consumer: as this context, but bounded by 10 s when neither the context nor the
    /// client bounds requests, since no caller is waiting to give up on a lost one.
    pub(crate) fn recovery_context(&self) -> Context {
        let mut context = self.clone();
        if context.timeout.is_none() && context.client.timeout().is_none() {
            context.timeout = Some(RECOVERY_TIMEOUT);
        }
        context
    }

    /// Waits until every publish ack outstanding now has come (or timed out).
    pub async fn wait_for_acks(&self) {
        let all = u32::try_from(self.shared.capacity).unwrap_or(u32::MAX);
        // Holding every permit at once means none is out; they go back at once.
        drop(self.shared.inflight.acquire_many(all).await);
    }

    /// Publishes `payload` to `subject`, which a stream must store. Returns once the message
    /// is queued, with a future for the stream's ack; awaiting it is optional.
    pub async fn publish<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> Result<PublishAckFuture, PublishError> {
        self.send_publish(subject, PublishMessage::build().payload(payload))
            .await
    }

    /// Publishes with headers; see [`Context::publish`].
    pub async fn publish_with_headers<S: ToSubject>(
        &self,
        subject: S,
        headers: HeaderMap,
        payload: Bytes,
    ) -> Result<PublishAckFuture, PublishError> {
        self.send_publish(
            subject,
            PublishMessage::build().payload(payload).headers(headers),
        )
        .await
    }

    /// Publishes a message built with [`Publish`] (message id, expectations, TTL, ...).
    pub async fn send_publish<S: ToSubject>(
        &self,
        subject: S,
        publish: Publish,
    ) -> Result<PublishAckFuture, PublishError> {
        // An older server would store the message and ignore its TTL (ADR-43, ADR-44).
        if publish.has_ttl() {
            self.require([Feature::MessageTtl])
                .map_err(|e| PublishError::with_source(PublishErrorKind::Other, e))?;
        }
        let inflight = Arc::clone(&self.shared.inflight);
        let permit = if self.shared.backpressure {
            inflight
                .acquire_owned()
                .await
                .map_err(|e| PublishError::with_source(PublishErrorKind::Other, e))?
        } else {
            inflight
                .try_acquire_owned()
                .map_err(|_| PublishError::new(PublishErrorKind::MaxAckPending))?
        };
        let subject = subject.subject_text();
        let retry = (self.shared.retry.attempts > 0).then(|| Retry {
            subject: subject.clone().into_owned(),
            message: publish.clone(),
            policy: self.shared.retry,
        });
        let reply = self.start_publish(&subject, publish).await?;
        Ok(PublishAckFuture {
            reply: Some(reply),
            permit: Some(permit),
            timeout: self.timeout_or_default(),
            retry,
            context: self.clone(),
        })
    }

    /// Sends one publish as a request over the client's request inbox.
    pub(crate) async fn start_publish(
        &self,
        subject: &str,
        publish: PublishMessage,
    ) -> Result<PendingReply, PublishError> {
        self.client
            .start_request(subject, publish.headers, publish.payload)
            .await
            .map_err(|error| {
                let kind = match error.kind() {
                    CoreRequestErrorKind::MaxPayloadExceeded => {
                        PublishErrorKind::MaxPayloadExceeded
                    }
                    _ => PublishErrorKind::Other,
                };
                PublishError::with_source(kind, error)
            })
    }

    /// Keeps `permit` until `reply` comes or `timeout` passes, on the context's acker task.
    pub(crate) fn hand_to_acker(
        &self,
        reply: PendingReply,
        permit: OwnedSemaphorePermit,
        timeout: Duration,
    ) {
        let timeout = timeout.max(self.shared.ack_timeout);
        let acker = match self.shared.acker.get() {
            Some(acker) => acker,
            // Without a runtime (a drop during shutdown) the permit just goes back.
            None if tokio::runtime::Handle::try_current().is_err() => return,
            None => self.shared.acker.get_or_init(spawn_acker),
        };
        // A closed acker means the runtime is going away; the permit goes back with the item.
        let _ = acker.send((reply, permit, timeout));
    }

    /// The account's JetStream usage and limits.
    pub async fn query_account(&self) -> Result<Account, AccountError> {
        let response: Response<Account> = self.request("INFO", &()).await.map_err(|e| {
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
    /// decoded as `V` (usually a [`Response`]).
    pub async fn request<S, T, V>(&self, subject: S, payload: &T) -> Result<V, RequestError>
    where
        S: ToSubject,
        T: ?Sized + Serialize,
        V: DeserializeOwned,
    {
        let body = serde_json::to_vec(payload)
            .map_err(|e| RequestError::with_source(RequestErrorKind::Other, e))?;
        // A request with nothing to say sends no body, not `null`.
        let body = if body == b"null" { Vec::new() } else { body };
        let message = self
            .api_request(subject, Request::new().payload(Bytes::from(body)))
            .await?;
        serde_json::from_slice(&message.payload)
            .map_err(|e| RequestError::with_source(RequestErrorKind::Other, e))
    }

    /// Publishes `request` to `<prefix>.<subject>` with its reply going to the request's inbox
    /// (a fresh one when it names none), without waiting for the reply: the caller subscribes
    /// to the inbox it chose. As in async-nats, this is a publish; [`Context::request`] waits.
    pub async fn send_request<S: ToSubject>(
        &self,
        subject: S,
        request: Request,
    ) -> Result<(), rnats_core::PublishError> {
        let subject = format!("{}.{}", self.shared.prefix, subject.subject_text());
        let inbox = request.inbox.unwrap_or_else(|| self.client.new_inbox());
        let payload = request.payload.unwrap_or_default();
        match request.headers {
            Some(headers) => {
                self.client
                    .publish_with_reply_and_headers(subject, inbox, headers, payload)
                    .await
            }
            None => {
                self.client
                    .publish_with_reply(subject, inbox, payload)
                    .await
            }
        }
    }

    /// Sends a raw request to `<prefix>.<subject>` and waits for the reply, bounded as
    /// [`Context::bound_request`] says.
    pub(crate) async fn api_request<S: ToSubject>(
        &self,
        subject: S,
        request: Request,
    ) -> Result<Message, RequestError> {
        let subject = format!("{}.{}", self.shared.prefix, subject.subject_text());
        let mut request = self.bound_request(request);
        if let Some(level) = self.shared.required_api_level {
            self.require([Feature::RequiredApiLevel])
                .map_err(|e| RequestError::with_source(RequestErrorKind::Other, e))?;
            let mut headers = request.headers.take().unwrap_or_default();
            headers.insert(NATS_REQUIRED_API_LEVEL, level.to_string());
            request.headers = Some(headers);
        }
        self.client
            .send_request(subject, request)
            .await
            .map_err(request_error)
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("prefix", &self.shared.prefix)
            .field("timeout", &self.timeout)
            .field("max_ack_inflight", &self.shared.capacity)
            .finish_non_exhaustive()
    }
}

/// Starts the task that waits out the acks of dropped publish futures: one per context,
/// waiting on all of them at once, each up to its timeout, then releasing its permit.
fn spawn_acker() -> mpsc::UnboundedSender<Acking> {
    // Unbounded is bounded here: every item holds one of the context's in-flight permits.
    let (tx, mut rx) = mpsc::unbounded_channel::<Acking>();
    // The handle is let go: the task ends by itself once every sender is gone.
    drop(rnats_core::runtime::spawn(async move {
        let mut waiting = FuturesUnordered::new();
        let mut open = true;
        poll_fn(|cx| {
            while open {
                match rx.poll_recv(cx) {
                    Poll::Ready(Some((reply, permit, timeout))) => waiting.push(async move {
                        let (reply, timing) = wait_ack(reply, timeout).await;
                        // A publish nobody awaited still ends: timed, its ack is read for
                        // the record (the stream's name, or the failure).
                        if timing.is_timed() {
                            timing.record(&crate::publish::finish(reply));
                        }
                        drop(permit);
                    }),
                    Poll::Ready(None) => open = false,
                    Poll::Pending => break,
                }
            }
            while let Poll::Ready(Some(())) = waiting.poll_next_unpin(cx) {}
            match (open, waiting.is_empty()) {
                (false, true) => Poll::Ready(()),
                _ => Poll::Pending,
            }
        })
        .await;
    }));
    tx
}

/// The kinds of [`RequestError`] (async-nats' variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestErrorKind {
    /// The JetStream API did not answer: JetStream is off, or the resource does not exist.
    NoResponders,
    /// No answer within the timeout.
    TimedOut,
    /// The subject is not valid.
    InvalidSubject,
    /// Anything else; the source says what.
    Other,
}

impl fmt::Display for RequestErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RequestErrorKind::NoResponders => "requested JetStream resource does not exist",
            RequestErrorKind::TimedOut => "timed out",
            RequestErrorKind::InvalidSubject => "invalid subject",
            RequestErrorKind::Other => "request failed",
        })
    }
}

/// Why a JetStream API request failed.
pub type RequestError = Error<RequestErrorKind>;

impl From<crate::Error> for RequestError {
    fn from(error: crate::Error) -> Self {
        RequestError::with_source(RequestErrorKind::Other, error)
    }
}

/// A Core request error as a JetStream one.
pub(crate) fn request_error(error: rnats_core::RequestError) -> RequestError {
    let kind = match error.kind() {
        CoreRequestErrorKind::TimedOut => RequestErrorKind::TimedOut,
        CoreRequestErrorKind::NoResponders => RequestErrorKind::NoResponders,
        CoreRequestErrorKind::InvalidSubject => RequestErrorKind::InvalidSubject,
        CoreRequestErrorKind::MaxPayloadExceeded | CoreRequestErrorKind::Other => {
            RequestErrorKind::Other
        }
    };
    RequestError::with_source(kind, error)
}

/// The kinds of [`AccountError`] (async-nats' variants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountErrorKind {
    /// No answer within the timeout.
    TimedOut,
    /// The server refused, with this error.
    JetStream(crate::Error),
    /// JetStream is not enabled (nobody answered).
    JetStreamUnavailable,
    /// Anything else.
    Other,
}

impl fmt::Display for AccountErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccountErrorKind::TimedOut => f.write_str("timed out"),
            AccountErrorKind::JetStream(error) => write!(f, "JetStream error: {error}"),
            AccountErrorKind::JetStreamUnavailable => f.write_str("JetStream unavailable"),
            AccountErrorKind::Other => f.write_str("error"),
        }
    }
}

/// Why `query_account` failed.
pub type AccountError = Error<AccountErrorKind>;

pub mod traits;

pub use crate::consumer_errors::*;
#[cfg(feature = "kv")]
#[cfg_attr(docsrs, doc(cfg(feature = "kv")))]
pub use crate::kv::{
    CreateKeyValueError, CreateKeyValueErrorKind, KeyValueError, KeyValueErrorKind,
    UpdateKeyValueError, UpdateKeyValueErrorKind,
};
#[cfg(feature = "object-store")]
#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
pub use crate::object_store::{
    CreateObjectStoreError, CreateObjectStoreErrorKind, DeleteObjectStore, DeleteObjectStoreKind,
    ObjectStoreError, ObjectStoreErrorKind,
};
pub use crate::stream_errors::*;
