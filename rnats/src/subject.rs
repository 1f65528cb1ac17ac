//! Accepting subjects as `&str`, `String` or [`Subject`].

use rnats_proto::{Subject, SubjectError, validate_subject};

/// Anything that names a subject: `&str`, `String`, or an already validated [`Subject`].
pub trait ToSubject {
    /// The subject text.
    fn subject_str(&self) -> &str;

    /// Checks the subject; free for [`Subject`], which is valid by construction.
    fn check(&self) -> Result<(), SubjectError> {
        validate_subject(self.subject_str().as_bytes())
    }

    /// Turns it into an owned, validated [`Subject`].
    fn to_subject(&self) -> Result<Subject, SubjectError> {
        Subject::try_from(self.subject_str())
    }
}

impl ToSubject for &str {
    fn subject_str(&self) -> &str {
        self
    }
}

impl ToSubject for String {
    fn subject_str(&self) -> &str {
        self
    }
}

impl ToSubject for &String {
    fn subject_str(&self) -> &str {
        self
    }
}

impl ToSubject for Subject {
    fn subject_str(&self) -> &str {
        self.as_str()
    }

    fn check(&self) -> Result<(), SubjectError> {
        Ok(())
    }

    fn to_subject(&self) -> Result<Subject, SubjectError> {
        Ok(self.clone())
    }
}

impl ToSubject for &Subject {
    fn subject_str(&self) -> &str {
        self.as_str()
    }

    fn check(&self) -> Result<(), SubjectError> {
        Ok(())
    }

    fn to_subject(&self) -> Result<Subject, SubjectError> {
        Ok((*self).clone())
    }
}

/// True when a token of the subject is a wildcard (`*` or `>`): fine to subscribe to, not to
/// publish to.
pub(crate) fn has_wildcard(subject: &str) -> bool {
    subject.contains(['*', '>']) && subject.split('.').any(|token| token == "*" || token == ">")
}
