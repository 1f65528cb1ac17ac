//! natscli's `--multisubject`: each message on a subject of its own under the benchmark's
//! subject (`bench.0042`), by sequence number or at random, subscribers on `bench.*`.

use rnats::Subject;

use super::kv::next_random;

/// How messages spread over subjects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MultiSubject {
    /// Subjects at most (0: one per message).
    max: u64,
    /// Pick the subject at random instead of by sequence number.
    random: bool,
    /// Digits of the last token, zero-padded to the width of `max`, as natscli pads them.
    width: usize,
}

impl MultiSubject {
    /// The spread `--multisubjectmax` and `--multisubjectrandomize` ask for.
    pub(super) fn new(max: u64, random: bool) -> MultiSubject {
        let width = if max == 0 { 0 } else { max.to_string().len() };
        MultiSubject { max, random, width }
    }

    /// The subject of the `n`-th message under `base`; `seed` is the publisher's random
    /// state.
    pub(super) fn subject(&self, base: &Subject, n: u64, seed: &mut u64) -> String {
        let token = match (self.max, self.random) {
            (0, _) => n,
            (max, false) => n % max,
            (max, true) => next_random(seed) % max,
        };
        format!("{base}.{token:0width$}", width = self.width)
    }

    /// What subscribers and streams take: every subject under `base`.
    pub(super) fn filter(base: &Subject) -> String {
        format!("{base}.*")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_follow_the_sequence_padded_to_the_maximum() {
        let base: Subject = "bench".parse().expect("subject");
        let mut seed = 1;
        let spread = MultiSubject::new(1000, false);
        assert_eq!(spread.subject(&base, 7, &mut seed), "bench.0007");
        assert_eq!(spread.subject(&base, 1007, &mut seed), "bench.0007");
        assert_eq!(
            MultiSubject::new(0, false).subject(&base, 12345, &mut seed),
            "bench.12345"
        );
        let random = MultiSubject::new(10, true);
        assert!((0..50).all(|n| random.subject(&base, n, &mut seed).len() == "bench.0".len() + 1));
        assert_eq!(MultiSubject::filter(&base), "bench.*");
    }
}
