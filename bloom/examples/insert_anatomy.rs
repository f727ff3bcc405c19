//! Where a one-key `BlockedBloomFilter` insert spends its time, against
//! sbbf-rs-safe's split-block insert: variants of the insert loop timed in
//! one process, alternating rounds (order rotating), minimum ns per key.
//!
//! Every variant hashes each u64 key with the same XXH3 key hash (the
//! filter's `KeyHasher`), inserts the n keys one at a time into an emptied
//! array of the same size (10 bits per key), and calls its block function
//! once per key the way the real filter does (a direct call of an
//! AVX2-compiled function that cannot inline into a portable caller),
//! unless its name says "inlined".
//!
//! - `real insert`: `BlockedBloomFilter::insert` (AVX2 kernel, `len`).
//! - `real lookup`: `BlockedBloomFilter::contains` of the same n keys
//!   (no prefetch), for reference.
//! - `our mask, OR only`: the AVX2 kernel's 512-bit mask ORed into the block
//!   (two loads, two stores), no test, no answer.
//! - `our mask, test+set`: the kernel's insert copied (the answer counted).
//! - `mask only (ours)` / `mask only (sbbf)`: the masks built and folded
//!   into a register, no memory: the pure instruction cost.
//! - `test, then scalar ORs (no mask)`: the lookup's vector test, then one
//!   scalar read-modify-write per probe.
//! - `scalar mask on stack, test+set`: the mask built by scalar code in
//!   memory, then the vector test and set.
//! - `our mask, k=6 lanes only`: the AVX2 mask of the key's k probes only
//!   (the kernel used to broadcast all eight lanes, padding repeating
//!   probe 0).
//! - `AVX-512 mask, k=6 lanes`: the mask in one 512-bit register.
//! - `AVX-512 mask, k=6, counter in memory`: the same, with a counter
//!   updated in memory per key (as the filter's `len` is).
//! - `sbbf mask, 64B block`: sbbf's 3-instruction mask (8 bits, one per
//!   32-bit word) tested and set in the low half of our 64-byte block at our
//!   block index: the same lines as ours, sbbf's work per key.
//! - `sbbf copy, 32B block`: sbbf's insert re-implemented here on 32-byte
//!   blocks (checks that this harness reproduces the crate).
//! - `sbbf-rs-safe`: the crate's `insert_hash`.
//!
//! ```text
//! cargo run --release -p filterlab-bloom --example insert_anatomy [-- ITEMS [ROUNDS]]
//! ```
//!
//! x86_64 with AVX2 only.

use std::hint::black_box;
use std::time::Instant;

use filterlab_bloom::{BlockedBloomFilter, Filter, Kernel};
use filterlab_core::{KeyHasher, mix64, reduce};
use filterlab_peers::{Inserted, PeerFilter, SplitBlock};

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m256i, __m512i, _mm256_and_si256, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps,
    _mm256_loadu_si256, _mm256_mullo_epi32, _mm256_or_si256, _mm256_permutevar8x32_epi32,
    _mm256_set1_epi32, _mm256_setr_epi32, _mm256_setzero_si256, _mm256_sllv_epi32,
    _mm256_srli_epi32, _mm256_storeu_si256, _mm256_sub_epi32, _mm256_testc_si256, _mm256_xor_si256,
    _mm512_andnot_si512, _mm512_castsi256_si512, _mm512_loadu_si512, _mm512_or_si512,
    _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_setr_epi32, _mm512_setzero_si512,
    _mm512_sllv_epi32, _mm512_storeu_si512, _mm512_sub_epi32, _mm512_test_epi32_mask,
};

/// The seed of every hasher.
const SEED: u64 = 1;

/// sbbf-rs / Parquet's salts.
const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// One 64-byte block.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// The filter's probe multipliers (as `kernel::MULTIPLIERS`, part of the
/// format): the high half of SplitMix64's output for j + 1, forced odd.
fn multipliers(k: u32) -> [u32; 8] {
    core::array::from_fn(|lane| {
        let j = if lane < k as usize { lane } else { 0 };
        (mix64(j as u64 + 1) >> 32) as u32 | 1
    })
}

#[cfg(target_arch = "x86_64")]
// The loads and stores are `loadu`/`storeu`, which take any alignment.
#[allow(clippy::cast_ptr_alignment, clippy::wildcard_imports)]
mod avx2 {
    use super::*;

    /// The AVX2 kernel's mask of a key (k <= 8): bit q = (seed · m_j) >> 23
    /// of the block for each probe, `low` = 32-bit words 0..8.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn our_mask(seed: u32, first: &[u32; 8]) -> (__m256i, __m256i) {
        // SAFETY: `first` is 32 readable bytes.
        let first = unsafe { _mm256_loadu_si256(first.as_ptr().cast::<__m256i>()) };
        let product = _mm256_mullo_epi32(_mm256_set1_epi32(seed as i32), first);
        let bits = _mm256_srli_epi32::<23>(product);
        let one = _mm256_set1_epi32(1);
        let base_low = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
        let base_high = _mm256_setr_epi32(256, 288, 320, 352, 384, 416, 448, 480);
        let (mut low, mut high) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        for lane in 0..8 {
            let bit = _mm256_permutevar8x32_epi32(bits, _mm256_set1_epi32(lane));
            low = _mm256_or_si256(low, _mm256_sllv_epi32(one, _mm256_sub_epi32(bit, base_low)));
            high = _mm256_or_si256(
                high,
                _mm256_sllv_epi32(one, _mm256_sub_epi32(bit, base_high)),
            );
        }
        (low, high)
    }

    /// sbbf's mask: one bit in each 32-bit word.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) fn sbbf_mask(seed: u32) -> __m256i {
        let salt = _mm256_setr_epi32(
            SALT[0] as i32,
            SALT[1] as i32,
            SALT[2] as i32,
            SALT[3] as i32,
            SALT[4] as i32,
            SALT[5] as i32,
            SALT[6] as i32,
            SALT[7] as i32,
        );
        let product = _mm256_mullo_epi32(salt, _mm256_set1_epi32(seed as i32));
        _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(product))
    }

    /// Our mask ORed into the block: no test, no answer.
    ///
    /// # Safety
    ///
    /// AVX2; `block` valid for 64 bytes of reads and writes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn or_only(block: *mut Line, seed: u32, first: &[u32; 8]) {
        let (low, high) = our_mask(seed, first);
        let words = block.cast::<__m256i>();
        // SAFETY: the caller's promise.
        unsafe {
            let (a, b) = (_mm256_loadu_si256(words), _mm256_loadu_si256(words.add(1)));
            _mm256_storeu_si256(words, _mm256_or_si256(a, low));
            _mm256_storeu_si256(words.add(1), _mm256_or_si256(b, high));
        }
    }

    /// The kernel's insert: test and set with our mask; whether new.
    ///
    /// # Safety
    ///
    /// As [`or_only`].
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn test_and_set(block: *mut Line, seed: u32, first: &[u32; 8]) -> bool {
        let (low, high) = our_mask(seed, first);
        let words = block.cast::<__m256i>();
        // SAFETY: the caller's promise.
        unsafe {
            let (a, b) = (_mm256_loadu_si256(words), _mm256_loadu_si256(words.add(1)));
            let present = _mm256_testc_si256(a, low) & _mm256_testc_si256(b, high);
            _mm256_storeu_si256(words, _mm256_or_si256(a, low));
            _mm256_storeu_si256(words.add(1), _mm256_or_si256(b, high));
            present == 0
        }
    }

    /// sbbf's mask tested and set in the 32 bytes at `half`; whether new.
    ///
    /// # Safety
    ///
    /// AVX2; `half` valid for 32 bytes of reads and writes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sbbf_test_and_set(half: *mut __m256i, seed: u32) -> bool {
        let mask = sbbf_mask(seed);
        // SAFETY: the caller's promise.
        unsafe {
            let old = _mm256_loadu_si256(half);
            let present = _mm256_testc_si256(old, mask);
            _mm256_storeu_si256(half, _mm256_or_si256(old, mask));
            present == 0
        }
    }

    /// The block test of `contains` (one group of eight probes), then each
    /// probe's bit ORed into its 64-bit word with a scalar read-modify-write:
    /// no mask is built. Whether new.
    ///
    /// # Safety
    ///
    /// As [`or_only`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn test_then_scalar_or(
        block: *mut Line,
        seed: u32,
        first: &[u32; 8],
        k: usize,
    ) -> bool {
        let words = block.cast::<__m256i>();
        // SAFETY: the caller's promise; `first` is 32 bytes.
        let (low, high, factors) = unsafe {
            (
                _mm256_loadu_si256(words),
                _mm256_loadu_si256(words.add(1)),
                _mm256_loadu_si256(first.as_ptr().cast::<__m256i>()),
            )
        };
        let product = _mm256_mullo_epi32(_mm256_set1_epi32(seed as i32), factors);
        let word = _mm256_srli_epi32::<28>(product);
        let bit = _mm256_and_si256(_mm256_srli_epi32::<23>(product), _mm256_set1_epi32(31));
        let mask = _mm256_sllv_epi32(_mm256_set1_epi32(1), bit);
        let from_low = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(low, word));
        let from_high = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(high, word));
        let tested = _mm256_castps_si256(_mm256_blendv_ps(
            from_low,
            from_high,
            _mm256_castsi256_ps(product),
        ));
        let present = _mm256_testc_si256(tested, mask);
        let block = block.cast::<u64>();
        for &multiplier in &first[..k] {
            let q = seed.wrapping_mul(multiplier) >> 23;
            // SAFETY: q < 512, so word q >> 6 < 8 of the block.
            unsafe { *block.add((q >> 6) as usize) |= 1u64 << (q & 63) };
        }
        present == 0
    }

    /// The mask built by scalar code in a stack array of 8 words, then the
    /// vector test and set. Whether new.
    ///
    /// # Safety
    ///
    /// As [`or_only`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn stack_mask(
        block: *mut Line,
        seed: u32,
        first: &[u32; 8],
        k: usize,
    ) -> bool {
        let mut mask = Line([0; 8]);
        for &multiplier in &first[..k] {
            let q = seed.wrapping_mul(multiplier) >> 23;
            mask.0[(q >> 6) as usize] |= 1u64 << (q & 63);
        }
        let words = block.cast::<__m256i>();
        let m = (&raw const mask).cast::<__m256i>();
        // SAFETY: the caller's promise; `mask` is 64 bytes.
        unsafe {
            let (low, high) = (_mm256_loadu_si256(m), _mm256_loadu_si256(m.add(1)));
            let (a, b) = (_mm256_loadu_si256(words), _mm256_loadu_si256(words.add(1)));
            let present = _mm256_testc_si256(a, low) & _mm256_testc_si256(b, high);
            _mm256_storeu_si256(words, _mm256_or_si256(a, low));
            _mm256_storeu_si256(words.add(1), _mm256_or_si256(b, high));
            present == 0
        }
    }

    /// Our mask with only the key's `K` probes broadcast (the kernel pads
    /// to eight lanes), then test and set. Whether new.
    ///
    /// # Safety
    ///
    /// As [`or_only`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn k_lanes<const K: i32>(
        block: *mut Line,
        seed: u32,
        first: &[u32; 8],
    ) -> bool {
        // SAFETY: `first` is 32 readable bytes.
        let factors = unsafe { _mm256_loadu_si256(first.as_ptr().cast::<__m256i>()) };
        let product = _mm256_mullo_epi32(_mm256_set1_epi32(seed as i32), factors);
        let bits = _mm256_srli_epi32::<23>(product);
        let one = _mm256_set1_epi32(1);
        let base_low = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
        let base_high = _mm256_setr_epi32(256, 288, 320, 352, 384, 416, 448, 480);
        let (mut low, mut high) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        for lane in 0..K {
            let bit = _mm256_permutevar8x32_epi32(bits, _mm256_set1_epi32(lane));
            low = _mm256_or_si256(low, _mm256_sllv_epi32(one, _mm256_sub_epi32(bit, base_low)));
            high = _mm256_or_si256(
                high,
                _mm256_sllv_epi32(one, _mm256_sub_epi32(bit, base_high)),
            );
        }
        let words = block.cast::<__m256i>();
        // SAFETY: the caller's promise.
        unsafe {
            let (a, b) = (_mm256_loadu_si256(words), _mm256_loadu_si256(words.add(1)));
            let present = _mm256_testc_si256(a, low) & _mm256_testc_si256(b, high);
            _mm256_storeu_si256(words, _mm256_or_si256(a, low));
            _mm256_storeu_si256(words.add(1), _mm256_or_si256(b, high));
            present == 0
        }
    }

    /// The mask in one AVX-512 register (16 lanes per probe step), only
    /// the key's `K` probes, then test and set. Whether new.
    ///
    /// # Safety
    ///
    /// AVX-512F; `block` as for [`or_only`].
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn avx512_mask<const K: i32>(
        block: *mut Line,
        seed: u32,
        first: &[u32; 8],
    ) -> bool {
        // SAFETY: `first` is 32 readable bytes.
        let factors = unsafe { _mm256_loadu_si256(first.as_ptr().cast::<__m256i>()) };
        let product = _mm256_mullo_epi32(_mm256_set1_epi32(seed as i32), factors);
        let bits = _mm512_castsi256_si512(_mm256_srli_epi32::<23>(product));
        let one = _mm512_set1_epi32(1);
        let base = _mm512_setr_epi32(
            0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480,
        );
        let mut mask = _mm512_setzero_si512();
        for lane in 0..K {
            let bit = _mm512_permutexvar_epi32(_mm512_set1_epi32(lane), bits);
            mask = _mm512_or_si512(mask, _mm512_sllv_epi32(one, _mm512_sub_epi32(bit, base)));
        }
        let words = block.cast::<__m512i>();
        // SAFETY: the caller's promise.
        unsafe {
            let old = _mm512_loadu_si512(words);
            let missing = _mm512_andnot_si512(old, mask);
            _mm512_storeu_si512(words, _mm512_or_si512(old, mask));
            _mm512_test_epi32_mask(missing, missing) != 0
        }
    }

    /// Our masks of every hash folded into a register: the instructions
    /// alone.
    #[target_feature(enable = "avx2")]
    pub(super) fn fold_our_masks(keys: &[u64], hasher: &KeyHasher, first: &[u32; 8]) -> u64 {
        let mut acc = _mm256_setzero_si256();
        for &key in keys {
            let hash = hasher.hash_u64(key);
            let (low, high) = our_mask(hash as u32, first);
            acc = _mm256_xor_si256(acc, _mm256_or_si256(low, high));
        }
        let mut out = [0u64; 4];
        // SAFETY: `out` is 32 writable bytes.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast::<__m256i>(), acc) };
        out[0] ^ out[3]
    }

    /// sbbf's masks folded into a register.
    #[target_feature(enable = "avx2")]
    pub(super) fn fold_sbbf_masks(keys: &[u64], hasher: &KeyHasher) -> u64 {
        let mut acc = _mm256_setzero_si256();
        for &key in keys {
            let hash = hasher.hash_u64(key);
            acc = _mm256_xor_si256(acc, sbbf_mask(hash as u32));
        }
        let mut out = [0u64; 4];
        // SAFETY: `out` is 32 writable bytes.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast::<__m256i>(), acc) };
        out[0] ^ out[3]
    }

    /// The whole test-and-set loop compiled for AVX2 (the kernel inlined,
    /// no call per key); returns the new keys.
    ///
    /// # Safety
    ///
    /// AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn test_and_set_inlined(
        lines: &mut [Line],
        keys: &[u64],
        hasher: &KeyHasher,
        first: &[u32; 8],
    ) -> u64 {
        let blocks = lines.len() as u64;
        let base = lines.as_mut_ptr();
        let mut new = 0;
        for &key in keys {
            let hash = hasher.hash_u64(key);
            let index = reduce(hash, blocks) as usize;
            // SAFETY: `index < lines.len()`.
            new += u64::from(unsafe { test_and_set(base.add(index), hash as u32, first) });
        }
        new
    }
}

/// A variant of the insert loop: runs over the keys, returns a checksum.
type Variant<'a> = Box<dyn FnMut(&[u64]) -> u64 + 'a>;

fn main() {
    #[cfg(not(target_arch = "x86_64"))]
    {
        eprintln!("x86_64 only");
    }
    #[cfg(target_arch = "x86_64")]
    run();
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_lines)]
fn run() {
    use std::cell::RefCell;

    assert!(
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("avx512f"),
        "this example needs AVX2 and AVX-512F"
    );
    let mut args = std::env::args().skip(1);
    let items = args
        .next()
        .map_or(1e7, |a| a.parse::<f64>().expect("ITEMS")) as u64;
    let rounds: usize = args.next().map_or(7, |a| a.parse().expect("ROUNDS"));
    let keys: Vec<u64> = (0..items).map(|i| mix64(i ^ 0x5555)).collect();

    let filter = RefCell::new(
        BlockedBloomFilter::with_bits(10 * items)
            .expected_items(items)
            .seed(SEED)
            .kernel(Kernel::Avx2)
            .build()
            .expect("valid sizes"),
    );
    let k = filter.borrow().num_hashes();
    assert!(k == 6, "the variants are written for k = 6 (k = {k})");
    let num_blocks = filter.borrow().num_blocks();
    let hasher = *filter.borrow().hasher();
    let first = multipliers(k);
    let lines = RefCell::new(vec![Line([0; 8]); num_blocks as usize]);
    let halves = RefCell::new(vec![Line([0; 8]); num_blocks as usize]);
    let sbbf = RefCell::new(SplitBlock::with_bits_per_key(10, items, SEED));

    let clear_lines = |lines: &mut Vec<Line>| lines.fill(Line([0; 8]));
    let variants: Vec<(&str, Variant<'_>)> = vec![
        (
            "real insert",
            Box::new(|keys| {
                let mut filter = filter.borrow_mut();
                filter.clear();
                timed_sum(keys, |key| u64::from(filter.insert(&key)))
            }),
        ),
        (
            "real lookup (after real insert)",
            Box::new(|keys| {
                let filter = filter.borrow();
                timed_sum(keys, |key| u64::from(filter.contains(&key)))
            }),
        ),
        (
            "our mask, OR only",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX2 checked; `index < num_blocks`.
                    unsafe { avx2::or_only(base.add(index), hash as u32, &first) };
                    0
                })
            }),
        ),
        (
            "our mask, test+set",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX2 checked; `index < num_blocks`.
                    u64::from(unsafe { avx2::test_and_set(base.add(index), hash as u32, &first) })
                })
            }),
        ),
        (
            "our mask, test+set, inlined",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let start = Instant::now();
                // SAFETY: AVX2 checked.
                let new = unsafe { avx2::test_and_set_inlined(&mut lines, keys, &hasher, &first) };
                report_time(start, keys.len());
                new
            }),
        ),
        (
            "mask only (ours)",
            Box::new(|keys| {
                let start = Instant::now();
                // SAFETY: AVX2 checked.
                let out = unsafe { avx2::fold_our_masks(keys, &hasher, &first) };
                report_time(start, keys.len());
                out
            }),
        ),
        (
            "mask only (sbbf)",
            Box::new(|keys| {
                let start = Instant::now();
                // SAFETY: AVX2 checked.
                let out = unsafe { avx2::fold_sbbf_masks(keys, &hasher) };
                report_time(start, keys.len());
                out
            }),
        ),
        (
            "test, then scalar ORs (no mask)",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX2 checked; `index < num_blocks`.
                    u64::from(unsafe {
                        avx2::test_then_scalar_or(base.add(index), hash as u32, &first, k as usize)
                    })
                })
            }),
        ),
        (
            "scalar mask on stack, test+set",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX2 checked; `index < num_blocks`.
                    u64::from(unsafe {
                        avx2::stack_mask(base.add(index), hash as u32, &first, k as usize)
                    })
                })
            }),
        ),
        (
            "our mask, k=6 lanes only",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX2 checked; `index < num_blocks`.
                    u64::from(unsafe { avx2::k_lanes::<6>(base.add(index), hash as u32, &first) })
                })
            }),
        ),
        (
            "AVX-512 mask, k=6 lanes",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX-512F checked; `index < num_blocks`.
                    u64::from(unsafe {
                        avx2::avx512_mask::<6>(base.add(index), hash as u32, &first)
                    })
                })
            }),
        ),
        (
            "AVX-512 mask, k=6, counter in memory",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                let mut count = 0u64;
                // Escaped: kept in memory across the opaque kernel call, as
                // the filter's `len` is.
                let counter: &mut u64 = black_box(&mut count);
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX-512F checked; `index < num_blocks`.
                    let new =
                        unsafe { avx2::avx512_mask::<6>(base.add(index), hash as u32, &first) };
                    *counter += u64::from(new);
                    u64::from(new)
                })
            }),
        ),
        (
            "sbbf mask, 64B block",
            Box::new(|keys| {
                let mut lines = lines.borrow_mut();
                clear_lines(&mut lines);
                let base = lines.as_mut_ptr();
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, num_blocks) as usize;
                    // SAFETY: AVX2 checked; `index < num_blocks`.
                    u64::from(unsafe {
                        avx2::sbbf_test_and_set(base.add(index).cast(), hash as u32)
                    })
                })
            }),
        ),
        (
            "sbbf copy, 32B block",
            Box::new(|keys| {
                let mut halves = halves.borrow_mut();
                clear_lines(&mut halves);
                let base = halves.as_mut_ptr().cast::<__m256i>();
                let count = 2 * num_blocks;
                timed_sum(keys, |key| {
                    let hash = hasher.hash_u64(key);
                    let index = reduce(hash, count) as usize;
                    // SAFETY: AVX2 checked; `index < 2 * num_blocks`
                    // 32-byte halves.
                    u64::from(unsafe { avx2::sbbf_test_and_set(base.add(index), hash as u32) })
                })
            }),
        ),
        (
            "sbbf-rs-safe insert",
            Box::new(|keys| {
                let mut sbbf = sbbf.borrow_mut();
                sbbf.clear();
                // The same XXH3 hash (`hash_u64`, seed 1), inside the peer.
                timed_sum(keys, |key| u64::from(sbbf.insert(key) == Inserted::New))
            }),
        ),
    ];
    let mut variants = variants;
    let count = variants.len();
    let mut best = vec![f64::INFINITY; count];
    let mut answers = vec![0; count];
    for round in 0..rounds {
        for turn in 0..count {
            // The lookup runs right after the real insert, which fills it.
            let i = (round + turn) % count;
            let order: &[usize] = if i == 0 {
                &[0, 1]
            } else if i == 1 {
                continue;
            } else {
                &[i][..]
            };
            for &v in order {
                LAST.set(f64::NAN);
                answers[v] = black_box((variants[v].1)(&keys));
                best[v] = best[v].min(LAST.get());
            }
        }
    }
    println!(
        "n = {items:.0e}, {num_blocks} blocks of 64 B, k = {k}; ns/key, minimum over {rounds} rounds"
    );
    for ((name, _), (ns, answer)) in variants.iter().zip(best.iter().zip(&answers)) {
        println!("{name:<34} {ns:>7.2}   (checksum {answer})");
    }
    let ratio = |a: usize, b: usize| best[a] / best[b];
    println!(
        "real insert / sbbf-rs-safe {:.2}; real insert / real lookup {:.2}",
        ratio(0, count - 1),
        ratio(0, 1)
    );
}

thread_local! {
    /// The last timing, ns per key.
    static LAST: std::cell::Cell<f64> = const { std::cell::Cell::new(f64::NAN) };
}

fn report_time(start: Instant, keys: usize) {
    LAST.set(start.elapsed().as_nanos() as f64 / keys as f64);
}

/// Times `per_key` over every key (one at a time), records ns per key,
/// returns the sum of its answers.
#[inline]
fn timed_sum(keys: &[u64], mut per_key: impl FnMut(u64) -> u64) -> u64 {
    let start = Instant::now();
    let mut sum = 0;
    for &key in keys {
        sum += per_key(black_box(key));
    }
    report_time(start, keys.len());
    sum
}
