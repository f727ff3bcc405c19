//! The 4-bit blocked kernel in AVX-512 (F, BW and VBMI): a key's up to 16 probes
//! from one multiplication of 16 lanes, its counters as two 64-bit masks
//! over the block's bytes (one per nibble plane), and each operation as one
//! load, two byte-lane tests and, for an update, two masked adds or
//! subtracts and one store. Same counters and answers as the scalar code
//! (checked by the `block` module's tests); about a third of its instructions.
//!
//! The `unsafe` code here: calls into `#[target_feature]` functions, made
//! only through [`Avx512`], a value that exists only after runtime detection
//! found both features; and, in those functions, vector loads and stores of
//! a block the caller lends (64-byte aligned: `Block` is) and a load of the
//! first 16 multipliers of core's table.

use std::arch::x86_64::{
    __m256i, __m512i, _mm512_broadcastd_epi32, _mm512_castsi512_si128, _mm512_castsi512_si256,
    _mm512_cmplt_epu64_mask, _mm512_cvtepu32_epi64, _mm512_extracti64x4_epi64, _mm512_load_si512,
    _mm512_loadu_si512, _mm512_mask_add_epi8, _mm512_mask_mov_epi32, _mm512_mask_sub_epi8,
    _mm512_maskz_mov_epi64, _mm512_mullo_epi32, _mm512_or_si512, _mm512_permutexvar_epi8,
    _mm512_reduce_or_epi64, _mm512_rolv_epi64, _mm512_set1_epi8, _mm512_set1_epi32,
    _mm512_set1_epi64, _mm512_srli_epi32, _mm512_store_si512, _mm512_test_epi8_mask,
    _mm512_test_epi32_mask, _mm512_testn_epi8_mask, _mm512_xor_si512,
};

use filterlab_core::BLOCK_MULTIPLIERS;

use crate::counters::Block;

/// Probes per key the kernel computes at once: 16 lanes of 32 bits.
pub(super) const MAX_PROBES: u32 = 16;

/// Proof that the running CPU has AVX-512F, BW and VBMI: only
/// [`Avx512::serving`] makes one.
#[derive(Clone, Copy, Debug)]
pub(super) struct Avx512(());

impl Avx512 {
    /// `Some` when the kernel serves `BITS`-bit counters (4 only) with
    /// `num_hashes` probes (1 to 16) on this CPU. The feature test reads a
    /// value the standard library caches on first use.
    #[inline]
    pub(super) fn serving<const BITS: u32>(num_hashes: u32) -> Option<Self> {
        (BITS == 4
            && (1..=MAX_PROBES).contains(&num_hashes)
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi"))
        .then_some(Self(()))
    }

    /// Whether every counter of the key with this block seed is nonzero.
    #[inline]
    pub(super) fn contains(self, block: &Block, seed: u32, num_hashes: u32) -> bool {
        let Self(()) = self;
        // SAFETY: `self` proves the CPU has the features `contains` enables.
        unsafe { contains(block, seed, num_hashes) }
    }

    /// Adds one to each of the key's unsaturated counters; whether any was
    /// zero.
    #[inline]
    pub(super) fn increment(self, block: &mut Block, seed: u32, num_hashes: u32) -> bool {
        let Self(()) = self;
        // SAFETY: as in `contains`.
        unsafe { increment(block, seed, num_hashes) }
    }

    /// Takes one from each of the key's unsaturated counters when none is
    /// zero; whether it did.
    #[inline]
    pub(super) fn decrement(self, block: &mut Block, seed: u32, num_hashes: u32) -> bool {
        let Self(()) = self;
        // SAFETY: as in `contains`.
        unsafe { decrement(block, seed, num_hashes) }
    }
}

/// The key's counters as masks over the block's 64 bytes: its low-nibble
/// counters (0..64) and its high-nibble ones (64..128).
#[target_feature(enable = "avx512f,avx512bw")]
fn planes(seed: u32, num_hashes: u32) -> (u64, u64) {
    let counters = probe_counters(seed);
    // Lanes past the key's probes repeat its first: no lane masks below.
    let first = _mm512_broadcastd_epi32(_mm512_castsi512_si128(counters));
    let counters = _mm512_mask_mov_epi32(first, ((1u32 << num_hashes) - 1) as u16, counters);
    let (mut low, mut high) = plane_bits(_mm512_castsi512_si256(counters));
    if num_hashes > 8 {
        let (low_rest, high_rest) = plane_bits(_mm512_extracti64x4_epi64::<1>(counters));
        low = _mm512_or_si512(low, low_rest);
        high = _mm512_or_si512(high, high_rest);
    }
    (
        _mm512_reduce_or_epi64(low) as u64,
        _mm512_reduce_or_epi64(high) as u64,
    )
}

/// Eight counters as one-bit masks in 64-bit lanes: bit c in the low plane
/// or bit c − 64 in the high one (a rotation takes its count mod 64).
#[target_feature(enable = "avx512f,avx512bw")]
fn plane_bits(counters: __m256i) -> (__m512i, __m512i) {
    let counters = _mm512_cvtepu32_epi64(counters);
    let bits = _mm512_rolv_epi64(_mm512_set1_epi64(1), counters);
    let low = _mm512_cmplt_epu64_mask(counters, _mm512_set1_epi64(64));
    (
        _mm512_maskz_mov_epi64(low, bits),
        _mm512_maskz_mov_epi64(!low, bits),
    )
}

/// The block in a register.
#[target_feature(enable = "avx512f,avx512bw")]
fn load(block: &Block) -> __m512i {
    // SAFETY: a `Block` is 64 bytes, aligned to 64.
    unsafe { _mm512_load_si512(block.0.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f,avx512bw")]
fn store(block: &mut Block, value: __m512i) {
    // SAFETY: as in `load`, and the block is borrowed mutably.
    unsafe { _mm512_store_si512(block.0.as_mut_ptr().cast(), value) }
}

/// The low and high nibble planes of `value` that are nonzero.
#[target_feature(enable = "avx512f,avx512bw")]
fn nonzero(value: __m512i) -> (u64, u64) {
    (
        _mm512_test_epi8_mask(value, _mm512_set1_epi8(0x0f)),
        _mm512_test_epi8_mask(value, _mm512_set1_epi8(0xf0_u8 as i8)),
    )
}

/// The low and high nibble planes of `value` that are saturated (15).
#[target_feature(enable = "avx512f,avx512bw")]
fn saturated(value: __m512i) -> (u64, u64) {
    let inverted = _mm512_xor_si512(value, _mm512_set1_epi8(-1));
    (
        _mm512_testn_epi8_mask(inverted, _mm512_set1_epi8(0x0f)),
        _mm512_testn_epi8_mask(inverted, _mm512_set1_epi8(0xf0_u8 as i8)),
    )
}

/// Whether a counter of the key is zero.
#[target_feature(enable = "avx512f,avx512bw")]
fn any_zero((low, high): (u64, u64), value: __m512i) -> bool {
    let (nonzero_low, nonzero_high) = nonzero(value);
    (low & !nonzero_low) | (high & !nonzero_high) != 0
}

/// The counters (0..128) named by the key's probes, one per 32-bit lane:
/// the top 7 bits of each product (the scalar code's `SHIFT` for 4 bits).
#[target_feature(enable = "avx512f,avx512bw")]
fn probe_counters(seed: u32) -> __m512i {
    // SAFETY: core's table holds MAX_HASHES = 64 ≥ 16 multipliers, so the
    // 64 bytes read are inside it; the load is unaligned.
    let multipliers = unsafe { _mm512_loadu_si512(BLOCK_MULTIPLIERS.as_ptr().cast()) };
    _mm512_srli_epi32::<25>(_mm512_mullo_epi32(
        _mm512_set1_epi32(seed as i32),
        multipliers,
    ))
}

/// Looks up without building the key's masks: one byte permute gathers
/// each probe's byte (counter c's byte is c mod 64) into the low byte of
/// its lane, and one byte test reads its nibble (the high one for c ≥ 64).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn contains(block: &Block, seed: u32, num_hashes: u32) -> bool {
    let counters = probe_counters(seed);
    let gathered = _mm512_permutexvar_epi8(counters, load(block));
    let high = _mm512_test_epi32_mask(counters, _mm512_set1_epi32(64));
    let nibble = _mm512_mask_mov_epi32(_mm512_set1_epi32(0x0f), high, _mm512_set1_epi32(0xf0));
    let nonzero = _mm512_test_epi8_mask(gathered, nibble);
    // Bit 4i of the byte mask is lane i's low byte.
    let lanes = 0x1111_1111_1111_1111_u64 >> (64 - 4 * num_hashes);
    nonzero & lanes == lanes
}

#[target_feature(enable = "avx512f,avx512bw")]
fn increment(block: &mut Block, seed: u32, num_hashes: u32) -> bool {
    let (low, high) = planes(seed, num_hashes);
    let value = load(block);
    let new = any_zero((low, high), value);
    let (full_low, full_high) = saturated(value);
    // An unsaturated nibble plus one stays inside its nibble: no carries.
    let value = _mm512_mask_add_epi8(value, low & !full_low, value, _mm512_set1_epi8(0x01));
    let value = _mm512_mask_add_epi8(value, high & !full_high, value, _mm512_set1_epi8(0x10));
    store(block, value);
    new
}

#[target_feature(enable = "avx512f,avx512bw")]
fn decrement(block: &mut Block, seed: u32, num_hashes: u32) -> bool {
    let (low, high) = planes(seed, num_hashes);
    let value = load(block);
    if any_zero((low, high), value) {
        return false;
    }
    let (full_low, full_high) = saturated(value);
    // Every nibble taken from is at least one: no borrows.
    let value = _mm512_mask_sub_epi8(value, low & !full_low, value, _mm512_set1_epi8(0x01));
    let value = _mm512_mask_sub_epi8(value, high & !full_high, value, _mm512_set1_epi8(0x10));
    store(block, value);
    true
}
