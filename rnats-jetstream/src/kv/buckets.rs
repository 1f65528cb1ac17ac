//! Managing buckets from a [`Context`]: create, get, update, delete and list them.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures_util::{Stream, StreamExt};
use serde::Serialize;

use super::Store;
use super::bucket::Status;
use super::config::{Config, ConfigError, MAX_HISTORY};
use super::errors::{
    CreateKeyValueError, CreateKeyValueErrorKind, KeyValueError, KeyValueErrorKind, ServerRefusal,
    UpdateKeyValueError, UpdateKeyValueErrorKind,
};
use super::name::BucketName;
use crate::context::{Context, RequestError, RequestErrorKind};
use crate::errors::ErrorCode;
use crate::paging::Pages;
use crate::stream::list::StreamNames;
use crate::stream::{DeleteStatus, Info, Stream as JsStream};
use crate::stream_errors::{CreateStreamErrorKind, StreamsError};

// Buckets are listed as the streams named `KV_*`, not by the subjects `$KV.*.>`: a mirror
// bucket's stream has no subjects of its own, and a subject filter would leave it out.

#[cfg_attr(docsrs, doc(cfg(feature = "kv")))]
impl Context {
    /// Creates the bucket `config` describes (its stream `KV_<bucket>`, ADR-8). Creating a
    /// bucket that exists with the same config succeeds.
    ///
    /// ```no_run
    /// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::kv;
    /// let kv = jetstream
    ///     .create_key_value(kv::Config {
    ///         bucket: "profiles".to_string(),
    ///         history: 5,
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// kv.put("sue.color", "blue".into()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create_key_value(&self, config: Config) -> Result<Store, CreateKeyValueError> {
        let stream_config = self.bucket_stream_config(&config).await?;
        let stream = self.create_stream(stream_config).await.map_err(|error| {
            let kind = match error.kind() {
                CreateStreamErrorKind::TimedOut => CreateKeyValueErrorKind::TimedOut,
                _ => CreateKeyValueErrorKind::BucketCreate,
            };
            CreateKeyValueError::with_source(kind, error)
        })?;
        Ok(Store::new(config.bucket, stream))
    }

    /// Changes an existing bucket's config; a missing bucket fails with
    /// [`UpdateKeyValueErrorKind::NotFound`].
    pub async fn update_key_value(&self, config: Config) -> Result<Store, UpdateKeyValueError> {
        let stream_config = self
            .bucket_stream_config(&config)
            .await
            .map_err(update_error_of_create)?;
        let name = stream_config.name.clone();
        let info = self.update_stream(&stream_config).await.map_err(|error| {
            let kind = match error.kind() {
                CreateStreamErrorKind::NotFound => UpdateKeyValueErrorKind::NotFound,
                CreateStreamErrorKind::TimedOut => UpdateKeyValueErrorKind::TimedOut,
                _ => UpdateKeyValueErrorKind::BucketUpdate,
            };
            UpdateKeyValueError::with_source(kind, error)
        })?;
        Ok(Store::new(config.bucket, self.stream_handle(name, info)))
    }

    /// Updates the bucket, creating it when it does not exist.
    pub async fn create_or_update_key_value(
        &self,
        config: Config,
    ) -> Result<Store, CreateKeyValueError> {
        let stream_config = self.bucket_stream_config(&config).await?;
        let name = stream_config.name.clone();
        let info = self
            .create_or_update_stream(stream_config)
            .await
            .map_err(|error| {
                let kind = match error.kind() {
                    CreateStreamErrorKind::TimedOut => CreateKeyValueErrorKind::TimedOut,
                    _ => CreateKeyValueErrorKind::JetStream,
                };
                CreateKeyValueError::with_source(kind, error)
            })?;
        Ok(Store::new(config.bucket, self.stream_handle(name, info)))
    }

    /// The bucket `config.bucket` if it exists, its config left as it is; otherwise a new one
    /// with `config`. Callers racing to make the same bucket all get it: the one the server
    /// creates first, whatever config each asked for.
    ///
    /// A stream `KV_<bucket>` that is not a bucket fails with
    /// [`CreateKeyValueErrorKind::InvalidStoreName`], as with [`Context::get_key_value`].
    ///
    /// ```no_run
    /// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::kv;
    /// let kv = jetstream
    ///     .get_or_create_key_value(kv::Config {
    ///         bucket: "sessions".to_string(),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// kv.put("sue", "online".into()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn get_or_create_key_value(
        &self,
        config: Config,
    ) -> Result<Store, CreateKeyValueError> {
        // A config that could never create the bucket is refused even when the bucket exists.
        if config.history > MAX_HISTORY {
            return Err(CreateKeyValueError::new(
                CreateKeyValueErrorKind::TooLongHistory,
            ));
        }
        match self.get_key_value(config.bucket.as_str()).await {
            Ok(store) => return Ok(store),
            Err(error) if error.error_code() == Some(ErrorCode::STREAM_NOT_FOUND) => {}
            Err(error) => return Err(create_error_of_get(error)),
        }
        let bucket = config.bucket.clone();
        // Callers racing with the same config all succeed here (a create of an identical
        // stream is no error, as for `get_or_create_stream`); one that asked for another
        // config is refused as the name exists, and takes the bucket that won.
        match self.create_key_value(config).await {
            Err(error) if error.error_code() == Some(ErrorCode::STREAM_NAME_EXIST) => self
                .get_key_value(bucket)
                .await
                .map_err(create_error_of_get),
            result => result,
        }
    }

    /// The bucket `bucket`. A stream that is not a bucket (no per-key history) fails with
    /// [`KeyValueErrorKind::InvalidStoreName`]; a missing one with
    /// [`KeyValueErrorKind::GetBucket`], whose source has the server's `STREAM_NOT_FOUND`.
    pub async fn get_key_value<T: Into<String>>(&self, bucket: T) -> Result<Store, KeyValueError> {
        let Ok(bucket) = BucketName::try_from(bucket.into()) else {
            return Err(KeyValueError::new(KeyValueErrorKind::InvalidStoreName));
        };
        let stream = self
            .get_stream(bucket.stream_name())
            .await
            .map_err(|e| KeyValueError::with_source(KeyValueErrorKind::GetBucket, e))?;
        if stream.info.config.max_messages_per_subject < 1 {
            return Err(KeyValueError::new(KeyValueErrorKind::InvalidStoreName));
        }
        Ok(Store::new(bucket.into(), stream))
    }

    /// The same as [`Context::get_key_value`] (nats.go's name, `KeyValue`).
    pub async fn key_value<T: Into<String>>(&self, bucket: T) -> Result<Store, KeyValueError> {
        self.get_key_value(bucket).await
    }

    /// Deletes the bucket `bucket` with all its keys.
    pub async fn delete_key_value<T: AsRef<str>>(
        &self,
        bucket: T,
    ) -> Result<DeleteStatus, KeyValueError> {
        let Ok(bucket) = BucketName::try_from(bucket.as_ref()) else {
            return Err(KeyValueError::new(KeyValueErrorKind::InvalidStoreName));
        };
        self.delete_stream(bucket.stream_name())
            .await
            .map_err(|e| KeyValueError::with_source(KeyValueErrorKind::JetStream, e))
    }

    /// The names of the account's buckets (mirrors included), fetched page by page as they
    /// are read.
    pub fn key_value_store_names(&self) -> KeyValueNames {
        KeyValueNames {
            names: StreamNames::new(self.clone(), None),
        }
    }

    /// The statuses of the account's buckets (mirrors included), fetched page by page as
    /// they are read.
    pub fn key_value_stores(&self) -> KeyValueStores {
        #[derive(Serialize, Clone)]
        struct Unfiltered {}
        KeyValueStores {
            infos: Pages::new(self.clone(), "STREAM.LIST".to_owned(), Unfiltered {}),
        }
    }

    /// The stream config of `config`, checked, for the server's API level.
    async fn bucket_stream_config(
        &self,
        config: &Config,
    ) -> Result<crate::stream::Config, CreateKeyValueError> {
        check_bucket_name(config)?;
        // Only limit markers depend on the server (API level 1, nats-server 2.11).
        let api_level = match config.limit_markers {
            Some(_) => {
                self.query_account()
                    .await
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

    fn stream_handle(&self, name: String, info: Info) -> JsStream {
        JsStream {
            info,
            context: self.clone(),
            name,
        }
    }
}

/// A config error of a create as the same error of an update.
pub(crate) fn update_error_of_create(error: CreateKeyValueError) -> UpdateKeyValueError {
    let kind = match error.kind() {
        CreateKeyValueErrorKind::InvalidStoreName => UpdateKeyValueErrorKind::InvalidStoreName,
        CreateKeyValueErrorKind::TooLongHistory => UpdateKeyValueErrorKind::TooLongHistory,
        CreateKeyValueErrorKind::LimitMarkersNotSupported => {
            UpdateKeyValueErrorKind::LimitMarkersNotSupported
        }
        CreateKeyValueErrorKind::TimedOut => UpdateKeyValueErrorKind::TimedOut,
        CreateKeyValueErrorKind::JetStream | CreateKeyValueErrorKind::BucketCreate => {
            UpdateKeyValueErrorKind::JetStream
        }
    };
    UpdateKeyValueError::with_source(kind, error)
}

/// A failed get of a bucket as the same failure of a get-or-create.
pub(crate) fn create_error_of_get(error: KeyValueError) -> CreateKeyValueError {
    let timed_out = error
        .downcast_source::<RequestError>()
        .is_some_and(|request| request.kind() == RequestErrorKind::TimedOut);
    let kind = match error.kind() {
        KeyValueErrorKind::InvalidStoreName => CreateKeyValueErrorKind::InvalidStoreName,
        _ if timed_out => CreateKeyValueErrorKind::TimedOut,
        KeyValueErrorKind::GetBucket | KeyValueErrorKind::JetStream => {
            CreateKeyValueErrorKind::JetStream
        }
    };
    CreateKeyValueError::with_source(kind, error)
}

/// The names of the account's buckets; from [`Context::key_value_store_names`].
pub struct KeyValueNames {
    names: StreamNames,
}

impl Stream for KeyValueNames {
    type Item = Result<String, StreamsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match std::task::ready!(self.names.poll_next_unpin(cx)) {
                Some(Ok(name)) => match name.strip_prefix("KV_") {
                    Some(bucket) => return Poll::Ready(Some(Ok(bucket.to_owned()))),
                    None => continue,
                },
                other => return Poll::Ready(other),
            }
        }
    }
}

/// The statuses of the account's buckets; from [`Context::key_value_stores`].
pub struct KeyValueStores {
    infos: Pages<Info>,
}

impl Stream for KeyValueStores {
    type Item = Result<Status, StreamsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match std::task::ready!(self.infos.poll_next_item(cx)) {
                Some(Ok(info)) => {
                    let Some(bucket) = info.config.name.strip_prefix("KV_") else {
                        continue;
                    };
                    let bucket = bucket.to_owned();
                    return Poll::Ready(Some(Ok(Status { info, bucket })));
                }
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                None => return Poll::Ready(None),
            }
        }
    }
}

/// A bucket name that is not one (ADR-8), refused before anything is asked of the server.
pub(crate) fn check_bucket_name(config: &Config) -> Result<(), CreateKeyValueError> {
    match BucketName::try_from(config.bucket.as_str()) {
        Ok(_) => Ok(()),
        Err(_) => Err(CreateKeyValueError::new(
            CreateKeyValueErrorKind::InvalidStoreName,
        )),
    }
}

/// A bucket config the server cannot take, as a create failure.
pub(crate) fn create_error_of_config(error: ConfigError) -> CreateKeyValueError {
    match error {
        ConfigError::TooLongHistory => {
            CreateKeyValueError::new(CreateKeyValueErrorKind::TooLongHistory)
        }
        ConfigError::LimitMarkersNotSupported => {
            CreateKeyValueError::new(CreateKeyValueErrorKind::LimitMarkersNotSupported)
        }
    }
}
