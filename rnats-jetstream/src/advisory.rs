//! JetStream's advisories and metrics, typed: what the servers publish about streams,
//! consumers and themselves on `$JS.EVENT.ADVISORY.>` and `$JS.EVENT.METRIC.>` (an rnats
//! extension; async-nats leaves them as raw JSON).
//!
//! Each event is JSON with a `type` (`io.nats.jetstream.advisory.v1.max_deliver`, ...), an
//! `id` and a `timestamp`; [`Advisory::from_json`] reads it into the variant of its type, and
//! [`Context::advisories`] subscribes and reads them as they come. An event of a type this
//! version does not know is [`Advisory::Unknown`] with its JSON, never an error, and fields a
//! newer server adds are ignored, so a newer server never breaks a reader.
//!
//! ```no_run
//! use futures_util::StreamExt;
//! use rnats_jetstream::advisory::{self, Advisory};
//! # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
//! // Messages that ran out of deliveries on any consumer of ORDERS.
//! let mut events = jetstream
//!     .advisories_on(advisory::subjects::max_deliveries("ORDERS", "*"))
//!     .await?;
//! while let Some(event) = events.next().await {
//!     if let Advisory::MaxDeliveries(gave_up) = event? {
//!         println!("{} gave up on message {}", gave_up.consumer, gave_up.stream_seq);
//!     }
//! }
//! # Ok(()) }
//! ```

use std::fmt;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use rnats_core::datetime::DateTime;
use rnats_core::error::Error;
use rnats_core::{Message, Subscriber, ToSubject};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::context::Context;
use crate::stream::{PeerInfo, State};

/// Every JetStream advisory and metric of an account.
pub const ALL: &str = "$JS.EVENT.>";

/// The subjects of the events with a stream or consumer in them, for [`Context::advisories_on`]
/// (`*` in place of a name takes every one; nats-server's subject names).
pub mod subjects {
    /// A message that reached its consumer's `max_deliver` (one per message).
    pub fn max_deliveries(stream: &str, consumer: &str) -> String {
        format!("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{stream}.{consumer}")
    }

    /// A message its receiver declined (`nak`).
    pub fn nak(stream: &str, consumer: &str) -> String {
        format!("$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.{stream}.{consumer}")
    }

    /// A message its receiver terminated (`term`).
    pub fn terminated(stream: &str, consumer: &str) -> String {
        format!("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.{stream}.{consumer}")
    }

    /// A sampled acknowledgement (a consumer with a `sample_frequency`).
    pub fn ack_samples(stream: &str, consumer: &str) -> String {
        format!("$JS.EVENT.METRIC.CONSUMER.ACK.{stream}.{consumer}")
    }

    /// A stream created, updated or deleted.
    pub fn stream_actions(stream: &str) -> String {
        format!("$JS.EVENT.ADVISORY.STREAM.*.{stream}")
    }

    /// A consumer created or deleted.
    pub fn consumer_actions(stream: &str, consumer: &str) -> String {
        format!("$JS.EVENT.ADVISORY.CONSUMER.*.{stream}.{consumer}")
    }

    /// Every advisory about the consumers of `stream`.
    pub fn consumers_of(stream: &str) -> String {
        format!("$JS.EVENT.ADVISORY.CONSUMER.*.{stream}.*")
    }

    /// Every JetStream API request of the account, with its answer (an audit trail).
    pub const API_AUDIT: &str = "$JS.EVENT.ADVISORY.API";
}

/// What every event carries.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EventHeader {
    /// The event's type, e.g. `io.nats.jetstream.advisory.v1.nak`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A unique id of the event.
    pub id: String,
    /// When the server made it.
    #[serde(with = "rnats_core::datetime::rfc3339")]
    pub timestamp: DateTime,
}

/// A JetStream event, by its type.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Advisory {
    /// A JetStream API request and the server's answer (`api_audit`).
    ApiAudit(ApiAudit),
    /// A stream created, updated or deleted (`stream_action`).
    StreamAction(StreamAction),
    /// A consumer created, updated or deleted (`consumer_action`).
    ConsumerAction(ConsumerAction),
    /// A consumer paused or resumed (`consumer_pause`, nats-server 2.11+).
    ConsumerPause(ConsumerPause),
    /// A sampled acknowledgement (`consumer_ack`, a metric).
    ConsumerAck(ConsumerAck),
    /// A message that reached its consumer's `max_deliver` (`max_deliver`).
    MaxDeliveries(MaxDeliveries),
    /// A message declined with a `nak` (`nak`).
    Nak(Nak),
    /// A message terminated with `term` (`terminated`).
    Terminated(Terminated),
    /// A snapshot of a stream started (`snapshot_create`).
    SnapshotCreate(SnapshotCreate),
    /// A snapshot of a stream ended (`snapshot_complete`).
    SnapshotComplete(SnapshotComplete),
    /// A restore of a stream started (`restore_create`).
    RestoreCreate(RestoreCreate),
    /// A restore of a stream ended (`restore_complete`).
    RestoreComplete(RestoreComplete),
    /// The JetStream meta group of a domain elected a leader (`domain_leader_elected`).
    DomainLeaderElected(DomainLeaderElected),
    /// A stream's RAFT group elected a leader (`stream_leader_elected`).
    StreamLeaderElected(StreamLeaderElected),
    /// A stream's RAFT group lost its quorum (`stream_quorum_lost`).
    StreamQuorumLost(StreamQuorumLost),
    /// An atomic batch publish the stream gave up on (`stream_batch_abandoned`, 2.12+).
    StreamBatchAbandoned(StreamBatchAbandoned),
    /// A consumer's RAFT group elected a leader (`consumer_leader_elected`).
    ConsumerLeaderElected(ConsumerLeaderElected),
    /// A consumer's RAFT group lost its quorum (`consumer_quorum_lost`).
    ConsumerQuorumLost(ConsumerQuorumLost),
    /// A pinned client chosen for a priority group (`consumer_group_pinned`, 2.11+).
    ConsumerGroupPinned(ConsumerGroupPinned),
    /// A priority group's pin let go (`consumer_group_unpinned`, 2.11+).
    ConsumerGroupUnpinned(ConsumerGroupUnpinned),
    /// A server ran out of storage (`server_out_of_space`).
    ServerOutOfSpace(ServerOutOfSpace),
    /// A server removed from the JetStream meta group (`server_removed`).
    ServerRemoved(ServerRemoved),
    /// JetStream API requests dropped because the API queue was full (`api_limit_reached`).
    ApiLimitReached(ApiLimitReached),
    /// A type this version does not know: its `type` and the whole event.
    Unknown {
        /// The event's `type`.
        kind: String,
        /// The event as sent.
        event: serde_json::Value,
    },
}

/// The prefix of every JetStream advisory type.
const ADVISORY_TYPE: &str = "io.nats.jetstream.advisory.v1.";
/// The prefix of every JetStream metric type.
const METRIC_TYPE: &str = "io.nats.jetstream.metric.v1.";

impl Advisory {
    /// Reads an event from its JSON. Fails only on JSON that is not an event (no `type`) or
    /// an event of a known type whose fields do not read as that type.
    pub fn from_json(payload: &[u8]) -> Result<Advisory, AdvisoryError> {
        #[derive(Deserialize)]
        struct Typed {
            #[serde(rename = "type")]
            kind: String,
        }
        let typed: Typed = serde_json::from_slice(payload)
            .map_err(|e| AdvisoryError::with_source(AdvisoryErrorKind::Malformed, e))?;
        let name = typed
            .kind
            .strip_prefix(ADVISORY_TYPE)
            .or_else(|| typed.kind.strip_prefix(METRIC_TYPE));
        fn read<T: DeserializeOwned>(
            payload: &[u8],
            variant: fn(T) -> Advisory,
        ) -> Result<Advisory, AdvisoryError> {
            serde_json::from_slice(payload)
                .map(variant)
                .map_err(|e| AdvisoryError::with_source(AdvisoryErrorKind::Malformed, e))
        }
        match name {
            Some("api_audit") => read(payload, Advisory::ApiAudit),
            Some("stream_action") => read(payload, Advisory::StreamAction),
            Some("consumer_action") => read(payload, Advisory::ConsumerAction),
            Some("consumer_pause") => read(payload, Advisory::ConsumerPause),
            Some("consumer_ack") => read(payload, Advisory::ConsumerAck),
            Some("max_deliver") => read(payload, Advisory::MaxDeliveries),
            Some("nak") => read(payload, Advisory::Nak),
            Some("terminated") => read(payload, Advisory::Terminated),
            Some("snapshot_create") => read(payload, Advisory::SnapshotCreate),
            Some("snapshot_complete") => read(payload, Advisory::SnapshotComplete),
            Some("restore_create") => read(payload, Advisory::RestoreCreate),
            Some("restore_complete") => read(payload, Advisory::RestoreComplete),
            Some("domain_leader_elected") => read(payload, Advisory::DomainLeaderElected),
            Some("stream_leader_elected") => read(payload, Advisory::StreamLeaderElected),
            Some("stream_quorum_lost") => read(payload, Advisory::StreamQuorumLost),
            Some("stream_batch_abandoned") => read(payload, Advisory::StreamBatchAbandoned),
            Some("consumer_leader_elected") => read(payload, Advisory::ConsumerLeaderElected),
            Some("consumer_quorum_lost") => read(payload, Advisory::ConsumerQuorumLost),
            Some("consumer_group_pinned") => read(payload, Advisory::ConsumerGroupPinned),
            Some("consumer_group_unpinned") => read(payload, Advisory::ConsumerGroupUnpinned),
            Some("server_out_of_space") => read(payload, Advisory::ServerOutOfSpace),
            Some("server_removed") => read(payload, Advisory::ServerRemoved),
            Some("api_limit_reached") => read(payload, Advisory::ApiLimitReached),
            _ => {
                let event = serde_json::from_slice(payload)
                    .map_err(|e| AdvisoryError::with_source(AdvisoryErrorKind::Malformed, e))?;
                Ok(Advisory::Unknown {
                    kind: typed.kind,
                    event,
                })
            }
        }
    }

    /// Reads an event from a message's payload.
    pub fn from_message(message: &Message) -> Result<Advisory, AdvisoryError> {
        Advisory::from_json(&message.payload)
    }

    /// The stream the event is about, if it is about one.
    pub fn stream(&self) -> Option<&str> {
        Some(match self {
            Advisory::StreamAction(a) => &a.stream,
            Advisory::ConsumerAction(a) => &a.stream,
            Advisory::ConsumerPause(a) => &a.stream,
            Advisory::ConsumerAck(a) => &a.stream,
            Advisory::MaxDeliveries(a) => &a.stream,
            Advisory::Nak(a) => &a.stream,
            Advisory::Terminated(a) => &a.stream,
            Advisory::SnapshotCreate(a) => &a.stream,
            Advisory::SnapshotComplete(a) => &a.stream,
            Advisory::RestoreCreate(a) => &a.stream,
            Advisory::RestoreComplete(a) => &a.stream,
            Advisory::StreamLeaderElected(a) => &a.stream,
            Advisory::StreamQuorumLost(a) => &a.stream,
            Advisory::StreamBatchAbandoned(a) => &a.stream,
            Advisory::ConsumerLeaderElected(a) => &a.stream,
            Advisory::ConsumerQuorumLost(a) => &a.stream,
            Advisory::ConsumerGroupPinned(a) => &a.stream,
            Advisory::ConsumerGroupUnpinned(a) => &a.stream,
            Advisory::ServerOutOfSpace(a) => return a.stream.as_deref(),
            _ => return None,
        })
    }
}

/// Deserialises the common header and the fields of one event type; the struct's doc says
/// what the event is.
macro_rules! event {
    ($(#[$doc:meta])* $name:ident { $($(#[$field_doc:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[non_exhaustive]
        pub struct $name {
            /// The event's type, id and time.
            #[serde(flatten)]
            pub header: EventHeader,
            $($(#[$field_doc])* pub $field: $ty,)*
        }
    };
}

/// What a stream or consumer action did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Action {
    /// Created.
    Create,
    /// Updated.
    Modify,
    /// Deleted.
    Delete,
}

/// The client behind a request, as the server saw it (nats-server's `ClientInfo`; fields it
/// did not send are empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ClientInfo {
    /// The client's connection id on its server.
    pub id: u64,
    /// Its account.
    #[serde(rename = "acc")]
    pub account: String,
    /// Its user.
    pub user: String,
    /// The name it connected with.
    pub name: String,
    /// Its language.
    pub lang: String,
    /// Its library's version.
    #[serde(rename = "ver")]
    pub version: String,
    /// Its host.
    pub host: String,
    /// The server it is connected to.
    pub server: String,
    /// That server's cluster.
    pub cluster: String,
    /// Its round-trip time to its server, as last measured.
    #[serde(with = "crate::nanos")]
    pub rtt: Duration,
    /// The kind of connection (`Client`, `Leafnode`, ...).
    pub kind: String,
    /// The kind of client (`nats`, `websocket`, `mqtt`, ...).
    pub client_type: String,
}

event! {
    /// A JetStream API request and the server's answer.
    ApiAudit {
        /// The server that answered.
        server: String,
        /// Who asked.
        #[serde(default)]
        client: Option<ClientInfo>,
        /// The API subject asked on.
        subject: String,
        /// The request's body.
        #[serde(default)]
        request: String,
        /// The answer's body.
        #[serde(default)]
        response: String,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A stream created, updated or deleted.
    StreamAction {
        /// The stream.
        stream: String,
        /// What happened to it.
        action: Action,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A consumer created, updated or deleted.
    ConsumerAction {
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// What happened to it.
        action: Action,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A consumer paused or resumed.
    ConsumerPause {
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// Paused (`true`) or resumed.
        paused: bool,
        /// Until when, while paused.
        #[serde(default, with = "rnats_core::datetime::rfc3339::option")]
        pause_until: Option<DateTime>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A sampled acknowledgement: one in `sample_frequency` of a consumer's acks.
    ConsumerAck {
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The message's sequence in the consumer.
        consumer_seq: u64,
        /// The message's sequence in the stream.
        stream_seq: u64,
        /// From the message's delivery to its ack.
        #[serde(rename = "ack_time", with = "crate::nanos")]
        ack_delay: Duration,
        /// How many times it was delivered.
        deliveries: u64,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A message that reached its consumer's `max_deliver`: the consumer will not deliver it
    /// again.
    MaxDeliveries {
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The message's sequence in the stream.
        stream_seq: u64,
        /// How many times it was delivered.
        deliveries: u64,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A message declined with a `nak`.
    Nak {
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The message's sequence in the consumer.
        consumer_seq: u64,
        /// The message's sequence in the stream.
        stream_seq: u64,
        /// How many times it was delivered.
        deliveries: u64,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A message terminated with `term`: the consumer will not deliver it again.
    Terminated {
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The message's sequence in the consumer.
        consumer_seq: u64,
        /// The message's sequence in the stream.
        stream_seq: u64,
        /// How many times it was delivered.
        deliveries: u64,
        /// The reason given with `term_with_reason`.
        #[serde(default)]
        reason: Option<String>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A snapshot of a stream started.
    SnapshotCreate {
        /// The stream.
        stream: String,
        /// Its state when the snapshot began.
        state: State,
        /// Who asked.
        #[serde(default)]
        client: Option<ClientInfo>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A snapshot of a stream ended.
    SnapshotComplete {
        /// The stream.
        stream: String,
        /// When it began.
        #[serde(with = "rnats_core::datetime::rfc3339")]
        start: DateTime,
        /// When it ended.
        #[serde(with = "rnats_core::datetime::rfc3339")]
        end: DateTime,
        /// Who asked.
        #[serde(default)]
        client: Option<ClientInfo>,
        /// Why it failed, if it did.
        #[serde(default)]
        error: Option<String>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A restore of a stream started.
    RestoreCreate {
        /// The stream.
        stream: String,
        /// Who asked.
        #[serde(default)]
        client: Option<ClientInfo>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A restore of a stream ended.
    RestoreComplete {
        /// The stream.
        stream: String,
        /// When it began.
        #[serde(with = "rnats_core::datetime::rfc3339")]
        start: DateTime,
        /// When it ended.
        #[serde(with = "rnats_core::datetime::rfc3339")]
        end: DateTime,
        /// Bytes restored.
        bytes: i64,
        /// Who asked.
        #[serde(default)]
        client: Option<ClientInfo>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// The JetStream meta group of a domain elected a leader.
    DomainLeaderElected {
        /// The new leader.
        leader: String,
        /// The group's members.
        #[serde(default)]
        replicas: Vec<PeerInfo>,
        /// The leader's cluster.
        #[serde(default)]
        cluster: String,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A stream's RAFT group elected a leader.
    StreamLeaderElected {
        /// The stream's account.
        #[serde(default)]
        account: Option<String>,
        /// The stream.
        stream: String,
        /// The new leader.
        leader: String,
        /// The group's members.
        #[serde(default)]
        replicas: Vec<PeerInfo>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A stream's RAFT group lost its quorum.
    StreamQuorumLost {
        /// The stream's account.
        #[serde(default)]
        account: Option<String>,
        /// The stream.
        stream: String,
        /// The group's members.
        #[serde(default)]
        replicas: Vec<PeerInfo>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// An atomic batch publish the stream gave up on.
    StreamBatchAbandoned {
        /// The stream's account.
        #[serde(default)]
        account: Option<String>,
        /// The stream.
        stream: String,
        /// The batch's id.
        #[serde(rename = "batch")]
        batch_id: String,
        /// Why: `timeout`, `large`, `incomplete` or `unsupported`.
        reason: String,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A consumer's RAFT group elected a leader.
    ConsumerLeaderElected {
        /// The consumer's account.
        #[serde(default)]
        account: Option<String>,
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The new leader.
        leader: String,
        /// The group's members.
        #[serde(default)]
        replicas: Vec<PeerInfo>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A consumer's RAFT group lost its quorum.
    ConsumerQuorumLost {
        /// The consumer's account.
        #[serde(default)]
        account: Option<String>,
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The group's members.
        #[serde(default)]
        replicas: Vec<PeerInfo>,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A pinned client chosen for a consumer's priority group.
    ConsumerGroupPinned {
        /// The consumer's account.
        #[serde(default)]
        account: Option<String>,
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The priority group.
        group: String,
        /// The pin id the chosen client's pulls carry.
        #[serde(rename = "pinned_id")]
        pin_id: String,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A priority group's pin let go.
    ConsumerGroupUnpinned {
        /// The consumer's account.
        #[serde(default)]
        account: Option<String>,
        /// The consumer's stream.
        stream: String,
        /// The consumer.
        consumer: String,
        /// The priority group.
        group: String,
        /// Why (`admin`, `timeout`, ...).
        reason: String,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A server ran out of storage.
    ServerOutOfSpace {
        /// The server's name.
        server: String,
        /// The server's id.
        server_id: String,
        /// The stream whose write found the disk full, if one did.
        #[serde(default)]
        stream: Option<String>,
        /// The server's cluster.
        #[serde(default)]
        cluster: String,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// A server removed from the JetStream meta group.
    ServerRemoved {
        /// The server's name.
        server: String,
        /// The server's id.
        server_id: String,
        /// The server's cluster.
        #[serde(default)]
        cluster: String,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

event! {
    /// JetStream API requests dropped because the server's API queue was full.
    ApiLimitReached {
        /// The server that dropped them.
        server: String,
        /// How many it dropped.
        dropped: i64,
        /// The JetStream domain.
        #[serde(default)]
        domain: Option<String>,
    }
}

/// The kinds of [`AdvisoryError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdvisoryErrorKind {
    /// The subscription could not be made (an invalid subject, a closed client).
    Subscribe,
    /// A message that is not an event, or an event whose fields do not read as its type.
    Malformed,
}

impl fmt::Display for AdvisoryErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AdvisoryErrorKind::Subscribe => "could not subscribe to advisories",
            AdvisoryErrorKind::Malformed => "malformed advisory",
        })
    }
}

/// Why an advisory could not be subscribed to or read.
pub type AdvisoryError = Error<AdvisoryErrorKind>;

/// The advisories of a subscription, read as they come: ends when the subscription does. A
/// malformed one is an error item, and the next one is read as usual.
#[derive(Debug)]
pub struct Advisories {
    subscriber: Subscriber,
}

impl Advisories {
    /// The subscription underneath, e.g. to unsubscribe or drain it.
    pub fn subscriber(&mut self) -> &mut Subscriber {
        &mut self.subscriber
    }
}

impl Stream for Advisories {
    type Item = Result<Advisory, AdvisoryError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut()
            .subscriber
            .poll_next_unpin(cx)
            .map(|message| message.map(|message| Advisory::from_message(&message)))
    }
}

impl Context {
    /// Every JetStream advisory and metric of the account ([`ALL`]), read as they come.
    pub async fn advisories(&self) -> Result<Advisories, AdvisoryError> {
        self.advisories_on(ALL).await
    }

    /// The JetStream advisories and metrics on `subject` (one of [`subjects`], or any subject
    /// under `$JS.EVENT.`), read as they come.
    pub async fn advisories_on<S: ToSubject>(
        &self,
        subject: S,
    ) -> Result<Advisories, AdvisoryError> {
        let subscriber = self
            .client()
            .subscribe(subject)
            .await
            .map_err(|e| AdvisoryError::with_source(AdvisoryErrorKind::Subscribe, e))?;
        Ok(Advisories { subscriber })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_reads_as_its_variant_and_unknown_fields_are_ignored() {
        let nak = br#"{"type":"io.nats.jetstream.advisory.v1.nak","id":"x1",
            "timestamp":"2026-12-07T07:00:00.5Z","stream":"S","consumer":"C",
            "consumer_seq":4,"stream_seq":9,"deliveries":2,"added_later":{"a":1}}"#;
        let Advisory::Nak(nak) = Advisory::from_json(nak).unwrap() else {
            panic!("not a nak");
        };
        assert_eq!(
            (nak.stream.as_str(), nak.consumer.as_str(), nak.consumer_seq),
            ("S", "C", 4)
        );
        assert_eq!((nak.stream_seq, nak.deliveries, nak.domain), (9, 2, None));
        assert_eq!(nak.header.id, "x1");

        let ack = br#"{"type":"io.nats.jetstream.metric.v1.consumer_ack","id":"x2",
            "timestamp":"2026-12-07T07:00:00Z","stream":"S","consumer":"C","consumer_seq":1,
            "stream_seq":1,"ack_time":1500000,"deliveries":1,"domain":"hub"}"#;
        let Advisory::ConsumerAck(ack) = Advisory::from_json(ack).unwrap() else {
            panic!("not an ack sample");
        };
        assert_eq!(ack.ack_delay, Duration::from_micros(1500));
        assert_eq!(ack.domain.as_deref(), Some("hub"));

        let elected = br#"{"type":"io.nats.jetstream.advisory.v1.stream_leader_elected",
            "id":"x3","timestamp":"2026-12-07T07:00:00Z","stream":"S","leader":"n2",
            "replicas":[{"name":"n1","current":true,"active":2000000,"lag":0},
                        {"name":"n3","current":false,"active":0,"offline":true}]}"#;
        let advisory = Advisory::from_json(elected).unwrap();
        assert_eq!(advisory.stream(), Some("S"));
        let Advisory::StreamLeaderElected(elected) = advisory else {
            panic!("not a leader election");
        };
        assert_eq!(elected.leader, "n2");
        assert_eq!(elected.replicas.len(), 2);
        assert!(elected.replicas[1].offline);
    }

    #[test]
    fn an_unknown_type_is_kept_whole_and_a_non_event_is_an_error() {
        let later = br#"{"type":"io.nats.jetstream.advisory.v2.something_new","id":"y",
            "timestamp":"2026-12-07T07:00:00Z","x":3}"#;
        let Advisory::Unknown { kind, event } = Advisory::from_json(later).unwrap() else {
            panic!("not unknown");
        };
        assert_eq!(kind, "io.nats.jetstream.advisory.v2.something_new");
        assert_eq!(event["x"], 3);

        for bad in [&br#"{"id":"no type"}"#[..], b"not json", b""] {
            let error = Advisory::from_json(bad).unwrap_err();
            assert_eq!(error.kind(), AdvisoryErrorKind::Malformed);
        }
        // A known type missing a field it must have.
        let short = br#"{"type":"io.nats.jetstream.advisory.v1.nak","id":"z",
            "timestamp":"2026-12-07T07:00:00Z","stream":"S"}"#;
        assert_eq!(
            Advisory::from_json(short).unwrap_err().kind(),
            AdvisoryErrorKind::Malformed
        );
    }
}
