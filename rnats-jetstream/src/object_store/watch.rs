//! [`Watch`] (changes to a bucket's metadata as they happen, started as [`WatchOptions`]
//! say) and [`List`] (every live object once, or every object with
//! [`list_with_deleted`](ObjectStore::list_with_deleted)), both on an ordered push consumer
//! of the meta subjects `$O.<bucket>.M.>`.

use std::collections::HashSet;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use rnats_core::runtime::{self, Sleep};

use super::ObjectStore;
use super::errors::{
    ListError, WatchError, WatcherError, WatcherErrorKind, watch_consumer_error,
    watch_stream_error, watcher_error,
};
use super::info::ObjectInfo;
use crate::consumer::DeliverPolicy;
use crate::consumer::push::passes::Passes;
use crate::consumer::push::read_end::{self, QUIET, ReadEnd, Step};
use crate::consumer::push::{Ordered, OrderedConfig};
use crate::message::Message;

/// How an Object Store watch starts and what it passes on; nats.go's object watch options
/// (`UpdatesOnly`, `IncludeHistory`, `IgnoreDeletes`), shaped as
/// [`kv::WatchOptions`](crate::kv::WatchOptions) is where they mean the same. The default is
/// nats.go's default watch: the current metadata of each object, deleted ones included, then
/// every change.
///
/// ```no_run
/// # async fn run(store: rnats_jetstream::object_store::ObjectStore) -> Result<(), rnats_core::Error> {
/// use futures_util::StreamExt;
/// use rnats_jetstream::object_store::WatchOptions;
/// let options = WatchOptions::new().updates_only().ignore_deletes();
/// let mut changes = store.watch_with_options(options).await?;
/// while let Some(info) = changes.next().await {
///     let info = info?;
///     println!("{} is now {} bytes", info.name, info.size);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WatchOptions {
    include_history: bool,
    updates_only: bool,
    pub(crate) ignore_deletes: bool,
}

impl WatchOptions {
    /// The default: current metadata, then changes.
    pub fn new() -> WatchOptions {
        WatchOptions::default()
    }

    /// Starts with every metadata message the bucket holds, not only each object's last.
    /// A put rolls up the object's earlier metadata, so in a bucket written by rnats,
    /// nats.go or async-nats this differs from the default only for metadata stored while
    /// the watch starts.
    pub fn include_history(mut self) -> WatchOptions {
        self.include_history = true;
        self
    }

    /// Starts with nothing: only changes made after the watch started (what
    /// [`ObjectStore::watch`] does). It wins over [`include_history`](Self::include_history).
    pub fn updates_only(mut self) -> WatchOptions {
        self.updates_only = true;
        self
    }

    /// Leaves out deleted objects: deletes, and the markers deleted objects left behind.
    pub fn ignore_deletes(mut self) -> WatchOptions {
        self.ignore_deletes = true;
        self
    }

    /// Where the consumer starts: updates only, then the whole history, else the last
    /// metadata per object.
    pub(crate) fn deliver_policy(&self) -> DeliverPolicy {
        match (self.updates_only, self.include_history) {
            (true, _) => DeliverPolicy::New,
            (false, true) => DeliverPolicy::All,
            (false, false) => DeliverPolicy::LastPerSubject,
        }
    }
}

impl ObjectStore {
    /// Changes to the bucket from now on: each new, updated or deleted object's metadata.
    pub async fn watch(&self) -> Result<Watch, WatchError> {
        self.watch_with_options(WatchOptions::new().updates_only())
            .await
    }

    /// Like [`ObjectStore::watch`], starting with the current metadata of every object
    /// (deleted ones included).
    pub async fn watch_with_history(&self) -> Result<Watch, WatchError> {
        self.watch_with_options(WatchOptions::new()).await
    }

    /// Watches the bucket as `options` say.
    pub async fn watch_with_options(&self, options: WatchOptions) -> Result<Watch, WatchError> {
        let config = self.meta_consumer(options.deliver_policy(), "object store watcher");
        let consumer = self
            .stream
            .create_consumer(config)
            .await
            .map_err(watch_consumer_error)?;
        Ok(Watch {
            messages: consumer.messages().await.map_err(watch_stream_error)?,
            ignore_deletes: options.ignore_deletes,
        })
    }

    /// Every live object's metadata, once.
    pub async fn list(&self) -> Result<List, ListError> {
        self.list_objects(false).await
    }

    /// Every object's metadata, once, deleted ones included (with
    /// [`deleted`](ObjectInfo::deleted) set): nats.go's `List(ListObjectsShowDeleted())`.
    pub async fn list_with_deleted(&self) -> Result<List, ListError> {
        self.list_objects(true).await
    }

    async fn list_objects(&self, include_deleted: bool) -> Result<List, ListError> {
        let (messages, pending) = self.list_pass().await?;
        let mut list = List {
            messages: None,
            done: false,
            include_deleted,
            pending_at_start: 0,
            delivered: 0,
            seen: HashSet::new(),
            store: self.clone(),
            passes: Passes::new(),
            next_pass: None,
            end: ReadEnd::default(),
            asking: None,
            quiet: Box::pin(runtime::sleep(QUIET)),
        };
        list.start_pass(messages, pending);
        Ok(list)
    }

    /// One pass of a listing: an ordered consumer on the metadata, and how many messages it
    /// had pending when it was made.
    async fn list_pass(&self) -> Result<(Ordered, u64), ListError> {
        let consumer = self
            .stream
            .create_consumer(self.meta_consumer(DeliverPolicy::All, "object store list"))
            .await
            .map_err(watch_consumer_error)?;
        let pending = consumer.info.num_pending;
        let messages = consumer.messages().await.map_err(watch_stream_error)?;
        Ok((messages, pending))
    }

    fn meta_consumer(&self, deliver_policy: DeliverPolicy, description: &str) -> OrderedConfig {
        OrderedConfig {
            deliver_subject: self.context().client.new_inbox(),
            description: Some(description.to_owned()),
            filter_subject: meta_filter(&self.name),
            deliver_policy,
            ..Default::default()
        }
    }
}

/// Changes to a bucket, as a [`futures_util::Stream`] of metadata; from
/// [`ObjectStore::watch`] and [`ObjectStore::watch_with_options`]. It ends only if the
/// consumer fails for good.
pub struct Watch {
    messages: Ordered,
    ignore_deletes: bool,
}

impl futures_util::Stream for Watch {
    type Item = Result<ObjectInfo, WatcherError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let message = match std::task::ready!(self.messages.poll_next_unpin(cx)) {
                Some(Ok(message)) => message,
                Some(Err(error)) => return Poll::Ready(Some(Err(watcher_error(error)))),
                None => return Poll::Ready(None),
            };
            match decode(&message) {
                Ok(info) if info.deleted && self.ignore_deletes => continue,
                item => return Poll::Ready(Some(item)),
            }
        }
    }
}

/// A bucket's objects, as a [`futures_util::Stream`] of metadata; from
/// [`ObjectStore::list`] (live objects) and [`ObjectStore::list_with_deleted`]. It ends
/// after the last object. Each object comes once, also one put again while the listing
/// runs; a pass that delivered fewer objects than were pending when it started is read
/// again (four passes at most), so that an object put again just as the listing starts is
/// not left out.
pub struct List {
    messages: Option<Ordered>,
    done: bool,
    include_deleted: bool,
    /// Metadata messages the pass's consumer had to deliver when it was made.
    pending_at_start: u64,
    /// Metadata messages this pass delivered so far.
    delivered: u64,
    /// The names listed so far.
    seen: HashSet<String>,
    /// The bucket, for a pass again.
    store: ObjectStore,
    passes: Passes,
    /// The next pass's consumer, while it is made.
    next_pass: Option<BoxFuture<'static, Result<(Ordered, u64), ListError>>>,
    /// Whether the server's "nothing pending" is the stream's end (`read_end`).
    end: ReadEnd,
    /// The stream's last metadata sequence, while asked for.
    asking: Option<BoxFuture<'static, Option<u64>>>,
    /// Fires after [`QUIET`] without a message, when the stream is asked again.
    quiet: Pin<Box<Sleep>>,
}

impl List {
    /// Reads a pass's consumer, which had `pending` messages to deliver when it was made.
    fn start_pass(&mut self, messages: Ordered, pending: u64) {
        self.messages = Some(messages);
        self.done = false;
        self.pending_at_start = pending;
        self.delivered = 0;
        self.end = ReadEnd::default();
        let quiet_until = runtime::now() + QUIET;
        self.quiet.as_mut().reset(quiet_until);
        if pending == 0 {
            // Nothing to send, the server says: the stream confirms it.
            self.end = ReadEnd::empty();
            self.ask_the_stream();
        }
    }

    /// Asks the stream for its last metadata sequence (`read_end`).
    fn ask_the_stream(&mut self) {
        let filters = [meta_filter(&self.store.name)];
        self.asking = Some(read_end::ask(&self.store.stream, &filters));
    }

    /// Starts another pass if the last one came short and passes are left.
    fn pass_again(&mut self) -> bool {
        if !self.passes.again(self.delivered, self.pending_at_start) {
            return false;
        }
        let store = self.store.clone();
        self.next_pass = Some(async move { store.list_pass().await }.boxed());
        true
    }
}

impl futures_util::Stream for List {
    type Item = Result<ObjectInfo, WatcherError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(pass) = self.next_pass.as_mut() {
                let made = std::task::ready!(pass.poll_unpin(cx));
                self.next_pass = None;
                match made {
                    Ok((messages, pending)) => self.start_pass(messages, pending),
                    Err(error) => {
                        self.passes.fail();
                        let error = WatcherError::with_source(WatcherErrorKind::Other, error);
                        return Poll::Ready(Some(Err(error)));
                    }
                }
            }
            if let Some(asking) = self.asking.as_mut() {
                let last = std::task::ready!(asking.poll_unpin(cx));
                self.asking = None;
                self.done = self.end.answered(last);
                let quiet_until = runtime::now() + QUIET;
                self.quiet.as_mut().reset(quiet_until);
            }
            if self.done {
                // Dropping the subscription ends the ephemeral consumer's interest.
                self.messages = None;
                if self.pass_again() {
                    continue;
                }
                return Poll::Ready(None);
            }
            let Some(messages) = self.messages.as_mut() else {
                return Poll::Ready(None);
            };
            let message = match messages.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(message))) => message,
                Poll::Ready(Some(Err(error))) => {
                    self.passes.fail();
                    return Poll::Ready(Some(Err(watcher_error(error))));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                // Waiting for the stream's last message: it may have gone (aged out, purged).
                Poll::Pending if self.end.reading_on() => {
                    std::task::ready!(self.quiet.as_mut().poll(cx));
                    self.ask_the_stream();
                    continue;
                }
                Poll::Pending => return Poll::Pending,
            };
            let quiet_until = runtime::now() + QUIET;
            self.quiet.as_mut().reset(quiet_until);
            match message.info() {
                Ok(info) => match self.end.delivered(info.stream_sequence, info.pending) {
                    Step::More => {}
                    Step::Over => self.done = true,
                    Step::Ask => self.ask_the_stream(),
                },
                Err(error) => {
                    self.passes.fail();
                    let error = WatcherError::with_source(WatcherErrorKind::Other, error);
                    return Poll::Ready(Some(Err(error)));
                }
            }
            self.delivered += 1;
            match decode(&message) {
                Ok(info) if info.deleted && !self.include_deleted => continue,
                Ok(info) if !self.seen.insert(info.name.clone()) => continue,
                item => return Poll::Ready(Some(item)),
            }
        }
    }
}

/// The subjects of a bucket's metadata.
pub(crate) fn meta_filter(bucket: &str) -> String {
    format!("$O.{bucket}.M.>")
}

/// The metadata a delivered meta message holds, `modified` being when the server stored it
/// (the timestamp in its ack subject), as nats.go's watcher has it.
fn decode(message: &Message) -> Result<ObjectInfo, WatcherError> {
    let stored = message
        .info()
        .map_err(|error| WatcherError::with_source(WatcherErrorKind::Other, error))?
        .published;
    ObjectInfo::from_stored(&message.payload, stored)
        .map_err(|error| WatcherError::with_source(WatcherErrorKind::Other, error))
}
