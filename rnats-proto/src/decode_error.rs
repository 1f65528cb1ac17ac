//! Why bytes received from a server could not be decoded.

use crate::subject::SubjectCause;

/// A protocol violation found while decoding server bytes.
///
/// The stream cannot be resynchronised afterwards: the connection should be
/// closed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// No line end was found within the configured control-line limit.
    #[error("control line is longer than {max} bytes")]
    ControlLineTooLong {
        /// The limit that was exceeded, excluding the `\r\n`.
        max: usize,
    },
    /// The line starts with something other than a known server op.
    #[error("unknown protocol operation {op:?}")]
    UnknownOp {
        /// The op name (at most 32 bytes of it, lossily decoded).
        op: String,
    },
    /// An op has the wrong number of arguments.
    #[error("wrong number of arguments for {op}")]
    InvalidArguments {
        /// The op whose arguments were wrong.
        op: &'static str,
    },
    /// A sid or size argument is not a non-negative decimal number that fits.
    #[error("invalid number in {op} arguments")]
    InvalidNumber {
        /// The op whose argument was wrong.
        op: &'static str,
    },
    /// A message is larger than the parser's `max_payload`.
    #[error("message of {size} bytes exceeds the limit of {max} bytes")]
    PayloadTooLarge {
        /// Total size announced by the server.
        size: usize,
        /// The configured limit.
        max: usize,
    },
    /// An `HMSG` announces more header bytes than total bytes.
    #[error("HMSG header size {header_len} exceeds total size {total_len}")]
    HeaderSizeExceedsTotal {
        /// Announced header size.
        header_len: usize,
        /// Announced total size.
        total_len: usize,
    },
    /// A control line ended in a bare `\n`, or a payload was not followed by `\r\n`.
    #[error("missing CRLF terminator")]
    MissingTerminator,
    /// A message subject or reply subject is invalid.
    #[error("invalid subject in message: {0}")]
    InvalidSubject(#[from] SubjectCause),
    /// An `HMSG` header block is malformed.
    #[error("invalid header block: {reason}")]
    InvalidHeaders {
        /// What was wrong with the block.
        reason: &'static str,
    },
    /// The JSON of an `INFO` op could not be parsed.
    #[error("invalid INFO JSON: {0}")]
    InvalidInfo(String),
}
