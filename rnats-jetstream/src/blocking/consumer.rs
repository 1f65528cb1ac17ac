//! Consumers from a blocking [`Stream`]: create, get and delete them over the
//! `CONSUMER.*` API, and pull messages from one: a single pull request ([`Batch`]) or one
//! request after another ([`Messages`]).
//!
//! Pull requests (ADR-13) go to `CONSUMER.MSG.NEXT.<stream>.<consumer>` with an inbox of
//! their own as the reply subject. The server answers on that inbox with the messages and
//! with status messages (ADR-37): 100 heartbeats, 404 and 408 ending a request, 409 for
//! the rest. Those are read here, never handed to the user as messages.

use std::time::{Duration, Instant};

use bytes::Bytes;
use rnats_core::blocking::Subscriber;
use serde_json::json;

use super::context::Context;
use super::message::Message;
use super::messages::Messages;
use super::stream::Stream;
use crate::consumer::pull::batch::reply_error;
use crate::consumer::pull::pending::Reply;
use crate::consumer::pull::{
    BatchConfig, BatchError, BatchErrorKind, Config as PullConfig, MessagesError, MessagesErrorKind,
};
use crate::consumer::{
    FromConsumer, Info, IntoConsumerConfig, PriorityPolicy, StreamError, StreamErrorKind,
};
use crate::consumer_errors::{consumer_request_error, info_request_error};
use crate::context::{ConsumerError, ConsumerErrorKind, ConsumerInfoError};
use crate::is_valid_name;
use crate::response::Response;
use crate::stream::DeleteStatus;

/// How long past its expiry a request's end is waited for, in case the server's 408 was
/// lost.
pub(super) const EXPIRY_SLACK: Duration = Duration::from_secs(5);
/// Messages per pull request of [`Consumer::messages`].
const DEFAULT_BATCH: usize = 200;
/// How long each pull request of [`Consumer::messages`] stays open on the server.
pub(super) const DEFAULT_EXPIRES: Duration = Duration::from_secs(30);
/// Messages per pull request of [`Consumer::messages_with`] when only a byte limit is set.
const BYTES_ONLY_BATCH: usize = 1_000_000;
/// The idle heartbeat asked for by [`Consumer::messages`].
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);

impl Context {
    /// Creates the consumer `config` describes on `stream`, or updates it if it exists.
    pub fn create_consumer_on_stream<C: IntoConsumerConfig + FromConsumer, S: AsRef<str>>(
        &self,
        config: C,
        stream: S,
    ) -> Result<Consumer<C>, ConsumerError> {
        let stream = checked_stream(stream.as_ref())?;
        let config = config.into_consumer_config();
        let name = config.name.as_deref().or(config.durable_name.as_deref());
        // The name and a single plain filter go into the subject, so that permissions can
        // be scoped to them (ADR-34).
        let subject = match name {
            Some(name) if !is_valid_name(name) => {
                return Err(ConsumerError::new(ConsumerErrorKind::InvalidName));
            }
            Some(name)
                if config.filter_subject.is_empty()
                    || config.filter_subject.contains(['*', '>']) =>
            {
                format!("CONSUMER.CREATE.{stream}.{name}")
            }
            Some(name) => format!("CONSUMER.CREATE.{stream}.{name}.{}", config.filter_subject),
            None => format!("CONSUMER.CREATE.{stream}"),
        };
        let request = json!({ "stream_name": stream, "config": config, "action": "" });
        let response: Response<Info> = self
            .request(subject, &request)
            .map_err(consumer_request_error)?;
        typed_consumer(response.into_result()?, self)
    }

    /// A handle to the consumer `consumer` of `stream`, typed as `T` (its configuration
    /// must fit: a pull consumer for `pull::Config`).
    pub fn get_consumer_from_stream<T, C, S>(
        &self,
        consumer: C,
        stream: S,
    ) -> Result<Consumer<T>, ConsumerError>
    where
        T: FromConsumer + IntoConsumerConfig,
        C: AsRef<str>,
        S: AsRef<str>,
    {
        let stream = checked_stream(stream.as_ref())?;
        let consumer = checked_consumer(consumer.as_ref())?;
        let response: Response<Info> = self
            .request(format!("CONSUMER.INFO.{stream}.{consumer}"), &json!({}))
            .map_err(consumer_request_error)?;
        typed_consumer(response.into_result()?, self)
    }

    /// Deletes the consumer `consumer` of `stream`.
    pub fn delete_consumer_from_stream<C: AsRef<str>, S: AsRef<str>>(
        &self,
        consumer: C,
        stream: S,
    ) -> Result<DeleteStatus, ConsumerError> {
        let stream = checked_stream(stream.as_ref())?;
        let consumer = checked_consumer(consumer.as_ref())?;
        let response: Response<DeleteStatus> = self
            .request(format!("CONSUMER.DELETE.{stream}.{consumer}"), &json!({}))
            .map_err(consumer_request_error)?;
        Ok(response.into_result()?)
    }
}

impl Stream {
    /// Creates the consumer `config` describes on this stream, or updates it if it exists.
    pub fn create_consumer<C: IntoConsumerConfig + FromConsumer>(
        &self,
        config: C,
    ) -> Result<Consumer<C>, ConsumerError> {
        self.context.create_consumer_on_stream(config, &self.name)
    }

    /// A handle to the consumer `name` of this stream, typed as `T` (its configuration must
    /// fit: a pull consumer for `pull::Config`).
    pub fn get_consumer<T: FromConsumer + IntoConsumerConfig>(
        &self,
        name: &str,
    ) -> Result<Consumer<T>, ConsumerError> {
        self.context.get_consumer_from_stream(name, &self.name)
    }

    /// The info of the consumer `name` of this stream.
    pub fn consumer_info<T: AsRef<str>>(&self, name: T) -> Result<Info, ConsumerInfoError> {
        let subject = format!("CONSUMER.INFO.{}.{}", self.name, name.as_ref());
        let response: Response<Info> = self
            .context
            .request(subject, &json!({}))
            .map_err(info_request_error)?;
        Ok(response.into_result()?)
    }

    /// Deletes the consumer `name` of this stream.
    pub fn delete_consumer(&self, name: &str) -> Result<DeleteStatus, ConsumerError> {
        self.context.delete_consumer_from_stream(name, &self.name)
    }
}

/// `name` if it can name a stream.
fn checked_stream(name: &str) -> Result<&str, ConsumerError> {
    match is_valid_name(name) {
        true => Ok(name),
        false => Err(ConsumerError::with_source(
            ConsumerErrorKind::InvalidName,
            "invalid stream name",
        )),
    }
}

/// `name` if it can name a consumer.
fn checked_consumer(name: &str) -> Result<&str, ConsumerError> {
    match is_valid_name(name) {
        true => Ok(name),
        false => Err(ConsumerError::new(ConsumerErrorKind::InvalidName)),
    }
}

/// The consumer `info` describes as a `Consumer<T>`, if its configuration fits `T`.
fn typed_consumer<T: FromConsumer + IntoConsumerConfig>(
    info: Info,
    context: &Context,
) -> Result<Consumer<T>, ConsumerError> {
    let config = T::try_from_consumer_config(info.config.clone()).map_err(|error| {
        ConsumerError::with_source(ConsumerErrorKind::InvalidConsumerType, error)
    })?;
    Ok(Consumer {
        context: context.clone(),
        config,
        info,
    })
}

/// A consumer on the server, handled through its configuration type `T`.
#[derive(Debug, Clone)]
pub struct Consumer<T: IntoConsumerConfig = PullConfig> {
    context: Context,
    config: T,
    info: Info,
}

/// A pull consumer.
pub type PullConsumer = Consumer<PullConfig>;

impl<T: IntoConsumerConfig> Consumer<T> {
    /// Fetches the consumer's info, keeps it as the cached info, and returns it.
    pub fn info(&mut self) -> Result<&Info, ConsumerInfoError> {
        self.info = self.get_info()?;
        Ok(&self.info)
    }

    /// Fetches the consumer's info, leaving the cached info alone.
    pub fn get_info(&self) -> Result<Info, ConsumerInfoError> {
        let subject = format!("CONSUMER.INFO.{}.{}", self.info.stream_name, self.info.name);
        let response: Response<Info> = self
            .context
            .request(subject, &json!({}))
            .map_err(info_request_error)?;
        Ok(response.into_result()?)
    }

    /// The info as of creation, retrieval or the last [`Consumer::info`] call.
    pub fn cached_info(&self) -> &Info {
        &self.info
    }

    /// A handle from its parts.
    pub(super) fn from_parts(context: Context, config: T, info: Info) -> Consumer<T> {
        Consumer {
            context,
            config,
            info,
        }
    }

    /// The configuration the handle was made with.
    pub(super) fn config(&self) -> &T {
        &self.config
    }

    /// The context the handle calls through.
    pub(super) fn context(&self) -> &Context {
        &self.context
    }
}

impl Consumer<PullConfig> {
    /// One pull request for up to `max_messages`, open on the server for `expires`: an
    /// iterator over the messages, which ends once that many came, or the request expired
    /// (the server's 408), or the server ended it otherwise.
    ///
    /// ```no_run
    /// # fn run(consumer: rnats_jetstream::blocking::PullConsumer) -> Result<(), rnats_core::Error> {
    /// use std::time::Duration;
    /// for message in consumer.fetch(10, Duration::from_secs(2))? {
    ///     let message = message?;
    ///     message.ack()?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn fetch(&self, max_messages: usize, expires: Duration) -> Result<Batch, BatchError> {
        self.batch(BatchConfig {
            batch: max_messages,
            expires: Some(expires),
            ..Default::default()
        })
    }

    /// One pull request for up to `max_messages` of those already there: ends at once
    /// (the server's 404) when there are none.
    pub fn fetch_no_wait(&self, max_messages: usize) -> Result<Batch, BatchError> {
        self.batch(BatchConfig {
            batch: max_messages,
            no_wait: true,
            ..Default::default()
        })
    }

    /// One pull request as `request` says (batch, bytes, expiry, heartbeat, ...). A request
    /// without `expires` (nor `no_wait`) stays open on the server until it is filled; its
    /// iterator waits as long.
    pub fn batch(&self, request: BatchConfig) -> Result<Batch, BatchError> {
        // A one-shot pull would take a pin it never renews (ADR-42); as in async-nats.
        if self.config.priority_policy == PriorityPolicy::PinnedClient {
            return Err(BatchError::new(BatchErrorKind::PinnedClient));
        }
        let client = &self.context.client;
        let inbox = client.new_inbox();
        let subscriber = client
            .subscribe(inbox.as_str())
            .map_err(|error| BatchError::with_source(BatchErrorKind::Subscribe, error))?;
        let payload = serde_json::to_vec(&request)
            .map_err(|error| BatchError::with_source(BatchErrorKind::Serialize, error))?;
        client
            .publish_with_reply(self.next_subject(), inbox.as_str(), Bytes::from(payload))
            .map_err(|error| BatchError::with_source(BatchErrorKind::Pull, error))?;
        let wait = match request.expires {
            Some(expires) if !expires.is_zero() => Some(expires),
            // A no-wait request is answered at once; the API timeout bounds the wait.
            None if request.no_wait => Some(self.context.timeout()),
            _ => None,
        };
        let now = Instant::now();
        Ok(Batch {
            subscriber,
            context: self.context.clone(),
            remaining: request.batch,
            deadline: wait.and_then(|wait| now.checked_add(wait.saturating_add(EXPIRY_SLACK))),
            heartbeat: heartbeat_of(request.idle_heartbeat),
            done: false,
        })
    }

    /// The consumer's messages, one pull request after another (ADR-37): 200 messages per
    /// request, 30 s expiry and 15 s idle heartbeats. Iterating waits for the next message
    /// as long as it takes; [`Messages::next_timeout`] waits a bounded time.
    pub fn messages(&self) -> Result<Messages, StreamError> {
        self.messages_with(BatchConfig {
            batch: DEFAULT_BATCH,
            expires: Some(DEFAULT_EXPIRES),
            idle_heartbeat: DEFAULT_HEARTBEAT,
            ..Default::default()
        })
    }

    /// [`Consumer::messages`] with each pull request as `request` says. Without
    /// `expires`, each request asks for 30 s; without a heartbeat, missing requests are
    /// noticed only when the next one is due.
    pub fn messages_with(&self, mut request: BatchConfig) -> Result<Messages, StreamError> {
        request.no_wait = false;
        request.batch = match (request.batch, request.max_bytes) {
            // Only a byte limit: the bytes decide (ADR-37, as the async consumer does).
            (0, bytes) if bytes > 0 => BYTES_ONLY_BATCH,
            (batch, _) => batch.max(1),
        };
        request.expires = request.expires.or(Some(DEFAULT_EXPIRES));
        let inbox = self.context.client.new_inbox();
        let subscriber = self
            .context
            .client
            .subscribe(inbox.as_str())
            .map_err(|error| StreamError::with_source(StreamErrorKind::Other, error))?;
        Ok(Messages::new(
            self.context.clone(),
            request,
            subscriber,
            inbox,
            self.next_subject(),
            [&self.info.stream_name, &self.info.name],
        ))
    }

    /// `<prefix>.CONSUMER.MSG.NEXT.<stream>.<consumer>`.
    fn next_subject(&self) -> String {
        format!(
            "{}.CONSUMER.MSG.NEXT.{}.{}",
            self.context.prefix(),
            self.info.stream_name,
            self.info.name
        )
    }
}

/// The silence after which heartbeats count as missed: two intervals (ADR-9).
pub(super) fn heartbeat_of(interval: Duration) -> Option<Duration> {
    (!interval.is_zero()).then(|| interval.saturating_mul(2))
}

/// The messages of one pull request, from [`Consumer::fetch`] or [`Consumer::batch`]: an
/// iterator that ends when the request is fulfilled, expires or is ended by the server. A
/// terminal status (consumer deleted, request refused, ...) is its last item, an error.
pub struct Batch {
    subscriber: Subscriber,
    context: Context,
    /// Messages the request may still deliver.
    remaining: usize,
    /// The request's end by this client's clock, in case the server's end never comes.
    deadline: Option<Instant>,
    /// Silence that counts as missed heartbeats, if the request asked for heartbeats.
    heartbeat: Option<Duration>,
    done: bool,
}

impl Iterator for Batch {
    type Item = Result<Message, MessagesError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done && self.remaining > 0 {
            let now = Instant::now();
            // Past the request's end, what already came is still taken (a wait of zero)
            // before the batch ends.
            let left = self.deadline.map(|d| d.saturating_duration_since(now));
            let wait = match (left, self.heartbeat) {
                (Some(left), Some(beat)) => Some(left.min(beat)),
                (left, beat) => left.or(beat),
            };
            let message = match wait {
                None => self.subscriber.next(),
                Some(wait) => match self.subscriber.next_timeout(wait) {
                    Ok(message) => message,
                    // The deadline is checked again at the top.
                    Err(_) if self.deadline.is_some_and(|d| Instant::now() >= d) => break,
                    Err(_) => {
                        self.done = true;
                        let error = MessagesError::new(MessagesErrorKind::MissingHeartbeat);
                        return Some(Err(error));
                    }
                },
            };
            let Some(message) = message else { break };
            match Reply::classify(&message) {
                Reply::Message => {
                    self.remaining -= 1;
                    let context = self.context.clone();
                    return Some(Ok(Message { message, context }));
                }
                Reply::Heartbeat => {}
                // 404, 408 and the 409s that only end a request: it is over, no error.
                Reply::Ended { .. } => break,
                other => {
                    self.done = true;
                    return Some(Err(reply_error(other)));
                }
            }
        }
        self.done = true;
        None
    }
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("remaining", &self.remaining)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
