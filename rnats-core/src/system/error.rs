//! Why a system request failed, and why one server's answer did not decode.

use std::fmt;
use std::sync::Arc;

/// A system request's failure: what kind ([`SystemError::kind`]) and its cause
/// ([`std::error::Error::source`]).
pub type SystemError = crate::error::Error<SystemErrorKind>;

/// The kinds of [`SystemError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SystemErrorKind {
    /// Nobody answers system requests in the user's account (the server said "no
    /// responders"): the user is not in the system account, or the servers have none.
    #[error("no responders: the user is not in the system account")]
    NotSystemAccount,
    /// No server answered: before the timeout (a filter that matched no server), or at
    /// all (a server ID that is not up).
    #[error("no server answered")]
    NoAnswer,
    /// Answers came, but not one of them is a server's answer (each is not JSON, or not
    /// the envelope every server sends); the source is the first one's
    /// [`AnswerDecodeError`], with its text. Once any answer is readable, the others are
    /// kept in the answers instead (see [`ServerAnswer::decode_error`]).
    ///
    /// [`ServerAnswer::decode_error`]: super::ServerAnswer::decode_error
    #[error("no server's answer decoded")]
    Decode,
    /// The kind or the server ID is not a single subject token.
    #[error("the kind or server ID is not a subject token")]
    InvalidSubject,
    /// The options are not a JSON object.
    #[error("the request options are not a JSON object")]
    InvalidOptions,
    /// Sending the request or receiving its answers failed (the client closed, say); the
    /// source is the client's error.
    #[error("the system request failed")]
    Request,
}

/// A server's answer, or its data, that did not decode, with its text: kept in the answer
/// ([`ServerAnswer::decode_error`](super::ServerAnswer::decode_error)), and the source of a
/// [`SystemErrorKind::Decode`] error.
///
/// Two of them are equal when their texts and their messages are.
#[derive(Debug, Clone)]
pub struct AnswerDecodeError {
    text: String,
    /// Shared, so that an answer that holds it stays cheap to clone.
    source: Arc<serde_json::Error>,
}

/// How much of an answer's text the error's message quotes.
const QUOTED: usize = 256;

impl AnswerDecodeError {
    pub(crate) fn new(payload: &[u8], source: serde_json::Error) -> AnswerDecodeError {
        AnswerDecodeError {
            text: String::from_utf8_lossy(payload).into_owned(),
            source: Arc::new(source),
        }
    }

    /// The error of data that is JSON but not the type asked for.
    pub(crate) fn of_data(
        data: &serde_json::Value,
        source: serde_json::Error,
    ) -> AnswerDecodeError {
        AnswerDecodeError {
            text: data.to_string(),
            source: Arc::new(source),
        }
    }

    /// The text that did not decode, whole (invalid UTF-8 replaced): the whole answer when
    /// its envelope did not decode, the data alone (as JSON) when only the data did not.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for AnswerDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut end = self.text.len().min(QUOTED);
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let more = if end < self.text.len() { "..." } else { "" };
        write!(f, "{} in {:?}{more}", self.source, &self.text[..end])
    }
}

impl std::error::Error for AnswerDecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

impl PartialEq for AnswerDecodeError {
    fn eq(&self, other: &AnswerDecodeError) -> bool {
        self.text == other.text && self.source.to_string() == other.source.to_string()
    }
}
