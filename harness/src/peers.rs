//! The peer crates, each wrapped as a [`PeerFilter`] in its fastest honest
//! configuration, with the formula for its FPP where one is known.
//!
//! | peer | hashing here | theory |
//! |---|---|---|
//! | fastbloom 0.17 | foldhash, seeded (its default is SipHash-1-3) | exact Bloom formula with its m and k |
//! | bloomfilter 3 | its seeded SipHash-1-3 pair | exact Bloom formula with its m and k |
//! | sbbf-rs-safe 0.3 | XXH3 of the key (it takes hashes) | split-block formula |
//! | cuckoofilter 0.5 | its SipHash-1-3 (std `DefaultHasher`) | approximate: 1 − (1 − 2^−f)^(2·b·load) |
//! | growable-bloom-filter 2.1 | its stable SipHash | none (FPP depends on its growth history) |
//! | xorf BinaryFuse8 | its own mixer over the `u64` key | exact: 2^−8 |
//!
//! xorf is built without its `uniform-random` feature, which fills unused
//! fingerprint slots from `thread_rng`: with it, runs with the same seed
//! would differ. The average FPP is 2^−8 either way. cuckoofilter evicts
//! with `thread_rng` and cannot be made to repeat; its rows vary slightly
//! between runs.

use filterlab_core::KeyHasher;
use filterlab_core::theory::{bloom_fpp_exact, bloom_fpp_given_fill};

use crate::subject::{PeerFilter, Theory, Workload};

/// fastbloom 0.17's standard Bloom filter with foldhash, seeded so runs repeat.
pub struct FastBloom(fastbloom::BloomFilter<foldhash::fast::FixedState>);

impl FastBloom {
    /// Sized with fastbloom's own formula for `workload`.
    pub fn new(workload: &Workload) -> Self {
        Self(
            fastbloom::BloomFilter::with_false_pos(workload.fpp)
                .hasher(foldhash::fast::FixedState::with_seed(workload.seed))
                .expected_items(to_usize(workload.items)),
        )
    }
}

impl PeerFilter for FastBloom {
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert(&key);
        true
    }

    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }

    fn memory_usage(&self) -> usize {
        self.0.as_slice().len() * 8
    }

    fn theory(&self, load: u64) -> Option<Theory> {
        bloom_fpp_exact(self.0.num_bits() as u64, self.0.num_hashes(), load)
            .ok()
            .map(Theory::exact)
    }

    fn fill_fpp(&self) -> Option<f64> {
        let set: u64 = self
            .0
            .as_slice()
            .iter()
            .map(|word| u64::from(word.count_ones()))
            .sum();
        Some(bloom_fpp_given_fill(
            set,
            self.0.num_bits() as u64,
            self.0.num_hashes(),
        ))
    }
}

/// bloomfilter 3's `Bloom`, with a seed derived from the workload's.
pub struct BloomFilterCrate(bloomfilter::Bloom<u64>);

impl BloomFilterCrate {
    /// Sized with bloomfilter's own formula for `workload`.
    ///
    /// # Errors
    ///
    /// The crate's message when it refuses the parameters.
    pub fn new(workload: &Workload) -> Result<Self, String> {
        let mut seed = [0u8; 32];
        for (index, chunk) in seed.chunks_mut(8).enumerate() {
            let word = filterlab_core::mix64(workload.seed ^ index as u64);
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bloomfilter::Bloom::new_for_fp_rate_with_seed(to_usize(workload.items), workload.fpp, &seed)
            .map(Self)
            .map_err(str::to_owned)
    }

    fn bits(&self) -> &[u8] {
        // `as_slice` is a fixed header followed by the bit array.
        let bytes = self.0.as_slice();
        let array_bytes = to_usize(self.0.len() / 8);
        &bytes[bytes.len() - array_bytes..]
    }
}

impl PeerFilter for BloomFilterCrate {
    fn insert(&mut self, key: u64) -> bool {
        self.0.set(&key);
        true
    }

    fn contains(&self, key: u64) -> bool {
        self.0.check(&key)
    }

    fn memory_usage(&self) -> usize {
        self.0.as_slice().len()
    }

    fn theory(&self, load: u64) -> Option<Theory> {
        bloom_fpp_exact(self.0.len(), self.0.number_of_hash_functions(), load)
            .ok()
            .map(Theory::exact)
    }

    fn fill_fpp(&self) -> Option<f64> {
        let set: u64 = self
            .bits()
            .iter()
            .map(|byte| u64::from(byte.count_ones()))
            .sum();
        Some(bloom_fpp_given_fill(
            set,
            self.0.len(),
            self.0.number_of_hash_functions(),
        ))
    }
}

/// Bytes per split block (sbbf-rs' `BUCKET_SIZE`): eight 32-bit words.
const SBBF_BLOCK_BYTES: u64 = 32;

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
fn sbbf_blocks(bits_per_key: u64, keys: u64) -> u64 {
    (bits_per_key * keys / 8).div_ceil(SBBF_BLOCK_BYTES).max(1)
}

/// The smallest whole `bits_per_key` whose split-block FPP meets `fpp` at
/// `items` (sbbf-rs-safe takes bits per key, not an FPP); `None` beyond 64.
pub fn sbbf_bits_per_key(items: u64, fpp: f64) -> Option<u64> {
    (1..=64).find(|&bits| split_block_fpp(sbbf_blocks(bits, items), items) <= fpp)
}

/// sbbf-rs-safe's split-block Bloom filter, fed XXH3 hashes of the keys.
pub struct SplitBlock {
    filter: sbbf_rs_safe::Filter,
    hasher: KeyHasher,
    blocks: u64,
}

impl SplitBlock {
    /// Sized by the split-block formula for `workload`.
    ///
    /// # Errors
    ///
    /// When no size up to 64 bits per key meets the target.
    pub fn new(workload: &Workload) -> Result<Self, String> {
        let bits = sbbf_bits_per_key(workload.items, workload.fpp).ok_or_else(|| {
            format!(
                "no size up to 64 bits per key meets FPP {:e} (8 probes per block)",
                workload.fpp
            )
        })?;
        Ok(Self {
            filter: sbbf_rs_safe::Filter::new(to_usize(bits), to_usize(workload.items)),
            hasher: KeyHasher::new(workload.seed),
            blocks: sbbf_blocks(bits, workload.items),
        })
    }
}

impl PeerFilter for SplitBlock {
    fn insert(&mut self, key: u64) -> bool {
        self.filter.insert_hash(self.hasher.hash_u64(key));
        true
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains_hash(self.hasher.hash_u64(key))
    }

    fn memory_usage(&self) -> usize {
        self.filter.as_bytes().len()
    }

    fn theory(&self, load: u64) -> Option<Theory> {
        Some(Theory::exact(split_block_fpp(self.blocks, load)))
    }

    /// The mean over blocks of the product of each word's fill.
    fn fill_fpp(&self) -> Option<f64> {
        let bytes = self.filter.as_bytes();
        let blocks = bytes.chunks_exact(SBBF_BLOCK_BYTES as usize);
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

/// Slots per cuckoofilter bucket and bits per fingerprint (its constants).
const CUCKOO_SLOTS: u64 = 4;
const CUCKOO_FINGERPRINT_VALUES: f64 = 255.0;

/// cuckoofilter 0.5 (8-bit fingerprints, 4-slot buckets, SipHash-1-3).
///
/// When full it evicts a random *other* item and returns an error: the
/// refused key is counted as refused, and the evicted one shows up as a false
/// negative. Its eviction uses `rand::thread_rng`, so its rows are not
/// reproducible run to run.
pub struct Cuckoo {
    filter: cuckoofilter::CuckooFilter<std::collections::hash_map::DefaultHasher>,
    slots: u64,
}

impl Cuckoo {
    /// `with_capacity(items)`: the crate rounds slots up to a power of two.
    pub fn new(workload: &Workload) -> Self {
        let items = to_usize(workload.items);
        Self {
            filter: cuckoofilter::CuckooFilter::with_capacity(items),
            slots: items.next_power_of_two().max(CUCKOO_SLOTS as usize) as u64,
        }
    }
}

impl PeerFilter for Cuckoo {
    const REMOVABLE: bool = true;

    fn insert(&mut self, key: u64) -> bool {
        self.filter.add(&key).is_ok()
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key)
    }

    fn remove(&mut self, key: u64) -> bool {
        self.filter.delete(&key)
    }

    fn memory_usage(&self) -> usize {
        self.filter.memory_usage()
    }

    /// A query compares its fingerprint with the 2·b slots of two buckets,
    /// `load` of them occupied: 1 − (1 − 1/255)^(2·b·load) (Fan et al. 2014).
    fn theory(&self, load: u64) -> Option<Theory> {
        let occupancy = (load as f64 / self.slots as f64).min(1.0);
        let compared = 2.0 * CUCKOO_SLOTS as f64 * occupancy;
        Some(Theory::approximate(
            1.0 - (1.0 - 1.0 / CUCKOO_FINGERPRINT_VALUES).powf(compared),
        ))
    }
}

/// growable-bloom-filter 2.1 with its defaults (growth 2, tightening 0.85).
pub struct Growable {
    filter: growable_bloom_filter::GrowableBloom,
    fpp: f64,
    initial: usize,
}

/// growable-bloom-filter's default tightening ratio (not exported by the crate).
const GROWABLE_TIGHTENING: f64 = 0.851_562_5;

impl Growable {
    /// `GrowableBloom::new(fpp, items)`.
    pub fn new(workload: &Workload) -> Self {
        let initial = to_usize(workload.items);
        Self {
            filter: growable_bloom_filter::GrowableBloom::new(workload.fpp, initial),
            fpp: workload.fpp,
            initial,
        }
    }
}

impl PeerFilter for Growable {
    fn insert(&mut self, key: u64) -> bool {
        self.filter.insert(key);
        true
    }

    fn contains(&self, key: u64) -> bool {
        self.filter.contains(key)
    }

    /// The crate has no accessor; this replays its sizing: layer i holds
    /// initial·2^i items at fpp·r^i, with ⌈log2(1/p_i)⌉ slices of
    /// ⌈cap_i / ln 2⌉ bits each.
    fn memory_usage(&self) -> usize {
        let mut remaining = self.filter.capacity();
        let mut bytes = 0;
        let mut layer: i32 = 0;
        while remaining > 0 {
            let capacity = self.initial << layer;
            let fpp = self.fpp * GROWABLE_TIGHTENING.powi(layer);
            let slices = (1.0 / fpp).log2().ceil() as usize;
            let slice_bits = (capacity as f64 / std::f64::consts::LN_2).ceil() as usize;
            bytes += (slices * slice_bits).div_ceil(8);
            remaining = remaining.saturating_sub(capacity);
            layer += 1;
        }
        bytes
    }
}

/// xorf's BinaryFuse8: built once from the whole key set (static).
pub struct BinaryFuse8(xorf::BinaryFuse8);

impl BinaryFuse8 {
    /// Builds the filter from `keys` (distinct).
    ///
    /// # Errors
    ///
    /// The crate's message when construction fails.
    pub fn build(keys: &[u64]) -> Result<Self, String> {
        xorf::BinaryFuse8::try_from(keys)
            .map(Self)
            .map_err(str::to_owned)
    }
}

impl PeerFilter for BinaryFuse8 {
    /// A static filter takes no inserts after it is built.
    fn insert(&mut self, _key: u64) -> bool {
        false
    }

    fn contains(&self, key: u64) -> bool {
        xorf::Filter::contains(&self.0, &key)
    }

    fn memory_usage(&self) -> usize {
        self.0.fingerprints.len() + std::mem::size_of::<xorf::BinaryFuse8>()
    }

    /// An 8-bit fingerprint matches a random query with probability 2^−8.
    fn theory(&self, _load: u64) -> Option<Theory> {
        Some(Theory::exact(1.0 / 256.0))
    }
}

/// Converts an item count to `usize`, saturating (counts here fit easily).
fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_block_formula_is_sane() {
        // Parquet's table: 10 bits per key gives about 1.2% (measured 1.27%
        // for sbbf in the design notes).
        let fpp = split_block_fpp(sbbf_blocks(10, 1_000_000), 1_000_000);
        assert!((0.009..0.014).contains(&fpp), "{fpp}");
        assert_eq!(split_block_fpp(10, 0), 0.0);
        assert!(split_block_fpp(1, 10_000) > 0.99);
        let bits = sbbf_bits_per_key(1_000_000, 0.01).unwrap();
        assert!((10..=12).contains(&bits), "{bits}");
    }

    #[test]
    fn peers_hold_their_keys() {
        let workload = Workload {
            items: 2000,
            fpp: 0.01,
            seed: 9,
        };
        let keys: Vec<u64> = (0..2000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let mut fast = FastBloom::new(&workload);
        let mut crate_bloom = BloomFilterCrate::new(&workload).unwrap();
        let mut split = SplitBlock::new(&workload).unwrap();
        let mut growable = Growable::new(&workload);
        for &key in &keys {
            fast.insert(key);
            crate_bloom.insert(key);
            split.insert(key);
            growable.insert(key);
        }
        assert!(keys.iter().all(|&k| fast.contains(k)));
        assert!(keys.iter().all(|&k| crate_bloom.contains(k)));
        assert!(keys.iter().all(|&k| split.contains(k)));
        assert!(keys.iter().all(|&k| growable.contains(k)));
        assert!(growable.memory_usage() > 2000);
        let fuse = BinaryFuse8::build(&keys).unwrap();
        assert!(keys.iter().all(|&k| fuse.contains(k)));
        let hash = |seed| {
            std::hash::BuildHasher::hash_one(&foldhash::fast::FixedState::with_seed(seed), 7u64)
        };
        assert_eq!(
            hash(5),
            hash(5),
            "the seeded foldhash state repeats across runs"
        );
        for fill in [fast.fill_fpp(), crate_bloom.fill_fpp(), split.fill_fpp()] {
            let fill = fill.unwrap();
            assert!(fill > 0.001 && fill < 0.05, "{fill}");
        }
    }
}
