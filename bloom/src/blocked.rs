//! The blocked Bloom filter: each key sets k bits inside one 512-bit block,
//! so an operation touches one cache line.

use std::sync::{Mutex, PoisonError};

use filterlab_core::sizing::{HashChoice, SizeSearch, Target};
use filterlab_core::theory::{
    BlockFppTable, MAX_STRIPED_HASHES, STRIPED_WORDS, StripedFppTable,
    blocked_bloom_classic_best_hashes, blocked_bloom_fpp_classic, blocked_bloom_fpp_with,
    bloom_estimate_items, bloom_fpp_given_block_fills, striped_block_fpp_with,
    striped_estimate_items, striped_fpp_given_word_fills,
};
use filterlab_core::{Error, KeyHasher};

use crate::blocks::{BLOCK_WORDS, Block};
use crate::common::{Array, builder_entry_points};
use crate::kernel::probes::{KeyBlocks, KeyView, Params};
use crate::kernel::{BlockProbes, Kernel, Select};
use crate::layout::{
    BlockSource, Blocks, Inserts, Layout, Lookups, Shape, aligned_blocks, array_of, block_builder,
    block_filter, le_blocks, view_batch, whole_blocks,
};
use crate::sizing::BloomSizing;
use crate::words::{Word, count_ones};

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
    /// Where the probes go in the block.
    pub probes: BlockProbes,
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
/// A key's bits are [`BlockProbes::Striped`] over the block's eight 64-bit
/// words (k up to 16, the default there: one vector multiply per half of
/// the block builds a key's mask) or [`BlockProbes::Independent`] anywhere
/// in it (above 16, and in every file written before striped probes).
/// Lookups use the fastest [`Kernel`] the CPU supports; batched operations
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
        setters: expected_items, hashes, seed, hasher, max_memory;
        probes: Option<BlockProbes>
}

/// Per-block FPP tables for 512-bit blocks, one per layout and k, shared
/// by every sizing in the process: a table depends on them alone, a sizing
/// search evaluates dozens of sizes for the same few k, and building them
/// is most of a sizing's cost.
struct Tables {
    independent: Vec<Option<BlockFppTable>>,
    striped: Vec<Option<StripedFppTable>>,
}

static BLOCK_TABLES: Mutex<Tables> = Mutex::new(Tables {
    independent: Vec::new(),
    striped: Vec::new(),
});

/// The table in `slots` for k, made by `make` the first time.
fn table_for<T>(
    slots: &mut Vec<Option<T>>,
    num_hashes: u32,
    make: impl FnOnce() -> Result<T, Error>,
) -> Result<&mut T, Error> {
    let index = num_hashes as usize;
    if slots.len() <= index {
        slots.resize_with(index + 1, || None);
    }
    let slot = &mut slots[index];
    if slot.is_none() {
        *slot = Some(make()?);
    }
    Ok(slot.as_mut().expect("the table was just made"))
}

/// The exact FPP of a filter of `num_blocks` blocks, k probes placed by
/// `probes`, at `items`, from the shared tables.
fn blocked_fpp(
    num_blocks: u64,
    num_hashes: u32,
    probes: BlockProbes,
    items: u64,
) -> Result<f64, Error> {
    // A panic cannot leave a table half-updated in a way that matters:
    // `fpp_at` extends it by whole loads; use it even if poisoned.
    let mut tables = BLOCK_TABLES.lock().unwrap_or_else(PoisonError::into_inner);
    Ok(match probes {
        BlockProbes::Independent => {
            let table = table_for(&mut tables.independent, num_hashes, || {
                BlockFppTable::new(BLOCK_BITS, num_hashes)
            })?;
            blocked_bloom_fpp_with(table, num_blocks, items)
        }
        BlockProbes::Striped => {
            let table = table_for(&mut tables.striped, num_hashes, || {
                StripedFppTable::new(num_hashes)
            })?;
            striped_block_fpp_with(table, num_blocks, items)
        }
    })
}

/// The exact FPP at `items` for any (bits, k) as a builder with the probes
/// `chosen` (or the default for k) would place them: what the size
/// searches judge by. Striped probes asked for at more than 16 probes per
/// key answer 1, so that no search picks them.
struct BlockedFpp {
    items: u64,
    chosen: Option<BlockProbes>,
}

impl BlockedFpp {
    fn fpp(&self, bits: u64, num_hashes: u32) -> Result<f64, Error> {
        let probes = self
            .chosen
            .unwrap_or_else(|| BlockProbes::for_hashes(num_hashes));
        if probes == BlockProbes::Striped && num_hashes > MAX_STRIPED_HASHES {
            return Ok(1.0);
        }
        blocked_fpp(bits / u64::from(BLOCK_BITS), num_hashes, probes, self.items)
    }
}

impl BlockedBloomBuilder {
    filterlab_core::builder_setters! {
        /// Where a key's bits go in its block (default: striped for k up to
        /// 16, independent above): [`BlockProbes::Independent`] to build a
        /// filter of the configuration files written before striped probes
        /// have, so that it merges with them and `read_from_expecting`
        /// accepts them. Striped probes take k up to 16.
        probes(probes: BlockProbes) => probes = Some(probes);
    }

    /// The probes of a filter with k probes: the chosen ones, checked, or
    /// the default for k.
    fn probes_for(&self, num_hashes: u32) -> Result<BlockProbes, Error> {
        match self.probes {
            Some(BlockProbes::Striped) if num_hashes > MAX_STRIPED_HASHES => {
                Err(Error::invalid(format!(
                    "striped probes take at most {MAX_STRIPED_HASHES} hashes, got {num_hashes}"
                )))
            }
            Some(probes) => Ok(probes),
            None => Ok(BlockProbes::for_hashes(num_hashes)),
        }
    }

    /// Where the search for the best k starts: the approximation's best k,
    /// within what the chosen probes take (a search starting where every k
    /// answers 1 would not find the slope down to them).
    fn near_hashes(&self, bits: u64, items: u64) -> u32 {
        let near = approximate_best_hashes(bits, items);
        match self.probes {
            Some(BlockProbes::Striped) => near.min(MAX_STRIPED_HASHES),
            _ => near,
        }
    }

    fn sizing_for_fpp(&self, fpp: f64) -> Result<BloomSizing, Error> {
        let items = self.base.items_for_fpp(fpp)?;
        if let Some(k) = self.base.explicit_hashes()? {
            self.probes_for(k)?;
        }
        let blocked = BlockedFpp {
            items,
            chosen: self.probes,
        };
        let fpp_of = |bits: u64, k: u32| blocked.fpp(bits, k);
        let near = |bits: u64| self.near_hashes(bits, items);
        let block_bits = u64::from(BLOCK_BITS);
        let problem = SizeSearch::new(items, fpp, block_bits, self.base.max_bits(), &fpp_of);
        let problem = problem.starting_hashes(&near);
        let (bits, k, achieved) = problem.smallest()?;
        let approximate = near(bits);
        let chosen = (k, achieved, HashChoice::Blocked { approximate });
        let (k, achieved, choice) = self.base.explicit_or(chosen, |k| blocked.fpp(bits, k))?;
        self.record(items, Target::Fpp(fpp), (bits, k, choice), achieved)
    }

    fn sizing_for_bits(&self, requested: u64) -> Result<BloomSizing, Error> {
        let max_memory = self.base.max_memory;
        let bits = whole_blocks(requested, BLOCK_BITS, max_memory, "blocked Bloom filter")?;
        let block_bits = u64::from(BLOCK_BITS);
        let (k, choice, items) = self.base.hashes_for_size(bits, "with_bits", |items| {
            let blocked = BlockedFpp {
                items,
                chosen: self.probes,
            };
            let fpp_of = |bits: u64, k: u32| blocked.fpp(bits, k);
            let near = |bits: u64| self.near_hashes(bits, items);
            let problem = SizeSearch::new(items, 0.5, block_bits, self.base.max_bits(), &fpp_of)
                .starting_hashes(&near);
            let approximate = near(bits);
            Ok((
                problem.best_hashes(bits)?.0,
                HashChoice::Blocked { approximate },
            ))
        })?;
        let achieved = blocked_fpp(bits / block_bits, k, self.probes_for(k)?, items)?;
        self.record(items, Target::Size(requested), (bits, k, choice), achieved)
    }

    /// The sizing record of the array, with the probes of its k.
    fn record(
        &self,
        items: u64,
        target: Target,
        array: (u64, u32, HashChoice),
        achieved: f64,
    ) -> Result<BloomSizing, Error> {
        let probes = self.probes_for(array.1)?;
        let mut sizing = ARRAY.record(items, target, array, achieved);
        sizing.block_probes = Some(probes);
        Ok(sizing)
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

    /// Where a key's bits go in its block.
    pub fn probes(&self) -> BlockProbes {
        self.0.shape.probes
    }

    /// The exact FPP after `items` distinct inserts of a filter built with
    /// `sizing` (a `BlockedBloomBuilder`'s), without building it: what a
    /// scalable filter sizes its layers by.
    ///
    /// # Errors
    ///
    /// Those of the exact formula (k outside what its probes take).
    pub fn sizing_fpp(sizing: &BloomSizing, items: u64) -> Result<f64, Error> {
        let shape = Shape::of::<Wide>(sizing, KeyHasher::default());
        blocked_fpp(shape.num_blocks, shape.num_hashes, shape.probes, items)
    }
}

/// The 512-bit layout: k probes chosen by the key's block seed, placed by
/// its [`BlockProbes`] and tested with [`Select`]'s kernel; the theory of
/// Putze, Sanders and Singler with each load's exact FPP for those probes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wide;

/// The header parameter of striped probes (independent ones have none, as
/// in every file written before striped probes existed).
const STRIPED_PARAM: u64 = 2;

impl Layout for Wide {
    type Block = Block;
    type Kernel = Select;
    type Probes = BlockProbes;
    type Params = Params;
    const FIXED_HASHES: Option<u32> = None;

    fn config(shape: Shape<BlockProbes>) -> BlockedBloomConfig {
        BlockedBloomConfig {
            num_blocks: shape.num_blocks,
            num_hashes: shape.num_hashes,
            hasher: shape.hasher,
            probes: shape.probes,
        }
    }

    fn select(kernel: Option<Kernel>, shape: &Shape<BlockProbes>) -> Result<Select, Error> {
        Select::new(kernel, shape.num_hashes, shape.probes)
    }

    fn kernel(kernel: &Select) -> Kernel {
        kernel.kernel()
    }

    fn params(kernel: &Select) -> Params {
        kernel.params()
    }

    #[inline]
    fn insert(_: &Select, blocks: &mut KeyBlocks, hash: u64) -> bool {
        Select::insert_key(blocks, hash)
    }

    #[inline]
    fn contains(_: &Select, blocks: &KeyBlocks, hash: u64) -> bool {
        Select::contains_key(blocks, hash)
    }

    /// With AVX2 the whole batch runs in one AVX2-compiled loop.
    fn insert_batch(kernel: &Select, blocks: &mut KeyBlocks, hashes: &[u64]) -> usize {
        let params = *blocks.params();
        kernel.run_batch(&params, Inserts { blocks, hashes })
    }

    fn contains_batch<S: BlockSource<Words = [u64; BLOCK_WORDS]> + ?Sized>(
        kernel: &Select,
        params: &Params,
        lookups: Lookups<'_, S>,
    ) {
        kernel.run_batch(params, lookups);
    }

    type ViewKeys<'a> = KeyView<'a>;

    fn view_keys<'a>(payload: &'a [u8], params: &Params) -> KeyView<'a> {
        match aligned_blocks(payload) {
            Some(blocks) => KeyView::aligned(blocks, *params),
            None => KeyView::bytes(le_blocks(payload), *params),
        }
    }

    fn in_place(keys: &KeyView<'_>) -> bool {
        keys.bytes.is_empty()
    }

    /// One indirect call of the function chosen for the view's blocks, as
    /// the owned filter's one-key lookup.
    #[inline]
    fn contains_view_key(_: &Select, keys: &KeyView<'_>, hash: u64) -> bool {
        Select::view_contains_key(keys, hash)
    }

    fn contains_view_batch(
        kernel: &Select,
        params: &Params,
        keys: &KeyView<'_>,
        hashes: &[u64],
        found: &mut [bool],
    ) {
        if Self::in_place(keys) {
            view_batch::<Self, _>((kernel, params), keys.blocks, hashes, found);
        } else {
            view_batch::<Self, _>((kernel, params), keys.bytes, hashes, found);
        }
    }

    /// Independent probes: the mean over blocks of (X_b/512)^k for the X_b
    /// bits set in each block now; striped ones: the mean over blocks and
    /// rotations of Π_w (X_w/64)^{c_w} over the words' bits set.
    fn fpp_given_fill<W: Word>(words: &[W], shape: &Shape<BlockProbes>) -> f64 {
        let blocks = words.chunks_exact(BLOCK_WORDS);
        match shape.probes {
            BlockProbes::Independent => bloom_fpp_given_block_fills(
                blocks.map(count_ones),
                u64::from(BLOCK_BITS),
                shape.num_hashes,
            ),
            BlockProbes::Striped => striped_fpp_given_word_fills(
                blocks.map(|block| {
                    core::array::from_fn::<_, { STRIPED_WORDS as usize }, _>(|w| {
                        block[w].get().count_ones()
                    })
                }),
                shape.num_hashes,
            ),
        }
    }

    /// The block load Binomial(n, 1/b) mixed with the exact FPP of a block
    /// of each load (Putze, Sanders and Singler; Bose et al. for
    /// independent probes, `striped_block_fpp` for striped ones).
    fn theoretical_fpp(shape: &Shape<BlockProbes>, items: u64) -> Option<f64> {
        blocked_fpp(shape.num_blocks, shape.num_hashes, shape.probes, items).ok()
    }

    /// The block's most likely load given its bits set.
    fn estimate_items(set: u64, shape: &Shape<BlockProbes>) -> f64 {
        match shape.probes {
            BlockProbes::Independent => {
                bloom_estimate_items(set, u64::from(BLOCK_BITS), shape.num_hashes)
            }
            BlockProbes::Striped => striped_estimate_items(set, shape.num_hashes),
        }
    }

    fn probes_of(sizing: &BloomSizing) -> BlockProbes {
        sizing
            .block_probes
            .unwrap_or_else(|| BlockProbes::for_hashes(sizing.num_hashes))
    }

    fn probes_param(probes: BlockProbes) -> Option<u64> {
        match probes {
            BlockProbes::Independent => None,
            BlockProbes::Striped => Some(STRIPED_PARAM),
        }
    }

    /// No parameter: independent probes; one, 2: striped probes.
    fn probes_from_params(extra: &[u64]) -> Result<BlockProbes, Error> {
        match extra {
            [STRIPED_PARAM] => Ok(BlockProbes::Striped),
            [other] => Err(Error::new(
                filterlab_core::ErrorKind::InvalidHeader,
                format!("unknown block probes {other}"),
            )),
            // None; or too many, which the count check then refuses.
            _ => Ok(BlockProbes::Independent),
        }
    }
}

block_filter!(BlockedBloomFilter: Wide, BlockedBloomConfig, BlockedBloom, 512);
