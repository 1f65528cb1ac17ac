//! The errors the JetStream API answers with (ADR-7): an HTTP-like `code`, a JetStream
//! `err_code` naming the exact condition, and a description.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A JetStream API error code (`err_code`): which condition the server met. Compare it with
/// the associated constants, e.g. [`ErrorCode::STREAM_NOT_FOUND`].
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct ErrorCode(pub u64);

/// Defines the named codes; the numbers are nats-server's (`server/errors.json`).
macro_rules! error_codes {
    ($($(#[$meta:meta])* $name:ident = $code:literal,)+) => {
        impl ErrorCode {
            $($(#[$meta])* pub const $name: ErrorCode = ErrorCode($code);)+
        }
    };
}

error_codes! {
    /// Account resources exceeded.
    ACCOUNT_RESOURCES_EXCEEDED = 10002,
    /// Bad request.
    BAD_REQUEST = 10003,
    /// Cluster incomplete.
    CLUSTER_INCOMPLETE = 10004,
    /// Cluster no peers.
    CLUSTER_NO_PEERS = 10005,
    /// Cluster not active.
    CLUSTER_NOT_ACTIVE = 10006,
    /// Cluster not assigned.
    CLUSTER_NOT_ASSIGNED = 10007,
    /// Cluster not available.
    CLUSTER_NOT_AVAILABLE = 10008,
    /// Cluster not leader.
    CLUSTER_NOT_LEADER = 10009,
    /// Cluster required.
    CLUSTER_REQUIRED = 10010,
    /// Cluster tags.
    CLUSTER_TAGS = 10011,
    /// Consumer create.
    CONSUMER_CREATE = 10012,
    /// Consumer name exist.
    CONSUMER_NAME_EXIST = 10013,
    /// Consumer not found.
    CONSUMER_NOT_FOUND = 10014,
    /// Snapshot deliver subject invalid.
    SNAPSHOT_DELIVER_SUBJECT_INVALID = 10015,
    /// Consumer durable name not in subject.
    CONSUMER_DURABLE_NAME_NOT_IN_SUBJECT = 10016,
    /// Consumer durable name not match subject.
    CONSUMER_DURABLE_NAME_NOT_MATCH_SUBJECT = 10017,
    /// Consumer durable name not set.
    CONSUMER_DURABLE_NAME_NOT_SET = 10018,
    /// Consumer ephemeral with durable.
    CONSUMER_EPHEMERAL_WITH_DURABLE = 10019,
    /// Consumer ephemeral with durable name.
    CONSUMER_EPHEMERAL_WITH_DURABLE_NAME = 10020,
    /// Stream external API overlap.
    STREAM_EXTERNAL_API_OVERLAP = 10021,
    /// Stream external delete prefix overlaps.
    STREAM_EXTERNAL_DELETE_PREFIX_OVERLAPS = 10022,
    /// Insufficient resources.
    INSUFFICIENT_RESOURCES = 10023,
    /// Stream invalid external delivery subject.
    STREAM_INVALID_EXTERNAL_DELIVERY_SUBJECT = 10024,
    /// Invalid json.
    INVALID_JSON = 10025,
    /// Maximum consumers limit.
    MAXIMUM_CONSUMERS_LIMIT = 10026,
    /// Maximum streams limit.
    MAXIMUM_STREAMS_LIMIT = 10027,
    /// Memory resources exceeded.
    MEMORY_RESOURCES_EXCEEDED = 10028,
    /// Mirror consumer setup failed.
    MIRROR_CONSUMER_SETUP_FAILED = 10029,
    /// Mirror max message size too big.
    MIRROR_MAX_MESSAGE_SIZE_TOO_BIG = 10030,
    /// Mirror with sources.
    MIRROR_WITH_SOURCES = 10031,
    /// Mirror with start sequence and time.
    MIRROR_WITH_START_SEQUENCE_AND_TIME = 10032,
    /// Mirror with subject filters.
    MIRROR_WITH_SUBJECT_FILTERS = 10033,
    /// Mirror with subjects.
    MIRROR_WITH_SUBJECTS = 10034,
    /// No account.
    NO_ACCOUNT = 10035,
    /// Not supported in cluster mode.
    NOT_SUPPORTED_IN_CLUSTER_MODE = 10036,
    /// No message found.
    NO_MESSAGE_FOUND = 10037,
    /// Not empty request.
    NOT_EMPTY_REQUEST = 10038,
    /// JetStream not enabled for account.
    JETSTREAM_NOT_ENABLED_FOR_ACCOUNT = 10039,
    /// Cluster peer not member.
    CLUSTER_PEER_NOT_MEMBER = 10040,
    /// Raft general.
    RAFT_GENERAL = 10041,
    /// Restore subscribe failed.
    RESTORE_SUBSCRIBE_FAILED = 10042,
    /// Sequence not found.
    SEQUENCE_NOT_FOUND = 10043,
    /// Cluster server not member.
    CLUSTER_SERVER_NOT_MEMBER = 10044,
    /// Source consumer setup failed.
    SOURCE_CONSUMER_SETUP_FAILED = 10045,
    /// Source max message size too big.
    SOURCE_MAX_MESSAGE_SIZE_TOO_BIG = 10046,
    /// Storage resources exceeded.
    STORAGE_RESOURCES_EXCEEDED = 10047,
    /// Stream assignment.
    STREAM_ASSIGNMENT = 10048,
    /// Stream create.
    STREAM_CREATE = 10049,
    /// Stream delete.
    STREAM_DELETE = 10050,
    /// Stream generalor.
    STREAM_GENERALOR = 10051,
    /// Stream invalid config.
    STREAM_INVALID_CONFIG = 10052,
    /// Stream limits.
    STREAM_LIMITS = 10053,
    /// Stream message exceeds maximum.
    STREAM_MESSAGE_EXCEEDS_MAXIMUM = 10054,
    /// Stream mirror not updatable.
    STREAM_MIRROR_NOT_UPDATABLE = 10055,
    /// Stream mismatch.
    STREAM_MISMATCH = 10056,
    /// Stream message delete failed.
    STREAM_MESSAGE_DELETE_FAILED = 10057,
    /// Stream name exist.
    STREAM_NAME_EXIST = 10058,
    /// Stream not found.
    STREAM_NOT_FOUND = 10059,
    /// Stream not match.
    STREAM_NOT_MATCH = 10060,
    /// Stream replicas not updatable.
    STREAM_REPLICAS_NOT_UPDATABLE = 10061,
    /// Stream restore.
    STREAM_RESTORE = 10062,
    /// Stream sequence not match.
    STREAM_SEQUENCE_NOT_MATCH = 10063,
    /// Stream snapshot.
    STREAM_SNAPSHOT = 10064,
    /// Stream subject overlap.
    STREAM_SUBJECT_OVERLAP = 10065,
    /// Stream create template.
    STREAM_CREATE_TEMPLATE = 10066,
    /// Stream delete failed.
    STREAM_DELETE_FAILED = 10067,
    /// Stream template not found.
    STREAM_TEMPLATE_NOT_FOUND = 10068,
    /// Stream update.
    STREAM_UPDATE = 10069,
    /// Stream wrong last message ID.
    STREAM_WRONG_LAST_MESSAGE_ID = 10070,
    /// Stream wrong last sequence.
    STREAM_WRONG_LAST_SEQUENCE = 10071,
    /// Temp storage failed.
    TEMP_STORAGE_FAILED = 10072,
    /// Name not match subject.
    NAME_NOT_MATCH_SUBJECT = 10073,
    /// Stream replicas not supported.
    STREAM_REPLICAS_NOT_SUPPORTED = 10074,
    /// Peer remap.
    PEER_REMAP = 10075,
    /// JetStream not enabled.
    JETSTREAM_NOT_ENABLED = 10076,
    /// Stream store failed.
    STREAM_STORE_FAILED = 10077,
    /// Consumer config required.
    CONSUMER_CONFIG_REQUIRED = 10078,
    /// Consumer deliver to wildcards.
    CONSUMER_DELIVER_TO_WILDCARDS = 10079,
    /// Consumer push max waiting.
    CONSUMER_PUSH_MAX_WAITING = 10080,
    /// Consumer deliver cycle.
    CONSUMER_DELIVER_CYCLE = 10081,
    /// Consumer max pending ack policy required.
    CONSUMER_MAX_PENDING_ACK_POLICY_REQUIRED = 10082,
    /// Consumer small heartbeat.
    CONSUMER_SMALL_HEARTBEAT = 10083,
    /// Consumer pull requires ack.
    CONSUMER_PULL_REQUIRES_ACK = 10084,
    /// Consumer pull not durable.
    CONSUMER_PULL_NOT_DURABLE = 10085,
    /// Consumer pull with rate limit.
    CONSUMER_PULL_WITH_RATE_LIMIT = 10086,
    /// Consumer max waiting negative.
    CONSUMER_MAX_WAITING_NEGATIVE = 10087,
    /// Consumer heartbeat requires push.
    CONSUMER_HEARTBEAT_REQUIRES_PUSH = 10088,
    /// Consumer flow control requires push.
    CONSUMER_FLOW_CONTROL_REQUIRES_PUSH = 10089,
    /// Consumer direct requires push.
    CONSUMER_DIRECT_REQUIRES_PUSH = 10090,
    /// Consumer direct requires ephemeral.
    CONSUMER_DIRECT_REQUIRES_EPHEMERAL = 10091,
    /// Consumer on mapped.
    CONSUMER_ON_MAPPED = 10092,
    /// Consumer filter not subset.
    CONSUMER_FILTER_NOT_SUBSET = 10093,
    /// Consumer invalid policy.
    CONSUMER_INVALID_POLICY = 10094,
    /// Consumer invalid sampling.
    CONSUMER_INVALID_SAMPLING = 10095,
    /// Stream invalid.
    STREAM_INVALID = 10096,
    /// Stream header exceeds maximum.
    STREAM_HEADER_EXCEEDS_MAXIMUM = 10097,
    /// Consumer wq requires explicit ack.
    CONSUMER_WQ_REQUIRES_EXPLICIT_ACK = 10098,
    /// Consumer wq multiple unfiltered.
    CONSUMER_WQ_MULTIPLE_UNFILTERED = 10099,
    /// Consumer wq consumer not unique.
    CONSUMER_WQ_CONSUMER_NOT_UNIQUE = 10100,
    /// Consumer wq consumer not deliver all.
    CONSUMER_WQ_CONSUMER_NOT_DELIVER_ALL = 10101,
    /// Consumer name too long.
    CONSUMER_NAME_TOO_LONG = 10102,
    /// Consumer bad durable name.
    CONSUMER_BAD_DURABLE_NAME = 10103,
    /// Consumer store failed.
    CONSUMER_STORE_FAILED = 10104,
    /// Consumer existing active.
    CONSUMER_EXISTING_ACTIVE = 10105,
    /// Consumer replacement with different name.
    CONSUMER_REPLACEMENT_WITH_DIFFERENT_NAME = 10106,
    /// Consumer description too long.
    CONSUMER_DESCRIPTION_TOO_LONG = 10107,
    /// Consumer with flow control needs heartbeats.
    CONSUMER_WITH_FLOW_CONTROL_NEEDS_HEARTBEATS = 10108,
    /// Stream sealed.
    STREAM_SEALED = 10109,
    /// Stream purge failed.
    STREAM_PURGE_FAILED = 10110,
    /// Stream rollup failed.
    STREAM_ROLLUP_FAILED = 10111,
    /// Consumer invalid deliver subject.
    CONSUMER_INVALID_DELIVER_SUBJECT = 10112,
    /// Stream max bytes required.
    STREAM_MAX_BYTES_REQUIRED = 10113,
    /// Consumer max request batch negative.
    CONSUMER_MAX_REQUEST_BATCH_NEGATIVE = 10114,
    /// Consumer max request expires to small.
    CONSUMER_MAX_REQUEST_EXPIRES_TO_SMALL = 10115,
    /// Consumer max deliver backoff.
    CONSUMER_MAX_DELIVER_BACKOFF = 10116,
    /// Stream info max subjects.
    STREAM_INFO_MAX_SUBJECTS = 10117,
    /// Stream offline.
    STREAM_OFFLINE = 10118,
    /// Consumer offline.
    CONSUMER_OFFLINE = 10119,
    /// No limits.
    NO_LIMITS = 10120,
    /// Consumer max pending ack excess.
    CONSUMER_MAX_PENDING_ACK_EXCESS = 10121,
    /// Stream max stream bytes exceeded.
    STREAM_MAX_STREAM_BYTES_EXCEEDED = 10122,
    /// Stream move and scale.
    STREAM_MOVE_AND_SCALE = 10123,
    /// Stream move in progress.
    STREAM_MOVE_IN_PROGRESS = 10124,
    /// Consumer max request batch exceeded.
    CONSUMER_MAX_REQUEST_BATCH_EXCEEDED = 10125,
    /// Consumer replicas exceeds stream.
    CONSUMER_REPLICAS_EXCEEDS_STREAM = 10126,
    /// Consumer name contains path separators.
    CONSUMER_NAME_CONTAINS_PATH_SEPARATORS = 10127,
    /// Stream name contains path separators.
    STREAM_NAME_CONTAINS_PATH_SEPARATORS = 10128,
    /// Stream move not in progress.
    STREAM_MOVE_NOT_IN_PROGRESS = 10129,
    /// Stream name exist restore failed.
    STREAM_NAME_EXIST_RESTORE_FAILED = 10130,
    /// Consumer create filter subject mismatch.
    CONSUMER_CREATE_FILTER_SUBJECT_MISMATCH = 10131,
    /// Consumer create durable and name mismatch.
    CONSUMER_CREATE_DURABLE_AND_NAME_MISMATCH = 10132,
    /// Replicas count cannot be negative.
    REPLICAS_COUNT_CANNOT_BE_NEGATIVE = 10133,
    /// Consumer replicas should match stream.
    CONSUMER_REPLICAS_SHOULD_MATCH_STREAM = 10134,
    /// Consumer metadata length.
    CONSUMER_METADATA_LENGTH = 10135,
    /// Consumer duplicate filter subjects.
    CONSUMER_DUPLICATE_FILTER_SUBJECTS = 10136,
    /// Consumer multiple filters not allowed.
    CONSUMER_MULTIPLE_FILTERS_NOT_ALLOWED = 10137,
    /// Consumer overlapping subject filters.
    CONSUMER_OVERLAPPING_SUBJECT_FILTERS = 10138,
    /// Consumer empty filter.
    CONSUMER_EMPTY_FILTER = 10139,
    /// Source duplicate detected.
    SOURCE_DUPLICATE_DETECTED = 10140,
    /// Source invalid stream name.
    SOURCE_INVALID_STREAM_NAME = 10141,
    /// Mirror invalid stream name.
    MIRROR_INVALID_STREAM_NAME = 10142,
    /// Mirror with first seq.
    MIRROR_WITH_FIRST_SEQ = 10143,
    /// Source multiple filters not allowed.
    SOURCE_MULTIPLE_FILTERS_NOT_ALLOWED = 10144,
    /// Source invalid subject filter.
    SOURCE_INVALID_SUBJECT_FILTER = 10145,
    /// Source invalid transform destination.
    SOURCE_INVALID_TRANSFORM_DESTINATION = 10146,
    /// Source overlapping subject filters.
    SOURCE_OVERLAPPING_SUBJECT_FILTERS = 10147,
    /// Consumer already exists.
    CONSUMER_ALREADY_EXISTS = 10148,
    /// Consumer does not exist.
    CONSUMER_DOES_NOT_EXIST = 10149,
    /// Mirror multiple filters not allowed.
    MIRROR_MULTIPLE_FILTERS_NOT_ALLOWED = 10150,
    /// Mirror invalid subject filter.
    MIRROR_INVALID_SUBJECT_FILTER = 10151,
    /// Mirror overlapping subject filters.
    MIRROR_OVERLAPPING_SUBJECT_FILTERS = 10152,
    /// Consumer inactive threshold excess.
    CONSUMER_INACTIVE_THRESHOLD_EXCESS = 10153,
    /// Mirror invalid transform destination.
    MIRROR_INVALID_TRANSFORM_DESTINATION = 10154,
    /// Stream transform invalid source.
    STREAM_TRANSFORM_INVALID_SOURCE = 10155,
    /// Stream transform invalid destination.
    STREAM_TRANSFORM_INVALID_DESTINATION = 10156,
    /// Pedantic.
    PEDANTIC = 10157,
    /// Stream duplicate message conflict.
    STREAM_DUPLICATE_MESSAGE_CONFLICT = 10158,
    /// Consumer priority policy without group.
    CONSUMER_PRIORITY_POLICY_WITHOUT_GROUP = 10159,
    /// Consumer invalid priority group.
    CONSUMER_INVALID_PRIORITY_GROUP = 10160,
    /// Consumer empty group name.
    CONSUMER_EMPTY_GROUP_NAME = 10161,
    /// Consumer invalid group name.
    CONSUMER_INVALID_GROUP_NAME = 10162,
    /// Stream expected last seq per subject not ready.
    STREAM_EXPECTED_LAST_SEQ_PER_SUBJECT_NOT_READY = 10163,
    /// Stream wrong last sequence constant.
    STREAM_WRONG_LAST_SEQUENCE_CONSTANT = 10164,
    /// Message TTL invalid.
    MESSAGE_TTL_INVALID = 10165,
    /// Message TTL disabled.
    MESSAGE_TTL_DISABLED = 10166,
    /// Stream too many requests.
    STREAM_TOO_MANY_REQUESTS = 10167,
    /// Message incr disabled.
    MESSAGE_INCR_DISABLED = 10168,
    /// Message incr missing.
    MESSAGE_INCR_MISSING = 10169,
    /// Message incr payload.
    MESSAGE_INCR_PAYLOAD = 10170,
    /// Message incr invalid.
    MESSAGE_INCR_INVALID = 10171,
    /// Message counter broken.
    MESSAGE_COUNTER_BROKEN = 10172,
    /// Mirror with counters.
    MIRROR_WITH_COUNTERS = 10173,
    /// Atomic publish disabled.
    ATOMIC_PUBLISH_DISABLED = 10174,
    /// Atomic publish missing seq.
    ATOMIC_PUBLISH_MISSING_SEQ = 10175,
    /// Atomic publish incomplete batch.
    ATOMIC_PUBLISH_INCOMPLETE_BATCH = 10176,
    /// Atomic publish unsupported header.
    ATOMIC_PUBLISH_UNSUPPORTED_HEADER = 10177,
    /// Consumer push with priority group.
    CONSUMER_PUSH_WITH_PRIORITY_GROUP = 10178,
    /// Atomic publish invalid batch ID.
    ATOMIC_PUBLISH_INVALID_BATCH_ID = 10179,
    /// Stream min last seq.
    STREAM_MIN_LAST_SEQ = 10180,
    /// Consumer ack policy invalid.
    CONSUMER_ACK_POLICY_INVALID = 10181,
    /// Consumer replay policy invalid.
    CONSUMER_REPLAY_POLICY_INVALID = 10182,
    /// Consumer ack wait negative.
    CONSUMER_ACK_WAIT_NEGATIVE = 10183,
    /// Consumer backoff negative.
    CONSUMER_BACKOFF_NEGATIVE = 10184,
    /// Required API level.
    REQUIRED_API_LEVEL = 10185,
    /// Mirror with msg schedules.
    MIRROR_WITH_MSG_SCHEDULES = 10186,
    /// Source with msg schedules.
    SOURCE_WITH_MSG_SCHEDULES = 10187,
    /// Message schedules disabled.
    MESSAGE_SCHEDULES_DISABLED = 10188,
    /// Message schedules pattern invalid.
    MESSAGE_SCHEDULES_PATTERN_INVALID = 10189,
    /// Message schedules target invalid.
    MESSAGE_SCHEDULES_TARGET_INVALID = 10190,
    /// Message schedules TTL invalid.
    MESSAGE_SCHEDULES_TTL_INVALID = 10191,
    /// Message schedules rollup invalid.
    MESSAGE_SCHEDULES_ROLLUP_INVALID = 10192,
    /// Stream expected last seq per subject invalid.
    STREAM_EXPECTED_LAST_SEQ_PER_SUBJECT_INVALID = 10193,
    /// Stream offline reason.
    STREAM_OFFLINE_REASON = 10194,
    /// Consumer offline reason.
    CONSUMER_OFFLINE_REASON = 10195,
    /// Consumer priority group with policy none.
    CONSUMER_PRIORITY_GROUP_WITH_POLICY_NONE = 10196,
    /// Consumer pinned TTL without priority policy none.
    CONSUMER_PINNED_TTL_WITHOUT_PRIORITY_POLICY_NONE = 10197,
    /// Mirror with atomic publish.
    MIRROR_WITH_ATOMIC_PUBLISH = 10198,
    /// Atomic publish too large batch.
    ATOMIC_PUBLISH_TOO_LARGE_BATCH = 10199,
    /// Atomic publish invalid batch commit.
    ATOMIC_PUBLISH_INVALID_BATCH_COMMIT = 10200,
    /// Atomic publish contains duplicate message.
    ATOMIC_PUBLISH_CONTAINS_DUPLICATE_MESSAGE = 10201,
    /// Cluster server member change inflight.
    CLUSTER_SERVER_MEMBER_CHANGE_INFLIGHT = 10202,
    /// Message schedules source invalid.
    MESSAGE_SCHEDULES_SOURCE_INVALID = 10203,
    /// Consumer invalid reset.
    CONSUMER_INVALID_RESET = 10204,
    /// Batch publish disabled.
    BATCH_PUBLISH_DISABLED = 10205,
    /// Batch publish invalid pattern.
    BATCH_PUBLISH_INVALID_PATTERN = 10206,
    /// Batch publish invalid batch ID.
    BATCH_PUBLISH_INVALID_BATCH_ID = 10207,
    /// Batch publish unknown batch ID.
    BATCH_PUBLISH_UNKNOWN_BATCH_ID = 10208,
    /// Mirror with batch publish.
    MIRROR_WITH_BATCH_PUBLISH = 10209,
    /// Atomic publish too many inflight.
    ATOMIC_PUBLISH_TOO_MANY_INFLIGHT = 10210,
    /// Batch publish too many inflight.
    BATCH_PUBLISH_TOO_MANY_INFLIGHT = 10211,
    /// Message schedules scheduler invalid.
    MESSAGE_SCHEDULES_SCHEDULER_INVALID = 10212,
    /// Mirror durable consumer cfg invalid.
    MIRROR_DURABLE_CONSUMER_CFG_INVALID = 10213,
    /// Mirror consumer requires ack fc.
    MIRROR_CONSUMER_REQUIRES_ACK_FC = 10214,
    /// Source durable consumer cfg invalid.
    SOURCE_DURABLE_CONSUMER_CFG_INVALID = 10215,
    /// Source durable consumer duplicate detected.
    SOURCE_DURABLE_CONSUMER_DUPLICATE_DETECTED = 10216,
    /// Source consumer requires ack fc.
    SOURCE_CONSUMER_REQUIRES_ACK_FC = 10217,
    /// Consumer ack fc requires push.
    CONSUMER_ACK_FC_REQUIRES_PUSH = 10218,
    /// Consumer ack fc requires fc.
    CONSUMER_ACK_FC_REQUIRES_FC = 10219,
    /// Consumer ack fc requires max ack pending.
    CONSUMER_ACK_FC_REQUIRES_MAX_ACK_PENDING = 10220,
    /// Consumer ack fc requires no ack wait.
    CONSUMER_ACK_FC_REQUIRES_NO_ACK_WAIT = 10221,
    /// Consumer ack fc requires no max deliver.
    CONSUMER_ACK_FC_REQUIRES_NO_MAX_DELIVER = 10222,
    /// Message schedules time zone invalid.
    MESSAGE_SCHEDULES_TIME_ZONE_INVALID = 10223,
}

/// An error the JetStream API returned (`{"error": {"code": .., "err_code": .., ...}}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Error {
    code: usize,
    #[serde(default)]
    err_code: ErrorCode,
    description: Option<String>,
}

impl Error {
    /// An error as the server would send it; for tests and for code that wraps JetStream.
    pub fn new(code: usize, err_code: ErrorCode, description: impl Into<String>) -> Error {
        Error {
            code,
            err_code,
            description: Some(description.into()),
        }
    }

    /// The HTTP-like status code (404, 400, 503, ...).
    pub fn code(&self) -> usize {
        self.code
    }

    /// The JetStream error code: which condition exactly.
    pub fn error_code(&self) -> ErrorCode {
        self.err_code
    }

    /// The same as [`Error::error_code`] (async-nats' other name for it).
    pub fn kind(&self) -> ErrorCode {
        self.err_code
    }

    /// The server's description, if it sent one.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (code {}, error code {})",
            self.description.as_deref().unwrap_or("unknown"),
            self.code,
            self.err_code.0
        )
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_servers_error_body() {
        let json = r#"{"code":404,"err_code":10059,"description":"stream not found"}"#;
        let error: Error = serde_json::from_str(json).unwrap();
        assert_eq!(error.code(), 404);
        assert_eq!(error.error_code(), ErrorCode::STREAM_NOT_FOUND);
        assert_eq!(
            error.to_string(),
            "stream not found (code 404, error code 10059)"
        );
    }
}
