//! [`Request`]: one request to an endpoint, answered once.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use rnats_core::{Client, HeaderMap, Message, PublishError, PublishErrorKind};

use crate::endpoint::Record;
use crate::{NATS_SERVICE_ERROR, NATS_SERVICE_ERROR_CODE, error};

/// A request received by an [`Endpoint`](crate::endpoint::Endpoint). Its processing time runs
/// from when the stream yielded it to when it is answered.
#[derive(Debug)]
pub struct Request {
    issued: Instant,
    client: Client,
    /// The request as received: payload, headers, reply subject.
    pub message: Message,
    record: Arc<Record>,
}

impl Request {
    pub(crate) fn new(client: Client, message: Message, record: Arc<Record>) -> Request {
        Request {
            issued: Instant::now(),
            client,
            message,
            record,
        }
    }

    /// Answers the request: `Ok(payload)`, or `Err(error)`, sent as an empty body with the
    /// `Nats-Service-Error` and `Nats-Service-Error-Code` headers. Either way the request is
    /// counted in the endpoint's stats (an error also as an error).
    pub async fn respond(&self, response: Result<Bytes, error::Error>) -> Result<(), PublishError> {
        self.respond_with_headers(response, HeaderMap::new()).await
    }

    /// Answers with headers of the caller's; for an error response the two service error
    /// headers replace any of the same name in `headers`.
    pub async fn respond_with_headers(
        &self,
        response: Result<Bytes, error::Error>,
        mut headers: HeaderMap,
    ) -> Result<(), PublishError> {
        let Some(reply) = self.message.reply.clone() else {
            return Err(PublishError::with_source(
                PublishErrorKind::InvalidSubject,
                "the request has no reply subject to respond to",
            ));
        };
        let (sent, error) = match response {
            Ok(payload) if headers.is_empty() => (self.client.publish(reply, payload).await, None),
            Ok(payload) => (
                self.client
                    .publish_with_headers(reply, headers, payload)
                    .await,
                None,
            ),
            Err(error) => {
                headers.insert(NATS_SERVICE_ERROR, error.status.as_str());
                headers.insert(NATS_SERVICE_ERROR_CODE, error.code.to_string());
                let sent = self
                    .client
                    .publish_with_headers(reply, headers, Bytes::new())
                    .await;
                (sent, Some(error))
            }
        };
        self.record.record(self.issued.elapsed(), error);
        sent
    }
}
