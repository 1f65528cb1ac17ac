//! natscli's body, subject and header-value templates: `{{Count}}` (or `{{.Count}}`,
//! `{{Cnt}}`) is the message number (from 1; in `reply`, from 0, as natscli counts a
//! responder's requests), `{{TimeStamp}}` the time in RFC 3339, `{{Unix}}` and
//! `{{UnixNano}}` the Unix time, `{{Time}}` the time of day, `{{ID}}` a unique id,
//! `{{Random MIN MAX}}` between MIN and MAX random letters and, in `reply`'s body and
//! command, `{{Request}}` the request's body.
//!
//! natscli runs these through Go's templates and sends a text that fails to expand as it is,
//! with a warning on stderr; [`Template::lenient`] does the same.

use clap::{ArgAction, Args};
use rnats::HeaderMap;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::CliError;

/// natscli's `--templates` switch of `pub` and `req`, on by default.
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct TemplateFlags {
    /// Expand templates in the subject and body (the default; --no-templates or
    /// --templates=false sends them as written).
    #[arg(
        long,
        default_value_t = true,
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_name = "BOOL",
        overrides_with = "no_templates"
    )]
    templates: bool,
    /// Send the subject and body as written, `{{...}}` and all.
    #[arg(long, overrides_with = "templates")]
    no_templates: bool,
}

impl TemplateFlags {
    /// Whether templates are expanded.
    pub(crate) fn on(self) -> bool {
        self.templates && !self.no_templates
    }
}

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
    Request,
}

/// Where a template is used, which decides whether `{{Request}}` means something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// A published message or a request: `{{.Request}}` is empty, and `{{Request}}` is
    /// unknown, as in natscli.
    Message,
    /// A reply's body or command: `{{Request}}` and `{{.Request}}` are the request's body.
    Reply,
}

impl Template {
    /// `text` as it is, no placeholder expanded (`--no-templates`).
    pub(crate) fn literal(text: &str) -> Template {
        let parts = if text.is_empty() {
            Vec::new()
        } else {
            vec![Part::Text(text.to_owned())]
        };
        Template { parts }
    }

    /// Parses `text`, or, when it holds an unknown or unclosed placeholder, warns on stderr
    /// (naming `what`: "body", "subject", ...) and takes it as it is, as natscli does.
    pub(crate) fn lenient(text: &str, what: &str, used: Use) -> Template {
        Template::parse(text, used).unwrap_or_else(|e| {
            eprintln!("Could not parse {what} template, sending it as it is: {e}");
            Template::literal(text)
        })
    }

    /// Parses `text`; an unknown or unclosed placeholder is an error.
    pub(crate) fn parse(text: &str, used: Use) -> Result<Template, CliError> {
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
            let first = words.first().copied();
            let name = first.map(|w| w.trim_start_matches('.'));
            let part = match (name, &words[words.len().min(1)..]) {
                // A field (`.Request`) is always there; the function (`Request`) only
                // where there is a request.
                (Some("Request"), []) if used == Use::Reply || first != name => Part::Request,
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
                        "placeholders are Count, TimeStamp, Unix, UnixNano, Time, ID, Random MIN MAX \
                         and, in reply, Request",
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

    /// Whether the text has no placeholder: it renders the same for every message.
    pub(crate) fn is_literal(&self) -> bool {
        self.parts.iter().all(|part| matches!(part, Part::Text(_)))
    }

    /// The text for message number `count` (from 1).
    pub(crate) fn render(&self, count: u64) -> String {
        self.render_reply(count, &[])
    }

    /// The text for message number `count` answering a request with body `request`.
    pub(crate) fn render_reply(&self, count: u64, request: &[u8]) -> String {
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
                Part::Request => out.push_str(&String::from_utf8_lossy(request)),
            }
        }
        out
    }
}

/// `--header KEY:VALUE` flags whose values are templates, as natscli's are in `pub`, `req`
/// and `reply` (the keys are taken as written): `-H Nats-Msg-Id:{{Count}}` gives each
/// message of a `--count` run an id of its own.
#[derive(Debug, Clone)]
pub(crate) struct HeaderTemplates {
    entries: Vec<(String, Template)>,
    /// The headers once and for all when no value holds a placeholder.
    fixed: Option<HeaderMap>,
}

impl HeaderTemplates {
    /// The `flags` (`KEY:VALUE`, checked as [`crate::parse::headers`] checks them), their
    /// values expanded per message. As in natscli, `--no-templates` leaves them alone (it is
    /// about the subject and the body), and a value that does not parse is an error rather
    /// than a text sent as it is.
    pub(crate) fn new(flags: &[String]) -> Result<HeaderTemplates, CliError> {
        let fixed = crate::parse::headers(flags)?;
        let mut entries = Vec::with_capacity(flags.len());
        for flag in flags {
            // `parse::headers` refused a flag without its `:`.
            let Some((name, value)) = flag.split_once(':') else {
                continue;
            };
            let template = Template::parse(value.trim(), Use::Message).map_err(|e| {
                CliError::InvalidArgument {
                    what: "header template",
                    given: flag.clone(),
                    reason: e.to_string(),
                }
            })?;
            entries.push((name.trim().to_owned(), template));
        }
        let literal = entries.iter().all(|(_, t)| t.is_literal());
        Ok(HeaderTemplates {
            fixed: if literal { fixed } else { None },
            entries,
        })
    }

    /// The headers of message number `count`, or `None` when no flag was given. A value
    /// that expands to what a header cannot hold is an error.
    pub(crate) fn render(&self, count: u64) -> Result<Option<HeaderMap>, CliError> {
        if self.entries.is_empty() {
            return Ok(None);
        }
        if let Some(fixed) = &self.fixed {
            return Ok(Some(fixed.clone()));
        }
        let mut map = HeaderMap::new();
        for (name, template) in &self.entries {
            let value = template.render(count);
            map.try_append(name.as_str(), value.as_str()).map_err(|e| {
                CliError::InvalidArgument {
                    what: "header",
                    given: format!("{name}:{value}"),
                    reason: e.to_string(),
                }
            })?;
        }
        Ok(Some(map))
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
        let t =
            Template::parse("msg {{Count}} {{ .Count }} {{Cnt}}", Use::Message).expect("parses");
        assert_eq!(t.render(7), "msg 7 7 7");
        assert_eq!(
            Template::parse("plain", Use::Message)
                .expect("parses")
                .render(3),
            "plain"
        );
    }

    #[test]
    fn random_respects_its_bounds() {
        let t = Template::parse("{{Random 3 5}}", Use::Message).expect("parses");
        for _ in 0..20 {
            let len = t.render(1).len();
            assert!((3..=5).contains(&len), "{len}");
        }
    }

    #[test]
    fn bad_placeholders_are_errors() {
        assert!(Template::parse("{{Nope}}", Use::Message).is_err());
        assert!(Template::parse("{{Count", Use::Message).is_err());
        assert!(Template::parse("{{Random 5 3}}", Use::Message).is_err());
        assert!(Template::parse("{{Random x}}", Use::Message).is_err());
        assert!(Template::parse("{{}}", Use::Message).is_err());
    }

    #[test]
    fn request_is_the_request_body_in_replies_only() {
        let reply = Template::parse("got {{Request}} {{ .Request }}", Use::Reply).expect("parses");
        assert_eq!(reply.render_reply(1, b"ping"), "got ping ping");
        // natscli defines the Request function only for replies; the field is always there.
        assert!(Template::parse("{{Request}}", Use::Message).is_err());
        let field = Template::parse("[{{.Request}}]", Use::Message).expect("parses");
        assert_eq!(field.render(1), "[]");
    }

    #[test]
    fn a_text_that_does_not_parse_is_sent_as_it_is() {
        assert_eq!(
            Template::lenient("a {{Nope}} {{Count}}", "body", Use::Message).render(2),
            "a {{Nope}} {{Count}}"
        );
        assert_eq!(
            Template::lenient("{{Count}}", "body", Use::Message).render(2),
            "2"
        );
        assert_eq!(Template::literal("{{Count}}").render(2), "{{Count}}");
        assert_eq!(Template::literal("").render(2), "");
    }
}
