//! Consumers: their configuration, and the pull, push and ordered consumer handles.
//!
//! A [`Consumer<T>`] is a consumer on the server with the configuration type `T` it was made
//! with: [`pull::Config`] (a [`PullConsumer`]), [`push::Config`] (a [`PushConsumer`]), or the
//! ordered variants. Managing consumers (create, get, delete, list) goes through
//! [`Stream`](crate::stream::Stream) or [`Context`].

mod cluster;
mod config;
mod heartbeat;
mod listing;
mod manage;
pub mod pull;
pub mod push;
pub(crate) mod recreate;
mod reset;
pub(crate) mod stale;

use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::json;

pub use self::config::{
    AckPolicy, Config, DeliverPolicy, Info, PriorityGroupState, PriorityPolicy, ReplayPolicy,
    SequenceInfo,
};
pub use self::listing::{ConsumerNames, Consumers, PauseResponse};
pub use self::reset::{ConsumerResetError, ConsumerResetErrorKind, ConsumerResetResponse};
use crate::consumer_errors::info_request_error;
use crate::context::{ConsumerInfoError, Context};
use crate::response::Response;

/// A configuration that becomes a [`Config`] for `CONSUMER.CREATE`.
pub trait IntoConsumerConfig {
    /// The full configuration.
    fn into_consumer_config(self) -> Config;
}

/// A configuration type a server-side [`Config`] converts into, if it fits (a pull config
/// from a consumer without a deliver subject, ...).
pub trait FromConsumer {
    /// The typed configuration, or why `config` is not one.
    fn try_from_consumer_config(config: Config) -> Result<Self, rnats_core::Error>
    where
        Self: Sized;
}

/// A consumer on the server, handled through its configuration type `T`.
#[derive(Clone, Debug)]
pub struct Consumer<T: IntoConsumerConfig> {
    pub(crate) context: Context,
    pub(crate) config: T,
    pub(crate) info: Info,
    /// The pin id the server gave this handle's one-shot pulls (ADR-42 `PinnedClient`),
    /// shared by its clones so that consecutive fetches keep the pin.
    pub(crate) pin: Arc<Mutex<Option<String>>>,
}

/// A pull consumer.
pub type PullConsumer = Consumer<pull::Config>;
/// A push consumer.
pub type PushConsumer = Consumer<push::Config>;
/// An ordered pull consumer (ADR-17).
pub type OrderedPullConsumer = Consumer<pull::OrderedConfig>;
/// An ordered push consumer (ADR-17).
pub type OrderedPushConsumer = Consumer<push::OrderedConfig>;

impl<T: IntoConsumerConfig> Consumer<T> {
    /// A handle for the consumer `info` describes.
    pub fn new(config: T, info: Info, context: Context) -> Consumer<T> {
        Consumer {
            context,
            config,
            info,
            pin: Arc::default(),
        }
    }

    /// Fetches the consumer's info from the server, keeps it as the cached info, and
    /// returns it. A message's [`info`](crate::Message::info) often tells enough without a
    /// server call.
    pub async fn info(&mut self) -> Result<&Info, ConsumerInfoError> {
        self.info = self.get_info().await?;
        Ok(&self.info)
    }

    /// Fetches the consumer's info from the server, leaving the cached info alone.
    pub async fn get_info(&self) -> Result<Info, ConsumerInfoError> {
        let subject = format!("CONSUMER.INFO.{}.{}", self.info.stream_name, self.info.name);
        let response = self
            .context
            .request(subject, &json!({}))
            .await
            .map_err(info_request_error)?;
        match response {
            Response::Ok(info) => Ok(info),
            Response::Err { error } => Err(error.into()),
        }
    }

    /// The info as of creation, retrieval or the last [`info`](Consumer::info) call.
    pub fn cached_info(&self) -> &Info {
        &self.info
    }
}

/// The kinds of [`StreamError`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StreamErrorKind {
    /// No answer in time.
    TimedOut,
    /// Anything else; the source says what.
    Other,
}

impl fmt::Display for StreamErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StreamErrorKind::TimedOut => "timed out",
            StreamErrorKind::Other => "failed",
        })
    }
}

/// Why a consumer's message stream could not start.
pub type StreamError = rnats_core::error::Error<StreamErrorKind>;
