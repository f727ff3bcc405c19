//! The blocked layout's kernel: where a key's counters lie in its 64-byte
//! block, and the lookup, insert, remove and count over them, written once
//! for every width; [`avx512`] runs the same operations for 4-bit counters
//! with a handful of vector instructions where the CPU has AVX-512BW.
//!
//! # Where a key's counters lie
//!
//! A key's block is `reduce(hash, blocks)`, from the hash's high bits, as in
//! `BlockedBloomFilter`. Its probes in the block come from the hash's low 32
//! bits (the block seed), one multiplication each by core's
//! [`BLOCK_MULTIPLIERS`]: probe j is the top `log2(counters per block)`
//! bits of `seed · BLOCK_MULTIPLIERS[j] mod 2^32`. A key adds one to each
//! **distinct** counter its probes name: two probes on the same counter add
//! one, not two, so a key's counters are a set, which vector code builds as
//! a mask and updates with one masked add.
//!
//! Counter c of a block sits in lane `c mod LANES` of the block viewed as
//! 8-bit lanes (16-bit ones for 16-bit counters), plane `c / LANES`: for 4-bit
//! counters, counters 0..64 are the low nibbles of the block's 64 bytes and
//! 64..128 their high nibbles. One byte-lane test then reads a whole plane.

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)] // see the module's docs
mod avx512;

use filterlab_core::{BLOCK_MULTIPLIERS, reduce};

use crate::counters::{BLOCK_BYTES, Block, Width};

/// The block-local arithmetic of `BITS`-bit counters.
struct Place<const BITS: u32>;

impl<const BITS: u32> Place<BITS> {
    /// Bits per lane: a byte for 4- and 8-bit counters, the counter itself
    /// for 16-bit ones.
    const LANE_BITS: u64 = if BITS < 8 { 8 } else { BITS as u64 };
    /// Lanes per block.
    const LANES: u64 = BLOCK_BYTES as u64 * 8 / Self::LANE_BITS;
    /// How far a probe's product shifts down to leave its counter index.
    const SHIFT: u32 = 32 - Width::<BITS>::PER_BLOCK.trailing_zeros();

    /// The word of the block and the bit shift of counter `counter`.
    #[inline]
    fn locate(counter: u32) -> (usize, u32) {
        let counter = u64::from(counter);
        let bit = counter % Self::LANES * Self::LANE_BITS + counter / Self::LANES * u64::from(BITS);
        ((bit / 64) as usize, (bit % 64) as u32)
    }
}

/// The block of a key with `hash` among `num_blocks` blocks.
#[inline]
pub(crate) fn block_index(hash: u64, num_blocks: usize) -> usize {
    reduce(hash, num_blocks as u64) as usize
}

/// The seed of a key's probes inside its block: the low 32 bits of the
/// hash, which the block index barely uses.
#[inline]
fn block_seed(hash: u64) -> u32 {
    hash as u32
}

/// The counter each of the key's probes names, in probe order (repeats
/// included).
#[inline]
fn probe_counters<const BITS: u32>(hash: u64, num_hashes: u32) -> impl Iterator<Item = u32> {
    let seed = block_seed(hash);
    BLOCK_MULTIPLIERS[..num_hashes as usize]
        .iter()
        .map(move |&multiplier| seed.wrapping_mul(multiplier) >> Place::<BITS>::SHIFT)
}

/// The key's counters in its block as a mask: bit c set when a probe names
/// counter c (at most `num_hashes` bits; fewer when probes coincide).
#[inline]
fn probe_mask<const BITS: u32>(hash: u64, num_hashes: u32) -> u128 {
    probe_counters::<BITS>(hash, num_hashes).fold(0, |mask, counter| mask | 1 << counter)
}

/// The word index, shift and value of each counter in `mask`, lowest first.
#[inline]
fn counters<const BITS: u32>(
    block: &Block,
    mut mask: u128,
) -> impl Iterator<Item = (usize, u32, u64)> + '_ {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let counter = mask.trailing_zeros();
        mask &= mask - 1;
        let (word, shift) = Place::<BITS>::locate(counter);
        Some((word, shift, (block.0[word] >> shift) & Width::<BITS>::MAX))
    })
}

/// The code that runs a filter's blocked operations, chosen once when the
/// filter is made (runtime feature detection is not free per key): the
/// AVX-512 kernel where it serves the filter's width and k, else the
/// portable code.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kernel {
    #[cfg(target_arch = "x86_64")]
    avx512: Option<avx512::Avx512>,
}

impl Kernel {
    /// The fastest kernel this CPU runs for `BITS`-bit counters and
    /// `num_hashes` probes.
    pub(crate) fn detect<const BITS: u32>(num_hashes: u32) -> Self {
        Self {
            #[cfg(target_arch = "x86_64")]
            avx512: avx512::Avx512::serving::<BITS>(num_hashes),
        }
    }

    /// Whether every counter of the key is nonzero.
    #[inline]
    pub(crate) fn contains<const BITS: u32>(
        self,
        block: &Block,
        hash: u64,
        num_hashes: u32,
    ) -> bool {
        // Miri cannot run the AVX-512 lookup's byte permute (vpermb): under
        // it lookups take the portable path, and only updates the kernel.
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512.filter(|_| !cfg!(miri)) {
            return avx512.contains(block, block_seed(hash), num_hashes);
        }
        scalar::contains_probes::<BITS>(block, hash, num_hashes)
    }

    /// With `UP`, adds one to each of the key's counters that is not
    /// saturated and says whether any was zero before (the key was new);
    /// otherwise takes one from each, when none is zero, and says whether it
    /// did (if not, the block is unchanged).
    #[inline]
    pub(crate) fn step<const BITS: u32, const UP: bool>(
        self,
        block: &mut Block,
        hash: u64,
        num_hashes: u32,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            let seed = block_seed(hash);
            return if UP {
                avx512.increment(block, seed, num_hashes)
            } else {
                avx512.decrement(block, seed, num_hashes)
            };
        }
        let mask = probe_mask::<BITS>(hash, num_hashes);
        if UP {
            scalar::increment::<BITS>(block, mask)
        } else {
            scalar::decrement::<BITS>(block, mask)
        }
    }
}

/// The smallest of the key's counters.
pub(crate) fn minimum<const BITS: u32>(block: &Block, hash: u64, num_hashes: u32) -> u64 {
    counters::<BITS>(block, probe_mask::<BITS>(hash, num_hashes))
        .map(|(_, _, value)| value)
        .min()
        .unwrap_or(0)
}

/// The portable operations, given the key's mask: the reference the vector
/// kernel is tested against.
mod scalar {
    use super::{Block, Place, Width, counters, probe_counters};

    /// Whether every counter the key's probes name is nonzero, tested
    /// probe by probe without a mask (a repeat tests a counter twice) and
    /// without a branch between them: they share a cache line.
    #[inline]
    pub(super) fn contains_probes<const BITS: u32>(
        block: &Block,
        hash: u64,
        num_hashes: u32,
    ) -> bool {
        let mut all = true;
        for counter in probe_counters::<BITS>(hash, num_hashes) {
            let (word, shift) = Place::<BITS>::locate(counter);
            all &= (block.0[word] >> shift) & Width::<BITS>::MAX != 0;
        }
        all
    }

    #[inline]
    pub(super) fn contains<const BITS: u32>(block: &Block, mask: u128) -> bool {
        counters::<BITS>(block, mask).all(|(_, _, value)| value != 0)
    }

    #[inline]
    pub(super) fn increment<const BITS: u32>(block: &mut Block, mask: u128) -> bool {
        let mut new = false;
        let mut updated = *block;
        for (word, shift, value) in counters::<BITS>(block, mask) {
            new |= value == 0;
            updated.0[word] += u64::from(value != Width::<BITS>::MAX) << shift;
        }
        *block = updated;
        new
    }

    #[inline]
    pub(super) fn decrement<const BITS: u32>(block: &mut Block, mask: u128) -> bool {
        if !contains::<BITS>(block, mask) {
            return false;
        }
        let mut updated = *block;
        for (word, shift, value) in counters::<BITS>(block, mask) {
            updated.0[word] -= u64::from(value != Width::<BITS>::MAX) << shift;
        }
        *block = updated;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::BLOCK_WORDS;
    use filterlab_core::mix64;

    /// A block of random 4-bit counters, a quarter of them zero and an
    /// eighth saturated, so every case of every operation occurs.
    #[cfg(target_arch = "x86_64")]
    fn random_block(state: &mut u64) -> Block {
        Block(std::array::from_fn(|_| {
            (0..16).fold(0, |word, nibble| {
                *state = mix64(*state);
                let value = match *state % 8 {
                    0 | 1 => 0,
                    2 => 15,
                    _ => (*state >> 8) % 16,
                };
                word | value << (4 * nibble)
            })
        }))
    }

    /// The vector kernel against the scalar one: same answers and blocks,
    /// for every k it serves, over random blocks and seeds.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_matches_the_scalar_kernel() {
        let Some(avx512) = avx512::Avx512::serving::<4>(1) else {
            eprintln!("no AVX-512BW here: the vector kernel is not tested");
            return;
        };
        let mut state = 1;
        for round in 0..if cfg!(miri) { 200 } else { 20_000 } {
            let num_hashes = round % avx512::MAX_PROBES + 1;
            let block = random_block(&mut state);
            state = mix64(state);
            let hash = state;
            let mask = probe_mask::<4>(hash, num_hashes);
            let seed = hash as u32;
            // Miri cannot run the lookup's byte permute (vpermb); the
            // lookup's one memory access, the block's load, is the one the
            // increment and decrement below make.
            if !cfg!(miri) {
                let found = avx512.contains(&block, seed, num_hashes);
                assert_eq!(found, scalar::contains::<4>(&block, mask));
                assert_eq!(
                    found,
                    scalar::contains_probes::<4>(&block, hash, num_hashes)
                );
            }
            let (mut vector, mut reference) = (block, block);
            assert_eq!(
                avx512.increment(&mut vector, seed, num_hashes),
                scalar::increment::<4>(&mut reference, mask)
            );
            assert_eq!(vector, reference);
            let (mut vector, mut reference) = (block, block);
            assert_eq!(
                avx512.decrement(&mut vector, seed, num_hashes),
                scalar::decrement::<4>(&mut reference, mask)
            );
            assert_eq!(vector, reference);
        }
    }

    #[test]
    fn places_cover_the_block_once() {
        fn check<const BITS: u32>() {
            let mut seen = [0u64; BLOCK_WORDS];
            for counter in 0..Width::<BITS>::PER_BLOCK as u32 {
                let (word, shift) = Place::<BITS>::locate(counter);
                let bits = Width::<BITS>::MAX << shift;
                assert_eq!(seen[word] & bits, 0, "counter {counter} overlaps");
                seen[word] |= bits;
            }
            assert!(seen.iter().all(|&word| word == u64::MAX));
        }
        check::<4>();
        check::<8>();
        check::<16>();
        // 4-bit: the low nibbles of the 64 bytes first, then the high ones.
        assert_eq!(Place::<4>::locate(1), (0, 8));
        assert_eq!(Place::<4>::locate(64), (0, 4));
        assert_eq!(Place::<4>::locate(127), (7, 60));
    }

    #[test]
    fn probes_fill_the_block_evenly() {
        // Every counter of a 4-bit block is named by some seed's probe,
        // each about equally often.
        let mut hits = [0u32; 128];
        for i in 0..128 * 200u64 {
            let mask = probe_mask::<4>(filterlab_core::mix64(i), 1);
            hits[mask.trailing_zeros() as usize] += 1;
        }
        assert!(hits.iter().all(|&h| (120..=280).contains(&h)), "{hits:?}");
    }
}
