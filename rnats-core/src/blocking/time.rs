//! The blocking client's clock: deadlines for its waits, and the error of a wait that ran
//! out.

use std::time::{Duration, Instant};

use crate::floor::deadline::saturating_add;

/// `now + after`, or `None` (never) when that is past the clock's range: a huge timeout
/// means no deadline, not a panic.
pub(super) fn deadline_after(after: Duration) -> Option<Instant> {
    Instant::now().checked_add(after)
}

/// `now + after`, saturating far in the future.
pub(super) fn saturating_deadline(after: Duration) -> Instant {
    saturating_add(Instant::now(), after)
}

/// A wait that ran out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("timed out after {0:?}")]
pub struct TimedOut(pub Duration);
