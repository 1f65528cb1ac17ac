//! Endpoints: the request streams of a service, their builder, and their INFO and STATS
//! entries.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use rnats_core::{Message, SubscribeErrorKind, Subscriber, UnsubscribeError};
use serde::{Deserialize, Serialize};

use crate::error::{self, ServiceError, ServiceErrorKind};
use crate::responses::{last_error, nanos, null_as_default, null_as_empty};
use crate::service::{Entry, Shared};
use crate::{QueueGroupSetting, Request};

/// An endpoint's entry in an INFO reply.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    /// The endpoint name.
    pub name: String,
    /// The subject it listens on, group prefixes included.
    pub subject: String,
    /// Its queue group; empty when the queue group is disabled.
    #[serde(default, deserialize_with = "null_as_default")]
    pub queue_group: String,
    /// The endpoint's metadata.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub metadata: HashMap<String, String>,
}

/// An endpoint's entry in a STATS reply, and what [`Service::stats`](crate::Service::stats)
/// returns per endpoint.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// The endpoint name.
    pub name: String,
    /// The subject it listens on.
    pub subject: String,
    /// Requests answered since start or reset.
    #[serde(rename = "num_requests")]
    pub requests: usize,
    /// Of those, answered with an error.
    #[serde(rename = "num_errors")]
    pub errors: usize,
    /// Time from a request's arrival to its answer, summed (JSON: nanoseconds).
    #[serde(default, with = "nanos")]
    pub processing_time: Duration,
    /// `processing_time / requests` (JSON: nanoseconds).
    #[serde(default, with = "nanos")]
    pub average_processing_time: Duration,
    /// The last error answered (JSON: `"<code>:<status>"`, `""` for none).
    #[serde(default, with = "last_error")]
    pub last_error: Option<error::Error>,
    /// What the service's stats handler returned for this endpoint at the last STATS request.
    #[serde(default)]
    pub data: Option<serde_json::Value>,
    /// Its queue group; empty when the queue group is disabled.
    #[serde(default, deserialize_with = "null_as_default")]
    pub queue_group: String,
}

/// The requests sent to one endpoint, as a [`Stream`]; answer each with
/// [`Request::respond`]. The stream ends when the service or the endpoint is stopped (after
/// the requests already received) or the connection closes. Dropping it unsubscribes, but the
/// endpoint stays listed in INFO and STATS (as async-nats keeps it) until the service stops;
/// [`Endpoint::stop`] is how to take it out.
pub struct Endpoint {
    slot: Arc<Slot>,
    record: Arc<Record>,
    shared: Arc<Shared>,
}

impl Endpoint {
    /// Stops this endpoint alone: no new requests reach it; the ones already received are
    /// still yielded, then the stream ends. It leaves INFO and STATS.
    pub async fn stop(&mut self) -> Result<(), std::io::Error> {
        self.shared.remove_endpoint(&self.record);
        self.slot.drain().await.map_err(std::io::Error::other)
    }
}

impl Stream for Endpoint {
    type Item = Request;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Request>> {
        let this = self.get_mut();
        this.slot.poll_next(cx).map(|message| {
            message.map(|message| {
                Request::new(
                    this.shared.client.clone(),
                    message,
                    Arc::clone(&this.record),
                )
            })
        })
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.record.info.name)
            .field("subject", &self.record.info.subject)
            .finish_non_exhaustive()
    }
}

/// Adds an endpoint with a name, metadata or queue group of its own; from
/// [`Service::endpoint_builder`](crate::Service::endpoint_builder) or
/// [`Group::endpoint_builder`](crate::Group::endpoint_builder).
pub struct EndpointBuilder {
    shared: Arc<Shared>,
    prefix: Option<String>,
    name: Option<String>,
    metadata: Option<HashMap<String, String>>,
    queue_group: QueueGroupSetting,
    capacity: Option<(usize, usize)>,
}

impl EndpointBuilder {
    pub(crate) fn new(
        shared: Arc<Shared>,
        prefix: Option<String>,
        queue_group: QueueGroupSetting,
    ) -> EndpointBuilder {
        EndpointBuilder {
            shared,
            prefix,
            name: None,
            metadata: None,
            queue_group,
            capacity: None,
        }
    }

    /// Names the endpoint; by default the name is its subject with `.` replaced by `-`.
    pub fn name<S: ToString>(mut self, name: S) -> EndpointBuilder {
        self.name = Some(name.to_string());
        self
    }

    /// Sets the endpoint's metadata, reported by INFO.
    pub fn metadata(mut self, metadata: HashMap<String, String>) -> EndpointBuilder {
        self.metadata = Some(metadata);
        self
    }

    /// Sets the endpoint's queue group instead of the group's or service's.
    pub fn queue_group<S: ToString>(mut self, queue_group: S) -> EndpointBuilder {
        self.queue_group = QueueGroupSetting::Named(queue_group.to_string());
        self
    }

    /// Subscribes this endpoint without a queue group: every instance receives every request
    /// (rnats extension, ADR-32's "queue group disabled").
    pub fn queue_group_disabled(mut self) -> EndpointBuilder {
        self.queue_group = QueueGroupSetting::Disabled;
        self
    }

    /// Bounds the requests this endpoint holds received and not yet taken from its stream:
    /// `messages` of them, `bytes` of headers and payloads (each at least 1), instead of the
    /// client's [`subscription_capacity`](rnats_core::ConnectOptions::subscription_capacity)
    /// and [`subscription_capacity_bytes`](rnats_core::ConnectOptions::subscription_capacity_bytes)
    /// (nats.go micro's `WithEndpointPendingLimits`; rnats extension). A request past either
    /// bound is dropped unanswered, so its caller times out (or another instance of the queue
    /// group answers a retry): the endpoint's subscription is reported as a slow consumer
    /// (`ConnectionEvent::SlowConsumer` with the endpoint's subject), and each dropped
    /// request counts as an error in the endpoint's stats.
    pub fn capacity(mut self, messages: usize, bytes: usize) -> EndpointBuilder {
        self.capacity = Some((messages, bytes));
        self
    }

    /// Subscribes the endpoint on `subject` (after the group prefix, if any) and returns its
    /// request stream.
    pub async fn add<S: ToString>(self, subject: S) -> Result<Endpoint, rnats_core::Error> {
        Ok(self.add_endpoint(subject.to_string()).await?)
    }

    async fn add_endpoint(self, subject: String) -> Result<Endpoint, ServiceError> {
        if self.shared.is_stopped() {
            return Err(ServiceError::new(ServiceErrorKind::Stopped));
        }
        let subject = match &self.prefix {
            Some(prefix) => format!("{prefix}.{subject}"),
            None => subject,
        };
        let client = &self.shared.client;
        let subscribed = match (self.queue_group.name(), self.capacity) {
            (Some(queue), None) => {
                client
                    .queue_subscribe(subject.clone(), queue.to_owned())
                    .await
            }
            (Some(queue), Some((messages, bytes))) => {
                client
                    .queue_subscribe_with_capacity(
                        subject.clone(),
                        queue.to_owned(),
                        messages,
                        bytes,
                    )
                    .await
            }
            (None, None) => client.subscribe(subject.clone()).await,
            (None, Some((messages, bytes))) => {
                client
                    .subscribe_with_capacity(subject.clone(), messages, bytes)
                    .await
            }
        };
        let subscriber = subscribed.map_err(|e| {
            let kind = match e.kind() {
                SubscribeErrorKind::InvalidSubject => ServiceErrorKind::InvalidSubject,
                SubscribeErrorKind::InvalidQueueName => ServiceErrorKind::InvalidQueueGroup,
                _ => ServiceErrorKind::Subscribe,
            };
            ServiceError::with_source(kind, e)
        })?;
        let record = Arc::new(Record {
            key: self.name.clone().unwrap_or_else(|| subject.clone()),
            info: Info {
                name: self.name.unwrap_or_else(|| subject.replace('.', "-")),
                subject,
                queue_group: self.queue_group.name().unwrap_or_default().to_owned(),
                metadata: self.metadata.unwrap_or_default(),
            },
            counters: Mutex::default(),
        });
        let slot = Arc::new(Slot::new(subscriber));
        let entry = Entry {
            record: Arc::clone(&record),
            slot: Arc::downgrade(&slot),
        };
        // Checked again under the lock: a stop that began since would not drain this one.
        if !self.shared.add_endpoint(entry) {
            return Err(ServiceError::new(ServiceErrorKind::Stopped));
        }
        tracing::debug!(subject = %record.info.subject, "service endpoint added");
        Ok(Endpoint {
            slot,
            record,
            shared: self.shared,
        })
    }
}

impl std::fmt::Debug for EndpointBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointBuilder")
            .field("prefix", &self.prefix)
            .field("name", &self.name)
            .field("queue_group", &self.queue_group)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

/// One endpoint as the service knows it: its INFO entry and its counters.
#[derive(Debug)]
pub(crate) struct Record {
    /// The key of [`Service::stats`](crate::Service::stats)' map and of the stats handler's
    /// first argument: the name if one was given, else the full subject (async-nats' choice).
    pub(crate) key: String,
    pub(crate) info: Info,
    counters: Mutex<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    requests: usize,
    errors: usize,
    processing_time: Duration,
    last_error: Option<error::Error>,
    data: Option<serde_json::Value>,
    /// Requests the subscription had dropped at the last reset: the stats count the ones
    /// dropped since.
    dropped_before: u64,
    /// Requests the subscription had dropped when last asked, for once its stream is gone.
    dropped_seen: u64,
}

impl Record {
    /// Counts one answered request.
    pub(crate) fn record(&self, elapsed: Duration, error: Option<error::Error>) {
        let mut counters = lock(&self.counters);
        counters.requests += 1;
        counters.processing_time += elapsed;
        if let Some(error) = error {
            counters.errors += 1;
            counters.last_error = Some(error);
        }
    }

    /// The endpoint's stats, `dropped` being the requests its subscription has dropped so
    /// far ([`Slot::dropped`]; `None` once its stream is dropped: the last count then):
    /// those since the last reset count as errors, as nats.go micro counts a slow consumer
    /// on an endpoint.
    pub(crate) fn stats(&self, dropped: Option<u64>) -> Stats {
        let mut counters = lock(&self.counters);
        if let Some(dropped) = dropped {
            counters.dropped_seen = dropped;
        }
        let dropped = usize::try_from(
            counters
                .dropped_seen
                .saturating_sub(counters.dropped_before),
        )
        .unwrap_or(usize::MAX);
        let average = match u32::try_from(counters.requests) {
            Ok(0) => Duration::ZERO,
            Ok(n) => counters.processing_time / n,
            Err(_) => Duration::from_nanos(
                (counters.processing_time.as_nanos() / counters.requests as u128) as u64,
            ),
        };
        Stats {
            name: self.info.name.clone(),
            subject: self.info.subject.clone(),
            requests: counters.requests,
            errors: counters.errors.saturating_add(dropped),
            processing_time: counters.processing_time,
            average_processing_time: average,
            last_error: counters.last_error.clone(),
            data: counters.data.clone(),
            queue_group: self.info.queue_group.clone(),
        }
    }

    pub(crate) fn set_data(&self, data: serde_json::Value) {
        lock(&self.counters).data = Some(data);
    }

    /// Zeroes the counts and timings, `dropped` as for [`Record::stats`] (the custom data
    /// stays until the next STATS).
    pub(crate) fn reset(&self, dropped: Option<u64>) {
        let mut counters = lock(&self.counters);
        let data = counters.data.take();
        let dropped = dropped.unwrap_or(counters.dropped_seen);
        *counters = Counters {
            data,
            dropped_before: dropped,
            dropped_seen: dropped,
            ..Counters::default()
        };
    }
}

/// An endpoint's subscriber, shared between its stream and the service so that
/// [`Service::stop`](crate::Service::stop) can drain it while a handler holds a request and
/// nobody polls the stream.
pub(crate) struct Slot {
    state: Mutex<SlotState>,
}

struct SlotState {
    /// `None` while a drain has it out (for the flush round trip).
    subscriber: Option<Subscriber>,
    /// The stream's waker while the subscriber is out.
    waker: Option<Waker>,
    drained: bool,
    /// The subscriber's dropped count when last read, for while a drain has it out.
    dropped: u64,
}

impl Slot {
    fn new(subscriber: Subscriber) -> Slot {
        Slot {
            state: Mutex::new(SlotState {
                subscriber: Some(subscriber),
                waker: None,
                drained: false,
                dropped: 0,
            }),
        }
    }

    /// Requests the endpoint's subscription dropped because its queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        let mut state = lock(&self.state);
        if let Some(subscriber) = &state.subscriber {
            state.dropped = subscriber.dropped();
        }
        state.dropped
    }

    fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Message>> {
        let mut state = lock(&self.state);
        match state.subscriber.as_mut() {
            Some(subscriber) => subscriber.poll_next_unpin(cx),
            None => {
                state.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// Tells the server to stop sending, waits until what it sent before has arrived, and
    /// ends the stream after that. Done once; later calls return at once.
    pub(crate) async fn drain(&self) -> Result<(), UnsubscribeError> {
        let mut lent = {
            let mut state = lock(&self.state);
            if state.drained {
                return Ok(());
            }
            let Some(subscriber) = state.subscriber.take() else {
                return Ok(());
            };
            state.drained = true;
            Lent {
                slot: self,
                subscriber: Some(subscriber),
            }
        };
        match lent.subscriber.as_mut() {
            Some(subscriber) => subscriber.drain().await,
            None => Ok(()),
        }
    }
}

/// A subscriber taken out of its slot; put back on drop, even if the drain is cancelled.
struct Lent<'a> {
    slot: &'a Slot,
    subscriber: Option<Subscriber>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.slot.state);
        state.subscriber = self.subscriber.take();
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }
}

/// Slots are looked up from the service through weak references: the stream owns its
/// subscriber, so dropping an [`Endpoint`] unsubscribes.
pub(crate) type WeakSlot = Weak<Slot>;

/// Locks, ignoring poisoning: the data behind these locks stays consistent between statements.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
