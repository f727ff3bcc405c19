//! sbbf-rs-safe 0.3's split-block Bloom filter, judged by core's exact
//! split-block FPP (the formula `SplitBlockBloomFilter` is sized by).

use filterlab_core::theory::{split_block_bloom_fpp, split_block_fpp_given_word_fills};
use filterlab_core::{Error, ErrorKind, KeyHasher};

use crate::peer::{Inserted, PeerFilter, to_usize};
use crate::subject::{Theory, Workload};

/// Bytes per split block (sbbf-rs' `BUCKET_SIZE`): eight 32-bit words.
const BLOCK_BYTES: u64 = 32;

/// Blocks sbbf-rs-safe allocates for `bits_per_key` and `keys` (its
/// `Filter::new` rounding).
fn blocks_for(bits_per_key: u64, keys: u64) -> u64 {
    (bits_per_key * keys / 8).div_ceil(BLOCK_BYTES).max(1)
}

/// The smallest whole `bits_per_key` whose split-block FPP meets `fpp` at
/// `items` (sbbf-rs-safe takes bits per key, not an FPP); `None` beyond 64.
pub fn sbbf_bits_per_key(items: u64, fpp: f64) -> Option<u64> {
    (1..=64).find(|&bits| split_block_bloom_fpp(blocks_for(bits, items), items) <= fpp)
}

/// sbbf-rs-safe's split-block Bloom filter, fed XXH3 hashes of the keys
/// (`KeyHasher::new(seed).hash_u64`: the hash filterlab's filters gave a
/// `u64` key before hasher id 3, whose folded multiply costs about 11
/// instructions less per key).
pub struct SplitBlock {
    filter: sbbf_rs_safe::Filter,
    hasher: KeyHasher,
    blocks: u64,
}

impl SplitBlock {
    /// Sized by the split-block formula for `workload`: the fewest whole
    /// bits per key that meet its FPP.
    ///
    /// # Errors
    ///
    /// When no size up to 64 bits per key meets the target.
    pub fn new(workload: &Workload) -> Result<Self, Error> {
        let bits = sbbf_bits_per_key(workload.items, workload.fpp).ok_or_else(|| {
            Error::new(
                ErrorKind::TooLarge,
                format!(
                    "sbbf-rs-safe: no size up to 64 bits per key meets FPP {:e} (8 probes per block)",
                    workload.fpp
                ),
            )
        })?;
        Ok(Self::with_bits_per_key(bits, workload.items, workload.seed))
    }

    /// `bits_per_key` bits per key for `items` keys.
    pub fn with_bits_per_key(bits_per_key: u64, items: u64, seed: u64) -> Self {
        Self {
            filter: sbbf_rs_safe::Filter::new(to_usize(bits_per_key), to_usize(items)),
            hasher: KeyHasher::new(seed),
            blocks: blocks_for(bits_per_key, items),
        }
    }
}

impl PeerFilter for SplitBlock {
    fn insert(&mut self, key: u64) -> Inserted {
        // sbbf answers whether the key's bits were all set already.
        Inserted::unless_present(self.filter.insert_hash(self.hasher.hash_u64(key)))
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains_hash(self.hasher.hash_u64(key))
    }

    fn clear(&mut self) -> bool {
        self.filter.reset();
        true
    }

    fn memory_usage(&self) -> usize {
        self.filter.as_bytes().len()
    }

    /// Core's exact split-block FPP with its block count.
    fn theory(&self, items: u64) -> Option<Theory> {
        Some(Theory::Exact(split_block_bloom_fpp(self.blocks, items)))
    }

    /// The mean over blocks of the product of each word's fill (core's
    /// per-instance split-block FPP).
    fn fill_fpp(&self) -> Option<f64> {
        let blocks = self.filter.as_bytes().chunks_exact(BLOCK_BYTES as usize);
        Some(split_block_fpp_given_word_fills(blocks.map(|block| {
            core::array::from_fn(|w| {
                block[4 * w..4 * w + 4]
                    .iter()
                    .map(|byte| byte.count_ones())
                    .sum()
            })
        })))
    }
}
