//! Subjects, and accepting them as `&str`, `String` or [`Subject`].

pub use rnats_proto::{Subject, SubjectError};
use rnats_proto::{validate_publish_subject, validate_subject};

/// Anything that names a subject: `&str`, `String`, or a [`Subject`].
///
/// The text is checked every time it is used, whatever its type: a [`Subject`] built with
/// `Subject::from("...")` is unchecked (as in async-nats), so holding one proves nothing, and
/// the check is one cheap pass.
pub trait ToSubject {
    /// The subject text.
    fn subject_str(&self) -> &str;

    /// Checks the subject for publishing: valid, and no wildcard tokens.
    fn check_publish(&self) -> Result<(), SubjectError> {
        validate_publish_subject(self.subject_str().as_bytes())
    }

    /// Turns it into an owned [`Subject`], checked against the subject rules (wildcards
    /// allowed).
    fn to_subject(&self) -> Result<Subject, SubjectError> {
        Subject::validated(self.subject_str())
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

    // `check_publish` keeps the default: `Subject::from` does not check, so neither may this.

    fn to_subject(&self) -> Result<Subject, SubjectError> {
        // Checked, then the shared buffer is reused rather than copied.
        validate_subject(self.as_bytes())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchecked_subjects_are_refused_at_publish() {
        for bad in ["a b", "", "a..b", ".a", "a.", "a\r\nPUB x 0", "a\tb"] {
            let subject = Subject::from(bad);
            assert!(subject.check_publish().is_err(), "{bad:?}");
            assert!(<&Subject as ToSubject>::check_publish(&&subject).is_err());
            assert!(subject.to_subject().is_err(), "{bad:?}");
            assert!(Subject::from(bad.to_owned()).check_publish().is_err());
            assert!(bad.check_publish().is_err());
            assert!(bad.to_owned().to_subject().is_err());
        }
        let wildcard = Subject::from("a.*");
        assert_eq!(wildcard.check_publish(), Err(SubjectError::Wildcard));
        assert_eq!(wildcard.to_subject().unwrap(), "a.*");
    }

    #[test]
    fn valid_subjects_pass_in_every_form() {
        let subject = Subject::from_static("orders.eu");
        assert_eq!(subject.check_publish(), Ok(()));
        assert_eq!(subject.to_subject().unwrap(), subject);
        assert_eq!("orders.eu".check_publish(), Ok(()));
        assert_eq!(String::from("orders.>").to_subject().unwrap(), "orders.>");
        let into: Subject = "orders.eu".into();
        assert_eq!(into, subject);
    }
}
