//! The cache hint of every batched operation, and the workspace's only
//! `unsafe` outside the vector kernels of filterlab-bloom and
//! filterlab-counting-bloom: one block, written once here instead of once
//! per filter crate.

/// Asks the CPU to start loading the cache line that holds `value`, so that
/// a later access finds it in cache. Batched inserts and lookups call it
/// for the keys a few places ahead, so that their memory accesses overlap.
///
/// Safe to call with any reference, as often as wanted: on x86_64 it is one
/// `PREFETCHT0` instruction, a hint that reads nothing in the language's
/// sense, cannot fault and changes nothing the program can observe; it is a
/// no-op on other targets. It is `#[inline]`, so the instruction lands in
/// the caller's loop.
///
/// # Examples
///
/// ```
/// let words = vec![0u64; 1 << 16];
/// for i in (0..words.len()).step_by(8) {
///     filterlab_core::prefetch(&words[i]);
/// }
/// ```
#[inline]
pub fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, part of the x86_64 baseline
        // (every x86_64 CPU has it). PREFETCHT0 is only a hint: it does not
        // dereference in the language's sense and cannot fault, and the
        // address comes from a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(value).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::prefetch;

    /// Run under Miri by `.ci/run`: the hint accepts references to elements,
    /// whole slices, unsized values and zero-sized values, and changes
    /// nothing.
    #[test]
    fn prefetch_accepts_any_reference_and_changes_nothing() {
        let words = vec![7u64; 1000];
        for word in &words {
            prefetch(word);
        }
        prefetch(&words);
        prefetch(words.as_slice());
        prefetch("a str");
        prefetch(&());
        let blocks = vec![[3u64; 8]; 100];
        for block in &blocks {
            prefetch(block);
        }
        assert!(words.iter().all(|&word| word == 7));
        assert!(blocks.iter().all(|block| *block == [3; 8]));
    }
}
