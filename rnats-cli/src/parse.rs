//! Values people type on the command line: durations (`90s`, `1h30m`), sizes (`512MB`),
//! headers (`Key:Value`).

use std::time::Duration;

use rnats::HeaderMap;
use time::OffsetDateTime;

use crate::error::CliError;

/// A duration such as `500ms`, `30s`, `5m`, `1h30m`, `2d` or `1w`; a bare number is seconds.
pub(crate) fn duration(text: &str) -> Result<Duration, CliError> {
    let bad = |reason: &str| CliError::InvalidArgument {
        what: "duration",
        given: text.to_owned(),
        reason: reason.to_owned(),
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(bad("empty"));
    }
    if let Ok(secs) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).map_err(|_| bad("out of range"));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| bad("a number needs a unit: ms, s, m, h, d or w"))?;
        if digits == 0 {
            return Err(bad("expected a number such as 30s or 1h30m"));
        }
        let value: f64 = rest[..digits].parse().map_err(|_| bad("not a number"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            "w" => 604_800.0,
            "y" => 31_536_000.0,
            _ => return Err(bad("units are ns, us, ms, s, m, h, d, w and y")),
        };
        rest = &rest[unit_len..];
        let part = Duration::try_from_secs_f64(value * scale).map_err(|_| bad("out of range"))?;
        // Each part may fit on its own and still overflow the sum; `+=` would panic.
        total = total.checked_add(part).ok_or_else(|| bad("out of range"))?;
    }
    Ok(total)
}

/// The moment `span` before now, for flags such as `--since 1h`. `OffsetDateTime - span`
/// panics once the result falls before the earliest year the `time` crate holds (-9999),
/// and RFC 3339, in which such a time is sent, has no year before 0: a span reaching back
/// past that is refused; `what` names the flag in the error.
pub(crate) fn time_ago(what: &'static str, span: Duration) -> Result<OffsetDateTime, CliError> {
    shift(OffsetDateTime::now_utc(), what, span, false)
}

/// The moment `span` after now, for flags such as `--schedule-after 1h`; refused past the
/// latest year the `time` crate holds (9999), as [`time_ago`] is before the earliest.
pub(crate) fn time_ahead(what: &'static str, span: Duration) -> Result<OffsetDateTime, CliError> {
    shift(OffsetDateTime::now_utc(), what, span, true)
}

/// `from` moved by `span`, later when `ahead`, or an error when that is out of range.
fn shift(
    from: OffsetDateTime,
    what: &'static str,
    span: Duration,
    ahead: bool,
) -> Result<OffsetDateTime, CliError> {
    // A std Duration holds up to u64::MAX seconds and a time::Duration only i64::MAX, so
    // the conversion can fail too; either way the answer is out of range.
    let moved = time::Duration::try_from(span).ok().and_then(|span| {
        if ahead {
            from.checked_add(span)
        } else {
            from.checked_sub(span).filter(|at| at.year() >= 0)
        }
    });
    moved.ok_or_else(|| {
        let reason = if ahead {
            format!(
                "reaches past year {}, the latest a time can be",
                time::Date::MAX.year()
            )
        } else {
            "reaches before year 0, the earliest a time can be sent as".to_owned()
        };
        CliError::InvalidArgument {
            what,
            given: crate::jetstream::duration(span),
            reason,
        }
    })
}

/// The largest message a nats-server takes: `max_payload` cannot be set above 64 MiB, so
/// a larger `--size` could never be sent, and is refused before its buffer is allocated.
pub(crate) const MAX_MESSAGE_SIZE: usize = 64 << 20;

/// The size of a message to send (`--size`): a [`size`] from 0 to [`MAX_MESSAGE_SIZE`].
pub(crate) fn message_size(text: &str) -> Result<usize, CliError> {
    let bad = |reason: &str| CliError::InvalidArgument {
        what: "message size",
        given: text.to_owned(),
        reason: reason.to_owned(),
    };
    let bytes = usize::try_from(size(text)?).map_err(|_| bad("not a size in bytes"))?;
    if bytes > MAX_MESSAGE_SIZE {
        return Err(bad(
            "above 64MiB, the most a nats-server takes in one message",
        ));
    }
    Ok(bytes)
}

/// A byte size such as `1024`, `64KB`, `512MiB` or `1G`; K, M, G and T are powers of 1024
/// as in natscli. `-1` means no limit.
pub(crate) fn size(text: &str) -> Result<i64, CliError> {
    let bad = |reason: &str| CliError::InvalidArgument {
        what: "size",
        given: text.to_owned(),
        reason: reason.to_owned(),
    };
    let trimmed = text.trim();
    if trimmed == "-1" {
        return Ok(-1);
    }
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let value: i64 = trimmed[..split]
        .parse()
        .map_err(|_| bad("expected a number such as 512MB"))?;
    let unit = trimmed[split..].trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(bad("units are B, KB, MB, GB and TB")),
    };
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| bad("out of range"))
}

/// A regular expression flag (a clap value parser).
pub(crate) fn regex(text: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(text).map_err(|e| e.to_string())
}

/// One `--metadata KEY=VALUE` flag, as natscli takes it (a clap value parser).
pub(crate) fn metadata(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err("expected KEY=VALUE".to_owned()),
    }
}

/// One `--header KEY:VALUE` flag's shape, checked as clap reads it (a clap value parser), for
/// commands that read their headers only after connecting.
pub(crate) fn header_flag(text: &str) -> Result<String, String> {
    match text.split_once(':') {
        Some((key, _)) if !key.trim().is_empty() => Ok(text.to_owned()),
        Some(_) => Err("the key is empty".to_owned()),
        None => Err("expected KEY:VALUE".to_owned()),
    }
}

/// Headers from repeated `--header Key:Value` flags.
pub(crate) fn headers(flags: &[String]) -> Result<Option<HeaderMap>, CliError> {
    if flags.is_empty() {
        return Ok(None);
    }
    let mut map = HeaderMap::new();
    for flag in flags {
        let bad = |reason: &str| CliError::InvalidArgument {
            what: "header",
            given: flag.clone(),
            reason: reason.to_owned(),
        };
        let (name, value) = flag
            .split_once(':')
            .ok_or_else(|| bad("expected KEY:VALUE"))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(bad("the key is empty"));
        }
        map.try_append(name, value.trim())
            .map_err(|e| bad(&e.to_string()))?;
    }
    Ok(Some(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_go_style_units() {
        assert_eq!(duration("30").ok(), Some(Duration::from_secs(30)));
        assert_eq!(duration("500ms").ok(), Some(Duration::from_millis(500)));
        assert_eq!(duration("1h30m").ok(), Some(Duration::from_secs(5400)));
        assert_eq!(duration("2d").ok(), Some(Duration::from_secs(172_800)));
        assert_eq!(duration("1.5s").ok(), Some(Duration::from_millis(1500)));
        assert!(duration("").is_err());
        assert!(duration("5x").is_err());
        assert!(duration("h").is_err());
        assert!(duration("-5s").is_err());
    }

    #[test]
    fn durations_too_long_to_add_up_are_refused() {
        // Each part fits a Duration on its own; their sum does not.
        assert!(duration("500000000000y500000000000y").is_err());
        assert!(duration(&"500000000000y".repeat(3)).is_err());
    }

    #[test]
    fn times_shifted_past_the_calendar_are_refused() {
        let now = OffsetDateTime::now_utc();
        let year = Duration::from_secs(31_536_000);
        let hour = Duration::from_secs(3600);
        assert_eq!(
            shift(now, "--since", hour, false).ok(),
            Some(now - time::Duration::HOUR)
        );
        assert_eq!(
            shift(now, "--since", hour, true).ok(),
            Some(now + time::Duration::HOUR)
        );
        assert!(shift(now, "--since", year * 20_000, false).is_err());
        // Before year 0: no RFC 3339 form to send it in.
        assert!(shift(now, "--since", year * 3_000, false).is_err());
        assert!(shift(now, "--since", year * 2_000, false).is_ok());
        assert!(shift(now, "--since", year * 8_000, true).is_err());
        // Too long even for time::Duration.
        assert!(shift(now, "--since", Duration::MAX, false).is_err());
        assert!(time_ago("--since", year * 20_000).is_err());
        assert!(time_ahead("--since", year * 8_000).is_err());
    }

    #[test]
    fn sizes_are_powers_of_1024() {
        assert_eq!(size("1024").ok(), Some(1024));
        assert_eq!(size("1KB").ok(), Some(1024));
        assert_eq!(size("512MiB").ok(), Some(512 << 20));
        assert_eq!(size("2g").ok(), Some(2 << 30));
        assert_eq!(size("-1").ok(), Some(-1));
        assert!(size("12PB").is_err());
        assert!(size("lots").is_err());
        assert!(size("99999999999T").is_err());
    }

    #[test]
    fn message_sizes_stop_at_64_mib() {
        assert_eq!(message_size("64MiB").ok(), Some(MAX_MESSAGE_SIZE));
        assert_eq!(message_size("0").ok(), Some(0));
        assert!(message_size("1TB").is_err());
        assert!(message_size("67108865").is_err());
        assert!(message_size("-1").is_err());
    }

    #[test]
    fn headers_split_on_the_first_colon() {
        let map = headers(&["A: 1".into(), "B:x:y".into()]).ok().flatten();
        let map = map.expect("headers");
        assert_eq!(map.get("A").map(|v| v.as_str()), Some("1"));
        assert_eq!(map.get("B").map(|v| v.as_str()), Some("x:y"));
        assert!(headers(&["nocolon".into()]).is_err());
        assert!(headers(&[":v".into()]).is_err());
        assert!(matches!(headers(&[]), Ok(None)));
    }
}
