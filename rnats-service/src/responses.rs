//! The JSON documents answering PING, INFO and STATS (ADR-32, schema `io.nats.micro.v1.*`).

use std::collections::HashMap;

use rnats_core::datetime::DateTime;
use serde::{Deserialize, Deserializer, Serialize};

use crate::endpoint;

/// The reply to `$SRV.PING`: who the instance is.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PingResponse {
    /// The schema type, [`PING_RESPONSE_TYPE`](crate::PING_RESPONSE_TYPE).
    #[serde(rename = "type")]
    pub kind: String,
    /// The service name.
    pub name: String,
    /// This instance's id.
    pub id: String,
    /// The service version.
    pub version: String,
    /// The service metadata.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub metadata: HashMap<String, String>,
}

/// The reply to `$SRV.INFO`: the instance, its description and its endpoints.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Info {
    /// The schema type, [`INFO_RESPONSE_TYPE`](crate::INFO_RESPONSE_TYPE).
    #[serde(rename = "type")]
    pub kind: String,
    /// The service name.
    pub name: String,
    /// This instance's id.
    pub id: String,
    /// The service description (empty when none was set).
    #[serde(default, deserialize_with = "null_as_default")]
    pub description: String,
    /// The service version.
    pub version: String,
    /// The service metadata.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub metadata: HashMap<String, String>,
    /// Every endpoint, in the order they were added.
    #[serde(default, deserialize_with = "null_as_default")]
    pub endpoints: Vec<endpoint::Info>,
}

/// The reply to `$SRV.STATS`: counts and timings of every endpoint since start or reset.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Stats {
    /// The schema type, [`STATS_RESPONSE_TYPE`](crate::STATS_RESPONSE_TYPE).
    #[serde(rename = "type")]
    pub kind: String,
    /// The service name.
    pub name: String,
    /// This instance's id.
    pub id: String,
    /// The service version.
    pub version: String,
    /// The service metadata (ADR-32 has it in STATS too; nats.go and nats-py read it).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub metadata: HashMap<String, String>,
    /// When the instance started (RFC 3339, UTC).
    #[serde(with = "rfc3339")]
    pub started: DateTime,
    /// Stats of every endpoint, in the order they were added.
    #[serde(default, deserialize_with = "null_as_default")]
    pub endpoints: Vec<endpoint::Stats>,
}

/// Reads a JSON `null` (nats.go's nil map or slice) as the type's default.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// [`null_as_default`] for metadata maps.
pub(crate) fn null_as_empty<'de, D>(deserializer: D) -> Result<HashMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    null_as_default(deserializer)
}

/// `started` as RFC 3339 in UTC with microseconds, `2024-05-01T10:00:00.123456Z`: what every
/// client parses (nats-py's `%f` takes at most six digits); read back with any precision.
pub(crate) mod rfc3339 {
    use rnats_core::datetime::{self, DateTime};
    use serde::{Deserializer, Serializer, ser::Error as _};

    const NANOS_PER_SECOND: i128 = 1_000_000_000;

    pub(crate) fn serialize<S: Serializer>(
        value: &DateTime,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        // The whole seconds as the datetime module writes them, then exactly six digits.
        let nanos = datetime::to_nanos(value);
        let seconds = nanos.div_euclid(NANOS_PER_SECOND) * NANOS_PER_SECOND;
        let micros = nanos.rem_euclid(NANOS_PER_SECOND) / 1_000;
        let whole = datetime::from_nanos(seconds)
            .and_then(|at| datetime::format_rfc3339(&at))
            .map_err(S::Error::custom)?;
        let whole = whole.strip_suffix('Z').unwrap_or(&whole);
        serializer.serialize_str(&format!("{whole}.{micros:06}Z"))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<DateTime, D::Error> {
        datetime::rfc3339::deserialize(deserializer)
    }
}

/// Durations as whole nanoseconds, as ADR-32 (and Go's `time.Duration`) encode them.
pub(crate) mod nanos {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        value: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(value.as_nanos()).unwrap_or(u64::MAX))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        // Go writes an int64; a negative one cannot be a duration here, so it reads as zero.
        let nanos = Option::<i64>::deserialize(deserializer)?.unwrap_or(0);
        Ok(Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)))
    }
}

/// `last_error` as ADR-32's string: `"<code>:<status>"`, or `""` for none. A string that does
/// not start with a numeric code (another client's wording) reads as code 0 and the whole text.
pub(crate) mod last_error {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::error::Error;

    pub(crate) fn serialize<S: Serializer>(
        value: &Option<Error>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(error) => serializer.collect_str(&format_args!("{}:{}", error.code, error.status)),
            None => serializer.serialize_str(""),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Error>, D::Error> {
        let text = Option::<String>::deserialize(deserializer)?.unwrap_or_default();
        if text.is_empty() {
            return Ok(None);
        }
        let parsed = text
            .split_once(':')
            .and_then(|(code, status)| Some((code.trim().parse::<usize>().ok()?, status)));
        Ok(Some(match parsed {
            Some((code, status)) => Error {
                code,
                status: status.to_owned(),
            },
            None => Error {
                code: 0,
                status: text,
            },
        }))
    }
}
