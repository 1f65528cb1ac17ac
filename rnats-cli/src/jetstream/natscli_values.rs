//! Flag values written as natscli writes them, which the shared parsers do not take: a
//! duration of `-1` for "no limit", `--no-X` for a boolean flag, and subject lists split on
//! commas and spaces.

use std::time::Duration;

/// A duration flag where natscli takes `-1` for "none" (`--max-age -1`: unlimited,
/// `--heartbeat -1`: no heartbeats): a negative duration reads as zero, which the server
/// takes as "none"; anything else as [`crate::conn::parse_duration`] reads it.
pub(crate) fn duration_or_none(text: &str) -> Result<Duration, String> {
    match text.strip_prefix('-') {
        Some(magnitude) if crate::parse::duration(magnitude).is_ok() => Ok(Duration::ZERO),
        _ => crate::conn::parse_duration(text),
    }
}

/// A boolean flag natscli lets be negated (fisk's `BoolVar`): `--no-X` gives false; otherwise `--X`'s value, if
/// given. Whichever of the two comes last wins (clap's `overrides_with`).
pub(crate) fn negatable(flag: Option<bool>, negated: bool) -> Option<bool> {
    if negated { Some(false) } else { flag }
}

/// Subjects given as natscli takes them (its `SplitCLISubjects`): each value split on commas
/// and whitespace, so `--subjects 'a.1 a.2'`, `'a.1, a.2'` and `--subjects a.1 --subjects
/// a.2` all give `a.1` and `a.2`; empty pieces are dropped.
pub(crate) fn split_subjects(values: &[String]) -> Vec<String> {
    values
        .iter()
        .flat_map(|value| value.split(|c: char| c == ',' || c.is_whitespace()))
        .filter(|piece| !piece.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minus_one_is_no_duration() {
        assert_eq!(duration_or_none("-1"), Ok(Duration::ZERO));
        assert_eq!(duration_or_none("-1s"), Ok(Duration::ZERO));
        assert_eq!(duration_or_none("90s"), Ok(Duration::from_secs(90)));
        assert!(duration_or_none("-x").is_err());
        assert!(duration_or_none("soon").is_err());
    }

    #[test]
    fn subjects_split_on_commas_and_whitespace() {
        let given = |values: &[&str]| {
            split_subjects(&values.iter().map(|v| v.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(given(&["a.1 a.2"]), ["a.1", "a.2"]);
        assert_eq!(given(&["d.1, d.2"]), ["d.1", "d.2"]);
        assert_eq!(given(&["x.>", "y.*\tz"]), ["x.>", "y.*", "z"]);
        assert!(given(&[""]).is_empty());
    }
}
