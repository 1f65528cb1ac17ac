//! Deadlines that cannot overflow the clock.

use std::time::{Duration, Instant};

/// Far enough ahead to mean "never" for a timer, and still inside `Instant`'s range (std's
/// and tokio's alike).
pub const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `now + after`, or [`FAR_FUTURE`] ahead when that overflows: a duration past the clock's
/// range means "never".
pub fn saturating_add(now: Instant, after: Duration) -> Instant {
    now.checked_add(after)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_past_the_clocks_range_is_far_ahead_instead() {
        let now = Instant::now();
        let soon = Duration::from_secs(5);
        assert_eq!(saturating_add(now, soon), now + soon);
        assert_eq!(saturating_add(now, Duration::MAX), now + FAR_FUTURE);
    }
}
