//! Managing a clustered stream's RAFT group: asking its leader to step down (optionally
//! towards a preferred server), and removing a peer so that the meta leader places a new
//! replica elsewhere. Consumers step down through the same request and errors
//! (`consumer/cluster.rs`); so does the meta group itself, from the system account, whose
//! members are removed for good the same way.

use std::fmt;

use rnats_core::error::Error;
use serde::Serialize;
use serde::de::IgnoredAny;

use super::Stream;
use super::config::{Placement, is_default};
use crate::context::{Context, RequestErrorKind};
use crate::errors::ErrorCode;
use crate::features::Feature;
use crate::is_valid_name;
use crate::response::Response;

/// Where a step-down should move a stream's or consumer's leader (nats-server 2.11+): to the
/// server named `preferred`, or to any other replica in `cluster` carrying all of `tags`.
///
/// This is the step-down request's own placement. A stream's [`Placement`] has no
/// `preferred`: the server refuses that field in stream and consumer configurations.
///
/// ```
/// use rnats_jetstream::stream::LeaderPlacement;
/// let placement = LeaderPlacement::preferred("n2");
/// assert_eq!(placement.preferred.as_deref(), Some("n2"));
/// ```
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct LeaderPlacement {
    /// A replica in this cluster.
    #[serde(default, skip_serializing_if = "is_default")]
    pub cluster: Option<String>,
    /// A replica on a server with all these tags.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tags: Vec<String>,
    /// The server (by name) to lead next; it must hold a replica and not lead already.
    #[serde(default, skip_serializing_if = "is_default")]
    pub preferred: Option<String>,
}

impl LeaderPlacement {
    /// The server named `server` should lead next.
    pub fn preferred(server: impl Into<String>) -> LeaderPlacement {
        LeaderPlacement {
            preferred: Some(server.into()),
            ..Default::default()
        }
    }
}

impl From<Placement> for LeaderPlacement {
    fn from(placement: Placement) -> LeaderPlacement {
        LeaderPlacement {
            cluster: placement.cluster,
            tags: placement.tags,
            preferred: None,
        }
    }
}

/// The kinds of [`StepDownError`] (and [`RemovePeerError`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum StepDownErrorKind {
    /// The stream or consumer name cannot name one.
    InvalidName,
    /// The server runs JetStream without clustering: there is no group to change.
    NotClustered,
    /// The stream or consumer does not exist.
    NotFound,
    /// The peer to remove is not one of the stream's replicas.
    PeerNotMember,
    /// The meta group is the system account's to manage, and the server said (in answer
    /// to CONNECT, nats-server 2.12+) that the connection is in another account. An older
    /// server does not say, and ignores another account's request: it times out.
    NotSystemAccount,
    /// The connected server is too old for the request (a [`LeaderPlacement`] needs 2.11);
    /// the source is the [`Unsupported`](crate::Unsupported).
    Unsupported,
    /// No answer within the timeout.
    TimedOut,
    /// The request could not be made, or nobody answered it.
    Request,
    /// Another refusal, with the server's error (e.g. the preferred server holds no
    /// replica or leads already: `ErrorCode::CLUSTER_NO_PEERS`).
    JetStream(crate::Error),
}

impl fmt::Display for StepDownErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidName => f.write_str("invalid stream or consumer name"),
            Self::NotClustered => f.write_str("JetStream is not clustered"),
            Self::NotFound => f.write_str("stream or consumer not found"),
            Self::PeerNotMember => f.write_str("the peer is not a replica of the stream"),
            Self::NotSystemAccount => f.write_str("only the system account may ask"),
            Self::Unsupported => f.write_str("the server does not support the request"),
            Self::TimedOut => f.write_str("timed out"),
            Self::Request => f.write_str("request failed"),
            Self::JetStream(error) => write!(f, "JetStream error: {error}"),
        }
    }
}

/// Why a stream or consumer leader step-down failed.
pub type StepDownError = Error<StepDownErrorKind>;
/// Why removing a peer from a stream failed.
pub type RemovePeerError = StepDownError;
/// The kinds of [`RemovePeerError`].
pub type RemovePeerErrorKind = StepDownErrorKind;

/// The body of a step-down: none without a placement, which the server reads as "any
/// other replica".
#[derive(Serialize)]
struct StepDownRequest<'a> {
    placement: &'a LeaderPlacement,
}

/// Sends the step-down request to `subject` (relative to the API prefix).
pub(crate) async fn step_down(
    context: &Context,
    subject: String,
    placement: Option<&LeaderPlacement>,
) -> Result<(), StepDownError> {
    match placement {
        Some(placement) => {
            // An older server ignores the body and lets any replica win the election.
            context
                .require([Feature::LeaderPlacement])
                .map_err(|e| StepDownError::with_source(StepDownErrorKind::Unsupported, e))?;
            cluster_request(context, subject, &StepDownRequest { placement }).await
        }
        None => cluster_request(context, subject, &()).await,
    }
}

/// Sends a group change and reads the reply: `{"success": true}` or the API's error. The
/// server never answers an unsuccessful change without an error, so the flag is not read.
async fn cluster_request<T: Serialize + ?Sized>(
    context: &Context,
    subject: String,
    body: &T,
) -> Result<(), StepDownError> {
    let response: Response<IgnoredAny> = context.request(subject, body).await.map_err(|e| {
        let kind = match e.kind() {
            RequestErrorKind::TimedOut => StepDownErrorKind::TimedOut,
            _ => StepDownErrorKind::Request,
        };
        StepDownError::with_source(kind, e)
    })?;
    response.into_result().map(drop).map_err(|error| {
        let kind = match error.error_code() {
            ErrorCode::CLUSTER_REQUIRED => StepDownErrorKind::NotClustered,
            ErrorCode::STREAM_NOT_FOUND | ErrorCode::CONSUMER_NOT_FOUND => {
                StepDownErrorKind::NotFound
            }
            ErrorCode::CLUSTER_PEER_NOT_MEMBER => StepDownErrorKind::PeerNotMember,
            _ => StepDownErrorKind::JetStream(error.clone()),
        };
        StepDownError::with_source(kind, error)
    })
}

/// `name` if it can name a stream or consumer.
pub(crate) fn checked_name(name: &str) -> Result<&str, StepDownError> {
    if is_valid_name(name) {
        Ok(name)
    } else {
        Err(StepDownError::new(StepDownErrorKind::InvalidName))
    }
}

impl Context {
    /// Asks the leader of the clustered stream `stream` to step down, so that another
    /// replica leads: the one `placement` prefers, or any with none. Returns once the leader
    /// has stepped down; the new one is elected right after (its name shows in the stream's
    /// info). A server without clustering answers [`StepDownErrorKind::NotClustered`].
    ///
    /// ```no_run
    /// # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
    /// use rnats_jetstream::stream::LeaderPlacement;
    /// jetstream
    ///     .step_down_stream_leader("ORDERS", Some(LeaderPlacement::preferred("n2")))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn step_down_stream_leader<S: AsRef<str>>(
        &self,
        stream: S,
        placement: Option<LeaderPlacement>,
    ) -> Result<(), StepDownError> {
        let stream = checked_name(stream.as_ref())?;
        let subject = format!("STREAM.LEADER.STEPDOWN.{stream}");
        step_down(self, subject, placement.as_ref()).await
    }

    /// Removes the server `peer` (by name) from the clustered stream `stream`'s replicas; the
    /// meta leader then places a new replica on another server, if the cluster has one, and
    /// it catches up from the others. The stream and its consumers lose that server's copy.
    pub async fn remove_stream_peer<S: AsRef<str>, P: AsRef<str>>(
        &self,
        stream: S,
        peer: P,
    ) -> Result<(), RemovePeerError> {
        #[derive(Serialize)]
        struct RemovePeerRequest<'a> {
            peer: &'a str,
        }
        let stream = checked_name(stream.as_ref())?;
        let subject = format!("STREAM.PEER.REMOVE.{stream}");
        let request = RemovePeerRequest {
            peer: peer.as_ref(),
        };
        cluster_request(self, subject, &request).await
    }
}

impl Context {
    /// Asks the JetStream meta group's leader (the server that places streams and
    /// consumers) to step down, so that another server leads it: the one `placement`
    /// prefers, or any with none (natscli's `server cluster step-down`). Only the system
    /// account may ask ([`StepDownErrorKind::NotSystemAccount`]).
    pub async fn step_down_meta_leader(
        &self,
        placement: Option<LeaderPlacement>,
    ) -> Result<(), StepDownError> {
        self.require_system_account()?;
        step_down(self, "META.LEADER.STEPDOWN".to_owned(), placement.as_ref()).await
    }

    /// Removes the server named `server` from the JetStream meta group for good (natscli's
    /// `server cluster peer-remove`): for a server that is gone and will not come back, so
    /// that its replicas are placed elsewhere. A server that comes back under the same name
    /// is not taken in again. Only the system account may ask
    /// ([`StepDownErrorKind::NotSystemAccount`]).
    pub async fn remove_server<S: AsRef<str>>(&self, server: S) -> Result<(), RemovePeerError> {
        self.require_system_account()?;
        #[derive(Serialize)]
        struct RemoveServerRequest<'a> {
            peer: &'a str,
        }
        let request = RemoveServerRequest {
            peer: server.as_ref(),
        };
        cluster_request(self, "SERVER.REMOVE".to_owned(), &request).await
    }

    /// Refuses at once when the server said the connection is not in the system account:
    /// nats-server ignores the meta group's requests from any other, so they would only
    /// time out.
    fn require_system_account(&self) -> Result<(), StepDownError> {
        let info = self.client.server_info();
        if info.connect_info && !info.is_system_account {
            return Err(StepDownError::new(StepDownErrorKind::NotSystemAccount));
        }
        Ok(())
    }
}

impl<I> Stream<I> {
    /// Asks this stream's leader to step down (see [`Context::step_down_stream_leader`]).
    pub async fn step_down_leader(
        &self,
        placement: Option<LeaderPlacement>,
    ) -> Result<(), StepDownError> {
        self.context
            .step_down_stream_leader(&self.name, placement)
            .await
    }

    /// Removes the server `peer` from this stream's replicas (see
    /// [`Context::remove_stream_peer`]).
    pub async fn remove_peer<P: AsRef<str>>(&self, peer: P) -> Result<(), RemovePeerError> {
        self.context.remove_stream_peer(&self.name, peer).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_down_body_names_only_what_is_set() {
        let placement = LeaderPlacement::preferred("n2");
        let body = serde_json::to_string(&StepDownRequest {
            placement: &placement,
        })
        .unwrap();
        assert_eq!(body, r#"{"placement":{"preferred":"n2"}}"#);
        let placement = LeaderPlacement::from(Placement {
            cluster: Some("east".into()),
            tags: vec!["ssd".into()],
        });
        let body = serde_json::to_string(&placement).unwrap();
        assert_eq!(body, r#"{"cluster":"east","tags":["ssd"]}"#);
    }
}
