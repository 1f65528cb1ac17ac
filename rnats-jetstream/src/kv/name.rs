//! Bucket names and keys as ADR-8 allows them: a bucket is `[A-Za-z0-9_-]+`; a key is
//! `[-/_=.A-Za-z0-9]+` and neither starts nor ends with `.`. Watch and listing filters may
//! also use the subject wildcards `*` (a whole token) and `>` (the last token).

use std::fmt;

/// A key as ADR-8 allows it, borrowed from the caller's string: once held, it is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key<'a>(&'a str);

impl<'a> Key<'a> {
    /// The key's text.
    pub fn as_str(self) -> &'a str {
        self.0
    }
}

impl<'a> TryFrom<&'a str> for Key<'a> {
    type Error = InvalidName;

    fn try_from(key: &'a str) -> Result<Key<'a>, InvalidName> {
        if is_valid_key(key) {
            Ok(Key(key))
        } else {
            Err(InvalidName::Key)
        }
    }
}

impl fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A bucket name as ADR-8 allows it: once held, it is valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BucketName(String);

impl BucketName {
    /// The name's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name of the stream behind the bucket, `KV_<bucket>`.
    pub fn stream_name(&self) -> String {
        format!("KV_{}", self.0)
    }
}

impl TryFrom<String> for BucketName {
    type Error = InvalidName;

    fn try_from(name: String) -> Result<BucketName, InvalidName> {
        if is_valid_bucket_name(&name) {
            Ok(BucketName(name))
        } else {
            Err(InvalidName::Bucket)
        }
    }
}

impl TryFrom<&str> for BucketName {
    type Error = InvalidName;

    fn try_from(name: &str) -> Result<BucketName, InvalidName> {
        BucketName::try_from(name.to_owned())
    }
}

impl std::str::FromStr for BucketName {
    type Err = InvalidName;

    fn from_str(name: &str) -> Result<BucketName, InvalidName> {
        BucketName::try_from(name)
    }
}

impl From<BucketName> for String {
    fn from(name: BucketName) -> String {
        name.0
    }
}

impl fmt::Display for BucketName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A key or bucket name that ADR-8 does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidName {
    /// Not a key: empty, starting or ending with `.`, with an empty token (`a..b`), or with
    /// a character outside `A-Z a-z 0-9 - / _ = .`.
    Key,
    /// Not a bucket name: empty, or with a character outside `A-Z a-z 0-9 _ -`.
    Bucket,
}

impl fmt::Display for InvalidName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InvalidName::Key => {
                "key cannot be empty or start/end with `.`, and holds only \
                 `A-Z a-z 0-9 - / _ = .`"
            }
            InvalidName::Bucket => {
                "invalid bucket name: empty, or has a character outside `A-Z a-z 0-9 _ -`"
            }
        })
    }
}

impl std::error::Error for InvalidName {}

/// Whether `name` can name a bucket.
pub(crate) fn is_valid_bucket_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `key` can be stored under. No empty token either (`a..b`, as nats.go's
/// `keyValid`): no stream's subjects match such a subject, so the server would answer a put
/// with no responders and a get with an invalid subject.
pub(crate) fn is_valid_key(key: &str) -> bool {
    !key.is_empty()
        && !key.starts_with('.')
        && !key.ends_with('.')
        && !key.contains("..")
        && key.bytes().all(is_key_byte)
}

/// Whether `filter` can select keys to watch or list: tokens of key characters, `*`, or a
/// final `>`; no empty token.
pub(crate) fn is_valid_filter(filter: &str) -> bool {
    let mut tokens = filter.split('.').peekable();
    while let Some(token) = tokens.next() {
        let last = tokens.peek().is_none();
        let valid = match token {
            "" => false,
            "*" => true,
            ">" => last,
            token => token.bytes().all(is_key_byte),
        };
        if !valid {
            return false;
        }
    }
    true
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'/' | b'_' | b'=' | b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_follow_adr_8() {
        for good in ["kv", "KV_1", "a-b_c", "0"] {
            assert!(is_valid_bucket_name(good), "{good}");
        }
        for bad in ["", "a.b", "a b", "a*", "a>", "ü", "a/b"] {
            assert!(!is_valid_bucket_name(bad), "{bad}");
        }
    }

    #[test]
    fn keys_follow_adr_8() {
        for good in ["a", "a.b", "a/b=c_d-e", "A.1.z", "a.-.b"] {
            assert!(is_valid_key(good), "{good}");
        }
        for bad in [
            "", ".a", "a.", "a..b", "a...b", "a b", "a*", "a.>", "ü", "a\r\n", "a\tb",
        ] {
            assert!(!is_valid_key(bad), "{bad}");
        }
    }

    #[test]
    fn names_parse_into_their_types() {
        assert_eq!(Key::try_from("a.b").unwrap().as_str(), "a.b");
        assert_eq!(Key::try_from("a.").unwrap_err(), InvalidName::Key);
        let bucket: BucketName = "orders".parse().unwrap();
        assert_eq!(bucket.stream_name(), "KV_orders");
        assert_eq!(String::from(bucket), "orders");
        assert_eq!(
            "a.b".parse::<BucketName>().unwrap_err(),
            InvalidName::Bucket
        );
    }

    #[test]
    fn filters_allow_wildcards() {
        for good in [">", "*", "a.*", "a.>", "*.b.>", "a.b"] {
            assert!(is_valid_filter(good), "{good}");
        }
        for bad in ["", "a.", ".a", ">.a", "a..b", "a b", "a*", "a.>b"] {
            assert!(!is_valid_filter(bad), "{bad}");
        }
    }
}
