//! The time type of the JetStream API, and helpers to make one, at the path async-nats gives
//! them (`rnats::datetime`).
//!
//! Every timestamp in JetStream's types (stream and consumer info, message metadata, object
//! info, pause deadlines) is a [`DateTime`], which is `time::OffsetDateTime`, the type
//! async-nats uses with its default features.

use std::io;
use std::time::Duration;

use rnats_core::Error;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// The date and time type used across the JetStream API.
pub type DateTime = OffsetDateTime;

/// Parses an RFC 3339 timestamp (`2026-01-02T03:04:05Z`), given back in UTC whatever offset
/// the text carries.
pub fn parse_rfc3339(text: &str) -> Result<DateTime, Error> {
    let parsed = OffsetDateTime::parse(text, &Rfc3339)?;
    Ok(parsed.to_offset(UtcOffset::UTC))
}

/// The instant `nanos` nanoseconds after the Unix epoch (before it when negative), in UTC.
pub fn from_nanos(nanos: i128) -> Result<DateTime, Error> {
    Ok(OffsetDateTime::from_unix_timestamp_nanos(nanos)?)
}

/// The current time, in UTC.
pub fn now() -> DateTime {
    OffsetDateTime::now_utc()
}

/// `at` moved `duration` later; an error when the result is past what [`DateTime`] holds.
pub fn add_std_duration(at: DateTime, duration: Duration) -> Result<DateTime, Error> {
    let duration = time::Duration::try_from(duration)?;
    at.checked_add(duration).ok_or_else(|| {
        Error::from(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the date is out of range",
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_text_is_read_and_normalised_to_utc() {
        let at = parse_rfc3339("2026-01-02T05:04:05+02:00").unwrap();
        assert_eq!(at.offset(), UtcOffset::UTC);
        assert_eq!(at, parse_rfc3339("2026-01-02T03:04:05Z").unwrap());
        assert!(parse_rfc3339("yesterday").is_err());
    }

    #[test]
    fn nanos_count_from_the_epoch() {
        assert_eq!(from_nanos(0).unwrap(), OffsetDateTime::UNIX_EPOCH);
        let before = from_nanos(-1_500_000_000).unwrap();
        assert_eq!(before.unix_timestamp(), -2);
        assert_eq!(before.nanosecond(), 500_000_000);
        assert!(from_nanos(i128::MAX).is_err());
    }

    #[test]
    fn durations_add_until_the_range_ends() {
        let later = add_std_duration(OffsetDateTime::UNIX_EPOCH, Duration::from_secs(10)).unwrap();
        assert_eq!(later.unix_timestamp(), 10);
        assert!(add_std_duration(now(), Duration::from_secs(u64::MAX)).is_err());
        assert!(now().offset() == UtcOffset::UTC);
    }
}
