//! Unique names: the random part of inbox subjects, request prefixes, batch ids and object
//! chunk subjects.
//!
//! With the `nuid` feature (a default) they are NUIDs, as in every NATS client. Without it
//! they are 22 random letters and digits, the length of a NUID, drawn from the standard
//! library's keyed hasher: its keys come from the operating system's random source once per
//! process, and each call hashes a fresh counter value, so names neither repeat nor follow a
//! pattern another client could guess.

/// A new unique name of 22 letters and digits.
#[cfg(feature = "nuid")]
pub fn next() -> String {
    nuid::next().to_string()
}

/// A new unique name of 22 letters and digits.
#[cfg(not(feature = "nuid"))]
pub fn next() -> String {
    random_name()
}

/// The name `next` gives without the `nuid` feature (tested with it too).
#[cfg(any(test, not(feature = "nuid")))]
fn random_name() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);

    let keys = KEYS.get_or_init(RandomState::new);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut name = String::with_capacity(22);
    // Two 64-bit hashes, 11 base-62 digits from each (62^11 is just above 2^64).
    for half in 0..2u8 {
        let mut hasher = keys.build_hasher();
        hasher.write_u64(count);
        hasher.write_u8(half);
        let mut bits = hasher.finish();
        for _ in 0..11 {
            name.push(char::from(DIGITS[(bits % 62) as usize]));
            bits /= 62;
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    fn assert_unique_names(next: fn() -> String) {
        let names: HashSet<String> = (0..10_000).map(|_| next()).collect();
        assert_eq!(names.len(), 10_000);
        assert!(
            names
                .iter()
                .all(|name| name.len() == 22 && name.bytes().all(|b| b.is_ascii_alphanumeric()))
        );
    }

    #[test]
    fn names_are_22_letters_and_digits_and_never_repeat() {
        assert_unique_names(super::next);
    }

    #[test]
    fn names_without_nuid_are_as_long_and_as_unique() {
        assert_unique_names(super::random_name);
        // Not a counter in disguise: consecutive names share no long prefix.
        let (a, b) = (super::random_name(), super::random_name());
        assert_ne!(a[..8], b[..8]);
    }
}
