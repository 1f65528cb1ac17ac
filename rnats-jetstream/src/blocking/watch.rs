//! Reading a bucket's keys as they change ([`Watch`]) or through to their end ([`History`],
//! [`Keys`]), each over an ordered push consumer (ADR-17, `ordered.rs`) on the keys'
//! subjects, so every revision comes once, in order, across lost deliveries.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::kv::Store;
use super::ordered::Ordered;
use crate::consumer::push::OrderedConfig;
use crate::consumer::push::passes::Passes;
use crate::consumer::push::read_end::{QUIET, ReadEnd, Step};
use crate::consumer::{DeliverPolicy, ReplayPolicy};
use crate::kv::errors::{watch_of_consumer, watcher_of_ordered};
use crate::kv::name::is_valid_filter;
use crate::kv::{
    Entry, HistoryError, HistoryErrorKind, Key, Operation, WatchError, WatchErrorKind,
    WatchOptions, WatcherError, WatcherErrorKind, entry_of,
};

impl Store {
    /// Watches `key` (wildcards allowed) for updates made from now on. Iterating waits for
    /// the next change as long as it takes; [`Watch::next_timeout`] waits a bounded time.
    pub fn watch<T: AsRef<str>>(&self, key: T) -> Result<Watch, WatchError> {
        self.watch_with_options([key], WatchOptions::new().updates_only())
    }

    /// Watches every key for updates made from now on.
    pub fn watch_all(&self) -> Result<Watch, WatchError> {
        self.watch(">")
    }

    /// Watches `key`, starting with its current value (the last of each matching key).
    pub fn watch_with_history<T: AsRef<str>>(&self, key: T) -> Result<Watch, WatchError> {
        self.watch_with_options([key], WatchOptions::new())
    }

    /// Watches `key` from `revision` on.
    pub fn watch_from_revision<T: AsRef<str>>(
        &self,
        key: T,
        revision: u64,
    ) -> Result<Watch, WatchError> {
        self.watch_with_options([key], WatchOptions::new().from_revision(revision))
    }

    /// Every stored revision of `key`, oldest first; the iterator ends at the last.
    pub fn history<T: AsRef<str>>(&self, key: T) -> Result<History, HistoryError> {
        let key = key.as_ref();
        if Key::try_from(key).is_err() {
            return Err(HistoryError::new(HistoryErrorKind::InvalidKey));
        }
        let feed = Feed::start(self, [key], DeliverPolicy::All, false, "history")?;
        Ok(History::new(feed))
    }

    /// The keys that have a value (not deleted or purged); the iterator ends at the last.
    pub fn keys(&self) -> Result<Keys, HistoryError> {
        Ok(Keys {
            history: self.list_keys()?,
            seen: HashSet::new(),
            passes: Passes::new(),
        })
    }

    /// One pass of a listing of the keys.
    fn list_keys(&self) -> Result<History, WatchError> {
        let feed = Feed::start(self, [">"], DeliverPolicy::LastPerSubject, true, "keys")?;
        Ok(History::new(feed))
    }

    /// Watches several keys (wildcards allowed) for updates made from now on.
    pub fn watch_many<T, K>(&self, keys: K) -> Result<Watch, WatchError>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        self.watch_with_options(keys, WatchOptions::new().updates_only())
    }

    /// Watches `keys` (wildcards allowed; `[">"]` for all) as `options` say: where to
    /// start (current values, whole history, a revision, updates only), without deletes,
    /// without values. The options' heartbeat is not used: the blocking watch's consumer
    /// sends one every 5 s.
    pub fn watch_with_options<T, K>(
        &self,
        keys: K,
        options: WatchOptions,
    ) -> Result<Watch, WatchError>
    where
        T: AsRef<str>,
        K: IntoIterator<Item = T>,
    {
        let policy = options.deliver_policy();
        let feed = Feed::start(self, keys, policy, options.meta_only, "watch")?;
        Ok(Watch {
            // Nothing to send at the start: the initial values are all there (none).
            seen_current: feed.pending_at_start == 0,
            ignore_deletes: options.ignore_deletes,
            initial: (feed.pending_at_start > 0).then(ReadEnd::default),
            last_heard: Instant::now(),
            feed,
            done: false,
        })
    }
}

/// A watch of a bucket's keys: an iterator of entries (puts, deletes, purges) that waits
/// for the next change as long as it takes. Each entry's `seen_current` says whether the
/// values current when the watch started have all come. An error item (the consumer could
/// not be made again) does not end it: the next call tries again.
#[derive(Debug)]
pub struct Watch {
    feed: Feed,
    seen_current: bool,
    /// Deletes and purges are left out.
    ignore_deletes: bool,
    done: bool,
    /// While the initial values come: where they end, confirmed with the stream as a
    /// listing's end is (`consumer::push::read_end`); `None` once they did, or if there were
    /// none.
    initial: Option<ReadEnd>,
    /// When the last message or answer from the stream came.
    last_heard: Instant,
}

impl Watch {
    /// Whether the values that were current when the watch started have all come.
    pub fn seen_current(&self) -> bool {
        self.seen_current
    }

    /// The next entry, waiting up to `timeout`: `Ok(None)` if none came in time (or the
    /// client closed).
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Entry>, WatcherError> {
        self.next_until(Instant::now().checked_add(timeout))
    }

    fn next_until(&mut self, deadline: Option<Instant>) -> Result<Option<Entry>, WatcherError> {
        while !self.done {
            // Reading the initial values on to a message that may have gone (aged out,
            // purged): the stream is asked again after a quiet second.
            // Measured from the last message or answer, across calls with short deadlines.
            let reading_on = self.initial.as_ref().is_some_and(ReadEnd::reading_on);
            let quiet = self.last_heard.checked_add(QUIET);
            let wait = match (reading_on, deadline, quiet) {
                (true, Some(deadline), Some(quiet)) => Some(deadline.min(quiet)),
                (true, None, quiet) => quiet,
                _ => deadline,
            };
            let Some(message) = self.feed.next_message(wait)? else {
                if self.feed.closed {
                    self.done = true;
                    return Ok(None);
                }
                if reading_on && quiet.is_some_and(|quiet| Instant::now() >= quiet) {
                    self.ask_the_stream();
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(None);
                }
                continue;
            };
            self.last_heard = Instant::now();
            let mut entry = entry_of(&message, &self.feed.store.prefix, &self.feed.store.name)?;
            match self.initial.as_mut() {
                Some(end) => match end.delivered(entry.revision, entry.delta) {
                    Step::More => {}
                    Step::Over => self.initial_values_done(),
                    Step::Ask => self.ask_the_stream(),
                },
                None if entry.delta == 0 => self.seen_current = true,
                None => {}
            }
            entry.seen_current = self.seen_current;
            if !(self.ignore_deletes && entry.operation != Operation::Put) {
                return Ok(Some(entry));
            }
        }
        Ok(None)
    }
}

impl Watch {
    /// Asks the stream where the initial values end; marks them done if they have all come.
    fn ask_the_stream(&mut self) {
        let last = self.feed.store.stream.last_sequence(&self.feed.filters);
        self.last_heard = Instant::now();
        if self.initial.as_mut().is_none_or(|end| end.answered(last)) {
            self.initial_values_done();
        }
    }

    fn initial_values_done(&mut self) {
        self.seen_current = true;
        self.initial = None;
    }
}

impl Iterator for Watch {
    type Item = Result<Entry, WatcherError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_until(None) {
                Ok(Some(entry)) => return Some(Ok(entry)),
                Ok(None) if self.done => return None,
                // No deadline: nothing else ends a wait early.
                Ok(None) => continue,
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

/// A key's revisions, oldest first, from [`Store::history`]; ends at the last one. Each
/// wait is bounded by the context's timeout: past it, the item is an error and the
/// iteration ends.
#[derive(Debug)]
pub struct History {
    feed: Feed,
    done: bool,
    /// Entries delivered so far.
    delivered: u64,
    /// Whether the server's "nothing pending" is the stream's end (`read_end`).
    end: ReadEnd,
}

impl History {
    fn new(feed: Feed) -> History {
        let mut history = History {
            done: false,
            feed,
            delivered: 0,
            end: ReadEnd::default(),
        };
        if history.feed.pending_at_start == 0 {
            // Nothing to send, the server says: the stream confirms it.
            history.end = ReadEnd::empty();
            history.done = history.ask_the_stream();
        }
        history
    }

    /// Asks the stream for its last sequence under the filters (`read_end`); whether the
    /// read is over.
    fn ask_the_stream(&mut self) -> bool {
        let last = self.feed.store.stream.last_sequence(&self.feed.filters);
        self.end.answered(last)
    }

    /// The next message, waiting up to the context's timeout: `Ok(None)` once it passed or
    /// the client closed, or, with `done` set, once the stream says that what the read was
    /// waiting for went (asked after a quiet second).
    fn next_message(&mut self) -> Result<Option<rnats_core::Message>, WatcherError> {
        let timeout = self.feed.store.context().timeout();
        let started = Instant::now();
        loop {
            let wait = match self.end.reading_on() {
                true => QUIET.min(timeout),
                false => timeout,
            };
            match self.feed.next_message(Instant::now().checked_add(wait))? {
                Some(message) => return Ok(Some(message)),
                None if self.end.reading_on()
                    && !self.feed.closed
                    && started.elapsed() < timeout =>
                {
                    if self.ask_the_stream() {
                        self.done = true;
                        return Ok(None);
                    }
                }
                None => return Ok(None),
            }
        }
    }

    /// Whether to read the listing again (see `consumer::push::passes`).
    fn read_again(&self, passes: &mut Passes) -> bool {
        passes.again(self.delivered, self.feed.pending_at_start)
    }
}

impl Iterator for History {
    type Item = Result<Entry, WatcherError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let message = match self.next_message() {
            Ok(Some(message)) => message,
            Ok(None) if self.done => return None,
            Ok(None) => {
                self.done = true;
                let closed = self.feed.closed;
                let why = match closed {
                    true => "the client closed",
                    false => "timed out waiting for the bucket's entries",
                };
                return Some(Err(WatcherError::with_source(WatcherErrorKind::Other, why)));
            }
            Err(error) => {
                self.done = true;
                return Some(Err(error));
            }
        };
        self.delivered += 1;
        let entry = entry_of(&message, &self.feed.store.prefix, &self.feed.store.name);
        // The server's count of what is still to come: none left means this is the last,
        // once the stream agrees.
        self.done = match &entry {
            Ok(entry) => match self.end.delivered(entry.revision, entry.delta) {
                Step::More => false,
                Step::Over => true,
                Step::Ask => self.ask_the_stream(),
            },
            Err(_) => true,
        };
        Some(entry.map(|mut entry| {
            entry.seen_current = self.done;
            entry
        }))
    }
}

/// The keys of a bucket that have a value, from [`Store::keys`]; ends at the last. Waits
/// are bounded as [`History`]'s. A pass that lost an entry on the way is read again, as the
/// async listing is (a key rewritten while the listing starts is not left out), each key
/// still yielded once.
#[derive(Debug)]
pub struct Keys {
    history: History,
    seen: HashSet<String>,
    passes: Passes,
}

impl Keys {
    /// Starts another pass if the last one came short and passes are left: `None` if not,
    /// else whether the new pass's consumer was made.
    fn pass_again(&mut self) -> Option<Result<(), WatcherError>> {
        if !self.history.read_again(&mut self.passes) {
            return None;
        }
        let store = self.history.feed.store.clone();
        Some(match store.list_keys() {
            Ok(history) => {
                self.history = history;
                Ok(())
            }
            Err(error) => {
                self.passes.fail();
                Err(WatcherError::with_source(WatcherErrorKind::Consumer, error))
            }
        })
    }
}

impl Iterator for Keys {
    type Item = Result<String, WatcherError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = match self.history.next() {
                Some(Ok(entry)) => entry,
                Some(Err(error)) => {
                    self.passes.fail();
                    return Some(Err(error));
                }
                None => match self.pass_again()? {
                    Ok(()) => continue,
                    Err(error) => return Some(Err(error)),
                },
            };
            // A recreated consumer may deliver a key again.
            if entry.operation == Operation::Put && self.seen.insert(entry.key.clone()) {
                return Some(Ok(entry.key));
            }
        }
    }
}

/// An ordered consumer on some of a bucket's keys, and where its entries' keys start.
#[derive(Debug)]
struct Feed {
    store: Store,
    messages: Ordered,
    /// Messages the consumer had to deliver when it was made.
    pending_at_start: u64,
    /// The consumer's filter subjects.
    filters: Vec<String>,
    /// The client closed.
    closed: bool,
}

impl Feed {
    fn start<T: AsRef<str>>(
        store: &Store,
        keys: impl IntoIterator<Item = T>,
        deliver_policy: DeliverPolicy,
        headers_only: bool,
        purpose: &str,
    ) -> Result<Feed, WatchError> {
        let mut subjects = Vec::new();
        for key in keys {
            let key = key.as_ref();
            if !is_valid_filter(key) {
                return Err(WatchError::new(WatchErrorKind::InvalidKey));
            }
            subjects.push(format!("{}{key}", store.prefix));
        }
        let filters = subjects.clone();
        let (filter_subject, filter_subjects) = match subjects.len() {
            0 => return Err(WatchError::new(WatchErrorKind::InvalidKey)),
            1 => (subjects.remove(0), Vec::new()),
            _ => (String::new(), subjects),
        };
        let config = OrderedConfig {
            description: Some(format!("kv {purpose} consumer")),
            filter_subject,
            filter_subjects,
            replay_policy: ReplayPolicy::Instant,
            deliver_policy,
            headers_only,
            ..Default::default()
        };
        let messages = store.stream.ordered(config).map_err(watch_of_consumer)?;
        Ok(Feed {
            store: store.clone(),
            pending_at_start: messages.pending_at_start,
            messages,
            filters,
            closed: false,
        })
    }

    /// The next stream message, waiting until `deadline` (for ever with none): `Ok(None)`
    /// once it passed or the client closed.
    fn next_message(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<rnats_core::Message>, WatcherError> {
        let message = self
            .messages
            .next_message(deadline)
            .map_err(watcher_of_ordered)?;
        self.closed = self.messages.is_closed();
        Ok(message)
    }
}
