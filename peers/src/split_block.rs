//! sbbf-rs-safe 0.3's split-block Bloom filter, and the split-block FPP.

use filterlab_core::{Error, ErrorKind, KeyHasher};

use crate::peer::{Inserted, PeerFilter, to_usize};
use crate::subject::{Theory, Workload};

/// Bytes per split block (sbbf-rs' `BUCKET_SIZE`): eight 32-bit words.
const BLOCK_BYTES: u64 = 32;

/// The FPP of a split-block Bloom filter (Parquet's design: each key sets one
/// bit in each of the eight 32-bit words of one 256-bit block) with `blocks`
/// blocks after `items` keys: Σ_i Pois(i; items/blocks) · (1 − (31/32)^i)^8.
pub fn split_block_fpp(blocks: u64, items: u64) -> f64 {
    if items == 0 {
        return 0.0;
    }
    let mean = items as f64 / blocks as f64;
    let last = (mean + 12.0 * mean.sqrt() + 40.0).ceil() as u64;
    let mut log_pmf = -mean;
    let mut fpp = 0.0;
    for keys_in_block in 0..=last {
        if keys_in_block > 0 {
            log_pmf += mean.ln() - (keys_in_block as f64).ln();
        }
        let word_bit_set = 1.0 - (31.0f64 / 32.0).powi(keys_in_block as i32);
        fpp += log_pmf.exp() * word_bit_set.powi(8);
    }
    fpp.min(1.0)
}

/// Blocks sbbf-rs-safe allocates for `bits_per_key` and `keys` (its
/// `Filter::new` rounding).
fn blocks_for(bits_per_key: u64, keys: u64) -> u64 {
    (bits_per_key * keys / 8).div_ceil(BLOCK_BYTES).max(1)
}

/// The smallest whole `bits_per_key` whose split-block FPP meets `fpp` at
/// `items` (sbbf-rs-safe takes bits per key, not an FPP); `None` beyond 64.
pub fn sbbf_bits_per_key(items: u64, fpp: f64) -> Option<u64> {
    (1..=64).find(|&bits| split_block_fpp(blocks_for(bits, items), items) <= fpp)
}

/// sbbf-rs-safe's split-block Bloom filter, fed XXH3 hashes of the keys
/// (`KeyHasher::new(seed).hash_u64`, the hash filterlab's filters use), so
/// a comparison is of the filters, not of hash functions.
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

    /// [`split_block_fpp`] with its block count.
    fn theory(&self, items: u64) -> Option<Theory> {
        Some(Theory::Exact(split_block_fpp(self.blocks, items)))
    }

    /// The mean over blocks of the product of each word's fill.
    fn fill_fpp(&self) -> Option<f64> {
        let bytes = self.filter.as_bytes();
        let blocks = bytes.chunks_exact(BLOCK_BYTES as usize);
        let count = blocks.len() as f64;
        let total: f64 = blocks
            .map(|block| {
                block
                    .chunks_exact(4)
                    .map(|word| {
                        let ones: u32 = word.iter().map(|byte| byte.count_ones()).sum();
                        f64::from(ones) / 32.0
                    })
                    .product::<f64>()
            })
            .sum();
        Some(total / count)
    }
}
