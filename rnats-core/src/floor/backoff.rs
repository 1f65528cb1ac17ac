//! The randomness and waits of reconnecting (ADR-40): backoff between passes over the
//! server pool, the lame duck jitter, shuffling.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// The default delay before pass `pass` over the pool: 100 ms doubling to 5 s, plus up to 50%
/// random jitter.
pub(crate) fn default_delay(pass: usize) -> Duration {
    if pass == 0 {
        return Duration::ZERO;
    }
    let exponent = u32::try_from(pass - 1).unwrap_or(u32::MAX).min(6);
    let base = Duration::from_millis(100 * (1 << exponent)).min(Duration::from_secs(5));
    base + base.mul_f64(random_unit() / 2.0)
}

/// A random number in [0, 1). `RandomState` is seeded randomly per instance, which is all the
/// randomness jitter and shuffling need; no RNG crate for that.
pub(crate) fn random_unit() -> f64 {
    let bits = RandomState::new().build_hasher().finish() >> 11;
    bits as f64 / (1u64 << 53) as f64
}

/// How long after a lame duck INFO to leave the server: a random moment within a second, so
/// that all its clients do not land on the next server at once (ADR-40). Both clients use it.
pub(crate) fn lame_duck_delay() -> Duration {
    const LAME_DUCK_JITTER: Duration = Duration::from_secs(1);
    LAME_DUCK_JITTER.mul_f64(random_unit())
}

/// Shuffles in place (Fisher-Yates).
pub(crate) fn shuffle<T>(items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = (random_unit() * (i + 1) as f64) as usize;
        items.swap(i, j.min(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_grows_to_a_cap_with_bounded_jitter() {
        assert_eq!(default_delay(0), Duration::ZERO);
        for pass in 1..20 {
            let base =
                Duration::from_millis(100 * (1 << (pass - 1).min(6))).min(Duration::from_secs(5));
            let d = default_delay(pass);
            assert!(d >= base && d <= base.mul_f64(1.5), "pass {pass}: {d:?}");
        }
    }

    #[test]
    fn shuffle_keeps_every_item() {
        let mut items: Vec<u32> = (0..50).collect();
        shuffle(&mut items);
        items.sort_unstable();
        assert_eq!(items, (0..50).collect::<Vec<_>>());
    }
}
