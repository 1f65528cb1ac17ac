//! Streams: their configuration and state, the [`Stream`] handle to read from and manage one,
//! and (on [`Context`]) creating, finding, listing and deleting them.
//!
//! ```no_run
//! # async fn run(jetstream: rnats_jetstream::Context) -> Result<(), rnats_core::Error> {
//! use rnats_jetstream::stream::Config;
//! let mut stream = jetstream
//!     .get_or_create_stream(Config {
//!         name: "EVENTS".to_string(),
//!         subjects: vec!["events.>".to_string()],
//!         allow_direct: true,
//!         ..Default::default()
//!     })
//!     .await?;
//! let ack = jetstream.publish("events.a", "one".into()).await?.await?;
//! let message = stream.direct_get(ack.sequence).await?;
//! println!("{} messages, first {:?}", stream.info().await?.state.messages, message.payload);
//! # Ok(()) }
//! ```
//!
//! No two streams hold the same subject: a create or update whose subjects overlap another
//! stream's is refused with [`ErrorCode::STREAM_SUBJECT_OVERLAP`](crate::ErrorCode) (10065),
//! the error kind `CreateStreamErrorKind::JetStream` as in async-nats. The server does not
//! say which stream it clashes with, so rnats asks (`STREAM.NAMES` by subject, a few
//! requests at most) and names it in the message, "... overlaps stream `ORDERS` on
//! `orders.new`", with the details in a [`SubjectOverlap`] in the source chain:
//!
//! ```no_run
//! # async fn run(jetstream: rnats_jetstream::Context) {
//! use rnats_jetstream::context::CreateStreamErrorKind;
//! use rnats_jetstream::stream::{Config, SubjectOverlap};
//! use rnats_jetstream::ErrorCode;
//! let config = Config {
//!     name: "NEW_ORDERS".to_string(),
//!     subjects: vec!["orders.new".to_string()],
//!     ..Default::default()
//! };
//! match jetstream.create_stream(config).await {
//!     Err(error) => match error.kind() {
//!         CreateStreamErrorKind::JetStream(refusal)
//!             if refusal.error_code() == ErrorCode::STREAM_SUBJECT_OVERLAP =>
//!         {
//!             let clashes = error.downcast_source::<SubjectOverlap>().map(|o| o.streams());
//!             println!("taken by {clashes:?}: {error}");
//!         }
//!         _ => println!("refused: {error}"),
//!     },
//!     Ok(_) => println!("created"),
//! }
//! # }
//! ```
//!
//! Beyond async-nats, a stream can be backed up and restored with the server's snapshots:
//! [`Stream::snapshot`] and [`Context::restore_stream`], natscli's backup directories
//! included ([`Snapshot::to_directory`], [`Context::restore_stream_from_directory`]).

mod batch;
pub(crate) mod cluster;
mod config;
pub(crate) mod direct;
pub(crate) mod errors;
mod info;
pub(crate) mod list;
pub(crate) mod manage;
mod overlap;
mod purge;
mod raw;
mod snapshot;

use serde::Serialize;

use crate::context::Context;
use crate::message::StreamMessage;
use crate::response::Response;

pub use self::batch::{BatchGetBuilder, DirectBatch, MultiLastBuilder};
pub use self::cluster::{
    LeaderPlacement, RemovePeerError, RemovePeerErrorKind, StepDownError, StepDownErrorKind,
};
pub use self::config::{
    Compression, Config, ConsumerLimits, DiscardPolicy, External, PersistenceMode, Placement,
    Republish, RetentionPolicy, Source, StorageType, StreamConsumerSource, SubjectTransform,
};
pub use self::direct::{
    DirectGetBuilder, DirectGetRequest, StreamValue, WithHeaders, WithoutHeaders,
};
pub use self::errors::{
    DeleteMessageError, DeleteMessageErrorKind, DirectGetError, DirectGetErrorKind, InfoError,
    LastRawMessageError, LastRawMessageErrorKind, PurgeError, PurgeErrorKind, RawMessageError,
    RawMessageErrorKind,
};
pub use self::info::{
    ClusterInfo, DeleteStatus, Info, InfoWithSubjects, PagedInfo, PeerInfo, SourceInfo, State,
    StreamInfoBuilder, StreamInfoRequest,
};
pub use self::overlap::{Clash, SubjectOverlap};
pub use self::purge::{No, Purge, PurgeRequest, PurgeResponse, ToAssign, Yes};
pub use self::raw::{RawMessage, RawMessageBuilder, RawMessageRequest};
pub use self::snapshot::{
    BACKUP_DATA_FILE, BACKUP_METADATA_FILE, RestoreError, RestoreErrorKind, Snapshot,
    SnapshotBuilder, SnapshotError, SnapshotErrorKind,
};
pub use crate::consumer::{
    ConsumerNames, ConsumerResetError, ConsumerResetErrorKind, ConsumerResetResponse, Consumers,
    PauseResponse,
};
pub use crate::consumer_errors::{
    ConsumerCreateStrictError, ConsumerCreateStrictErrorKind, ConsumerError, ConsumerErrorKind,
    ConsumerUpdateError, ConsumerUpdateErrorKind,
};

/// Why listing a stream's consumers failed (async-nats' name for a request error).
pub type ConsumersError = crate::context::RequestError;
/// The kinds of [`ConsumersError`].
pub type ConsumersErrorKind = crate::context::RequestErrorKind;

use self::errors::timed_out_or_request;
use self::info::fetch_info;

/// A stream: a handle to manage it and read from it, with its info as last fetched (`T` is
/// [`Info`] from `get_stream`, `()` from `get_stream_no_info`).
#[derive(Debug, Clone)]
pub struct Stream<T = Info> {
    pub(crate) info: T,
    pub(crate) context: Context,
    pub(crate) name: String,
}

impl Stream<Info> {
    /// Fetches the stream's info, keeps it as the cached info and returns it.
    pub async fn info(&mut self) -> Result<&Info, InfoError> {
        self.info = fetch_info(self.context.clone(), self.name.clone(), ()).await?;
        Ok(&self.info)
    }

    /// The info as fetched last (by `get_stream`, `create_stream` or [`Stream::info`]).
    pub fn cached_info(&self) -> &Info {
        &self.info
    }
}

impl<I> Stream<I> {
    /// Fetches the stream's info without caching it; works on a handle from
    /// `get_stream_no_info` too.
    pub async fn get_info(&self) -> Result<Info, InfoError> {
        fetch_info(self.context.clone(), self.name.clone(), ()).await
    }

    /// Fetches the info with per-subject message counts for the subjects matching
    /// `subjects_filter`; read the counts from the result as a stream of `(subject, count)`.
    pub async fn info_with_subjects<F: AsRef<str>>(
        &self,
        subjects_filter: F,
    ) -> Result<InfoWithSubjects, InfoError> {
        self.info_builder()
            .subjects(subjects_filter.as_ref())
            .fetch()
            .await
    }

    /// A builder for the info with details: deleted sequences, per-subject counts.
    pub fn info_builder(&self) -> StreamInfoBuilder {
        StreamInfoBuilder::new(self.context.clone(), self.name.clone())
    }

    /// A builder for direct gets (ADR-31; the stream needs `allow_direct`).
    pub fn direct_get_builder(&self) -> DirectGetBuilder<WithHeaders> {
        DirectGetBuilder::new(self.context.clone(), self.name.clone())
    }

    /// Every message on `subject` (wildcards allowed), from the start of the stream or from a
    /// sequence or time set on the builder, by batched direct get (ADR-31, nats-server 2.11+).
    /// Await the builder for a [`DirectBatch`] stream; it asks for page after page until the
    /// server reports none pending, holding one page at a time.
    pub fn direct_batch<S: Into<String>>(&self, subject: S) -> BatchGetBuilder {
        BatchGetBuilder::new(self.context.clone(), self.name.clone(), subject.into())
    }

    /// The last message of every subject matching any of `filters` (wildcards allowed), now
    /// or as of an `up_to_sequence`/`up_to_time` on the builder, by direct get's `multi_last`
    /// (ADR-31, nats-server 2.11+). One consistent snapshot, paged; past the server's 1024
    /// subjects per request the subjects are listed and read in groups at the same snapshot,
    /// so `[">"]` gives the last message of every subject in the stream.
    pub fn direct_multi_last<F, S>(&self, filters: F) -> MultiLastBuilder
    where
        F: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let filters = filters.into_iter().map(Into::into).collect();
        MultiLastBuilder::new(self.context.clone(), self.name.clone(), filters)
    }

    /// The first message on `subject` at or after `sequence` (from the start if `None`),
    /// by direct get: any replica may answer, so it may lag the leader.
    pub async fn direct_get_next_for_subject<T: Into<String>>(
        &self,
        subject: T,
        sequence: Option<u64>,
    ) -> Result<StreamMessage, DirectGetError> {
        let subject = checked_direct_subject(subject.into())?;
        let builder = self.direct_get_builder().next_by_subject(subject);
        match sequence {
            Some(sequence) => builder.sequence(sequence).send().await,
            None => builder.send().await,
        }
    }

    /// The first message on `subject`, by direct get.
    pub async fn direct_get_first_for_subject<T: Into<String>>(
        &self,
        subject: T,
    ) -> Result<StreamMessage, DirectGetError> {
        let subject = checked_direct_subject(subject.into())?;
        self.direct_get_builder()
            .next_by_subject(subject)
            .send()
            .await
    }

    /// The message with `sequence`, by direct get.
    pub async fn direct_get(&self, sequence: u64) -> Result<StreamMessage, DirectGetError> {
        self.direct_get_builder().sequence(sequence).send().await
    }

    /// The last message on `subject`, by direct get.
    pub async fn direct_get_last_for_subject<T: Into<String>>(
        &self,
        subject: T,
    ) -> Result<StreamMessage, DirectGetError> {
        self.direct_get_builder()
            .last_by_subject(subject)
            .send()
            .await
    }

    /// A builder for reads from the stream leader (`STREAM.MSG.GET`); prefer direct gets
    /// where the stream allows them, which spread the load.
    pub fn raw_message_builder(&self) -> RawMessageBuilder<WithHeaders> {
        RawMessageBuilder::new(self.context.clone(), self.name.clone())
    }

    /// The message with `sequence`, from the leader.
    pub async fn get_raw_message(&self, sequence: u64) -> Result<StreamMessage, RawMessageError> {
        self.raw_message_builder().sequence(sequence).send().await
    }

    /// The first message on `subject` at or after `sequence`, from the leader.
    pub async fn get_first_raw_message_by_subject<T: AsRef<str>>(
        &self,
        subject: T,
        sequence: u64,
    ) -> Result<StreamMessage, RawMessageError> {
        self.raw_message_builder()
            .sequence(sequence)
            .next_by_subject(subject.as_ref())
            .send()
            .await
    }

    /// The first message on `subject`, from the leader.
    pub async fn get_next_raw_message_by_subject<T: AsRef<str>>(
        &self,
        subject: T,
    ) -> Result<StreamMessage, RawMessageError> {
        self.raw_message_builder()
            .next_by_subject(subject.as_ref())
            .send()
            .await
    }

    /// The last message on `stream_subject`, from the leader.
    pub async fn get_last_raw_message_by_subject(
        &self,
        stream_subject: &str,
    ) -> Result<StreamMessage, LastRawMessageError> {
        self.raw_message_builder()
            .last_by_subject(stream_subject)
            .send()
            .await
    }

    /// Deletes the message with `sequence`; whether the server deleted it. As in async-nats
    /// this is the server's default delete, which also overwrites the stored bytes; use
    /// [`Stream::delete_message_no_erase`] to only mark the message deleted (faster, as
    /// nats.go's `DeleteMsg`).
    pub async fn delete_message(&self, sequence: u64) -> Result<bool, DeleteMessageError> {
        self.remove_message(sequence, true).await
    }

    /// Deletes the message with `sequence`, marking it deleted without overwriting its stored
    /// bytes; whether the server deleted it.
    pub async fn delete_message_no_erase(&self, sequence: u64) -> Result<bool, DeleteMessageError> {
        self.remove_message(sequence, false).await
    }

    /// Deletes the message with `sequence` and overwrites its stored bytes with random data
    /// (the same as [`Stream::delete_message`], named for what it does); whether the server
    /// erased it.
    pub async fn erase_message(&self, sequence: u64) -> Result<bool, DeleteMessageError> {
        self.remove_message(sequence, true).await
    }

    /// Purges the stream: all of it when awaited as is, or narrowed with `filter`, `keep` or
    /// `sequence`.
    pub fn purge(&self) -> Purge<No, No> {
        Purge::build(self)
    }

    /// Purges the messages on `subject`.
    #[deprecated(note = "use `Stream::purge().filter(subject)`")]
    pub async fn purge_subject<T: Into<String>>(
        &self,
        subject: T,
    ) -> Result<PurgeResponse, PurgeError> {
        self.purge().filter(subject).await
    }

    /// `STREAM.MSG.DELETE`; `erase` overwrites the message where it is stored.
    async fn remove_message(&self, sequence: u64, erase: bool) -> Result<bool, DeleteMessageError> {
        #[derive(Serialize)]
        struct DeleteRequest {
            seq: u64,
            no_erase: bool,
        }
        let request = DeleteRequest {
            seq: sequence,
            no_erase: !erase,
        };
        let response: Response<DeleteStatus> = self
            .context
            .request(format!("STREAM.MSG.DELETE.{}", self.name), &request)
            .await
            .map_err(|e| {
                timed_out_or_request(
                    e,
                    DeleteMessageErrorKind::TimedOut,
                    DeleteMessageErrorKind::Request,
                )
            })?;
        let status = response.into_result().map_err(|error| {
            DeleteMessageError::with_source(DeleteMessageErrorKind::JetStream(error.clone()), error)
        })?;
        Ok(status.success)
    }
}

/// Whether `subject` is a subject to read by: not empty, valid tokens, wildcards allowed.
pub(crate) fn is_valid_subject(subject: &str) -> bool {
    rnats_core::proto::validate_subject(subject.as_bytes()).is_ok()
}

fn checked_direct_subject(subject: String) -> Result<String, DirectGetError> {
    if is_valid_subject(&subject) {
        Ok(subject)
    } else {
        Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject))
    }
}
