//! The portable block kernel: the reference every other kernel must match,
//! and the writes of every insert.

// Plain safe code, though its parent module allows `unsafe`.
#![forbid(unsafe_code)]

use super::probes::{Stripes, stripe_bit};
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

/// A striped key's bits in its block, as its eight 64-bit words: in each
/// round, one bit in each of the words that round probes (see `probes`).
#[inline]
pub(crate) fn striped_mask(seed: u32, stripes: &Stripes) -> [u64; BLOCK_WORDS] {
    let last = stripes.last_round(seed);
    core::array::from_fn(|word| {
        (0..stripes.rounds).fold(0, |mask, round| {
            let probed = if round + 1 == stripes.rounds {
                last[word]
            } else {
                1
            };
            mask | probed << stripe_bit(seed, round, word)
        })
    })
}

/// Whether every bit of the striped key is set in the block. Branch-free.
#[inline]
pub(crate) fn striped_contains(block: &[u64; BLOCK_WORDS], seed: u32, stripes: &Stripes) -> bool {
    let mask = striped_mask(seed, stripes);
    let missing = (0..BLOCK_WORDS).fold(0, |missing, w| missing | (mask[w] & !block[w]));
    missing == 0
}

/// Sets the striped key's bits in the block; whether any was clear.
#[inline]
pub(crate) fn striped_insert(block: &mut [u64; BLOCK_WORDS], seed: u32, stripes: &Stripes) -> bool {
    let mask = striped_mask(seed, stripes);
    let mut missing = 0;
    for (word, mask) in block.iter_mut().zip(mask) {
        missing |= mask & !*word;
        *word |= mask;
    }
    missing != 0
}

/// The bit of a split block's 32-bit word that a key with this block seed
/// sets, for the word's salt: the top 5 bits of `seed · salt mod 2^32`.
#[inline]
fn split_bit(seed: u32, salt: u32) -> u32 {
    seed.wrapping_mul(salt) >> 27
}

/// The key's bits in a split block, as the block's four 64-bit words: word
/// `w` of the eight 32-bit words is bits `32 (w mod 2)..` of 64-bit word
/// `w / 2` (little-endian, as the format stores them and x86 loads them).
#[inline]
fn split_mask(seed: u32, salts: &[u32; 8]) -> [u64; 4] {
    core::array::from_fn(|j| {
        let low = split_bit(seed, salts[2 * j]);
        let high = split_bit(seed, salts[2 * j + 1]);
        (1 << low) | (1 << (32 + high))
    })
}

/// Whether all eight of the key's bits are set in the split block (one in
/// each 32-bit word, chosen by `salts`). Branch-free.
#[inline]
pub(crate) fn split_contains(block: &[u64; 4], seed: u32, salts: &[u32; 8]) -> bool {
    let mask = split_mask(seed, salts);
    let missing = (0..4).fold(0, |missing, j| missing | (mask[j] & !block[j]));
    missing == 0
}

/// Sets the key's eight bits in the split block; whether any was clear.
#[inline]
pub(crate) fn split_insert(block: &mut [u64; 4], seed: u32, salts: &[u32; 8]) -> bool {
    let mask = split_mask(seed, salts);
    let mut missing = 0;
    for (word, mask) in block.iter_mut().zip(mask) {
        missing |= mask & !*word;
        *word |= mask;
    }
    missing != 0
}
