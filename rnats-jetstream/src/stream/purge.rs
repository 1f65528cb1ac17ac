//! Purging a stream (ADR-10): everything, one subject, up to a sequence, or all but the last
//! few messages.

use std::fmt::Debug;
use std::future::IntoFuture;
use std::marker::PhantomData;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

use super::Stream;
use super::config::is_default;
use super::errors::{PurgeError, PurgeErrorKind, timed_out_or_request};
use crate::context::Context;
use crate::response::Response;

/// What a purge did.
#[derive(Debug, Deserialize, Clone, Copy)]
pub struct PurgeResponse {
    /// Whether it succeeded.
    pub success: bool,
    /// Messages removed.
    pub purged: u64,
}

/// The body of `STREAM.PURGE.<stream>`.
#[derive(Default, Debug, Serialize, Clone)]
pub struct PurgeRequest {
    /// Remove the messages below this sequence.
    #[serde(default, rename = "seq", skip_serializing_if = "is_default")]
    pub sequence: Option<u64>,
    /// Remove only the messages on these subjects.
    #[serde(default, skip_serializing_if = "is_default")]
    pub filter: Option<String>,
    /// Keep this many of the newest messages.
    #[serde(default, skip_serializing_if = "is_default")]
    pub keep: Option<u64>,
}

/// Marks a [`Purge`] option as set.
#[derive(Debug, Default)]
pub struct Yes;

/// Marks a [`Purge`] option as not set.
#[derive(Debug, Default)]
pub struct No;

/// The states of a [`Purge`]'s `sequence` and `keep` options.
pub trait ToAssign: Debug {}
impl ToAssign for Yes {}
impl ToAssign for No {}

/// A purge, sent when awaited; `sequence` and `keep` exclude each other (the server takes one),
/// which the type parameters enforce.
///
/// ```no_run
/// # async fn run(stream: rnats_jetstream::stream::Stream) -> Result<(), rnats_core::Error> {
/// // Keep the newest 10 messages on `orders.old`.
/// let purged = stream.purge().filter("orders.old").keep(10).await?;
/// println!("removed {}", purged.purged);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Purge<SEQUENCE, KEEP>
where
    SEQUENCE: ToAssign,
    KEEP: ToAssign,
{
    inner: PurgeRequest,
    sequence_set: PhantomData<SEQUENCE>,
    keep_set: PhantomData<KEEP>,
    context: Context,
    stream_name: String,
}

impl Purge<No, No> {
    pub(crate) fn build<I>(stream: &Stream<I>) -> Purge<No, No> {
        Purge {
            inner: PurgeRequest::default(),
            sequence_set: PhantomData,
            keep_set: PhantomData,
            context: stream.context.clone(),
            stream_name: stream.name.clone(),
        }
    }
}

impl<SEQUENCE: ToAssign, KEEP: ToAssign> Purge<SEQUENCE, KEEP> {
    /// Purges only the messages on subjects matching `filter`.
    pub fn filter<T: Into<String>>(mut self, filter: T) -> Purge<SEQUENCE, KEEP> {
        self.inner.filter = Some(filter.into());
        self
    }

    fn with<S: ToAssign, K: ToAssign>(self, inner: PurgeRequest) -> Purge<S, K> {
        Purge {
            inner,
            sequence_set: PhantomData,
            keep_set: PhantomData,
            context: self.context,
            stream_name: self.stream_name,
        }
    }
}

impl<KEEP: ToAssign> Purge<No, KEEP> {
    /// Keeps the newest `keep` messages (per the filter, if any).
    pub fn keep(self, keep: u64) -> Purge<No, Yes> {
        let inner = PurgeRequest {
            keep: Some(keep),
            ..self.inner.clone()
        };
        self.with(inner)
    }
}

impl<SEQUENCE: ToAssign> Purge<SEQUENCE, No> {
    /// Purges the messages below `sequence` (per the filter, if any).
    pub fn sequence(self, sequence: u64) -> Purge<Yes, No> {
        let inner = PurgeRequest {
            sequence: Some(sequence),
            ..self.inner.clone()
        };
        self.with(inner)
    }
}

impl<S, K> IntoFuture for Purge<S, K>
where
    S: ToAssign + Send,
    K: ToAssign + Send,
{
    type Output = Result<PurgeResponse, PurgeError>;
    type IntoFuture = BoxFuture<'static, Result<PurgeResponse, PurgeError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let response: Response<PurgeResponse> = self
                .context
                .request(format!("STREAM.PURGE.{}", self.stream_name), &self.inner)
                .await
                .map_err(|e| {
                    timed_out_or_request(e, PurgeErrorKind::TimedOut, PurgeErrorKind::Request)
                })?;
            response.into_result().map_err(|error| {
                PurgeError::with_source(PurgeErrorKind::JetStream(error.clone()), error)
            })
        })
    }
}
