//! Bucket names and keys as ADR-8 allows them: a bucket is `[A-Za-z0-9_-]+`; a key is
//! `[-/_=.A-Za-z0-9]+` and neither starts nor ends with `.`. Watch and listing filters may
//! also use the subject wildcards `*` (a whole token) and `>` (the last token).

/// Whether `name` can name a bucket.
pub(crate) fn is_valid_bucket_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `key` can be stored under.
pub(crate) fn is_valid_key(key: &str) -> bool {
    !key.is_empty() && !key.starts_with('.') && !key.ends_with('.') && key.bytes().all(is_key_byte)
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
        for good in ["a", "a.b", "a/b=c_d-e", "A.1.z", "a..b"] {
            assert!(is_valid_key(good), "{good}");
        }
        for bad in ["", ".a", "a.", "a b", "a*", "a.>", "ü", "a\r\n", "a\tb"] {
            assert!(!is_valid_key(bad), "{bad}");
        }
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
