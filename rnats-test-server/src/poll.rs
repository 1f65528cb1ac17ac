//! Waiting for a condition nothing announces (a proxy's count of connections, a thread's
//! end seen in a count of holders), where no event or flush can tell a test.

use std::time::{Duration, Instant};

/// Polls until `done` holds, panicking with "condition not reached" after `limit` so that a
/// regression fails the test instead of hanging it. The pause between polls only spares the
/// CPU; nothing relies on its length.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now().checked_add(limit);
    while !done() {
        assert!(
            deadline.is_none_or(|deadline| Instant::now() < deadline),
            "condition not reached"
        );
        std::thread::park_timeout(Duration::from_millis(1));
    }
}
