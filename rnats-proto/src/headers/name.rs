//! Header names and values, and the conversions `HeaderMap` accepts.
//!
//! # Where text is checked
//!
//! A name must be non-empty printable ASCII without `:`; a value must not hold `\r` or `\n`
//! (either would end the header line early and let the text forge further headers).
//!
//! async-nats builds names and values through infallible conversions (`From<&str>`,
//! [`IntoHeaderName::into_header_name`]) and rnats keeps those shapes, so a [`HeaderName`] or
//! [`HeaderValue`] built that way is *not* checked when it is built, and never panics. The check
//! happens where the text could reach the wire: [`HeaderMap`](super::HeaderMap) checks every
//! name and value as it goes in and never stores a bad one (see
//! [`HeaderMap::insert`](super::HeaderMap::insert) and
//! [`HeaderMap::check`](super::HeaderMap::check)). The checked constructors are [`FromStr`],
//! `HeaderName`'s `TryFrom`, and [`HeaderName::from_static`].

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A header name such as `Nats-Msg-Id`.
///
/// Names keep the case they were written with; see [`HeaderMap`](super::HeaderMap) for how
/// lookups treat case. A valid name is non-empty printable ASCII without `:`. Names built by
/// [`IntoHeaderName::into_header_name`] are unchecked (that never panics) until they enter a
/// map, which refuses invalid ones; see [`HeaderMap`](super::HeaderMap#invalid-text).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeaderName(Cow<'static, str>);

/// A header value: UTF-8 text that must not contain `\r` or `\n`.
///
/// Values built by `From<&str>`/`From<String>` are unchecked (that never panics) until they
/// enter a map, which refuses a value holding a line break; see
/// [`HeaderMap`](super::HeaderMap#invalid-text). Use [`FromStr`] to check at once.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// Builds a name from a string constant without copying it; usable in `const` items.
    ///
    /// # Panics
    ///
    /// Panics if `name` is not a valid header name, which in a `const` item is a compile
    /// error. Meant for literals; use [`FromStr`] or [`TryFrom`] for anything else.
    pub const fn from_static(name: &'static str) -> HeaderName {
        if !is_valid_name(name.as_bytes()) {
            panic!("invalid header name: must be non-empty printable ASCII without ':'");
        }
        HeaderName(Cow::Borrowed(name))
    }

    /// Returns the name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl HeaderValue {
    /// Creates an empty value.
    pub fn new() -> HeaderValue {
        HeaderValue::default()
    }

    /// Returns the value as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

const fn is_valid_name(s: &[u8]) -> bool {
    let mut i = 0;
    while i < s.len() {
        if !s[i].is_ascii_graphic() || s[i] == b':' {
            return false;
        }
        i += 1;
    }
    !s.is_empty()
}

pub(super) fn validate_name(s: &str) -> Result<(), HeaderError> {
    if is_valid_name(s.as_bytes()) {
        Ok(())
    } else {
        Err(HeaderError::InvalidName)
    }
}

pub(super) fn validate_value(s: &str) -> Result<(), HeaderError> {
    match memchr::memchr2(b'\r', b'\n', s.as_bytes()) {
        Some(_) => Err(HeaderError::InvalidValue),
        None => Ok(()),
    }
}

/// Conversion into a [`HeaderName`], for [`HeaderMap`](super::HeaderMap)'s methods.
///
/// Implemented for `HeaderName`, `&HeaderName`, `&str`, `String` and `&String`.
pub trait IntoHeaderName {
    /// Converts `self` without checking it; a map checks the name when it is inserted.
    fn into_header_name(self) -> HeaderName;

    /// Converts `self`, failing if it is not a valid name.
    fn try_into_header_name(self) -> Result<HeaderName, HeaderError>
    where
        Self: Sized,
    {
        let name = self.into_header_name();
        validate_name(name.as_str())?;
        Ok(name)
    }

    /// Calls `f` with the name's text. Lookups use this so that looking up a `&str` builds no
    /// `HeaderName`; the default builds one.
    fn with_name_str<R>(self, f: impl FnOnce(&str) -> R) -> R
    where
        Self: Sized,
    {
        f(self.into_header_name().as_str())
    }
}

/// Conversion into a [`HeaderValue`], for [`HeaderMap`](super::HeaderMap)'s insertion methods.
///
/// Implemented for `HeaderValue`, `&HeaderValue`, `&str`, `String`, `&String` and the integer
/// types.
pub trait IntoHeaderValue {
    /// Converts `self` without checking it; a map checks the value when it is inserted.
    fn into_header_value(self) -> HeaderValue;

    /// Converts `self`, failing if it is not a valid value.
    fn try_into_header_value(self) -> Result<HeaderValue, HeaderError>
    where
        Self: Sized,
    {
        let value = self.into_header_value();
        validate_value(value.as_str())?;
        Ok(value)
    }
}

impl IntoHeaderName for HeaderName {
    fn into_header_name(self) -> HeaderName {
        self
    }

    fn with_name_str<R>(self, f: impl FnOnce(&str) -> R) -> R {
        f(self.as_str())
    }
}

impl IntoHeaderName for &HeaderName {
    fn into_header_name(self) -> HeaderName {
        self.clone()
    }

    fn with_name_str<R>(self, f: impl FnOnce(&str) -> R) -> R {
        f(self.as_str())
    }
}

impl IntoHeaderName for &str {
    fn into_header_name(self) -> HeaderName {
        HeaderName(Cow::Owned(self.to_owned()))
    }

    fn with_name_str<R>(self, f: impl FnOnce(&str) -> R) -> R {
        f(self)
    }
}

impl IntoHeaderName for String {
    fn into_header_name(self) -> HeaderName {
        HeaderName(Cow::Owned(self))
    }

    fn with_name_str<R>(self, f: impl FnOnce(&str) -> R) -> R {
        f(&self)
    }
}

impl IntoHeaderName for &String {
    fn into_header_name(self) -> HeaderName {
        self.as_str().into_header_name()
    }

    fn with_name_str<R>(self, f: impl FnOnce(&str) -> R) -> R {
        f(self)
    }
}

impl IntoHeaderValue for HeaderValue {
    fn into_header_value(self) -> HeaderValue {
        self
    }
}

impl IntoHeaderValue for &HeaderValue {
    fn into_header_value(self) -> HeaderValue {
        self.clone()
    }
}

impl IntoHeaderValue for &str {
    fn into_header_value(self) -> HeaderValue {
        HeaderValue::from(self)
    }
}

impl IntoHeaderValue for String {
    fn into_header_value(self) -> HeaderValue {
        HeaderValue::from(self)
    }
}

impl IntoHeaderValue for &String {
    fn into_header_value(self) -> HeaderValue {
        HeaderValue::from(self.as_str())
    }
}

// JetStream headers such as `Nats-Expected-Last-Sequence` carry numbers; digits and a sign
// are always a valid value.
macro_rules! integer_values {
    ($($t:ty),*) => {$(
        impl From<$t> for HeaderValue {
            fn from(n: $t) -> HeaderValue {
                HeaderValue(itoa::Buffer::new().format(n).to_owned())
            }
        }

        impl IntoHeaderValue for $t {
            fn into_header_value(self) -> HeaderValue {
                HeaderValue::from(self)
            }
        }
    )*};
}
integer_values!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl TryFrom<&str> for HeaderName {
    type Error = HeaderError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.try_into_header_name()
    }
}

impl TryFrom<String> for HeaderName {
    type Error = HeaderError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.try_into_header_name()
    }
}

impl FromStr for HeaderName {
    type Err = HeaderError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.try_into_header_name()
    }
}

/// Unchecked: a [`HeaderMap`](super::HeaderMap) refuses the value on insertion if it holds
/// `\r` or `\n`. (This also makes `TryFrom<&str>` infallible; use [`FromStr`] to check.)
impl From<&str> for HeaderValue {
    fn from(s: &str) -> HeaderValue {
        HeaderValue(s.to_owned())
    }
}

/// Unchecked, like `From<&str>`.
impl From<String> for HeaderValue {
    fn from(s: String) -> HeaderValue {
        HeaderValue(s)
    }
}

impl FromStr for HeaderValue {
    type Err = HeaderError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.try_into_header_value()
    }
}

impl AsRef<str> for HeaderName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<[u8]> for HeaderName {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl AsRef<str> for HeaderValue {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<[u8]> for HeaderValue {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
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
        fmt::Debug::fmt(&*self.0, f)
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

impl Serialize for HeaderName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Checked: an invalid name is a deserialization error.
impl<'de> Deserialize<'de> for HeaderName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .try_into_header_name()
            .map_err(serde::de::Error::custom)
    }
}

impl Serialize for HeaderValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Checked: a value holding `\r` or `\n` is a deserialization error.
impl<'de> Deserialize<'de> for HeaderValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .try_into_header_value()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_printable_ascii_without_colon() {
        assert!(HeaderName::try_from("Nats-Msg-Id").is_ok());
        assert!("$dollar".parse::<HeaderName>().is_ok());
        for bad in ["", "a b", "a:b", "a\tb", "é", "a\r", "a\n"] {
            assert_eq!(
                HeaderName::try_from(bad),
                Err(HeaderError::InvalidName),
                "{bad:?}"
            );
            assert_eq!(bad.parse::<HeaderName>(), Err(HeaderError::InvalidName));
            assert_eq!(
                bad.to_owned().try_into_header_name(),
                Err(HeaderError::InvalidName)
            );
        }
    }

    #[test]
    fn from_static_is_const_and_equals_parsed() {
        const NAME: HeaderName = HeaderName::from_static("X-Custom");
        assert_eq!(NAME, "X-Custom".parse::<HeaderName>().unwrap());
        assert_eq!(NAME.to_string(), "X-Custom");
        let name = NAME;
        let as_bytes: &[u8] = name.as_ref();
        assert_eq!(as_bytes, b"X-Custom");
    }

    #[test]
    #[should_panic(expected = "invalid header name")]
    fn from_static_panics_on_invalid_literal() {
        let _ = HeaderName::from_static("bad name");
    }

    #[test]
    fn unchecked_conversions_never_panic() {
        assert_eq!("a b".into_header_name().as_str(), "a b");
        assert_eq!(HeaderValue::from("x\r\ny").as_str(), "x\r\ny");
        assert_eq!(HeaderValue::from(String::from("\n")).to_string(), "\n");
    }

    #[test]
    fn values_reject_line_breaks_only() {
        assert_eq!("".parse::<HeaderValue>().unwrap(), "");
        assert!("a: b\t ü".parse::<HeaderValue>().is_ok());
        for bad in ["a\rb", "a\nb", "\r\n", "Foo\r\nX-Forged: 1"] {
            assert_eq!(bad.parse::<HeaderValue>(), Err(HeaderError::InvalidValue));
            assert_eq!(
                HeaderValue::from(bad).try_into_header_value(),
                Err(HeaderError::InvalidValue)
            );
        }
    }

    #[test]
    fn integers_convert() {
        assert_eq!(HeaderValue::from(42u64), "42");
        assert_eq!(HeaderValue::from(-7i32), "-7");
        assert_eq!(HeaderValue::from(5), "5");
        assert_eq!(u64::MAX.into_header_value(), "18446744073709551615");
        assert_eq!(HeaderValue::new(), "");
    }

    #[test]
    fn serde_checks_text() {
        let name: HeaderName = serde_json::from_str("\"Nats-Msg-Id\"").unwrap();
        assert_eq!(serde_json::to_string(&name).unwrap(), "\"Nats-Msg-Id\"");
        assert!(serde_json::from_str::<HeaderName>("\"a b\"").is_err());
        let value: HeaderValue = serde_json::from_str("\"v\"").unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), "\"v\"");
        assert!(serde_json::from_str::<HeaderValue>("\"a\\r\\nb\"").is_err());
    }
}
