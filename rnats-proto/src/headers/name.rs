//! Header names and values, and the conversions `HeaderMap` accepts.

use std::fmt;
use std::str::FromStr;

/// A validated header name: non-empty printable ASCII without `:` or spaces.
///
/// Names keep the case they were written with; see [`HeaderMap`](super::HeaderMap)
/// for how lookups treat case.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeaderName(String);

/// A validated header value: any UTF-8 text without `\r` or `\n`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeaderValue(String);

/// Why a header name or value was rejected.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The name is empty or holds a byte outside printable ASCII, a space or `:`.
    #[error("invalid header name: must be non-empty printable ASCII without ':' or spaces")]
    InvalidName,
    /// The value holds `\r` or `\n`, which would end the header line early.
    #[error("invalid header value: must not contain '\\r' or '\\n'")]
    InvalidValue,
}

impl HeaderName {
    /// Returns the name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl HeaderValue {
    /// Returns the value as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

pub(super) fn validate_name(s: &str) -> Result<(), HeaderError> {
    let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic() && b != b':');
    if ok {
        Ok(())
    } else {
        Err(HeaderError::InvalidName)
    }
}

pub(super) fn validate_value(s: &str) -> Result<(), HeaderError> {
    if s.bytes().any(|b| b == b'\r' || b == b'\n') {
        Err(HeaderError::InvalidValue)
    } else {
        Ok(())
    }
}

/// Conversion into a [`HeaderName`], used by [`HeaderMap`](super::HeaderMap)'s
/// insertion methods.
///
/// Infallible for `HeaderName`; checked for `&str` and `String`.
pub trait IntoHeaderName {
    /// Converts `self`, failing if it is not a valid name.
    fn try_into_header_name(self) -> Result<HeaderName, HeaderError>;
}

/// Conversion into a [`HeaderValue`], used by [`HeaderMap`](super::HeaderMap)'s
/// insertion methods.
///
/// Infallible for `HeaderValue` and integers; checked for `&str` and `String`.
pub trait IntoHeaderValue {
    /// Converts `self`, failing if it is not a valid value.
    fn try_into_header_value(self) -> Result<HeaderValue, HeaderError>;
}

impl IntoHeaderName for HeaderName {
    fn try_into_header_name(self) -> Result<HeaderName, HeaderError> {
        Ok(self)
    }
}

impl IntoHeaderName for &HeaderName {
    fn try_into_header_name(self) -> Result<HeaderName, HeaderError> {
        Ok(self.clone())
    }
}

impl IntoHeaderName for &str {
    fn try_into_header_name(self) -> Result<HeaderName, HeaderError> {
        HeaderName::try_from(self)
    }
}

impl IntoHeaderName for String {
    fn try_into_header_name(self) -> Result<HeaderName, HeaderError> {
        HeaderName::try_from(self)
    }
}

impl IntoHeaderValue for HeaderValue {
    fn try_into_header_value(self) -> Result<HeaderValue, HeaderError> {
        Ok(self)
    }
}

impl IntoHeaderValue for &HeaderValue {
    fn try_into_header_value(self) -> Result<HeaderValue, HeaderError> {
        Ok(self.clone())
    }
}

impl IntoHeaderValue for &str {
    fn try_into_header_value(self) -> Result<HeaderValue, HeaderError> {
        HeaderValue::try_from(self)
    }
}

impl IntoHeaderValue for String {
    fn try_into_header_value(self) -> Result<HeaderValue, HeaderError> {
        HeaderValue::try_from(self)
    }
}

// JetStream headers such as `Nats-Expected-Last-Sequence` carry numbers.
macro_rules! integer_values {
    ($($t:ty),*) => {$(
        impl IntoHeaderValue for $t {
            fn try_into_header_value(self) -> Result<HeaderValue, HeaderError> {
                Ok(HeaderValue(itoa::Buffer::new().format(self).to_owned()))
            }
        }
    )*};
}
integer_values!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl TryFrom<&str> for HeaderName {
    type Error = HeaderError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        validate_name(s)?;
        Ok(HeaderName(s.to_owned()))
    }
}

impl TryFrom<String> for HeaderName {
    type Error = HeaderError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        validate_name(&s)?;
        Ok(HeaderName(s))
    }
}

impl FromStr for HeaderName {
    type Err = HeaderError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HeaderName::try_from(s)
    }
}

impl TryFrom<&str> for HeaderValue {
    type Error = HeaderError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        validate_value(s)?;
        Ok(HeaderValue(s.to_owned()))
    }
}

impl TryFrom<String> for HeaderValue {
    type Error = HeaderError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        validate_value(&s)?;
        Ok(HeaderValue(s))
    }
}

impl FromStr for HeaderValue {
    type Err = HeaderError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HeaderValue::try_from(s)
    }
}

impl AsRef<str> for HeaderName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for HeaderValue {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for HeaderName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for HeaderName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<str> for HeaderValue {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for HeaderValue {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for HeaderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for HeaderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for HeaderValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for HeaderValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_printable_ascii_without_colon() {
        assert!(HeaderName::try_from("Nats-Msg-Id").is_ok());
        for bad in ["", "a b", "a:b", "a\tb", "é", "a\r"] {
            assert_eq!(
                HeaderName::try_from(bad),
                Err(HeaderError::InvalidName),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn values_reject_line_breaks_only() {
        assert!(HeaderValue::try_from("").is_ok());
        assert!(HeaderValue::try_from("a: b\t ü").is_ok());
        assert_eq!(
            HeaderValue::try_from("a\rb"),
            Err(HeaderError::InvalidValue)
        );
        assert_eq!(
            HeaderValue::try_from("a\nb"),
            Err(HeaderError::InvalidValue)
        );
    }

    #[test]
    fn integers_convert() {
        assert_eq!(42u64.try_into_header_value().unwrap(), "42");
        assert_eq!((-7i32).try_into_header_value().unwrap(), "-7");
    }
}
