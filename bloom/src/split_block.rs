//! The split-block Bloom filter (Parquet's layout): each key sets one bit
//! in each of the eight 32-bit words of one 256-bit block.

use std::f64::consts::LN_2;

use filterlab_core::sizing::{HashChoice, SizeSearch, Target};
use filterlab_core::theory::{
    SPLIT_BLOCK_WORD_BITS, SPLIT_BLOCK_WORDS, bloom_fpp_classic, split_block_bloom_fpp,
    split_block_estimate_items, split_block_fpp_given_word_fills,
};
use filterlab_core::{Error, KeyHasher};

use crate::blocks::{BlockStorage, SPLIT_WORDS, SplitBlock};
use crate::common::{Array, builder_entry_points};
use crate::kernel::{Kernel, SplitBatch, SplitKernel, SplitSelect};
use crate::layout::{
    BlockSource, Blocks, Layout, Lookups, Shape, ViewBlocks, array_of, block_builder, block_filter,
    block_index, block_seed, insert_batch, view_batch, whole_blocks,
};
use crate::sizing::BloomSizing;
use crate::words::Word;

/// Bits per split block: eight 32-bit words, half a cache line.
pub const SPLIT_BLOCK_BITS: u32 = SPLIT_BLOCK_WORDS * SPLIT_BLOCK_WORD_BITS;

/// Probes per key: one in each word of the block, fixed by the layout.
const PROBES: u32 = SPLIT_BLOCK_WORDS;

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
/// ([`contains_many`](Self::contains_many), [`extend`](Self::extend))
/// prefetch the blocks of the keys ahead and, with AVX2, run in one
/// AVX2-compiled loop.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{BlockedBloomFilter, SplitBlockBloomFilter};
///
/// // Eight probes per key, always: a few more bits than the blocked
/// // filter for the same FPP, and the cheapest inserts.
/// let split = SplitBlockBloomFilter::params(1_000_000, 0.01)?;
/// assert!(split.num_bits > BlockedBloomFilter::params(1_000_000, 0.01)?.num_bits);
///
/// let mut seen = SplitBlockBloomFilter::with_fpp(0.01).expected_items(1_000).build()?;
/// seen.extend(0..1_000u64);
/// assert!((0..1_000u64).all(|key| seen.contains(&key)));
/// assert_eq!(seen.num_hashes(), 8);
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone)]
pub struct SplitBlockBloomFilter(Blocks<Split>);

block_builder! {
    /// Configures a [`SplitBlockBloomFilter`]; made by
    /// [`SplitBlockBloomFilter::with_fpp`] or
    /// [`SplitBlockBloomFilter::with_bits`]. (No `hashes`: k is fixed by
    /// the layout.)
    SplitBlockBloomBuilder => SplitBlockBloomFilter, Split, SplitBlockBloomConfig,
        setters: expected_items, seed, hasher, max_memory
}

/// The block count and hasher of a split-block filter (k is always 8):
/// all that decides where a key's bits go, so what merges and
/// [`Persist::read_from_expecting`](crate::Persist::read_from_expecting)
/// compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SplitBlockBloomConfig {
    /// 256-bit blocks in the array.
    pub num_blocks: u64,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

impl SplitBlockBloomBuilder {
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
        let block_bits = u64::from(SPLIT_BLOCK_BITS);
        let search = SizeSearch::new(items, fpp, block_bits, self.base.max_bits(), &fpp_of);
        let problem = search.starting_hashes(&eight);
        let (bits, k, achieved) = problem.smallest()?;
        let choice = (bits, k, HashChoice::FixedByLayout);
        Ok(ARRAY.record(items, Target::Fpp(fpp), choice, achieved))
    }

    /// `requested` bits rounded up to whole blocks, sized for the expected
    /// items or, without them, for the load at which eight probes are a
    /// standard Bloom filter's optimum, (m/8)·ln 2.
    fn sizing_for_bits(&self, requested: u64) -> Result<BloomSizing, Error> {
        let filter = "split-block Bloom filter";
        let bits = whole_blocks(requested, SPLIT_BLOCK_BITS, self.base.max_memory, filter)?;
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
}

/// What the sizing records of a split-block filter say of its array.
const ARRAY: Array = array_of::<Split>(classic_fpp);

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
}

/// The 256-bit layout: one bit in each 32-bit word, by Parquet's salts,
/// tested and set with [`SplitSelect`]'s kernel (a batch in one AVX2 loop);
/// the theory is the block load mixed with (1 − (31/32)^i)^8.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split;

impl Layout for Split {
    type Block = SplitBlock;
    type Kernel = SplitSelect;
    type Probes = ();
    type Params = ();
    const FIXED_HASHES: Option<u32> = Some(PROBES);

    fn config(shape: Shape<()>) -> SplitBlockBloomConfig {
        SplitBlockBloomConfig {
            num_blocks: shape.num_blocks,
            hasher: shape.hasher,
        }
    }

    fn select(kernel: Option<Kernel>, _shape: &Shape<()>) -> Result<SplitSelect, Error> {
        kernel.map_or(Ok(SplitSelect::detect()), Kernel::select_split)
    }

    fn kernel(kernel: &SplitSelect) -> Kernel {
        kernel.kernel()
    }

    fn params(_kernel: &SplitSelect) {}

    #[inline]
    fn insert(kernel: &SplitSelect, blocks: &mut BlockStorage<SplitBlock>, hash: u64) -> bool {
        let num_blocks = blocks.blocks().len() as u64;
        kernel.insert(
            blocks.block_mut(block_index(hash, num_blocks)),
            block_seed(hash),
        )
    }

    #[inline]
    fn contains(kernel: &SplitSelect, blocks: &BlockStorage<SplitBlock>, hash: u64) -> bool {
        let num_blocks = blocks.blocks().len() as u64;
        kernel.contains(
            blocks.block(block_index(hash, num_blocks)),
            block_seed(hash),
        )
    }

    /// With AVX2 the whole batch runs in one AVX2-compiled loop.
    fn insert_batch(
        kernel: &SplitSelect,
        blocks: &mut BlockStorage<SplitBlock>,
        hashes: &[u64],
    ) -> usize {
        let num_blocks = blocks.blocks().len() as u64;
        kernel.run_batch(Inserts {
            blocks,
            num_blocks,
            hashes,
        })
    }

    fn contains_batch<S: BlockSource<Words = [u64; SPLIT_WORDS]> + ?Sized>(
        kernel: &SplitSelect,
        (): &(),
        lookups: Lookups<'_, S>,
    ) {
        kernel.run_batch(lookups);
    }

    type ViewKeys<'a> = ViewBlocks<'a, SPLIT_WORDS>;

    fn view_keys<'a>(payload: &'a [u8], (): &()) -> ViewBlocks<'a, SPLIT_WORDS> {
        ViewBlocks::of(payload)
    }

    fn in_place(keys: &ViewBlocks<'_, SPLIT_WORDS>) -> bool {
        matches!(keys, ViewBlocks::Aligned(_))
    }

    #[inline]
    fn contains_view_key(
        kernel: &SplitSelect,
        keys: &ViewBlocks<'_, SPLIT_WORDS>,
        hash: u64,
    ) -> bool {
        match *keys {
            ViewBlocks::Aligned(blocks) => contains_in(*kernel, blocks, hash),
            ViewBlocks::Bytes(bytes) => contains_in_bytes(*kernel, bytes, hash),
        }
    }

    fn contains_view_batch(
        kernel: &SplitSelect,
        (): &(),
        keys: &ViewBlocks<'_, SPLIT_WORDS>,
        hashes: &[u64],
        found: &mut [bool],
    ) {
        match *keys {
            ViewBlocks::Aligned(blocks) => {
                view_batch::<Self, _>((kernel, &()), blocks, hashes, found);
            }
            ViewBlocks::Bytes(bytes) => {
                view_batch::<Self, _>((kernel, &()), bytes, hashes, found);
            }
        }
    }

    /// The mean over blocks of Π_w (bits set in word w)/32 (word w is bits
    /// 32·(w mod 2).. of the block's 64-bit word w / 2).
    fn fpp_given_fill<W: Word>(words: &[W], _shape: &Shape<()>) -> f64 {
        split_block_fpp_given_word_fills(words.chunks_exact(SPLIT_WORDS).map(|block| {
            core::array::from_fn(|w| ((block[w / 2].get() >> (32 * (w % 2))) as u32).count_ones())
        }))
    }

    /// The block load Binomial(n, 1/b) mixed with (1 − (31/32)^i)^8.
    fn theoretical_fpp(shape: &Shape<()>, items: u64) -> Option<f64> {
        Some(split_block_bloom_fpp(shape.num_blocks, items))
    }

    /// The block's most likely load given its bits set.
    fn estimate_items(set: u64, _shape: &Shape<()>) -> f64 {
        split_block_estimate_items(set)
    }

    fn probes_of(_sizing: &BloomSizing) {}

    /// None: the split layout has one way to place a key's bits.
    fn probes_param((): ()) -> Option<u64> {
        None
    }

    fn probes_from_params(extra: &[u64]) -> Result<(), Error> {
        // More parameters than the layout has: the count check refuses it.
        let _ = extra;
        Ok(())
    }
}

/// Whether the bits of the key with this hash are all set in its block of
/// `blocks` (a view's).
#[inline]
fn contains_in<S: BlockSource<Words = [u64; SPLIT_WORDS]> + ?Sized>(
    kernel: SplitSelect,
    blocks: &S,
    hash: u64,
) -> bool {
    let index = block_index(hash, blocks.num_blocks() as u64);
    blocks.read(index, |block| kernel.contains(block, block_seed(hash)))
}

/// A view's one-key lookup in little-endian bytes, kept out of line:
/// inlined into a caller's loop it would crowd out the registers of the
/// aligned one.
#[inline(never)]
fn contains_in_bytes(kernel: SplitSelect, bytes: &[[[u8; 8]; SPLIT_WORDS]], hash: u64) -> bool {
    contains_in(kernel, bytes, hash)
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

block_filter!(SplitBlockBloomFilter: Split, SplitBlockBloomConfig, SplitBlockBloom, 256);
