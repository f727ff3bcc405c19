//! The blocked Bloom filter: each key sets k bits inside one 512-bit block,
//! so an operation touches one cache line.

use std::sync::{Mutex, PoisonError};

use filterlab_core::sizing::{HashChoice, SizeSearch, Target};
use filterlab_core::theory::{
    BlockFppTable, blocked_bloom_classic_best_hashes, blocked_bloom_fpp, blocked_bloom_fpp_classic,
    blocked_bloom_fpp_with, bloom_estimate_items, bloom_fpp_given_block_fills,
};
use filterlab_core::{Error, KeyHasher};

use crate::blocks::{BLOCK_WORDS, Block, BlockStorage};
use crate::common::{Array, builder_entry_points};
use crate::kernel::{Kernel, Select};
use crate::layout::{
    Blocks, Layout, Lookups, Shape, Words, array_of, block_builder, block_filter, insert_batch,
    whole_blocks,
};
use crate::sizing::BloomSizing;
use crate::words::count_ones;

/// Bits per block: one 64-byte cache line.
pub const BLOCK_BITS: u32 = 512;

/// Everything that decides which bits a key sets: two filters with equal
/// configurations can be merged, and a file is only accepted by
/// [`Persist::read_from_expecting`](crate::Persist::read_from_expecting) when its configuration equals the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockedBloomConfig {
    /// 512-bit blocks in the array.
    pub num_blocks: u64,
    /// Probes per key, all inside the key's block.
    pub num_hashes: u32,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

/// A blocked Bloom filter: each key sets k bits inside one 512-bit block, a
/// cache line, so a lookup costs one memory access instead of k.
///
/// Confining a key to a block costs accuracy: blocks hold unequal numbers of
/// keys, and the fuller ones answer yes more often. Sizing accounts for it
/// with the blocked filter's exact FPP (Putze, Sanders and Singler's block
/// load mixture with the exact per-block FPP), so the FPP you configure is
/// the FPP you get: at 1% that takes about 4% more bits than a standard
/// Bloom filter. Nothing inserted is ever reported absent.
///
/// Lookups use the fastest [`Kernel`] the CPU supports (AVX2 tests eight
/// probes at once); batched operations
/// ([`contains_many`](Self::contains_many), [`extend`](Self::extend))
/// prefetch the blocks of the keys ahead, overlapping their memory accesses.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::BlockedBloomFilter;
///
/// let mut seen = BlockedBloomFilter::with_fpp(0.01).expected_items(10_000).seed(7).build()?;
/// assert!(seen.insert("order-1"));      // new
/// assert!(!seen.insert("order-1"));     // already present
///
/// // No false negatives; about 1% false positives at capacity.
/// seen.extend((0..10_000u64).map(|i| i * 2));
/// assert!(seen.contains_many((0..10_000u64).map(|i| i * 2)).iter().all(|&hit| hit));
/// let false_positives = (0..10_000u64).filter(|i| seen.contains(&(i * 2 + 1))).count();
/// assert!(false_positives < 150);
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone)]
pub struct BlockedBloomFilter(Blocks<Wide>);

block_builder! {
    /// Configures a [`BlockedBloomFilter`]; made by
    /// [`BlockedBloomFilter::with_fpp`] or [`BlockedBloomFilter::with_bits`].
    BlockedBloomBuilder => BlockedBloomFilter, Wide, BlockedBloomConfig,
        setters: expected_items, hashes, seed, hasher, max_memory
}

/// Per-block FPP tables for 512-bit blocks, one per k, shared by every
/// sizing in the process: a table depends on k alone, a sizing search
/// evaluates dozens of sizes for the same few k, and building them is most
/// of a sizing's cost.
static BLOCK_TABLES: Mutex<Vec<Option<BlockFppTable>>> = Mutex::new(Vec::new());

/// The exact blocked FPP at `items` for any (bits, k), from the shared tables.
struct BlockedFpp {
    items: u64,
}

impl BlockedFpp {
    fn new(items: u64) -> Self {
        Self { items }
    }

    fn fpp(&self, bits: u64, num_hashes: u32) -> Result<f64, Error> {
        // A panic cannot leave a table half-updated in a way that matters:
        // `fpp_at` extends it by whole loads; use it even if poisoned.
        let mut tables = BLOCK_TABLES.lock().unwrap_or_else(PoisonError::into_inner);
        if tables.len() <= num_hashes as usize {
            tables.resize(num_hashes as usize + 1, None);
        }
        let slot = &mut tables[num_hashes as usize];
        if slot.is_none() {
            *slot = Some(BlockFppTable::new(BLOCK_BITS, num_hashes)?);
        }
        let table = slot.as_mut().expect("the table was just made");
        Ok(blocked_bloom_fpp_with(
            table,
            bits / u64::from(BLOCK_BITS),
            self.items,
        ))
    }
}

impl BlockedBloomBuilder {
    fn sizing_for_fpp(&self, fpp: f64) -> Result<BloomSizing, Error> {
        let items = self.base.items_for_fpp(fpp)?;
        let blocked = BlockedFpp::new(items);
        let fpp_of = |bits: u64, k: u32| blocked.fpp(bits, k);
        let near = |bits: u64| approximate_best_hashes(bits, items);
        let block_bits = u64::from(BLOCK_BITS);
        let problem = SizeSearch::new(items, fpp, block_bits, self.base.max_bits(), &fpp_of);
        let problem = problem.starting_hashes(&near);
        let (bits, k, achieved) = problem.smallest()?;
        let approximate = near(bits);
        let chosen = (k, achieved, HashChoice::Blocked { approximate });
        let (k, achieved, choice) = self.base.explicit_or(chosen, |k| blocked.fpp(bits, k))?;
        Ok(ARRAY.record(items, Target::Fpp(fpp), (bits, k, choice), achieved))
    }

    fn sizing_for_bits(&self, requested: u64) -> Result<BloomSizing, Error> {
        let max_memory = self.base.max_memory;
        let bits = whole_blocks(requested, BLOCK_BITS, max_memory, "blocked Bloom filter")?;
        let block_bits = u64::from(BLOCK_BITS);
        let (k, choice, items) = self.base.hashes_for_size(bits, "with_bits", |items| {
            let blocked = BlockedFpp::new(items);
            let fpp_of = |bits: u64, k: u32| blocked.fpp(bits, k);
            let near = |bits: u64| approximate_best_hashes(bits, items);
            let problem = SizeSearch::new(items, 0.5, block_bits, self.base.max_bits(), &fpp_of)
                .starting_hashes(&near);
            let approximate = near(bits);
            Ok((
                problem.best_hashes(bits)?.0,
                HashChoice::Blocked { approximate },
            ))
        })?;
        let achieved = blocked_bloom_fpp(bits / block_bits, BLOCK_BITS, k, items)?;
        Ok(ARRAY.record(items, Target::Size(requested), (bits, k, choice), achieved))
    }
}

/// What the sizing records of a blocked filter say of its array.
const ARRAY: Array = array_of::<Wide>(classic_fpp);

/// Putze, Sanders and Singler's approximation for an array of `bits` bits.
fn classic_fpp(bits: u64, num_hashes: u32, items: u64) -> f64 {
    blocked_bloom_fpp_classic(bits / u64::from(BLOCK_BITS), BLOCK_BITS, num_hashes, items)
}

/// The best k under Putze et al.'s approximation for an array of `bits`
/// bits, where the exact search starts.
fn approximate_best_hashes(bits: u64, items: u64) -> u32 {
    blocked_bloom_classic_best_hashes(bits / u64::from(BLOCK_BITS), BLOCK_BITS, items)
}

impl BlockedBloomFilter {
    builder_entry_points!(
        BlockedBloomBuilder,
        with_bits: ", rounded up to whole 512-bit blocks",
        params: "the fewest blocks and the k"
    );

    /// Putze, Sanders and Singler's approximation at `items` (a Poisson load
    /// with independent bits in the block); slightly optimistic, see
    /// [`theoretical_fpp`](crate::Membership::theoretical_fpp).
    pub fn classic_fpp(&self, items: u64) -> f64 {
        let Shape {
            num_blocks,
            num_hashes,
            ..
        } = self.0.shape;
        blocked_bloom_fpp_classic(num_blocks, BLOCK_BITS, num_hashes, items)
    }
}

/// The 512-bit layout: k probes chosen by the key's block seed, tested with
/// [`Select`]'s kernel; the theory of Putze, Sanders and Singler with each
/// load's exact Bloom FPP.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wide;

impl Layout for Wide {
    type Block = Block;
    type Kernel = Select;
    const FIXED_HASHES: Option<u32> = None;

    fn config(shape: Shape) -> BlockedBloomConfig {
        BlockedBloomConfig {
            num_blocks: shape.num_blocks,
            num_hashes: shape.num_hashes,
            hasher: shape.hasher,
        }
    }

    fn select(kernel: Option<Kernel>, num_hashes: u32) -> Result<Select, Error> {
        kernel.map_or(Ok(Select::detect(num_hashes)), |kernel| {
            kernel.select(num_hashes)
        })
    }

    fn kernel(kernel: Select) -> Kernel {
        kernel.kernel()
    }

    #[inline]
    fn insert(kernel: &Select, block: &mut Words<Self>, seed: u32, num_hashes: u32) -> bool {
        kernel.insert(block, seed, num_hashes)
    }

    #[inline]
    fn contains(kernel: &Select, block: &Words<Self>, seed: u32, num_hashes: u32) -> bool {
        kernel.contains(block, seed, num_hashes)
    }

    fn insert_batch(
        kernel: &Select,
        blocks: &mut BlockStorage<Block>,
        num_blocks: u64,
        hashes: &[u64],
        num_hashes: u32,
    ) -> usize {
        insert_batch(blocks, num_blocks, hashes, |block, seed| {
            kernel.insert(block, seed, num_hashes)
        })
    }

    fn contains_batch(kernel: &Select, lookups: Lookups<'_, Block>, num_hashes: u32) {
        kernel.run_batch(num_hashes, lookups);
    }

    /// The mean over blocks of (X_b/512)^k for the X_b bits set in each
    /// block now.
    fn fpp_given_fill(words: &[u64], num_hashes: u32) -> f64 {
        let fills = words.chunks_exact(BLOCK_WORDS).map(count_ones);
        bloom_fpp_given_block_fills(fills, u64::from(BLOCK_BITS), num_hashes)
    }

    /// The block load Binomial(n, 1/b) mixed with each load's exact Bloom
    /// FPP (Putze, Sanders and Singler; Bose et al.).
    fn theoretical_fpp(num_blocks: u64, num_hashes: u32, items: u64) -> Option<f64> {
        blocked_bloom_fpp(num_blocks, BLOCK_BITS, num_hashes, items).ok()
    }

    /// The Swamidass–Baldi estimate for one 512-bit block.
    fn estimate_items(set: u64, num_hashes: u32) -> f64 {
        bloom_estimate_items(set, u64::from(BLOCK_BITS), num_hashes)
    }
}

block_filter!(BlockedBloomFilter: Wide, BlockedBloomConfig, BlockedBloom, 512);
