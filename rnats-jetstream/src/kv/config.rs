//! A bucket's configuration, and the stream config the reference clients build from it
//! (ADR-8): `KV_<bucket>` on `$KV.<bucket>.>`, one subject per key, history as the
//! per-subject limit, rollups on, deletes refused, new messages refused at the limits, direct
//! gets on.

use std::collections::HashMap;
use std::time::Duration;

use crate::stream::{self, Compression, DiscardPolicy, Republish, Source, StorageType};

/// The most values a bucket keeps per key.
pub(crate) const MAX_HISTORY: i64 = 64;

/// The duplicate window of a bucket's stream, unless `max_age` is shorter.
const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

/// A bucket's configuration. Every field has a default, so a config is written as
/// `Config { bucket: .., history: .., ..Default::default() }`.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The bucket's name: `A-Z a-z 0-9 _ -`.
    pub bucket: String,
    /// What the bucket is for, in words.
    pub description: String,
    /// The largest value accepted, in bytes (0: no limit).
    pub max_value_size: i32,
    /// Values kept per key, 1 to 64 (0: 1).
    pub history: i64,
    /// How long a value is kept (zero: for ever).
    pub max_age: Duration,
    /// Bytes the bucket may hold (0: no limit).
    pub max_bytes: i64,
    /// File (the default) or memory.
    pub storage: StorageType,
    /// Copies of each value in a cluster (0: 1).
    pub num_replicas: usize,
    /// Republishes every stored value to another subject.
    pub republish: Option<Republish>,
    /// The bucket this one mirrors (a bare bucket name gets its `KV_` prefix).
    pub mirror: Option<Source>,
    /// The buckets this one sources values from (bare names get their `KV_` prefix).
    pub sources: Option<Vec<Source>>,
    /// Lets this mirror answer direct gets for the bucket it mirrors (set for every mirror).
    pub mirror_direct: bool,
    /// Compresses the stored values (S2).
    pub compression: bool,
    /// Which cluster, or servers with which tags, hold the bucket.
    pub placement: Option<stream::Placement>,
    /// Leaves a marker, kept this long, when a value ages out or is purged with a TTL, and
    /// allows per-key TTLs (ADR-48; nats-server 2.11 or later).
    pub limit_markers: Option<Duration>,
    /// The user's own key-value metadata, kept on the bucket's stream (nats-server 2.10+).
    pub metadata: HashMap<String, String>,
}

/// Why a config cannot become a stream config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigError {
    /// `history` is over [`MAX_HISTORY`].
    TooLongHistory,
    /// `limit_markers` is set but the server's API level is below 1 (before 2.11).
    LimitMarkersNotSupported,
}

impl Config {
    /// The stream config of this bucket, for a server speaking API level `api_level`.
    pub(crate) fn to_stream_config(&self, api_level: usize) -> Result<stream::Config, ConfigError> {
        let history = match self.history {
            history if history > MAX_HISTORY => return Err(ConfigError::TooLongHistory),
            history if history < 1 => 1,
            history => history,
        };
        let (allow_message_ttl, subject_delete_marker_ttl) = match self.limit_markers {
            Some(_) if api_level < 1 => return Err(ConfigError::LimitMarkersNotSupported),
            Some(ttl) => (true, Some(ttl)),
            None => (false, None),
        };
        let duplicate_window = match self.max_age {
            age if !age.is_zero() && age < DUPLICATE_WINDOW => age,
            _ => DUPLICATE_WINDOW,
        };
        let subjects_of = |bucket: &str| vec![format!("$KV.{bucket}.>")];
        let (subjects, mirror, sources) = match (&self.mirror, &self.sources) {
            // A mirror takes the subjects of what it mirrors and has none of its own.
            (Some(mirror), _) => {
                let mirror = Source {
                    name: stream_name_of(&mirror.name),
                    ..mirror.clone()
                };
                (Vec::new(), Some(mirror), None)
            }
            (None, Some(sources)) => {
                let sources = sources.iter().map(|source| self.sourced(source)).collect();
                (subjects_of(&self.bucket), None, Some(sources))
            }
            (None, None) => (subjects_of(&self.bucket), None, None),
        };
        Ok(stream::Config {
            name: stream_name_of(&self.bucket),
            description: (!self.description.is_empty()).then(|| self.description.clone()),
            subjects,
            max_messages_per_subject: history,
            max_messages: -1,
            max_consumers: -1,
            max_bytes: if self.max_bytes == 0 {
                -1
            } else {
                self.max_bytes
            },
            max_age: self.max_age,
            max_message_size: if self.max_value_size == 0 {
                -1
            } else {
                self.max_value_size
            },
            storage: self.storage,
            num_replicas: self.num_replicas.max(1),
            republish: self.republish.clone(),
            allow_rollup: true,
            deny_delete: true,
            deny_purge: false,
            allow_direct: true,
            discard: DiscardPolicy::New,
            duplicate_window,
            mirror_direct: mirror.is_some() || self.mirror_direct,
            mirror,
            sources,
            compression: self.compression.then_some(Compression::S2),
            placement: self.placement.clone(),
            allow_message_ttl,
            subject_delete_marker_ttl,
            metadata: self.metadata.clone(),
            ..Default::default()
        })
    }

    /// `source` as this bucket sources it (ADR-57). With subject transforms of its own it is
    /// taken as given, name and all: a stream that is not a bucket (`events.>` into
    /// `$KV.<bucket>.>`), or keys mapped as the user says. Otherwise it is a bucket: named by
    /// its stream, and (as nats.go does) with its keys moved into this bucket's subjects unless
    /// it is this bucket's namesake in another domain.
    fn sourced(&self, source: &Source) -> Source {
        if !source.subject_transforms.is_empty() {
            return source.clone();
        }
        let bucket = source.name.strip_prefix("KV_").unwrap_or(&source.name);
        let mut sourced = Source {
            name: stream_name_of(bucket),
            ..source.clone()
        };
        if source.external.is_none() || bucket != self.bucket {
            sourced.subject_transforms = vec![stream::SubjectTransform {
                source: format!("$KV.{bucket}.>"),
                destination: format!("$KV.{}.>", self.bucket),
            }];
        }
        sourced
    }
}

/// The stream behind bucket `bucket` (or `bucket` itself if it already has the prefix).
pub(crate) fn stream_name_of(bucket: &str) -> String {
    if bucket.starts_with("KV_") {
        bucket.to_owned()
    } else {
        format!("KV_{bucket}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_becomes_the_reference_stream() {
        let config = Config {
            bucket: "profiles".into(),
            history: 5,
            max_age: Duration::from_secs(30),
            ..Default::default()
        };
        let stream = config.to_stream_config(0).unwrap();
        assert_eq!(stream.name, "KV_profiles");
        assert_eq!(stream.subjects, ["$KV.profiles.>"]);
        assert_eq!(stream.max_messages_per_subject, 5);
        assert_eq!(stream.duplicate_window, Duration::from_secs(30));
        assert_eq!(stream.discard, DiscardPolicy::New);
        assert_eq!((stream.max_bytes, stream.max_message_size), (-1, -1));
        assert!(stream.allow_rollup && stream.deny_delete && stream.allow_direct);
        assert!(!stream.deny_purge && !stream.allow_message_ttl);
        assert_eq!(stream.num_replicas, 1);

        let long = Config {
            max_age: Duration::from_secs(3600),
            ..config.clone()
        };
        assert_eq!(
            long.to_stream_config(0).unwrap().duplicate_window,
            DUPLICATE_WINDOW
        );
        let too_long = Config {
            history: 65,
            ..config.clone()
        };
        assert_eq!(
            too_long.to_stream_config(0).unwrap_err(),
            ConfigError::TooLongHistory
        );
    }

    #[test]
    fn limit_markers_need_api_level_1() {
        let config = Config {
            bucket: "ttl".into(),
            limit_markers: Some(Duration::from_secs(5)),
            ..Default::default()
        };
        assert_eq!(
            config.to_stream_config(0).unwrap_err(),
            ConfigError::LimitMarkersNotSupported
        );
        let stream = config.to_stream_config(1).unwrap();
        assert!(stream.allow_message_ttl);
        assert_eq!(
            stream.subject_delete_marker_ttl,
            Some(Duration::from_secs(5))
        );
    }

    #[test]
    fn sources_with_transforms_of_their_own_are_kept_as_given() {
        let custom = stream::SubjectTransform {
            source: "events.processed.>".into(),
            destination: "$KV.cache.>".into(),
        };
        let config = Config {
            bucket: "cache".into(),
            sources: Some(vec![
                Source {
                    name: "EVENTS".into(),
                    subject_transforms: vec![custom.clone()],
                    ..Default::default()
                },
                Source {
                    name: "other".into(),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        };
        let stream = config.to_stream_config(0).unwrap();
        let sources = stream.sources.unwrap();
        assert_eq!(sources[0].name, "EVENTS", "not a bucket: no KV_ prefix");
        assert_eq!(sources[0].subject_transforms, [custom]);
        assert_eq!(sources[1].name, "KV_other");
        assert_eq!(sources[1].subject_transforms[0].source, "$KV.other.>");
    }

    #[test]
    fn mirrors_and_sources_get_their_stream_names_and_transforms() {
        let mirror = Config {
            bucket: "copy".into(),
            mirror: Some(Source {
                name: "origin".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let stream = mirror.to_stream_config(0).unwrap();
        assert_eq!(stream.mirror.unwrap().name, "KV_origin");
        assert!(stream.subjects.is_empty() && stream.mirror_direct);

        let sourced = Config {
            bucket: "all".into(),
            sources: Some(vec![Source {
                name: "KV_a".into(),
                ..Default::default()
            }]),
            ..Default::default()
        };
        let stream = sourced.to_stream_config(0).unwrap();
        assert_eq!(stream.subjects, ["$KV.all.>"]);
        let source = &stream.sources.unwrap()[0];
        assert_eq!(source.name, "KV_a");
        assert_eq!(source.subject_transforms[0].source, "$KV.a.>");
        assert_eq!(source.subject_transforms[0].destination, "$KV.all.>");
    }
}
