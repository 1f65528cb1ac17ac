//! Accepting subjects as `&str`, `String` or [`Subject`].

use rnats_proto::{Subject, SubjectError, validate_publish_subject};

/// Anything that names a subject: `&str`, `String`, or an already validated [`Subject`].
pub trait ToSubject {
    /// The subject text.
    fn subject_str(&self) -> &str;

    /// Checks the subject for publishing: valid, and no wildcard tokens.
    fn check_publish(&self) -> Result<(), SubjectError> {
        validate_publish_subject(self.subject_str().as_bytes())
    }

    /// Turns it into an owned, validated [`Subject`].
    fn to_subject(&self) -> Result<Subject, SubjectError> {
        Subject::try_from(self.subject_str())
    }
}

impl ToSubject for str {
    fn subject_str(&self) -> &str {
        self
    }
}

impl ToSubject for String {
    fn subject_str(&self) -> &str {
        self
    }
}

impl ToSubject for Subject {
    fn subject_str(&self) -> &str {
        self.as_str()
    }

    fn check_publish(&self) -> Result<(), SubjectError> {
        // Valid by construction; only the wildcard rule is left to check.
        if self.has_wildcards() {
            Err(SubjectError::Wildcard)
        } else {
            Ok(())
        }
    }

    fn to_subject(&self) -> Result<Subject, SubjectError> {
        Ok(self.clone())
    }
}

/// `&str`, `&String` and `&Subject` behave as what they point to.
impl<T: ToSubject + ?Sized> ToSubject for &T {
    fn subject_str(&self) -> &str {
        (**self).subject_str()
    }

    fn check_publish(&self) -> Result<(), SubjectError> {
        (**self).check_publish()
    }

    fn to_subject(&self) -> Result<Subject, SubjectError> {
        (**self).to_subject()
    }
}
