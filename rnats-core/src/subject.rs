//! Subjects, and accepting them as `&str`, `String` or [`Subject`].

use std::borrow::Cow;

use crate::error::{PublishCause, PublishError};
use crate::floor::write_queue::WriteQueue;

pub use rnats_proto::{Subject, SubjectCause, SubjectError};

/// Anything that names a subject: `&str`, `String`, a [`Subject`], or a type of the user's
/// own that implements [`ToSubject::to_subject`] (async-nats' one required method).
///
/// Nothing here checks the text: the client checks it every time it is used, whatever its
/// type (a [`Subject`] built with `Subject::from("...")` is unchecked, as in async-nats, so
/// holding one proves nothing), and that check is one cheap pass.
pub trait ToSubject {
    /// The subject.
    fn to_subject(&self) -> Subject;

    /// The subject's text where the type holds it already (`&str`, `String`, [`Subject`]),
    /// so that a publish reads it without building a [`Subject`]; `None` (the default) for
    /// types that make their subject in `to_subject`.
    fn subject_str(&self) -> Option<&str> {
        None
    }

    /// The subject's text, borrowed where the type holds it, made with `to_subject` where it
    /// does not.
    fn subject_text(&self) -> Cow<'_, str> {
        match self.subject_str() {
            Some(text) => Cow::Borrowed(text),
            None => Cow::Owned(self.to_subject().into_string()),
        }
    }
}

/// Checks `text` as a subject to publish to: valid, and no wildcard tokens. With
/// `skip_validation` (the `skip_subject_validation` option) only what would break the
/// protocol's framing is refused.
pub(crate) fn check_publish(text: &str, skip_validation: bool) -> Result<(), PublishError> {
    if skip_validation {
        if text.is_empty() || text.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(PublishCause::InvalidSubject(SubjectCause::InvalidCharacter).into());
        }
    } else {
        rnats_proto::validate_publish_subject(text.as_bytes())?;
    }
    Ok(())
}

/// Whether a publish's subject is still to be checked ([`check_publish`]) when it reaches
/// the write queue. A plain publish leaves it to the queue's lock: a subject equal to that of
/// the `PUB` line the queue keeps passed the same check when that line was queued (every
/// way into the queue checks its subjects, and the queue belongs to one client, whose
/// options do not change), so a publisher that keeps to one subject checks it once rather
/// than at about 90 instructions a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubjectCheck {
    /// Checked already.
    Done,
    /// To be checked, unless the write queue knows it.
    Publish {
        /// The client's `skip_subject_validation`.
        skip_validation: bool,
    },
}

impl SubjectCheck {
    /// Checks `subject` unless it needs no check or `queue` knows it.
    #[inline(always)]
    pub(crate) fn run<L>(self, queue: &WriteQueue<L>, subject: &str) -> Result<(), PublishError> {
        match self {
            SubjectCheck::Publish { skip_validation } if !queue.is_last_subject(subject) => {
                check_publish(subject, skip_validation)
            }
            _ => Ok(()),
        }
    }

    /// Checks `subject` in any case: for an error path that must report a bad subject
    /// first, as an eager check would have.
    pub(crate) fn run_now(self, subject: &str) -> Result<(), PublishError> {
        match self {
            SubjectCheck::Publish { skip_validation } => check_publish(subject, skip_validation),
            SubjectCheck::Done => Ok(()),
        }
    }
}

/// The text of `subject`, kept in `owned` when it has to be made: the publish path's way to a
/// `&str` without a `Cow` in its future (measured: a `Cow` there cost 18% of 32-byte publish
/// throughput).
pub(crate) fn text_of<'a, S: ToSubject + ?Sized>(
    subject: &'a S,
    owned: &'a mut Option<Subject>,
) -> &'a str {
    match subject.subject_str() {
        Some(text) => text,
        None => owned.insert(subject.to_subject()).as_str(),
    }
}

impl ToSubject for str {
    fn to_subject(&self) -> Subject {
        Subject::from(self)
    }

    fn subject_str(&self) -> Option<&str> {
        Some(self)
    }
}

impl ToSubject for String {
    fn to_subject(&self) -> Subject {
        Subject::from(self.as_str())
    }

    fn subject_str(&self) -> Option<&str> {
        Some(self)
    }
}

impl ToSubject for Subject {
    fn to_subject(&self) -> Subject {
        // The shared buffer is reused rather than copied.
        self.clone()
    }

    fn subject_str(&self) -> Option<&str> {
        Some(self.as_str())
    }
}

/// `&str`, `&String` and `&Subject` behave as what they point to.
impl<T: ToSubject + ?Sized> ToSubject for &T {
    fn to_subject(&self) -> Subject {
        (**self).to_subject()
    }

    fn subject_str(&self) -> Option<&str> {
        (**self).subject_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type of a user's own, implementing only the required method.
    struct Orders(u32);

    impl ToSubject for Orders {
        fn to_subject(&self) -> Subject {
            Subject::from(format!("orders.{}", self.0))
        }
    }

    #[test]
    fn every_form_gives_the_same_text() {
        let subject = Subject::from_static("orders.7");
        assert_eq!(subject.subject_text(), "orders.7");
        assert_eq!("orders.7".subject_text(), "orders.7");
        assert_eq!(String::from("orders.7").subject_text(), "orders.7");
        assert_eq!(<&Subject as ToSubject>::to_subject(&&subject), subject);
        assert_eq!(Orders(7).subject_text(), "orders.7");
        assert!(matches!("orders.7".subject_text(), Cow::Borrowed(_)));
    }
}
