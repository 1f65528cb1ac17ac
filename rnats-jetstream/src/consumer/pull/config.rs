//! The configuration types of pull consumers: [`Config`] and the ordered [`OrderedConfig`].

use std::collections::HashMap;
use std::time::Duration;

use rnats_core::datetime::DateTime;
use serde::{Deserialize, Serialize};

use crate::consumer::config::{is_default, null_as_default, sample_frequency};
use crate::consumer::{
    self, AckPolicy, DeliverPolicy, FromConsumer, IntoConsumerConfig, PriorityPolicy, ReplayPolicy,
};

/// A pull consumer's configuration: [`consumer::Config`] without the push settings.
#[derive(Debug, Default, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct Config {
    /// The durable name: the consumer outlives its clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_name: Option<String>,
    /// The consumer's name, durable or ephemeral.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the consumer is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
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
    /// Pull requests the server keeps waiting at most.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_waiting: i64,
    /// Messages delivered and not acknowledged at most.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_ack_pending: i64,
    /// Deliver headers only.
    #[serde(default, skip_serializing_if = "is_default")]
    pub headers_only: bool,
    /// The largest batch one pull request may ask for.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_batch: i64,
    /// The largest `max_bytes` one pull request may ask for.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_bytes: i64,
    /// The longest `expires` one pull request may ask for.
    #[serde(default, with = "crate::nanos", skip_serializing_if = "is_default")]
    pub max_expires: Duration,
    /// How long an unused consumer lives on before the server deletes it.
    #[serde(default, with = "crate::nanos", skip_serializing_if = "is_default")]
    pub inactive_threshold: Duration,
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
    /// How pull requests of different clients share the consumer.
    #[serde(default, skip_serializing_if = "is_default")]
    pub priority_policy: PriorityPolicy,
    /// The priority groups pull requests name.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        deserialize_with = "null_as_default"
    )]
    pub priority_groups: Vec<String>,
    /// How long a pinned client keeps its pin without pulling.
    #[serde(default, with = "crate::nanos", skip_serializing_if = "is_default")]
    pub priority_timeout: Duration,
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
            deliver_subject: None,
            durable_name: self.durable_name,
            name: self.name,
            description: self.description,
            deliver_group: None,
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
            flow_control: false,
            idle_heartbeat: Duration::ZERO,
            max_batch: self.max_batch,
            max_bytes: self.max_bytes,
            max_expires: self.max_expires,
            inactive_threshold: self.inactive_threshold,
            num_replicas: self.num_replicas,
            memory_storage: self.memory_storage,
            metadata: self.metadata,
            backoff: self.backoff,
            priority_policy: self.priority_policy,
            priority_groups: self.priority_groups,
            priority_timeout: self.priority_timeout,
            pause_until: self.pause_until,
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
        if config.deliver_subject.is_some() {
            return Err("a pull consumer has no deliver subject; this one is push based".into());
        }
        Ok(Config {
            durable_name: config.durable_name,
            name: config.name,
            description: config.description,
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
            max_batch: config.max_batch,
            max_bytes: config.max_bytes,
            max_expires: config.max_expires,
            inactive_threshold: config.inactive_threshold,
            num_replicas: config.num_replicas,
            memory_storage: config.memory_storage,
            metadata: config.metadata,
            backoff: config.backoff,
            priority_policy: config.priority_policy,
            priority_groups: config.priority_groups,
            priority_timeout: config.priority_timeout,
            pause_until: config.pause_until,
        })
    }
}

/// An ordered pull consumer (ADR-17): ephemeral, no acks, in memory, one replica; the
/// client recreates it whenever a delivery goes missing, so messages come in stream order
/// without gaps.
#[derive(Debug, Default, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct OrderedConfig {
    /// A name for the consumer (recreated ones get `_<n>` appended).
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
    /// Pull requests the server keeps waiting at most.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_waiting: i64,
    /// Free-form metadata.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        deserialize_with = "null_as_default"
    )]
    pub metadata: HashMap<String, String>,
    /// The largest batch one pull request may ask for.
    #[serde(default)]
    pub max_batch: i64,
    /// The largest `max_bytes` one pull request may ask for.
    #[serde(default)]
    pub max_bytes: i64,
    /// The longest `expires` one pull request may ask for.
    #[serde(default, with = "crate::nanos")]
    pub max_expires: Duration,
}

impl From<OrderedConfig> for Config {
    fn from(config: OrderedConfig) -> Config {
        let full = config.into_consumer_config();
        // A pull config always converts back from a config without a deliver subject.
        Config::try_from_consumer_config(full).unwrap_or_default()
    }
}

impl IntoConsumerConfig for OrderedConfig {
    fn into_consumer_config(self) -> consumer::Config {
        consumer::Config {
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
            max_batch: self.max_batch,
            max_bytes: self.max_bytes,
            max_expires: self.max_expires,
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
        Ok(OrderedConfig {
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
            max_batch: config.max_batch,
            max_bytes: config.max_bytes,
            max_expires: config.max_expires,
        })
    }
}
