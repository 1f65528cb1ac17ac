//! [`Service`] and [`Group`]: one running service instance, its endpoints, and the task that
//! answers its monitoring requests.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::SelectAll;
use rnats_core::datetime::DateTime;
use rnats_core::{Client, Message, QueueGroup, Subscriber};
use tokio::sync::oneshot;

use crate::endpoint::{self, Endpoint, EndpointBuilder, Record, WeakSlot, lock};
use crate::error::{ServiceError, ServiceErrorKind};
use crate::validate::{is_valid_name, is_valid_semver};
use crate::{
    Config, INFO_RESPONSE_TYPE, Info, PING_RESPONSE_TYPE, PingResponse, QueueGroupSetting,
    SERVICE_API_PREFIX, STATS_RESPONSE_TYPE, Stats, StatsHandler, Verb,
};

/// A running service instance: add endpoints to it, read its info and stats, stop it.
///
/// Dropping it leaves the service running (as in async-nats) until the client closes; call
/// [`Service::stop`] to take it down.
#[derive(Debug)]
pub struct Service {
    shared: Arc<Shared>,
    queue_group: QueueGroupSetting,
    verbs: Option<VerbTask>,
}

#[derive(Debug)]
struct VerbTask {
    stop: oneshot::Sender<()>,
    done: rnats_core::runtime::JoinHandle<()>,
}

impl Service {
    /// Validates `config`, subscribes the monitoring subjects and starts answering them.
    pub(crate) async fn start(
        client: Client,
        config: Config,
        queue_group: QueueGroupSetting,
    ) -> Result<Service, ServiceError> {
        if !is_valid_name(&config.name) {
            return Err(ServiceError::new(ServiceErrorKind::InvalidName));
        }
        if !is_valid_semver(&config.version) {
            return Err(ServiceError::new(ServiceErrorKind::InvalidVersion));
        }
        check_queue_group(&queue_group)?;
        let id = rnats_core::id::next();
        let mut subscribers = Vec::with_capacity(9);
        for verb in [Verb::Ping, Verb::Info, Verb::Stats] {
            for subject in [
                format!("{SERVICE_API_PREFIX}.{verb}"),
                format!("{SERVICE_API_PREFIX}.{verb}.{}", config.name),
                format!("{SERVICE_API_PREFIX}.{verb}.{}.{id}", config.name),
            ] {
                let subscriber = client
                    .subscribe(subject)
                    .await
                    .map_err(|e| ServiceError::with_source(ServiceErrorKind::Subscribe, e))?;
                subscribers.push(subscriber);
            }
        }
        let shared = Arc::new(Shared {
            client,
            name: config.name,
            id,
            version: config.version,
            description: config.description.unwrap_or_default(),
            metadata: config.metadata.unwrap_or_default(),
            started: rnats_core::datetime::now(),
            endpoints: Mutex::default(),
            stats_handler: Mutex::new(config.stats_handler),
            stopped: AtomicBool::new(false),
        });
        let (stop, stopped) = oneshot::channel();
        let done = rnats_core::runtime::spawn(answer_verbs(
            Arc::clone(&shared),
            futures_util::stream::select_all(subscribers),
            stopped,
        ));
        tracing::debug!(name = %shared.name, id = %shared.id, "service started");
        Ok(Service {
            shared,
            queue_group,
            verbs: Some(VerbTask { stop, done }),
        })
    }

    /// Stops the instance: no more monitoring replies and no new requests; the requests its
    /// endpoints already received are still yielded (and can be answered), then their streams
    /// end. Returns once the server has taken every unsubscription. Other instances of the
    /// same service keep serving.
    pub async fn stop(mut self) -> Result<(), rnats_core::Error> {
        self.shared.stopped.store(true, Ordering::SeqCst);
        if let Some(task) = self.verbs.take() {
            // Fails only if the task already ended (client closed): nothing to stop then.
            let _ = task.stop.send(());
            if let Err(error) = task.done.await {
                tracing::debug!(%error, "service monitoring task ended abnormally");
            }
        }
        let slots: Vec<_> = lock(&self.shared.endpoints)
            .iter()
            .filter_map(|entry| entry.slot.upgrade())
            .collect();
        let drained = futures_util::future::join_all(slots.iter().map(|slot| slot.drain())).await;
        if let Some(error) = drained.into_iter().find_map(Result::err) {
            return Err(ServiceError::with_source(ServiceErrorKind::Drain, error).into());
        }
        // The monitoring subjects' UNSUBs are queued: wait until the server has them.
        self.shared
            .client
            .flush()
            .await
            .map_err(|e| ServiceError::with_source(ServiceErrorKind::Drain, e))?;
        Ok(())
    }

    /// Zeroes every endpoint's request and error counts and processing times.
    pub async fn reset(&mut self) {
        for entry in lock(&self.shared.endpoints).iter() {
            entry.record.reset(entry.dropped());
        }
    }

    /// Every endpoint's stats, keyed by endpoint name (or subject, for an endpoint added
    /// without a name).
    pub async fn stats(&self) -> HashMap<String, endpoint::Stats> {
        lock(&self.shared.endpoints)
            .iter()
            .map(|entry| {
                (
                    entry.record.key.clone(),
                    entry.record.stats(entry.dropped()),
                )
            })
            .collect()
    }

    /// What INFO answers: identity, description, metadata and endpoints.
    pub async fn info(&self) -> Info {
        self.shared.info()
    }

    /// A group of endpoints under the subject prefix `prefix`, with this service's queue
    /// group.
    pub fn group<S: ToString>(&self, prefix: S) -> Group {
        Group::new(
            Arc::clone(&self.shared),
            prefix.to_string(),
            self.queue_group.clone(),
        )
    }

    /// A group under `prefix` whose endpoints join `queue_group`.
    pub fn group_with_queue_group<S: ToString, Z: ToString>(
        &self,
        prefix: S,
        queue_group: Z,
    ) -> Group {
        Group::new(
            Arc::clone(&self.shared),
            prefix.to_string(),
            QueueGroupSetting::Named(queue_group.to_string()),
        )
    }

    /// A group under `prefix` whose endpoints have no queue group: every instance receives
    /// every request (rnats extension).
    pub fn group_with_queue_group_disabled<S: ToString>(&self, prefix: S) -> Group {
        Group::new(
            Arc::clone(&self.shared),
            prefix.to_string(),
            QueueGroupSetting::Disabled,
        )
    }

    /// A builder for an endpoint with its own name, metadata or queue group.
    pub fn endpoint_builder(&self) -> EndpointBuilder {
        EndpointBuilder::new(Arc::clone(&self.shared), None, self.queue_group.clone())
    }

    /// Adds an endpoint on `subject`, named after it, and returns its request stream.
    pub async fn endpoint<S: ToString>(&self, subject: S) -> Result<Endpoint, rnats_core::Error> {
        self.endpoint_builder().add(subject).await
    }
}

/// Endpoints under a common subject prefix, sharing a queue group; groups nest
/// (`service.group("v1").group("users")` is the prefix `v1.users`).
#[derive(Debug)]
pub struct Group {
    shared: Arc<Shared>,
    prefix: String,
    queue_group: QueueGroupSetting,
}

impl Group {
    fn new(shared: Arc<Shared>, prefix: String, queue_group: QueueGroupSetting) -> Group {
        Group {
            shared,
            prefix,
            queue_group,
        }
    }

    /// A nested group, `<this prefix>.<prefix>`, with this group's queue group.
    pub fn group<S: ToString>(&self, prefix: S) -> Group {
        self.nested(prefix.to_string(), self.queue_group.clone())
    }

    /// A nested group whose endpoints join `queue_group`.
    pub fn group_with_queue_group<S: ToString, Z: ToString>(
        &self,
        prefix: S,
        queue_group: Z,
    ) -> Group {
        self.nested(
            prefix.to_string(),
            QueueGroupSetting::Named(queue_group.to_string()),
        )
    }

    /// A nested group without a queue group (rnats extension).
    pub fn group_with_queue_group_disabled<S: ToString>(&self, prefix: S) -> Group {
        self.nested(prefix.to_string(), QueueGroupSetting::Disabled)
    }

    /// Adds an endpoint on `<prefix>.<subject>`.
    pub async fn endpoint<S: ToString>(&self, subject: S) -> Result<Endpoint, rnats_core::Error> {
        self.endpoint_builder().add(subject).await
    }

    /// A builder for an endpoint of this group with its own name, metadata or queue group.
    pub fn endpoint_builder(&self) -> EndpointBuilder {
        EndpointBuilder::new(
            Arc::clone(&self.shared),
            Some(self.prefix.clone()),
            self.queue_group.clone(),
        )
    }

    fn nested(&self, prefix: String, queue_group: QueueGroupSetting) -> Group {
        Group::new(
            Arc::clone(&self.shared),
            format!("{}.{prefix}", self.prefix),
            queue_group,
        )
    }
}

/// What the service handle, its endpoints and its monitoring task share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) client: Client,
    name: String,
    id: String,
    version: String,
    description: String,
    metadata: HashMap<String, String>,
    started: DateTime,
    /// In the order they were added, which is the order INFO and STATS list them.
    endpoints: Mutex<Vec<Entry>>,
    stats_handler: Mutex<Option<StatsHandler>>,
    stopped: AtomicBool,
}

/// An endpoint in the service's list.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) record: Arc<Record>,
    pub(crate) slot: WeakSlot,
}

impl Entry {
    /// Requests its subscription dropped so far; `None` once its stream is dropped.
    fn dropped(&self) -> Option<u64> {
        self.slot.upgrade().map(|slot| slot.dropped())
    }
}

impl Shared {
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Adds an endpoint unless the service is stopping; false if it is.
    pub(crate) fn add_endpoint(&self, entry: Entry) -> bool {
        let mut endpoints = lock(&self.endpoints);
        if self.is_stopped() {
            return false;
        }
        endpoints.push(entry);
        true
    }

    pub(crate) fn remove_endpoint(&self, record: &Arc<Record>) {
        lock(&self.endpoints).retain(|entry| !Arc::ptr_eq(&entry.record, record));
    }

    fn ping(&self) -> PingResponse {
        PingResponse {
            kind: PING_RESPONSE_TYPE.to_owned(),
            name: self.name.clone(),
            id: self.id.clone(),
            version: self.version.clone(),
            metadata: self.metadata.clone(),
        }
    }

    fn info(&self) -> Info {
        Info {
            kind: INFO_RESPONSE_TYPE.to_owned(),
            name: self.name.clone(),
            id: self.id.clone(),
            description: self.description.clone(),
            version: self.version.clone(),
            metadata: self.metadata.clone(),
            endpoints: lock(&self.endpoints)
                .iter()
                .map(|entry| entry.record.info.clone())
                .collect(),
        }
    }

    /// The STATS reply, after asking the stats handler for each endpoint's data.
    fn stats(&self) -> Stats {
        let records: Vec<(Arc<Record>, Option<u64>)> = lock(&self.endpoints)
            .iter()
            .map(|entry| (Arc::clone(&entry.record), entry.dropped()))
            .collect();
        // The handler is user code: called with no lock held but its own.
        if let Some(handler) = lock(&self.stats_handler).as_mut() {
            for (record, dropped) in &records {
                let data = (handler.0)(record.key.clone(), record.stats(*dropped));
                record.set_data(data);
            }
        }
        Stats {
            kind: STATS_RESPONSE_TYPE.to_owned(),
            name: self.name.clone(),
            id: self.id.clone(),
            version: self.version.clone(),
            metadata: self.metadata.clone(),
            started: self.started,
            endpoints: records
                .iter()
                .map(|(record, dropped)| record.stats(*dropped))
                .collect(),
        }
    }

    /// Answers one monitoring request.
    async fn answer(&self, message: Message) {
        let Some(reply) = message.reply else {
            return;
        };
        // `$SRV.<VERB>[.<name>[.<id>]]`: the verb is the second token.
        let body = match message.subject.split('.').nth(1) {
            Some("PING") => serde_json::to_vec(&self.ping()),
            Some("INFO") => serde_json::to_vec(&self.info()),
            Some("STATS") => serde_json::to_vec(&self.stats()),
            _ => return,
        };
        let body = match body {
            Ok(body) => Bytes::from(body),
            Err(error) => {
                tracing::warn!(%error, subject = %message.subject, "cannot encode a service reply");
                return;
            }
        };
        if let Err(error) = self.client.publish(reply, body).await {
            tracing::debug!(%error, "cannot send a service monitoring reply");
        }
    }
}

/// Answers PING, INFO and STATS until told to stop, then unsubscribes. If the [`Service`]
/// handle is dropped without a stop, it answers until the client closes.
async fn answer_verbs(
    shared: Arc<Shared>,
    mut requests: SelectAll<Subscriber>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut handle_alive = true;
    loop {
        tokio::select! {
            biased;
            told = &mut stop, if handle_alive => match told {
                Ok(()) => break,
                Err(_) => handle_alive = false,
            },
            message = requests.next() => match message {
                Some(message) => shared.answer(message).await,
                None => return,
            },
        }
    }
    for subscriber in requests.iter_mut() {
        // Fails only when the client is closed, which unsubscribes everything anyway.
        let _ = subscriber.unsubscribe().await;
    }
}

fn check_queue_group(queue_group: &QueueGroupSetting) -> Result<(), ServiceError> {
    match queue_group {
        QueueGroupSetting::Named(name) => QueueGroup::try_from(name.as_str())
            .map(drop)
            .map_err(|e| ServiceError::with_source(ServiceErrorKind::InvalidQueueGroup, e)),
        QueueGroupSetting::Disabled => Ok(()),
    }
}
