//! The configuration types of push consumers: [`Config`] and the ordered [`OrderedConfig`].

use std::collections::HashMap;
use std::time::Duration;

use rnats_core::datetime::DateTime;
use serde::{Deserialize, Serialize};

use crate::consumer::config::{is_default, null_as_default, sample_frequency};
use crate::consumer::{
    self, AckPolicy, DeliverPolicy, FromConsumer, IntoConsumerConfig, ReplayPolicy,
};

/// The idle heartbeat of ordered push consumers.
pub(crate) const ORDERED_IDLE_HEARTBEAT: Duration = Duration::from_secs(5);

/// A push consumer's configuration: the server sends messages to `deliver_subject`.
#[derive(Debug, Default, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where the server sends the messages.
    #[serde(default)]
    pub deliver_subject: String,
    /// The durable name: the consumer outlives its clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_name: Option<String>,
    /// The consumer's name, durable or ephemeral.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the consumer is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The queue group subscribers of `deliver_subject` join.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_group: Option<String>,
    /// Where in the stream delivery starts.
    #[serde(flatten)]
    pub deliver_policy: DeliverPolicy,
    /// How messages are acknowledged.
    #[serde(default)]
    pub ack_policy: AckPolicy,
    /// How long a delivered message waits for its ack before it is redelivered.
    #[serde(default, with = "crate::nanos", skip_serializing_if = "is_default")]
    pub ack_wait: Duration,
    /// How many times a message is delivered at most.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_deliver: i64,
    /// Only messages on subjects matching this filter are delivered.
    #[serde(default, skip_serializing_if = "is_default")]
    pub filter_subject: String,
    /// Like `filter_subject`, with several filters.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        deserialize_with = "null_as_default"
    )]
    pub filter_subjects: Vec<String>,
    /// Whether messages come as fast as possible or at the pace they were stored.
    #[serde(default)]
    pub replay_policy: ReplayPolicy,
    /// Delivery rate limit in bits per second.
    #[serde(rename = "rate_limit_bps", default, skip_serializing_if = "is_default")]
    pub rate_limit: u64,
    /// The percentage of acks sampled as advisories, 0 to 100.
    #[serde(
        rename = "sample_freq",
        with = "sample_frequency",
        default,
        skip_serializing_if = "is_default"
    )]
    pub sample_frequency: u8,
    /// Pull requests the server keeps waiting at most (pull consumers only).
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_waiting: i64,
    /// Messages delivered and not acknowledged at most.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_ack_pending: i64,
    /// Deliver headers only.
    #[serde(default, skip_serializing_if = "is_default")]
    pub headers_only: bool,
    /// Flow control: the server asks the client to confirm it keeps up (needs
    /// `idle_heartbeat`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub flow_control: bool,
    /// How often an idle consumer sends a heartbeat.
    #[serde(default, with = "crate::nanos", skip_serializing_if = "is_default")]
    pub idle_heartbeat: Duration,
    /// Replicas of the consumer's state.
    #[serde(default, skip_serializing_if = "is_default")]
    pub num_replicas: usize,
    /// Keep the consumer's state in memory.
    #[serde(default, skip_serializing_if = "is_default", rename = "mem_storage")]
    pub memory_storage: bool,
    /// Free-form metadata.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        deserialize_with = "null_as_default"
    )]
    pub metadata: HashMap<String, String>,
    /// Redelivery delays, one per attempt.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        with = "crate::nanos::vec"
    )]
    pub backoff: Vec<Duration>,
    /// How long an unused consumer lives on before the server deletes it.
    #[serde(default, with = "crate::nanos", skip_serializing_if = "is_default")]
    pub inactive_threshold: Duration,
    /// The consumer delivers nothing until this time.
    #[serde(
        default,
        with = "rnats_core::datetime::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub pause_until: Option<DateTime>,
}

impl IntoConsumerConfig for Config {
    fn into_consumer_config(self) -> consumer::Config {
        consumer::Config {
            deliver_subject: Some(self.deliver_subject),
            durable_name: self.durable_name,
            name: self.name,
            description: self.description,
            deliver_group: self.deliver_group,
            deliver_policy: self.deliver_policy,
            ack_policy: self.ack_policy,
            ack_wait: self.ack_wait,
            max_deliver: self.max_deliver,
            filter_subject: self.filter_subject,
            filter_subjects: self.filter_subjects,
            replay_policy: self.replay_policy,
            rate_limit: self.rate_limit,
            sample_frequency: self.sample_frequency,
            max_waiting: self.max_waiting,
            max_ack_pending: self.max_ack_pending,
            headers_only: self.headers_only,
            flow_control: self.flow_control,
            idle_heartbeat: self.idle_heartbeat,
            inactive_threshold: self.inactive_threshold,
            num_replicas: self.num_replicas,
            memory_storage: self.memory_storage,
            metadata: self.metadata,
            backoff: self.backoff,
            pause_until: self.pause_until,
            ..Default::default()
        }
    }
}

impl IntoConsumerConfig for &Config {
    fn into_consumer_config(self) -> consumer::Config {
        self.clone().into_consumer_config()
    }
}

impl FromConsumer for Config {
    fn try_from_consumer_config(config: consumer::Config) -> Result<Config, rnats_core::Error> {
        let Some(deliver_subject) = config.deliver_subject else {
            return Err("a push consumer needs a deliver subject; this one is pull based".into());
        };
        Ok(Config {
            deliver_subject,
            durable_name: config.durable_name,
            name: config.name,
            description: config.description,
            deliver_group: config.deliver_group,
            deliver_policy: config.deliver_policy,
            ack_policy: config.ack_policy,
            ack_wait: config.ack_wait,
            max_deliver: config.max_deliver,
            filter_subject: config.filter_subject,
            filter_subjects: config.filter_subjects,
            replay_policy: config.replay_policy,
            rate_limit: config.rate_limit,
            sample_frequency: config.sample_frequency,
            max_waiting: config.max_waiting,
            max_ack_pending: config.max_ack_pending,
            headers_only: config.headers_only,
            flow_control: config.flow_control,
            idle_heartbeat: config.idle_heartbeat,
            num_replicas: config.num_replicas,
            memory_storage: config.memory_storage,
            metadata: config.metadata,
            backoff: config.backoff,
            inactive_threshold: config.inactive_threshold,
            pause_until: config.pause_until,
        })
    }
}

/// An ordered push consumer (ADR-17): ephemeral, no acks, flow control and heartbeats on,
/// recreated by the client whenever a delivery goes missing.
#[derive(Debug, Default, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct OrderedConfig {
    /// Where the server sends the messages (recreated consumers get a fresh inbox).
    #[serde(default)]
    pub deliver_subject: String,
    /// A name for the consumer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the consumer is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Only messages on subjects matching this filter are delivered.
    #[serde(default, skip_serializing_if = "is_default")]
    pub filter_subject: String,
    /// Like `filter_subject`, with several filters.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        deserialize_with = "null_as_default"
    )]
    pub filter_subjects: Vec<String>,
    /// Whether messages come as fast as possible or at the pace they were stored.
    #[serde(default)]
    pub replay_policy: ReplayPolicy,
    /// Delivery rate limit in bits per second.
    #[serde(rename = "rate_limit_bps", default, skip_serializing_if = "is_default")]
    pub rate_limit: u64,
    /// The percentage of acks sampled as advisories, 0 to 100.
    #[serde(
        rename = "sample_freq",
        with = "sample_frequency",
        default,
        skip_serializing_if = "is_default"
    )]
    pub sample_frequency: u8,
    /// Deliver headers only.
    #[serde(default, skip_serializing_if = "is_default")]
    pub headers_only: bool,
    /// Where in the stream delivery starts.
    #[serde(flatten)]
    pub deliver_policy: DeliverPolicy,
    /// Pull requests the server keeps waiting at most (unused by push consumers).
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_waiting: i64,
    /// Free-form metadata.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        deserialize_with = "null_as_default"
    )]
    pub metadata: HashMap<String, String>,
}

impl IntoConsumerConfig for OrderedConfig {
    fn into_consumer_config(self) -> consumer::Config {
        consumer::Config {
            deliver_subject: Some(self.deliver_subject),
            name: self.name,
            description: self.description,
            deliver_policy: self.deliver_policy,
            ack_policy: AckPolicy::None,
            max_deliver: 1,
            filter_subject: self.filter_subject,
            filter_subjects: self.filter_subjects,
            replay_policy: self.replay_policy,
            rate_limit: self.rate_limit,
            sample_frequency: self.sample_frequency,
            max_waiting: self.max_waiting,
            headers_only: self.headers_only,
            flow_control: true,
            idle_heartbeat: ORDERED_IDLE_HEARTBEAT,
            inactive_threshold: Duration::from_secs(30),
            num_replicas: 1,
            memory_storage: true,
            metadata: self.metadata,
            ..Default::default()
        }
    }
}

impl FromConsumer for OrderedConfig {
    fn try_from_consumer_config(
        config: consumer::Config,
    ) -> Result<OrderedConfig, rnats_core::Error> {
        let Some(deliver_subject) = config.deliver_subject else {
            return Err("a push consumer needs a deliver subject; this one is pull based".into());
        };
        Ok(OrderedConfig {
            deliver_subject,
            name: config.name,
            description: config.description,
            filter_subject: config.filter_subject,
            filter_subjects: config.filter_subjects,
            replay_policy: config.replay_policy,
            rate_limit: config.rate_limit,
            sample_frequency: config.sample_frequency,
            headers_only: config.headers_only,
            deliver_policy: config.deliver_policy,
            max_waiting: config.max_waiting,
            metadata: config.metadata,
        })
    }
}
