//! What the server reports about a stream: its info and state, its cluster and sources, and
//! the paged subject (and deleted-sequence) details of `STREAM.INFO`.

use std::collections::{HashMap, hash_map};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use rnats_core::datetime::DateTime;
use serde::{Deserialize, Deserializer, Serialize};

use super::config::{Config, SubjectTransform};
use super::errors::InfoError;
use crate::context::Context;
use crate::paging::{PageCursor, UnexpectedPageError};
use crate::response::Response;
use crate::stream_errors::server_request_error;

/// A stream's configuration and state as the server last reported them.
#[derive(Debug, Deserialize, Clone, PartialEq, Eq)]
pub struct Info {
    /// The configuration, with the server's defaults filled in.
    pub config: Config,
    /// When the stream was created.
    #[serde(with = "rnats_core::datetime::rfc3339")]
    pub created: DateTime,
    /// Its messages, bytes, sequences and consumers.
    pub state: State,
    /// Its RAFT group's leader and replicas, in a cluster.
    #[serde(default)]
    pub cluster: Option<ClusterInfo>,
    /// How the mirror is doing, for a mirror.
    #[serde(default)]
    pub mirror: Option<SourceInfo>,
    /// How each source is doing.
    #[serde(default)]
    pub sources: Vec<SourceInfo>,
    /// Where this page of subject details sits in all of them.
    #[serde(flatten)]
    paged_info: Option<PagedInfo>,
}

impl Info {
    /// The `offset` and `total` of the subject counts this info is a page of; both 0 when the
    /// reply had no place, which a later page cannot pass for (see [`PageCursor`]).
    fn page_place(&self) -> (usize, usize) {
        self.paged_info
            .as_ref()
            .map_or((0, 0), |paged| (paged.offset, paged.total))
    }
}

/// The place of one page in a paged reply.
#[derive(Debug, Deserialize, Clone, PartialEq, Eq)]
pub struct PagedInfo {
    offset: usize,
    total: usize,
    limit: usize,
}

/// A stream's contents at the time of the info. Serialized as the server writes it, for a
/// restore request and a backup's `backup.json` (see [`Stream::snapshot`](super::Stream::snapshot)).
#[derive(Debug, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct State {
    /// Messages stored.
    pub messages: u64,
    /// Bytes stored.
    pub bytes: u64,
    /// The sequence of the first message still stored.
    #[serde(rename = "first_seq")]
    pub first_sequence: u64,
    /// When the first message still stored came (year 1 when the stream is empty).
    #[serde(with = "rnats_core::datetime::rfc3339", rename = "first_ts")]
    pub first_timestamp: DateTime,
    /// The sequence of the last message stored.
    #[serde(rename = "last_seq")]
    pub last_sequence: u64,
    /// When the last message came.
    #[serde(with = "rnats_core::datetime::rfc3339", rename = "last_ts")]
    pub last_timestamp: DateTime,
    /// Consumers on the stream.
    pub consumer_count: usize,
    /// Distinct subjects stored.
    #[serde(default, rename = "num_subjects")]
    pub subjects_count: u64,
    /// Sequences deleted between the first and the last.
    #[serde(
        default,
        rename = "num_deleted",
        skip_serializing_if = "Option::is_none"
    )]
    pub deleted_count: Option<u64>,
    /// The deleted sequences, when asked for with `StreamInfoBuilder::with_deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted: Option<Vec<u64>>,
    /// Messages per subject, when asked for with a subjects filter; read through
    /// [`InfoWithSubjects`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subjects: Option<HashMap<String, usize>>,
}

/// The RAFT group of a clustered stream or consumer.
#[derive(Debug, Default, Deserialize, Clone, PartialEq, Eq)]
pub struct ClusterInfo {
    /// The cluster's name.
    #[serde(default)]
    pub name: Option<String>,
    /// The RAFT group's name.
    #[serde(default)]
    pub raft_group: Option<String>,
    /// The server leading the group.
    #[serde(default)]
    pub leader: Option<String>,
    /// Since when it leads.
    #[serde(default, with = "rnats_core::datetime::rfc3339::option")]
    pub leader_since: Option<DateTime>,
    /// Whether `traffic_account` is the system account.
    #[serde(default)]
    pub system_account: bool,
    /// The account replication traffic goes through.
    #[serde(default)]
    pub traffic_account: Option<String>,
    /// The other members of the group.
    #[serde(default)]
    pub replicas: Vec<PeerInfo>,
}

/// One member of a RAFT group.
#[derive(Debug, Default, Deserialize, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// The server's name.
    pub name: String,
    /// Whether it is caught up with the leader.
    pub current: bool,
    /// How long ago it was last heard from.
    #[serde(default, with = "crate::nanos")]
    pub active: Duration,
    /// Whether the group considers it offline.
    #[serde(default)]
    pub offline: bool,
    /// Operations it is behind the leader.
    #[serde(default)]
    pub lag: Option<u64>,
}

/// How a mirror or source is doing.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct SourceInfo {
    /// The stream mirrored or sourced.
    pub name: String,
    /// Messages not yet taken from it.
    pub lag: u64,
    /// How long ago it was last active; `None` if never (the server sends -1).
    #[serde(default, deserialize_with = "negative_as_none")]
    pub active: Option<Duration>,
    /// The subject filter applied.
    #[serde(default)]
    pub filter_subject: Option<String>,
    /// The destination of the subject transform applied.
    #[serde(default)]
    pub subject_transform_dest: Option<String>,
    /// The subject transforms applied.
    #[serde(default)]
    pub subject_transforms: Vec<SubjectTransform>,
}

/// What `delete_stream` (and consumer deletes) return.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub struct DeleteStatus {
    /// Whether the server deleted it.
    pub success: bool,
}

/// The body of `STREAM.INFO`: which page of subject details, and whether to list deleted
/// sequences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamInfoRequest {
    offset: usize,
    deleted_details: bool,
    subjects_filter: String,
}

/// Asks for a stream's info with details: deleted sequences and per-subject counts.
#[derive(Debug, Clone)]
pub struct StreamInfoBuilder {
    pub(crate) context: Context,
    pub(crate) name: String,
    pub(crate) deleted: bool,
    pub(crate) subject: String,
}

impl StreamInfoBuilder {
    pub(crate) fn new(context: Context, name: String) -> StreamInfoBuilder {
        StreamInfoBuilder {
            context,
            name,
            deleted: false,
            subject: String::new(),
        }
    }

    /// Lists the deleted sequences in `info.state.deleted`.
    pub fn with_deleted(mut self, deleted: bool) -> Self {
        self.deleted = deleted;
        self
    }

    /// Counts messages per subject for the subjects matching `subject` (e.g. `>`).
    pub fn subjects<S: Into<String>>(mut self, subject: S) -> Self {
        self.subject = subject.into();
        self
    }

    /// Fetches the info; the per-subject counts come from the result as a stream.
    pub async fn fetch(self) -> Result<InfoWithSubjects, InfoError> {
        let info = fetch_info(
            self.context.clone(),
            self.name.clone(),
            StreamInfoRequest {
                offset: 0,
                deleted_details: self.deleted,
                subjects_filter: self.subject.clone(),
            },
        )
        .await?;
        Ok(InfoWithSubjects::new(self.context, info, self.subject))
    }
}

/// A stream's info and, as a [`futures_util::Stream`], its `(subject, messages)` counts,
/// fetched page by page.
pub struct InfoWithSubjects {
    stream: String,
    context: Context,
    /// The info of the first page.
    pub info: Info,
    cursor: PageCursor,
    subjects: hash_map::IntoIter<String, usize>,
    /// The first page's refusal, yielded before anything else.
    refused: Option<UnexpectedPageError>,
    info_request: Option<BoxFuture<'static, Result<Info, InfoError>>>,
    subjects_filter: String,
}

impl InfoWithSubjects {
    /// Starts from `info`, the first page for `subject`, holding its subject counts.
    pub fn new(context: Context, mut info: Info, subject: String) -> Self {
        let subjects = info.state.subjects.take().unwrap_or_default();
        let mut cursor = PageCursor::new();
        let (offset, total) = info.page_place();
        let (subjects, refused) = match cursor.handle_page(offset, total, subjects.len()) {
            Ok(()) => (subjects, None),
            Err(error) => (HashMap::new(), Some(error)),
        };
        InfoWithSubjects {
            stream: info.config.name.clone(),
            context,
            info,
            cursor,
            subjects: subjects.into_iter(),
            refused,
            info_request: None,
            subjects_filter: subject,
        }
    }
}

impl futures_util::Stream for InfoWithSubjects {
    type Item = Result<(String, usize), InfoError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(entry) = self.subjects.next() {
                return Poll::Ready(Some(Ok(entry)));
            }
            if let Some(error) = self.refused.take() {
                return Poll::Ready(Some(Err(error.into())));
            }
            if self.cursor.is_done() {
                return Poll::Ready(None);
            }
            let this = &mut *self;
            let request = this.info_request.get_or_insert_with(|| {
                fetch_info(
                    this.context.clone(),
                    this.stream.clone(),
                    StreamInfoRequest {
                        offset: this.cursor.offset(),
                        deleted_details: false,
                        subjects_filter: this.subjects_filter.clone(),
                    },
                )
                .boxed()
            });
            let result = match request.poll_unpin(cx) {
                Poll::Ready(result) => result,
                Poll::Pending => return Poll::Pending,
            };
            this.info_request = None;
            let mut info = match result {
                Ok(info) => info,
                Err(error) => {
                    this.cursor.finish();
                    return Poll::Ready(Some(Err(error)));
                }
            };
            let subjects = info.state.subjects.take().unwrap_or_default();
            let (offset, total) = info.page_place();
            if let Err(error) = this.cursor.handle_page(offset, total, subjects.len()) {
                return Poll::Ready(Some(Err(error.into())));
            }
            this.subjects = subjects.into_iter();
        }
    }
}

/// One `STREAM.INFO` request.
pub(crate) async fn fetch_info<T: Serialize>(
    context: Context,
    stream: String,
    request: T,
) -> Result<Info, InfoError> {
    let response: Response<Info> = context
        .request(format!("STREAM.INFO.{stream}"), &request)
        .await?;
    response.into_result().map_err(server_request_error)
}

/// Nanoseconds where the server sends a negative number for "never".
fn negative_as_none<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    let nanos = i64::deserialize(deserializer)?;
    Ok(u64::try_from(nanos).ok().map(Duration::from_nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `STREAM.INFO` reply as a clustered 2.15 server sends it, with fields this crate
    /// does not model (and some no server sends yet) that must be skipped, not refused.
    const REPLY: &str = r#"{
        "type": "io.nats.jetstream.api.v1.stream_info_response",
        "total": 3, "offset": 0, "limit": 100000,
        "config": {
            "name": "ORDERS", "subjects": ["orders.>"], "retention": "interest",
            "max_consumers": -1, "max_msgs": -1, "max_bytes": -1, "max_age": 3600000000000,
            "max_msgs_per_subject": -1, "max_msg_size": -1, "discard": "new",
            "storage": "memory", "num_replicas": 3, "duplicate_window": 120000000000,
            "compression": "none", "allow_direct": true, "mirror_direct": false,
            "sealed": false, "deny_delete": false, "deny_purge": false,
            "allow_rollup_hdrs": false, "consumer_limits": {"max_ack_pending": 10},
            "allow_msg_ttl": true, "subject_delete_marker_ttl": 60000000000,
            "persist_mode": "async", "metadata": {"_nats.ver": "2.15.1"},
            "sources": [{"name": "UPSTREAM", "external": {"api": "$JS.hub.API", "deliver": ""}}],
            "a_future_setting": {"nested": [1, 2]}
        },
        "created": "2024-05-01T10:00:00.5Z",
        "ts": "2024-05-01T11:00:00Z",
        "state": {
            "messages": 3, "bytes": 120, "first_seq": 1,
            "first_ts": "2024-05-01T10:00:01Z", "last_seq": 4,
            "last_ts": "2024-05-01T10:00:04Z", "num_deleted": 1, "num_subjects": 3,
            "subjects": {"orders.a": 1, "orders.b": 1, "orders.c": 1},
            "consumer_count": 2, "lost": {"msgs": [9]}
        },
        "cluster": {
            "name": "east", "raft_group": "S-R3M-x", "leader": "n1",
            "leader_since": "2024-05-01T10:00:00Z",
            "replicas": [{"name": "n2", "current": true, "active": 1000, "lag": 2, "peer": "x"}],
            "traffic_acc": "SYS"
        },
        "sources": [{"name": "UPSTREAM", "lag": 5, "active": -1,
                     "external": {"api": "$JS.hub.API", "deliver": ""},
                     "error": {"code": 500, "description": "offline"}}],
        "alternates": [{"name": "ORDERS", "cluster": "east"}]
    }"#;

    #[test]
    fn unknown_fields_are_tolerated() {
        let response: Response<Info> = serde_json::from_str(REPLY).unwrap();
        let info = response.into_result().unwrap();
        assert_eq!(info.config.name, "ORDERS");
        assert_eq!(info.config.max_age, Duration::from_secs(3600));
        assert_eq!(info.config.num_replicas, 3);
        assert_eq!(
            info.config.subject_delete_marker_ttl,
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            info.config
                .consumer_limits
                .as_ref()
                .unwrap()
                .max_ack_pending,
            10
        );
        assert_eq!(info.state.messages, 3);
        assert_eq!(info.state.deleted_count, Some(1));
        assert_eq!(info.state.subjects.as_ref().unwrap().len(), 3);
        assert_eq!(
            rnats_core::datetime::to_nanos(&info.created) % 1_000_000_000,
            500_000_000
        );
        let cluster = info.cluster.as_ref().unwrap();
        assert_eq!(cluster.leader.as_deref(), Some("n1"));
        assert_eq!(cluster.replicas[0].active, Duration::from_micros(1));
        assert_eq!(info.sources[0].active, None);
        assert_eq!(info.sources[0].lag, 5);
        assert_eq!(info.paged_info.as_ref().unwrap().total, 3);
    }
}
