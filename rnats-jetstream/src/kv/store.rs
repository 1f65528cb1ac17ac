//! [`Store`]: a handle to one bucket, for writing and reading its entries.

use std::time::Duration;

use bytes::Bytes;
use rnats_core::header::{
    HeaderMap, NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, NATS_MESSAGE_TTL, NATS_ROLLUP,
};

use super::bucket::Status;
use super::entry::{Entry, KV_OPERATION, Operation};
use super::errors::{
    CreateError, CreateErrorKind, DeleteError, EntryError, EntryErrorKind, PurgeError, PutError,
    PutErrorKind, StatusError, StatusErrorKind, UpdateError, UpdateErrorKind,
};
use super::errors::{
    ServerRefusal, create_of_entry, create_of_update, entry_of_direct, update_error,
};
use super::name::Key;
use crate::context::{Context, RequestErrorKind};
use crate::errors::ErrorCode;
use crate::message::StreamMessage;
use crate::stream::{DirectGetErrorKind, LastRawMessageErrorKind, Stream};

/// A Key-Value bucket: put, get, watch and manage the keys of one bucket. Cheap to clone.
///
/// ```no_run
/// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
/// let kv = jetstream.get_key_value("profiles").await?;
/// let revision = kv.put("sue.color", "blue".into()).await?;
/// kv.update("sue.color", "green".into(), revision).await?;
/// assert_eq!(kv.get("sue.color").await?.as_deref(), Some(&b"green"[..]));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Store {
    /// The bucket's name.
    pub name: String,
    /// The name of the stream behind it (`KV_<bucket>`).
    pub stream_name: String,
    /// The subject prefix its keys are read under (`$KV.<bucket>.`).
    pub prefix: String,
    /// The subject prefix writes go to, when it differs from `prefix` (a mirror writes to
    /// the bucket it mirrors).
    pub put_prefix: Option<String>,
    /// Whether writes go under the context's API prefix (a bucket in another domain).
    pub use_jetstream_prefix: bool,
    /// The stream behind the bucket, with its info as of when the handle was made.
    pub stream: Stream,
}

impl Store {
    /// A handle to the bucket `bucket` stored in `stream`.
    pub(crate) fn new(bucket: String, stream: Stream) -> Store {
        let subjects = Subjects::of(&bucket, &stream.info.config, stream.context.prefix());
        Store {
            prefix: subjects.prefix,
            name: bucket,
            stream_name: stream.info.config.name.clone(),
            put_prefix: subjects.put_prefix,
            use_jetstream_prefix: subjects.use_jetstream_prefix,
            stream,
        }
    }

    fn context(&self) -> &Context {
        &self.stream.context
    }

    /// The bucket's current status, fetched from the server.
    pub async fn status(&self) -> Result<Status, StatusError> {
        let info = self.stream.get_info().await.map_err(status_error)?;
        Ok(Status {
            info,
            bucket: self.name.clone(),
        })
    }

    /// Stores `value` under `key`; its revision.
    pub async fn put<T: AsRef<str>>(&self, key: T, value: Bytes) -> Result<u64, PutError> {
        let Ok(key) = Key::try_from(key.as_ref()) else {
            return Err(PutError::new(PutErrorKind::InvalidKey));
        };
        let ack = self
            .context()
            .publish(self.write_subject(key), value)
            .await
            .map_err(|e| PutError::with_source(PutErrorKind::Publish, e))?;
        let ack = ack
            .await
            .map_err(|e| PutError::with_source(PutErrorKind::Ack, e))?;
        Ok(ack.sequence)
    }

    /// Stores `value` under `key` only if the key has no value: never had one, or was
    /// deleted or purged since. Fails with [`CreateErrorKind::AlreadyExists`] otherwise.
    pub async fn create<T: AsRef<str>>(&self, key: T, value: Bytes) -> Result<u64, CreateError> {
        self.create_maybe_ttl(key.as_ref(), value, None).await
    }

    /// [`Store::create`] with a TTL for this value: the server removes it after `ttl` (the
    /// bucket needs `limit_markers`; whole seconds, at least one).
    pub async fn create_with_ttl<T: AsRef<str>>(
        &self,
        key: T,
        value: Bytes,
        ttl: Duration,
    ) -> Result<u64, CreateError> {
        self.create_maybe_ttl(key.as_ref(), value, Some(ttl)).await
    }

    async fn create_maybe_ttl(
        &self,
        key: &str,
        value: Bytes,
        ttl: Option<Duration>,
    ) -> Result<u64, CreateError> {
        // Revision 0 means "no message on this subject": the common case in one round trip.
        let refused = match self.update_maybe_ttl(key, value.clone(), 0, ttl).await {
            Ok(revision) => return Ok(revision),
            Err(error) if error.kind() == UpdateErrorKind::WrongLastRevision => error,
            Err(error) => return Err(create_of_update(error)),
        };
        // The key has a last message; if it marks a delete or purge the key is free, and
        // taking it must expect exactly that marker.
        match self.entry(key).await.map_err(create_of_entry)? {
            Some(Entry {
                operation: Operation::Delete | Operation::Purge,
                revision,
                ..
            }) => self
                .update_maybe_ttl(key, value, revision, ttl)
                .await
                .map_err(create_of_update),
            Some(_) => Err(CreateError::with_source(
                CreateErrorKind::AlreadyExists,
                refused,
            )),
            // Gone between the two calls (aged out): try once more from nothing.
            None => self
                .update_maybe_ttl(key, value, 0, ttl)
                .await
                .map_err(create_of_update),
        }
    }

    /// Stores `value` under `key` only if the key's last revision is `revision`; the new
    /// revision. Fails with [`UpdateErrorKind::WrongLastRevision`] otherwise.
    pub async fn update<T: AsRef<str>>(
        &self,
        key: T,
        value: Bytes,
        revision: u64,
    ) -> Result<u64, UpdateError> {
        self.update_maybe_ttl(key.as_ref(), value, revision, None)
            .await
    }

    async fn update_maybe_ttl(
        &self,
        key: &str,
        value: Bytes,
        revision: u64,
        ttl: Option<Duration>,
    ) -> Result<u64, UpdateError> {
        let Ok(key) = Key::try_from(key) else {
            return Err(UpdateError::new(UpdateErrorKind::InvalidKey));
        };
        let mut headers = HeaderMap::new();
        headers.insert(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, revision.to_string());
        if let Some(ttl) = ttl {
            headers.insert(NATS_MESSAGE_TTL, ttl_header(ttl));
        }
        self.write(key, headers, value).await
    }

    /// Deletes `key`: a delete marker becomes its last revision; its history stays.
    pub async fn delete<T: AsRef<str>>(&self, key: T) -> Result<(), DeleteError> {
        self.delete_expect_revision(key, None).await
    }

    /// Deletes `key` if its last revision is `revision` (any revision if `None`).
    pub async fn delete_expect_revision<T: AsRef<str>>(
        &self,
        key: T,
        revision: Option<u64>,
    ) -> Result<(), DeleteError> {
        let Ok(key) = Key::try_from(key.as_ref()) else {
            return Err(DeleteError::new(UpdateErrorKind::InvalidKey));
        };
        let mut headers = HeaderMap::new();
        headers.insert(KV_OPERATION, Operation::Delete.as_str());
        if let Some(revision) = revision {
            headers.insert(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, revision.to_string());
        }
        self.write(key, headers, Bytes::new()).await.map(drop)
    }

    /// Purges `key`: a purge marker replaces its whole history (a subject rollup).
    pub async fn purge<T: AsRef<str>>(&self, key: T) -> Result<(), PurgeError> {
        self.purge_maybe(key.as_ref(), None, None).await
    }

    /// Purges `key` and has the server remove the purge marker itself after `ttl` (the
    /// bucket needs `limit_markers`).
    pub async fn purge_with_ttl<T: AsRef<str>>(
        &self,
        key: T,
        ttl: Duration,
    ) -> Result<(), PurgeError> {
        self.purge_maybe(key.as_ref(), None, Some(ttl)).await
    }

    /// Purges `key` if its last revision is `revision` (any revision if `None`).
    pub async fn purge_expect_revision<T: AsRef<str>>(
        &self,
        key: T,
        revision: Option<u64>,
    ) -> Result<(), PurgeError> {
        self.purge_maybe(key.as_ref(), revision, None).await
    }

    /// Purges `key` if its last revision is `revision`, the marker removed after `ttl`.
    pub async fn purge_expect_revision_with_ttl<T: AsRef<str>>(
        &self,
        key: T,
        revision: u64,
        ttl: Duration,
    ) -> Result<(), PurgeError> {
        self.purge_maybe(key.as_ref(), Some(revision), Some(ttl))
            .await
    }

    async fn purge_maybe(
        &self,
        key: &str,
        revision: Option<u64>,
        ttl: Option<Duration>,
    ) -> Result<(), PurgeError> {
        let Ok(key) = Key::try_from(key) else {
            return Err(PurgeError::new(UpdateErrorKind::InvalidKey));
        };
        let mut headers = HeaderMap::new();
        headers.insert(KV_OPERATION, Operation::Purge.as_str());
        headers.insert(NATS_ROLLUP, "sub");
        if let Some(revision) = revision {
            headers.insert(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, revision.to_string());
        }
        if let Some(ttl) = ttl {
            headers.insert(NATS_MESSAGE_TTL, ttl_header(ttl));
        }
        self.write(key, headers, Bytes::new()).await.map(drop)
    }

    /// Publishes to `key` with `headers` and waits for the ack; the revision.
    async fn write(
        &self,
        key: Key<'_>,
        headers: HeaderMap,
        value: Bytes,
    ) -> Result<u64, UpdateError> {
        let ack = self
            .context()
            .publish_with_headers(self.write_subject(key), headers, value)
            .await
            .map_err(update_error)?
            .await
            .map_err(update_error)?;
        Ok(ack.sequence)
    }

    /// The subject a write of `key` goes to.
    fn write_subject(&self, key: Key<'_>) -> String {
        let key = key.as_str();
        let prefix = self.put_prefix.as_deref().unwrap_or(&self.prefix);
        let api = match self.use_jetstream_prefix {
            true => self.context().prefix(),
            false => "",
        };
        let mut subject = String::with_capacity(api.len() + 1 + prefix.len() + key.len());
        if !api.is_empty() {
            subject.push_str(api);
            subject.push('.');
        }
        subject.push_str(prefix);
        subject.push_str(key);
        subject
    }

    /// The value of `key`, if it has one (`None` if it never had one, or was deleted or
    /// purged).
    pub async fn get<T: Into<String>>(&self, key: T) -> Result<Option<Bytes>, EntryError> {
        Ok(self
            .entry(key)
            .await?
            .filter(|entry| entry.operation == Operation::Put)
            .map(|entry| entry.value))
    }

    /// The last entry of `key`: its value, or the marker of its delete or purge.
    pub async fn entry<T: Into<String>>(&self, key: T) -> Result<Option<Entry>, EntryError> {
        self.entry_at(key.into(), None).await
    }

    /// The entry of `key` at `revision`, if that revision is of this key and still stored.
    pub async fn entry_for_revision<T: Into<String>>(
        &self,
        key: T,
        revision: u64,
    ) -> Result<Option<Entry>, EntryError> {
        self.entry_at(key.into(), Some(revision)).await
    }

    async fn entry_at(
        &self,
        key: String,
        revision: Option<u64>,
    ) -> Result<Option<Entry>, EntryError> {
        if Key::try_from(key.as_str()).is_err() {
            return Err(EntryError::new(EntryErrorKind::InvalidKey));
        }
        let subject = format!("{}{key}", self.prefix);
        let message = if self.stream.info.config.allow_direct {
            self.direct_message(&subject, revision).await?
        } else {
            self.leader_message(&subject, revision).await?
        };
        let Some(message) = message else {
            return Ok(None);
        };
        // A revision of another key is not this key's entry.
        if message.subject.as_str() != subject {
            return Ok(None);
        }
        let operation = Operation::of_headers(Some(&message.headers))
            .map_err(|e| EntryError::with_source(EntryErrorKind::Other, e))?;
        Ok(Some(Entry {
            bucket: self.name.clone(),
            key,
            value: message.payload,
            revision: message.sequence,
            delta: 0,
            created: message.time,
            operation,
            seen_current: false,
        }))
    }

    /// Reads by direct get (ADR-31), from any replica.
    async fn direct_message(
        &self,
        subject: &str,
        revision: Option<u64>,
    ) -> Result<Option<StreamMessage>, EntryError> {
        let result = match revision {
            Some(revision) => self.stream.direct_get(revision).await,
            None => self.stream.direct_get_last_for_subject(subject).await,
        };
        match result {
            Ok(message) => Ok(Some(message)),
            Err(error) if error.kind() == DirectGetErrorKind::NotFound => Ok(None),
            Err(error) => Err(entry_of_direct(error)),
        }
    }

    /// Reads from the stream leader, for streams without direct gets.
    async fn leader_message(
        &self,
        subject: &str,
        revision: Option<u64>,
    ) -> Result<Option<StreamMessage>, EntryError> {
        let result = match revision {
            Some(revision) => self.stream.get_raw_message(revision).await,
            None => self.stream.get_last_raw_message_by_subject(subject).await,
        };
        match result {
            Ok(message) => Ok(Some(message)),
            Err(error) => match error.kind() {
                LastRawMessageErrorKind::NoMessageFound => Ok(None),
                LastRawMessageErrorKind::InvalidSubject => {
                    Err(EntryError::with_source(EntryErrorKind::InvalidKey, error))
                }
                _ => Err(EntryError::with_source(EntryErrorKind::Other, error)),
            },
        }
    }
}

/// A `Nats-TTL` header value: whole seconds, rounded up, at least one (the server's unit).
fn ttl_header(ttl: Duration) -> String {
    let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    format!("{}s", seconds.max(1))
}

/// Where a bucket's keys are read and written, for the async and blocking stores alike.
pub(crate) struct Subjects {
    /// The subject prefix keys are read under.
    pub(crate) prefix: String,
    /// The subject prefix writes go to, when it is not `prefix`.
    pub(crate) put_prefix: Option<String>,
    /// Whether writes go under the context's API prefix.
    pub(crate) use_jetstream_prefix: bool,
}

impl Subjects {
    /// The subjects of the bucket `bucket` kept in a stream configured as `config`, for a
    /// context whose API prefix is `api_prefix`.
    pub(crate) fn of(bucket: &str, config: &crate::stream::Config, api_prefix: &str) -> Subjects {
        // A mirror holds the subjects of the bucket it mirrors and is written through that
        // bucket (in its domain when it is in another one). nats.go and async-nats read a
        // same-domain mirror under its own name, which finds nothing; rnats reads it under
        // the origin's subjects, which it stores.
        let Some(mirror) = &config.mirror else {
            return Subjects {
                prefix: format!("$KV.{bucket}."),
                put_prefix: None,
                use_jetstream_prefix: api_prefix != "$JS.API",
            };
        };
        let origin = mirror.name.strip_prefix("KV_").unwrap_or(&mirror.name);
        match &mirror.external {
            Some(external) if !external.api_prefix.is_empty() => Subjects {
                prefix: format!("$KV.{origin}."),
                put_prefix: Some(format!("{}.$KV.{origin}.", external.api_prefix)),
                use_jetstream_prefix: false,
            },
            _ => Subjects {
                prefix: format!("$KV.{origin}."),
                put_prefix: Some(format!("$KV.{origin}.")),
                use_jetstream_prefix: api_prefix != "$JS.API",
            },
        }
    }
}

/// A failed read of the stream's info as a status failure.
pub(crate) fn status_error(error: crate::stream::InfoError) -> StatusError {
    let kind = match (error.kind(), error.jetstream_error()) {
        (_, Some(refusal)) => StatusErrorKind::JetStream(refusal.clone()),
        (RequestErrorKind::TimedOut, None) => StatusErrorKind::TimedOut,
        // StatusErrorKind has no room for a local failure; describe it as one.
        (_, None) => StatusErrorKind::JetStream(crate::Error::new(
            0,
            ErrorCode::default(),
            error.to_string(),
        )),
    };
    StatusError::with_source(kind, error)
}
