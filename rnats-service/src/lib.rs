//! The NATS Service API (ADR-32) for rnats: discoverable, monitored request/reply services.
//!
//! Users reach this crate as `rnats::service`, the path async-nats gives it, with async-nats'
//! names and call shapes. It is built on the public API of `rnats-core` alone.
//!
//! A service has a name (shared by all its instances), a semantic version and a unique id per
//! instance. Its endpoints are queue subscriptions (queue group `q` unless configured), so the
//! instances of one service share the load. Every instance also answers the monitoring
//! subjects `$SRV.PING`, `$SRV.INFO` and `$SRV.STATS`, each alone, followed by `.<name>`, or by
//! `.<name>.<id>`, with the JSON documents ADR-32 defines ([`PingResponse`], [`Info`],
//! [`Stats`]).
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use rnats_service::ServiceExt;
//!
//! # async fn run(client: rnats_core::Client) -> Result<(), rnats_core::Error> {
//! let service = client
//!     .service_builder()
//!     .description("adds numbers")
//!     .start("adder", "1.0.0")
//!     .await?;
//! let mut sum = service.group("math").endpoint("sum").await?;
//! while let Some(request) = sum.next().await {
//!     let reply = match std::str::from_utf8(&request.message.payload) {
//!         Ok(text) => Ok(text.split(',').filter_map(|n| n.trim().parse::<i64>().ok())
//!             .sum::<i64>().to_string().into()),
//!         Err(_) => Err(rnats_service::error::Error {
//!             status: "payload is not UTF-8".into(),
//!             code: 400,
//!         }),
//!     };
//!     request.respond(reply).await?;
//! }
//! # Ok(()) }
//! ```
//!
//! Finding and watching services from the client side is [`discovery`]'s job (an rnats
//! extension; async-nats has no client-side helper). With the `auth-callout` feature,
//! `auth_callout` answers a server's authorization callouts (ADR-26), another rnats extension.

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "auth-callout")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth-callout")))]
pub mod auth_callout;
pub mod discovery;
pub mod endpoint;
pub mod error;
mod request;
mod responses;
mod service;
mod validate;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use rnats_core::Client;

pub use endpoint::EndpointBuilder;
pub use error::{ServiceError, ServiceErrorKind};
pub use request::Request;
pub use responses::{Info, PingResponse, Stats};
pub use service::{Group, Service};

/// The root of every monitoring subject: `$SRV.PING`, `$SRV.INFO.<name>`, ...
pub const SERVICE_API_PREFIX: &str = "$SRV";
/// The queue group endpoints join unless the service, group or endpoint sets another.
pub const DEFAULT_QUEUE_GROUP: &str = "q";
/// The header carrying an error response's description (ADR-32).
pub const NATS_SERVICE_ERROR: &str = "Nats-Service-Error";
/// The header carrying an error response's numeric code (ADR-32).
pub const NATS_SERVICE_ERROR_CODE: &str = "Nats-Service-Error-Code";

/// The schema type of a PING reply.
pub const PING_RESPONSE_TYPE: &str = "io.nats.micro.v1.ping_response";
/// The schema type of an INFO reply.
pub const INFO_RESPONSE_TYPE: &str = "io.nats.micro.v1.info_response";
/// The schema type of a STATS reply.
pub const STATS_RESPONSE_TYPE: &str = "io.nats.micro.v1.stats_response";

/// How a service instance is described: its name, version, description, metadata, custom stats
/// and queue group. Build one directly for [`ServiceExt::add_service`], or use
/// [`ServiceExt::service_builder`].
#[derive(serde::Serialize, serde::Deserialize, Debug)]
pub struct Config {
    /// The kind of service, shared by all its instances: letters, digits, `-` and `_` only.
    pub name: String,
    /// A human-readable description.
    pub description: Option<String>,
    /// The version, a semantic version such as `1.2.0` or `2.0.0-rc.1`.
    pub version: String,
    /// Computes the `data` field of each endpoint's stats when STATS is asked.
    #[serde(skip)]
    pub stats_handler: Option<StatsHandler>,
    /// Free-form metadata, reported by PING, INFO and STATS.
    pub metadata: Option<HashMap<String, String>>,
    /// The queue group for the endpoints (default [`DEFAULT_QUEUE_GROUP`]).
    pub queue_group: Option<String>,
}

/// A function of endpoint name and its current stats giving the JSON for the stats' `data`
/// field; called once per endpoint for every STATS request.
pub struct StatsHandler(pub Box<dyn FnMut(String, endpoint::Stats) -> serde_json::Value + Send>);

impl fmt::Debug for StatsHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StatsHandler")
    }
}

/// Where a service's queue group setting comes from: set by name, or switched off so that
/// every instance receives every request (ADR-32's "queue group disabled").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QueueGroupSetting {
    /// Join this queue group.
    Named(String),
    /// Plain subscriptions: no load sharing.
    Disabled,
}

impl QueueGroupSetting {
    /// The queue group to subscribe with, if any.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            QueueGroupSetting::Named(name) => Some(name),
            QueueGroupSetting::Disabled => None,
        }
    }
}

/// Builds and starts a service; from [`ServiceExt::service_builder`].
pub struct ServiceBuilder {
    client: Client,
    description: Option<String>,
    stats_handler: Option<StatsHandler>,
    metadata: Option<HashMap<String, String>>,
    queue_group: Option<QueueGroupSetting>,
}

impl ServiceBuilder {
    fn new(client: Client) -> ServiceBuilder {
        ServiceBuilder {
            client,
            description: None,
            stats_handler: None,
            metadata: None,
            queue_group: None,
        }
    }

    /// Sets the description INFO reports.
    pub fn description<S: ToString>(mut self, description: S) -> ServiceBuilder {
        self.description = Some(description.to_string());
        self
    }

    /// Sets the function computing each endpoint's custom stats `data`.
    pub fn stats_handler<F>(mut self, handler: F) -> ServiceBuilder
    where
        F: FnMut(String, endpoint::Stats) -> serde_json::Value + Send + Sync + 'static,
    {
        self.stats_handler = Some(StatsHandler(Box::new(handler)));
        self
    }

    /// Sets the service's metadata.
    pub fn metadata(mut self, metadata: HashMap<String, String>) -> ServiceBuilder {
        self.metadata = Some(metadata);
        self
    }

    /// Sets the queue group endpoints join (default [`DEFAULT_QUEUE_GROUP`]).
    pub fn queue_group<S: ToString>(mut self, queue_group: S) -> ServiceBuilder {
        self.queue_group = Some(QueueGroupSetting::Named(queue_group.to_string()));
        self
    }

    /// Subscribes endpoints without a queue group, so every instance of the service receives
    /// every request; groups and endpoints can still set one. An rnats extension (ADR-32's
    /// "queue group disabled"; async-nats 0.51 cannot express it).
    pub fn queue_group_disabled(mut self) -> ServiceBuilder {
        self.queue_group = Some(QueueGroupSetting::Disabled);
        self
    }

    /// Checks the name and version and starts the service: it answers PING, INFO and STATS
    /// from now on.
    pub async fn start<N: ToString, V: ToString>(
        self,
        name: N,
        version: V,
    ) -> Result<Service, rnats_core::Error> {
        let config = Config {
            name: name.to_string(),
            version: version.to_string(),
            description: self.description,
            stats_handler: self.stats_handler,
            metadata: self.metadata,
            queue_group: None,
        };
        let queue_group = self
            .queue_group
            .unwrap_or_else(|| QueueGroupSetting::Named(DEFAULT_QUEUE_GROUP.to_owned()));
        Service::start(self.client, config, queue_group)
            .await
            .map_err(error::into_boxed)
    }
}

impl fmt::Debug for ServiceBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceBuilder")
            .field("description", &self.description)
            .field("metadata", &self.metadata)
            .field("queue_group", &self.queue_group)
            .finish_non_exhaustive()
    }
}

/// The three monitoring requests every service instance answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `$SRV.PING`: who is there.
    Ping,
    /// `$SRV.STATS`: request counts and timings per endpoint.
    Stats,
    /// `$SRV.INFO`: description and endpoints.
    Info,
    /// `$SRV.SCHEMA`: dropped from ADR-32; kept as a name for async-nats' sake, never answered.
    Schema,
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verb::Ping => "PING",
            Verb::Stats => "STATS",
            Verb::Info => "INFO",
            Verb::Schema => "SCHEMA",
        })
    }
}

/// Adds services to a [`Client`]: `use rnats::service::ServiceExt;`.
pub trait ServiceExt {
    /// What [`ServiceExt::add_service`] returns.
    type Output: Future<Output = Result<Service, rnats_core::Error>>;

    /// Starts a service described by `config`.
    fn add_service(&self, config: Config) -> Self::Output;

    /// A builder for a service; finish with [`ServiceBuilder::start`].
    fn service_builder(&self) -> ServiceBuilder;

    /// A client-side handle to find services and read their info and stats (rnats extension).
    fn service_discovery(&self) -> discovery::Discovery;
}

impl ServiceExt for Client {
    type Output = Pin<Box<dyn Future<Output = Result<Service, rnats_core::Error>> + Send>>;

    fn add_service(&self, mut config: Config) -> Self::Output {
        let client = self.clone();
        Box::pin(async move {
            let queue_group = QueueGroupSetting::Named(
                config
                    .queue_group
                    .take()
                    .unwrap_or_else(|| DEFAULT_QUEUE_GROUP.to_owned()),
            );
            Service::start(client, config, queue_group)
                .await
                .map_err(error::into_boxed)
        })
    }

    fn service_builder(&self) -> ServiceBuilder {
        ServiceBuilder::new(self.clone())
    }

    fn service_discovery(&self) -> discovery::Discovery {
        discovery::Discovery::new(self.clone())
    }
}
