//! Reading a bucket through to its end: a key's history, the keys, and the cleanup of
//! delete markers built on them. Each is an ordered consumer that ends once it delivered what
//! was pending when it started. If what was pending goes away before it is delivered (aged
//! out, purged), no last message says so: after a quiet second the consumer's info decides.
//!
//! A listing of the keys that delivered fewer entries than were pending when it started is
//! read again (`consumer::push::passes`): a key rewritten just as it starts can be left out.

use std::collections::HashSet;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, Stream, StreamExt, TryStreamExt};
use rnats_core::datetime::to_nanos;
use rnats_core::runtime::{self, Sleep};

use super::Store;
use super::entry::{Entry, Operation};
use super::errors::{
    HistoryError, HistoryErrorKind, PurgeError, UpdateErrorKind, WatcherError, WatcherErrorKind,
    watcher_of_ordered,
};
use super::name::Key;
use super::watch::entry_of;
use crate::consumer::push::Ordered;
use crate::consumer::push::passes::Passes;
use crate::consumer::push::read_end::{self, QUIET, ReadEnd, Step};
use crate::consumer::{self, DeliverPolicy};
use crate::context::ConsumerInfoError;

/// How old a delete marker must be for [`Store::purge_deletes`] to remove it (nats.go's
/// default).
const DELETE_MARKER_AGE: Duration = Duration::from_secs(30 * 60);

impl Store {
    /// Every stored revision of `key`, oldest first, as a stream that ends at the last.
    pub async fn history<T: AsRef<str>>(&self, key: T) -> Result<History, HistoryError> {
        let key = key.as_ref();
        if Key::try_from(key).is_err() {
            return Err(HistoryError::new(HistoryErrorKind::InvalidKey));
        }
        self.read_through([key], DeliverPolicy::All, false, "history")
            .await
    }

    /// The keys that have a value (not deleted or purged), as a stream that ends at the last.
    pub async fn keys(&self) -> Result<Keys, HistoryError> {
        self.keys_with_filters([">"]).await
    }

    /// The keys matching any of `filters` (wildcards allowed) that have a value.
    pub async fn keys_with_filters<T, K>(&self, filters: K) -> Result<Keys, HistoryError>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        let filters: Vec<String> = filters.into_iter().map(|f| f.as_ref().to_owned()).collect();
        let inner = self.list_keys(filters.clone()).await?;
        Ok(Keys {
            inner,
            seen: HashSet::new(),
            store: self.clone(),
            filters,
            passes: Passes::new(),
            next_pass: None,
        })
    }

    /// One pass of a listing of the keys matching `filters`.
    async fn list_keys(&self, filters: Vec<String>) -> Result<History, HistoryError> {
        self.read_through(filters, DeliverPolicy::LastPerSubject, true, "keys")
            .await
    }

    async fn read_through<T, K>(
        &self,
        keys: K,
        deliver_policy: DeliverPolicy,
        headers_only: bool,
        purpose: &str,
    ) -> Result<History, HistoryError>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        let keys: Vec<String> = keys.into_iter().map(|k| k.as_ref().to_owned()).collect();
        let (messages, pending) = self
            .ordered_consumer(&keys, deliver_policy, headers_only, None, purpose)
            .await?;
        let filters = keys.iter().map(|k| format!("{}{k}", self.prefix)).collect();
        let mut history = History {
            messages: Some(messages),
            prefix: self.prefix.clone(),
            bucket: self.name.clone(),
            done: false,
            pending_at_start: pending,
            delivered: 0,
            stream: self.stream.clone(),
            quiet: Box::pin(rnats_core::runtime::sleep(QUIET)),
            check: None,
            filters,
            end: ReadEnd::default(),
            asking: None,
            held: None,
        };
        if pending == 0 {
            // Nothing to send, the server says: the stream confirms it.
            history.end = ReadEnd::empty();
            history.ask_the_stream();
        }
        Ok(history)
    }

    /// Removes the delete and purge markers older than 30 minutes, and the values kept
    /// behind younger ones (nats.go's `PurgeDeletes`).
    pub async fn purge_deletes(&self) -> Result<(), PurgeError> {
        self.purge_deletes_older_than(DELETE_MARKER_AGE).await
    }

    /// Removes the delete and purge markers older than `age` (all of them for zero), and
    /// keeps only the marker itself for younger ones.
    pub async fn purge_deletes_older_than(&self, age: Duration) -> Result<(), PurgeError> {
        let other = |e: HistoryError| PurgeError::with_source(UpdateErrorKind::Other, e);
        let mut last = self
            .read_through([">"], DeliverPolicy::LastPerSubject, true, "purge deletes")
            .await
            .map_err(other)?;
        let mut markers = Vec::new();
        while let Some(entry) = last
            .try_next()
            .await
            .map_err(|e| PurgeError::with_source(UpdateErrorKind::Other, e))?
        {
            if entry.operation != Operation::Put {
                markers.push(entry);
            }
        }
        let now = rnats_core::datetime::now();
        for marker in markers {
            let marker_age = to_nanos(&now) - to_nanos(&marker.created);
            let young = !age.is_zero() && marker_age < age.as_nanos() as i128;
            let purge = self
                .stream
                .purge()
                .filter(format!("{}{}", self.prefix, marker.key));
            let result = if young {
                purge.keep(1).await
            } else {
                purge.await
            };
            result.map_err(|e| PurgeError::with_source(UpdateErrorKind::Other, e))?;
        }
        Ok(())
    }
}

/// Entries read through to the last one pending at the start; from [`Store::history`].
pub struct History {
    /// Dropped once done, which ends the consumer's subscription.
    messages: Option<Ordered>,
    prefix: String,
    bucket: String,
    done: bool,
    /// Entries the consumer had to deliver when it was made.
    pending_at_start: u64,
    /// Entries delivered so far.
    delivered: u64,
    /// The bucket's stream, to ask about the consumer.
    stream: crate::stream::Stream,
    /// Fires after [`QUIET`] without a message.
    quiet: Pin<Box<Sleep>>,
    /// The consumer info asked for after a quiet spell.
    check: Option<BoxFuture<'static, Result<consumer::Info, ConsumerInfoError>>>,
    /// The consumer's filter subjects.
    filters: Vec<String>,
    /// Whether the server's "nothing pending" is the stream's end (`read_end`).
    end: ReadEnd,
    /// The stream's last sequence under the filters, while asked for.
    asking: Option<BoxFuture<'static, Option<u64>>>,
    /// The entry that led to the ask, yielded with the answer (its `seen_current` says
    /// whether it is the last).
    held: Option<Entry>,
}

impl History {
    /// Asks the stream for its last sequence under the filters (`read_end`).
    fn ask_the_stream(&mut self) {
        self.asking = Some(read_end::ask(&self.stream, &self.filters));
    }

    /// Whether the server has nothing left to send, after a quiet spell; asks it once per
    /// spell. `Poll::Pending` while waiting for the spell or the answer.
    fn poll_quiet_and_drained(&mut self, cx: &mut TaskContext<'_>) -> Poll<bool> {
        loop {
            if let Some(check) = self.check.as_mut() {
                let answer = std::task::ready!(check.poll_unpin(cx));
                self.check = None;
                // Everything the consumer sent has come, and it has nothing more.
                let drained = match (answer, self.messages.as_ref()) {
                    (Ok(info), Some(messages)) => messages.delivered_all(&info),
                    (Err(_), Some(_)) => false,
                    (_, None) => true,
                };
                return Poll::Ready(drained);
            }
            std::task::ready!(self.quiet.as_mut().poll(cx));
            self.quiet.as_mut().reset(runtime::now() + QUIET);
            let Some(messages) = self.messages.as_ref() else {
                return Poll::Ready(true);
            };
            let (stream, name) = (self.stream.clone(), messages.consumer_name().to_owned());
            self.check = Some(Box::pin(async move { stream.consumer_info(name).await }));
        }
    }
}

impl Stream for History {
    type Item = Result<Entry, WatcherError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(asking) = this.asking.as_mut() {
                let last = std::task::ready!(asking.poll_unpin(cx));
                this.asking = None;
                this.done = this.end.answered(last);
                this.quiet.as_mut().reset(runtime::now() + QUIET);
                if let Some(mut entry) = this.held.take() {
                    entry.seen_current = this.done;
                    return Poll::Ready(Some(Ok(entry)));
                }
            }
            if this.done {
                this.messages = None;
                return Poll::Ready(None);
            }
            let Some(messages) = this.messages.as_mut() else {
                return Poll::Ready(None);
            };
            let message = match messages.poll_next_unpin(cx) {
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Ok(message))) => message,
                Poll::Ready(Some(Err(error))) => {
                    return Poll::Ready(Some(Err(watcher_of_ordered(error))));
                }
                Poll::Pending => {
                    this.done = std::task::ready!(this.poll_quiet_and_drained(cx));
                    continue;
                }
            };
            this.quiet.as_mut().reset(runtime::now() + QUIET);
            this.check = None;
            this.delivered += 1;
            let mut entry = entry_of(&message, &this.prefix, &this.bucket)?;
            match this.end.delivered(entry.revision, entry.delta) {
                Step::More => {}
                Step::Over => this.done = true,
                Step::Ask => {
                    this.held = Some(entry);
                    this.ask_the_stream();
                    continue;
                }
            }
            entry.seen_current = this.done;
            return Poll::Ready(Some(Ok(entry)));
        }
    }
}

/// The keys with a value, read through to the last; from [`Store::keys`].
///
/// Each key comes once, also when it is written while the listing runs (the server then
/// delivers the new revision after the one the listing started with). That takes a set of the
/// keys listed so far, as nats.go's `ListKeys` keeps one (v1.50): memory in proportion to the
/// keys listed, some tens of bytes a key beside the key itself. async-nats lists a key
/// written meanwhile twice. A pass that delivered fewer entries than were pending when it
/// started is read again (four passes at most), so that a key rewritten as the listing
/// starts is not left out.
pub struct Keys {
    inner: History,
    /// The keys yielded so far.
    seen: HashSet<String>,
    /// The bucket and the filters, for a pass again.
    store: Store,
    filters: Vec<String>,
    passes: Passes,
    /// The next pass's consumer, while it is made.
    next_pass: Option<BoxFuture<'static, Result<History, HistoryError>>>,
}

impl Keys {
    /// Starts another pass if the last one came short and passes are left.
    fn pass_again(&mut self) -> bool {
        if !self
            .passes
            .again(self.inner.delivered, self.inner.pending_at_start)
        {
            return false;
        }
        let (store, filters) = (self.store.clone(), self.filters.clone());
        self.next_pass = Some(async move { store.list_keys(filters).await }.boxed());
        true
    }
}

impl Stream for Keys {
    type Item = Result<String, WatcherError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(pass) = self.next_pass.as_mut() {
                let made = std::task::ready!(pass.poll_unpin(cx));
                self.next_pass = None;
                match made {
                    Ok(history) => self.inner = history,
                    Err(error) => {
                        self.passes.fail();
                        let error = WatcherError::with_source(WatcherErrorKind::Consumer, error);
                        return Poll::Ready(Some(Err(error)));
                    }
                }
            }
            match std::task::ready!(self.inner.poll_next_unpin(cx)) {
                Some(Ok(entry)) if entry.operation != Operation::Put => continue,
                Some(Ok(entry)) if self.seen.contains(&entry.key) => continue,
                Some(Ok(entry)) => {
                    self.seen.insert(entry.key.clone());
                    return Poll::Ready(Some(Ok(entry.key)));
                }
                Some(Err(error)) => {
                    self.passes.fail();
                    return Poll::Ready(Some(Err(error)));
                }
                None if self.pass_again() => continue,
                None => return Poll::Ready(None),
            }
        }
    }
}
