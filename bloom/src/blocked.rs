//! The blocked Bloom filter: each key sets k bits inside one 512-bit block,
//! so an operation touches one cache line.

use std::io::{Read, Write};
use std::sync::{Mutex, PoisonError};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::sizing::{
    BuilderBase, HashChoice, SizeSearch, SizedFor, Target, hashes_from_header,
};
use filterlab_core::theory::{
    BlockFppTable, blocked_bloom_classic_best_hashes, blocked_bloom_fpp, blocked_bloom_fpp_classic,
    blocked_bloom_fpp_with, bloom_estimate_items, bloom_fpp_given_block_fills,
};
use filterlab_core::{Error, Filter, FilterKind, Key, KeyHasher, Persist};

use crate::blocks::{BLOCK_WORDS, BlockStorage};
use crate::common::{Array, builder_entry_points, builder_methods, merge_by_words, sized_for};
use crate::kernel::{BlockBatch, Kernel, Select};
use crate::layout::{
    address_blocks, block_filter_shared, block_filter_state, block_index, block_seed,
    blocks_from_header, contains_batch, insert_batch, read_blocks, whole_blocks,
};
use crate::sizing::BloomSizing;
use crate::words::count_ones;

/// Bits per block: one 64-byte cache line.
pub const BLOCK_BITS: u32 = 512;

/// Everything that decides which bits a key sets: two filters with equal
/// configurations can be merged, and a file is only accepted by
/// [`Persist::read_from_expecting`] when its configuration equals the caller's.
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
/// ([`contains_many`](Filter::contains_many), [`extend`](Self::extend))
/// prefetch the blocks of the keys ahead, overlapping their memory accesses.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{BlockedBloomFilter, Filter};
///
/// let mut seen = BlockedBloomFilter::with_fpp(0.01).expected_items(10_000).seed(7).build()?;
/// assert!(seen.insert("order-1"));      // new
/// assert!(!seen.insert("order-1"));     // already present
/// assert!(seen.contains("order-1"));
///
/// // No false negatives; about 1% false positives at capacity.
/// seen.extend((0..10_000u64).map(|i| i * 2));
/// assert!(seen.contains_many((0..10_000u64).map(|i| i * 2)).iter().all(|&hit| hit));
/// let false_positives = (0..10_000u64).filter(|i| seen.contains(&(i * 2 + 1))).count();
/// assert!(false_positives < 150);
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone)]
pub struct BlockedBloomFilter {
    blocks: BlockStorage,
    /// Blocks, probes and hasher: kept whole, as the builder and the
    /// format make it, so that `config()` and merges compare one value.
    config: BlockedBloomConfig,
    /// Inserts that returned `true`: at most the bits set, since each set a
    /// clear bit (the invariant readers and merges keep, so `+= 1` cannot
    /// overflow).
    len: u64,
    sized_for: SizedFor,
    kernel: Select,
}

/// Configures a [`BlockedBloomFilter`]; made by
/// [`BlockedBloomFilter::with_fpp`] or [`BlockedBloomFilter::with_bits`].
#[derive(Clone, Debug)]
#[must_use]
pub struct BlockedBloomBuilder {
    base: BuilderBase,
    kernel: Option<Kernel>,
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
    builder_methods!();

    /// The lookup kernel (default: the fastest this CPU supports, see
    /// [`Kernel::detect`]). Every kernel gives the same answers.
    pub fn kernel(mut self, kernel: Kernel) -> Self {
        self.kernel = Some(kernel);
        self
    }

    fn new(target: Target) -> Self {
        Self {
            base: BuilderBase::new(target),
            kernel: None,
        }
    }

    fn sizing_for_fpp(&self, fpp: f64) -> Result<BloomSizing, Error> {
        let items = self.base.items_for_fpp(fpp)?;
        let blocked = BlockedFpp::new(items);
        let fpp_of = |bits: u64, k: u32| blocked.fpp(bits, k);
        let near = |bits: u64| approximate_best_hashes(bits, items);
        let problem = SizeSearch::new(
            items,
            fpp,
            u64::from(BLOCK_BITS),
            self.base.max_bits(),
            &fpp_of,
        )
        .starting_hashes(&near);
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

    /// The configuration this builder would produce (for
    /// [`Persist::read_from_expecting`]), without allocating.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing).
    pub fn config(&self) -> Result<BlockedBloomConfig, Error> {
        Ok(self.config_of(&self.sizing()?))
    }

    /// The configuration of a filter of `sizing`.
    fn config_of(&self, sizing: &BloomSizing) -> BlockedBloomConfig {
        BlockedBloomConfig {
            num_blocks: sizing.num_bits / u64::from(BLOCK_BITS),
            num_hashes: sizing.num_hashes,
            hasher: self.base.hasher,
        }
    }

    /// Allocates the filter.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing); [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter) for a
    /// [`kernel`](Self::kernel) this CPU cannot run; [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge)
    /// when the allocator refuses the memory.
    pub fn build(&self) -> Result<BlockedBloomFilter, Error> {
        let sizing = self.sizing()?;
        let kernel = match self.kernel {
            Some(kernel) => kernel.select(sizing.num_hashes)?,
            None => Select::detect(sizing.num_hashes),
        };
        let config = self.config_of(&sizing);
        Ok(BlockedBloomFilter {
            blocks: BlockStorage::zeroed(address_blocks(config.num_blocks)?)?,
            config,
            len: 0,
            sized_for: sized_for(&sizing),
            kernel,
        })
    }
}

/// What the sizing records of a blocked filter say of its array.
const ARRAY: Array = Array {
    filter: "BlockedBloomFilter",
    unit_bits: BLOCK_BITS as u64,
    power_of_two: false,
    classic: classic_fpp,
};

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

    /// Adds `key`; returns `true` when it was not already reported present
    /// (and counts it in `len`). A Bloom filter never refuses a key.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.add_hash(self.config.hasher.hash(key))
    }

    /// Adds a pre-hashed key (the infallible body of `Filter::insert_hash`).
    #[inline]
    fn add_hash(&mut self, hash: u64) -> bool {
        let index = block_index(hash, self.config.num_blocks);
        let seed = block_seed(hash);
        let new = self
            .kernel
            .insert(self.blocks.block_mut(index), seed, self.config.num_hashes);
        self.len += u64::from(new);
        new
    }

    fn insert_batch(&mut self, hashes: &[u64]) -> usize {
        let (num_blocks, num_hashes, kernel) =
            (self.config.num_blocks, self.config.num_hashes, self.kernel);
        let new = insert_batch(&mut self.blocks, num_blocks, hashes, |block, seed| {
            kernel.insert(block, seed, num_hashes)
        });
        self.len += new as u64;
        new
    }

    /// The kernel that answers lookups.
    pub fn kernel(&self) -> Kernel {
        self.kernel.kernel()
    }

    /// Switches the lookup kernel (a filter read from bytes starts with the
    /// fastest one). Answers do not change.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter) when this CPU cannot run `kernel`;
    /// the filter is then unchanged.
    pub fn set_kernel(&mut self, kernel: Kernel) -> Result<(), Error> {
        self.kernel = kernel.select(self.config.num_hashes)?;
        Ok(())
    }

    /// Bits in the array: 512 per block.
    pub fn num_bits(&self) -> u64 {
        self.config.num_blocks * u64::from(BLOCK_BITS)
    }

    /// 512-bit blocks in the array.
    pub fn num_blocks(&self) -> u64 {
        self.config.num_blocks
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.config.num_hashes
    }

    /// Set bits per block.
    fn block_fills(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks
            .words()
            .chunks_exact(BLOCK_WORDS)
            .map(count_ones)
    }

    /// The number of distinct items estimated from the set bits: the
    /// Swamidass–Baldi estimate of each block, summed. Meaningful after
    /// merges, when [`len`](Filter::len) is itself an estimate. Infinite when
    /// a block is full.
    pub fn estimated_len(&self) -> f64 {
        self.set_bits_and_estimate().1
    }

    /// [`set_bits`](Self::set_bits) and [`estimated_len`](Self::estimated_len)
    /// from one pass over the blocks (a merge needs both).
    pub(crate) fn set_bits_and_estimate(&self) -> (u64, f64) {
        self.block_fills().fold((0, 0.0), |(bits, items), set| {
            let estimate = bloom_estimate_items(set, u64::from(BLOCK_BITS), self.config.num_hashes);
            (bits + set, items + estimate)
        })
    }

    /// Putze, Sanders and Singler's approximation at `items` (a Poisson load
    /// with independent bits in the block); slightly optimistic, see
    /// [`theoretical_fpp`](Filter::theoretical_fpp).
    pub fn classic_fpp(&self, items: u64) -> f64 {
        blocked_bloom_fpp_classic(
            self.config.num_blocks,
            BLOCK_BITS,
            self.config.num_hashes,
            items,
        )
    }

    /// This filter's configuration.
    pub fn config(&self) -> BlockedBloomConfig {
        self.config
    }
}

/// A batched lookup, run with the selected kernel's block test.
struct Lookups<'a> {
    filter: &'a BlockedBloomFilter,
    hashes: &'a [u64],
    found: &'a mut [bool],
}

impl BlockBatch for Lookups<'_> {
    type Output = ();

    // Always inlined into the kernel's dispatch, which may be compiled for
    // AVX2 (see `Select::run_batch`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self, contains: impl Fn(&[u64; BLOCK_WORDS], u32) -> bool) {
        let filter = self.filter;
        contains_batch(
            &filter.blocks,
            filter.config.num_blocks,
            self.hashes,
            self.found,
            contains,
        );
    }
}

impl Filter for BlockedBloomFilter {
    block_filter_state!();

    /// Never fails for a Bloom filter.
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(self.add_hash(hash))
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        let block = self.blocks.block(block_index(hash, self.config.num_blocks));
        self.kernel
            .contains(block, block_seed(hash), self.config.num_hashes)
    }

    /// Inserts with the blocks of the keys ahead prefetched.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        Ok(self.insert_batch(hashes))
    }

    /// Looks up with the blocks of the keys ahead prefetched, so that their
    /// memory accesses overlap; with AVX2 the whole batch runs in one
    /// AVX2-compiled loop.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let batch = Lookups {
            filter: self,
            hashes,
            found,
        };
        self.kernel.run_batch(self.config.num_hashes, batch);
    }

    /// The mean over blocks of (X_b/512)^k for the X_b bits set in each
    /// block now: exact for this instance.
    fn expected_fpp(&self) -> f64 {
        bloom_fpp_given_block_fills(
            self.block_fills(),
            u64::from(BLOCK_BITS),
            self.config.num_hashes,
        )
    }

    /// The exact FPP after `items` distinct inserts: the block load
    /// Binomial(n, 1/b) mixed with each load's exact Bloom FPP (Putze,
    /// Sanders and Singler; Bose et al.).
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        blocked_bloom_fpp(
            self.config.num_blocks,
            BLOCK_BITS,
            self.config.num_hashes,
            items,
        )
        .ok()
    }
}

block_filter_shared!(BlockedBloomFilter);
merge_by_words!(BlockedBloomFilter, BlockedBloomConfig, blocks);

/// Header parameters, in order.
const PARAM_NAMES: [&str; 5] = [
    "num_blocks",
    "block_bits",
    "num_hashes",
    "capacity",
    "target_fpp",
];

impl Persist for BlockedBloomFilter {
    type Config = BlockedBloomConfig;
    const KIND: FilterKind = FilterKind::BlockedBloom;

    fn config(&self) -> BlockedBloomConfig {
        BlockedBloomFilter::config(self)
    }

    fn header(&self) -> Header {
        let [capacity, target_fpp] = self.sized_for.params();
        Header {
            kind: FilterKind::BlockedBloom,
            hasher: self.config.hasher,
            items: self.len,
            params: vec![
                self.config.num_blocks,
                u64::from(BLOCK_BITS),
                u64::from(self.config.num_hashes),
                capacity,
                target_fpp,
            ],
            payload_len: self.config.num_blocks * u64::from(BLOCK_BITS / 8),
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        out.write_words(self.blocks.words())
    }

    fn config_from_header(header: &Header) -> Result<BlockedBloomConfig, Error> {
        header.expect_params(PARAM_NAMES.len())?;
        let num_blocks = blocks_from_header(header, BLOCK_BITS)?;
        let num_hashes = hashes_from_header(header, 2)?;
        SizedFor::from_header(header, 3)?;
        Ok(BlockedBloomConfig {
            num_blocks,
            num_hashes,
            hasher: header.hasher,
        })
    }

    fn read_payload<R: Read>(
        config: BlockedBloomConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        Ok(Self {
            blocks: read_blocks(input, header, config.num_blocks)?,
            config,
            len: header.items,
            sized_for: SizedFor::from_header(header, 3)?,
            kernel: Select::detect(config.num_hashes),
        })
    }
}

filterlab_core::serde_via_format!(BlockedBloomFilter);
