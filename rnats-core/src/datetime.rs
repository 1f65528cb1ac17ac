//! The date and time type of the API, and helpers to make and read one, at the path async-nats
//! gives them (`rnats::datetime`).
//!
//! Every timestamp in the JetStream types (stream and consumer info, message metadata, Key-Value
//! entries, object info, pause deadlines), in the Service API's stats (`started`) and in message
//! traces is a [`DateTime`]. Which type that is depends on the `chrono` feature, as in
//! async-nats:
//!
//! - without it (the default), `time::OffsetDateTime`, always in UTC;
//! - with it, `chrono::DateTime<chrono::Utc>`.
//!
//! Cargo unifies features over the whole build, so one crate in the dependency graph that turns
//! `chrono` on switches the type for every crate that uses rnats. Code that keeps to the
//! functions here builds either way.
//!
//! chrono keeps an instant as nanoseconds in an `i64`, so under `chrono` [`from_nanos`] refuses
//! instants outside the years 1677 to 2262, which `time` accepts.

use std::io;
use std::time::Duration;

use crate::Error;

/// The date and time type used across the API: `time::OffsetDateTime`, or
/// `chrono::DateTime<chrono::Utc>` with the `chrono` feature.
#[cfg(not(feature = "chrono"))]
pub type DateTime = time::OffsetDateTime;

/// The date and time type used across the API: `time::OffsetDateTime`, or
/// `chrono::DateTime<chrono::Utc>` with the `chrono` feature.
#[cfg(feature = "chrono")]
pub type DateTime = chrono::DateTime<chrono::Utc>;

/// Parses an RFC 3339 timestamp (`2026-01-02T03:04:05Z`), given back in UTC whatever offset
/// the text carries.
pub fn parse_rfc3339(text: &str) -> Result<DateTime, Error> {
    // The text may hold an instant `time` cannot hold in UTC (9999-12-31T23:59:59-01:00 is in
    // the year 10000): an error, where `to_offset` would panic.
    #[cfg(not(feature = "chrono"))]
    let parsed = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)?
        .checked_to_offset(time::UtcOffset::UTC)
        .ok_or_else(out_of_range)?;
    #[cfg(feature = "chrono")]
    let parsed = chrono::DateTime::parse_from_rfc3339(text)?.with_timezone(&chrono::Utc);
    Ok(parsed)
}

/// Writes `at` as RFC 3339 text in UTC with as many fractional digits as it needs
/// (`2026-01-02T03:04:05.5Z`), the form NATS servers read and write. Years past 9999 have no
/// RFC 3339 form: an error with the `time` backend.
pub fn format_rfc3339(at: &DateTime) -> Result<String, Error> {
    #[cfg(not(feature = "chrono"))]
    {
        // time writes only the fractional digits it needs, as Go's RFC3339Nano does.
        let utc = at
            .checked_to_offset(time::UtcOffset::UTC)
            .ok_or_else(out_of_range)?;
        Ok(utc.format(&time::format_description::well_known::Rfc3339)?)
    }
    #[cfg(feature = "chrono")]
    {
        // chrono writes 0, 3, 6 or 9 digits; trim to what the instant needs, as `time` does.
        let text = at.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
        let Some((whole, fraction)) = text.strip_suffix('Z').and_then(|t| t.split_once('.')) else {
            return Ok(text);
        };
        let fraction = fraction.trim_end_matches('0');
        Ok(if fraction.is_empty() {
            format!("{whole}Z")
        } else {
            format!("{whole}.{fraction}Z")
        })
    }
}

/// The instant `nanos` nanoseconds after the Unix epoch (before it when negative), in UTC.
pub fn from_nanos(nanos: i128) -> Result<DateTime, Error> {
    #[cfg(not(feature = "chrono"))]
    {
        Ok(time::OffsetDateTime::from_unix_timestamp_nanos(nanos)?)
    }
    #[cfg(feature = "chrono")]
    {
        let nanos = i64::try_from(nanos).map_err(|_| out_of_range())?;
        Ok(chrono::DateTime::from_timestamp_nanos(nanos))
    }
}

/// Nanoseconds from the Unix epoch to `at` (negative before it).
pub fn to_nanos(at: &DateTime) -> i128 {
    #[cfg(not(feature = "chrono"))]
    {
        at.unix_timestamp_nanos()
    }
    #[cfg(feature = "chrono")]
    {
        // Seconds and the sub-second part separately: `timestamp_nanos_opt` gives up on
        // instants outside the i64 range that a `DateTime` can still hold.
        i128::from(at.timestamp()) * 1_000_000_000 + i128::from(at.timestamp_subsec_nanos())
    }
}

/// The current time, in UTC.
pub fn now() -> DateTime {
    #[cfg(not(feature = "chrono"))]
    {
        time::OffsetDateTime::now_utc()
    }
    #[cfg(feature = "chrono")]
    {
        chrono::Utc::now()
    }
}

/// `at` moved `duration` later; an error when the result is past what [`DateTime`] holds.
pub fn add_std_duration(at: DateTime, duration: Duration) -> Result<DateTime, Error> {
    #[cfg(not(feature = "chrono"))]
    let later = at.checked_add(time::Duration::try_from(duration)?);
    #[cfg(feature = "chrono")]
    let later = at.checked_add_signed(chrono::Duration::from_std(duration)?);
    later.ok_or_else(|| Error::from(out_of_range()))
}

fn out_of_range() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "the date is out of range")
}

/// Serde adapters for [`DateTime`] fields in RFC 3339 form, for
/// `#[serde(with = "rnats::datetime::rfc3339")]` (and `rfc3339::option` for an
/// `Option<DateTime>`); the same under both backends.
pub mod rfc3339 {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::DateTime;

    /// Writes `at` as RFC 3339 text in UTC.
    pub fn serialize<S: Serializer>(at: &DateTime, serializer: S) -> Result<S::Ok, S::Error> {
        let text = super::format_rfc3339(at).map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(&text)
    }

    /// Reads RFC 3339 text, in UTC whatever offset it carries.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<DateTime, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        super::parse_rfc3339(&text).map_err(serde::de::Error::custom)
    }

    /// The same for an `Option<DateTime>`: `None` is JSON `null`.
    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        use super::DateTime;

        /// Writes `at` as RFC 3339 text in UTC, or `null`.
        pub fn serialize<S: Serializer>(
            at: &Option<DateTime>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => super::serialize(at, serializer),
                None => serializer.serialize_none(),
            }
        }

        /// Reads RFC 3339 text or `null`.
        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<DateTime>, D::Error> {
            let text = Option::<std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
            text.map(|text| super::super::parse_rfc3339(&text).map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_text_is_read_and_normalised_to_utc() {
        let at = parse_rfc3339("2026-01-02T05:04:05+02:00").unwrap();
        assert_eq!(at, parse_rfc3339("2026-01-02T03:04:05Z").unwrap());
        assert_eq!(format_rfc3339(&at).unwrap(), "2026-01-02T03:04:05Z");
        assert!(parse_rfc3339("yesterday").is_err());
    }

    #[test]
    fn text_at_the_edges_of_the_range_reads_or_fails_without_panicking() {
        // In range once in UTC, or not: the default backend holds the years 0 to 9999.
        let last = parse_rfc3339("9999-12-31T23:59:59+01:00").unwrap();
        assert_eq!(format_rfc3339(&last).unwrap(), "9999-12-31T22:59:59Z");
        let first = parse_rfc3339("0000-01-01T00:00:00-01:00").unwrap();
        assert_eq!(format_rfc3339(&first).unwrap(), "0000-01-01T01:00:00Z");
        // Past the end of the range once in UTC: an error under `time`, a date under chrono.
        let past = parse_rfc3339("9999-12-31T23:59:59-01:00");
        #[cfg(not(feature = "chrono"))]
        assert!(past.is_err());
        #[cfg(feature = "chrono")]
        assert_eq!(to_nanos(&past.unwrap()), 253_402_304_399_000_000_000);
    }

    #[test]
    fn fractions_are_written_as_the_server_writes_them() {
        for text in [
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.5Z",
            "2026-01-02T03:04:05.123456789Z",
        ] {
            let at = parse_rfc3339(text).unwrap();
            let written = format_rfc3339(&at).unwrap();
            assert_eq!(written, text);
            assert_eq!(parse_rfc3339(&written).unwrap(), at);
        }
        let trimmed = parse_rfc3339("2026-01-02T03:04:05.250000Z").unwrap();
        assert_eq!(format_rfc3339(&trimmed).unwrap(), "2026-01-02T03:04:05.25Z");
    }

    #[test]
    fn nanos_count_from_the_epoch() {
        assert_eq!(to_nanos(&from_nanos(0).unwrap()), 0);
        let before = from_nanos(-1_500_000_000).unwrap();
        assert_eq!(to_nanos(&before), -1_500_000_000);
        assert_eq!(before, parse_rfc3339("1969-12-31T23:59:58.5Z").unwrap());
        assert!(from_nanos(i128::MAX).is_err());
    }

    #[test]
    fn durations_add_until_the_range_ends() {
        let epoch = from_nanos(0).unwrap();
        let later = add_std_duration(epoch, Duration::from_secs(10)).unwrap();
        assert_eq!(to_nanos(&later), 10_000_000_000);
        assert!(add_std_duration(now(), Duration::from_secs(u64::MAX)).is_err());
    }

    #[test]
    fn serde_adapters_read_what_they_write_and_null() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Stamps {
            #[serde(with = "rfc3339")]
            at: DateTime,
            #[serde(default, with = "rfc3339::option")]
            maybe: Option<DateTime>,
        }
        let stamps: Stamps =
            serde_json::from_str(r#"{"at":"2026-01-02T03:04:05.25+01:00","maybe":null}"#).unwrap();
        assert_eq!(stamps.at, parse_rfc3339("2026-01-02T02:04:05.25Z").unwrap());
        assert_eq!(stamps.maybe, None);
        let text = serde_json::to_string(&stamps).unwrap();
        assert_eq!(text, r#"{"at":"2026-01-02T02:04:05.25Z","maybe":null}"#);
        let absent: Stamps = serde_json::from_str(r#"{"at":"2026-01-02T02:04:05Z"}"#).unwrap();
        assert_eq!(absent.maybe, None);
        assert!(serde_json::from_str::<Stamps>(r#"{"at":"soon"}"#).is_err());
    }

    #[cfg(not(feature = "chrono"))]
    #[test]
    fn the_default_type_is_time_in_utc() {
        let at: time::OffsetDateTime = now();
        assert_eq!(at.offset(), time::UtcOffset::UTC);
    }

    #[cfg(feature = "chrono")]
    #[test]
    fn the_chrono_feature_makes_it_chrono() {
        let _: chrono::DateTime<chrono::Utc> = now();
    }
}
