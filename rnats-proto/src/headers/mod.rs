//! NATS message headers (ADR-4).
//!
//! A header block is the `NATS/1.0` version line, optionally followed by a
//! three-digit status code and a description, then `Name: value` lines, and
//! finally an empty line. Every line ends with `\r\n`.

mod block;
pub mod constants;
mod map;
mod name;
mod status;

pub use block::{HeaderBlock, encode_headers, encoded_len};
pub use map::{GetAll, HeaderIter, HeaderMap};
pub use name::{HeaderError, HeaderName, HeaderValue, IntoHeaderName, IntoHeaderValue};
pub use status::{InvalidStatusCode, StatusCode};

/// The version line every header block starts with.
const VERSION: &[u8] = b"NATS/1.0";
