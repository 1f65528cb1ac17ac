//! The consumer configuration as the server stores it (`ConsumerConfig`), the consumer's info
//! and the policy enums, shared by pull, push and ordered consumers.

use std::collections::HashMap;
use std::time::Duration;

use rnats_core::datetime::DateTime;
use serde::{Deserialize, Deserializer, Serialize};

use super::{FromConsumer, IntoConsumerConfig};
use crate::stream::ClusterInfo;

/// A consumer as the server reports it (`CONSUMER.INFO`, `CONSUMER.CREATE`).
#[derive(Debug, Deserialize, Clone, PartialEq, Eq)]
pub struct Info {
    /// The stream the consumer reads.
    pub stream_name: String,
    /// The consumer's name (the durable name for durables, generated for ephemerals).
    pub name: String,
    /// When the consumer was created.
    #[serde(with = "rnats_core::datetime::rfc3339")]
    pub created: DateTime,
    /// The configuration in force.
    pub config: Config,
    /// The last message delivered.
    pub delivered: SequenceInfo,
    /// Below this point every message is acknowledged.
    pub ack_floor: SequenceInfo,
    /// Messages delivered and not acknowledged yet.
    pub num_ack_pending: usize,
    /// Messages delivered more than once.
    pub num_redelivered: usize,
    /// Pull requests waiting for messages.
    pub num_waiting: usize,
    /// Messages in the stream the consumer has yet to deliver.
    pub num_pending: u64,
    /// Where the consumer's replicas are, in a cluster.
    #[serde(default)]
    pub cluster: Option<ClusterInfo>,
    /// Whether a push consumer has an active subscriber on its deliver subject.
    #[serde(default)]
    pub push_bound: bool,
    /// Whether the consumer is paused.
    #[serde(default)]
    pub paused: bool,
    /// How long the consumer stays paused.
    #[serde(default, with = "crate::nanos::option")]
    pub pause_remaining: Option<Duration>,
    /// The state of each priority group.
    #[serde(default, deserialize_with = "null_as_default")]
    pub priority_groups: Vec<PriorityGroupState>,
}

/// One priority group of a consumer: which client, if any, the server pinned.
#[derive(Debug, Deserialize, Clone, PartialEq, Eq)]
pub struct PriorityGroupState {
    /// The group's name.
    pub group: String,
    /// The pinned client's `Nats-Pin-Id`, if one is pinned.
    #[serde(default)]
    pub pinned_client_id: Option<String>,
    /// When that client was pinned, if one is.
    #[serde(default, deserialize_with = "go_time_or_none")]
    pub pinned_ts: Option<DateTime>,
}

/// A position in the consumer and in the stream.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
pub struct SequenceInfo {
    /// The consumer's sequence (one per delivery).
    #[serde(rename = "consumer_seq")]
    pub consumer_sequence: u64,
    /// The stream's sequence of that message.
    #[serde(rename = "stream_seq")]
    pub stream_sequence: u64,
    /// When this position last moved.
    #[serde(default, with = "rnats_core::datetime::rfc3339::option")]
    pub last_active: Option<DateTime>,
}

/// Every consumer setting, pull or push: what `CONSUMER.CREATE` takes. A `deliver_subject`
/// makes a push consumer, none a pull consumer; a `durable_name` makes it durable.
#[derive(Debug, Default, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where a push consumer sends messages; `None` for a pull consumer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_subject: Option<String>,
    /// The durable name: the consumer outlives its clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_name: Option<String>,
    /// The consumer's name, durable or ephemeral.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the consumer is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The queue group a push consumer's subscribers join.
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
    /// How many times a message is delivered at most (`-1` or `0`: no limit).
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
    /// Delivery rate limit in bits per second (push consumers).
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
    /// Messages delivered and not acknowledged at most; then delivery pauses.
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_ack_pending: i64,
    /// Deliver headers only, with the payload size in `Nats-Msg-Size`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub headers_only: bool,
    /// Flow control for push consumers (needs `idle_heartbeat`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub flow_control: bool,
    /// How often an idle push consumer sends a heartbeat.
    #[serde(default, with = "crate::nanos", skip_serializing_if = "is_default")]
    pub idle_heartbeat: Duration,
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
    /// Replicas of the consumer's state (0: as many as the stream).
    #[serde(default, skip_serializing_if = "is_default")]
    pub num_replicas: usize,
    /// Keep the consumer's state in memory even on a file stream.
    #[serde(default, skip_serializing_if = "is_default", rename = "mem_storage")]
    pub memory_storage: bool,
    /// Free-form metadata.
    #[serde(
        default,
        skip_serializing_if = "is_default",
        deserialize_with = "null_as_default"
    )]
    pub metadata: HashMap<String, String>,
    /// Redelivery delays, one per attempt (the last repeats); overrides `ack_wait`.
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
    /// How long a pinned client keeps its pin without pulling (`PinnedClient` policy; 0: the
    /// server's default).
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

impl From<&Config> for Config {
    fn from(config: &Config) -> Config {
        config.clone()
    }
}

/// A durable consumer named `name`, otherwise the defaults.
impl From<&str> for Config {
    fn from(name: &str) -> Config {
        Config {
            durable_name: Some(name.to_owned()),
            ..Default::default()
        }
    }
}

impl IntoConsumerConfig for Config {
    fn into_consumer_config(self) -> Config {
        self
    }
}

impl IntoConsumerConfig for &Config {
    fn into_consumer_config(self) -> Config {
        self.clone()
    }
}

impl FromConsumer for Config {
    fn try_from_consumer_config(config: Config) -> Result<Self, rnats_core::Error> {
        Ok(config)
    }
}

/// Where in the stream a consumer starts (`deliver_policy`, with `opt_start_seq` or
/// `opt_start_time` for the two "by start" policies).
#[derive(Default, Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[serde(tag = "deliver_policy")]
pub enum DeliverPolicy {
    /// From the first message in the stream (the default).
    #[default]
    #[serde(rename = "all")]
    All,
    /// From the last message in the stream.
    #[serde(rename = "last")]
    Last,
    /// Only messages stored after the consumer was created.
    #[serde(rename = "new")]
    New,
    /// From this stream sequence on.
    #[serde(rename = "by_start_sequence")]
    ByStartSequence {
        /// The first stream sequence to deliver.
        #[serde(rename = "opt_start_seq")]
        start_sequence: u64,
    },
    /// From the first message stored at or after this time.
    #[serde(rename = "by_start_time")]
    ByStartTime {
        /// The earliest time to deliver from.
        #[serde(rename = "opt_start_time", with = "rnats_core::datetime::rfc3339")]
        start_time: DateTime,
    },
    /// The last message of every subject, then what comes after.
    #[serde(rename = "last_per_subject")]
    LastPerSubject,
}

/// How messages are acknowledged.
#[derive(Default, Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum AckPolicy {
    /// Each message on its own (the default).
    #[default]
    #[serde(rename = "explicit")]
    Explicit = 2,
    /// No acks: a message counts as handled once delivered.
    #[serde(rename = "none")]
    None = 0,
    /// An ack acknowledges every message before it too.
    #[serde(rename = "all")]
    All = 1,
    /// Delivery paced by the client's flow-control replies instead of acks (nats-server
    /// 2.14+).
    #[serde(rename = "flow_control")]
    FlowControl = 3,
}

/// The pace of delivery.
#[derive(Default, Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ReplayPolicy {
    /// As fast as the consumer takes them (the default).
    #[default]
    #[serde(rename = "instant")]
    Instant = 0,
    /// At the pace the messages were stored.
    #[serde(rename = "original")]
    Original = 1,
}

/// How pull requests of several clients share a consumer (ADR-42).
#[derive(Default, Debug, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub enum PriorityPolicy {
    /// Requests with `min_pending`/`min_ack_pending` only get messages past those marks.
    #[serde(rename = "overflow")]
    Overflow,
    /// The server pins one client per group and delivers to it alone until it stops pulling
    /// for `priority_timeout` (or is unpinned).
    #[serde(rename = "pinned_client")]
    PinnedClient,
    /// Requests with a lower `priority` number are served first.
    #[serde(rename = "prioritized")]
    Prioritized,
    /// No priority groups (the default).
    #[serde(rename = "none")]
    #[default]
    None,
}

pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// `null` where the server leaves a list or map out as nil.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// An RFC 3339 time where Go's zero time (`0001-01-01T00:00:00Z`) or `null` means none.
fn go_time_or_none<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<DateTime>, D::Error> {
    let Some(text) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    if text.starts_with("0001-01-01T00:00:00") {
        return Ok(None);
    }
    rnats_core::datetime::parse_rfc3339(&text)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// `sample_freq`: the server writes a string such as `"50"` or `"50%"`.
pub(crate) mod sample_frequency {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the percentage as the server's string form.
    pub(crate) fn serialize<S: Serializer>(value: &u8, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    /// Reads `"50"`, `"50%"` or a bare number.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u8, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Frequency {
            Number(u8),
            Text(String),
        }
        match Frequency::deserialize(deserializer)? {
            Frequency::Number(number) => Ok(number),
            Frequency::Text(text) => {
                let digits = text.trim().strip_suffix('%').unwrap_or(text.trim());
                if digits.is_empty() {
                    return Ok(0);
                }
                digits.parse().map_err(|_| {
                    serde::de::Error::custom(format!("malformed sample frequency {text:?}"))
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deliver_policy_flattens_with_its_option() {
        let config = Config {
            durable_name: Some("d".into()),
            deliver_policy: DeliverPolicy::ByStartSequence { start_sequence: 7 },
            sample_frequency: 50,
            ..Default::default()
        };
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["deliver_policy"], "by_start_sequence");
        assert_eq!(json["opt_start_seq"], 7);
        assert_eq!(json["sample_freq"], "50");
        assert_eq!(json["ack_policy"], "explicit");
        assert!(json.get("deliver_subject").is_none());
        let back: Config = serde_json::from_value(json).unwrap();
        assert_eq!(back, config);
    }

    #[test]
    fn decodes_the_servers_config_with_nulls_and_percent() {
        let json = r#"{"durable_name":"d","deliver_policy":"by_start_time",
            "opt_start_time":"2024-05-01T10:00:00Z","ack_policy":"none","ack_wait":30000000000,
            "max_deliver":-1,"replay_policy":"instant","sample_freq":"25%","max_waiting":512,
            "max_ack_pending":1000,"num_replicas":0,"metadata":null,"filter_subjects":null,
            "backoff":null,"priority_policy":"pinned_client","priority_groups":["A"]}"#;
        let config: Config = serde_json::from_str(json).unwrap();
        assert!(matches!(
            config.deliver_policy,
            DeliverPolicy::ByStartTime { .. }
        ));
        assert_eq!(config.ack_policy, AckPolicy::None);
        assert_eq!(config.ack_wait, Duration::from_secs(30));
        assert_eq!(config.sample_frequency, 25);
        assert_eq!(config.priority_policy, PriorityPolicy::PinnedClient);
        assert!(config.metadata.is_empty());
    }

    #[test]
    fn go_zero_time_is_no_pin() {
        let json = r#"{"group":"A","pinned_ts":"0001-01-01T00:00:00Z"}"#;
        let state: PriorityGroupState = serde_json::from_str(json).unwrap();
        assert_eq!(state.pinned_ts, None);
    }
}
