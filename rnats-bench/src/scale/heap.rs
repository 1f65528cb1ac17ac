//! How much memory the process holds: exact live heap bytes when the binary installed
//! [`CountingAlloc`] as its global allocator (the `scale` bench does), resident memory from
//! `/proc/self/status` otherwise (the `rnats` binary does not count its allocations).
//!
//! Live heap bytes do not depend on what the allocator keeps cached or on page granularity,
//! so "bytes per subscription" is a count, not a noisy difference of two RSS readings.

use rnats_test_server::heap as counted;
pub use rnats_test_server::heap::CountingAlloc;

use crate::memory;

/// Whether [`CountingAlloc`] is the global allocator of this process (it has counted an
/// allocation).
pub fn counting() -> bool {
    counted::counting()
}

/// Bytes in use now: live heap bytes when counting, resident bytes otherwise (0 when neither
/// can be read).
pub fn in_use() -> usize {
    if counting() {
        counted::live()
    } else {
        kib_to_bytes(memory::self_status_kib(memory::RSS).unwrap_or(0))
    }
}

/// The most bytes in use since the last [`reset_peak`]: the heap's high-water mark when
/// counting, the resident one (`VmHWM`) otherwise.
pub fn peak() -> usize {
    if counting() {
        counted::peak()
    } else {
        kib_to_bytes(memory::self_status_kib(memory::PEAK_RSS).unwrap_or(0))
    }
}

/// Starts a new high-water mark at what is in use now. Without counting, Linux resets
/// `VmHWM` when "5" is written to `/proc/self/clear_refs`; where that fails the peak keeps
/// its older, higher value, which the caller sees as a larger figure, never a smaller one.
pub fn reset_peak() {
    if counting() {
        counted::reset_peak();
    } else {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
    }
}

/// What the figures mean, for the report: "heap" or "RSS".
pub fn basis() -> &'static str {
    if counting() { "heap" } else { "RSS" }
}

fn kib_to_bytes(kib: u64) -> usize {
    usize::try_from(kib)
        .unwrap_or(usize::MAX)
        .saturating_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_counting_allocator_it_reads_resident_memory() {
        // The test binary uses the system allocator, so the figures come from /proc.
        assert!(!counting());
        if cfg!(target_os = "linux") {
            assert!(in_use() > 0);
            assert!(peak() >= in_use() / 2);
            assert_eq!(basis(), "RSS");
        }
    }

    #[test]
    fn kib_become_bytes() {
        assert_eq!(kib_to_bytes(3), 3072);
    }
}
