//! Key-Value buckets (ADR-8) from a blocking [`Context`]: create, get and delete them, and
//! the [`Store`] handle to put, read and delete keys. Watches, histories and key listings
//! are in `watch.rs`.

use bytes::Bytes;
use rnats_core::header::{HeaderMap, NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, NATS_ROLLUP};

use super::context::Context;
use super::list::StreamNames;
use super::stream::Stream;
use crate::context::PublishErrorKind;
use crate::errors::ErrorCode;
use crate::kv::buckets::{
    check_bucket_name, create_error_of_config, create_error_of_get, update_error_of_create,
};
use crate::kv::config::MAX_HISTORY;
use crate::kv::entry::KV_OPERATION;
use crate::kv::errors::{create_of_entry, create_of_update, entry_of_direct, update_error};
use crate::kv::store::{Subjects, status_error};
use crate::kv::{
    BucketName, Config, CreateError, CreateErrorKind, CreateKeyValueError, CreateKeyValueErrorKind,
    DeleteError, Entry, EntryError, EntryErrorKind, Key, KeyValueError, KeyValueErrorKind,
    Operation, PurgeError, PutError, PutErrorKind, ServerRefusal, Status, StatusError, UpdateError,
    UpdateErrorKind, UpdateKeyValueError, UpdateKeyValueErrorKind,
};
use crate::message::StreamMessage;
use crate::stream::{DeleteStatus, DirectGetErrorKind, RawMessageErrorKind};
use crate::stream_errors::{CreateStreamErrorKind, StreamsError};

impl Context {
    /// Creates the bucket `config` describes (its stream `KV_<bucket>`). Creating a bucket
    /// that exists with the same config succeeds.
    pub fn create_key_value(&self, config: Config) -> Result<Store, CreateKeyValueError> {
        let stream_config = self.bucket_stream_config(&config)?;
        let stream = self.create_stream(stream_config).map_err(|error| {
            let kind = match error.kind() {
                CreateStreamErrorKind::TimedOut => CreateKeyValueErrorKind::TimedOut,
                _ => CreateKeyValueErrorKind::BucketCreate,
            };
            CreateKeyValueError::with_source(kind, error)
        })?;
        Ok(Store::new(config.bucket, stream))
    }

    /// The bucket `bucket`. A stream that is not a bucket fails with
    /// [`KeyValueErrorKind::InvalidStoreName`]; a missing one with
    /// [`KeyValueErrorKind::GetBucket`], whose source has the server's `STREAM_NOT_FOUND`.
    pub fn get_key_value<T: Into<String>>(&self, bucket: T) -> Result<Store, KeyValueError> {
        let Ok(bucket) = BucketName::try_from(bucket.into()) else {
            return Err(KeyValueError::new(KeyValueErrorKind::InvalidStoreName));
        };
        let stream = self
            .get_stream(bucket.stream_name())
            .map_err(|e| KeyValueError::with_source(KeyValueErrorKind::GetBucket, e))?;
        if stream.info.config.max_messages_per_subject < 1 {
            return Err(KeyValueError::new(KeyValueErrorKind::InvalidStoreName));
        }
        Ok(Store::new(bucket.into(), stream))
    }

    /// Changes an existing bucket's config; a missing bucket fails with
    /// [`UpdateKeyValueErrorKind::NotFound`].
    pub fn update_key_value(&self, config: Config) -> Result<Store, UpdateKeyValueError> {
        let stream_config = self
            .bucket_stream_config(&config)
            .map_err(update_error_of_create)?;
        let name = stream_config.name.clone();
        let info = self.update_stream(&stream_config).map_err(|error| {
            let kind = match error.kind() {
                CreateStreamErrorKind::NotFound => UpdateKeyValueErrorKind::NotFound,
                CreateStreamErrorKind::TimedOut => UpdateKeyValueErrorKind::TimedOut,
                _ => UpdateKeyValueErrorKind::BucketUpdate,
            };
            UpdateKeyValueError::with_source(kind, error)
        })?;
        Ok(Store::new(config.bucket, self.stream_handle(name, info)))
    }

    /// The bucket `config.bucket` if it exists, its config left as it is; otherwise a new
    /// one with `config`. Callers racing to make the same bucket all get the one the server
    /// created first.
    pub fn get_or_create_key_value(&self, config: Config) -> Result<Store, CreateKeyValueError> {
        // A config that could never create the bucket is refused even when it exists.
        if config.history > MAX_HISTORY {
            return Err(CreateKeyValueError::new(
                CreateKeyValueErrorKind::TooLongHistory,
            ));
        }
        match self.get_key_value(config.bucket.as_str()) {
            Ok(store) => return Ok(store),
            Err(error) if error.error_code() == Some(ErrorCode::STREAM_NOT_FOUND) => {}
            Err(error) => return Err(create_error_of_get(error)),
        }
        let bucket = config.bucket.clone();
        match self.create_key_value(config) {
            // Another caller made it first, with another config: take theirs.
            Err(error) if error.error_code() == Some(ErrorCode::STREAM_NAME_EXIST) => {
                self.get_key_value(bucket).map_err(create_error_of_get)
            }
            result => result,
        }
    }

    /// The names of the account's buckets (mirrors included), fetched page by page as they
    /// are read.
    pub fn key_value_store_names(&self) -> KeyValueNames {
        KeyValueNames {
            names: self.stream_names(),
        }
    }

    /// Deletes the bucket `bucket` with all its keys.
    pub fn delete_key_value<T: AsRef<str>>(
        &self,
        bucket: T,
    ) -> Result<DeleteStatus, KeyValueError> {
        let Ok(bucket) = BucketName::try_from(bucket.as_ref()) else {
            return Err(KeyValueError::new(KeyValueErrorKind::InvalidStoreName));
        };
        self.delete_stream(bucket.stream_name())
            .map_err(|e| KeyValueError::with_source(KeyValueErrorKind::JetStream, e))
    }

    /// The stream config of `config`, checked, for the server's API level.
    fn bucket_stream_config(
        &self,
        config: &Config,
    ) -> Result<crate::stream::Config, CreateKeyValueError> {
        check_bucket_name(config)?;
        // Only limit markers depend on the server (API level 1, nats-server 2.11).
        let api_level = match config.limit_markers {
            Some(_) => {
                self.query_account()
                    .map_err(|e| {
                        CreateKeyValueError::with_source(CreateKeyValueErrorKind::JetStream, e)
                    })?
                    .requests
                    .level
            }
            None => 0,
        };
        config
            .to_stream_config(api_level)
            .map_err(create_error_of_config)
    }
}

/// The names of the account's buckets; from [`Context::key_value_store_names`].
#[derive(Debug)]
pub struct KeyValueNames {
    names: StreamNames,
}

impl Iterator for KeyValueNames {
    type Item = Result<String, StreamsError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            // Buckets are the streams named `KV_*` (a mirror bucket's stream has no
            // subjects of its own to list it by).
            match self.names.next()? {
                Ok(name) => match name.strip_prefix("KV_") {
                    Some(bucket) => return Some(Ok(bucket.to_owned())),
                    None => continue,
                },
                Err(error) => return Some(Err(error)),
            }
        }
    }
}

/// A Key-Value bucket: put, get, watch and manage the keys of one bucket. Cheap to clone.
///
/// ```no_run
/// # fn run(jetstream: rnats_jetstream::blocking::Context) -> Result<(), rnats_core::Error> {
/// let kv = jetstream.get_key_value("profiles")?;
/// let revision = kv.put("sue.color", "blue".into())?;
/// kv.update("sue.color", "green".into(), revision)?;
/// assert_eq!(kv.get("sue.color")?.as_deref(), Some(&b"green"[..]));
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
    /// A handle to the bucket `bucket` stored in `stream`, read and written where the
    /// async store would (a mirror through the bucket it mirrors).
    fn new(bucket: String, stream: Stream) -> Store {
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

    pub(super) fn context(&self) -> &Context {
        &self.stream.context
    }

    /// The bucket's current status, fetched from the server.
    pub fn status(&self) -> Result<Status, StatusError> {
        let info = self.stream.get_info().map_err(status_error)?;
        Ok(Status {
            info,
            bucket: self.name.clone(),
        })
    }

    /// Stores `value` under `key`; its revision.
    pub fn put<T: AsRef<str>>(&self, key: T, value: Bytes) -> Result<u64, PutError> {
        let Ok(key) = Key::try_from(key.as_ref()) else {
            return Err(PutError::new(PutErrorKind::InvalidKey));
        };
        let ack = self
            .context()
            .publish(self.write_subject(key), value)
            .map_err(|e| {
                let kind = match e.kind() {
                    PublishErrorKind::MaxPayloadExceeded | PublishErrorKind::BrokenPipe => {
                        PutErrorKind::Publish
                    }
                    _ => PutErrorKind::Ack,
                };
                PutError::with_source(kind, e)
            })?;
        Ok(ack.sequence)
    }

    /// Stores `value` under `key` only if the key has no value: never had one, or was
    /// deleted or purged since. Fails with [`CreateErrorKind::AlreadyExists`] otherwise.
    pub fn create<T: AsRef<str>>(&self, key: T, value: Bytes) -> Result<u64, CreateError> {
        let key = key.as_ref();
        // Revision 0 means "no message on this subject": the common case in one round trip.
        let refused = match self.update(key, value.clone(), 0) {
            Ok(revision) => return Ok(revision),
            Err(error) if error.kind() == UpdateErrorKind::WrongLastRevision => error,
            Err(error) => return Err(create_of_update(error)),
        };
        // The key has a last message; if it marks a delete or purge the key is free, and
        // taking it must expect exactly that marker.
        match self.entry(key).map_err(create_of_entry)? {
            Some(Entry {
                operation: Operation::Delete | Operation::Purge,
                revision,
                ..
            }) => self.update(key, value, revision).map_err(create_of_update),
            Some(_) => Err(CreateError::with_source(
                CreateErrorKind::AlreadyExists,
                refused,
            )),
            // Gone between the two calls (aged out): try once more from nothing.
            None => self.update(key, value, 0).map_err(create_of_update),
        }
    }

    /// Stores `value` under `key` only if the key's last revision is `revision`; the new
    /// revision. Fails with [`UpdateErrorKind::WrongLastRevision`] otherwise.
    pub fn update<T: AsRef<str>>(
        &self,
        key: T,
        value: Bytes,
        revision: u64,
    ) -> Result<u64, UpdateError> {
        let Ok(key) = Key::try_from(key.as_ref()) else {
            return Err(UpdateError::new(UpdateErrorKind::InvalidKey));
        };
        let mut headers = HeaderMap::new();
        headers.insert(NATS_EXPECTED_LAST_SUBJECT_SEQUENCE, revision.to_string());
        self.write(key, headers, value)
    }

    /// Deletes `key`: a delete marker becomes its last revision; its history stays.
    pub fn delete<T: AsRef<str>>(&self, key: T) -> Result<(), DeleteError> {
        let Ok(key) = Key::try_from(key.as_ref()) else {
            return Err(DeleteError::new(UpdateErrorKind::InvalidKey));
        };
        let mut headers = HeaderMap::new();
        headers.insert(KV_OPERATION, Operation::Delete.as_str());
        self.write(key, headers, Bytes::new()).map(drop)
    }

    /// Purges `key`: a purge marker replaces its whole history (a subject rollup).
    pub fn purge<T: AsRef<str>>(&self, key: T) -> Result<(), PurgeError> {
        let Ok(key) = Key::try_from(key.as_ref()) else {
            return Err(PurgeError::new(UpdateErrorKind::InvalidKey));
        };
        let mut headers = HeaderMap::new();
        headers.insert(KV_OPERATION, Operation::Purge.as_str());
        headers.insert(NATS_ROLLUP, "sub");
        self.write(key, headers, Bytes::new()).map(drop)
    }

    /// The value of `key`, if it has one (`None` if it never had one, or was deleted or
    /// purged).
    pub fn get<T: Into<String>>(&self, key: T) -> Result<Option<Bytes>, EntryError> {
        Ok(self
            .entry(key)?
            .filter(|entry| entry.operation == Operation::Put)
            .map(|entry| entry.value))
    }

    /// The last entry of `key`: its value, or the marker of its delete or purge.
    pub fn entry<T: Into<String>>(&self, key: T) -> Result<Option<Entry>, EntryError> {
        self.entry_at(key.into(), None)
    }

    /// The entry of `key` at `revision`, if that revision is of this key and still stored.
    pub fn entry_for_revision<T: Into<String>>(
        &self,
        key: T,
        revision: u64,
    ) -> Result<Option<Entry>, EntryError> {
        self.entry_at(key.into(), Some(revision))
    }

    /// Publishes to `key` with `headers` and waits for the ack; the revision.
    fn write(&self, key: Key<'_>, headers: HeaderMap, value: Bytes) -> Result<u64, UpdateError> {
        let ack = self
            .context()
            .publish_with_headers(self.write_subject(key), headers, value)
            .map_err(update_error)?;
        Ok(ack.sequence)
    }

    /// The subject a write of `key` goes to.
    fn write_subject(&self, key: Key<'_>) -> String {
        let prefix = self.put_prefix.as_deref().unwrap_or(&self.prefix);
        match self.use_jetstream_prefix {
            true => format!("{}.{prefix}{}", self.context().prefix(), key.as_str()),
            false => format!("{prefix}{}", key.as_str()),
        }
    }

    fn entry_at(&self, key: String, revision: Option<u64>) -> Result<Option<Entry>, EntryError> {
        if Key::try_from(key.as_str()).is_err() {
            return Err(EntryError::new(EntryErrorKind::InvalidKey));
        }
        let subject = format!("{}{key}", self.prefix);
        // Any replica answers a direct get; without it, the leader does.
        let message = match self.stream.info.config.allow_direct {
            true => self.direct_message(&subject, revision)?,
            false => self.leader_message(&subject, revision)?,
        };
        // A revision of another key is not this key's entry.
        let Some(message) = message.filter(|m| m.subject.as_str() == subject) else {
            return Ok(None);
        };
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

    fn direct_message(
        &self,
        subject: &str,
        revision: Option<u64>,
    ) -> Result<Option<StreamMessage>, EntryError> {
        let result = match revision {
            Some(revision) => self.stream.direct_get(revision),
            None => self.stream.direct_get_last_for_subject(subject),
        };
        match result {
            Ok(message) => Ok(Some(message)),
            Err(error) if error.kind() == DirectGetErrorKind::NotFound => Ok(None),
            Err(error) => Err(entry_of_direct(error)),
        }
    }

    fn leader_message(
        &self,
        subject: &str,
        revision: Option<u64>,
    ) -> Result<Option<StreamMessage>, EntryError> {
        let result = match revision {
            Some(revision) => self.stream.get_raw_message(revision),
            None => self.stream.get_last_raw_message_by_subject(subject),
        };
        match result {
            Ok(message) => Ok(Some(message)),
            Err(error) => match error.kind() {
                RawMessageErrorKind::NoMessageFound => Ok(None),
                RawMessageErrorKind::InvalidSubject => {
                    Err(EntryError::with_source(EntryErrorKind::InvalidKey, error))
                }
                _ => Err(EntryError::with_source(EntryErrorKind::Other, error)),
            },
        }
    }
}
