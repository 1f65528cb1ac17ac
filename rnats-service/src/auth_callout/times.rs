//! Connect-time windows: [`TimeOfDay`] and [`TimeRange`], a user JWT's `times`.
//!
//! The server reads each bound with Go's `15:04:05` layout in the JWT's `times_location`
//! (its own local zone when none is named), lets a client in only while one of the windows is
//! open, and closes the connection when that window ends. A window whose end comes before
//! its start runs past midnight.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::TimeOfDayError;

/// Seconds in a day: a [`TimeOfDay`] is fewer seconds after midnight.
const SECONDS_PER_DAY: u32 = 24 * 3600;

/// A time of day to the second, `00:00:00` to `23:59:59`: one bound of a connect-time window.
///
/// Parsed from `HH:MM:SS` (the hour may have one digit, as Go reads it) and written with two
/// digits each, as the server reads it.
///
/// ```
/// use rnats_service::auth_callout::TimeOfDay;
///
/// let opens: TimeOfDay = "08:30:00".parse()?;
/// assert_eq!(opens, TimeOfDay::new(8, 30, 0)?);
/// assert_eq!(opens.to_string(), "08:30:00");
/// assert!("24:00:00".parse::<TimeOfDay>().is_err());
/// # Ok::<(), rnats_service::auth_callout::TimeOfDayError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeOfDay {
    /// Seconds after midnight, below [`SECONDS_PER_DAY`].
    seconds: u32,
}

/// A window of the day in which a user may connect (the JWT's `{"start": .., "end": ..}`).
/// An `end` before the `start` spans midnight: `22:00:00` to `06:00:00` is the night.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimeRange {
    /// When the window opens.
    pub start: TimeOfDay,
    /// When it closes: the server ends a connection let in during the window then.
    pub end: TimeOfDay,
}

impl TimeOfDay {
    /// Midnight, `00:00:00`.
    pub const MIDNIGHT: TimeOfDay = TimeOfDay { seconds: 0 };

    /// The time `hour:minute:second`; an hour past 23, or a minute or second past 59, is a
    /// [`TimeOfDayError::OutOfRange`].
    pub fn new(hour: u8, minute: u8, second: u8) -> Result<TimeOfDay, TimeOfDayError> {
        if hour > 23 || minute > 59 || second > 59 {
            return Err(TimeOfDayError::OutOfRange(format!(
                "{hour:02}:{minute:02}:{second:02}"
            )));
        }
        Ok(TimeOfDay {
            seconds: u32::from(hour) * 3600 + u32::from(minute) * 60 + u32::from(second),
        })
    }

    /// The time `seconds` after midnight, wrapped to the day (`86_400` is midnight again).
    pub fn from_seconds_after_midnight(seconds: u64) -> TimeOfDay {
        let seconds = seconds % u64::from(SECONDS_PER_DAY);
        TimeOfDay {
            // Below a day's seconds, so it fits.
            seconds: u32::try_from(seconds).unwrap_or(0),
        }
    }

    /// Seconds after midnight.
    pub fn seconds_after_midnight(self) -> u32 {
        self.seconds
    }

    /// The hour, 0 to 23.
    pub fn hour(self) -> u8 {
        // Below 24.
        u8::try_from(self.seconds / 3600).unwrap_or(0)
    }

    /// The minute, 0 to 59.
    pub fn minute(self) -> u8 {
        u8::try_from(self.seconds / 60 % 60).unwrap_or(0)
    }

    /// The second, 0 to 59.
    pub fn second(self) -> u8 {
        u8::try_from(self.seconds % 60).unwrap_or(0)
    }
}

impl TimeRange {
    /// The window from `start` to `end`.
    pub fn new(start: TimeOfDay, end: TimeOfDay) -> TimeRange {
        TimeRange { start, end }
    }
}

impl FromStr for TimeOfDay {
    type Err = TimeOfDayError;

    /// Reads `HH:MM:SS` as Go's `15:04:05` layout does, without fractions: one or two digits
    /// of hour, exactly two of minute and second.
    fn from_str(text: &str) -> Result<TimeOfDay, TimeOfDayError> {
        let format = || TimeOfDayError::Format(text.to_owned());
        let mut parts = text.split(':');
        let (Some(hour), Some(minute), Some(second), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format());
        };
        let number = |part: &str, widths: &[usize]| {
            if widths.contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit()) {
                part.parse::<u8>().map_err(|_| format())
            } else {
                Err(format())
            }
        };
        let (hour, minute, second) = (
            number(hour, &[1, 2])?,
            number(minute, &[2])?,
            number(second, &[2])?,
        );
        TimeOfDay::new(hour, minute, second).map_err(|_| TimeOfDayError::OutOfRange(text.into()))
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}:{:02}:{:02}",
            self.hour(),
            self.minute(),
            self.second()
        )
    }
}

impl Serialize for TimeOfDay {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeOfDay {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TimeOfDay, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn times_of_day_parse_as_go_reads_them() {
        let cases = [
            ("00:00:00", (0, 0, 0)),
            ("23:59:59", (23, 59, 59)),
            ("08:30:05", (8, 30, 5)),
            // Go's `15` takes one digit too.
            ("8:30:05", (8, 30, 5)),
        ];
        for (text, (h, m, s)) in cases {
            let time: TimeOfDay = text.parse().unwrap();
            assert_eq!(
                (time.hour(), time.minute(), time.second()),
                (h, m, s),
                "{text}"
            );
        }
        assert_eq!(
            "8:30:05".parse::<TimeOfDay>().unwrap().to_string(),
            "08:30:05"
        );
    }

    #[test]
    fn malformed_times_of_day_are_typed_errors() {
        for text in [
            "",
            "8",
            "08:30",
            "08:30:00:00",
            "08:3:00",
            "08:30:0",
            "123:00:00",
            "ab:cd:ef",
            "+8:30:00",
            "08:30:00.5",
            " 08:30:00",
            "08-30-00",
            "٠٨:30:00",
        ] {
            assert!(
                matches!(text.parse::<TimeOfDay>(), Err(TimeOfDayError::Format(t)) if t == text),
                "{text:?}"
            );
        }
        for text in ["24:00:00", "12:60:00", "12:00:60", "99:99:99"] {
            assert!(
                matches!(text.parse::<TimeOfDay>(), Err(TimeOfDayError::OutOfRange(t)) if t == text),
                "{text:?}"
            );
        }
        assert!(matches!(
            TimeOfDay::new(24, 0, 0),
            Err(TimeOfDayError::OutOfRange(t)) if t == "24:00:00"
        ));
    }

    #[test]
    fn a_range_is_the_jwt_s_start_and_end_strings() {
        let range = TimeRange::new(
            TimeOfDay::new(22, 0, 0).unwrap(),
            TimeOfDay::new(6, 0, 0).unwrap(),
        );
        let json = serde_json::to_string(&range).unwrap();
        assert_eq!(json, r#"{"start":"22:00:00","end":"06:00:00"}"#);
        assert_eq!(serde_json::from_str::<TimeRange>(&json).unwrap(), range);
        // A bad time in a JWT is a decode error, not a panic.
        assert!(
            serde_json::from_str::<TimeRange>(r#"{"start":"25:00:00","end":"06:00:00"}"#).is_err()
        );
    }

    #[test]
    fn seconds_after_midnight_wrap_to_the_day() {
        assert_eq!(
            TimeOfDay::from_seconds_after_midnight(86_400 + 3661).to_string(),
            "01:01:01"
        );
        assert_eq!(
            TimeOfDay::from_seconds_after_midnight(86_399).seconds_after_midnight(),
            86_399
        );
        assert_eq!(
            TimeOfDay::from_seconds_after_midnight(86_400),
            TimeOfDay::MIDNIGHT
        );
    }
}
