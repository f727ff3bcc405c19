//! The portable block kernel: the reference every other kernel must match,
//! and the writes of every insert.

// Plain safe code, though its parent module allows `unsafe`.
#![forbid(unsafe_code)]

use crate::blocks::BLOCK_WORDS;

/// Whether every probe bit of the key is set in the block: bit
/// `(seed · m mod 2^32) >> 23` for each multiplier `m` of `multipliers`.
/// Branch-free: all probes hit the same cache line, so an early exit saves
/// no memory access and would cost a mispredicted branch.
#[inline]
pub(crate) fn contains(block: &[u64; BLOCK_WORDS], seed: u32, multipliers: &[u32]) -> bool {
    let mut all = 1;
    for &multiplier in multipliers {
        let bit = seed.wrapping_mul(multiplier) >> 23;
        all &= block[(bit >> 6) as usize] >> (bit & 63);
    }
    all & 1 == 1
}

/// Sets the key's probe bits in the block; whether any of them was clear.
///
/// One pass: each probe loads its word, keeps the bit it found and stores
/// the word back with the bit set. (A probe that finds the bit an earlier
/// probe of the same key set does not hide that it was clear: the earlier
/// probe saw it clear.) Branch-free, like the test.
#[inline]
pub(crate) fn insert(block: &mut [u64; BLOCK_WORDS], seed: u32, multipliers: &[u32]) -> bool {
    let mut all = 1;
    for &multiplier in multipliers {
        let bit = seed.wrapping_mul(multiplier) >> 23;
        let word = &mut block[(bit >> 6) as usize];
        all &= *word >> (bit & 63);
        *word |= 1 << (bit & 63);
    }
    all & 1 == 0
}
