//! Serde for the durations JetStream's JSON carries as whole nanoseconds.
//!
//! Use with `#[serde(with = "crate::nanos")]` on a `Duration`, `crate::nanos::option` on an
//! `Option<Duration>` and `crate::nanos::vec` on a `Vec<Duration>` (consumer backoff).
//! Negative or out-of-range numbers from the server decode as zero or saturate rather than
//! fail: the server uses `-1`/`0` for "unset" in places.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Nanoseconds as the server sends them: a Go `time.Duration`, an `i64` that may be
/// negative. (Not `i128`: serde cannot buffer those, which untagged replies need.)
fn from_nanos(nanos: i64) -> Duration {
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(0))
}

/// Nanoseconds as the server expects them (an `i64`), saturating.
fn to_nanos(duration: &Duration) -> i64 {
    i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)
}

/// Encodes a `Duration` as nanoseconds.
pub(crate) fn serialize<S: Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    to_nanos(duration).serialize(serializer)
}

/// Decodes nanoseconds into a `Duration`.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Duration, D::Error> {
    i64::deserialize(deserializer).map(from_nanos)
}

/// `Option<Duration>` as nanoseconds; `None` is `null` (or the field left out).
pub(crate) mod option {
    use super::*;

    /// Encodes `Some` as nanoseconds, `None` as `null`.
    pub(crate) fn serialize<S: Serializer>(
        duration: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        duration.as_ref().map(to_nanos).serialize(serializer)
    }

    /// Decodes nanoseconds or `null`.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<i64>::deserialize(deserializer)?.map(from_nanos))
    }
}

/// `Vec<Duration>` as an array of nanoseconds; `null` decodes as empty.
pub(crate) mod vec {
    use super::*;

    /// Encodes every duration as nanoseconds.
    pub(crate) fn serialize<S: Serializer>(
        durations: &[Duration],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(durations.iter().map(to_nanos))
    }

    /// Decodes an array of nanoseconds, or `null` as empty.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Duration>, D::Error> {
        let nanos = Option::<Vec<i64>>::deserialize(deserializer)?.unwrap_or_default();
        Ok(nanos.into_iter().map(from_nanos).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Durations {
        #[serde(with = "crate::nanos")]
        plain: Duration,
        #[serde(default, with = "crate::nanos::option")]
        maybe: Option<Duration>,
        #[serde(default, with = "crate::nanos::vec")]
        many: Vec<Duration>,
    }

    #[test]
    fn round_trips_nanoseconds() {
        let value = Durations {
            plain: Duration::from_secs(2),
            maybe: Some(Duration::from_millis(5)),
            many: vec![Duration::from_nanos(1), Duration::from_secs(1)],
        };
        let json = serde_json::to_string(&value).unwrap();
        assert_eq!(
            json,
            r#"{"plain":2000000000,"maybe":5000000,"many":[1,1000000000]}"#
        );
        assert_eq!(serde_json::from_str::<Durations>(&json).unwrap(), value);
    }

    #[test]
    fn decodes_inside_an_untagged_reply() {
        let reply: crate::response::Response<Durations> =
            serde_json::from_str(r#"{"plain":5,"maybe":7,"many":[1]}"#).unwrap();
        let value = reply.into_result().unwrap();
        assert_eq!(value.maybe, Some(Duration::from_nanos(7)));
    }

    #[test]
    fn tolerates_negative_null_and_missing() {
        let value: Durations = serde_json::from_str(r#"{"plain":-1,"many":null}"#).unwrap();
        assert_eq!(value.plain, Duration::ZERO);
        assert_eq!(value.maybe, None);
        assert!(value.many.is_empty());
    }
}
