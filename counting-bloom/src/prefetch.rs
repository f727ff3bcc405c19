//! The crate's only `unsafe` code: the prefetch hint of batched operations.
#![allow(unsafe_code)]

use crate::counters::Block;

/// Asks the CPU to start loading the cache line of `block`, so that a later
/// access finds it in cache. Never faults and changes nothing the program
/// can observe; a no-op off x86_64.
#[inline]
pub(crate) fn prefetch(block: &Block) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, part of the x86_64 baseline
        // (every x86_64 CPU has it). PREFETCHT0 is only a hint: it does not
        // dereference in the language's sense and cannot fault, and the
        // address comes from a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(block).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = block;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_accepts_every_block_and_changes_nothing() {
        let blocks = vec![Block([7; 8]); 100];
        for block in &blocks {
            prefetch(block);
        }
        assert!(blocks.iter().all(|block| block.0 == [7; 8]));
    }
}
