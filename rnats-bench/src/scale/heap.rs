//! How much memory the process holds: exact live heap bytes when the binary installed
//! [`CountingAlloc`] as its global allocator (the `scale` bench does), resident memory from
//! `/proc/self/status` otherwise (the `rnats` binary does not count its allocations).
//!
//! Live heap bytes do not depend on what the allocator keeps cached or on page granularity,
//! so "bytes per subscription" is a count, not a noisy difference of two RSS readings.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::memory;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting the bytes it has handed out and not yet taken back, and
/// the highest that count reached since [`reset_peak`].
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

// SAFETY: every call is forwarded unchanged to `System`; the counters only observe sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as ours.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        new
    }
}

fn grew(size: usize) {
    INSTALLED.store(true, Ordering::Relaxed);
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

/// Whether [`CountingAlloc`] is the global allocator of this process (it has counted an
/// allocation).
pub fn counting() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Bytes in use now: live heap bytes when counting, resident bytes otherwise (0 when neither
/// can be read).
pub fn in_use() -> usize {
    if counting() {
        LIVE.load(Ordering::Relaxed)
    } else {
        kib_to_bytes(memory::self_status_kib(memory::RSS).unwrap_or(0))
    }
}

/// The most bytes in use since the last [`reset_peak`]: the heap's high-water mark when
/// counting, the resident one (`VmHWM`) otherwise.
pub fn peak() -> usize {
    if counting() {
        PEAK.load(Ordering::Relaxed)
    } else {
        kib_to_bytes(memory::self_status_kib(memory::PEAK_RSS).unwrap_or(0))
    }
}

/// Starts a new high-water mark at what is in use now. Without counting, Linux resets
/// `VmHWM` when "5" is written to `/proc/self/clear_refs`; where that fails the peak keeps
/// its older, higher value, which the caller sees as a larger figure, never a smaller one.
pub fn reset_peak() {
    if counting() {
        PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
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
