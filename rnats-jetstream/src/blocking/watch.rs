//! Reading a bucket's keys as they change ([`Watch`]) or through to their end ([`History`],
//! [`Keys`]), each over an ordered push consumer (ADR-17) on the keys' subjects.
//!
//! The consumer delivers without acks to an inbox of its own. A gap in its delivery
//! sequence, missed heartbeats or a 409 mean deliveries were lost: the consumer is then
//! made again from the stream sequence after the last one seen, so every revision comes
//! once, in order.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rnats_core::StatusCode;
use rnats_core::blocking::Subscriber;

use super::kv::Store;
use crate::consumer::{AckPolicy, DeliverPolicy, ReplayPolicy, push};
use crate::kv::errors::watch_of_consumer;
use crate::kv::name::is_valid_filter;
use crate::kv::{
    Entry, HistoryError, HistoryErrorKind, Key, Operation, WatchError, WatchErrorKind,
    WatcherError, WatcherErrorKind, entry_of,
};

/// How often an idle watch's consumer sends a heartbeat; two missed mean it is gone.
const HEARTBEAT: Duration = Duration::from_secs(5);

impl Store {
    /// Watches `key` (wildcards allowed) for updates made from now on. Iterating waits for
    /// the next change as long as it takes; [`Watch::next_timeout`] waits a bounded time.
    pub fn watch<T: AsRef<str>>(&self, key: T) -> Result<Watch, WatchError> {
        self.watch_with(key.as_ref(), DeliverPolicy::New)
    }

    /// Watches every key for updates made from now on.
    pub fn watch_all(&self) -> Result<Watch, WatchError> {
        self.watch(">")
    }

    /// Watches `key`, starting with its current value (the last of each matching key).
    pub fn watch_with_history<T: AsRef<str>>(&self, key: T) -> Result<Watch, WatchError> {
        self.watch_with(key.as_ref(), DeliverPolicy::LastPerSubject)
    }

    /// Watches `key` from `revision` on.
    pub fn watch_from_revision<T: AsRef<str>>(
        &self,
        key: T,
        revision: u64,
    ) -> Result<Watch, WatchError> {
        let policy = DeliverPolicy::ByStartSequence {
            start_sequence: revision,
        };
        self.watch_with(key.as_ref(), policy)
    }

    /// Every stored revision of `key`, oldest first; the iterator ends at the last.
    pub fn history<T: AsRef<str>>(&self, key: T) -> Result<History, HistoryError> {
        let key = key.as_ref();
        if Key::try_from(key).is_err() {
            return Err(HistoryError::new(HistoryErrorKind::InvalidKey));
        }
        let feed = Feed::start(self, key, DeliverPolicy::All, false, "history")?;
        Ok(History {
            done: feed.pending_at_start == 0,
            feed,
        })
    }

    /// The keys that have a value (not deleted or purged); the iterator ends at the last.
    pub fn keys(&self) -> Result<Keys, HistoryError> {
        let feed = Feed::start(self, ">", DeliverPolicy::LastPerSubject, true, "keys")?;
        Ok(Keys {
            history: History {
                done: feed.pending_at_start == 0,
                feed,
            },
            seen: HashSet::new(),
        })
    }

    fn watch_with(&self, key: &str, policy: DeliverPolicy) -> Result<Watch, WatchError> {
        let feed = Feed::start(self, key, policy, false, "watch")?;
        Ok(Watch {
            // Nothing to send at the start: the initial values are all there (none).
            seen_current: feed.pending_at_start == 0,
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
    done: bool,
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
        if self.done {
            return Ok(None);
        }
        let Some(message) = self.feed.next_message(deadline)? else {
            self.done = self.feed.closed;
            return Ok(None);
        };
        let mut entry = entry_of(&message, &self.feed.store.prefix, &self.feed.store.name)?;
        if entry.delta == 0 {
            self.seen_current = true;
        }
        entry.seen_current = self.seen_current;
        Ok(Some(entry))
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
}

impl Iterator for History {
    type Item = Result<Entry, WatcherError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let deadline = Instant::now().checked_add(self.feed.store.context().timeout());
        let message = match self.feed.next_message(deadline) {
            Ok(Some(message)) => message,
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
        let entry = entry_of(&message, &self.feed.store.prefix, &self.feed.store.name);
        // The server's count of what is still to come: none left means this is the last.
        self.done = entry.as_ref().map_or(true, |entry| entry.delta == 0);
        Some(entry)
    }
}

/// The keys of a bucket that have a value, from [`Store::keys`]; ends at the last. Waits
/// are bounded as [`History`]'s.
#[derive(Debug)]
pub struct Keys {
    history: History,
    seen: HashSet<String>,
}

impl Iterator for Keys {
    type Item = Result<String, WatcherError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = match self.history.next()? {
                Ok(entry) => entry,
                Err(error) => return Some(Err(error)),
            };
            // A recreated consumer may deliver a key again.
            if entry.operation == Operation::Put && self.seen.insert(entry.key.clone()) {
                return Some(Ok(entry.key));
            }
        }
    }
}

/// An ordered push consumer on some of a bucket's keys and the subscription it delivers to.
struct Feed {
    store: Store,
    filter: String,
    deliver_policy: DeliverPolicy,
    headers_only: bool,
    purpose: &'static str,
    subscriber: Subscriber,
    /// The consumer now delivering.
    consumer: String,
    /// The last delivery sequence seen from this consumer (0: none yet).
    consumer_sequence: u64,
    /// The stream sequence a consumer made again starts after: the last one seen, or for
    /// a watch of new changes the stream's last when it started; `None` to start as the
    /// first consumer did.
    resume_after: Option<u64>,
    /// Messages the first consumer had to deliver when it was made.
    pending_at_start: u64,
    /// When the server last sent something (or the consumer was made).
    last_heard: Instant,
    /// The subscription ended: the client closed.
    closed: bool,
}

impl Feed {
    fn start(
        store: &Store,
        key: &str,
        deliver_policy: DeliverPolicy,
        headers_only: bool,
        purpose: &'static str,
    ) -> Result<Feed, WatchError> {
        if !is_valid_filter(key) {
            return Err(WatchError::new(WatchErrorKind::InvalidKey));
        }
        let filter = format!("{}{key}", store.prefix);
        let (subscriber, info) =
            open_consumer(store, &filter, deliver_policy, headers_only, purpose)?;
        Ok(Feed {
            store: store.clone(),
            filter,
            deliver_policy,
            headers_only,
            purpose,
            subscriber,
            consumer: info.name,
            consumer_sequence: 0,
            // A consumer of new messages only starts after the stream's last: a consumer
            // made again must start there too, not at what is new by then.
            resume_after: match deliver_policy {
                DeliverPolicy::New => Some(info.delivered.stream_sequence),
                _ => None,
            },
            pending_at_start: info.num_pending,
            last_heard: Instant::now(),
            closed: false,
        })
    }

    /// The next stream message, waiting until `deadline` (for ever with none): `Ok(None)`
    /// once it passed or the client closed. Status messages are read here, not returned.
    fn next_message(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<Option<rnats_core::Message>, WatcherError> {
        loop {
            let now = Instant::now();
            // Two heartbeats missed since the server was last heard (over as many calls as
            // it takes): the consumer is gone.
            let quiet_until = self
                .last_heard
                .checked_add(HEARTBEAT.saturating_mul(2))
                .unwrap_or(now);
            if now >= quiet_until {
                self.last_heard = now;
                self.recreate()?;
                continue;
            }
            let mut wait = quiet_until - now;
            if let Some(deadline) = deadline {
                match deadline.checked_duration_since(now) {
                    Some(left) if !left.is_zero() => wait = wait.min(left),
                    _ => return Ok(None),
                }
            }
            let message = match self.subscriber.next_timeout(wait) {
                Ok(Some(message)) => message,
                Ok(None) => {
                    self.closed = true;
                    return Ok(None);
                }
                // The deadline and the silence are judged at the top.
                Err(_) => continue,
            };
            self.last_heard = Instant::now();
            match message.status {
                None | Some(StatusCode::OK) => {}
                Some(StatusCode::IDLE_HEARTBEAT) => continue,
                // A 409 (consumer deleted, ...) or anything unexpected: start over.
                Some(_) => {
                    self.recreate()?;
                    continue;
                }
            }
            let info = crate::message::info_of(&message)
                .map_err(|e| WatcherError::with_source(WatcherErrorKind::Other, e))?;
            let (delivery, sequence) = (info.consumer_sequence, info.stream_sequence);
            if delivery != self.consumer_sequence + 1 {
                // A delivery went missing, or came from a consumer replaced since.
                if delivery > self.consumer_sequence + 1 {
                    self.recreate()?;
                }
                continue;
            }
            self.consumer_sequence = delivery;
            self.resume_after = Some(sequence);
            return Ok(Some(message));
        }
    }

    /// Replaces the consumer by one that starts after the last stream sequence seen. On
    /// failure the old one stays in place, and the next wait tries again.
    fn recreate(&mut self) -> Result<(), WatcherError> {
        let policy = match self.resume_after {
            None => self.deliver_policy,
            Some(last) => DeliverPolicy::ByStartSequence {
                start_sequence: last + 1,
            },
        };
        let (subscriber, info) = open_consumer(
            &self.store,
            &self.filter,
            policy,
            self.headers_only,
            self.purpose,
        )
        .map_err(|e| WatcherError::with_source(WatcherErrorKind::Consumer, e))?;
        // The old one goes when its subscription does; deleting it is only tidier.
        let _ = self.store.stream.delete_consumer(&self.consumer);
        self.subscriber = subscriber;
        self.consumer = info.name;
        self.consumer_sequence = 0;
        self.last_heard = Instant::now();
        Ok(())
    }
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed")
            .field("filter", &self.filter)
            .field("consumer", &self.consumer)
            .field("resume_after", &self.resume_after)
            .finish_non_exhaustive()
    }
}

/// Subscribes to a fresh inbox, then makes a consumer delivering `filter` there.
fn open_consumer(
    store: &Store,
    filter: &str,
    deliver_policy: DeliverPolicy,
    headers_only: bool,
    purpose: &str,
) -> Result<(Subscriber, crate::consumer::Info), WatchError> {
    let client = &store.context().client;
    let inbox = client.new_inbox();
    let subscriber = client
        .subscribe(inbox.as_str())
        .map_err(|e| WatchError::with_source(WatchErrorKind::Other, e))?;
    let config = push::Config {
        deliver_subject: inbox,
        description: Some(format!("kv {purpose} consumer")),
        filter_subject: filter.to_owned(),
        deliver_policy,
        ack_policy: AckPolicy::None,
        replay_policy: ReplayPolicy::Instant,
        headers_only,
        idle_heartbeat: HEARTBEAT,
        max_deliver: 1,
        memory_storage: true,
        num_replicas: 1,
        ..Default::default()
    };
    let consumer = store
        .stream
        .create_consumer(config)
        .map_err(watch_of_consumer)?;
    Ok((subscriber, consumer.cached_info().clone()))
}
