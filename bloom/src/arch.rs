//! The crate's only `unsafe` code: CPU-specific instructions, each behind a
//! safe function whose preconditions are established here.
//!
//! - [`prefetch`]: a cache hint for batched operations (x86_64; a no-op
//!   elsewhere and under Miri).
//! - [`Avx2`]: the AVX2 block test of the blocked Bloom filter. A value of
//!   the type exists only after runtime detection found AVX2, so its safe
//!   methods may call `#[target_feature(enable = "avx2")]` code.
#![allow(unsafe_code)]

/// Asks the CPU to start loading the cache line that holds `value`, so that a
/// later access finds it in cache. Never faults and changes nothing the
/// program can observe.
#[inline]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` requires SSE, which is part of the x86_64
        // baseline (every x86_64 CPU has it). PREFETCHT0 is only a hint: it
        // does not dereference in the language sense, cannot fault, and the
        // address comes from a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(value).cast()) }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = value;
}

/// Proof that the running CPU supports AVX2: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2(Detected);

/// Uninhabited where AVX2 cannot exist, so no `Avx2` value can be made there.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Detected;
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Detected {}

impl Avx2 {
    /// `Some` when this CPU (and OS) supports AVX2.
    pub(crate) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(Self(Detected));
        }
        None
    }

    /// Whether all `num_hashes` probe bits of the key with this block seed
    /// are set in `block`: the same answer as the scalar test
    /// (`crate::blocked::block_contains`), eight probes per step.
    #[inline]
    pub(crate) fn block_contains(self, block: &[u64; 8], seed: u32, num_hashes: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected) = self;
            // SAFETY: `self` proves that the CPU supports AVX2, the only
            // target feature `contains` enables.
            unsafe { x86_64::contains(block, seed, num_hashes) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (block, seed, num_hashes);
            match self.0 {}
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86_64 {
    use core::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps,
        _mm256_cmpgt_epi32, _mm256_loadu_si256, _mm256_mullo_epi32, _mm256_permutevar8x32_epi32,
        _mm256_set1_epi32, _mm256_setr_epi32, _mm256_slli_epi32, _mm256_sllv_epi32,
        _mm256_srli_epi32, _mm256_testc_si256,
    };

    use crate::blocked::MULTIPLIERS;

    /// The block test with eight probes per step. Lane j multiplies the seed
    /// by multiplier j; the top 4 bits of the product pick one of the
    /// block's sixteen 32-bit words and the next 5 bits a bit in it. That is
    /// bit q = product >> 23 of the block, as in the scalar code: on
    /// little-endian x86, 32-bit word q >> 5 holds bit q & 31 of the block's
    /// bit q. Each half of the block is permuted into the lanes and the half
    /// is chosen per lane.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    // The loads are `loadu`, which take any alignment.
    #[allow(clippy::cast_ptr_alignment)]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains(block: &[u64; 8], seed: u32, num_hashes: u32) -> bool {
        let words = block.as_ptr();
        // SAFETY: `block` is 64 readable bytes; each load reads 32 of them
        // (words 0..4 and 4..8), and `loadu` has no alignment requirement.
        let (low, high) = unsafe {
            (
                _mm256_loadu_si256(words.cast::<__m256i>()),
                _mm256_loadu_si256(words.add(4).cast::<__m256i>()),
            )
        };
        let seed = _mm256_set1_epi32(seed as i32);
        let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let one = _mm256_set1_epi32(1);
        let low_five = _mm256_set1_epi32(31);
        let probes = (num_hashes as usize).min(MULTIPLIERS.len());
        let mut start = 0;
        while start < probes {
            // `start` is a multiple of 8 below 64: the range is in bounds.
            let group = &MULTIPLIERS[start..start + 8];
            // SAFETY: `group` is 8 u32s, the 32 bytes read; `loadu` is unaligned.
            let factors = unsafe { _mm256_loadu_si256(group.as_ptr().cast::<__m256i>()) };
            let product = _mm256_mullo_epi32(seed, factors);
            let word = _mm256_srli_epi32::<28>(product);
            let bit = _mm256_and_si256(_mm256_srli_epi32::<23>(product), low_five);
            // Lanes past the last probe test nothing.
            let active = _mm256_cmpgt_epi32(_mm256_set1_epi32((probes - start) as i32), lane);
            let mask = _mm256_and_si256(_mm256_sllv_epi32(one, bit), active);
            let from_low = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(low, word));
            let from_high = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(high, word));
            // Word indexes 8..16 live in the high half: bit 3 of the index,
            // shifted into the sign bit, selects it.
            let upper = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(word));
            let tested = _mm256_castps_si256(_mm256_blendv_ps(from_low, from_high, upper));
            // testc is 1 when every bit of `mask` is set in `tested`.
            if _mm256_testc_si256(tested, mask) == 0 {
                return false;
            }
            start += 8;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_accepts_any_reference() {
        let words = vec![7u64; 1000];
        for word in &words {
            prefetch(word);
        }
        prefetch(&words);
        prefetch(&());
        assert_eq!(words[999], 7);
    }

    /// The AVX2 test agrees with a bit-by-bit reference on random blocks,
    /// seeds and probe counts (including counts that are not multiples of 8).
    #[test]
    fn avx2_matches_reference() {
        let Some(avx2) = Avx2::detect() else {
            eprintln!("AVX2 not available: skipped");
            return;
        };
        let multipliers = &crate::blocked::MULTIPLIERS;
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = filterlab_core::mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        };
        let cases = if cfg!(miri) { 200 } else { 20_000 };
        for case in 0..cases {
            // Dense blocks so that both answers occur often.
            let block: [u64; 8] = core::array::from_fn(|_| next() | next() | next());
            let seed = next() as u32;
            let k = 1 + case % 64;
            let reference = multipliers[..k].iter().all(|&m| {
                let q = seed.wrapping_mul(m) >> 23;
                block[(q >> 6) as usize] >> (q & 63) & 1 == 1
            });
            assert_eq!(
                avx2.block_contains(&block, seed, k as u32),
                reference,
                "case {case}"
            );
        }
    }
}
