//! The crate's only `unsafe` code: the prefetch hint of batched operations.
#![allow(unsafe_code)]

/// Asks the CPU to start loading the cache line that holds `value`, so that
/// a later access finds it in cache. Never faults and changes nothing the
/// program can observe; a no-op off x86_64.
#[inline]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, part of the x86_64 baseline.
        // PREFETCHT0 is only a hint: it does not dereference in the
        // language sense, cannot fault, and the address comes from a live
        // reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(value).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
