//! natscli's body and subject templates: `{{Count}}` (or `{{.Count}}`, `{{Cnt}}`) is the
//! 1-based message number, `{{TimeStamp}}` the time in RFC 3339, `{{Unix}}` and
//! `{{UnixNano}}` the Unix time, `{{Time}}` the time of day, `{{ID}}` a unique id and
//! `{{Random MIN MAX}}` between MIN and MAX random letters.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::CliError;

/// A text with `{{...}}` placeholders, checked once and rendered per message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Count,
    TimeStamp,
    Unix,
    UnixNano,
    Time,
    Id,
    Random(usize, usize),
}

impl Template {
    /// Parses `text`; an unknown or unclosed placeholder is an error.
    pub(crate) fn parse(text: &str) -> Result<Template, CliError> {
        let bad = |reason: &str| CliError::InvalidArgument {
            what: "template",
            given: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                parts.push(Part::Text(rest[..start].to_owned()));
            }
            let after = &rest[start + 2..];
            let end = after.find("}}").ok_or_else(|| bad("unclosed {{"))?;
            let words: Vec<&str> = after[..end].split_whitespace().collect();
            let name = words.first().map(|w| w.trim_start_matches('.'));
            let part = match (name, &words[words.len().min(1)..]) {
                (Some("Count" | "Cnt"), []) => Part::Count,
                (Some("TimeStamp"), []) => Part::TimeStamp,
                (Some("Unix"), []) => Part::Unix,
                (Some("UnixNano"), []) => Part::UnixNano,
                (Some("Time"), []) => Part::Time,
                (Some("ID"), []) => Part::Id,
                (Some("Random"), [min, max]) => {
                    let min: usize = min.parse().map_err(|_| bad("Random takes MIN MAX"))?;
                    let max: usize = max.parse().map_err(|_| bad("Random takes MIN MAX"))?;
                    if min > max || max > 1 << 20 {
                        return Err(bad("Random needs MIN <= MAX <= 1048576"));
                    }
                    Part::Random(min, max)
                }
                _ => {
                    return Err(bad(
                        "placeholders are Count, TimeStamp, Unix, UnixNano, Time, ID and Random MIN MAX",
                    ));
                }
            };
            parts.push(part);
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Template { parts })
    }

    /// The text for message number `count` (from 1).
    pub(crate) fn render(&self, count: u64) -> String {
        let mut out = String::new();
        let now = OffsetDateTime::now_utc();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Count => out.push_str(&count.to_string()),
                Part::TimeStamp => out.push_str(&now.format(&Rfc3339).unwrap_or_default()),
                Part::Unix => out.push_str(&now.unix_timestamp().to_string()),
                Part::UnixNano => out.push_str(&now.unix_timestamp_nanos().to_string()),
                Part::Time => out.push_str(&format!(
                    "{:02}:{:02}:{:02}",
                    now.hour(),
                    now.minute(),
                    now.second()
                )),
                Part::Id => out.push_str(&nuid::next()),
                Part::Random(min, max) => out.push_str(&random_letters(*min, *max)),
            }
        }
        out
    }
}

/// Between `min` and `max` random letters and digits (filler text, not cryptography).
fn random_letters(min: usize, max: usize) -> String {
    let len = fastrand::usize(min..=max);
    std::iter::repeat_with(fastrand::alphanumeric)
        .take(len)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_is_expanded_in_every_spelling() {
        let t = Template::parse("msg {{Count}} {{ .Count }} {{Cnt}}").expect("parses");
        assert_eq!(t.render(7), "msg 7 7 7");
        assert_eq!(Template::parse("plain").expect("parses").render(3), "plain");
    }

    #[test]
    fn random_respects_its_bounds() {
        let t = Template::parse("{{Random 3 5}}").expect("parses");
        for _ in 0..20 {
            let len = t.render(1).len();
            assert!((3..=5).contains(&len), "{len}");
        }
    }

    #[test]
    fn bad_placeholders_are_errors() {
        assert!(Template::parse("{{Nope}}").is_err());
        assert!(Template::parse("{{Count").is_err());
        assert!(Template::parse("{{Random 5 3}}").is_err());
        assert!(Template::parse("{{Random x}}").is_err());
        assert!(Template::parse("{{}}").is_err());
    }
}
