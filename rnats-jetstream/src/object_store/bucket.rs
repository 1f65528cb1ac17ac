//! Buckets: their [`Config`], their [`ObjectStoreStatus`], and (on [`Context`]) creating,
//! getting, updating, deleting and listing them. A bucket `b` is the stream `OBJ_b` holding
//! `$O.b.C.>` (chunks) and `$O.b.M.>` (metadata), with rollups, direct gets and
//! `discard: new` (ADR-20).

use std::collections::HashMap;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::errors::{
    CreateObjectStoreError, CreateObjectStoreErrorKind, DeleteObjectStore, ObjectStoreError,
    ObjectStoreErrorKind, UpdateObjectStoreError, UpdateObjectStoreErrorKind,
};
use super::{ObjectStore, is_valid_bucket_name};
use crate::context::Context;
use crate::stream::list::{StreamNames, Streams};
use crate::stream::{self, Compression, DiscardPolicy, Placement, StorageType, Stream};
use crate::stream_errors::{CreateStreamError, CreateStreamErrorKind, StreamsError};

/// A bucket's configuration.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Config {
    /// The bucket's name: letters, digits, `-` and `_`.
    pub bucket: String,
    /// What the bucket is for, in words.
    pub description: Option<String>,
    /// How long an object is kept (zero: for ever).
    #[serde(default, with = "crate::nanos")]
    pub max_age: Duration,
    /// The bucket's size limit in bytes (zero or -1: none).
    pub max_bytes: i64,
    /// File (the default) or memory.
    pub storage: StorageType,
    /// Copies of each chunk in a cluster, 1 to 5.
    pub num_replicas: usize,
    /// Whether the stream is compressed (S2).
    pub compression: bool,
    /// Where the stream is placed in a cluster.
    pub placement: Option<Placement>,
    /// The bucket's metadata, kept as its stream's (ADR-20; nats-server 2.10 or later).
    #[serde(default)]
    pub metadata: HashMap<String, String>,
    /// Whether puts may upload over fast ingest (the stream's `allow_batched`, ADR-50;
    /// nats-server 2.14 or later): fewer acks for large objects. Buckets without it, and
    /// puts to a server without it, use the pipelined upload. nats.js 3.4 opts in the same
    /// way (`allowBatched`).
    #[serde(default)]
    pub fast_ingest: bool,
}

impl Config {
    /// The stream configuration of this bucket, as nats.go makes it.
    pub(crate) fn stream_config(&self) -> stream::Config {
        stream::Config {
            name: stream_name(&self.bucket),
            description: self.description.clone(),
            subjects: vec![
                format!("$O.{}.C.>", self.bucket),
                format!("$O.{}.M.>", self.bucket),
            ],
            max_age: self.max_age,
            max_bytes: if self.max_bytes == 0 {
                -1
            } else {
                self.max_bytes
            },
            storage: self.storage,
            num_replicas: self.num_replicas.max(1),
            discard: DiscardPolicy::New,
            allow_rollup: true,
            allow_direct: true,
            compression: self.compression.then_some(Compression::S2),
            placement: self.placement.clone(),
            metadata: self.metadata.clone(),
            allow_batch_publish: self.fast_ingest,
            ..Default::default()
        }
    }
}

/// A bucket's configuration and usage, from its stream's info (an rnats addition, as
/// nats.go's `ObjectStoreStatus`).
#[derive(Debug, Clone)]
pub struct ObjectStoreStatus {
    /// The bucket's name.
    pub bucket: String,
    /// What the bucket is for.
    pub description: Option<String>,
    /// How long objects are kept (zero: for ever).
    pub max_age: Duration,
    /// File or memory.
    pub storage: StorageType,
    /// Copies of each chunk.
    pub replicas: usize,
    /// Whether the bucket is sealed.
    pub sealed: bool,
    /// Bytes stored, chunks and metadata.
    pub size: u64,
    /// Whether the stream is compressed.
    pub compressed: bool,
    /// The bucket's metadata (the stream's, with the server's own `_nats.*` entries).
    pub metadata: HashMap<String, String>,
    /// Whether puts upload over fast ingest (the stream allows batch publishing).
    pub fast_ingest: bool,
    /// The stream's full info.
    pub info: stream::Info,
}

impl ObjectStoreStatus {
    pub(crate) fn new(bucket: String, info: stream::Info) -> ObjectStoreStatus {
        let config = &info.config;
        ObjectStoreStatus {
            bucket,
            description: config.description.clone(),
            max_age: config.max_age,
            storage: config.storage,
            replicas: config.num_replicas,
            sealed: config.sealed,
            size: info.state.bytes,
            compressed: matches!(config.compression, Some(Compression::S2)),
            metadata: config.metadata.clone(),
            fast_ingest: config.allow_batch_publish,
            info: info.clone(),
        }
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "object-store")))]
impl Context {
    /// Creates the bucket `config` describes (or returns it, if it exists with the same
    /// configuration).
    ///
    /// ```no_run
    /// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// let bucket = jetstream
    ///     .create_object_store(rnats_jetstream::object_store::Config {
    ///         bucket: "images".to_string(),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// # drop(bucket); Ok(()) }
    /// ```
    pub async fn create_object_store(
        &self,
        config: Config,
    ) -> Result<ObjectStore, CreateObjectStoreError> {
        check_new_bucket(&config)?;
        let stream = self
            .create_stream(config.stream_config())
            .await
            .map_err(create_error)?;
        Ok(ObjectStore {
            name: config.bucket,
            stream,
        })
    }

    /// The bucket `config` names if it exists, its configuration left as it is; otherwise a
    /// new one as `config` describes (an rnats addition, as
    /// [`get_or_create_stream`](Context::get_or_create_stream) is for streams). Callers
    /// racing to create the bucket all get it, whichever configuration won.
    ///
    /// ```no_run
    /// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// let bucket = jetstream
    ///     .get_or_create_object_store(rnats_jetstream::object_store::Config {
    ///         bucket: "images".to_string(),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// # drop(bucket); Ok(()) }
    /// ```
    pub async fn get_or_create_object_store(
        &self,
        config: Config,
    ) -> Result<ObjectStore, CreateObjectStoreError> {
        check_new_bucket(&config)?;
        // `get_or_create_stream` takes the stream of a caller that created it between this
        // one's look and its create, whatever configuration either asked for.
        let stream = self
            .get_or_create_stream(config.stream_config())
            .await
            .map_err(get_or_create_error)?;
        Ok(ObjectStore {
            name: config.bucket,
            stream,
        })
    }

    /// The bucket `bucket_name`.
    pub async fn get_object_store<T: AsRef<str>>(
        &self,
        bucket_name: T,
    ) -> Result<ObjectStore, ObjectStoreError> {
        let bucket = checked_bucket(bucket_name.as_ref())?;
        let stream = self
            .get_stream(stream_name(bucket))
            .await
            .map_err(|error| {
                ObjectStoreError::with_source(ObjectStoreErrorKind::GetStore, error)
            })?;
        Ok(ObjectStore {
            name: bucket.to_owned(),
            stream,
        })
    }

    /// Deletes the bucket `bucket_name` with all its objects.
    pub async fn delete_object_store<T: AsRef<str>>(
        &self,
        bucket_name: T,
    ) -> Result<(), DeleteObjectStore> {
        let bucket = checked_bucket(bucket_name.as_ref())?;
        self.delete_stream(stream_name(bucket))
            .await
            .map_err(|error| {
                ObjectStoreError::with_source(ObjectStoreErrorKind::GetStore, error)
            })?;
        Ok(())
    }

    /// Changes an existing bucket's description, age and size limits, replicas, compression,
    /// placement, metadata and fast ingest (an rnats addition, as nats.go's `UpdateObjectStore`); the server
    /// refuses changes it does not allow, such as the storage type.
    pub async fn update_object_store(
        &self,
        config: Config,
    ) -> Result<ObjectStore, UpdateObjectStoreError> {
        if !is_valid_bucket_name(&config.bucket) {
            return Err(UpdateObjectStoreError::new(
                UpdateObjectStoreErrorKind::InvalidStoreName,
            ));
        }
        let wanted = config.stream_config();
        let mut current = self
            .get_stream(&wanted.name)
            .await
            .map_err(|error| {
                let kind = match error.kind() {
                    crate::stream_errors::GetStreamErrorKind::JetStream(e)
                        if e.error_code() == crate::ErrorCode::STREAM_NOT_FOUND =>
                    {
                        UpdateObjectStoreErrorKind::NotFound
                    }
                    _ => UpdateObjectStoreErrorKind::BucketUpdate,
                };
                UpdateObjectStoreError::with_source(kind, error)
            })?
            .info
            .config;
        current.description = wanted.description;
        current.max_age = wanted.max_age;
        current.max_bytes = wanted.max_bytes;
        current.storage = wanted.storage;
        current.num_replicas = wanted.num_replicas;
        current.compression = wanted.compression.or(Some(Compression::None));
        current.placement = wanted.placement;
        current.metadata = wanted.metadata;
        current.allow_batch_publish = wanted.allow_batch_publish;
        let info = self.update_stream(&current).await.map_err(|error| {
            let kind = match error.kind() {
                CreateStreamErrorKind::TimedOut => UpdateObjectStoreErrorKind::TimedOut,
                CreateStreamErrorKind::NotFound => UpdateObjectStoreErrorKind::NotFound,
                _ => UpdateObjectStoreErrorKind::BucketUpdate,
            };
            UpdateObjectStoreError::with_source(kind, error)
        })?;
        Ok(ObjectStore {
            name: config.bucket,
            stream: Stream {
                info,
                context: self.clone(),
                name: current.name,
            },
        })
    }

    /// The names of the account's buckets (an rnats addition, as nats.go's
    /// `ObjectStoreNames`).
    pub fn object_store_names(&self) -> ObjectStoreNames {
        ObjectStoreNames {
            names: StreamNames::new(self.clone(), Some("$O.*.C.>".to_owned())),
        }
    }

    /// The status of each of the account's buckets (an rnats addition, as nats.go's
    /// `ObjectStores`).
    pub fn object_stores(&self) -> ObjectStores {
        ObjectStores {
            streams: Streams::new(self.clone()),
        }
    }
}

/// The names of the account's buckets, as a [`futures_util::Stream`]; from
/// [`Context::object_store_names`].
pub struct ObjectStoreNames {
    names: StreamNames,
}

impl futures_util::Stream for ObjectStoreNames {
    type Item = Result<String, StreamsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match self.names.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(name))) => match name.strip_prefix("OBJ_") {
                    Some(bucket) => return Poll::Ready(Some(Ok(bucket.to_owned()))),
                    None => continue,
                },
                other => return other,
            }
        }
    }
}

/// The status of each of the account's buckets, as a [`futures_util::Stream`]; from
/// [`Context::object_stores`].
pub struct ObjectStores {
    streams: Streams,
}

impl futures_util::Stream for ObjectStores {
    type Item = Result<ObjectStoreStatus, StreamsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match self.streams.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(info))) => {
                    let Some(bucket) = bucket_of(&info) else {
                        continue;
                    };
                    let bucket = bucket.to_owned();
                    return Poll::Ready(Some(Ok(ObjectStoreStatus::new(bucket, info))));
                }
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// The bucket a stream holds, if it is an Object Store's: named `OBJ_<b>` with `$O.<b>.C.>`.
fn bucket_of(info: &stream::Info) -> Option<&str> {
    let bucket = info.config.name.strip_prefix("OBJ_")?;
    let chunks = format!("$O.{bucket}.C.>");
    info.config.subjects.contains(&chunks).then_some(bucket)
}

pub(crate) fn stream_name(bucket: &str) -> String {
    format!("OBJ_{bucket}")
}

pub(crate) fn checked_bucket(bucket: &str) -> Result<&str, ObjectStoreError> {
    if is_valid_bucket_name(bucket) {
        Ok(bucket)
    } else {
        Err(ObjectStoreError::new(
            ObjectStoreErrorKind::InvalidBucketName,
        ))
    }
}

/// A failed stream creation as a bucket creation error: `BucketCreate`, as async-nats
/// reports it, with the stream error (and any JetStream error behind it) as the source.
pub(crate) fn create_error(error: CreateStreamError) -> CreateObjectStoreError {
    CreateObjectStoreError::with_source(CreateObjectStoreErrorKind::BucketCreate, error)
}

/// Checks, before any request, that `config` names a valid bucket to create.
pub(crate) fn check_new_bucket(config: &Config) -> Result<(), CreateObjectStoreError> {
    if !is_valid_bucket_name(&config.bucket) {
        return Err(CreateObjectStoreError::new(
            CreateObjectStoreErrorKind::InvalidStoreName,
        ));
    }
    Ok(())
}

/// A failed get-or-create of a bucket's stream as a bucket creation error: a timeout stays
/// one, anything else is [`create_error`]'s.
pub(crate) fn get_or_create_error(error: CreateStreamError) -> CreateObjectStoreError {
    match error.kind() {
        CreateStreamErrorKind::TimedOut => {
            CreateObjectStoreError::with_source(CreateObjectStoreErrorKind::TimedOut, error)
        }
        _ => create_error(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(bucket: &str) -> Config {
        Config {
            bucket: bucket.to_owned(),
            ..Default::default()
        }
    }

    #[test]
    fn a_new_bucket_needs_a_valid_name() {
        assert!(check_new_bucket(&config("files")).is_ok());
        let invalid = check_new_bucket(&config("a.b")).unwrap_err();
        assert_eq!(invalid.kind(), CreateObjectStoreErrorKind::InvalidStoreName);
    }

    #[test]
    fn a_get_or_create_keeps_a_timeout_and_reports_the_rest_as_bucket_create() {
        let timed_out = CreateStreamError::new(CreateStreamErrorKind::TimedOut);
        let kind = get_or_create_error(timed_out).kind();
        assert_eq!(kind, CreateObjectStoreErrorKind::TimedOut);
        let refused = CreateStreamError::new(CreateStreamErrorKind::JetStreamUnavailable);
        let kind = get_or_create_error(refused).kind();
        assert_eq!(kind, CreateObjectStoreErrorKind::BucketCreate);
    }
}
