//! Subjects, and accepting them as `&str`, `String` or [`Subject`].

use std::borrow::Cow;

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
