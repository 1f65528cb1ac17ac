//! Errors: the error a handler answers a request with ([`Error`], sent as ADR-32's error
//! headers), and why a service or endpoint could not be set up ([`ServiceError`]).

use std::fmt;

use rnats_core::HeaderMap;
use serde::{Deserialize, Serialize};

use crate::{NATS_SERVICE_ERROR, NATS_SERVICE_ERROR_CODE};

/// An error response: sent as the `Nats-Service-Error` (status) and `Nats-Service-Error-Code`
/// (code) headers with an empty body, and counted in the endpoint's stats.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// A description of what went wrong.
    pub status: String,
    /// A numeric code, by convention an HTTP-like status (400, 500, 503, ...).
    pub code: usize,
}

impl Error {
    /// The service error a reply carries in its headers, if it carries one: how a caller tells
    /// an error response from a success. A code that is not a number reads as 0.
    pub fn from_headers(headers: &HeaderMap) -> Option<Error> {
        let status = headers.get(NATS_SERVICE_ERROR);
        let code = headers.get(NATS_SERVICE_ERROR_CODE);
        if status.is_none() && code.is_none() {
            return None;
        }
        Some(Error {
            status: status.map(|s| s.as_str().to_owned()).unwrap_or_default(),
            code: code
                .and_then(|c| c.as_str().trim().parse().ok())
                .unwrap_or(0),
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "service request error code: {}, status: {}",
            self.code, self.status
        )
    }
}

impl std::error::Error for Error {}

/// The kinds of [`ServiceError`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServiceErrorKind {
    /// The service name is empty or has characters other than `A-Z a-z 0-9 - _`.
    InvalidName,
    /// The version is not a semantic version.
    InvalidVersion,
    /// The queue group is not a valid queue group name.
    InvalidQueueGroup,
    /// The endpoint subject is not a valid subject.
    InvalidSubject,
    /// A subscription could not be made (the client is closed).
    Subscribe,
    /// The service was stopped: no endpoint can be added.
    Stopped,
    /// Draining the subscriptions on stop failed (the connection closed meanwhile).
    Drain,
}

impl fmt::Display for ServiceErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ServiceErrorKind::InvalidName => {
                "service name is not valid (only A-Z, a-z, 0-9, - and _ are allowed)"
            }
            ServiceErrorKind::InvalidVersion => "service version is not a valid semver string",
            ServiceErrorKind::InvalidQueueGroup => "invalid queue group",
            ServiceErrorKind::InvalidSubject => "invalid endpoint subject",
            ServiceErrorKind::Subscribe => "failed to subscribe",
            ServiceErrorKind::Stopped => "the service is stopped",
            ServiceErrorKind::Drain => "failed to drain the service's subscriptions",
        })
    }
}

/// Why a service could not start, an endpoint could not be added, or a stop did not drain.
/// The async-nats shaped calls return it boxed as [`rnats_core::Error`]; downcast to read the
/// kind (an invalid name or version comes wrapped in a `std::io::Error`, see `start`).
pub type ServiceError = rnats_core::error::Error<ServiceErrorKind>;

/// Boxes a [`ServiceError`] the way async-nats reports the same failure. A name or version that
/// does not pass validation becomes a [`std::io::Error`] of kind
/// [`InvalidInput`](std::io::ErrorKind::InvalidInput), so code that downcasts to `io::Error`
/// keeps working; the typed error stays inside it, reachable with `get_ref()` and a downcast
/// to [`ServiceError`]. Every other kind is boxed as it is.
pub(crate) fn into_boxed(error: ServiceError) -> rnats_core::Error {
    match error.kind() {
        ServiceErrorKind::InvalidName | ServiceErrorKind::InvalidVersion => {
            Box::new(std::io::Error::new(std::io::ErrorKind::InvalidInput, error))
        }
        _ => Box::new(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_headers() {
        let error = Error {
            status: "busy".into(),
            code: 503,
        };
        assert_eq!(
            error.to_string(),
            "service request error code: 503, status: busy"
        );
        let mut headers = HeaderMap::new();
        assert_eq!(Error::from_headers(&headers), None);
        headers.insert(NATS_SERVICE_ERROR, "busy");
        headers.insert(NATS_SERVICE_ERROR_CODE, "503");
        assert_eq!(Error::from_headers(&headers), Some(error));
    }
}
