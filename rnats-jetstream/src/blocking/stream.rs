//! Streams from a blocking [`Context`]: create, get, update and delete them over the
//! `STREAM.*` API, and the [`Stream`] handle to read, delete and purge its messages.

use bytes::Bytes;
use rnats_core::StatusCode;
use serde::{Deserialize, Serialize};

use super::context::Context;
use crate::errors::ErrorCode;
use crate::message::StreamMessage;
use crate::response::Response;
use crate::stream::direct::direct_get_request_error;
use crate::stream::errors::timed_out_or_request;
use crate::stream::manage::{checked_config, checked_name, name_exists};
use crate::stream::{
    Config, DeleteMessageError, DeleteMessageErrorKind, DeleteStatus, DirectGetError,
    DirectGetErrorKind, Info, InfoError, PurgeError, PurgeErrorKind, PurgeRequest, PurgeResponse,
    RawMessage, RawMessageError, RawMessageErrorKind,
};
use crate::stream_errors::{
    CreateStreamError, CreateStreamErrorKind, DeleteStreamError, GetStreamError,
    GetStreamErrorKind, UpdateStreamError, create_request_error, get_stream_server_error,
    server_request_error,
};

impl Context {
    /// Creates a stream and returns a handle with its info. Creating a stream that exists
    /// with the same config succeeds; with another config the server refuses
    /// (`ErrorCode::STREAM_NAME_EXIST`).
    pub fn create_stream<S>(&self, stream_config: S) -> Result<Stream, CreateStreamError>
    where
        Config: From<S>,
    {
        let config = Config::from(stream_config);
        let config = checked_config(&config)?;
        let response: Response<Info> = self
            .request(format!("STREAM.CREATE.{}", config.name), &*config)
            .map_err(create_request_error)?;
        let info = response.into_result()?;
        Ok(self.stream_handle(config.name.clone(), info))
    }

    /// A handle to the stream `stream`, with its info.
    pub fn get_stream<T: AsRef<str>>(&self, stream: T) -> Result<Stream, GetStreamError> {
        let name = checked_name(stream.as_ref())?;
        let response: Response<Info> = self
            .request(format!("STREAM.INFO.{name}"), &())
            .map_err(|e| GetStreamError::with_source(GetStreamErrorKind::Request, e))?;
        let info = response.into_result().map_err(get_stream_server_error)?;
        Ok(self.stream_handle(name.to_owned(), info))
    }

    /// The stream named in `stream_config` if it exists (its config left as it is),
    /// otherwise a new one with this config. Callers racing to make the same stream all
    /// get the one the server created first.
    pub fn get_or_create_stream<S>(&self, stream_config: S) -> Result<Stream, CreateStreamError>
    where
        S: Into<Config>,
    {
        let config: Config = stream_config.into();
        checked_config(&config)?;
        if let Some(stream) = self.existing_stream(&config.name)? {
            return Ok(stream);
        }
        let name = config.name.clone();
        match self.create_stream(config) {
            // Another caller made it first, with another config: take theirs.
            Err(error) if name_exists(&error) => self
                .existing_stream(&name)?
                .ok_or_else(|| CreateStreamError::new(CreateStreamErrorKind::NotFound)),
            result => result,
        }
    }

    /// Changes the config of an existing stream; a missing one fails with
    /// `CreateStreamErrorKind::NotFound`.
    pub fn update_stream<S>(&self, config: S) -> Result<Info, UpdateStreamError>
    where
        S: std::borrow::Borrow<Config>,
    {
        let config = checked_config(config.borrow())?;
        let response: Response<Info> = self
            .request(format!("STREAM.UPDATE.{}", config.name), &*config)
            .map_err(create_request_error)?;
        Ok(response.into_result()?)
    }

    /// Deletes the stream `stream` with all its messages and consumers.
    pub fn delete_stream<T: AsRef<str>>(
        &self,
        stream: T,
    ) -> Result<DeleteStatus, DeleteStreamError> {
        let name = checked_name(stream.as_ref())?;
        let response: Response<DeleteStatus> =
            self.request(format!("STREAM.DELETE.{name}"), &())
                .map_err(|e| DeleteStreamError::with_source(GetStreamErrorKind::Request, e))?;
        response.into_result().map_err(get_stream_server_error)
    }

    /// The stream `name` with its info, or `None` when the server has no such stream.
    fn existing_stream(&self, name: &str) -> Result<Option<Stream>, CreateStreamError> {
        let response: Response<Info> = self
            .request(format!("STREAM.INFO.{name}"), &())
            .map_err(create_request_error)?;
        match response {
            Response::Ok(info) => Ok(Some(self.stream_handle(name.to_owned(), info))),
            Response::Err { error } if error.error_code() == ErrorCode::STREAM_NOT_FOUND => {
                Ok(None)
            }
            Response::Err { error } => Err(error.into()),
        }
    }

    pub(super) fn stream_handle(&self, name: String, info: Info) -> Stream {
        Stream {
            info,
            context: self.clone(),
            name,
        }
    }
}

/// A handle to one stream, with its info as last fetched. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Stream {
    pub(super) info: Info,
    pub(super) context: Context,
    pub(super) name: String,
}

impl Stream {
    /// Fetches the stream's info, keeps it as the cached info and returns it.
    pub fn info(&mut self) -> Result<&Info, InfoError> {
        self.info = self.get_info()?;
        Ok(&self.info)
    }

    /// Fetches the stream's info without caching it.
    pub fn get_info(&self) -> Result<Info, InfoError> {
        let response: Response<Info> = self
            .context
            .request(format!("STREAM.INFO.{}", self.name), &())?;
        response.into_result().map_err(server_request_error)
    }

    /// The info as fetched last (by `get_stream`, `create_stream` or [`Stream::info`]).
    pub fn cached_info(&self) -> &Info {
        &self.info
    }

    /// The stream's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Purges every message of the stream.
    pub fn purge(&self) -> Result<PurgeResponse, PurgeError> {
        self.purge_with(PurgeRequest::default())
    }

    /// Purges as `request` says: only a subject (`filter`), below a sequence, or all but
    /// the newest `keep` messages.
    pub fn purge_with(&self, request: PurgeRequest) -> Result<PurgeResponse, PurgeError> {
        let response: Response<PurgeResponse> = self
            .context
            .request(format!("STREAM.PURGE.{}", self.name), &request)
            .map_err(|e| {
                timed_out_or_request(e, PurgeErrorKind::TimedOut, PurgeErrorKind::Request)
            })?;
        response.into_result().map_err(|error| {
            PurgeError::with_source(PurgeErrorKind::JetStream(error.clone()), error)
        })
    }

    /// The message with `sequence`, from the stream leader (`STREAM.MSG.GET`).
    pub fn get_raw_message(&self, sequence: u64) -> Result<StreamMessage, RawMessageError> {
        self.raw_message(&MessageGet {
            sequence: Some(sequence),
            last_by_subject: None,
        })
    }

    /// The last message on `stream_subject`, from the stream leader.
    pub fn get_last_raw_message_by_subject(
        &self,
        stream_subject: &str,
    ) -> Result<StreamMessage, RawMessageError> {
        if !crate::stream::is_valid_subject(stream_subject) {
            return Err(RawMessageError::new(RawMessageErrorKind::InvalidSubject));
        }
        self.raw_message(&MessageGet {
            sequence: None,
            last_by_subject: Some(stream_subject),
        })
    }

    /// The last sequence that any of `filters` matches, 0 for none, as
    /// `consumer::push::read_end::last_sequence` asks it; `None` if the stream could not be
    /// asked.
    #[cfg(any(feature = "kv", feature = "object-store"))]
    pub(crate) fn last_sequence(&self, filters: &[String]) -> Option<u64> {
        let mut last = 0;
        for filter in filters {
            let sequence = if self.info.config.allow_direct {
                // The subject goes in the body: the request subject cannot carry a wildcard.
                let request = MessageGet {
                    sequence: None,
                    last_by_subject: Some(filter),
                };
                let body = serde_json::to_vec(&request).ok()?;
                match self.direct(format!("DIRECT.GET.{}", self.name), Bytes::from(body)) {
                    Ok(message) => Some(message.sequence),
                    Err(error) if error.kind() == DirectGetErrorKind::NotFound => None,
                    Err(_) => return None,
                }
            } else {
                match self.get_last_raw_message_by_subject(filter) {
                    Ok(message) => Some(message.sequence),
                    Err(error) if error.kind() == RawMessageErrorKind::NoMessageFound => None,
                    Err(_) => return None,
                }
            };
            last = last.max(sequence.unwrap_or(0));
        }
        Some(last)
    }

    /// The message with `sequence` by direct get (ADR-31), from any replica; the stream
    /// needs `allow_direct`.
    pub fn direct_get(&self, sequence: u64) -> Result<StreamMessage, DirectGetError> {
        let body = serde_json::to_vec(&MessageGet {
            sequence: Some(sequence),
            last_by_subject: None,
        })
        .map_err(|e| DirectGetError::with_source(DirectGetErrorKind::Other, e))?;
        self.direct(format!("DIRECT.GET.{}", self.name), Bytes::from(body))
    }

    /// The last message on `subject` by direct get (ADR-31).
    pub fn direct_get_last_for_subject<T: AsRef<str>>(
        &self,
        subject: T,
    ) -> Result<StreamMessage, DirectGetError> {
        let subject = subject.as_ref();
        if !crate::stream::is_valid_subject(subject) {
            return Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject));
        }
        // This form names the subject in the request subject, with no body.
        self.direct(format!("DIRECT.GET.{}.{subject}", self.name), Bytes::new())
    }

    /// Deletes the message with `sequence`, overwriting its stored bytes (the server's
    /// default, as in the async API); whether the server deleted it.
    pub fn delete_message(&self, sequence: u64) -> Result<bool, DeleteMessageError> {
        #[derive(Serialize)]
        struct DeleteRequest {
            seq: u64,
        }
        let response: Response<DeleteStatus> = self
            .context
            .request(
                format!("STREAM.MSG.DELETE.{}", self.name),
                &DeleteRequest { seq: sequence },
            )
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

    fn raw_message(&self, request: &MessageGet<'_>) -> Result<StreamMessage, RawMessageError> {
        #[derive(Deserialize)]
        struct Reply {
            message: RawMessage,
        }
        let response: Response<Reply> = self
            .context
            .request(format!("STREAM.MSG.GET.{}", self.name), request)
            .map_err(|e| RawMessageError::with_source(RawMessageErrorKind::Other, e))?;
        match response {
            Response::Ok(reply) => StreamMessage::try_from(reply.message)
                .map_err(|e| RawMessageError::with_source(RawMessageErrorKind::Other, e)),
            Response::Err { error } if error.error_code() == ErrorCode::NO_MESSAGE_FOUND => Err(
                RawMessageError::with_source(RawMessageErrorKind::NoMessageFound, error),
            ),
            Response::Err { error } => Err(RawMessageError::with_source(
                RawMessageErrorKind::JetStream(error.clone()),
                error,
            )),
        }
    }

    /// Sends a direct get and reads the reply: the message, or a status saying why not.
    fn direct(&self, subject: String, body: Bytes) -> Result<StreamMessage, DirectGetError> {
        let message = self
            .context
            .api_request(&subject, body)
            .map_err(direct_get_request_error)?;
        match message.status {
            None | Some(StatusCode::OK) => StreamMessage::try_from(message)
                .map_err(|e| DirectGetError::with_source(DirectGetErrorKind::Other, e)),
            Some(StatusCode::NOT_FOUND) => Err(DirectGetError::new(DirectGetErrorKind::NotFound)),
            // The server answers a malformed request with 408.
            Some(StatusCode::TIMEOUT) => {
                Err(DirectGetError::new(DirectGetErrorKind::InvalidSubject))
            }
            Some(status) => Err(DirectGetError::new(DirectGetErrorKind::ErrorResponse(
                status,
                message.description.unwrap_or_default(),
            ))),
        }
    }
}

/// The body of `STREAM.MSG.GET` and of a direct get by sequence.
#[derive(Serialize)]
struct MessageGet<'a> {
    #[serde(rename = "seq", skip_serializing_if = "Option::is_none")]
    sequence: Option<u64>,
    #[serde(rename = "last_by_subj", skip_serializing_if = "Option::is_none")]
    last_by_subject: Option<&'a str>,
}
