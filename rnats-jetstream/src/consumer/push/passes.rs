//! When a listing read through an ordered consumer (a bucket's keys, an object store's
//! objects) is read again.
//!
//! Such a listing ends once it delivered what was pending when its consumer was made. An
//! entry whose message goes before delivery is skipped by the server; when what replaced it
//! came before the count was taken, nats-server 2.15 counts the new message as listed
//! already, and the listing ends one short: a key rewritten, or an object put again, just
//! as the listing starts is left out (5-20% of listings of a one-revision bucket rewritten
//! in a loop; `kv.rs` and `object_store.rs` have the tests). A pass that delivered fewer
//! entries than were pending at its start is therefore read again with a new consumer, each
//! entry yielded once across the passes. An entry that truly went (aged out, purged) costs
//! the passes too, which are bounded.

/// How many passes a listing takes in all, at most.
const MOST_PASSES: u32 = 4;

/// The passes of one listing.
#[derive(Debug, Clone)]
pub(crate) struct Passes {
    /// Passes started so far.
    started: u32,
    /// A pass ended in an error: the listing ends there.
    failed: bool,
}

impl Passes {
    /// The first pass, started.
    pub(crate) fn new() -> Passes {
        Passes {
            started: 1,
            failed: false,
        }
    }

    /// A pass ended in an error (or a new one could not start): no more passes.
    pub(crate) fn fail(&mut self) {
        self.failed = true;
    }

    /// Whether to read the listing again after a pass that delivered `delivered` of the
    /// `pending` entries pending when it started; counts the new pass if so.
    pub(crate) fn again(&mut self, delivered: u64, pending: u64) -> bool {
        if self.failed || delivered >= pending || self.started >= MOST_PASSES {
            return false;
        }
        self.started += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pass_that_came_short_is_read_again_four_passes_at_most() {
        let mut passes = Passes::new();
        assert!(!passes.again(10, 10), "whole");
        assert!(
            !passes.again(11, 10),
            "more than pending (rewritten meanwhile)"
        );
        assert!(passes.again(9, 10));
        assert!(passes.again(9, 10));
        assert!(passes.again(0, 1));
        assert!(!passes.again(9, 10), "the fourth pass is the last");
    }

    #[test]
    fn a_failed_pass_is_not_read_again() {
        let mut passes = Passes::new();
        passes.fail();
        assert!(!passes.again(0, 10));
    }
}
