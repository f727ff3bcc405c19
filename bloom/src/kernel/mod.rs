//! The block kernels of the blocked and split-block Bloom filters behind
//! one interface, one file per instruction set (hashbrown's layout):
//!
//! - [`scalar`]: portable code, the reference (inserts test and set each
//!   probe's word in one pass);
//! - [`avx2`]: x86_64 with AVX2, behind a value that proves runtime
//!   detection found AVX2: independent probes eight per step (inserts build
//!   the key's 512-bit mask in registers, one AVX-512 register where the
//!   CPU has AVX-512F); striped probes' mask from one multiply per half and
//!   round; a split block's eight bits as one 256-bit mask.
//!
//! [`probes`] says where a key's bits go (the format), for both layouts of
//! a `BlockedBloomFilter` ([`BlockProbes`]). This module holds what the
//! filter sees: the public [`Kernel`] choice and its runtime selection
//! ([`Select`], [`SplitSelect`]), and the split-block [`SALT`]s. (The cache
//! hint of batched operations is core's [`filterlab_core::prefetch`].)
//!
//! # Where dispatch happens
//!
//! At run time, not at compile time as in hashbrown: a portable build must
//! still use AVX2 where the CPU has it. The kernel is detected once, when a
//! filter is built or read, and kept in the filter as a [`Select`]. A
//! one-key operation of a `BlockedBloomFilter` is one indirect call of a
//! function chosen then (compiled for AVX2 where the CPU has it, the block
//! found inside it), with no branch on the kernel or the layout: a call
//! into AVX2 code cannot be inlined into portable code anyway, so the call
//! costs nothing the kernel did not already pay. A batch dispatches once
//! ([`Select::run_batch`]): the AVX2 arm runs the whole loop inside a
//! function compiled for AVX2, where the kernel inlines, instead of paying
//! a call and a `vzeroupper` per key. Split-block batches do the same
//! ([`SplitSelect::run_batch`]).

mod avx2;
pub(crate) mod probes;
mod scalar;

use std::fmt;

use filterlab_core::Error;
#[cfg(test)]
use filterlab_core::mix64;

use crate::blocks::{BLOCK_WORDS, SPLIT_WORDS};

use self::avx2::Avx2;
use self::probes::{
    ContainsKey, InsertKey, KeyBlocks, KeySource, KeyView, Params, ViewContainsKey, block_index,
    block_seed,
};

/// The probe multipliers, core's: probe j is bit
/// `(seed · MULTIPLIERS[j] mod 2^32) >> 23` of the block.
pub(crate) use filterlab_core::BLOCK_MULTIPLIERS as MULTIPLIERS;

/// The split-block salts: the bit a key sets in 32-bit word w of its block
/// is the top 5 bits of `seed · SALT[w] mod 2^32`. These are the eight
/// constants of the Parquet format's split block Bloom filter
/// (<https://github.com/apache/parquet-format/blob/master/BloomFilter.md>,
/// "Technical Approach"), also Impala's, Arrow's and sbbf-rs'; part of
/// `SplitBlockBloomFilter`'s format.
pub(crate) const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// How a `BlockedBloomFilter` places a key's k bits in its 512-bit block:
/// part of its configuration and format, so two filters merge, and a file
/// is accepted by `read_from_expecting`, only with the same probes.
///
/// A builder picks [`Striped`](Self::Striped) for k ≤ 16 and
/// [`Independent`](Self::Independent) above, unless told (see
/// `BlockedBloomBuilder::probes`); a filter read from a file keeps the
/// probes it was written with.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{BlockProbes, BlockedBloomFilter};
///
/// let filter = BlockedBloomFilter::with_fpp(0.01).expected_items(1000).build()?;
/// assert_eq!(filter.config().probes, BlockProbes::Striped);
/// // As every filter written before striped probes existed:
/// let old_style = BlockedBloomFilter::with_fpp(0.01)
///     .expected_items(1000)
///     .probes(BlockProbes::Independent)
///     .build()?;
/// assert_eq!(old_style.config().probes, BlockProbes::Independent);
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockProbes {
    /// Each bit anywhere in the block, independently: probe j is bit
    /// `(s · m_j mod 2^32) >> 23` of it. The layout of every file written
    /// before striped probes, which reads and answers as it did; any k.
    Independent,
    /// The bits in turn in the block's eight 64-bit words, from a word the
    /// key picks: probe j in word `(r + j) mod 8`. Vector code builds the
    /// key's whole mask with one multiply per half, where independent bits
    /// take a shift and an OR each; it costs 0.16% more bits at p = 1e-2
    /// and about 0.3% at 1e-3 to 1e-5. k from 1 to 16.
    Striped,
}

impl BlockProbes {
    /// The probes a builder picks for `num_hashes` probes per key when not
    /// told: striped up to 16, independent above.
    pub(crate) fn for_hashes(num_hashes: u32) -> Self {
        if num_hashes <= filterlab_core::theory::MAX_STRIPED_HASHES {
            Self::Striped
        } else {
            Self::Independent
        }
    }
}

/// How a `BlockedBloomFilter` tests a key's bits inside its block. Every
/// kernel gives the same answers; they differ in speed only.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{BlockedBloomFilter, Kernel};
///
/// // The default is the fastest kernel this CPU supports.
/// let filter = BlockedBloomFilter::with_fpp(0.01).expected_items(1000).build()?;
/// assert_eq!(filter.kernel(), Kernel::detect());
/// assert!(Kernel::Scalar.is_available());
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Portable code: one load and test per probe.
    Scalar,
    /// x86_64 with AVX2: a key's probes from one or two vector multiplies.
    Avx2,
}

impl Kernel {
    /// The fastest kernel this CPU supports.
    pub fn detect() -> Self {
        if Avx2::detect().is_some() {
            Self::Avx2
        } else {
            Self::Scalar
        }
    }

    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        self.proof().is_ok()
    }

    /// The AVX2 proof this kernel needs (`None` for the scalar one).
    fn proof(self) -> Result<Option<Avx2>, Error> {
        match self {
            Self::Scalar => Ok(None),
            Self::Avx2 => Avx2::detect()
                .map(Some)
                .ok_or_else(|| Error::invalid("the AVX2 kernel needs a CPU with AVX2")),
        }
    }
}

/// The kernel of a `BlockedBloomFilter`, selected once when the filter is
/// built or read: what its batches dispatch on, and the one-key functions
/// it puts in the filter's [`Params`] (beside its blocks), to call without
/// a branch.
#[derive(Clone, Copy)]
pub(crate) struct Select {
    avx2: Option<Avx2>,
    probes: BlockProbes,
    num_hashes: u32,
}

impl fmt::Debug for Select {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Select")
            .field("kernel", &self.kernel())
            .field("probes", &self.probes)
            .finish_non_exhaustive()
    }
}

/// A batched operation over blocks, given the selected kernel's block test
/// and set by [`Select::run_batch`].
pub(crate) trait BlockBatch {
    /// What the batch returns.
    type Output;

    /// Runs the batch with `kernel`'s test and set of a block.
    fn run(self, kernel: impl BlockKernel) -> Self::Output;
}

/// A kernel's test and set of one 512-bit block, as a batch runs them.
pub(crate) trait BlockKernel: Copy {
    /// Whether the key with this block seed has all its bits in `block`.
    fn contains(self, block: &[u64; BLOCK_WORDS], seed: u32) -> bool;
    /// Sets the key's bits in `block`; whether any was clear.
    fn insert(self, block: &mut [u64; BLOCK_WORDS], seed: u32) -> bool;
}

/// The portable kernel of independent probes.
#[derive(Clone, Copy)]
struct ScalarIndependent(&'static [u32]);

impl BlockKernel for ScalarIndependent {
    #[inline]
    fn contains(self, block: &[u64; BLOCK_WORDS], seed: u32) -> bool {
        scalar::contains(block, seed, self.0)
    }

    #[inline]
    fn insert(self, block: &mut [u64; BLOCK_WORDS], seed: u32) -> bool {
        scalar::insert(block, seed, self.0)
    }
}

/// The portable kernel of striped probes.
#[derive(Clone, Copy)]
struct ScalarStriped<'a>(&'a probes::Stripes);

impl BlockKernel for ScalarStriped<'_> {
    #[inline]
    fn contains(self, block: &[u64; BLOCK_WORDS], seed: u32) -> bool {
        scalar::striped_contains(block, seed, self.0)
    }

    #[inline]
    fn insert(self, block: &mut [u64; BLOCK_WORDS], seed: u32) -> bool {
        scalar::striped_insert(block, seed, self.0)
    }
}

/// The AVX2 kernel of independent probes.
#[derive(Clone, Copy)]
struct Avx2Independent<'a>(Avx2, &'a probes::Lanes);

impl BlockKernel for Avx2Independent<'_> {
    // Always inlined, so that inside `Avx2::run` the AVX2 functions inline
    // into the batch's loop.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn contains(self, block: &[u64; BLOCK_WORDS], seed: u32) -> bool {
        self.0.contains(block, seed, self.1, &MULTIPLIERS)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn insert(self, block: &mut [u64; BLOCK_WORDS], seed: u32) -> bool {
        self.0.insert(block, seed, self.1, &MULTIPLIERS)
    }
}

/// The AVX2 kernel of striped probes in `ROUNDS` rounds.
#[derive(Clone, Copy)]
struct Avx2Striped<'a, const ROUNDS: usize>(Avx2, &'a probes::Stripes);

impl<const ROUNDS: usize> BlockKernel for Avx2Striped<'_, ROUNDS> {
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn contains(self, block: &[u64; BLOCK_WORDS], seed: u32) -> bool {
        self.0.striped_contains::<ROUNDS>(block, seed, self.1)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn insert(self, block: &mut [u64; BLOCK_WORDS], seed: u32) -> bool {
        self.0.striped_insert::<ROUNDS>(block, seed, self.1)
    }
}

/// The portable one-key lookup of independent probes.
fn scalar_contains_key<S: KeySource>(storage: &S, hash: u64) -> bool {
    let params = storage.key_params();
    let block = storage.key_block(hash);
    scalar::contains(block, block_seed(hash), params.lanes.multipliers())
}

/// [`scalar_contains_key`] in a view's blocks (a function of its own, so
/// that its pointer takes a view of any lifetime).
fn scalar_view_contains_key(view: &KeyView<'_>, hash: u64) -> bool {
    scalar_contains_key(view, hash)
}

/// [`scalar_striped_contains_key`] in a view's blocks.
fn scalar_striped_view_contains_key(view: &KeyView<'_>, hash: u64) -> bool {
    scalar_striped_contains_key(view, hash)
}

/// [`scalar_contains_key`] in a view's little-endian bytes: the key's
/// block decoded on the stack.
fn scalar_bytes_contains_key(view: &KeyView<'_>, hash: u64) -> bool {
    let block = view.bytes[block_index(hash, view.bytes.len() as u64)].map(u64::from_le_bytes);
    scalar::contains(&block, block_seed(hash), view.params.lanes.multipliers())
}

/// [`scalar_striped_contains_key`] in a view's little-endian bytes.
fn scalar_striped_bytes_contains_key(view: &KeyView<'_>, hash: u64) -> bool {
    let block = view.bytes[block_index(hash, view.bytes.len() as u64)].map(u64::from_le_bytes);
    scalar::striped_contains(&block, block_seed(hash), &view.params.stripes)
}

/// The portable one-key insert of independent probes.
fn scalar_insert_key(storage: &mut KeyBlocks, hash: u64) -> bool {
    let params = *storage.params();
    let blocks = storage.blocks_mut();
    let block = &mut blocks[block_index(hash, blocks.len() as u64)].0;
    scalar::insert(block, block_seed(hash), params.lanes.multipliers())
}

/// The portable one-key lookup of striped probes.
fn scalar_striped_contains_key<S: KeySource>(storage: &S, hash: u64) -> bool {
    let params = storage.key_params();
    let block = storage.key_block(hash);
    scalar::striped_contains(block, block_seed(hash), &params.stripes)
}

/// The portable one-key insert of striped probes.
fn scalar_striped_insert_key(storage: &mut KeyBlocks, hash: u64) -> bool {
    let params = *storage.params();
    let blocks = storage.blocks_mut();
    let block = &mut blocks[block_index(hash, blocks.len() as u64)].0;
    scalar::striped_insert(block, block_seed(hash), &params.stripes)
}

impl Select {
    /// `kernel` (the fastest this CPU supports when `None`) for keys of
    /// `num_hashes` probes placed by `probes`.
    ///
    /// # Errors
    ///
    /// `InvalidParameter` for a kernel this CPU cannot run.
    pub(crate) fn new(
        kernel: Option<Kernel>,
        num_hashes: u32,
        probes: BlockProbes,
    ) -> Result<Self, Error> {
        let avx2 = match kernel {
            None => Avx2::detect(),
            Some(kernel) => kernel.proof()?,
        };
        Ok(Self::with(avx2, num_hashes, probes))
    }

    /// The kernel for `avx2` (AVX2 if `Some`, scalar otherwise).
    fn with(avx2: Option<Avx2>, num_hashes: u32, probes: BlockProbes) -> Self {
        Self {
            avx2,
            probes,
            num_hashes,
        }
    }

    /// The parameters of this kernel's keys, to keep beside the blocks:
    /// with its one-key functions.
    pub(crate) fn params(self) -> Params {
        let (contains_key, insert_key, view_contains_key): (
            ContainsKey,
            InsertKey,
            ViewContainsKey,
        ) = match (self.avx2, self.probes) {
            (None, BlockProbes::Independent) => (
                scalar_contains_key::<KeyBlocks>,
                scalar_insert_key,
                scalar_view_contains_key,
            ),
            (None, BlockProbes::Striped) => (
                scalar_striped_contains_key::<KeyBlocks>,
                scalar_striped_insert_key,
                scalar_striped_view_contains_key,
            ),
            (Some(avx2), BlockProbes::Independent) => avx2.independent_keys(),
            (Some(avx2), BlockProbes::Striped) => avx2.striped_keys(self.num_hashes),
        };
        let bytes_contains_key: ViewContainsKey = match self.probes {
            BlockProbes::Independent => scalar_bytes_contains_key,
            BlockProbes::Striped => scalar_striped_bytes_contains_key,
        };
        Params {
            lanes: probes::Lanes::new(self.num_hashes),
            stripes: probes::Stripes::new(self.num_hashes),
            contains_key,
            insert_key,
            view_contains_key,
            bytes_contains_key,
        }
    }

    /// The public name of this kernel.
    pub(crate) fn kernel(self) -> Kernel {
        if self.avx2.is_some() {
            Kernel::Avx2
        } else {
            Kernel::Scalar
        }
    }

    /// Whether every bit of the key with this hash is set in its block of
    /// `blocks` (the whole array), with the kernel its parameters name.
    #[inline]
    pub(crate) fn contains_key(blocks: &KeyBlocks, hash: u64) -> bool {
        // SAFETY: only `params` sets the pointer: to a scalar function, or
        // to an AVX2 one with `avx2` proving the CPU supports AVX2 (and
        // AVX-512F for the insert that enables it, see
        // `Avx2::independent_keys`).
        unsafe { (blocks.params().contains_key)(blocks, hash) }
    }

    /// [`contains_key`](Self::contains_key) in a view's blocks.
    #[inline]
    pub(crate) fn view_contains_key(view: &KeyView<'_>, hash: u64) -> bool {
        // SAFETY: as in `contains_key`.
        unsafe { (view.params.view_contains_key)(view, hash) }
    }

    /// Sets the bits of the key with this hash in its block of `blocks`;
    /// whether any was clear (the key was new). Same bits and answer with
    /// every kernel.
    #[inline]
    pub(crate) fn insert_key(blocks: &mut KeyBlocks, hash: u64) -> bool {
        let insert = blocks.params().insert_key;
        // SAFETY: as in `contains_key`.
        unsafe { insert(blocks, hash) }
    }

    /// Runs `batch` with this kernel's test and set of a block (of keys
    /// with the probes `params`, the blocks' own); with AVX2, the whole
    /// batch runs in one AVX2-compiled function.
    // Always inlined, and so must `batch.run` be: the AVX2 arm's closure is
    // compiled for AVX2 only where its body is inlined into it.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn run_batch<B: BlockBatch>(self, params: &Params, batch: B) -> B::Output {
        let Params { lanes, stripes, .. } = params;
        match (self.avx2, self.probes) {
            (None, BlockProbes::Independent) => batch.run(ScalarIndependent(lanes.multipliers())),
            (None, BlockProbes::Striped) => batch.run(ScalarStriped(stripes)),
            (Some(avx2), BlockProbes::Independent) => {
                avx2.run(|| batch.run(Avx2Independent(avx2, lanes)))
            }
            (Some(avx2), BlockProbes::Striped) if stripes.rounds == 1 => {
                avx2.run(|| batch.run(Avx2Striped::<1>(avx2, stripes)))
            }
            (Some(avx2), BlockProbes::Striped) => {
                avx2.run(|| batch.run(Avx2Striped::<2>(avx2, stripes)))
            }
        }
    }
}

/// [`ScalarSplit`]'s one-key lookup, out of line (see [`SplitSelect::insert`]).
#[inline(never)]
fn scalar_split_contains(block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
    ScalarSplit.contains(block, seed)
}

/// [`ScalarSplit`]'s one-key insert, out of line (see [`SplitSelect::insert`]).
#[inline(never)]
fn scalar_split_insert(block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool {
    ScalarSplit.insert(block, seed)
}

/// The kernel of a `SplitBlockBloomFilter`, found once when the filter is
/// built or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SplitSelect {
    Scalar,
    Avx2(Avx2),
}

/// A split-block kernel's test and set of a block, as a batch runs them.
pub(crate) trait SplitKernel: Copy {
    /// Whether the key with this block seed has all its bits in `block`.
    fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool;
    /// Sets the key's bits in `block`; whether any was clear.
    fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool;
}

/// The portable split-block kernel.
#[derive(Clone, Copy)]
struct ScalarSplit;

impl SplitKernel for ScalarSplit {
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        scalar::split_contains(block, seed, &SALT)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool {
        scalar::split_insert(block, seed, &SALT)
    }
}

impl SplitKernel for Avx2 {
    // Always inlined, so that inside `Avx2::run` the AVX2 functions inline
    // into the batch's loop.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        self.split_contains(block, seed, &SALT)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool {
        self.split_insert(block, seed, &SALT)
    }
}

/// A batched split-block operation, given the selected kernel by
/// [`SplitSelect::run_batch`].
pub(crate) trait SplitBatch {
    /// What the batch returns.
    type Output;

    /// Runs the batch with `kernel`'s test and set.
    fn run(self, kernel: impl SplitKernel) -> Self::Output;
}

impl Kernel {
    /// The kernel ready for split blocks.
    pub(crate) fn select_split(self) -> Result<SplitSelect, Error> {
        Ok(self.proof()?.map_or(SplitSelect::Scalar, SplitSelect::Avx2))
    }
}

impl SplitSelect {
    /// The fastest split-block kernel this CPU supports.
    pub(crate) fn detect() -> Self {
        Avx2::detect().map_or(Self::Scalar, Self::Avx2)
    }

    /// The public name of this kernel.
    pub(crate) fn kernel(self) -> Kernel {
        match self {
            Self::Scalar => Kernel::Scalar,
            Self::Avx2(_) => Kernel::Avx2,
        }
    }

    /// Whether all eight of the key's bits are set in `block`: a call of
    /// the AVX2 or the scalar function. Both out of line, so that this
    /// match stays small enough to inline into any caller's loop.
    #[inline]
    pub(crate) fn contains(self, block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        match self {
            Self::Scalar => scalar_split_contains(block, seed),
            Self::Avx2(avx2) => avx2.split_contains(block, seed, &SALT),
        }
    }

    /// Sets the key's eight bits in `block`; whether any was clear. Same
    /// bits and answer with every kernel; a call, as in `contains`. (With
    /// the scalar body inline, a user's loop of one-key inserts was left
    /// with this function out of line: 66 instructions a key under
    /// callgrind; 38 now that it inlines.)
    #[inline]
    pub(crate) fn insert(self, block: &mut [u64; SPLIT_WORDS], seed: u32) -> bool {
        match self {
            Self::Scalar => scalar_split_insert(block, seed),
            Self::Avx2(avx2) => avx2.split_insert(block, seed, &SALT),
        }
    }

    /// Runs `batch` with this kernel; with AVX2, the whole batch runs in
    /// one AVX2-compiled function.
    // Always inlined, and so must `batch.run` be (see `Select::run_batch`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn run_batch<B: SplitBatch>(self, batch: B) -> B::Output {
        match self {
            Self::Scalar => batch.run(ScalarSplit),
            Self::Avx2(avx2) => avx2.run(|| batch.run(avx2)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::{BLOCK_WORDS, Block, BlockStorage};

    #[test]
    fn multipliers_are_distinct_odd_and_pinned() {
        let mut sorted = MULTIPLIERS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), MULTIPLIERS.len());
        assert!(MULTIPLIERS.iter().all(|m| m % 2 == 1));
        // Part of the format: these decide which bits a key sets.
        assert_eq!(MULTIPLIERS[0], (mix64(1) >> 32) as u32 | 1);
        assert_eq!(MULTIPLIERS[0], 0x5692_161d);
    }

    /// Random cases per kernel check (fewer under Miri, which is slow).
    const RANDOM_CASES: usize = if cfg!(miri) { 200 } else { 20_000 };

    /// A seeded stream of random 64-bit values for the kernel checks.
    fn random_stream(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state = mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        }
    }

    /// Every kernel this CPU runs, for keys of `num_hashes` probes placed
    /// by `probes`: the scalar one, and AVX2 (with its AVX-512 insert, and
    /// without it, where the CPU has AVX-512F).
    fn every_kernel(num_hashes: u32, probes: BlockProbes) -> Vec<Select> {
        let mut kernels = vec![Select::with(None, num_hashes, probes)];
        if let Some(avx2) = Avx2::detect() {
            kernels.push(Select::with(Some(avx2), num_hashes, probes));
            if avx2.uses_avx512() {
                kernels.push(Select::with(
                    Some(avx2.without_avx512()),
                    num_hashes,
                    probes,
                ));
            }
        }
        kernels
    }

    /// The bits of a key, from the definition of each layout, probe by
    /// probe (independently of the kernels' masks and tables): as (word,
    /// bit) of the block's eight 64-bit words.
    fn reference_bits(seed: u32, num_hashes: u32, probes: BlockProbes) -> Vec<(usize, u32)> {
        (0..num_hashes as usize)
            .map(|j| match probes {
                BlockProbes::Independent => {
                    let q = seed.wrapping_mul(MULTIPLIERS[j]) >> 23;
                    ((q >> 6) as usize, q & 63)
                }
                BlockProbes::Striped => {
                    let rotation = ((seed >> 6) & 7) as usize;
                    let word = (rotation + j) % 8;
                    let round = j / 8;
                    (word, seed.wrapping_mul(MULTIPLIERS[8 * round + word]) >> 26)
                }
            })
            .collect()
    }

    /// A block array holding `blocks`, for keys of `num_hashes` probes.
    fn storage_of(blocks: &[[u64; BLOCK_WORDS]], kernel: Select) -> KeyBlocks {
        let mut storage = BlockStorage::<Block>::zeroed(blocks.len()).unwrap();
        for (block, words) in storage.blocks_mut().iter_mut().zip(blocks) {
            block.0 = *words;
        }
        storage.with_params(kernel.params())
    }

    /// A batch of one lookup and one insert of the same key.
    struct OneBlock<'a>(&'a mut [u64; BLOCK_WORDS], u32);

    impl BlockBatch for OneBlock<'_> {
        type Output = (bool, bool);

        #[allow(clippy::inline_always)]
        #[inline(always)]
        fn run(self, kernel: impl BlockKernel) -> (bool, bool) {
            let found = kernel.contains(self.0, self.1);
            (found, kernel.insert(self.0, self.1))
        }
    }

    /// Checks every kernel against the reference for `probes`, on random
    /// sparse and dense blocks, seeds and every k the layout takes: the
    /// answer of a lookup, the bits and answer of an insert (and of the
    /// same insert again), through the one-key functions (the block found
    /// from the hash in an array of three; and a view's, of aligned words
    /// and of bytes) and as a batch.
    fn kernels_match_reference(probes: BlockProbes, max_hashes: u32) {
        let mut next = random_stream(0x1234_5678_9abc_def0 ^ u64::from(max_hashes));
        for case in 0..RANDOM_CASES {
            let k = 1 + (case as u32 % max_hashes);
            let block: [u64; BLOCK_WORDS] = core::array::from_fn(|_| match case % 3 {
                0 => next() & next() & next(),
                1 => next() | next() | next(),
                _ => next(),
            });
            let hash = next();
            let seed = block_seed(hash);
            let bits = reference_bits(seed, k, probes);
            let present = bits.iter().all(|&(w, b)| block[w] >> b & 1 == 1);
            let mut inserted = block;
            for &(w, b) in &bits {
                inserted[w] |= 1 << b;
            }
            for kernel in every_kernel(k, probes) {
                let context = format!("case {case} k={k} {kernel:?}");
                let mut blocks = storage_of(&[block; 3], kernel);
                let index = block_index(hash, 3);
                assert_eq!(Select::contains_key(&blocks, hash), present, "{context}");
                // A view's one-key lookups: in place, and from bytes.
                let words = [block; 3];
                let aligned = KeyView::aligned(&words, kernel.params());
                assert_eq!(
                    Select::view_contains_key(&aligned, hash),
                    present,
                    "{context}"
                );
                let bytes = words.map(|block| block.map(u64::to_le_bytes));
                let decoded = KeyView::bytes(&bytes, kernel.params());
                assert_eq!(
                    Select::view_contains_key(&decoded, hash),
                    present,
                    "{context}"
                );
                assert_eq!(Select::insert_key(&mut blocks, hash), !present, "{context}");
                assert_eq!(blocks.block(index), &inserted, "{context}");
                assert!(Select::contains_key(&blocks, hash), "{context}");
                assert!(!Select::insert_key(&mut blocks, hash), "{context}");
                assert_eq!(blocks.block(index), &inserted, "{context}");
                let untouched = (0..3).filter(|&i| i != index);
                assert!(
                    untouched.into_iter().all(|i| blocks.block(i) == &block),
                    "{context}"
                );
                let mut batched = block;
                let answers = kernel.run_batch(blocks.params(), OneBlock(&mut batched, seed));
                assert_eq!(answers, (present, !present), "{context}, batched");
                assert_eq!(batched, inserted, "{context}, batched");
            }
        }
    }

    #[test]
    fn independent_kernels_match_reference() {
        kernels_match_reference(BlockProbes::Independent, 64);
    }

    #[test]
    fn striped_kernels_match_reference() {
        kernels_match_reference(BlockProbes::Striped, 16);
    }

    /// Edge seeds (all zeros, all ones, each rotation alone) and hashes at
    /// the ends of the array, into empty and full blocks, for every k.
    #[test]
    fn kernels_handle_edge_keys() {
        let rotations = (0..8u32).map(|r| r << 6);
        let seeds: Vec<u32> = [0, u32::MAX, 1, 1 << 31]
            .into_iter()
            .chain(rotations)
            .collect();
        for (probes, max_hashes) in [(BlockProbes::Independent, 64), (BlockProbes::Striped, 16)] {
            // Under Miri (slow), the counts where the kernels change course.
            let counts: Vec<u32> = (1..=max_hashes)
                .filter(|k| !cfg!(miri) || [1, 6, 8, 9, 16, 17, 64].contains(k))
                .collect();
            for k in counts {
                for kernel in every_kernel(k, probes) {
                    for &seed in &seeds {
                        for high in [0, u64::MAX << 32] {
                            let hash = high | u64::from(seed);
                            let bits = reference_bits(seed, k, probes);
                            let mut blocks = storage_of(&[[0; BLOCK_WORDS]; 5], kernel);
                            let index = block_index(hash, 5);
                            assert_eq!(index, if high == 0 { 0 } else { 4 });
                            assert!(Select::insert_key(&mut blocks, hash));
                            let ones = blocks.block(index).iter().map(|w| w.count_ones());
                            let distinct: std::collections::HashSet<_> = bits.iter().collect();
                            assert_eq!(ones.sum::<u32>() as usize, distinct.len());
                            assert!(Select::contains_key(&blocks, hash));
                            let full = storage_of(&[[u64::MAX; BLOCK_WORDS]; 5], kernel);
                            assert!(Select::contains_key(&full, hash), "{kernel:?}");
                        }
                    }
                }
            }
        }
    }

    /// Every bit of the block is reachable by a striped key: over seeds,
    /// one probe (the first round's, in the rotation's word) and the
    /// second round's (k = 16) each reach all 512 positions.
    // Arithmetic, not memory: the kernels' unsafe code runs under Miri in the
    // tests above.
    #[cfg_attr(miri, ignore)]
    #[test]
    fn every_striped_position_is_reachable() {
        let seeds = 1 << 16;
        for kernel in every_kernel(16, BlockProbes::Striped) {
            for k in [1, 16] {
                let kernel = Select::with(kernel.avx2, k, BlockProbes::Striped);
                let mut reached = [0u64; BLOCK_WORDS];
                for seed in 0..seeds {
                    let seed = mix64(seed) as u32;
                    let mut block = [0u64; BLOCK_WORDS];
                    let params = kernel.params();
                    let (_, new) = kernel.run_batch(&params, OneBlock(&mut block, seed));
                    assert!(new);
                    if k == 16 {
                        // The second round's bits alone: the first round's
                        // removed (it sets one bit in every word).
                        let first = reference_bits(seed, 8, BlockProbes::Striped);
                        for (w, b) in first {
                            let second = reference_bits(seed, 16, BlockProbes::Striped)[8..]
                                .iter()
                                .any(|&(w2, b2)| (w2, b2) == (w, b));
                            if !second {
                                block[w] &= !(1 << b);
                            }
                        }
                    }
                    for (reached, word) in reached.iter_mut().zip(block) {
                        *reached |= word;
                    }
                }
                assert_eq!(reached, [u64::MAX; BLOCK_WORDS], "k={k} {kernel:?}");
            }
        }
    }

    #[test]
    fn striped_activity_rows() {
        // Row r of k mod 8 = e probes: the e words from r on, cyclically.
        let stripes = probes::Stripes::new(3);
        assert_eq!(stripes.rounds, 1);
        assert_eq!(stripes.active[0], [1, 1, 1, 0, 0, 0, 0, 0]);
        assert_eq!(stripes.active[6], [1, 0, 0, 0, 0, 0, 1, 1]);
        let sixteen = probes::Stripes::new(16);
        assert_eq!((sixteen.rounds, sixteen.active[5]), (2, [1; 8]));
        assert_eq!(probes::Stripes::new(9).active[7], [0, 0, 0, 0, 0, 0, 0, 1]);
    }

    #[test]
    fn salts_are_parquets() {
        // The Parquet specification's eight salts, in order: part of the
        // split-block format.
        assert_eq!(SALT[0], 0x47b6_137b);
        assert_eq!(SALT[7], 0x5c6b_fb31);
        assert!(SALT.iter().all(|salt| salt % 2 == 1));
    }

    /// The split-block bit-by-bit reference: word w (32 bits) holds bit
    /// `(seed · SALT[w]) >> 27`.
    fn split_reference(block: &[u64; SPLIT_WORDS], seed: u32) -> bool {
        SALT.iter().enumerate().all(|(w, &salt)| {
            let word = (block[w / 2] >> (32 * (w % 2))) as u32;
            word >> (seed.wrapping_mul(salt) >> 27) & 1 == 1
        })
    }

    /// A batch of one lookup and one insert of the same key.
    struct OneSplit<'a>(&'a mut [u64; SPLIT_WORDS], u32);

    impl SplitBatch for OneSplit<'_> {
        type Output = (bool, bool);

        #[allow(clippy::inline_always)]
        #[inline(always)]
        fn run(self, kernel: impl SplitKernel) -> (bool, bool) {
            let found = kernel.contains(self.0, self.1);
            (found, kernel.insert(self.0, self.1))
        }
    }

    /// Checks a split-block kernel against the reference and the scalar
    /// insert on random sparse and dense blocks and seeds, one key at a
    /// time and as a batch.
    fn split_matches_reference(kernel: SplitSelect) {
        let mut next = random_stream(0x5b1f_b10c_0000_0001);
        for case in 0..RANDOM_CASES {
            let mut block: [u64; SPLIT_WORDS] = core::array::from_fn(|_| match case % 3 {
                0 => next() & next(),
                1 => next() | next() | next() | next(),
                _ => next(),
            });
            let seed = next() as u32;
            let present = split_reference(&block, seed);
            assert_eq!(kernel.contains(&block, seed), present, "case {case}");
            let mut reference = block;
            assert_eq!(scalar::split_insert(&mut reference, seed, &SALT), !present);
            assert!(split_reference(&reference, seed));
            let mut batched = block;
            assert_eq!(kernel.insert(&mut block, seed), !present, "case {case}");
            assert_eq!(block, reference, "case {case}");
            assert!(!kernel.insert(&mut block, seed), "case {case}");
            assert_eq!(block, reference, "case {case}");
            let answers = kernel.run_batch(OneSplit(&mut batched, seed));
            assert_eq!(answers, (present, !present), "case {case}, batched");
            assert_eq!(batched, reference, "case {case}, batched");
        }
    }

    #[test]
    fn split_scalar_matches_reference() {
        split_matches_reference(SplitSelect::Scalar);
    }

    #[test]
    fn split_avx2_matches_scalar() {
        let Ok(avx2) = Kernel::Avx2.select_split() else {
            eprintln!("AVX2 not available: skipped");
            return;
        };
        assert_eq!(avx2, SplitSelect::detect());
        split_matches_reference(avx2);
    }
}
