//! Reading a message from the stream leader over `STREAM.MSG.GET.<stream>`: the message
//! comes back as JSON, its payload and header block base64-encoded.

use std::marker::PhantomData;

use bytes::Bytes;
use rnats_core::HeaderMap;
use rnats_core::datetime::DateTime;
use rnats_core::proto::HeaderBlock;
use serde::{Deserialize, Serialize};

use super::direct::{StreamValue, WithHeaders, WithoutHeaders};
use super::errors::{RawMessageError, RawMessageErrorKind};
use crate::context::Context;
use crate::errors::ErrorCode;
use crate::message::{StreamMessage, StreamMessageError, StreamMessageErrorKind};
use crate::response::Response;

/// A stored message as `STREAM.MSG.GET` returns it.
#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct RawMessage {
    /// The subject it was published to.
    pub subject: String,
    /// Its sequence in the stream.
    #[serde(rename = "seq")]
    pub sequence: u64,
    /// The payload, base64.
    #[serde(default, rename = "data")]
    pub payload: String,
    /// The header block (`NATS/1.0\r\n...`), base64, if it has headers.
    #[serde(default, rename = "hdrs")]
    pub headers: Option<String>,
    /// When it was stored.
    #[serde(with = "rnats_core::datetime::rfc3339")]
    pub time: DateTime,
}

impl TryFrom<RawMessage> for StreamMessage {
    type Error = rnats_core::Error;

    fn try_from(raw: RawMessage) -> Result<StreamMessage, rnats_core::Error> {
        let payload = base64_decode(&raw.payload).map_err(parse_error)?;
        let headers = match raw.headers.as_deref() {
            None | Some("") => HeaderMap::new(),
            Some(encoded) => {
                let block = base64_decode(encoded).map_err(parse_error)?;
                HeaderBlock::decode(&block)
                    .map_err(|e| {
                        StreamMessageError::with_source(StreamMessageErrorKind::ParseError, e)
                    })?
                    .headers
            }
        };
        Ok(StreamMessage {
            subject: raw.subject.into(),
            sequence: raw.sequence,
            headers,
            payload: Bytes::from(payload),
            time: raw.time,
        })
    }
}

/// The body of `STREAM.MSG.GET`: one of a sequence, a subject's last message, or a subject's
/// first message (at or after the sequence).
#[derive(Debug, Serialize, Default, Clone)]
pub struct RawMessageRequest {
    #[serde(rename = "seq", skip_serializing_if = "Option::is_none")]
    sequence: Option<u64>,
    #[serde(rename = "last_by_subj", skip_serializing_if = "Option::is_none")]
    last_by_subject: Option<String>,
    #[serde(rename = "next_by_subj", skip_serializing_if = "Option::is_none")]
    next_by_subject: Option<String>,
}

/// Builds a `STREAM.MSG.GET`, which the stream leader answers.
#[derive(Debug, Clone)]
pub struct RawMessageBuilder<T = WithHeaders> {
    context: Context,
    stream_name: String,
    request: RawMessageRequest,
    _result: PhantomData<T>,
}

impl RawMessageBuilder<WithHeaders> {
    pub(crate) fn new(context: Context, stream_name: String) -> RawMessageBuilder<WithHeaders> {
        RawMessageBuilder {
            context,
            stream_name,
            request: RawMessageRequest::default(),
            _result: PhantomData,
        }
    }

    /// Returns the payload only; `send` then returns a [`StreamValue`].
    pub fn without_headers(self) -> RawMessageBuilder<WithoutHeaders> {
        RawMessageBuilder {
            context: self.context,
            stream_name: self.stream_name,
            request: self.request,
            _result: PhantomData,
        }
    }

    /// Sends the request; the message with its headers.
    pub async fn send(self) -> Result<StreamMessage, RawMessageError> {
        let raw = self.send_request().await?;
        StreamMessage::try_from(raw)
            .map_err(|e| RawMessageError::with_source(RawMessageErrorKind::Other, e))
    }
}

impl RawMessageBuilder<WithoutHeaders> {
    /// Sends the request; the payload alone.
    pub async fn send(self) -> Result<StreamValue, RawMessageError> {
        let raw = self.send_request().await?;
        let data = base64_decode(&raw.payload)
            .map_err(|e| RawMessageError::with_source(RawMessageErrorKind::Other, e))?;
        Ok(StreamValue {
            data: Bytes::from(data),
        })
    }
}

impl<T> RawMessageBuilder<T> {
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

    async fn send_request(&self) -> Result<RawMessage, RawMessageError> {
        let subjects = [&self.request.last_by_subject, &self.request.next_by_subject];
        if subjects
            .into_iter()
            .flatten()
            .any(|subject| !super::is_valid_subject(subject))
        {
            return Err(RawMessageError::new(RawMessageErrorKind::InvalidSubject));
        }
        let response: Response<GetRawMessage> = self
            .context
            .request(
                format!("STREAM.MSG.GET.{}", self.stream_name),
                &self.request,
            )
            .await
            .map_err(|e| RawMessageError::with_source(RawMessageErrorKind::Other, e))?;
        match response {
            Response::Ok(reply) => Ok(reply.message),
            Response::Err { error } if error.error_code() == ErrorCode::NO_MESSAGE_FOUND => Err(
                RawMessageError::with_source(RawMessageErrorKind::NoMessageFound, error),
            ),
            Response::Err { error } => Err(RawMessageError::with_source(
                RawMessageErrorKind::JetStream(error.clone()),
                error,
            )),
        }
    }
}

/// The reply of `STREAM.MSG.GET`.
#[derive(Debug, Deserialize)]
struct GetRawMessage {
    message: RawMessage,
}

fn parse_error(error: &'static str) -> StreamMessageError {
    StreamMessageError::with_source(StreamMessageErrorKind::ParseError, error)
}

/// Decodes standard base64 (RFC 4648 §4, the alphabet Go's `StdEncoding` writes), padded or
/// not.
fn base64_decode(text: &str) -> Result<Vec<u8>, &'static str> {
    let digits = text.trim_end_matches('=').as_bytes();
    if text.len() - digits.len() > 2 || digits.len() % 4 == 1 {
        return Err("invalid base64 length");
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let (mut bits, mut count) = (0u32, 0u32);
    for &digit in digits {
        let value = match digit {
            b'A'..=b'Z' => digit - b'A',
            b'a'..=b'z' => digit - b'a' + 26,
            b'0'..=b'9' => digit - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err("invalid base64 digit"),
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            // Truncation keeps the 8 bits just completed.
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64_padded_and_not() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("Zg==").unwrap(), b"f");
        assert_eq!(base64_decode("Zm8=").unwrap(), b"fo");
        assert_eq!(base64_decode("Zm9v").unwrap(), b"foo");
        assert_eq!(base64_decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(base64_decode("+/8=").unwrap(), [0xfb, 0xff]);
        assert!(base64_decode("Zm9v!").is_err());
        assert!(base64_decode("Z").is_err());
        assert!(base64_decode("Zg===").is_err());
    }

    #[test]
    fn a_raw_message_becomes_a_stream_message() {
        // "NATS/1.0\r\nX-Kind: a\r\n\r\n" and "hello", as the server encodes them.
        let json = r#"{"subject":"orders.new","seq":7,"hdrs":"TkFUUy8xLjANClgtS2luZDogYQ0KDQo=",
            "data":"aGVsbG8=","time":"2024-05-01T10:00:00.123456789Z","extra":1}"#;
        let raw: RawMessage = serde_json::from_str(json).unwrap();
        let message = StreamMessage::try_from(raw).unwrap();
        assert_eq!(message.subject.as_str(), "orders.new");
        assert_eq!(message.sequence, 7);
        assert_eq!(message.payload, Bytes::from("hello"));
        assert_eq!(message.headers.get("X-Kind").unwrap().as_str(), "a");
        assert_eq!(
            rnats_core::datetime::to_nanos(&message.time) % 1_000_000_000,
            123_456_789
        );
    }

    #[test]
    fn bad_base64_is_an_error_not_a_panic() {
        let json = r#"{"subject":"a","seq":1,"data":"%%%","time":"2024-05-01T10:00:00Z"}"#;
        let raw: RawMessage = serde_json::from_str(json).unwrap();
        assert!(StreamMessage::try_from(raw).is_err());
    }
}
