//! Resetting a consumer (nats-server 2.14+): moving its ack floor back to a stream sequence
//! (or to where it is, with none), so it redelivers from there.

use std::fmt;

use rnats_core::error::Error;
use serde::{Deserialize, Serialize};

use super::{Consumer, Info, IntoConsumerConfig};
use crate::context::{Context, RequestErrorKind};
use crate::errors::ErrorCode;
use crate::response::Response;
use crate::stream::Stream;

/// What a reset answers: the consumer's info after it, and where its ack floor now is.
#[derive(Debug, Clone, Deserialize)]
pub struct ConsumerResetResponse {
    /// The consumer's info after the reset.
    #[serde(flatten)]
    pub info: Info,
    /// The stream sequence the ack floor sits at now.
    pub reset_seq: u64,
}

/// The kinds of [`ConsumerResetError`] (async-nats' variants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerResetErrorKind {
    /// No answer within the timeout.
    TimedOut,
    /// The request could not be made.
    Request,
    /// The stream or the consumer does not exist.
    NotFound,
    /// The server refused the sequence.
    InvalidReset,
    /// Another refusal, with the server's error.
    JetStream(crate::Error),
}

impl fmt::Display for ConsumerResetErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConsumerResetErrorKind::TimedOut => f.write_str("timed out"),
            ConsumerResetErrorKind::Request => f.write_str("request failed"),
            ConsumerResetErrorKind::NotFound => f.write_str("stream or consumer not found"),
            ConsumerResetErrorKind::InvalidReset => f.write_str("invalid reset"),
            ConsumerResetErrorKind::JetStream(error) => write!(f, "JetStream error: {error}"),
        }
    }
}

/// Why a consumer reset failed.
pub type ConsumerResetError = Error<ConsumerResetErrorKind>;

/// The reset request: no sequence means "to the current ack floor".
#[derive(Serialize)]
struct ResetRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
}

/// Sends `CONSUMER.RESET.<stream>.<consumer>`.
async fn reset(
    context: &Context,
    stream: &str,
    consumer: &str,
    seq: Option<u64>,
) -> Result<ConsumerResetResponse, ConsumerResetError> {
    let subject = format!("CONSUMER.RESET.{stream}.{consumer}");
    let request = ResetRequest {
        seq: seq.filter(|s| *s != 0),
    };
    let response: Response<ConsumerResetResponse> =
        context.request(subject, &request).await.map_err(|e| {
            let kind = match e.kind() {
                RequestErrorKind::TimedOut => ConsumerResetErrorKind::TimedOut,
                RequestErrorKind::NoResponders => ConsumerResetErrorKind::NotFound,
                _ => ConsumerResetErrorKind::Request,
            };
            ConsumerResetError::with_source(kind, e)
        })?;
    response.into_result().map_err(|error| {
        let kind = match error.error_code() {
            ErrorCode::CONSUMER_INVALID_RESET => ConsumerResetErrorKind::InvalidReset,
            ErrorCode::CONSUMER_NOT_FOUND | ErrorCode::STREAM_NOT_FOUND => {
                ConsumerResetErrorKind::NotFound
            }
            _ => ConsumerResetErrorKind::JetStream(error.clone()),
        };
        ConsumerResetError::with_source(kind, error)
    })
}

impl<I> Stream<I> {
    /// Resets consumer `name` to stream sequence `seq` (`None` or 0: to its ack floor).
    pub async fn reset_consumer(
        &self,
        name: &str,
        seq: Option<u64>,
    ) -> Result<ConsumerResetResponse, ConsumerResetError> {
        reset(&self.context, &self.name, name, seq).await
    }
}

impl<T: IntoConsumerConfig> Consumer<T> {
    /// Resets this consumer to stream sequence `seq` (`None` or 0: to its ack floor), and
    /// refreshes its cached info.
    pub async fn reset(
        &mut self,
        seq: Option<u64>,
    ) -> Result<ConsumerResetResponse, ConsumerResetError> {
        let response = reset(&self.context, &self.info.stream_name, &self.info.name, seq).await?;
        self.info = response.info.clone();
        Ok(response)
    }
}
