//! The fields of the servers' JSON answers to system requests, read leniently: a field that
//! is missing or of another type reads as empty, zero or none, so one odd answer cannot
//! fail a report.

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// `value` as text; anything but a string is empty.
pub(crate) fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// `value` as a count; anything but a non-negative integer is 0.
pub(crate) fn number(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// `value` as a time, RFC 3339 as the server writes it (`server.time`, a start); `None`
/// when it is missing or unreadable.
pub(crate) fn time(value: &Value) -> Option<OffsetDateTime> {
    value
        .as_str()
        .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
}

/// How long from `start` to `now`, both times as the server writes them; `None` when
/// either is missing or unreadable, or `start` is later.
pub(crate) fn since(start: &Value, now: &Value) -> Option<Duration> {
    Duration::try_from(time(now)? - time(start)?).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_of_another_type_read_as_nothing() {
        assert_eq!(text(&json!("n1")), "n1");
        assert_eq!(text(&json!(7)), "");
        assert_eq!(number(&json!(7)), 7);
        assert_eq!(number(&json!(-1)), 0);
        assert_eq!(number(&json!("7")), 0);
        let (start, now) = (
            json!("2025-01-01T00:00:00Z"),
            json!("2025-01-01T00:01:05.5Z"),
        );
        assert_eq!(since(&start, &now), Some(Duration::from_millis(65_500)));
        assert_eq!(since(&now, &start), None);
        assert_eq!(since(&json!("yesterday"), &now), None);
        assert!(time(&json!(null)).is_none());
    }
}
