//! Client-side discovery (an rnats extension): find service instances with PING, read their
//! INFO and STATS, and call endpoints with service errors read back as errors.
//!
//! A request to `$SRV.PING` (or `.<name>`) is answered by every matching instance, so the
//! collecting calls gather replies until the timeout passes, or until
//! [`Discovery::max_replies`] have come, or at once when nobody is listening.
//!
//! ```no_run
//! use rnats_service::ServiceExt;
//! # async fn run(client: rnats_core::Client) -> Result<(), rnats_core::Error> {
//! let discovery = client.service_discovery();
//! for instance in discovery.ping(Some("adder")).await? {
//!     let stats = discovery.stats_instance(&instance.name, &instance.id).await?;
//!     for endpoint in stats.endpoints {
//!         println!("{} {}: {} requests", instance.id, endpoint.name, endpoint.requests);
//!     }
//! }
//! let sum = discovery.call("math.sum", "1,2,3".into()).await?;
//! # drop(sum); Ok(()) }
//! ```

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rnats_core::subject::ToSubject;
use rnats_core::{Client, Message, StatusCode};
use serde::de::DeserializeOwned;

use crate::{Info, PingResponse, SERVICE_API_PREFIX, Stats, Verb, error};

/// How long the collecting calls wait for replies unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// Finds services and reads their state; from
/// [`ServiceExt::service_discovery`](crate::ServiceExt::service_discovery) or
/// [`Discovery::new`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Discovery {
    client: Client,
    timeout: Duration,
    max_replies: Option<usize>,
}

impl Discovery {
    /// Discovery over `client`, waiting [`DEFAULT_TIMEOUT`] for replies.
    pub fn new(client: Client) -> Discovery {
        Discovery {
            client,
            timeout: DEFAULT_TIMEOUT,
            max_replies: None,
        }
    }

    /// How long to wait: for all replies of a collecting call, for the one reply of the
    /// others.
    pub fn timeout(mut self, timeout: Duration) -> Discovery {
        self.timeout = timeout;
        self
    }

    /// Return from a collecting call as soon as `count` replies have come (when the number of
    /// instances is known, this saves waiting out the timeout).
    pub fn max_replies(mut self, count: usize) -> Discovery {
        self.max_replies = Some(count);
        self
    }

    /// PINGs every instance, or those of service `name`.
    pub async fn ping(&self, name: Option<&str>) -> Result<Vec<PingResponse>, DiscoveryError> {
        self.collect(Verb::Ping, name).await
    }

    /// INFO of every instance, or those of service `name`.
    pub async fn info(&self, name: Option<&str>) -> Result<Vec<Info>, DiscoveryError> {
        self.collect(Verb::Info, name).await
    }

    /// STATS of every instance, or those of service `name`.
    pub async fn stats(&self, name: Option<&str>) -> Result<Vec<Stats>, DiscoveryError> {
        self.collect(Verb::Stats, name).await
    }

    /// PINGs one instance.
    pub async fn ping_instance(
        &self,
        name: &str,
        id: &str,
    ) -> Result<PingResponse, DiscoveryError> {
        self.one(Verb::Ping, name, id).await
    }

    /// INFO of one instance.
    pub async fn info_instance(&self, name: &str, id: &str) -> Result<Info, DiscoveryError> {
        self.one(Verb::Info, name, id).await
    }

    /// STATS of one instance.
    pub async fn stats_instance(&self, name: &str, id: &str) -> Result<Stats, DiscoveryError> {
        self.one(Verb::Stats, name, id).await
    }

    /// Sends a request to a service endpoint and waits (up to the timeout) for its answer. An
    /// answer carrying the service error headers is returned as an error of kind
    /// [`DiscoveryErrorKind::Service`] whose source is the [`error::Error`]
    /// (`err.downcast_source::<rnats_service::error::Error>()`).
    pub async fn call<S: ToSubject>(
        &self,
        subject: S,
        payload: Bytes,
    ) -> Result<Message, DiscoveryError> {
        let reply = self
            .client
            .request_with_timeout(subject, payload, Some(self.timeout))
            .await
            .map_err(|e| DiscoveryError::with_source(DiscoveryErrorKind::Request, e))?;
        if let Some(service_error) = reply.headers.as_ref().and_then(error::Error::from_headers) {
            return Err(DiscoveryError::with_source(
                DiscoveryErrorKind::Service,
                service_error,
            ));
        }
        Ok(reply)
    }

    async fn one<T: DeserializeOwned>(
        &self,
        verb: Verb,
        name: &str,
        id: &str,
    ) -> Result<T, DiscoveryError> {
        let subject = format!("{SERVICE_API_PREFIX}.{verb}.{name}.{id}");
        let reply = self
            .client
            .request_with_timeout(subject, Bytes::new(), Some(self.timeout))
            .await
            .map_err(|e| DiscoveryError::with_source(DiscoveryErrorKind::Request, e))?;
        serde_json::from_slice(&reply.payload)
            .map_err(|e| DiscoveryError::with_source(DiscoveryErrorKind::Decode, e))
    }

    /// Sends one request on a fresh inbox and gathers the replies. A reply that does not
    /// decode (not a service, or a newer schema) is skipped with a warning, so one odd
    /// responder does not hide the others.
    async fn collect<T: DeserializeOwned>(
        &self,
        verb: Verb,
        name: Option<&str>,
    ) -> Result<Vec<T>, DiscoveryError> {
        let subject = match name {
            Some(name) => format!("{SERVICE_API_PREFIX}.{verb}.{name}"),
            None => format!("{SERVICE_API_PREFIX}.{verb}"),
        };
        let inbox = self.client.new_inbox();
        let mut replies = self
            .client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| DiscoveryError::with_source(DiscoveryErrorKind::Subscribe, e))?;
        self.client
            .publish_with_reply(subject.clone(), inbox, Bytes::new())
            .await
            .map_err(|e| DiscoveryError::with_source(DiscoveryErrorKind::Publish, e))?;
        let deadline = rnats_core::runtime::deadline_after(self.timeout);
        let mut found = Vec::new();
        while self.max_replies.is_none_or(|max| found.len() < max) {
            let message = match rnats_core::runtime::timeout_at(deadline, replies.next()).await {
                Ok(Some(message)) => message,
                Ok(None) | Err(_) => break,
            };
            if message.status == Some(StatusCode::NO_RESPONDERS) {
                break;
            }
            match serde_json::from_slice(&message.payload) {
                Ok(value) => found.push(value),
                Err(error) => {
                    tracing::warn!(%error, %subject, "skipping a reply that is not a service's");
                }
            }
        }
        Ok(found)
    }
}

/// The kinds of [`DiscoveryError`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiscoveryErrorKind {
    /// The reply inbox could not be subscribed.
    Subscribe,
    /// The request could not be sent.
    Publish,
    /// A single-reply request failed: timed out, no responders, or not sent.
    Request,
    /// The reply was not the JSON document expected.
    Decode,
    /// The endpoint answered with a service error (the source is the
    /// [`error::Error`]).
    Service,
}

impl fmt::Display for DiscoveryErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DiscoveryErrorKind::Subscribe => "failed to subscribe the reply inbox",
            DiscoveryErrorKind::Publish => "failed to send the request",
            DiscoveryErrorKind::Request => "request failed",
            DiscoveryErrorKind::Decode => "unexpected reply",
            DiscoveryErrorKind::Service => "the service answered with an error",
        })
    }
}

/// Why a discovery call or a service call failed.
pub type DiscoveryError = rnats_core::error::Error<DiscoveryErrorKind>;
