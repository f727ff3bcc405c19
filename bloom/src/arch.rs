//! The crate's only `unsafe` code: CPU-specific instructions, each behind a
//! safe function whose preconditions are established here.
//!
//! - [`prefetch`]: a cache hint for batched operations (x86_64; a no-op
//!   elsewhere).
//! - [`ZeroedBlocks`], [`block_words`]: 64-byte-aligned blocks taken zeroed
//!   from the allocator (pages the OS provides lazily, nothing written), and
//!   viewed as plain words.
//! - [`Avx2`]: the AVX2 block test of the blocked Bloom filter. A value of
//!   the type exists only after runtime detection found AVX2, so its safe
//!   methods may call `#[target_feature(enable = "avx2")]` code.
#![allow(unsafe_code)]

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::blocked::MULTIPLIERS;
use crate::blocks::{BLOCK_WORDS, Block};

/// Asks the CPU to start loading the cache line that holds `value`, so that a
/// later access finds it in cache. Never faults and changes nothing the
/// program can observe.
#[inline]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` requires SSE, which is part of the x86_64
        // baseline (every x86_64 CPU has it). PREFETCHT0 is only a hint: it
        // does not dereference in the language sense, cannot fault, and the
        // address comes from a live reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(value).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// An owned, 64-byte-aligned array of blocks that starts out zeroed
/// without being written: it is carved out of a `calloc`-style zeroed
/// allocation, whose pages the OS provides lazily. (`alloc_zeroed` with a
/// 64-byte alignment would allocate and then write every byte.)
pub(crate) struct ZeroedBlocks {
    /// The allocation, as made.
    base: NonNull<u8>,
    layout: Layout,
    /// The first 64-byte boundary in it; `len` blocks follow.
    blocks: NonNull<Block>,
    len: usize,
}

// SAFETY: `ZeroedBlocks` owns its allocation exclusively (like a
// `Box<[Block]>`); `Block` is plain data that is `Send` and `Sync`.
unsafe impl Send for ZeroedBlocks {}
// SAFETY: as above; shared access only reads through `&[Block]`.
unsafe impl Sync for ZeroedBlocks {}

impl ZeroedBlocks {
    /// `len` zeroed blocks; `None` when the size overflows or the allocator
    /// refuses.
    pub(crate) fn new(len: usize) -> Option<Self> {
        let slack = align_of::<Block>() - 1;
        let size = len.checked_mul(size_of::<Block>())?.checked_add(slack)?;
        // Byte-aligned so that the allocator can use its zeroing `calloc`.
        let layout = Layout::from_size_align(size.max(1), 1).ok()?;
        // SAFETY: the layout has a non-zero size.
        let base = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        let skip = base.as_ptr().align_offset(align_of::<Block>());
        if skip > slack {
            // `align_offset` may in principle give up; then so do we.
            // SAFETY: `base` was allocated above with `layout`.
            unsafe { dealloc(base.as_ptr(), layout) };
            return None;
        }
        // SAFETY: `skip <= slack`, so `base + skip` and the `len` blocks
        // after it lie inside the allocation of `len * 64 + slack` bytes.
        let blocks = unsafe { base.add(skip) }.cast::<Block>();
        Some(Self {
            base,
            layout,
            blocks,
            len,
        })
    }
}

impl Drop for ZeroedBlocks {
    fn drop(&mut self) {
        // SAFETY: `base` was allocated with `layout` in `new` and is freed
        // only here.
        unsafe { dealloc(self.base.as_ptr(), self.layout) }
    }
}

impl Deref for ZeroedBlocks {
    type Target = [Block];

    #[inline]
    fn deref(&self) -> &[Block] {
        // SAFETY: `blocks` is 64-byte aligned and followed by `len` blocks
        // inside the live allocation (see `new`), all initialized: zeroed at
        // allocation (all-zero bytes are a valid `Block`, eight `u64`) and
        // only ever written as `Block`s since. The borrow of `self` keeps the
        // allocation alive and, being shared, excludes writers.
        unsafe { core::slice::from_raw_parts(self.blocks.as_ptr(), self.len) }
    }
}

impl DerefMut for ZeroedBlocks {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Block] {
        // SAFETY: as in `deref`; the borrow of `self` is exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.blocks.as_ptr(), self.len) }
    }
}

impl Clone for ZeroedBlocks {
    /// Panics, like `Vec::clone`, when the allocator refuses.
    fn clone(&self) -> Self {
        let Some(mut copy) = Self::new(self.len) else {
            std::alloc::handle_alloc_error(self.layout)
        };
        copy.copy_from_slice(self);
        copy
    }
}

/// The blocks as one array of words.
#[inline]
pub(crate) fn block_words(blocks: &[Block]) -> &[u64] {
    // SAFETY: `Block` is `repr(C)` around `[u64; 8]`: 64 bytes of u64s with
    // no padding (its alignment, 64, equals its size), so `blocks` is
    // `8 * blocks.len()` initialized, aligned `u64`s, borrowed for the same
    // lifetime.
    unsafe {
        core::slice::from_raw_parts(blocks.as_ptr().cast::<u64>(), blocks.len() * BLOCK_WORDS)
    }
}

/// The blocks as one mutable array of words.
#[inline]
pub(crate) fn block_words_mut(blocks: &mut [Block]) -> &mut [u64] {
    // SAFETY: as in `block_words`; the borrow is exclusive, and any `u64`
    // values written keep every `Block` valid.
    unsafe {
        core::slice::from_raw_parts_mut(
            blocks.as_mut_ptr().cast::<u64>(),
            blocks.len() * BLOCK_WORDS,
        )
    }
}

/// The multipliers of the first `N` probes as a kernel loads them: lanes
/// past the last probe repeat probe 0, so they test a bit already tested
/// instead of needing a lane mask.
pub(crate) fn first_factors<const N: usize>(num_hashes: u32) -> [u32; N] {
    let probes = (num_hashes as usize).clamp(1, N);
    core::array::from_fn(|lane| MULTIPLIERS[if lane < probes { lane } else { 0 }])
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

    /// Runs `work` compiled for AVX2: once inlined here, its calls to
    /// [`block_contains`](Self::block_contains) are inlined too, so a batch
    /// pays for one call and one `vzeroupper` instead of one per key.
    #[inline]
    pub(crate) fn run<R>(self, work: impl FnOnce() -> R) -> R {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected) = self;
            // SAFETY: `self` proves that the CPU supports AVX2, the only
            // target feature `with_avx2` enables.
            unsafe { x86_64::with_avx2(work) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = work;
            match self.0 {}
        }
    }

    /// Whether all `num_hashes` probe bits of the key with this block seed
    /// are set in `block`: the same answer as the scalar test
    /// (`crate::blocked::block_contains`), eight probes per step.
    /// `first` is [`first_factors`] of `num_hashes`.
    #[inline]
    pub(crate) fn block_contains(
        self,
        block: &[u64; 8],
        seed: u32,
        num_hashes: u32,
        first: &[u32; 8],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let Self(Detected) = self;
            // SAFETY: `self` proves that the CPU supports AVX2, the only
            // target feature `contains` enables.
            unsafe { x86_64::contains(block, seed, num_hashes, first) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (block, seed, num_hashes, first);
            match self.0 {}
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86_64 {
    use core::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps,
        _mm256_loadu_si256, _mm256_mullo_epi32, _mm256_permutevar8x32_epi32, _mm256_set1_epi32,
        _mm256_sllv_epi32, _mm256_srli_epi32, _mm256_testc_si256,
    };

    use crate::blocked::MULTIPLIERS;

    /// Calls `work` in a function compiled for AVX2.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn with_avx2<R>(work: impl FnOnce() -> R) -> R {
        work()
    }

    /// The lanes holding probes in a group of `r` probes: all ones in lanes
    /// 0..r, so that the lanes past the last probe test no bit.
    static ACTIVE: [[u32; 8]; 9] = active_lanes();

    const fn active_lanes() -> [[u32; 8]; 9] {
        let mut table = [[0; 8]; 9];
        let mut r = 0;
        while r < 9 {
            let mut lane = 0;
            while lane < r {
                table[r][lane] = u32::MAX;
                lane += 1;
            }
            r += 1;
        }
        table
    }

    /// The block test with eight probes per step. Lane j multiplies the seed
    /// by multiplier j; the product's top 4 bits pick one of the block's
    /// sixteen 32-bit words and the next 5 bits a bit in it. That is bit
    /// q = product >> 23 of the block, as in the scalar code (on
    /// little-endian x86, bit q of the block is bit q & 31 of its 32-bit word
    /// q >> 5). Each half of the block is permuted into the lanes, and the
    /// product's top bit (the word index's bit 3) picks the half per lane.
    ///
    /// Single lookups are bound by how many fit in the out-of-order window,
    /// so instructions count: the first group (`first`, padded by repeating
    /// probe 0) needs no lane mask, and the loop serves only k > 8.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    // The loads are `loadu`, which take any alignment.
    #[allow(clippy::cast_ptr_alignment)]
    // Inlined where the caller is compiled for AVX2 too (`with_avx2`).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains(
        block: &[u64; 8],
        seed: u32,
        num_hashes: u32,
        first: &[u32; 8],
    ) -> bool {
        let words = block.as_ptr();
        // SAFETY: `block` is 64 readable bytes; each load reads 32 of them
        // (words 0..4 and 4..8), and `first` is 32 bytes; `loadu` has no
        // alignment requirement.
        let (low, high, first) = unsafe {
            (
                _mm256_loadu_si256(words.cast::<__m256i>()),
                _mm256_loadu_si256(words.add(4).cast::<__m256i>()),
                _mm256_loadu_si256(first.as_ptr().cast::<__m256i>()),
            )
        };
        let seed = _mm256_set1_epi32(seed as i32);
        let all = _mm256_set1_epi32(-1);
        if !group_holds(low, high, _mm256_mullo_epi32(seed, first), all) {
            return false;
        }
        let probes = num_hashes as usize;
        let mut start = 8;
        while start < probes {
            // Panics (safely) only if a filter had more probes than multipliers.
            let factors = &MULTIPLIERS[start..start + 8];
            let lanes = &ACTIVE[(probes - start).min(8)];
            // SAFETY: `factors` and `lanes` are 8 u32s each, the 32 bytes
            // read; `loadu` has no alignment requirement.
            let (factors, lanes) = unsafe {
                (
                    _mm256_loadu_si256(factors.as_ptr().cast::<__m256i>()),
                    _mm256_loadu_si256(lanes.as_ptr().cast::<__m256i>()),
                )
            };
            if !group_holds(low, high, _mm256_mullo_epi32(seed, factors), lanes) {
                return false;
            }
            start += 8;
        }
        true
    }

    /// Whether the block (`low`, `high` halves) has the bits of the probes
    /// whose products are `product`, in the `lanes` set to all ones.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn group_holds(low: __m256i, high: __m256i, product: __m256i, lanes: __m256i) -> bool {
        let word = _mm256_srli_epi32::<28>(product);
        let bit = _mm256_and_si256(_mm256_srli_epi32::<23>(product), _mm256_set1_epi32(31));
        let mask = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(1), bit), lanes);
        let from_low = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(low, word));
        let from_high = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(high, word));
        let upper = _mm256_castsi256_ps(product);
        let tested = _mm256_castps_si256(_mm256_blendv_ps(from_low, from_high, upper));
        // testc is 1 when every bit of `mask` is set in `tested`.
        _mm256_testc_si256(tested, mask) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_blocks_are_aligned_words() {
        for len in [0, 1, 3, 1000] {
            let mut blocks = ZeroedBlocks::new(len).unwrap();
            assert_eq!(blocks.len(), len);
            assert_eq!(blocks.as_ptr() as usize % 64, 0);
            assert!(blocks.iter().all(|block| block.0 == [0; 8]));
            let words = block_words_mut(&mut blocks);
            assert_eq!(words.len(), 8 * len);
            for (i, word) in words.iter_mut().enumerate() {
                *word = i as u64;
            }
            let copy = blocks.clone();
            assert_eq!(copy.as_ptr() as usize % 64, 0);
            assert_eq!(block_words(&copy), block_words(&blocks));
            if len > 0 {
                assert_eq!(blocks[len - 1].0[7], 8 * len as u64 - 1);
                assert_eq!(block_words(&copy)[8 * len - 1], 8 * len as u64 - 1);
            }
            drop(blocks);
            assert!(copy.iter().enumerate().all(|(i, b)| b.0[0] == 8 * i as u64));
        }
        assert!(ZeroedBlocks::new(usize::MAX / 32).is_none());
        // Shared across threads like a Box<[Block]>.
        let blocks = ZeroedBlocks::new(4).unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| assert_eq!(blocks[3].0, [0; 8]));
        });
    }

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

    /// Checks a kernel against a bit-by-bit reference on random dense
    /// blocks, seeds and probe counts (including counts that are not
    /// multiples of the kernel's lane count).
    fn matches_reference(kernel: impl Fn(&[u64; 8], u32, u32) -> bool) {
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
            let reference = MULTIPLIERS[..k].iter().all(|&m| {
                let q = seed.wrapping_mul(m) >> 23;
                block[(q >> 6) as usize] >> (q & 63) & 1 == 1
            });
            assert_eq!(kernel(&block, seed, k as u32), reference, "case {case}");
        }
    }

    #[test]
    fn avx2_matches_reference() {
        let Some(avx2) = Avx2::detect() else {
            eprintln!("AVX2 not available: skipped");
            return;
        };
        matches_reference(|block, seed, k| avx2.block_contains(block, seed, k, &first_factors(k)));
    }
}
