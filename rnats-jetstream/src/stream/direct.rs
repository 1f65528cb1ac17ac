//! Direct get (ADR-31): reading a message by sequence or subject from any replica of a stream
//! with `allow_direct`, over `DIRECT.GET.<stream>`, the message coming back as itself with its
//! stream metadata in headers.

use std::marker::PhantomData;

use bytes::Bytes;
use rnats_core::{Message, Request, StatusCode};
use serde::Serialize;

use super::errors::{DirectGetError, DirectGetErrorKind};
use crate::context::{Context, RequestError, RequestErrorKind};
use crate::message::StreamMessage;

/// The body of a direct get.
#[derive(Debug, Serialize, Default, Clone)]
pub struct DirectGetRequest {
    #[serde(rename = "seq", skip_serializing_if = "Option::is_none")]
    sequence: Option<u64>,
    /// Goes in the request subject, `DIRECT.GET.<stream>.<subject>`, not in the body.
    #[serde(rename = "last_by_subj", skip_serializing)]
    last_by_subject: Option<String>,
    #[serde(rename = "next_by_subj", skip_serializing_if = "Option::is_none")]
    next_by_subject: Option<String>,
    #[serde(rename = "no_hdr", skip_serializing_if = "std::ops::Not::not")]
    no_headers: bool,
}

/// Marks a builder whose result is a [`StreamMessage`], headers and metadata included.
#[derive(Debug, Clone, Copy)]
pub struct WithHeaders;

/// Marks a builder whose result is only the payload, a [`StreamValue`].
#[derive(Debug, Clone, Copy)]
pub struct WithoutHeaders;

/// A message's payload alone.
#[derive(Debug, Clone)]
pub struct StreamValue {
    /// The payload.
    pub data: Bytes,
}

/// Builds a direct get: by sequence, first at or after a sequence on a subject, or last on a
/// subject.
#[derive(Debug, Clone)]
pub struct DirectGetBuilder<T = WithHeaders> {
    context: Context,
    stream_name: String,
    request: DirectGetRequest,
    _result: PhantomData<T>,
}

impl DirectGetBuilder<WithHeaders> {
    pub(crate) fn new(context: Context, stream_name: String) -> DirectGetBuilder<WithHeaders> {
        DirectGetBuilder {
            context,
            stream_name,
            request: DirectGetRequest::default(),
            _result: PhantomData,
        }
    }

    /// Asks for the payload only (`no_hdr`); `send` then returns a [`StreamValue`].
    pub fn without_headers(mut self) -> DirectGetBuilder<WithoutHeaders> {
        self.request.no_headers = true;
        DirectGetBuilder {
            context: self.context,
            stream_name: self.stream_name,
            request: self.request,
            _result: PhantomData,
        }
    }

    /// Sends the request; the message with its headers.
    pub async fn send(self) -> Result<StreamMessage, DirectGetError> {
        let message = self.send_request().await?;
        StreamMessage::try_from(message)
            .map_err(|error| DirectGetError::with_source(DirectGetErrorKind::Other, error))
    }
}

impl DirectGetBuilder<WithoutHeaders> {
    /// Sends the request; the payload alone.
    pub async fn send(self) -> Result<StreamValue, DirectGetError> {
        let message = self.send_request().await?;
        Ok(StreamValue {
            data: message.payload,
        })
    }
}

impl<T> DirectGetBuilder<T> {
    /// The message with this sequence, or with `next_by_subject` the first at or after it.
    pub fn sequence(mut self, sequence: u64) -> Self {
        self.request.sequence = Some(sequence);
        self
    }

    /// The last message on `subject`.
    pub fn last_by_subject<S: Into<String>>(mut self, subject: S) -> Self {
        self.request.last_by_subject = Some(subject.into());
        self
    }

    /// The first message on `subject` (at or after `sequence`, if set).
    pub fn next_by_subject<S: Into<String>>(mut self, subject: S) -> Self {
        self.request.next_by_subject = Some(subject.into());
        self
    }

    /// Sends the request and turns status replies into errors.
    async fn send_request(&self) -> Result<Message, DirectGetError> {
        let (subject, payload) = match &self.request.last_by_subject {
            // The last-by-subject form names the subject in the request subject, body empty.
            Some(subject) => {
                if !super::is_valid_subject(subject) {
                    return Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject));
                }
                (
                    format!("DIRECT.GET.{}.{subject}", self.stream_name),
                    Bytes::new(),
                )
            }
            None => {
                let body = serde_json::to_vec(&self.request)
                    .map_err(|e| DirectGetError::with_source(DirectGetErrorKind::Other, e))?;
                (
                    format!("DIRECT.GET.{}", self.stream_name),
                    Bytes::from(body),
                )
            }
        };
        let message = self
            .context
            .api_request(subject, Request::new().payload(payload))
            .await
            .map_err(direct_get_request_error)?;
        checked_reply(message)
    }
}

/// The last message under `filter`, wildcards allowed, by direct get: the subject goes in the
/// body (`{"last_by_subj": ...}`), where the request subject's form cannot carry a wildcard.
#[cfg(any(feature = "kv", feature = "object-store"))]
pub(crate) async fn last_under_filter(
    context: &Context,
    stream: &str,
    filter: &str,
) -> Result<StreamMessage, DirectGetError> {
    if !super::is_valid_subject(filter) {
        return Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject));
    }
    let body = serde_json::to_vec(&serde_json::json!({ "last_by_subj": filter }))
        .map_err(|e| DirectGetError::with_source(DirectGetErrorKind::Other, e))?;
    let request = Request::new().payload(Bytes::from(body));
    let message = context
        .api_request(format!("DIRECT.GET.{stream}"), request)
        .await
        .map_err(direct_get_request_error)?;
    StreamMessage::try_from(checked_reply(message)?)
        .map_err(|error| DirectGetError::with_source(DirectGetErrorKind::Other, error))
}

/// A direct get's reply, its status replies turned into errors.
fn checked_reply(message: Message) -> Result<Message, DirectGetError> {
    match message.status {
        None | Some(StatusCode::OK) => Ok(message),
        Some(StatusCode::NOT_FOUND) => Err(DirectGetError::new(DirectGetErrorKind::NotFound)),
        // The server answers a malformed or empty request with 408.
        Some(StatusCode::TIMEOUT) => Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject)),
        Some(status) => Err(DirectGetError::new(DirectGetErrorKind::ErrorResponse(
            status,
            message.description.unwrap_or_default(),
        ))),
    }
}

/// A failed request as a direct get error; no responders means no replica serves direct
/// gets (the stream is missing or has `allow_direct` off).
pub(crate) fn direct_get_request_error(error: RequestError) -> DirectGetError {
    match error.kind() {
        RequestErrorKind::TimedOut => {
            DirectGetError::with_source(DirectGetErrorKind::TimedOut, error)
        }
        RequestErrorKind::NoResponders => DirectGetError::with_source(
            DirectGetErrorKind::ErrorResponse(
                StatusCode::NO_RESPONDERS,
                "no responders".to_owned(),
            ),
            error,
        ),
        RequestErrorKind::InvalidSubject => {
            DirectGetError::with_source(DirectGetErrorKind::InvalidSubject, error)
        }
        RequestErrorKind::Other => DirectGetError::with_source(DirectGetErrorKind::Request, error),
    }
}
