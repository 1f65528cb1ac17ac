//! A stream's configuration as the server's `StreamConfig` JSON carries it, with the field
//! names async-nats gives it.

use std::collections::HashMap;
use std::time::Duration;

use rnats_core::datetime::DateTime;
use serde::{Deserialize, Deserializer, Serialize};

/// What a stream stores and how: subjects, limits, retention, storage, replication, sourcing.
/// Every field has a default, so a config is usually written as
/// `Config { name: .., subjects: .., ..Default::default() }`; a stream with no subjects
/// listens on its name.
#[derive(Debug, Default, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct Config {
    /// The stream's name: no spaces, `.`, `*`, `>`, path separators or control characters.
    pub name: String,
    /// Bytes the stream may hold before the discard policy applies (-1 or 0: no limit).
    #[serde(default)]
    pub max_bytes: i64,
    /// Messages the stream may hold before the discard policy applies (-1 or 0: no limit).
    #[serde(default, rename = "max_msgs")]
    pub max_messages: i64,
    /// Messages kept per subject (-1 or 0: no limit).
    #[serde(default, rename = "max_msgs_per_subject")]
    pub max_messages_per_subject: i64,
    /// What happens at a limit: drop the oldest messages, or refuse new ones.
    #[serde(default)]
    pub discard: DiscardPolicy,
    /// With [`DiscardPolicy::New`], refuse a message once its subject reaches
    /// `max_messages_per_subject`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub discard_new_per_subject: bool,
    /// The subjects stored, wildcards allowed; empty means the stream's name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
    /// When messages are removed: at the limits, once every interested consumer acked, or
    /// once one consumer acked (work queue).
    #[serde(default)]
    pub retention: RetentionPolicy,
    /// Consumers the stream may have (-1 or 0: no limit).
    #[serde(default)]
    pub max_consumers: i32,
    /// The oldest a message may get before it is removed (zero: no limit).
    #[serde(default, with = "crate::nanos")]
    pub max_age: Duration,
    /// The largest message accepted, in bytes (-1 or 0: no limit).
    #[serde(default, skip_serializing_if = "is_default", rename = "max_msg_size")]
    pub max_message_size: i32,
    /// File (the default) or memory.
    #[serde(default)]
    pub storage: StorageType,
    /// Copies of each message in a cluster, 1 to 5 (0: the server's default, 1).
    #[serde(default)]
    pub num_replicas: usize,
    /// Publishes to the stream get no ack.
    #[serde(default, skip_serializing_if = "is_default")]
    pub no_ack: bool,
    /// How long message ids are remembered to drop duplicates (zero: the server's 2 minutes).
    #[serde(default, skip_serializing_if = "is_default", with = "crate::nanos")]
    pub duplicate_window: Duration,
    /// The owner of the stream template this stream came from (templates are gone from
    /// current servers).
    #[serde(default, skip_serializing_if = "is_default")]
    pub template_owner: String,
    /// A sealed stream takes no messages and allows no deletes or purges; it cannot be
    /// unsealed.
    #[serde(default, skip_serializing_if = "is_default")]
    pub sealed: bool,
    /// What the stream is for, in words.
    #[serde(default, skip_serializing_if = "is_default")]
    pub description: Option<String>,
    /// Allows the `Nats-Rollup` header, which replaces a subject's (or the stream's) messages.
    #[serde(
        default,
        rename = "allow_rollup_hdrs",
        skip_serializing_if = "is_default"
    )]
    pub allow_rollup: bool,
    /// Refuses message deletes.
    #[serde(default, skip_serializing_if = "is_default")]
    pub deny_delete: bool,
    /// Refuses purges.
    #[serde(default, skip_serializing_if = "is_default")]
    pub deny_purge: bool,
    /// Republishes every stored message to another subject.
    #[serde(default, skip_serializing_if = "is_default")]
    pub republish: Option<Republish>,
    /// Lets any replica answer direct gets (ADR-31), not only the leader.
    #[serde(default, skip_serializing_if = "is_default")]
    pub allow_direct: bool,
    /// Lets this mirror answer direct gets for the stream it mirrors.
    #[serde(default, skip_serializing_if = "is_default")]
    pub mirror_direct: bool,
    /// The stream this one mirrors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<Source>,
    /// The streams this one sources messages from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<Source>>,
    /// The user's own key-value metadata.
    #[serde(default, skip_serializing_if = "is_default")]
    pub metadata: HashMap<String, String>,
    /// Rewrites the subject of incoming messages before they are stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_transform: Option<SubjectTransform>,
    /// Storage compression; `None` keeps the server's choice, `Some(Compression::None)`
    /// turns it off explicitly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<Compression>,
    /// Upper bounds for the consumers created on this stream.
    #[serde(
        default,
        deserialize_with = "empty_limits_as_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub consumer_limits: Option<ConsumerLimits>,
    /// The sequence the stream's first message gets.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "first_seq")]
    pub first_sequence: Option<u64>,
    /// Which cluster, or servers with which tags, hold the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// How writes are made durable: flushed before the ack (the default) or asynchronously.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persist_mode: Option<PersistenceMode>,
    /// A time until which the stream is paused (async-nats carries it; servers do not act
    /// on it for streams).
    #[serde(
        default,
        with = "rnats_core::datetime::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub pause_until: Option<DateTime>,
    /// Allows a per-message TTL through the `Nats-TTL` header.
    #[serde(default, skip_serializing_if = "is_default", rename = "allow_msg_ttl")]
    pub allow_message_ttl: bool,
    /// Leaves a delete marker, kept this long, when max age removes a subject's last
    /// message.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::nanos::option"
    )]
    pub subject_delete_marker_ttl: Option<Duration>,
    /// Allows atomic batch publishes (ADR-50).
    #[serde(default, skip_serializing_if = "is_default", rename = "allow_atomic")]
    pub allow_atomic_publish: bool,
    /// Allows scheduled messages (ADR-51).
    #[serde(
        default,
        skip_serializing_if = "is_default",
        rename = "allow_msg_schedules"
    )]
    pub allow_message_schedules: bool,
    /// Makes the stream a counter stream (`Nats-Incr`, ADR-49).
    #[serde(
        default,
        skip_serializing_if = "is_default",
        rename = "allow_msg_counter"
    )]
    pub allow_message_counter: bool,
    /// Allows fast-ingest batch publishes (ADR-50).
    #[serde(default, skip_serializing_if = "is_default", rename = "allow_batched")]
    pub allow_batch_publish: bool,
}

impl From<&Config> for Config {
    fn from(config: &Config) -> Config {
        config.clone()
    }
}

impl From<&str> for Config {
    fn from(name: &str) -> Config {
        Config {
            name: name.to_owned(),
            ..Default::default()
        }
    }
}

impl From<String> for Config {
    fn from(name: String) -> Config {
        Config {
            name,
            ..Default::default()
        }
    }
}

/// Upper bounds the stream puts on its consumers' settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ConsumerLimits {
    /// The longest inactive threshold a consumer may have.
    #[serde(default, with = "crate::nanos")]
    pub inactive_threshold: Duration,
    /// The most acks a consumer may have pending.
    #[serde(default)]
    pub max_ack_pending: i64,
}

/// Storage compression of a stream.
#[derive(Serialize, Deserialize, Debug, Clone, Eq, PartialEq)]
pub enum Compression {
    /// S2 compression.
    #[serde(rename = "s2")]
    S2,
    /// No compression.
    #[serde(rename = "none")]
    None,
}

/// Rewrites subjects matching `source` to `destination` (mapping syntax, `{{wildcard(1)}}`).
#[derive(Serialize, Deserialize, Debug, Clone, Eq, PartialEq)]
pub struct SubjectTransform {
    /// The subjects transformed.
    #[serde(rename = "src")]
    pub source: String,
    /// What they become.
    #[serde(rename = "dest")]
    pub destination: String,
}

/// Republishes stored messages whose subject matches `source` to `destination`.
#[derive(Serialize, Deserialize, Debug, Clone, Eq, PartialEq)]
pub struct Republish {
    /// The subjects republished.
    #[serde(rename = "src")]
    pub source: String,
    /// Where they are republished.
    #[serde(rename = "dest")]
    pub destination: String,
    /// Republish the headers only, with the payload's size in `Nats-Msg-Size`.
    #[serde(default)]
    pub headers_only: bool,
}

/// Where a stream is placed: a cluster, and servers carrying all these tags.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Placement {
    /// The cluster.
    #[serde(default, skip_serializing_if = "is_default")]
    pub cluster: Option<String>,
    /// Tags the servers must have.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tags: Vec<String>,
}

/// What a stream does when a limit is reached.
#[derive(Default, Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum DiscardPolicy {
    /// Remove the oldest messages to make room (the default).
    #[default]
    #[serde(rename = "old")]
    Old = 0,
    /// Refuse the new message.
    #[serde(rename = "new")]
    New = 1,
}

/// When a stream removes messages.
#[derive(Default, Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RetentionPolicy {
    /// At the limits of count, size or age (the default).
    #[default]
    #[serde(rename = "limits")]
    Limits = 0,
    /// Once every consumer interested in the message acked it.
    #[serde(rename = "interest")]
    Interest = 1,
    /// Once one consumer acked it; consumers may not overlap.
    #[serde(rename = "workqueue")]
    WorkQueue = 2,
}

/// Where a stream keeps its messages.
#[derive(Default, Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum StorageType {
    /// In files (the default).
    #[default]
    #[serde(rename = "file")]
    File = 0,
    /// In memory only.
    #[serde(rename = "memory")]
    Memory = 1,
}

/// How a stream makes its writes durable.
#[derive(Default, Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PersistenceMode {
    /// Flushed before the publish is acked (the default).
    #[default]
    #[serde(rename = "default")]
    Default = 0,
    /// Flushed in the background; an ack may come before the write is on disk.
    #[serde(rename = "async")]
    Async = 1,
}

/// A stream to mirror or source from, and which of its messages.
#[derive(Clone, Debug, Serialize, Deserialize, Eq, PartialEq, Default)]
pub struct Source {
    /// The stream's name.
    pub name: String,
    /// Start at this sequence.
    #[serde(default, rename = "opt_start_seq", skip_serializing_if = "is_default")]
    pub start_sequence: Option<u64>,
    /// Start at this time.
    #[serde(
        default,
        rename = "opt_start_time",
        skip_serializing_if = "is_default",
        with = "rnats_core::datetime::rfc3339::option"
    )]
    pub start_time: Option<DateTime>,
    /// Take only the messages on these subjects.
    #[serde(default, skip_serializing_if = "is_default")]
    pub filter_subject: Option<String>,
    /// The API and deliver prefixes of a stream in another account or domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<External>,
    /// The JetStream domain the stream is in; `create_stream` turns it into `external`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub domain: Option<String>,
    /// Filters with transforms, instead of `filter_subject`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub subject_transforms: Vec<SubjectTransform>,
    /// A durable consumer, created beforehand, to source through instead of an ephemeral one
    /// the server manages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer: Option<StreamConsumerSource>,
}

/// The durable (push) consumer a source or mirror reads through.
#[derive(Clone, Debug, Serialize, Deserialize, Eq, PartialEq, Default)]
pub struct StreamConsumerSource {
    /// The consumer's name.
    #[serde(default, skip_serializing_if = "is_default")]
    pub name: String,
    /// The consumer's deliver subject.
    #[serde(default, skip_serializing_if = "is_default")]
    pub deliver_subject: String,
}

impl StreamConsumerSource {
    /// The consumer `name` delivering to `deliver_subject`; the server needs both.
    pub fn new(name: impl Into<String>, deliver_subject: impl Into<String>) -> Self {
        StreamConsumerSource {
            name: name.into(),
            deliver_subject: deliver_subject.into(),
        }
    }
}

/// How to reach a stream in another account or domain.
#[derive(Clone, Debug, Serialize, Deserialize, Eq, PartialEq, Default)]
pub struct External {
    /// The API prefix of its JetStream, e.g. `$JS.hub.API`.
    #[serde(rename = "api")]
    pub api_prefix: String,
    /// The prefix its messages are delivered under.
    #[serde(default, rename = "deliver", skip_serializing_if = "is_default")]
    pub delivery_prefix: Option<String>,
}

/// Whether `value` is its type's default, so the field can be left out of the JSON.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// The server always sends `consumer_limits`, `{}` when none are set; that reads as `None`.
fn empty_limits_as_none<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ConsumerLimits>, D::Error> {
    let limits = Option::<ConsumerLimits>::deserialize(deserializer)?;
    Ok(limits.filter(|limits| *limits != ConsumerLimits::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_config_round_trips() {
        let config = Config::from("ORDERS");
        let json = serde_json::to_string(&config).unwrap();
        assert_eq!(serde_json::from_str::<Config>(&json).unwrap(), config);
    }

    #[test]
    fn uses_the_servers_field_names() {
        let config = Config {
            name: "S".into(),
            max_messages: 10,
            max_messages_per_subject: 2,
            max_message_size: 1024,
            allow_rollup: true,
            allow_message_ttl: true,
            first_sequence: Some(5),
            subject_delete_marker_ttl: Some(Duration::from_secs(1)),
            duplicate_window: Duration::from_millis(500),
            compression: Some(Compression::S2),
            ..Default::default()
        };
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["max_msgs"], 10);
        assert_eq!(json["max_msgs_per_subject"], 2);
        assert_eq!(json["max_msg_size"], 1024);
        assert_eq!(json["allow_rollup_hdrs"], true);
        assert_eq!(json["allow_msg_ttl"], true);
        assert_eq!(json["first_seq"], 5);
        assert_eq!(json["subject_delete_marker_ttl"], 1_000_000_000);
        assert_eq!(json["duplicate_window"], 500_000_000);
        assert_eq!(json["compression"], "s2");
        assert_eq!(json["storage"], "file");
        assert!(json.get("sources").is_none());
    }

    #[test]
    fn empty_consumer_limits_read_as_none() {
        let json = r#"{"name":"S","consumer_limits":{},"retention":"workqueue"}"#;
        let config: Config = serde_json::from_str(json).unwrap();
        assert_eq!(config.consumer_limits, None);
        assert_eq!(config.retention, RetentionPolicy::WorkQueue);
    }
}
