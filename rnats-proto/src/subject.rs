//! NATS subjects: dot-separated tokens, optionally containing wildcards.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::str::FromStr;

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A validated NATS subject such as `orders.eu.created` or `orders.*.>`.
///
/// Holding a `Subject` proves the text is valid UTF-8, non-empty, made of
/// non-empty `.`-separated tokens, free of ASCII whitespace and control
/// characters, and that the full wildcard `>` (if any) is the last token.
///
/// The bytes live in a [`Bytes`], so subjects cut out of a received frame
/// share that frame's buffer instead of being copied.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subject(Bytes);

impl Subject {
    /// Returns the subject as text.
    #[allow(unsafe_code)]
    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor runs `validate_subject`, which rejects
        // bytes that are not UTF-8, and the inner `Bytes` is never mutated.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// Returns the subject's raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Returns `true` if any token is exactly `*` or `>`.
    ///
    /// A token such as `a*` is a literal, not a wildcard, as on the server.
    pub fn has_wildcards(&self) -> bool {
        // Valid by construction, so the scan only answers the wildcard question.
        scan(&self.0).unwrap_or(false)
    }

    /// Builds a subject from a string constant without copying it.
    ///
    /// # Panics
    ///
    /// Panics if `s` is not a valid subject. Meant for literals written in
    /// source code; use [`FromStr`] or [`TryFrom`] for anything else.
    pub fn from_static(s: &'static str) -> Subject {
        match validate_subject(s.as_bytes()) {
            Ok(()) => Subject(Bytes::from_static(s.as_bytes())),
            Err(e) => panic!("invalid static subject {s:?}: {e}"),
        }
    }

    /// Builds a subject from bytes without copying them, after validating them.
    pub fn from_bytes(bytes: Bytes) -> Result<Subject, SubjectError> {
        validate_subject(&bytes)?;
        Ok(Subject(bytes))
    }

    /// Gives back the underlying bytes.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

/// Checks `s` against the subject rules in a single pass.
///
/// This is the check behind every [`Subject`] constructor. Wildcard tokens
/// (`*` anywhere, `>` last) are accepted; use [`validate_publish_subject`]
/// where they are not.
pub fn validate_subject(s: &[u8]) -> Result<(), SubjectError> {
    scan(s).map(|_| ())
}

/// Checks `s` as a subject to publish to: a valid subject with no wildcard
/// tokens. One pass, for the publish hot path.
pub fn validate_publish_subject(s: &[u8]) -> Result<(), SubjectError> {
    match scan(s)? {
        false => Ok(()),
        true => Err(SubjectError::Wildcard),
    }
}

/// Byte classes for [`scan`], as bits so one pass can OR them together.
const INVALID: u8 = 1;
const NON_ASCII: u8 = 2;
const WILDCARD: u8 = 4;

const CLASSES: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            // Space, tabs, CR/LF and the other control bytes would break the
            // whitespace-delimited wire protocol.
            0..=b' ' | 0x7f => INVALID,
            0x80.. => NON_ASCII,
            b'*' | b'>' => WILDCARD,
            _ => 0,
        };
        b += 1;
    }
    table
};

/// Validates `s`; returns whether any token is a wildcard.
///
/// The common case (plain ASCII, no `*`/`>`) is one branch-free pass: this
/// runs on every publish.
fn scan(s: &[u8]) -> Result<bool, SubjectError> {
    if s.is_empty() {
        return Err(SubjectError::Empty);
    }
    let mut classes = 0;
    // A leading dot makes an empty first token, so start as if after one.
    let mut prev = b'.';
    let mut empty_token = false;
    for &b in s {
        classes |= CLASSES[b as usize];
        empty_token |= (b == b'.') & (prev == b'.');
        prev = b;
    }
    if classes & INVALID != 0 {
        return Err(SubjectError::InvalidCharacter);
    }
    if empty_token || prev == b'.' {
        return Err(SubjectError::EmptyToken);
    }
    if classes & NON_ASCII != 0 && std::str::from_utf8(s).is_err() {
        return Err(SubjectError::NotUtf8);
    }
    if classes & WILDCARD == 0 {
        return Ok(false);
    }
    // `*`/`>` bytes are wildcards only as whole tokens (`a*` is literal).
    let mut wildcard = false;
    let mut tokens = s.split(|&b| b == b'.').peekable();
    while let Some(token) = tokens.next() {
        match token {
            b">" if tokens.peek().is_some() => return Err(SubjectError::MisplacedFullWildcard),
            b"*" | b">" => wildcard = true,
            _ => {}
        }
    }
    Ok(wildcard)
}

/// Why a byte string is not a valid [`Subject`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubjectError {
    /// The subject has no characters at all.
    #[error("subject is empty")]
    Empty,
    /// The subject starts or ends with `.`, or contains `..`.
    #[error("subject contains an empty token")]
    EmptyToken,
    /// The subject contains ASCII whitespace or a control character.
    #[error("subject contains whitespace or a control character")]
    InvalidCharacter,
    /// The full wildcard `>` appears before the last token.
    #[error("full wildcard `>` must be the last token of a subject")]
    MisplacedFullWildcard,
    /// The subject bytes are not valid UTF-8.
    #[error("subject is not valid UTF-8")]
    NotUtf8,
    /// A wildcard token (`*`, `>`) where only a literal subject may go, as in a publish.
    #[error("wildcards may be subscribed to but not published to")]
    Wildcard,
}

impl FromStr for Subject {
    type Err = SubjectError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        validate_subject(s.as_bytes())?;
        Ok(Subject(Bytes::copy_from_slice(s.as_bytes())))
    }
}

impl TryFrom<&str> for Subject {
    type Error = SubjectError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl TryFrom<String> for Subject {
    type Error = SubjectError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        validate_subject(s.as_bytes())?;
        Ok(Subject(Bytes::from(s)))
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

// Hash as a `str` so that `Borrow<str>` is coherent: a `HashMap<Subject, _>`
// can then be queried with a plain `&str`.
impl Hash for Subject {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Borrow<str> for Subject {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Subject {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Deref for Subject {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Subject {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Subject {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Subject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Subject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Subject::try_from(s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_subjects_must_be_literal() {
        for s in ["a", "foo.bar", "a*.b>", "*a", "foo.>x", "ü.ß"] {
            assert_eq!(validate_publish_subject(s.as_bytes()), Ok(()), "{s}");
        }
        for s in ["*", ">", "foo.*", "foo.>", "*.bar", "a.*.b"] {
            assert_eq!(
                validate_publish_subject(s.as_bytes()),
                Err(SubjectError::Wildcard),
                "{s}"
            );
        }
        assert_eq!(
            validate_publish_subject(b"a..b"),
            Err(SubjectError::EmptyToken)
        );
        assert_eq!(
            validate_publish_subject(b">.a"),
            Err(SubjectError::MisplacedFullWildcard)
        );
    }

    #[test]
    fn accepts_plain_and_wildcard_subjects() {
        for s in [
            "a",
            "foo.bar",
            "foo.*.baz",
            "foo.>",
            ">",
            "*",
            "a*.b>",
            "ü.ß",
        ] {
            assert!(s.parse::<Subject>().is_ok(), "{s}");
        }
    }

    #[test]
    fn rejects_each_rule() {
        let cases: &[(&[u8], SubjectError)] = &[
            (b"", SubjectError::Empty),
            (b".", SubjectError::EmptyToken),
            (b".a", SubjectError::EmptyToken),
            (b"a.", SubjectError::EmptyToken),
            (b"a..b", SubjectError::EmptyToken),
            (b"a b", SubjectError::InvalidCharacter),
            (b"a\tb", SubjectError::InvalidCharacter),
            (b"a\r\n", SubjectError::InvalidCharacter),
            (b"a\x7f", SubjectError::InvalidCharacter),
            (b">.a", SubjectError::MisplacedFullWildcard),
            (b"a.>.b", SubjectError::MisplacedFullWildcard),
            (b"a.\xff", SubjectError::NotUtf8),
        ];
        for (input, err) in cases {
            assert_eq!(validate_subject(input).as_ref(), Err(err), "{input:?}");
        }
    }

    #[test]
    fn wildcard_detection_is_per_token() {
        assert!(Subject::from_static("a.*").has_wildcards());
        assert!(Subject::from_static("a.>").has_wildcards());
        assert!(!Subject::from_static("a*.b>").has_wildcards());
    }

    #[test]
    fn compares_hashes_and_borrows_like_str() {
        use std::collections::HashSet;
        let s = Subject::from_static("foo.bar");
        assert_eq!(s, "foo.bar");
        assert_eq!(format!("{s} {s:?}"), "foo.bar \"foo.bar\"");
        let set: HashSet<Subject> = [s.clone()].into_iter().collect();
        assert!(set.contains("foo.bar"));
        assert_eq!(s.len(), 7);
    }

    #[test]
    fn serde_round_trip_validates() {
        let s = Subject::from_static("a.b");
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "\"a.b\"");
        assert_eq!(serde_json::from_str::<Subject>(&json).unwrap(), s);
        assert!(serde_json::from_str::<Subject>("\"a..b\"").is_err());
    }

    #[test]
    #[should_panic(expected = "invalid static subject")]
    fn from_static_panics_on_invalid() {
        let _ = Subject::from_static("a b");
    }
}
