//! The one implementation of the blocked layouts, `BlockedBloomFilter`'s
//! 512-bit blocks and `SplitBlockBloomFilter`'s 256-bit ones: [`Blocks`],
//! generic over a [`Layout`] that supplies only what differs (the block,
//! the kernels, the exact theory, whether k is in the header), and the
//! newtype each public type is ([`block_filter!`]). With it: the block and
//! in-block seed a key hash maps to, the batched operations that prefetch
//! the blocks of the keys ahead, the rounding of an explicit size to whole
//! blocks, and the block array's header checks and reading.

use std::fmt;
use std::io::{Read, Write};

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::memory::{addressable, check_memory};
use filterlab_core::sizing::{SizedFor, hashes_from_header};
use filterlab_core::{Error, ErrorKind, FilterKind, KeyHasher, prefetch};

use crate::blocks::{BLOCK_WORDS, Block, BlockStorage, SPLIT_WORDS, WordBlock};
use crate::common::{Array, WordArray, check_counter, debug_summary, sized_for};
pub(crate) use crate::kernel::probes::{block_index, block_seed};
use crate::kernel::{BlockBatch, BlockKernel, Kernel, SplitBatch, SplitKernel};
use crate::sizing::BloomSizing;
use crate::words::{Word, count_ones};

/// Keys ahead of the one being probed whose block a batched operation
/// prefetches (a power of two: the ring of pending block indexes).
/// Measured on a 256 MiB blocked filter against random reads of a 256 MiB
/// array: 8 ahead cost 1.98x the reads, 16 1.60x, 32 1.23x, 64 1.06x, 128
/// 1.00x.
const PREFETCH_AHEAD: usize = 64;

/// Drives a batched operation over `hashes`: calls `step(key, prefetch)`
/// first with only the blocks of the first [`PREFETCH_AHEAD`] keys to
/// prefetch, then for each key `i` in order with `Some((i, its block))` and
/// the block of key `i + PREFETCH_AHEAD`, if any, to prefetch. Each block
/// index is computed once and waits in a small ring for its key's turn.
#[allow(clippy::inline_always)]
#[inline(always)]
fn pipelined(
    num_blocks: u64,
    hashes: &[u64],
    mut step: impl FnMut(Option<(usize, usize)>, Option<usize>),
) {
    let mut ring = [0usize; PREFETCH_AHEAD];
    for (slot, &hash) in ring.iter_mut().zip(hashes) {
        *slot = block_index(hash, num_blocks);
        step(None, Some(*slot));
    }
    for i in 0..hashes.len() {
        let slot = &mut ring[i % PREFETCH_AHEAD];
        let index = *slot;
        let ahead = hashes.get(i + PREFETCH_AHEAD).map(|&ahead| {
            *slot = block_index(ahead, num_blocks);
            *slot
        });
        step(Some((i, index)), ahead);
    }
}

/// Inserts the keys of `hashes` into `blocks` (`num_blocks` of them) with
/// `insert(block, seed)`, which sets the key's bits and says whether any
/// was clear; returns how many keys were new.
// Always inlined, like `pipelined`: a caller compiled for AVX2 then runs
// the whole loop, kernel included, as AVX2 code.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn insert_batch<B: WordBlock, P>(
    blocks: &mut BlockStorage<B, P>,
    num_blocks: u64,
    hashes: &[u64],
    mut insert: impl FnMut(&mut B::Words, u32) -> bool,
) -> usize {
    let mut new = 0;
    pipelined(num_blocks, hashes, |key, ahead| {
        if let Some(ahead) = ahead {
            prefetch(blocks.block(ahead));
        }
        if let Some((i, index)) = key {
            new += usize::from(insert(blocks.block_mut(index), block_seed(hashes[i])));
        }
    });
    new
}

/// Where lookups read a filter's blocks from: its own aligned storage, or
/// the payload a view borrows, as aligned words or as little-endian bytes
/// at any alignment. The lookup code is written once over it.
pub(crate) trait BlockSource {
    /// A block's words, `[u64; WORDS]`.
    type Words;
    /// Blocks in the array.
    fn num_blocks(&self) -> usize;
    /// `test` of block `index`'s words.
    fn read<R>(&self, index: usize, test: impl FnOnce(&Self::Words) -> R) -> R;
    /// Hints the cache to fetch block `index`.
    fn prefetch(&self, index: usize);
}

impl<B: WordBlock, P> BlockSource for BlockStorage<B, P> {
    type Words = B::Words;

    #[inline]
    fn num_blocks(&self) -> usize {
        self.blocks().len()
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn read<R>(&self, index: usize, test: impl FnOnce(&B::Words) -> R) -> R {
        test(self.block(index))
    }

    #[inline]
    fn prefetch(&self, index: usize) {
        prefetch(self.block(index));
    }
}

/// A borrowed payload whose words are aligned and in the CPU's byte order:
/// its blocks are read in place.
impl<const N: usize> BlockSource for [[u64; N]] {
    type Words = [u64; N];

    #[inline]
    fn num_blocks(&self) -> usize {
        self.len()
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn read<R>(&self, index: usize, test: impl FnOnce(&[u64; N]) -> R) -> R {
        test(&self[index])
    }

    #[inline]
    fn prefetch(&self, index: usize) {
        prefetch(&self[index]);
    }
}

/// A borrowed payload at any alignment or on a big-endian CPU: each block
/// read is decoded from its little-endian words on the stack.
impl<const N: usize> BlockSource for [[[u8; 8]; N]] {
    type Words = [u64; N];

    #[inline]
    fn num_blocks(&self) -> usize {
        self.len()
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn read<R>(&self, index: usize, test: impl FnOnce(&[u64; N]) -> R) -> R {
        test(&self[index].map(u64::from_le_bytes))
    }

    #[inline]
    fn prefetch(&self, index: usize) {
        prefetch(&self[index]);
    }
}

/// The blocks of `payload` (a whole number of them) read in place: where
/// they are aligned to 8 bytes and the CPU is little-endian.
pub(crate) fn aligned_blocks<const N: usize>(payload: &[u8]) -> Option<&[[u64; N]]>
where
    [u64; N]: bytemuck::Pod,
{
    let blocks = bytemuck::try_cast_slice::<u8, [u64; N]>(payload).ok();
    blocks.filter(|_| cfg!(target_endian = "little"))
}

/// The blocks of `payload` as little-endian bytes, at any alignment.
pub(crate) fn le_blocks<const N: usize>(payload: &[u8]) -> &[[[u8; 8]; N]] {
    payload.as_chunks::<8>().0.as_chunks::<N>().0
}

/// A view's blocks: aligned words read in place, or little-endian bytes
/// decoded block by block.
#[derive(Clone, Copy)]
pub(crate) enum ViewBlocks<'a, const N: usize> {
    Aligned(&'a [[u64; N]]),
    Bytes(&'a [[[u8; 8]; N]]),
}

impl<'a, const N: usize> ViewBlocks<'a, N>
where
    [u64; N]: bytemuck::Pod,
{
    /// The blocks of `payload`: in place where they can be.
    pub(crate) fn of(payload: &'a [u8]) -> Self {
        aligned_blocks(payload).map_or_else(|| Self::Bytes(le_blocks(payload)), Self::Aligned)
    }
}

/// Looks the keys of `hashes` up in `blocks` (a view's), as layout `L`'s
/// batches do, into `found`.
pub(crate) fn view_batch<L: Layout, S: BlockSource<Words = Words<L>> + ?Sized>(
    (kernel, params): (&L::Kernel, &L::Params),
    blocks: &S,
    hashes: &[u64],
    found: &mut [bool],
) {
    let lookups = Lookups {
        blocks,
        num_blocks: blocks.num_blocks() as u64,
        hashes,
        found,
    };
    L::contains_batch(kernel, params, lookups);
}

/// Sets `found[i]` to `contains(block, seed)` for the key of `hashes[i]`,
/// for as many keys as both slices hold.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn contains_batch<S: BlockSource + ?Sized>(
    blocks: &S,
    num_blocks: u64,
    hashes: &[u64],
    found: &mut [bool],
    contains: impl Fn(&S::Words, u32) -> bool,
) {
    let count = hashes.len().min(found.len());
    let hashes = &hashes[..count];
    pipelined(num_blocks, hashes, |key, ahead| {
        if let Some(ahead) = ahead {
            blocks.prefetch(ahead);
        }
        if let Some((i, index)) = key {
            let seed = block_seed(hashes[i]);
            found[i] = blocks.read(index, |block| contains(block, seed));
        }
    });
}

/// `num_blocks` as an index range: refused as `TooLarge` where `usize` is
/// too small.
pub(crate) fn address_blocks(num_blocks: u64) -> Result<usize, Error> {
    addressable(num_blocks, "block array")
}

/// `requested` bits rounded up to whole blocks of `block_bits`, within
/// `max_memory` bytes; `filter` names the filter in the error for zero bits.
pub(crate) fn whole_blocks(
    requested: u64,
    block_bits: u32,
    max_memory: u64,
    filter: &str,
) -> Result<u64, Error> {
    if requested == 0 {
        return Err(Error::invalid(format!("a {filter} needs at least 1 bit")));
    }
    let block_bits = u64::from(block_bits);
    let bits = requested
        .div_ceil(block_bits)
        .checked_mul(block_bits)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::TooLarge,
                "no whole number of blocks holds that many bits",
            )
        })?;
    check_memory(bits / 8, max_memory, "the block array")?;
    Ok(bits)
}

/// The block count of a header whose first two parameters are the number
/// of blocks and their size in bits: nonzero, blocks of `block_bits` (the
/// only size this build reads), a bit count that fits a `u64`, and a payload
/// of exactly the blocks' bytes.
pub(crate) fn blocks_from_header(header: &Header, block_bits: u32) -> Result<u64, Error> {
    let invalid = |what: String| Error::new(ErrorKind::InvalidHeader, what);
    let num_blocks = header.param(0, "num_blocks")?;
    if num_blocks == 0 {
        return Err(invalid("zero blocks".into()));
    }
    let found = header.param(1, "block_bits")?;
    if found != u64::from(block_bits) {
        return Err(invalid(format!(
            "{found}-bit blocks; this build reads {block_bits}-bit blocks"
        )));
    }
    // `num_bits()` must fit in a u64, not only the payload's bytes.
    let num_bits = num_blocks
        .checked_mul(u64::from(block_bits))
        .ok_or_else(|| invalid(format!("{num_blocks} blocks")))?;
    header.expect_payload_len(num_bits / 8)?;
    Ok(num_blocks)
}

/// Reads the `num_blocks` blocks of a payload and checks the header's item
/// counter against their bits set. Memory grows only as bytes arrive.
pub(crate) fn read_blocks<B: WordBlock, R: Read>(
    input: &mut FrameReader<R>,
    header: &Header,
    num_blocks: u64,
) -> Result<BlockStorage<B>, Error> {
    let blocks = BlockStorage::read(input, address_blocks(num_blocks)?)?;
    check_counter(header.items, count_ones(blocks.words()))?;
    Ok(blocks)
}

/// The public face of a layout, written by [`block_filter!`] from its
/// arguments: the type's name, configuration, format kind and block size.
pub(crate) trait Identity {
    /// The configuration the public type exposes (and `Persist` compares).
    type Config: Copy + PartialEq + fmt::Debug;
    /// Bits per block.
    const BLOCK_BITS: u32;
    /// The format's kind.
    const KIND: FilterKind;
    /// The public type's name, for `Debug`, errors and sizing records.
    const NAME: &'static str;
}

/// What a blocked layout decides; everything else about a filter of it
/// is [`Blocks`], written once: its storage block, its kernels, its probes
/// where it offers a choice, its exact theory, and what its header records.
pub(crate) trait Layout: Identity {
    /// One block of the array.
    type Block: WordBlock;
    /// The kernel, selected once per filter (built or read).
    type Kernel: Copy + fmt::Debug;
    /// Where a key's bits go in its block, when the layout offers a choice
    /// (part of the configuration and the format); `()` when it does not.
    type Probes: Copy + fmt::Debug + PartialEq + Eq + std::hash::Hash;
    /// What the kernel reads beside the blocks, kept with them in the
    /// storage (see [`BlockStorage`]): made from the shape.
    type Params: Clone;
    /// k when the layout fixes it (the header then does not record it).
    const FIXED_HASHES: Option<u32>;

    /// The public configuration of `shape`.
    fn config(shape: Shape<Self::Probes>) -> <Self as Identity>::Config;
    /// `kernel` ready for keys of `shape`; the fastest this CPU supports
    /// when `None`.
    ///
    /// # Errors
    ///
    /// `InvalidParameter` for a kernel this CPU cannot run.
    fn select(kernel: Option<Kernel>, shape: &Shape<Self::Probes>) -> Result<Self::Kernel, Error>;
    /// The public name of a selected kernel.
    fn kernel(kernel: &Self::Kernel) -> Kernel;
    /// What `kernel` reads beside the blocks.
    fn params(kernel: &Self::Kernel) -> Self::Params;
    /// Sets the bits of the key with this hash in its block of `blocks`;
    /// whether any was clear.
    fn insert(kernel: &Self::Kernel, blocks: &mut Storage<Self>, hash: u64) -> bool;
    /// Whether the bits of the key with this hash are all set in its block.
    fn contains(kernel: &Self::Kernel, blocks: &Storage<Self>, hash: u64) -> bool;
    /// Inserts the keys of `hashes` into `blocks`, prefetching the blocks
    /// ahead ([`insert_batch`]); how many were new.
    fn insert_batch(kernel: &Self::Kernel, blocks: &mut Storage<Self>, hashes: &[u64]) -> usize;
    /// Looks the keys of `hashes` up in `lookups.blocks` (an owned
    /// filter's or a view's, of keys with the probes `params`), prefetching
    /// the blocks ahead ([`contains_batch`]), into `found`.
    fn contains_batch<S: BlockSource<Words = Words<Self>> + ?Sized>(
        kernel: &Self::Kernel,
        params: &Self::Params,
        lookups: Lookups<'_, S>,
    );
    /// What a view's lookups read: its payload's blocks (aligned words in
    /// place, or little-endian bytes), with whatever the one-key lookup
    /// reads beside them.
    type ViewKeys<'a>: Clone;
    /// The view keys of `payload`, a whole number of blocks, for a kernel
    /// with `params`.
    fn view_keys<'a>(payload: &'a [u8], params: &Self::Params) -> Self::ViewKeys<'a>;
    /// Whether `keys` reads its blocks in place (not decoded from bytes).
    fn in_place(keys: &Self::ViewKeys<'_>) -> bool;
    /// Whether the bits of the key with this hash are all set in its block
    /// of a view: the owned filter's one-key lookup.
    fn contains_view_key(kernel: &Self::Kernel, keys: &Self::ViewKeys<'_>, hash: u64) -> bool;
    /// A view's batched lookup, as [`contains_batch`](Self::contains_batch).
    fn contains_view_batch(
        kernel: &Self::Kernel,
        params: &Self::Params,
        keys: &Self::ViewKeys<'_>,
        hashes: &[u64],
        found: &mut [bool],
    );
    /// The FPP given the bits set in the blocks' `words` now (the words
    /// as [`Word`]s: an owned filter's or a view's bytes): exact for the
    /// instance.
    fn fpp_given_fill<W: Word>(words: &[W], shape: &Shape<Self::Probes>) -> f64;
    /// The exact FPP after `items` distinct inserts.
    fn theoretical_fpp(shape: &Shape<Self::Probes>, items: u64) -> Option<f64>;
    /// The distinct items a block with `set` bits most likely holds.
    fn estimate_items(set: u64, shape: &Shape<Self::Probes>) -> f64;
    /// The probes a sizing chose.
    fn probes_of(sizing: &BloomSizing) -> Self::Probes;
    /// The header parameter recording `probes`, after the sized-for record;
    /// `None` for probes files record by leaving it out.
    fn probes_param(probes: Self::Probes) -> Option<u64>;
    /// The probes a header records in its parameters past the sized-for
    /// record (`extra`, empty when there are none).
    ///
    /// # Errors
    ///
    /// `InvalidHeader` for parameters that record no probes this build
    /// knows.
    fn probes_from_params(extra: &[u64]) -> Result<Self::Probes, Error>;
}

/// A block's words in layout `L`: `[u64; WORDS]`.
pub(crate) type Words<L> = <<L as Layout>::Block as WordBlock>::Words;

/// The storage of a filter of layout `L`: its blocks with its kernel's
/// parameters.
pub(crate) type Storage<L> = BlockStorage<<L as Layout>::Block, <L as Layout>::Params>;

/// What the sizing records of layout `L` say of its array: whole blocks,
/// never a power of two, `classic` its textbook FPP at (bits, k, items).
pub(crate) const fn array_of<L: Identity>(classic: fn(u64, u32, u64) -> f64) -> Array {
    Array {
        filter: L::NAME,
        unit_bits: L::BLOCK_BITS as u64,
        power_of_two: false,
        classic,
    }
}

/// A batched lookup: the blocks, the keys' hashes and where the answers go
/// (as many as hashes). The kernels run it ([`BlockBatch`] and
/// [`SplitBatch`]) with their block test, inside an AVX2-compiled function
/// where they have one.
pub(crate) struct Lookups<'a, S: ?Sized> {
    pub(crate) blocks: &'a S,
    pub(crate) num_blocks: u64,
    pub(crate) hashes: &'a [u64],
    pub(crate) found: &'a mut [bool],
}

impl<S: BlockSource + ?Sized> Lookups<'_, S> {
    /// Runs the lookups with the block test `contains` ([`contains_batch`]).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn with(self, contains: impl Fn(&S::Words, u32) -> bool) {
        contains_batch(
            self.blocks,
            self.num_blocks,
            self.hashes,
            self.found,
            contains,
        );
    }
}

impl<S: BlockSource<Words = [u64; BLOCK_WORDS]> + ?Sized> BlockBatch for Lookups<'_, S> {
    type Output = ();

    // Always inlined into the kernel's dispatch, which may be compiled for
    // AVX2 (see `Select::run_batch`).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self, kernel: impl BlockKernel) {
        self.with(|block: &[u64; BLOCK_WORDS], seed| kernel.contains(block, seed));
    }
}

/// A batched insert into 512-bit blocks, run with the selected kernel.
pub(crate) struct Inserts<'a, P> {
    pub(crate) blocks: &'a mut BlockStorage<Block, P>,
    pub(crate) hashes: &'a [u64],
}

impl<P> BlockBatch for Inserts<'_, P> {
    type Output = usize;

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self, kernel: impl BlockKernel) -> usize {
        let num_blocks = self.blocks.blocks().len() as u64;
        insert_batch(self.blocks, num_blocks, self.hashes, |block, seed| {
            kernel.insert(block, seed)
        })
    }
}

impl<S: BlockSource<Words = [u64; SPLIT_WORDS]> + ?Sized> SplitBatch for Lookups<'_, S> {
    type Output = ();

    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn run(self, kernel: impl SplitKernel) {
        self.with(|block: &[u64; SPLIT_WORDS], seed| kernel.contains(block, seed));
    }
}

/// A blocked filter's size, k, hasher and probes (`P`, the layout's
/// [`Layout::Probes`]), whatever its layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shape<P> {
    pub(crate) num_blocks: u64,
    pub(crate) num_hashes: u32,
    pub(crate) hasher: KeyHasher,
    pub(crate) probes: P,
}

impl<P> Shape<P> {
    /// The shape of a filter of `sizing` with `hasher`, for blocks of `L`.
    pub(crate) fn of<L: Layout<Probes = P>>(sizing: &BloomSizing, hasher: KeyHasher) -> Self {
        Self {
            num_blocks: sizing.num_bits / u64::from(L::BLOCK_BITS),
            num_hashes: sizing.num_hashes,
            hasher,
            probes: L::probes_of(sizing),
        }
    }
}

/// A blocked Bloom filter of layout `L`: the one implementation behind
/// `BlockedBloomFilter` and `SplitBlockBloomFilter`, each a newtype of it
/// ([`block_filter!`]).
///
/// The storage comes first (`repr(C)`), so that the pointer a one-key
/// kernel function takes is the filter's own: a caller keeps one pointer
/// live across the call, not two (measured: one-key inserts 51 → 47
/// instructions).
#[derive(Clone)]
#[repr(C)]
pub(crate) struct Blocks<L: Layout> {
    pub(crate) storage: Storage<L>,
    pub(crate) shape: Shape<L::Probes>,
    /// Inserts that returned `true`: at most the bits set, since each set a
    /// clear bit (the invariant readers and merges keep, so `+= 1` cannot
    /// overflow).
    pub(crate) len: u64,
    pub(crate) sized_for: SizedFor,
    kernel: L::Kernel,
}

impl<L: Layout> Blocks<L> {
    /// An empty filter of `sizing` with `hasher` and `kernel` (the fastest
    /// when `None`).
    pub(crate) fn build(
        sizing: &BloomSizing,
        hasher: KeyHasher,
        kernel: Option<Kernel>,
    ) -> Result<Self, Error> {
        let shape = Shape::of::<L>(sizing, hasher);
        let kernel = L::select(kernel, &shape)?;
        Ok(Self {
            storage: BlockStorage::zeroed(address_blocks(shape.num_blocks)?)?
                .with_params(L::params(&kernel)),
            kernel,
            shape,
            len: 0,
            sized_for: sized_for(sizing),
        })
    }

    pub(crate) fn config(&self) -> <L as Identity>::Config {
        L::config(self.shape)
    }

    /// Adds a pre-hashed key; whether it was new.
    #[inline]
    pub(crate) fn insert_hash(&mut self, hash: u64) -> bool {
        let new = L::insert(&self.kernel, &mut self.storage, hash);
        self.len += u64::from(new);
        new
    }

    #[inline]
    pub(crate) fn contains_hash(&self, hash: u64) -> bool {
        L::contains(&self.kernel, &self.storage, hash)
    }

    pub(crate) fn insert_hashes(&mut self, hashes: &[u64]) -> usize {
        let new = L::insert_batch(&self.kernel, &mut self.storage, hashes);
        self.len += new as u64;
        new
    }

    pub(crate) fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let lookups = Lookups {
            blocks: &self.storage,
            num_blocks: self.shape.num_blocks,
            hashes,
            found,
        };
        L::contains_batch(&self.kernel, self.storage.params(), lookups);
    }

    pub(crate) fn clear(&mut self) {
        self.storage.words_mut().fill(0);
        self.len = 0;
    }

    pub(crate) fn expected_fpp(&self) -> f64 {
        L::fpp_given_fill(self.storage.words(), &self.shape)
    }

    pub(crate) fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        L::theoretical_fpp(&self.shape, items)
    }

    pub(crate) fn kernel(&self) -> Kernel {
        L::kernel(&self.kernel)
    }

    pub(crate) fn set_kernel(&mut self, kernel: Kernel) -> Result<(), Error> {
        self.kernel = L::select(Some(kernel), &self.shape)?;
        self.storage.set_params(L::params(&self.kernel));
        Ok(())
    }

    pub(crate) fn num_bits(&self) -> u64 {
        self.shape.num_blocks * u64::from(L::BLOCK_BITS)
    }

    pub(crate) fn set_bits(&self) -> u64 {
        count_ones(self.storage.words())
    }

    /// Bits set and the distinct items estimated from them, block by block,
    /// in one pass (a merge needs both).
    pub(crate) fn set_bits_and_estimate(&self) -> (u64, f64) {
        let blocks = self
            .storage
            .words()
            .chunks_exact(<L::Block as WordBlock>::WORDS);
        blocks.map(count_ones).fold((0, 0.0), |(bits, items), set| {
            (bits + set, items + L::estimate_items(set, &self.shape))
        })
    }

    pub(crate) fn header(&self) -> Header {
        let mut params = vec![self.shape.num_blocks, u64::from(L::BLOCK_BITS)];
        if L::FIXED_HASHES.is_none() {
            params.push(u64::from(self.shape.num_hashes));
        }
        params.extend(self.sized_for.params());
        params.extend(L::probes_param(self.shape.probes));
        Header {
            kind: L::KIND,
            hasher: self.shape.hasher,
            items: self.len,
            params,
            payload_len: self.shape.num_blocks * u64::from(L::BLOCK_BITS / 8),
        }
    }

    pub(crate) fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        out.write_words(self.storage.words())
    }

    /// The shape a header describes, and where its sized-for record starts.
    pub(crate) fn shape_from_header(header: &Header) -> Result<(Shape<L::Probes>, usize), Error> {
        let (num_hashes, sized_for_at) = match L::FIXED_HASHES {
            Some(k) => (k, 2),
            None => (hashes_from_header(header, 2)?, 3),
        };
        let extra = header.params.get(sized_for_at + 2..).unwrap_or_default();
        let probes = L::probes_from_params(extra)?;
        header.expect_params(sized_for_at + 2 + usize::from(L::probes_param(probes).is_some()))?;
        let num_blocks = blocks_from_header(header, L::BLOCK_BITS)?;
        SizedFor::from_header(header, sized_for_at)?;
        let shape = Shape {
            num_blocks,
            num_hashes,
            hasher: header.hasher,
            probes,
        };
        Ok((shape, sized_for_at))
    }

    pub(crate) fn config_from_header(header: &Header) -> Result<<L as Identity>::Config, Error> {
        Self::shape_from_header(header).map(|(shape, _)| L::config(shape))
    }

    /// Reads the payload of a filter whose header was validated; starts
    /// with the fastest kernel.
    pub(crate) fn read_payload<R: Read>(
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let (shape, sized_for_at) = Self::shape_from_header(header)?;
        let kernel = L::select(None, &shape)?;
        Ok(Self {
            storage: read_blocks(input, header, shape.num_blocks)?.with_params(L::params(&kernel)),
            shape,
            len: header.items,
            sized_for: SizedFor::from_header(header, sized_for_at)?,
            kernel,
        })
    }

    /// The `Debug` summary (the block array itself can be gigabytes).
    pub(crate) fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = ("num_blocks", self.shape.num_blocks);
        let hashes = (self.shape.num_hashes, &self.shape.hasher);
        debug_summary(f, L::NAME, size, hashes, self.len, &self.sized_for)
            .field("kernel", &self.kernel())
            .field("set_bits", &self.set_bits())
            .finish_non_exhaustive()
    }
}

impl<L: Layout> PartialEq for Blocks<L> {
    /// Same configuration, counters and bits; the kernel does not matter.
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape
            && self.len == other.len
            && self.sized_for == other.sized_for
            && self.storage.words() == other.storage.words()
    }
}

impl<L: Layout> WordArray for Blocks<L> {
    type Config = <L as Identity>::Config;

    fn config(&self) -> Self::Config {
        Blocks::config(self)
    }

    fn words(&self) -> &[u64] {
        self.storage.words()
    }

    fn words_mut(&mut self) -> &mut [u64] {
        self.storage.words_mut()
    }

    fn items(&self) -> u64 {
        self.len
    }

    fn set_items(&mut self, items: u64) {
        self.len = items;
    }

    fn set_bits_and_estimate(&self) -> (u64, f64) {
        Blocks::set_bits_and_estimate(self)
    }
}

/// A public blocked filter type, `$filter`, a newtype around [`Blocks`] of
/// layout `$layout` with `$bits`-bit blocks, configuration `$config` and
/// format kind `FilterKind::$kind`: the layout's [`Identity`], and the
/// type's inherent methods, `Filter`, `Persist`, `Merge`, `Extend`,
/// `PartialEq`, `Debug`, serde and the common operations without a trait
/// import, each forwarding to the one implementation in [`Blocks`].
macro_rules! block_filter {
    ($filter:ident: $layout:ty, $config:ty, $kind:ident, $bits:literal) => {
        impl $crate::layout::Identity for $layout {
            type Config = $config;
            const BLOCK_BITS: u32 = $bits;
            const KIND: ::filterlab_core::FilterKind = ::filterlab_core::FilterKind::$kind;
            const NAME: &'static str = stringify!($filter);
        }

        impl $filter {
            /// Adds `key`; returns `true` when it was not already reported
            /// present (and counts it in `len`). A Bloom filter never
            /// refuses a key.
            #[inline]
            pub fn insert<K: ::filterlab_core::Key + ?Sized>(&mut self, key: &K) -> bool {
                let hash = self.0.shape.hasher.hash(key);
                self.0.insert_hash(hash)
            }

            /// Adds every key, hashing them in batches and prefetching the
            /// blocks ahead; returns how many were new. (`Extend` does the
            /// same without the count.)
            pub fn insert_many<I>(&mut self, keys: I) -> usize
            where
                I: IntoIterator,
                I::Item: ::filterlab_core::Key,
            {
                let hasher = self.0.shape.hasher;
                let Ok(new) = ::filterlab_core::for_each_batch(keys, &hasher, |hashes| {
                    Ok::<_, ::std::convert::Infallible>(self.0.insert_hashes(hashes))
                });
                new
            }

            /// The kernel that tests and sets a key's bits.
            pub fn kernel(&self) -> $crate::Kernel {
                self.0.kernel()
            }

            /// Switches the kernel (a filter read from bytes starts with the
            /// fastest one). Answers and bits do not change.
            ///
            /// # Errors
            ///
            /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
            /// when this CPU cannot run `kernel`; the filter is then unchanged.
            pub fn set_kernel(&mut self, kernel: $crate::Kernel) -> Result<(), ::filterlab_core::Error> {
                self.0.set_kernel(kernel)
            }

            #[doc = concat!("Bits in the array: ", stringify!($bits), " per block.")]
            pub fn num_bits(&self) -> u64 {
                self.0.num_bits()
            }

            #[doc = concat!(stringify!($bits), "-bit blocks in the array.")]
            pub fn num_blocks(&self) -> u64 {
                self.0.shape.num_blocks
            }

            /// Probes per key, all inside the key's block.
            pub fn num_hashes(&self) -> u32 {
                self.0.shape.num_hashes
            }

            /// The FPP target the filter was sized for, if any.
            pub fn target_fpp(&self) -> Option<f64> {
                self.0.sized_for.fpp
            }

            /// Bits currently set.
            pub fn set_bits(&self) -> u64 {
                self.0.set_bits()
            }

            /// The fraction of bits set.
            pub fn fill_ratio(&self) -> f64 {
                self.set_bits() as f64 / self.num_bits() as f64
            }

            /// The number of distinct items estimated from the set bits:
            /// each block's most likely load given its bits set, summed.
            /// Meaningful after merges, when `len` is itself an estimate.
            /// Infinite when a block is full.
            pub fn estimated_len(&self) -> f64 {
                self.0.set_bits_and_estimate().1
            }

            /// This filter's configuration.
            pub fn config(&self) -> $config {
                self.0.config()
            }
        }

        impl ::filterlab_core::Membership for $filter {
            fn hasher(&self) -> &::filterlab_core::KeyHasher {
                &self.0.shape.hasher
            }

            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                self.0.contains_hash(hash)
            }

            /// Looks up with the blocks of the keys ahead prefetched, so
            /// that their memory accesses overlap; with AVX2 the whole
            /// batch runs in one AVX2-compiled loop.
            fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
                self.0.contains_hashes(hashes, found);
            }

            fn len(&self) -> usize {
                usize::try_from(self.0.len).unwrap_or(usize::MAX)
            }

            fn memory_usage(&self) -> usize {
                self.0.storage.allocated_bytes()
            }

            fn capacity(&self) -> Option<usize> {
                self.0.sized_for.capacity()
            }

            /// The FPP given the bits set in each block now: exact for this
            /// instance.
            fn expected_fpp(&self) -> f64 {
                self.0.expected_fpp()
            }

            /// The exact FPP after `items` distinct inserts: the block load
            /// Binomial(n, 1/b) mixed with the FPP of a block of each load.
            fn theoretical_fpp(&self, items: u64) -> Option<f64> {
                self.0.theoretical_fpp(items)
            }
        }

        impl ::filterlab_core::Filter for $filter {
            /// Never fails for a Bloom filter.
            #[inline]
            fn insert_hash(&mut self, hash: u64) -> Result<bool, ::filterlab_core::Error> {
                Ok(self.0.insert_hash(hash))
            }

            /// Inserts with the blocks of the keys ahead prefetched.
            fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, ::filterlab_core::Error> {
                Ok(self.0.insert_hashes(hashes))
            }

            fn clear(&mut self) {
                self.0.clear();
            }
        }

        impl ::filterlab_core::Persist for $filter {
            type Config = $config;
            const KIND: ::filterlab_core::FilterKind = ::filterlab_core::FilterKind::$kind;

            fn config(&self) -> Self::Config {
                self.0.config()
            }

            fn header(&self) -> ::filterlab_core::format::Header {
                self.0.header()
            }

            fn write_payload<W: ::std::io::Write>(
                &self,
                out: &mut ::filterlab_core::format::FrameWriter<W>,
            ) -> Result<(), ::filterlab_core::Error> {
                self.0.write_payload(out)
            }

            fn config_from_header(
                header: &::filterlab_core::format::Header,
            ) -> Result<Self::Config, ::filterlab_core::Error> {
                $crate::layout::Blocks::<$layout>::config_from_header(header)
            }

            fn read_payload<R: ::std::io::Read>(
                _config: Self::Config,
                header: &::filterlab_core::format::Header,
                input: &mut ::filterlab_core::format::FrameReader<R>,
            ) -> Result<Self, ::filterlab_core::Error> {
                $crate::layout::Blocks::read_payload(header, input).map(Self)
            }
        }

        impl ::filterlab_core::Merge for $filter {
            /// Bitwise OR. `len` becomes the estimate from the merged bits,
            /// clamped to [max(len_a, len_b), min(len_a + len_b, bits set)].
            fn union(&mut self, other: &Self) -> Result<(), ::filterlab_core::Error> {
                $crate::common::union(&mut self.0, &other.0)
            }

            /// Bitwise AND. `len` becomes the estimate from the remaining
            /// bits, clamped to [0, min(len_a, len_b, bits set)].
            fn intersect(&mut self, other: &Self) -> Result<(), ::filterlab_core::Error> {
                $crate::common::intersect(&mut self.0, &other.0)
            }
        }

        impl<K: ::filterlab_core::Key> Extend<K> for $filter {
            /// Inserts every key as
            #[doc = concat!("[`insert_many`](", stringify!($filter), "::insert_many) does.")]
            fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
                self.insert_many(keys);
            }
        }

        impl PartialEq for $filter {
            /// Same configuration, counters and bits; the kernel does not matter.
            fn eq(&self, other: &Self) -> bool {
                self.0 == other.0
            }
        }

        impl Eq for $filter {}

        impl ::std::fmt::Debug for $filter {
            /// A summary; the block array itself can be gigabytes.
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                self.0.debug(f)
            }
        }

        ::filterlab_core::serde_via_format!($filter);
        ::filterlab_core::inherent_methods!($filter: filter, write, read);
    };
}
pub(crate) use block_filter;

/// The builder of a blocked filter type, `$builder`, building `$filter` of
/// layout `$layout` (configuration `$config`): the struct, documented by
/// `$(#[$doc])*`, the setters `$setters` of the shared settings, the
/// `kernel` setter, `sizing`, `config` and `build`; after a `;`, fields of
/// the type's own settings (starting at their default). The type writes
/// its sizing, `sizing_for_fpp` and `sizing_for_bits`, and its own
/// setters itself.
macro_rules! block_builder {
    (
        $(#[$doc:meta])*
        $builder:ident => $filter:ident, $layout:ty, $config:ty, setters: $($setter:ident),+
        $(; $field:ident: $type:ty)*
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        #[must_use]
        pub struct $builder {
            base: ::filterlab_core::sizing::BuilderBase,
            kernel: Option<$crate::Kernel>,
            $($field: $type,)*
        }

        impl $builder {
            $crate::common::builder_methods!($($setter),+);

            ::filterlab_core::builder_setters! {
                /// The kernel (default: the fastest this CPU supports, see
                /// [`Kernel::detect`](crate::Kernel::detect)). Every kernel
                /// gives the same answers and bits.
                kernel(kernel: $crate::Kernel) => kernel = Some(kernel);
            }

            fn new(target: ::filterlab_core::sizing::Target) -> Self {
                Self {
                    base: ::filterlab_core::sizing::BuilderBase::new(target),
                    kernel: None,
                    $($field: Default::default(),)*
                }
            }

            /// The configuration this builder would produce (for
            /// [`Persist::read_from_expecting`](crate::Persist::read_from_expecting)),
            /// without allocating.
            ///
            /// # Errors
            ///
            /// As [`sizing`](Self::sizing).
            pub fn config(&self) -> Result<$config, ::filterlab_core::Error> {
                let shape = $crate::layout::Shape::of::<$layout>(&self.sizing()?, self.base.hasher);
                Ok(<$layout as $crate::layout::Layout>::config(shape))
            }

            /// Allocates the filter.
            ///
            /// # Errors
            ///
            /// As [`sizing`](Self::sizing);
            /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
            /// for a [`kernel`](Self::kernel) this CPU cannot run;
            /// [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge) when the
            /// allocator refuses the memory.
            pub fn build(&self) -> Result<$filter, ::filterlab_core::Error> {
                let blocks = $crate::layout::Blocks::build(&self.sizing()?, self.base.hasher, self.kernel);
                blocks.map($filter)
            }
        }
    };
}
pub(crate) use block_builder;
