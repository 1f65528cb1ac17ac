//! A global allocator that counts the heap bytes in use and their high-water mark, for
//! tests and benchmarks that measure what an operation costs in memory. A binary installs
//! it with `#[global_allocator] static HEAP: CountingAlloc = CountingAlloc;`; the counts are
//! exact, not a noisy difference of two resident-memory readings.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
            // Counted as a move: the old block and the new one may both be live at once.
            grew(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
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

/// Heap bytes in use now (0 without [`CountingAlloc`]).
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The most heap bytes in use since the last [`reset_peak`] (0 without [`CountingAlloc`]).
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Starts a new high-water mark at what is in use now, and returns that.
pub fn reset_peak() -> usize {
    let live = live();
    PEAK.store(live, Ordering::Relaxed);
    live
}
