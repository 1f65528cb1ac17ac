//! Managing consumers: the `CONSUMER.*` API calls, as methods of [`Context`] (naming the
//! stream) and of [`Stream`] (on its own stream).

use rnats_core::datetime::DateTime;
use serde::Serialize;
use serde_json::json;

use super::listing::{ConsumerNames, Consumers, PauseResponse};
use super::{Consumer, FromConsumer, Info, IntoConsumerConfig};
use crate::consumer_errors::{
    consumer_request_error, create_strict_error, info_request_error, update_error,
};
use crate::context::{
    ConsumerCreateStrictError, ConsumerError, ConsumerErrorKind, ConsumerInfoError,
    ConsumerInfoErrorKind, ConsumerUpdateError, Context,
};
use crate::features::Feature;
use crate::is_valid_name;
use crate::response::Response;
use crate::stream::{DeleteStatus, Stream};

/// What `CONSUMER.CREATE` may do: create or update (the default), only create, only update.
#[derive(Clone, Copy, Debug, Serialize)]
enum Action {
    #[serde(rename = "")]
    CreateOrUpdate,
    #[serde(rename = "create")]
    Create,
    #[serde(rename = "update")]
    Update,
}

impl Context {
    /// A handle to the consumer `consumer` of `stream`, typed as `T` (the consumer's
    /// configuration must fit `T`: a pull consumer for `pull::Config`, ...).
    pub async fn get_consumer_from_stream<T, C, S>(
        &self,
        consumer: C,
        stream: S,
    ) -> Result<Consumer<T>, ConsumerError>
    where
        T: FromConsumer + IntoConsumerConfig,
        S: AsRef<str>,
        C: AsRef<str>,
    {
        let (consumer, stream) = (consumer.as_ref(), stream.as_ref());
        if !is_valid_name(stream) {
            return Err(ConsumerError::with_source(
                ConsumerErrorKind::InvalidName,
                "invalid stream name",
            ));
        }
        if !is_valid_name(consumer) {
            return Err(ConsumerError::new(ConsumerErrorKind::InvalidName));
        }
        let subject = format!("CONSUMER.INFO.{stream}.{consumer}");
        let info: Info = match self
            .request(subject, &json!({}))
            .await
            .map_err(consumer_request_error)?
        {
            Response::Ok(info) => info,
            Response::Err { error } => return Err(error.into()),
        };
        typed_consumer(info, self.clone(), ConsumerErrorKind::InvalidConsumerType)
    }

    /// Deletes the consumer `consumer` of `stream`.
    pub async fn delete_consumer_from_stream<C: AsRef<str>, S: AsRef<str>>(
        &self,
        consumer: C,
        stream: S,
    ) -> Result<DeleteStatus, ConsumerError> {
        let (consumer, stream) = (consumer.as_ref(), stream.as_ref());
        if !is_valid_name(consumer) {
            return Err(ConsumerError::new(ConsumerErrorKind::InvalidName));
        }
        if !is_valid_name(stream) {
            return Err(ConsumerError::with_source(
                ConsumerErrorKind::Other,
                "invalid stream name",
            ));
        }
        let subject = format!("CONSUMER.DELETE.{stream}.{consumer}");
        match self
            .request(subject, &json!({}))
            .await
            .map_err(consumer_request_error)?
        {
            Response::Ok(status) => Ok(status),
            Response::Err { error } => Err(error.into()),
        }
    }

    /// Creates the consumer `config` describes on `stream`, or updates it if it exists.
    pub async fn create_consumer_on_stream<C: IntoConsumerConfig + FromConsumer, S: AsRef<str>>(
        &self,
        config: C,
        stream: S,
    ) -> Result<Consumer<C>, ConsumerError> {
        self.create_consumer_with(config, stream.as_ref(), Action::CreateOrUpdate)
            .await
    }

    /// Updates the consumer `config` describes on `stream`; fails if it does not exist.
    pub async fn update_consumer_on_stream<C: IntoConsumerConfig + FromConsumer, S: AsRef<str>>(
        &self,
        config: C,
        stream: S,
    ) -> Result<Consumer<C>, ConsumerUpdateError> {
        self.create_consumer_with(config, stream.as_ref(), Action::Update)
            .await
            .map_err(update_error)
    }

    /// Creates the consumer `config` describes on `stream`; fails if one of that name exists
    /// with another configuration.
    pub async fn create_consumer_strict_on_stream<
        C: IntoConsumerConfig + FromConsumer,
        S: AsRef<str>,
    >(
        &self,
        config: C,
        stream: S,
    ) -> Result<Consumer<C>, ConsumerCreateStrictError> {
        self.create_consumer_with(config, stream.as_ref(), Action::Create)
            .await
            .map_err(create_strict_error)
    }

    /// `CONSUMER.CREATE.<stream>[.<name>[.<filter>]]` with the action: the name and single
    /// filter go into the subject so that permissions can be scoped to them (ADR-34).
    async fn create_consumer_with<C: IntoConsumerConfig + FromConsumer>(
        &self,
        config: C,
        stream: &str,
        action: Action,
    ) -> Result<Consumer<C>, ConsumerError> {
        if !is_valid_name(stream) {
            return Err(ConsumerError::with_source(
                ConsumerErrorKind::InvalidName,
                "invalid stream name",
            ));
        }
        let config = config.into_consumer_config();
        let mut needed = crate::features::consumer_features(&config);
        if !matches!(action, Action::CreateOrUpdate) {
            needed.push(Feature::ConsumerActions);
        }
        self.require(needed)
            .map_err(|e| ConsumerError::with_source(ConsumerErrorKind::Other, e))?;
        let name = config.name.as_deref().or(config.durable_name.as_deref());
        let subject = match name {
            Some(name) if !is_valid_name(name) => {
                return Err(ConsumerError::new(ConsumerErrorKind::InvalidName));
            }
            // A wildcard filter cannot be part of a subject published to; the name alone is
            // enough for the server.
            Some(name)
                if config.filter_subject.is_empty() || has_wildcard(&config.filter_subject) =>
            {
                format!("CONSUMER.CREATE.{stream}.{name}")
            }
            Some(name) => format!("CONSUMER.CREATE.{stream}.{name}.{}", config.filter_subject),
            None => format!("CONSUMER.CREATE.{stream}"),
        };
        let request = json!({ "stream_name": stream, "config": config, "action": action });
        match self
            .request(subject, &request)
            .await
            .map_err(consumer_request_error)?
        {
            Response::Ok(info) => typed_consumer(info, self.clone(), ConsumerErrorKind::Other),
            Response::Err { error } => Err(error.into()),
        }
    }
}

fn has_wildcard(subject: &str) -> bool {
    subject.contains(['*', '>'])
}

/// The consumer `info` describes as a `Consumer<T>`, if its configuration fits `T`.
fn typed_consumer<T: FromConsumer + IntoConsumerConfig>(
    info: Info,
    context: Context,
    misfit: ConsumerErrorKind,
) -> Result<Consumer<T>, ConsumerError> {
    let config = T::try_from_consumer_config(info.config.clone())
        .map_err(|error| ConsumerError::with_source(misfit, error))?;
    Ok(Consumer::new(config, info, context))
}

impl<I> Stream<I> {
    /// Creates the consumer `config` describes on this stream, or updates it if it exists.
    pub async fn create_consumer<C: IntoConsumerConfig + FromConsumer>(
        &self,
        config: C,
    ) -> Result<Consumer<C>, ConsumerError> {
        self.context
            .create_consumer_on_stream(config, &self.name)
            .await
    }

    /// Updates the consumer `config` describes; fails if it does not exist.
    pub async fn update_consumer<C: IntoConsumerConfig + FromConsumer>(
        &self,
        config: C,
    ) -> Result<Consumer<C>, ConsumerUpdateError> {
        self.context
            .update_consumer_on_stream(config, &self.name)
            .await
    }

    /// Creates the consumer `config` describes; fails if one of that name exists with
    /// another configuration.
    pub async fn create_consumer_strict<C: IntoConsumerConfig + FromConsumer>(
        &self,
        config: C,
    ) -> Result<Consumer<C>, ConsumerCreateStrictError> {
        self.context
            .create_consumer_strict_on_stream(config, &self.name)
            .await
    }

    /// The info of the consumer `name`.
    pub async fn consumer_info<T: AsRef<str>>(&self, name: T) -> Result<Info, ConsumerInfoError> {
        let name = name.as_ref();
        if !is_valid_name(name) {
            return Err(ConsumerInfoError::new(ConsumerInfoErrorKind::InvalidName));
        }
        let subject = format!("CONSUMER.INFO.{}.{name}", self.name);
        match self
            .context
            .request(subject, &json!({}))
            .await
            .map_err(info_request_error)?
        {
            Response::Ok(info) => Ok(info),
            Response::Err { error } => Err(error.into()),
        }
    }

    /// A handle to the consumer `name`, typed as `T`.
    pub async fn get_consumer<T: FromConsumer + IntoConsumerConfig>(
        &self,
        name: &str,
    ) -> Result<Consumer<T>, rnats_core::Error> {
        let info = self.consumer_info(name).await?;
        let config = T::try_from_consumer_config(info.config.clone())?;
        Ok(Consumer::new(config, info, self.context.clone()))
    }

    /// A handle to the consumer `name`, created from `config` if it does not exist.
    pub async fn get_or_create_consumer<T: FromConsumer + IntoConsumerConfig>(
        &self,
        name: &str,
        config: T,
    ) -> Result<Consumer<T>, ConsumerError> {
        if !is_valid_name(name) {
            return Err(ConsumerError::new(ConsumerErrorKind::InvalidName));
        }
        let subject = format!("CONSUMER.INFO.{}.{name}", self.name);
        match self
            .context
            .request(subject, &json!({}))
            .await
            .map_err(consumer_request_error)?
        {
            Response::Ok(info) => typed_consumer(
                info,
                self.context.clone(),
                ConsumerErrorKind::InvalidConsumerType,
            ),
            Response::Err { error } if error.code() == 404 => self.create_consumer(config).await,
            Response::Err { error } => Err(error.into()),
        }
    }

    /// Deletes the consumer `name`.
    pub async fn delete_consumer(&self, name: &str) -> Result<DeleteStatus, ConsumerError> {
        self.context
            .delete_consumer_from_stream(name, &self.name)
            .await
    }

    /// Pauses the consumer `name` until `pause_until`: it delivers nothing until then.
    pub async fn pause_consumer(
        &self,
        name: &str,
        pause_until: DateTime,
    ) -> Result<PauseResponse, ConsumerError> {
        self.pause_request(name, Some(pause_until)).await
    }

    /// Resumes the paused consumer `name`.
    pub async fn resume_consumer(&self, name: &str) -> Result<PauseResponse, ConsumerError> {
        self.pause_request(name, None).await
    }

    /// Unpins the pinned client of the priority group `group` of the consumer `name`
    /// (`PinnedClient` policy): the next client to pull gets the pin.
    pub async fn unpin_consumer(&self, name: &str, group: &str) -> Result<(), ConsumerError> {
        if !is_valid_name(name) {
            return Err(ConsumerError::new(ConsumerErrorKind::InvalidName));
        }
        let subject = format!("CONSUMER.UNPIN.{}.{name}", self.name);
        match self
            .context
            .request(subject, &json!({ "group": group }))
            .await
            .map_err(consumer_request_error)?
        {
            Response::Ok(serde::de::IgnoredAny) => Ok(()),
            Response::Err { error } => Err(error.into()),
        }
    }

    /// The names of the stream's consumers, paged in as the stream is read.
    pub fn consumer_names(&self) -> ConsumerNames {
        ConsumerNames::new(self.context.clone(), self.name.clone())
    }

    /// The infos of the stream's consumers, paged in as the stream is read.
    pub fn consumers(&self) -> Consumers {
        Consumers::new(self.context.clone(), self.name.clone())
    }

    /// `CONSUMER.PAUSE`: a time pauses until then, none resumes.
    async fn pause_request(
        &self,
        name: &str,
        pause_until: Option<DateTime>,
    ) -> Result<PauseResponse, ConsumerError> {
        #[derive(Serialize)]
        struct PauseRequest {
            #[serde(
                with = "rnats_core::datetime::rfc3339::option",
                skip_serializing_if = "Option::is_none"
            )]
            pause_until: Option<DateTime>,
        }
        if !is_valid_name(name) {
            return Err(ConsumerError::new(ConsumerErrorKind::InvalidName));
        }
        self.context
            .require([Feature::ConsumerPause])
            .map_err(|e| ConsumerError::with_source(ConsumerErrorKind::Other, e))?;
        let subject = format!("CONSUMER.PAUSE.{}.{name}", self.name);
        match self
            .context
            .request(subject, &PauseRequest { pause_until })
            .await
            .map_err(consumer_request_error)?
        {
            Response::Ok(response) => Ok(response),
            Response::Err { error } => Err(error.into()),
        }
    }
}
