//! The split-block Bloom filter (Parquet's layout): each key sets one bit
//! in each of the eight 32-bit words of one 256-bit block.

use std::f64::consts::LN_2;
use std::io::{Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::sizing::{BuilderBase, HashChoice, SizeSearch, SizedFor, Target};
use filterlab_core::theory::{
    SPLIT_BLOCK_WORD_BITS, SPLIT_BLOCK_WORDS, bloom_fpp_classic, split_block_bloom_fpp,
    split_block_estimate_items, split_block_fpp_given_word_fills,
};
use filterlab_core::{Error, Filter, FilterKind, Key, KeyHasher, Persist};

use crate::blocks::{BlockStorage, SPLIT_WORDS, SplitBlock};
use crate::common::{Array, builder_entry_points, merge_by_words, sized_for};
use crate::kernel::{Kernel, SplitBatch, SplitKernel, SplitSelect};
use crate::layout::{
    address_blocks, block_filter_shared, block_filter_state, block_index, block_seed,
    blocks_from_header, contains_batch, insert_batch, read_blocks, whole_blocks,
};
use crate::sizing::BloomSizing;
use crate::words::count_ones;

/// Bits per split block: eight 32-bit words, half a cache line.
pub const SPLIT_BLOCK_BITS: u32 = SPLIT_BLOCK_WORDS * SPLIT_BLOCK_WORD_BITS;

/// Probes per key: one in each word of the block, fixed by the layout.
const PROBES: u32 = SPLIT_BLOCK_WORDS;

/// Everything that decides which bits a key sets: two filters with equal
/// configurations can be merged, and a file is only accepted by
/// [`Persist::read_from_expecting`] when its configuration equals the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SplitBlockBloomConfig {
    /// 256-bit blocks in the array.
    pub num_blocks: u64,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

/// A split-block Bloom filter: the layout of Parquet's Bloom filters (and
/// Impala's, Arrow's, sbbf-rs'). Each key maps to one 256-bit block of eight
/// 32-bit words and sets one bit in each word, so an insert or a lookup is
/// one 256-bit mask built from the key hash, one load of half a cache line,
/// and (AVX2) one test or one OR and store.
///
/// k is 8, fixed: one probe per word is what makes the mask a single
/// vector multiply and shift, and what makes the FPP exact and cheap to
/// evaluate (the words fill independently). It costs accuracy against
/// [`BlockedBloomFilter`](crate::BlockedBloomFilter), which chooses k and
/// spreads probes over 512 bits: at 1% about 6% more bits, more at lower
/// FPPs, where eight probes are too few. Sizing accounts for it with the
/// exact split-block FPP (the block load Binomial(n, 1/b) mixed with
/// (1 − (31/32)^i)^8), so the FPP you configure is the FPP you get. Nothing
/// inserted is ever reported absent.
///
/// Operations use the fastest [`Kernel`] the CPU supports, found when the
/// filter is built or read; batched operations
/// ([`contains_many`](Filter::contains_many), [`extend`](Self::extend))
/// prefetch the blocks of the keys ahead and, with AVX2, run in one
/// AVX2-compiled loop.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{Filter, SplitBlockBloomFilter};
///
/// let mut seen = SplitBlockBloomFilter::with_fpp(0.01).expected_items(10_000).seed(7).build()?;
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
pub struct SplitBlockBloomFilter {
    blocks: BlockStorage<SplitBlock>,
    /// Blocks and hasher, kept whole as the builder and the format make it.
    config: SplitBlockBloomConfig,
    /// Inserts that returned `true`: at most the bits set, since each set a
    /// clear bit (the invariant readers and merges keep).
    len: u64,
    sized_for: SizedFor,
    kernel: SplitSelect,
}

/// Configures a [`SplitBlockBloomFilter`]; made by
/// [`SplitBlockBloomFilter::with_fpp`] or [`SplitBlockBloomFilter::with_bits`].
#[derive(Clone, Debug)]
#[must_use]
pub struct SplitBlockBloomBuilder {
    base: BuilderBase,
    kernel: Option<Kernel>,
}

impl SplitBlockBloomBuilder {
    // No `hashes`: k is fixed by the layout.
    filterlab_core::builder_setters!(base => expected_items, seed, hasher, max_memory);

    /// The kernel (default: the fastest this CPU supports, see
    /// [`Kernel::detect`]). Every kernel gives the same answers and bits.
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

    /// The sizing this builder would allocate, without allocating.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter) for an FPP outside (0, 1), no or zero
    /// items with a target FPP, zero items or zero bits;
    /// [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge) over the memory limit.
    pub fn sizing(&self) -> Result<BloomSizing, Error> {
        match self.base.target {
            Target::Fpp(fpp) => self.sizing_for_fpp(fpp),
            Target::Size(bits) => self.sizing_for_bits(bits),
        }
    }

    /// The fewest blocks whose exact FPP at the expected items meets `fpp`.
    fn sizing_for_fpp(&self, fpp: f64) -> Result<BloomSizing, Error> {
        let items = self.base.items_for_fpp(fpp)?;
        // The search varies k too; here only k = 8 exists.
        let fpp_of = |bits: u64, k: u32| {
            Ok(if k == PROBES {
                split_block_bloom_fpp(bits / u64::from(SPLIT_BLOCK_BITS), items)
            } else {
                1.0
            })
        };
        let eight = |_: u64| PROBES;
        let problem = SizeSearch::new(
            items,
            fpp,
            u64::from(SPLIT_BLOCK_BITS),
            self.base.max_bits(),
            &fpp_of,
        )
        .starting_hashes(&eight);
        let (bits, k, achieved) = problem.smallest()?;
        let choice = (bits, k, HashChoice::FixedByLayout);
        Ok(ARRAY.record(items, Target::Fpp(fpp), choice, achieved))
    }

    /// `requested` bits rounded up to whole blocks, sized for the expected
    /// items or, without them, for the load at which eight probes are a
    /// standard Bloom filter's optimum, (m/8)·ln 2.
    fn sizing_for_bits(&self, requested: u64) -> Result<BloomSizing, Error> {
        let max_memory = self.base.max_memory;
        let bits = whole_blocks(
            requested,
            SPLIT_BLOCK_BITS,
            max_memory,
            "split-block Bloom filter",
        )?;
        let block_bits = u64::from(SPLIT_BLOCK_BITS);
        let items = match self.base.expected_items {
            Some(0) => return Err(Error::invalid("expected_items must be at least 1")),
            Some(items) => items,
            None => ((bits as f64 * LN_2 / f64::from(PROBES)).round() as u64).max(1),
        };
        let achieved = split_block_bloom_fpp(bits / block_bits, items);
        let choice = (bits, PROBES, HashChoice::FixedByLayout);
        Ok(ARRAY.record(items, Target::Size(requested), choice, achieved))
    }

    /// The configuration this builder would produce (for
    /// [`Persist::read_from_expecting`]), without allocating.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing).
    pub fn config(&self) -> Result<SplitBlockBloomConfig, Error> {
        Ok(self.config_of(&self.sizing()?))
    }

    fn config_of(&self, sizing: &BloomSizing) -> SplitBlockBloomConfig {
        SplitBlockBloomConfig {
            num_blocks: sizing.num_bits / u64::from(SPLIT_BLOCK_BITS),
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
    pub fn build(&self) -> Result<SplitBlockBloomFilter, Error> {
        let sizing = self.sizing()?;
        let kernel = match self.kernel {
            Some(kernel) => kernel.select_split()?,
            None => SplitSelect::detect(),
        };
        let config = self.config_of(&sizing);
        Ok(SplitBlockBloomFilter {
            blocks: BlockStorage::zeroed(address_blocks(config.num_blocks)?)?,
            config,
            len: 0,
            sized_for: sized_for(&sizing),
            kernel,
        })
    }
}

/// What the sizing records of a split-block filter say of its array.
const ARRAY: Array = Array {
    filter: "SplitBlockBloomFilter",
    unit_bits: SPLIT_BLOCK_BITS as u64,
    power_of_two: false,
    classic: classic_fpp,
};

/// The textbook FPP of a standard Bloom filter of the same bits with the
/// same eight probes: what splitting the bits into blocks and words costs.
fn classic_fpp(bits: u64, num_hashes: u32, items: u64) -> f64 {
    bloom_fpp_classic(bits, num_hashes, items)
}

impl SplitBlockBloomFilter {
    builder_entry_points!(
        SplitBlockBloomBuilder,
        with_bits: ", rounded up to whole 256-bit blocks",
        then: "its capacity is `expected_items(n)` if given, else (m/8)·ln 2, the load eight probes are optimal for.",
        params: "the fewest blocks"
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
        let new = self
            .kernel
            .insert(self.blocks.block_mut(index), block_seed(hash));
        self.len += u64::from(new);
        new
    }

    fn insert_batch(&mut self, hashes: &[u64]) -> usize {
        let batch = Inserts {
            num_blocks: self.config.num_blocks,
            blocks: &mut self.blocks,
            hashes,
        };
        let new = self.kernel.run_batch(batch);
        self.len += new as u64;
        new
    }

    /// The kernel that answers lookups and sets bits.
    pub fn kernel(&self) -> Kernel {
        self.kernel.kernel()
    }

    /// Switches the kernel (a filter read from bytes starts with the fastest
    /// one). Answers do not change.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter) when this CPU cannot run `kernel`;
    /// the filter is then unchanged.
    pub fn set_kernel(&mut self, kernel: Kernel) -> Result<(), Error> {
        self.kernel = kernel.select_split()?;
        Ok(())
    }

    /// Bits in the array: 256 per block.
    pub fn num_bits(&self) -> u64 {
        self.config.num_blocks * u64::from(SPLIT_BLOCK_BITS)
    }

    /// 256-bit blocks in the array.
    pub fn num_blocks(&self) -> u64 {
        self.config.num_blocks
    }

    /// Probes per key: always 8, one per 32-bit word of the key's block.
    pub fn num_hashes(&self) -> u32 {
        PROBES
    }

    /// Set bits in each of the eight 32-bit words of each block (word w is
    /// bits 32·(w mod 2).. of the block's 64-bit word w / 2).
    fn word_fills(&self) -> impl Iterator<Item = [u32; 8]> + '_ {
        self.blocks.words().chunks_exact(SPLIT_WORDS).map(|block| {
            core::array::from_fn(|w| ((block[w / 2] >> (32 * (w % 2))) as u32).count_ones())
        })
    }

    /// The number of distinct items estimated from the set bits: each
    /// block's most likely load given its bits set, summed. Meaningful after
    /// merges, when [`len`](Filter::len) is itself an estimate. Infinite
    /// when a block is full.
    pub fn estimated_len(&self) -> f64 {
        self.set_bits_and_estimate().1
    }

    /// [`set_bits`](Self::set_bits) and [`estimated_len`](Self::estimated_len)
    /// from one pass over the blocks (a merge needs both).
    pub(crate) fn set_bits_and_estimate(&self) -> (u64, f64) {
        let blocks = self.blocks.words().chunks_exact(SPLIT_WORDS);
        blocks.map(count_ones).fold((0, 0.0), |(bits, items), set| {
            (bits + set, items + split_block_estimate_items(set))
        })
    }

    /// This filter's configuration.
    pub fn config(&self) -> SplitBlockBloomConfig {
        self.config
    }
}

/// A batched insert, run with the selected kernel.
struct Inserts<'a> {
    blocks: &'a mut BlockStorage<SplitBlock>,
    num_blocks: u64,
    hashes: &'a [u64],
}

impl SplitBatch for Inserts<'_> {
    type Output = usize;

    // Always inlined into the kernel's dispatch, which may be compiled for
    // AVX2 (see `SplitSelect::run_batch`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self, kernel: impl SplitKernel) -> usize {
        insert_batch(self.blocks, self.num_blocks, self.hashes, |block, seed| {
            kernel.insert(block, seed)
        })
    }
}

/// A batched lookup, run with the selected kernel.
struct Lookups<'a> {
    blocks: &'a BlockStorage<SplitBlock>,
    num_blocks: u64,
    hashes: &'a [u64],
    found: &'a mut [bool],
}

impl SplitBatch for Lookups<'_> {
    type Output = ();

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self, kernel: impl SplitKernel) {
        contains_batch(
            self.blocks,
            self.num_blocks,
            self.hashes,
            self.found,
            |block, seed| kernel.contains(block, seed),
        );
    }
}

impl Filter for SplitBlockBloomFilter {
    block_filter_state!();

    /// Never fails for a Bloom filter.
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(self.add_hash(hash))
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        let block = self.blocks.block(block_index(hash, self.config.num_blocks));
        self.kernel.contains(block, block_seed(hash))
    }

    /// Inserts with the blocks of the keys ahead prefetched; with AVX2 the
    /// whole batch runs in one AVX2-compiled loop.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        Ok(self.insert_batch(hashes))
    }

    /// Looks up with the blocks of the keys ahead prefetched; with AVX2 the
    /// whole batch runs in one AVX2-compiled loop.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let batch = Lookups {
            blocks: &self.blocks,
            num_blocks: self.config.num_blocks,
            hashes,
            found,
        };
        self.kernel.run_batch(batch);
    }

    /// The mean over blocks of Π_w (bits set in word w)/32: exact for this
    /// instance.
    fn expected_fpp(&self) -> f64 {
        split_block_fpp_given_word_fills(self.word_fills())
    }

    /// The exact FPP after `items` distinct inserts: the block load
    /// Binomial(n, 1/b) mixed with (1 − (31/32)^i)^8.
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        Some(split_block_bloom_fpp(self.config.num_blocks, items))
    }
}

block_filter_shared!(SplitBlockBloomFilter);
merge_by_words!(SplitBlockBloomFilter, SplitBlockBloomConfig, blocks);

/// Header parameters, in order.
const PARAM_NAMES: [&str; 4] = ["num_blocks", "block_bits", "capacity", "target_fpp"];

impl Persist for SplitBlockBloomFilter {
    type Config = SplitBlockBloomConfig;
    const KIND: FilterKind = FilterKind::SplitBlockBloom;

    fn config(&self) -> SplitBlockBloomConfig {
        self.config
    }

    fn header(&self) -> Header {
        let [capacity, target_fpp] = self.sized_for.params();
        Header {
            kind: Self::KIND,
            hasher: self.config.hasher,
            items: self.len,
            params: vec![
                self.config.num_blocks,
                u64::from(SPLIT_BLOCK_BITS),
                capacity,
                target_fpp,
            ],
            payload_len: self.config.num_blocks * u64::from(SPLIT_BLOCK_BITS / 8),
        }
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        // Little-endian u64s: each is two little-endian u32 words, in order.
        out.write_words(self.blocks.words())
    }

    fn config_from_header(header: &Header) -> Result<SplitBlockBloomConfig, Error> {
        header.expect_params(PARAM_NAMES.len())?;
        let num_blocks = blocks_from_header(header, SPLIT_BLOCK_BITS)?;
        SizedFor::from_header(header, 2)?;
        Ok(SplitBlockBloomConfig {
            num_blocks,
            hasher: header.hasher,
        })
    }

    fn read_payload<R: Read>(
        config: SplitBlockBloomConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        Ok(Self {
            blocks: read_blocks(input, header, config.num_blocks)?,
            config,
            len: header.items,
            sized_for: SizedFor::from_header(header, 2)?,
            kernel: SplitSelect::detect(),
        })
    }
}

filterlab_core::serde_via_format!(SplitBlockBloomFilter);
