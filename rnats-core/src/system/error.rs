//! Why a system request failed.

use std::fmt;

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
    /// A server's answer is not the JSON expected; the source is an [`AnswerDecodeError`]
    /// with the answer's text.
    #[error("a server's answer did not decode")]
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

/// A server's answer that did not decode, with its text: the source of a
/// [`SystemErrorKind::Decode`] error.
#[derive(Debug)]
pub struct AnswerDecodeError {
    text: String,
    source: serde_json::Error,
}

/// How much of an answer's text the error's message quotes.
const QUOTED: usize = 256;

impl AnswerDecodeError {
    pub(crate) fn new(payload: &[u8], source: serde_json::Error) -> AnswerDecodeError {
        AnswerDecodeError {
            text: String::from_utf8_lossy(payload).into_owned(),
            source,
        }
    }

    /// The answer's text, whole (invalid UTF-8 replaced).
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
        Some(&self.source)
    }
}
