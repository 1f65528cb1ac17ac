//! Naming the streams a refused create or update clashes with. The server's
//! `STREAM_SUBJECT_OVERLAP` (10065) says only that a subject overlaps an existing stream, not
//! which (nats.rs issue 1498), so the client asks `STREAM.NAMES`, filtered by each subject of
//! the refused config, which streams hold an overlapping one. The server filters by subjects
//! that collide, wildcards either side (`SubjectsCollide` in `server/jetstream_api.go`), the
//! same test it refused with.

use std::fmt;

use futures_util::StreamExt;

use super::config::Config;
use super::list::StreamNames;
use crate::context::Context;

/// The most subjects of a refused config looked up, one `STREAM.NAMES` request each.
const MAX_LOOKUPS: usize = 8;
/// The most streams named for one subject.
const MAX_NAMES: usize = 8;

/// What a stream create or update refused for overlapping subjects
/// ([`ErrorCode::STREAM_SUBJECT_OVERLAP`](crate::ErrorCode::STREAM_SUBJECT_OVERLAP)) asked
/// for, and which existing streams hold a subject that overlaps one of its own.
///
/// It is the source of that [`CreateStreamError`](crate::context::CreateStreamError), whose
/// kind is still `JetStream` with the server's error, and whose message it completes:
/// "JetStream error: subjects overlap with an existing stream (code 400, error code 10065):
/// stream `B` (subjects `a.x`) overlaps stream `A` on `a.x`". Its own source is the server's
/// error, as it came. Reach it with `err.downcast_source::<stream::SubjectOverlap>()`.
///
/// The streams are looked up once the server has refused, with up to 8 requests (one per
/// subject of the config, for its first 8); a lookup that fails ends the search, and what
/// was found by then is kept ([`is_complete`](Self::is_complete) says whether it was cut
/// short).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectOverlap {
    stream: String,
    subjects: Vec<String>,
    clashes: Vec<Clash>,
    complete: bool,
    refusal: crate::Error,
}

/// An existing stream holding a subject that overlaps one of a refused config's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Clash {
    /// The subject of the refused config.
    pub subject: String,
    /// The existing stream that holds a subject overlapping it.
    pub stream: String,
}

impl SubjectOverlap {
    /// Looks up which streams hold a subject overlapping one of `config`'s, which the server
    /// refused with `refusal`. The stream `config` names is never one of them: an update
    /// may keep subjects the stream already holds.
    pub(crate) async fn look_up(
        context: &Context,
        config: &Config,
        refusal: crate::Error,
    ) -> SubjectOverlap {
        // A stream with no subjects of its own (and no mirror) is given its name as one.
        let subjects = if config.subjects.is_empty() {
            vec![config.name.clone()]
        } else {
            config.subjects.clone()
        };
        let mut clashes = Vec::new();
        let mut complete = subjects.len() <= MAX_LOOKUPS;
        'subjects: for subject in subjects.iter().take(MAX_LOOKUPS) {
            let mut names = StreamNames::new(context.clone(), Some(subject.clone()));
            let mut named = 0;
            while let Some(name) = names.next().await {
                let Ok(name) = name else {
                    complete = false;
                    break 'subjects;
                };
                if name == config.name {
                    continue;
                }
                clashes.push(Clash {
                    subject: subject.clone(),
                    stream: name,
                });
                named += 1;
                if named == MAX_NAMES {
                    complete = false;
                    break;
                }
            }
        }
        SubjectOverlap {
            stream: config.name.clone(),
            subjects,
            clashes,
            complete,
            refusal,
        }
    }

    /// The stream that was to be created or updated.
    pub fn stream(&self) -> &str {
        &self.stream
    }

    /// The subjects it was to have (its name when the config had none).
    pub fn subjects(&self) -> &[String] {
        &self.subjects
    }

    /// Each existing stream found holding a subject that overlaps one of
    /// [`subjects`](Self::subjects), per subject, in order.
    pub fn clashes(&self) -> &[Clash] {
        &self.clashes
    }

    /// The existing streams found holding an overlapping subject, each once, sorted. Empty
    /// when none was found: the lookup failed, or the subjects overlap something that is
    /// not a stream of this account, such as the JetStream API's own subjects.
    pub fn streams(&self) -> Vec<&str> {
        let mut streams: Vec<&str> = self.clashes.iter().map(|c| c.stream.as_str()).collect();
        streams.sort_unstable();
        streams.dedup();
        streams
    }

    /// Whether the lookup saw everything: false when a request failed, when the config has
    /// more than 8 subjects, or when 8 streams or more hold one subject (only 8 are named).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The server's refusal, as it came (also this error's source).
    pub fn refusal(&self) -> &crate::Error {
        &self.refusal
    }
}

impl fmt::Display for SubjectOverlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream `{}` (subjects ", self.stream)?;
        for (i, subject) in self.subjects.iter().take(MAX_LOOKUPS).enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            write!(f, "{separator}`{subject}`")?;
        }
        if let Some(more) = self
            .subjects
            .len()
            .checked_sub(MAX_LOOKUPS)
            .filter(|n| *n > 0)
        {
            write!(f, " and {more} more")?;
        }
        f.write_str(")")?;
        if self.clashes.is_empty() {
            return f.write_str(if self.complete {
                " overlaps no stream found by subject"
            } else {
                ": the streams it overlaps could not be looked up"
            });
        }
        f.write_str(" overlaps")?;
        for (i, clash) in self.clashes.iter().enumerate() {
            let separator = if i == 0 { "" } else { "," };
            write!(
                f,
                "{separator} stream `{}` on `{}`",
                clash.stream, clash.subject
            )?;
        }
        if !self.complete {
            f.write_str(", and maybe more")?;
        }
        Ok(())
    }
}

impl std::error::Error for SubjectOverlap {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.refusal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    fn overlap(subjects: &[&str], clashes: &[(&str, &str)], complete: bool) -> SubjectOverlap {
        SubjectOverlap {
            stream: "B".into(),
            subjects: subjects.iter().map(|s| s.to_string()).collect(),
            clashes: clashes
                .iter()
                .map(|(subject, stream)| Clash {
                    subject: subject.to_string(),
                    stream: stream.to_string(),
                })
                .collect(),
            complete,
            refusal: crate::Error::new(
                400,
                ErrorCode::STREAM_SUBJECT_OVERLAP,
                "subjects overlap with an existing stream",
            ),
        }
    }

    #[test]
    fn names_the_streams_each_subject_overlaps() {
        let found = overlap(
            &["a.x", "b.>"],
            &[("a.x", "A"), ("b.>", "C"), ("b.>", "A")],
            true,
        );
        assert_eq!(
            found.to_string(),
            "stream `B` (subjects `a.x`, `b.>`) overlaps stream `A` on `a.x`, \
             stream `C` on `b.>`, stream `A` on `b.>`"
        );
        assert_eq!(found.streams(), ["A", "C"]);
        let source = std::error::Error::source(&found).unwrap();
        let refusal = source.downcast_ref::<crate::Error>().unwrap();
        assert_eq!(refusal.error_code(), ErrorCode::STREAM_SUBJECT_OVERLAP);

        let cut = overlap(&["a.x"], &[("a.x", "A")], false);
        assert!(
            cut.to_string()
                .ends_with("stream `A` on `a.x`, and maybe more")
        );
    }

    #[test]
    fn says_when_no_stream_was_found() {
        let none = overlap(&["$JS.API.>"], &[], true);
        assert_eq!(
            none.to_string(),
            "stream `B` (subjects `$JS.API.>`) overlaps no stream found by subject"
        );
        let failed = overlap(&["a.x"], &[], false);
        assert_eq!(
            failed.to_string(),
            "stream `B` (subjects `a.x`): the streams it overlaps could not be looked up"
        );
    }

    #[test]
    fn lists_a_long_config_in_part() {
        let subjects: Vec<String> = (0..10).map(|i| format!("s.{i}")).collect();
        let subjects: Vec<&str> = subjects.iter().map(String::as_str).collect();
        let long = overlap(&subjects, &[], false).to_string();
        assert!(long.contains("`s.7` and 2 more)"), "{long}");
        assert!(!long.contains("`s.8`"), "{long}");
    }
}
