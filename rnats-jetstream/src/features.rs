//! What the connected server can do, judged by its version (ADR-44).
//!
//! A nats-server older than a feature does not refuse a request that uses it: it drops the
//! JSON fields it does not know and goes on, so a stream asked for per-message TTLs or
//! compression is created without them and nothing says so. rnats checks the features a
//! request needs against the version the connected server announced in its `INFO` and fails
//! before sending, with [`Unsupported`] as the error's source.
//!
//! The connected server stands in for the cluster, which ADR-44 admits is an approximation
//! (a leaf node or a mixed-version cluster during an upgrade can differ). For a firmer
//! promise, [`ContextBuilder::required_api_level`](crate::ContextBuilder::required_api_level)
//! asks the responding server itself to check the API level (the `Nats-Required-Api-Level`
//! header, nats-server 2.12 and later), and [`Account::requests`](crate::account::Account::requests) reports
//! the level a server speaks.

use std::fmt;
use std::str::FromStr;

/// A nats-server release, as `major.minor.patch`; pre-release tags (`-RC.1`) are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerVersion {
    /// The major version.
    pub major: u32,
    /// The minor version.
    pub minor: u32,
    /// The patch version.
    pub patch: u32,
}

impl ServerVersion {
    /// The version `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> ServerVersion {
        ServerVersion {
            major,
            minor,
            patch,
        }
    }
}

impl fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A version string that is not `major.minor.patch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseVersionError(String);

impl fmt::Display for ParseVersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a server version: {:?}", self.0)
    }
}

impl std::error::Error for ParseVersionError {}

impl FromStr for ServerVersion {
    type Err = ParseVersionError;

    fn from_str(text: &str) -> Result<ServerVersion, ParseVersionError> {
        let invalid = || ParseVersionError(text.to_owned());
        let core = text.trim().trim_start_matches('v');
        let core = core.split(['-', '+']).next().unwrap_or_default();
        let mut parts = core
            .split('.')
            .map(|p| p.parse::<u32>().map_err(|_| invalid()));
        let major = parts.next().ok_or_else(invalid)??;
        let minor = parts.next().ok_or_else(invalid)??;
        let patch = parts.next().ok_or_else(invalid)??;
        if parts.next().is_some() {
            return Err(invalid());
        }
        Ok(ServerVersion::new(major, minor, patch))
    }
}

/// A JetStream capability that older servers silently ignore, with the release that brought it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// `metadata` on streams and consumers (ADR-33).
    Metadata,
    /// Stream `compression`.
    Compression,
    /// Stream `subject_transform` and transforms on sources.
    SubjectTransforms,
    /// Stream `first_seq`.
    FirstSequence,
    /// More than one consumer filter subject (ADR-34).
    MultipleFilterSubjects,
    /// Create-only and update-only consumer requests.
    ConsumerActions,
    /// Pausing consumers (`pause_until`, `CONSUMER.PAUSE`).
    ConsumerPause,
    /// Choosing where a stream's or consumer's leader goes on a step-down: a preferred
    /// server, a cluster or tags (`LeaderPlacement`).
    LeaderPlacement,
    /// Pull consumer priority groups: overflow and pinned clients (ADR-42).
    PriorityGroups,
    /// Per-message TTLs: stream `allow_msg_ttl` and the `Nats-TTL` header (ADR-43).
    MessageTtl,
    /// Delete markers for expired subjects: `subject_delete_marker_ttl` (ADR-43).
    SubjectDeleteMarkers,
    /// Atomic batch publishing: stream `allow_atomic` (ADR-50).
    AtomicPublish,
    /// Distributed counters: stream `allow_msg_counter` (ADR-49).
    MessageCounters,
    /// Scheduled messages: stream `allow_msg_schedules` (ADR-51).
    MessageSchedules,
    /// Asynchronous stream persistence: stream `persist_mode`.
    PersistMode,
    /// The `Nats-Required-Api-Level` header on API requests (ADR-44).
    RequiredApiLevel,
    /// Fast batch publishing: stream `allow_batched` (ADR-50).
    BatchPublish,
    /// Committing an atomic batch without a message (`Nats-Batch-Commit: eob`, ADR-50).
    AtomicCommitEob,
    /// Cron schedules in a time zone (`Nats-Schedule-Time-Zone`, ADR-51).
    ScheduleTimeZones,
    /// Rolling up a schedule's target (`Nats-Schedule-Rollup`, ADR-51).
    ScheduleRollup,
}

impl Feature {
    /// The first nats-server release with the feature.
    pub const fn min_version(self) -> ServerVersion {
        match self {
            Feature::Metadata
            | Feature::Compression
            | Feature::SubjectTransforms
            | Feature::FirstSequence
            | Feature::MultipleFilterSubjects
            | Feature::ConsumerActions => ServerVersion::new(2, 10, 0),
            Feature::ConsumerPause
            | Feature::LeaderPlacement
            | Feature::PriorityGroups
            | Feature::MessageTtl
            | Feature::SubjectDeleteMarkers => ServerVersion::new(2, 11, 0),
            Feature::AtomicPublish
            | Feature::MessageCounters
            | Feature::MessageSchedules
            | Feature::PersistMode
            | Feature::RequiredApiLevel => ServerVersion::new(2, 12, 0),
            Feature::BatchPublish
            | Feature::AtomicCommitEob
            | Feature::ScheduleTimeZones
            | Feature::ScheduleRollup => ServerVersion::new(2, 14, 0),
        }
    }

    /// Whether a server of `version` has the feature.
    pub fn is_supported_by(self, version: ServerVersion) -> bool {
        version >= self.min_version()
    }

    fn describe(self) -> &'static str {
        match self {
            Feature::Metadata => "stream and consumer metadata",
            Feature::Compression => "stream compression",
            Feature::SubjectTransforms => "subject transforms",
            Feature::FirstSequence => "a stream's first sequence",
            Feature::MultipleFilterSubjects => "several consumer filter subjects",
            Feature::ConsumerActions => "create-only and update-only consumer requests",
            Feature::ConsumerPause => "pausing consumers",
            Feature::LeaderPlacement => "placing a leader on step-down",
            Feature::PriorityGroups => "consumer priority groups",
            Feature::MessageTtl => "per-message TTLs",
            Feature::SubjectDeleteMarkers => "subject delete markers",
            Feature::AtomicPublish => "atomic batch publishing",
            Feature::MessageCounters => "message counters",
            Feature::MessageSchedules => "message schedules",
            Feature::PersistMode => "stream persist modes",
            Feature::RequiredApiLevel => "required API levels",
            Feature::BatchPublish => "fast batch publishing",
            Feature::AtomicCommitEob => "committing a batch without a message",
            Feature::ScheduleTimeZones => "schedule time zones",
            Feature::ScheduleRollup => "schedule rollups",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// A request needs a feature the connected server is too old for; nothing was sent. Reach it
/// with `err.downcast_source::<Unsupported>()` on the operation's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// What the request needed.
    pub feature: Feature,
    /// The connected server's version.
    pub server: ServerVersion,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs nats-server {} or later; the connected server is {}",
            self.feature,
            self.feature.min_version(),
            self.server
        )
    }
}

impl std::error::Error for Unsupported {}

/// The first of `needed` that a server of `version` lacks. An unknown version (a server that
/// announced none we can read) lacks nothing: we cannot judge, and the server has the last word.
pub(crate) fn first_missing(
    version: Option<ServerVersion>,
    needed: impl IntoIterator<Item = Feature>,
) -> Result<(), Unsupported> {
    let Some(server) = version else {
        return Ok(());
    };
    match needed.into_iter().find(|f| !f.is_supported_by(server)) {
        Some(feature) => Err(Unsupported { feature, server }),
        None => Ok(()),
    }
}

/// The features a stream configuration uses that an older server would drop without a word.
pub(crate) fn stream_features(config: &crate::stream::Config) -> Vec<Feature> {
    use crate::stream::Compression;
    let sources = config.mirror.iter().chain(config.sources.iter().flatten());
    let transformed_sources = sources
        .clone()
        .any(|source| !source.subject_transforms.is_empty());
    let checks = [
        (!config.metadata.is_empty(), Feature::Metadata),
        (
            matches!(config.compression, Some(Compression::S2)),
            Feature::Compression,
        ),
        (
            config.subject_transform.is_some() || transformed_sources,
            Feature::SubjectTransforms,
        ),
        (
            config.first_sequence.is_some_and(|s| s > 1),
            Feature::FirstSequence,
        ),
        (config.allow_message_ttl, Feature::MessageTtl),
        (
            config.subject_delete_marker_ttl.is_some(),
            Feature::SubjectDeleteMarkers,
        ),
        (config.allow_atomic_publish, Feature::AtomicPublish),
        (config.allow_message_counter, Feature::MessageCounters),
        (config.allow_message_schedules, Feature::MessageSchedules),
        (
            config
                .persist_mode
                .as_ref()
                .is_some_and(|mode| *mode != crate::stream::PersistenceMode::Default),
            Feature::PersistMode,
        ),
        (config.allow_batch_publish, Feature::BatchPublish),
    ];
    checks
        .into_iter()
        .filter_map(|(used, feature)| used.then_some(feature))
        .collect()
}

/// The features a consumer configuration uses that an older server would drop without a word.
pub(crate) fn consumer_features(config: &crate::consumer::Config) -> Vec<Feature> {
    use crate::consumer::PriorityPolicy;
    let checks = [
        (!config.metadata.is_empty(), Feature::Metadata),
        // Even one entry: an older server drops the list and the consumer sees every subject.
        (
            !config.filter_subjects.is_empty(),
            Feature::MultipleFilterSubjects,
        ),
        (config.pause_until.is_some(), Feature::ConsumerPause),
        (
            config.priority_policy != PriorityPolicy::None || !config.priority_groups.is_empty(),
            Feature::PriorityGroups,
        ),
    ];
    checks
        .into_iter()
        .filter_map(|(used, feature)| used.then_some(feature))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_with_and_without_decorations() {
        assert_eq!("2.15.1".parse(), Ok(ServerVersion::new(2, 15, 1)));
        assert_eq!("v2.11.0-RC.3".parse(), Ok(ServerVersion::new(2, 11, 0)));
        assert_eq!("2.10.4+build.7".parse(), Ok(ServerVersion::new(2, 10, 4)));
        for bad in ["", "2", "2.10", "2.x.1", "2.10.1.5", "latest"] {
            assert!(bad.parse::<ServerVersion>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn versions_order_numerically() {
        let v = |s: &str| s.parse::<ServerVersion>().unwrap();
        assert!(v("2.10.0") > v("2.9.25"));
        assert!(v("2.11.0") > v("2.10.26"));
        assert!(v("3.0.0") > v("2.99.99"));
    }

    #[test]
    fn features_are_judged_against_their_release() {
        let v2_10 = ServerVersion::new(2, 10, 22);
        assert!(Feature::MultipleFilterSubjects.is_supported_by(v2_10));
        assert!(!Feature::MessageTtl.is_supported_by(v2_10));
        assert!(Feature::MessageTtl.is_supported_by(ServerVersion::new(2, 11, 0)));
        let err =
            first_missing(Some(v2_10), [Feature::Metadata, Feature::ConsumerPause]).unwrap_err();
        assert_eq!(err.feature, Feature::ConsumerPause);
        assert_eq!(
            err.to_string(),
            "pausing consumers needs nats-server 2.11.0 or later; the connected server is 2.10.22"
        );
        assert_eq!(first_missing(None, [Feature::BatchPublish]), Ok(()));
    }

    #[test]
    fn configs_name_the_features_they_use() {
        let plain = crate::stream::Config {
            name: "plain".into(),
            ..Default::default()
        };
        assert!(stream_features(&plain).is_empty());
        let ttl = crate::stream::Config {
            allow_message_ttl: true,
            compression: Some(crate::stream::Compression::S2),
            ..plain.clone()
        };
        assert_eq!(
            stream_features(&ttl),
            [Feature::Compression, Feature::MessageTtl]
        );
        // Turning compression off explicitly is understood by every server.
        let off = crate::stream::Config {
            compression: Some(crate::stream::Compression::None),
            ..plain
        };
        assert!(stream_features(&off).is_empty());

        let consumer = crate::consumer::Config {
            filter_subjects: vec!["a".into()],
            ..Default::default()
        };
        assert_eq!(
            consumer_features(&consumer),
            [Feature::MultipleFilterSubjects]
        );
        assert!(consumer_features(&crate::consumer::Config::default()).is_empty());
    }
}
