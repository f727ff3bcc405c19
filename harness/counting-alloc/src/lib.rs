//! The heap the process holds, counted: the filterlab harness's global
//! allocator is the system's with two counters beside it (the bytes live
//! and the most live since the last reset), so that the speed experiment
//! can report the peak memory of a static filter's build ([`peak_during`]).
//! Linking this crate installs the allocator.
//!
//! Why an allocator and not the process's resident-set high-water mark
//! (`VmHWM`): the C allocator keeps freed memory below its mmap threshold
//! (up to 32 MiB) for reuse, so a build of a few MB can reuse pages the
//! previous filter left and raise no high-water mark at all. The counters
//! see every byte requested, whatever the allocator does with pages.
//! What they do not see: memory a library maps itself (none of the
//! filters measured here does), and pages never touched (a zeroed
//! allocation counts whole, as it would once written).
//!
//! The only `unsafe` of the harness is here, in a crate without
//! dependencies so that Miri (`.ci/run`) checks it cheaply: `GlobalAlloc`
//! is an unsafe trait. Each method forwards to [`System`] unchanged (so `calloc`'s
//! fresh zero pages and `realloc`'s in-place growth stay what they are)
//! and counts the size of what it got.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes allocated and not yet freed.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The most bytes live at once since the last [`peak_during`].
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counted.
struct Counting;

#[global_allocator]
static COUNTING: Counting = Counting;

/// Counts `bytes` more live.
fn grow(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

/// Counts `bytes` fewer live.
fn shrink(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every method hands its arguments to `System`, which upholds the
// `GlobalAlloc` contract, and returns what `System` returned; the counting
// around the calls touches no memory of the caller's.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `layout` is `System.alloc`'s.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            grow(layout.size());
        }
        pointer
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let pointer = unsafe { System.alloc_zeroed(layout) };
        if !pointer.is_null() {
            grow(layout.size());
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: `pointer` came from this allocator, so from `System`,
        // with `layout`: the caller's contract.
        unsafe { System.dealloc(pointer, layout) };
        shrink(layout.size());
    }

    /// Counts the change of size: an allocation that moves holds both
    /// blocks for the copy, which the peak leaves out (the system's
    /// `realloc` grows large blocks in place or remaps them).
    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`, and `new_size` meets the caller's contract.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            let old = layout.size();
            if new_size > old {
                grow(new_size - old);
            } else {
                shrink(old - new_size);
            }
        }
        moved
    }
}

/// Runs `work` and says how many bytes more than before it the process
/// held at its highest point (what it allocated and still held there,
/// including what it returns). Meaningful only while nothing else
/// allocates: the speed experiment runs alone on one thread.
pub fn peak_during<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let result = work();
    let peak = PEAK.load(Ordering::Relaxed);
    (result, peak.saturating_sub(before) as u64)
}

#[cfg(test)]
mod tests {
    use std::hint::black_box;

    use super::*;

    // Other threads of the test runner allocate and free at the same time:
    // bounds hold within `SLACK` of what a test holds. Under Miri
    // (`.ci/run`), smaller blocks.

    /// The unit of the tests' blocks: a MiB, a KiB under Miri.
    const UNIT: usize = if cfg!(miri) { 1 << 10 } else { 1 << 20 };

    /// What the runner's own threads may free while a test measures (a few
    /// dozen bytes seen), far below the unit a missed count would lose.
    const SLACK: u64 = (UNIT / 4) as u64;

    /// Held by each test: `peak_during` resets the one shared peak, so a
    /// test starting beside another would erase the other's peak (seen in
    /// CI: 1.06 MB counted of the 4 MiB held).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn alone() -> std::sync::MutexGuard<'static, ()> {
        ONE_AT_A_TIME
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[test]
    fn a_vector_is_counted_at_its_peak() {
        let _alone = alone();
        let (vector, peak) = peak_during(|| {
            let scratch = black_box(vec![1u8; 3 * UNIT]);
            drop(scratch);
            black_box(vec![0u64; UNIT / 8])
        });
        assert_eq!(vector.len(), UNIT / 8);
        assert!(peak + SLACK >= 3 * UNIT as u64, "{peak}");
    }

    #[test]
    fn zeroed_grown_and_shrunk_allocations_are_counted() {
        let _alone = alone();
        let ((), peak) = peak_during(|| {
            let mut grown: Vec<u32> = Vec::with_capacity(16);
            for value in 0..(UNIT / 2) as u32 {
                grown.push(black_box(value));
            }
            let zeroed = black_box(vec![0u64; UNIT / 4]);
            grown.truncate(4);
            grown.shrink_to_fit();
            black_box((grown, zeroed));
        });
        // Two units grown in place or moved, two zeroed.
        assert!(peak + SLACK >= 4 * UNIT as u64, "{peak}");
        // Direct calls: a block's size is counted while it lives.
        let layout = Layout::from_size_align(UNIT, 64).unwrap();
        let ((), held) = peak_during(|| {
            // SAFETY: a non-zero layout; the block is freed with it.
            unsafe {
                let block = COUNTING.alloc_zeroed(layout);
                assert!(!block.is_null());
                assert_eq!(*block.add(UNIT - 1), 0);
                let larger = COUNTING.realloc(block, layout, 2 * UNIT);
                assert!(!larger.is_null());
                COUNTING.dealloc(larger, Layout::from_size_align(2 * UNIT, 64).unwrap());
            }
        });
        assert!(held + SLACK >= 2 * UNIT as u64, "{held}");
    }
}
