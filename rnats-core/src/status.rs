//! Status codes of header version lines (`NATS/1.0 503`), e.g. [`StatusCode::NO_RESPONDERS`].

pub use rnats_proto::{InvalidStatusCode, StatusCode};
