//! Watching a bucket: an ordered push consumer (ADR-17) on the watched keys, its messages
//! turned into entries, with the end of the initial values marked (ADR-8).
//!
//! The consumer under a watch is recreated after the last revision seen whenever a delivery
//! goes missing, heartbeats stop, or the client reconnects, so a watch sees every revision
//! once, in order, across reconnects and server restarts.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, Stream, StreamExt};
use rnats_core::runtime::{self, Sleep};

use super::Store;
use super::entry::{Entry, Operation};
use super::errors::{
    WatchError, WatchErrorKind, WatcherError, WatcherErrorKind, watch_of_consumer, watch_of_stream,
    watcher_of_ordered,
};
use super::name::is_valid_filter;
use crate::consumer::push::read_end::{self, QUIET, ReadEnd, Step};
use crate::consumer::push::{Ordered, OrderedConfig};
use crate::consumer::{DeliverPolicy, ReplayPolicy};

/// How a watch starts and what it passes on; nats.go's watch options. The default is
/// nats.go's default watch: the current value of each key, then every update.
///
/// ```no_run
/// # async fn run(kv: rnats_jetstream::kv::Store) -> Result<(), rnats_core::Error> {
/// use futures_util::StreamExt;
/// use rnats_jetstream::kv::{WatchEvent, WatchOptions};
/// let options = WatchOptions::new().ignore_deletes();
/// let mut events = kv.watch_with_options(["orders.>"], options).await?.events();
/// while let Some(event) = events.next().await {
///     match event? {
///         WatchEvent::Entry(entry) => println!("{} = {:?}", entry.key, entry.value),
///         WatchEvent::InitialValuesDone => println!("up to date"),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WatchOptions {
    include_history: bool,
    pub(crate) ignore_deletes: bool,
    pub(crate) meta_only: bool,
    updates_only: bool,
    from_revision: Option<u64>,
    heartbeat: Option<Duration>,
}

impl WatchOptions {
    /// The default: current values, then updates.
    pub fn new() -> WatchOptions {
        WatchOptions::default()
    }

    /// Starts with every stored revision of the watched keys, not only the last.
    pub fn include_history(mut self) -> WatchOptions {
        self.include_history = true;
        self
    }

    /// Leaves out deletes and purges.
    pub fn ignore_deletes(mut self) -> WatchOptions {
        self.ignore_deletes = true;
        self
    }

    /// Delivers entries without their values (headers only): keys, revisions, operations.
    pub fn meta_only(mut self) -> WatchOptions {
        self.meta_only = true;
        self
    }

    /// Starts with nothing: only updates made after the watch started.
    pub fn updates_only(mut self) -> WatchOptions {
        self.updates_only = true;
        self
    }

    /// Starts at `revision` (the bucket's stream sequence) and goes on from there.
    pub fn from_revision(mut self, revision: u64) -> WatchOptions {
        self.from_revision = Some(revision);
        self
    }

    /// How often the server sends the watch's consumer an idle heartbeat while nothing
    /// changes (5 s when not set or zero). A missing heartbeat is how the watch notices a
    /// consumer that is gone, so a shorter one finds that out (and recreates the consumer)
    /// sooner, for a heartbeat's traffic on an idle bucket; a longer one costs less traffic
    /// and notices later (nats.c issue 988).
    pub fn heartbeat(mut self, heartbeat: Duration) -> WatchOptions {
        self.heartbeat = (!heartbeat.is_zero()).then_some(heartbeat);
        self
    }

    /// Where the consumer starts: a revision, then updates only, then the whole history,
    /// else the last value per key.
    pub(crate) fn deliver_policy(&self) -> DeliverPolicy {
        match (self.from_revision, self.updates_only, self.include_history) {
            (Some(start_sequence), _, _) => DeliverPolicy::ByStartSequence { start_sequence },
            (None, true, _) => DeliverPolicy::New,
            (None, false, true) => DeliverPolicy::All,
            (None, false, false) => DeliverPolicy::LastPerSubject,
        }
    }
}

impl Store {
    /// Watches `key` (wildcards allowed) for updates made from now on.
    pub async fn watch<T: AsRef<str>>(&self, key: T) -> Result<Watch, WatchError> {
        self.watch_with_options([key], WatchOptions::new().updates_only())
            .await
    }

    /// Watches several keys (wildcards allowed) for updates made from now on.
    pub async fn watch_many<T, K>(&self, keys: K) -> Result<Watch, WatchError>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        self.watch_with_options(keys, WatchOptions::new().updates_only())
            .await
    }

    /// Watches `key` from `revision` on.
    pub async fn watch_from_revision<T: AsRef<str>>(
        &self,
        key: T,
        revision: u64,
    ) -> Result<Watch, WatchError> {
        self.watch_with_options([key], WatchOptions::new().from_revision(revision))
            .await
    }

    /// Watches `key`, starting with its current value (the last of each matching key).
    pub async fn watch_with_history<T: AsRef<str>>(&self, key: T) -> Result<Watch, WatchError> {
        self.watch_with_options([key], WatchOptions::new()).await
    }

    /// Watches several keys, starting with their current values.
    pub async fn watch_many_with_history<T: AsRef<str>, K: IntoIterator<Item = T>>(
        &self,
        keys: K,
    ) -> Result<Watch, WatchError> {
        self.watch_with_options(keys, WatchOptions::new()).await
    }

    /// Watches every key for updates made from now on.
    pub async fn watch_all(&self) -> Result<Watch, WatchError> {
        self.watch(">").await
    }

    /// Watches every key from `revision` on.
    pub async fn watch_all_from_revision(&self, revision: u64) -> Result<Watch, WatchError> {
        self.watch_from_revision(">", revision).await
    }

    /// Watches `keys` (wildcards allowed; `[">"]` for all) as `options` say.
    pub async fn watch_with_options<T, K>(
        &self,
        keys: K,
        options: WatchOptions,
    ) -> Result<Watch, WatchError>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        let keys: Vec<String> = keys.into_iter().map(|k| k.as_ref().to_owned()).collect();
        let (messages, initial_pending) = self
            .ordered_consumer(
                &keys,
                options.deliver_policy(),
                options.meta_only,
                options.heartbeat,
                "watch",
            )
            .await?;
        let filters = keys.iter().map(|k| format!("{}{k}", self.prefix)).collect();
        Ok(Watch {
            messages,
            prefix: self.prefix.clone(),
            bucket: self.name.clone(),
            // Nothing to send at the start: the initial values are all there (none).
            seen_current: initial_pending == 0,
            ignore_deletes: options.ignore_deletes,
            initial: (initial_pending > 0).then(|| Initial {
                stream: self.stream.clone(),
                filters,
                end: ReadEnd::default(),
                asking: None,
                held: None,
                quiet: Box::pin(runtime::sleep(QUIET)),
            }),
        })
    }

    /// Starts an ordered push consumer on `keys` (with `heartbeat`, else the default) and
    /// its messages; the messages it had to deliver when created.
    pub(crate) async fn ordered_consumer<T, K>(
        &self,
        keys: K,
        deliver_policy: DeliverPolicy,
        headers_only: bool,
        heartbeat: Option<Duration>,
        purpose: &str,
    ) -> Result<(Ordered, u64), WatchError>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        let mut subjects = Vec::new();
        for key in keys {
            let key = key.as_ref();
            if !is_valid_filter(key) {
                return Err(WatchError::new(WatchErrorKind::InvalidKey));
            }
            subjects.push(format!("{}{key}", self.prefix));
        }
        let (filter_subject, filter_subjects) = match subjects.len() {
            0 => return Err(WatchError::new(WatchErrorKind::InvalidKey)),
            1 => (subjects.remove(0), Vec::new()),
            _ => (String::new(), subjects),
        };
        let config = OrderedConfig {
            deliver_subject: self.stream.context.client.new_inbox(),
            description: Some(format!("kv {purpose} consumer")),
            filter_subject,
            filter_subjects,
            replay_policy: ReplayPolicy::Instant,
            deliver_policy,
            headers_only,
            ..Default::default()
        };
        let consumer = match heartbeat {
            Some(heartbeat) => self.stream.create_ordered_push(config, heartbeat).await,
            None => self.stream.create_consumer(config).await,
        }
        .map_err(watch_of_consumer)?;
        let pending = consumer.cached_info().num_pending;
        let messages = consumer.messages().await.map_err(watch_of_stream)?;
        Ok((messages, pending))
    }
}

/// A watch of a bucket's keys: a [`Stream`] of entries. Each entry's `seen_current` says
/// whether the values current at the start have all come; [`Watch::events`] marks that
/// moment as an item of its own, also when there were none.
///
/// A failed attempt to recreate the consumer (JetStream still recovering after a restart)
/// is not an item: the attempts go on, and the watch resumes after its last revision.
pub struct Watch {
    messages: Ordered,
    prefix: String,
    bucket: String,
    seen_current: bool,
    ignore_deletes: bool,
    /// While the initial values come: where they end (`None` once they did, or if there
    /// were none).
    initial: Option<Initial>,
}

/// The end of a watch's initial values, confirmed with the stream as a listing's end is
/// (`consumer::push::read_end`): the server's count of them can come out one short, and the
/// value it left out would come after the end was marked, as if it were an update.
struct Initial {
    stream: crate::stream::Stream,
    /// The consumer's filter subjects.
    filters: Vec<String>,
    end: ReadEnd,
    /// The stream's last sequence under the filters, while asked for.
    asking: Option<BoxFuture<'static, Option<u64>>>,
    /// The entry that led to the ask, passed on with the answer.
    held: Option<Entry>,
    /// Fires after [`QUIET`] without a message while reading on to a target.
    quiet: Pin<Box<Sleep>>,
}

impl Initial {
    fn ask_the_stream(&mut self) {
        self.asking = Some(read_end::ask(&self.stream, &self.filters));
    }
}

impl Watch {
    /// Whether the values that were current when the watch started have all come.
    pub fn seen_current(&self) -> bool {
        self.seen_current
    }

    /// The watch as events: entries, and [`WatchEvent::InitialValuesDone`] once, right after
    /// the initial values (at once if there were none, or the watch is of updates only).
    pub fn events(self) -> WatchEvents {
        WatchEvents {
            watch: self,
            marked: false,
        }
    }

    /// The next entry, `Ok(None)` for none to pass on (a delete left out with
    /// `ignore_deletes`, or the end of the initial values confirmed with no entry).
    fn poll_entry(
        &mut self,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Option<Entry>, WatcherError>>> {
        if let Some(initial) = self.initial.as_mut()
            && let Some(asking) = initial.asking.as_mut()
        {
            let last = std::task::ready!(asking.poll_unpin(cx));
            initial.asking = None;
            initial.quiet.as_mut().reset(runtime::now() + QUIET);
            let held = initial.held.take();
            if initial.end.answered(last) {
                self.seen_current = true;
                self.initial = None;
            }
            return Poll::Ready(Some(Ok(held.and_then(|entry| self.passed_on(entry)))));
        }
        // A failed recreation of the consumer is no item: the ordered consumer retries until
        // it succeeds, and the watch goes on from its last revision.
        let message = match self.messages.poll_next_unpin(cx) {
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Ready(Some(Ok(message))) => message,
            Poll::Ready(Some(Err(error))) => {
                return Poll::Ready(Some(Err(watcher_of_ordered(error))));
            }
            Poll::Pending => {
                // Reading the initial values on to a message that may have gone (aged out,
                // purged): the stream is asked again after a quiet spell.
                let Some(initial) = self.initial.as_mut() else {
                    return Poll::Pending;
                };
                if !initial.end.reading_on() {
                    return Poll::Pending;
                }
                std::task::ready!(initial.quiet.as_mut().poll(cx));
                initial.ask_the_stream();
                return Poll::Ready(Some(Ok(None)));
            }
        };
        let entry = match entry_of(&message, &self.prefix, &self.bucket) {
            Ok(entry) => entry,
            Err(error) => return Poll::Ready(Some(Err(error))),
        };
        if let Some(initial) = self.initial.as_mut() {
            initial.quiet.as_mut().reset(runtime::now() + QUIET);
            match initial.end.delivered(entry.revision, entry.delta) {
                Step::More => {}
                Step::Over => {
                    self.seen_current = true;
                    self.initial = None;
                }
                Step::Ask => {
                    initial.held = Some(entry);
                    initial.ask_the_stream();
                    return Poll::Ready(Some(Ok(None)));
                }
            }
        } else if entry.delta == 0 {
            self.seen_current = true;
        }
        Poll::Ready(Some(Ok(self.passed_on(entry))))
    }

    /// `entry` marked with whether the initial values are all in; `None` if it is left out.
    fn passed_on(&self, mut entry: Entry) -> Option<Entry> {
        entry.seen_current = self.seen_current;
        let skipped = self.ignore_deletes && entry.operation != Operation::Put;
        (!skipped).then_some(entry)
    }
}

impl Stream for Watch {
    type Item = Result<Entry, WatcherError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            match std::task::ready!(this.poll_entry(cx)) {
                Some(Ok(None)) => continue,
                Some(Ok(Some(entry))) => return Poll::Ready(Some(Ok(entry))),
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                None => return Poll::Ready(None),
            }
        }
    }
}

/// What a watch reports: an entry, or that the initial values are all in (nats.go's `nil`
/// entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// A key's entry: a put, delete or purge.
    Entry(Entry),
    /// The values current when the watch started have all been delivered; what follows are
    /// updates.
    InitialValuesDone,
}

/// A [`Watch`] as [`WatchEvent`]s; from [`Watch::events`].
pub struct WatchEvents {
    watch: Watch,
    marked: bool,
}

impl WatchEvents {
    /// The watch underneath.
    pub fn into_inner(self) -> Watch {
        self.watch
    }
}

impl Stream for WatchEvents {
    type Item = Result<WatchEvent, WatcherError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if !this.marked && this.watch.seen_current {
                this.marked = true;
                return Poll::Ready(Some(Ok(WatchEvent::InitialValuesDone)));
            }
            match std::task::ready!(this.watch.poll_entry(cx)) {
                Some(Ok(None)) => continue,
                Some(Ok(Some(entry))) => return Poll::Ready(Some(Ok(WatchEvent::Entry(entry)))),
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                None => return Poll::Ready(None),
            }
        }
    }
}

/// The entry a watch, history or key listing message carries.
pub(crate) fn entry_of(
    message: &rnats_core::Message,
    prefix: &str,
    bucket: &str,
) -> Result<Entry, WatcherError> {
    let info = crate::message::info_of(message)
        .map_err(|e| WatcherError::with_source(WatcherErrorKind::Other, e))?;
    let operation = Operation::of_headers(message.headers.as_ref())
        .map_err(|e| WatcherError::with_source(WatcherErrorKind::Other, e))?;
    let subject = message.subject.as_str();
    let key = subject.strip_prefix(prefix).unwrap_or(subject);
    Ok(Entry {
        bucket: bucket.to_owned(),
        key: key.to_owned(),
        value: message.payload.clone(),
        revision: info.stream_sequence,
        delta: info.pending,
        created: info.published,
        operation,
        seen_current: false,
    })
}
