//! The status code carried on a header block's version line.

use std::fmt;

/// A three-digit status code from a `NATS/1.0 <code>` version line.
///
/// Servers use these for control messages such as "no responders" (503) or
/// JetStream idle heartbeats (100).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct StatusCode(u16);

impl StatusCode {
    /// JetStream flow control or idle heartbeat.
    pub const IDLE_HEARTBEAT: StatusCode = StatusCode(100);
    /// Success.
    pub const OK: StatusCode = StatusCode(200);
    /// The requested item does not exist (e.g. no message for a pull request).
    pub const NOT_FOUND: StatusCode = StatusCode(404);
    /// A JetStream pull request expired.
    pub const TIMEOUT: StatusCode = StatusCode(408);
    /// A JetStream request conflicts with the consumer's state.
    pub const CONFLICT: StatusCode = StatusCode(409);
    /// A request was published but nobody is subscribed to its subject.
    pub const NO_RESPONDERS: StatusCode = StatusCode(503);

    /// Builds a status code, accepting only three-digit values (100..=999).
    pub fn from_u16(code: u16) -> Option<StatusCode> {
        (100..=999).contains(&code).then_some(StatusCode(code))
    }

    /// Returns the numeric code.
    pub fn as_u16(self) -> u16 {
        self.0
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_digit_codes() {
        assert_eq!(StatusCode::from_u16(503), Some(StatusCode::NO_RESPONDERS));
        assert_eq!(StatusCode::from_u16(99), None);
        assert_eq!(StatusCode::from_u16(1000), None);
        assert_eq!(StatusCode::TIMEOUT.to_string(), "408");
    }
}
