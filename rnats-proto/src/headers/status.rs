//! The status code carried on a header block's version line.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A three-digit status code from a `NATS/1.0 <code>` version line.
///
/// Servers use these for control messages such as "no responders" (503) or JetStream idle
/// heartbeats (100). The classes follow HTTP: 1xx informational, 2xx success, 4xx client
/// error, 5xx server error.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StatusCode(u16);

/// A number or text that is not a three-digit status code (100 to 999).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid status code: must be three digits, 100 to 999")]
pub struct InvalidStatusCode {
    _private: (),
}

impl StatusCode {
    /// JetStream flow control or idle heartbeat.
    pub const IDLE_HEARTBEAT: StatusCode = StatusCode(100);
    /// Success.
    pub const OK: StatusCode = StatusCode(200);
    /// The requested item does not exist (e.g. no message for a pull request).
    pub const NOT_FOUND: StatusCode = StatusCode(404);
    /// A JetStream pull request expired.
    pub const TIMEOUT: StatusCode = StatusCode(408);
    /// A JetStream pull request was ended by the server, e.g. because the consumer was deleted
    /// or its limits were reached.
    pub const REQUEST_TERMINATED: StatusCode = StatusCode(409);
    /// Another name for [`StatusCode::REQUEST_TERMINATED`]: the request conflicts with the
    /// consumer's state.
    pub const CONFLICT: StatusCode = StatusCode(409);
    /// A pull request named a pinned-client id the consumer no longer has (ADR-42).
    pub const PIN_ID_MISMATCH: StatusCode = StatusCode(423);
    /// A request was published but nobody is subscribed to its subject.
    pub const NO_RESPONDERS: StatusCode = StatusCode(503);

    /// Builds a status code, accepting only three-digit values (100 to 999).
    pub fn from_u16(code: u16) -> Result<StatusCode, InvalidStatusCode> {
        if (100..=999).contains(&code) {
            Ok(StatusCode(code))
        } else {
            Err(InvalidStatusCode { _private: () })
        }
    }

    /// Parses exactly three ASCII digits, the first not `0`.
    pub fn from_bytes(digits: &[u8]) -> Result<StatusCode, InvalidStatusCode> {
        match digits {
            [a, b, c] if [a, b, c].iter().all(|d| d.is_ascii_digit()) => {
                let code = [a, b, c]
                    .iter()
                    .fold(0, |n, d| n * 10 + u16::from(**d - b'0'));
                StatusCode::from_u16(code)
            }
            _ => Err(InvalidStatusCode { _private: () }),
        }
    }

    /// Returns the numeric code.
    pub fn as_u16(&self) -> u16 {
        self.0
    }

    /// 100 to 199.
    pub fn is_informational(&self) -> bool {
        (100..200).contains(&self.0)
    }

    /// 200 to 299.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.0)
    }

    /// 300 to 399.
    pub fn is_redirection(&self) -> bool {
        (300..400).contains(&self.0)
    }

    /// 400 to 499.
    pub fn is_client_error(&self) -> bool {
        (400..500).contains(&self.0)
    }

    /// 500 to 599.
    pub fn is_server_error(&self) -> bool {
        (500..600).contains(&self.0)
    }
}

/// [`StatusCode::OK`].
impl Default for StatusCode {
    fn default() -> StatusCode {
        StatusCode::OK
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Just the number, e.g. `503`.
impl fmt::Debug for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl FromStr for StatusCode {
    type Err = InvalidStatusCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StatusCode::from_bytes(s.as_bytes())
    }
}

impl TryFrom<u16> for StatusCode {
    type Error = InvalidStatusCode;

    fn try_from(code: u16) -> Result<Self, Self::Error> {
        StatusCode::from_u16(code)
    }
}

impl TryFrom<&str> for StatusCode {
    type Error = InvalidStatusCode;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl TryFrom<&[u8]> for StatusCode {
    type Error = InvalidStatusCode;

    fn try_from(digits: &[u8]) -> Result<Self, Self::Error> {
        StatusCode::from_bytes(digits)
    }
}

impl From<&StatusCode> for StatusCode {
    fn from(code: &StatusCode) -> StatusCode {
        *code
    }
}

impl From<StatusCode> for u16 {
    fn from(code: StatusCode) -> u16 {
        code.0
    }
}

impl PartialEq<u16> for StatusCode {
    fn eq(&self, other: &u16) -> bool {
        self.0 == *other
    }
}

impl PartialEq<StatusCode> for u16 {
    fn eq(&self, other: &StatusCode) -> bool {
        *self == other.0
    }
}

/// As the number.
impl Serialize for StatusCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u16(self.0)
    }
}

/// From the number; one outside 100 to 999 is an error.
impl<'de> Deserialize<'de> for StatusCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        StatusCode::from_u16(u16::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_digit_codes() {
        assert_eq!(StatusCode::from_u16(503), Ok(StatusCode::NO_RESPONDERS));
        assert_eq!(StatusCode::try_from(100), Ok(StatusCode::IDLE_HEARTBEAT));
        assert_eq!(StatusCode::from_u16(999).map(u16::from), Ok(999));
        for bad in [0, 99, 1000, u16::MAX] {
            assert!(StatusCode::from_u16(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn constants_are_the_server_codes() {
        let codes = [
            (StatusCode::IDLE_HEARTBEAT, 100),
            (StatusCode::OK, 200),
            (StatusCode::NOT_FOUND, 404),
            (StatusCode::TIMEOUT, 408),
            (StatusCode::REQUEST_TERMINATED, 409),
            (StatusCode::CONFLICT, 409),
            (StatusCode::PIN_ID_MISMATCH, 423),
            (StatusCode::NO_RESPONDERS, 503),
        ];
        for (code, n) in codes {
            assert_eq!(code.as_u16(), n);
            assert_eq!(code, n);
            assert_eq!(n, code);
        }
        assert_eq!(StatusCode::default(), StatusCode::OK);
    }

    #[test]
    fn parses_text() {
        assert_eq!("503".parse(), Ok(StatusCode::NO_RESPONDERS));
        assert_eq!(StatusCode::try_from("408"), Ok(StatusCode::TIMEOUT));
        assert_eq!(StatusCode::try_from(&b"404"[..]), Ok(StatusCode::NOT_FOUND));
        for bad in ["", "50", "5034", "099", "abc", "5 3", "+50", "-50", " 503"] {
            assert!(bad.parse::<StatusCode>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn classes() {
        assert!(StatusCode::IDLE_HEARTBEAT.is_informational());
        assert!(StatusCode::OK.is_success());
        assert!(StatusCode::from_u16(301).unwrap().is_redirection());
        assert!(StatusCode::TIMEOUT.is_client_error());
        assert!(StatusCode::NO_RESPONDERS.is_server_error());
        assert!(!StatusCode::NO_RESPONDERS.is_client_error());
    }

    #[test]
    fn formats_as_the_number() {
        assert_eq!(StatusCode::TIMEOUT.to_string(), "408");
        assert_eq!(format!("{:?}", Some(StatusCode::TIMEOUT)), "Some(408)");
        assert_eq!(
            InvalidStatusCode { _private: () }.to_string(),
            "invalid status code: must be three digits, 100 to 999"
        );
    }

    #[test]
    fn serde_as_number() {
        assert_eq!(serde_json::to_string(&StatusCode::OK).unwrap(), "200");
        assert_eq!(
            serde_json::from_str::<StatusCode>("503").unwrap(),
            StatusCode::NO_RESPONDERS
        );
        assert!(serde_json::from_str::<StatusCode>("42").is_err());
    }
}
