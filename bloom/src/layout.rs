//! What the blocked layouts (`BlockedBloomFilter`'s 512-bit blocks,
//! `SplitBlockBloomFilter`'s 256-bit ones) share beside their storage and
//! their kernels: the block and in-block seed a key hash maps to, the
//! batched operations that prefetch the blocks of the keys ahead, the
//! rounding of an explicit size to whole blocks, the block array's header
//! checks and reading, and (`block_filter_shared!`) the methods that do not
//! depend on the block.

use std::io::Read;

use filterlab_core::format::{FrameReader, Header};
use filterlab_core::memory::{addressable, check_memory};
use filterlab_core::{Error, ErrorKind, prefetch, reduce};

use crate::blocks::{BlockStorage, WordBlock};
use crate::common::check_counter;
use crate::words::count_ones;

/// Keys ahead of the one being probed whose block a batched operation
/// prefetches (a power of two: the ring of pending block indexes).
/// Measured on a 256 MiB blocked filter against random reads of a 256 MiB
/// array: 8 ahead cost 1.98x the reads, 16 1.60x, 32 1.23x, 64 1.06x, 128
/// 1.00x.
const PREFETCH_AHEAD: usize = 64;

/// The block a key hash maps to: multiply-shift over the high bits.
#[inline]
pub(crate) fn block_index(hash: u64, num_blocks: u64) -> usize {
    reduce(hash, num_blocks) as usize
}

/// The seed of a key's probes inside its block: the low 32 bits of the key
/// hash, which the block index (taken from the high bits) does not use.
#[inline]
pub(crate) fn block_seed(hash: u64) -> u32 {
    hash as u32
}

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
pub(crate) fn insert_batch<B: WordBlock>(
    blocks: &mut BlockStorage<B>,
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

/// Sets `found[i]` to `contains(block, seed)` for the key of `hashes[i]`,
/// for as many keys as both slices hold.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn contains_batch<B: WordBlock>(
    blocks: &BlockStorage<B>,
    num_blocks: u64,
    hashes: &[u64],
    found: &mut [bool],
    contains: impl Fn(&B::Words, u32) -> bool,
) {
    let count = hashes.len().min(found.len());
    let hashes = &hashes[..count];
    pipelined(num_blocks, hashes, |key, ahead| {
        if let Some(ahead) = ahead {
            prefetch(blocks.block(ahead));
        }
        if let Some((i, index)) = key {
            found[i] = contains(blocks.block(index), block_seed(hashes[i]));
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

/// What a blocked layout's filter type has that does not depend on its
/// block: `insert_many`, `target_fpp`, `set_bits`, `fill_ratio`, `Extend`,
/// `PartialEq` (the kernel does not matter) and the `Debug` summary. For a
/// type with the fields `blocks` (a [`BlockStorage`]), `config`, `len` (the
/// counter) and `sized_for`, and the methods `insert_batch`, `num_bits`,
/// `num_blocks`, `num_hashes` and `kernel`.
macro_rules! block_filter_shared {
    ($filter:ident) => {
        impl $filter {
            /// Adds every key, hashing them in batches and prefetching the
            /// blocks ahead; returns how many were new. (`Extend` does the
            /// same without the count.)
            pub fn insert_many<I>(&mut self, keys: I) -> usize
            where
                I: IntoIterator,
                I::Item: ::filterlab_core::Key,
            {
                let hasher = self.config.hasher;
                let Ok(new) = ::filterlab_core::for_each_batch(keys, &hasher, |hashes| {
                    Ok::<_, ::std::convert::Infallible>(self.insert_batch(hashes))
                });
                new
            }

            /// The FPP target the filter was sized for, if any.
            pub fn target_fpp(&self) -> Option<f64> {
                self.sized_for.fpp
            }

            /// Bits currently set.
            pub fn set_bits(&self) -> u64 {
                $crate::words::count_ones(self.blocks.words())
            }

            /// The fraction of bits set.
            pub fn fill_ratio(&self) -> f64 {
                self.set_bits() as f64 / self.num_bits() as f64
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
                self.config == other.config
                    && self.len == other.len
                    && self.sized_for == other.sized_for
                    && self.blocks.words() == other.blocks.words()
            }
        }

        impl Eq for $filter {}

        ::filterlab_core::inherent_methods!($filter: filter, write, read);

        impl ::std::fmt::Debug for $filter {
            /// A summary; the block array itself can be gigabytes.
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                let size = ("num_blocks", self.num_blocks());
                let hashes = (self.num_hashes(), &self.config.hasher);
                let name = stringify!($filter);
                $crate::common::debug_summary(f, name, size, hashes, self.len, &self.sized_for)
                    .field("kernel", &self.kernel())
                    .field("set_bits", &self.set_bits())
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use block_filter_shared;

/// The `Filter` methods of a blocked layout's filter that read only its
/// state (`hasher`, `len`, `clear`, `memory_usage`, `capacity`), written
/// inside its `impl Filter`; for the fields `block_filter_shared!` names.
macro_rules! block_filter_state {
    () => {
        fn hasher(&self) -> &::filterlab_core::KeyHasher {
            &self.config.hasher
        }

        fn len(&self) -> usize {
            usize::try_from(self.len).unwrap_or(usize::MAX)
        }

        fn clear(&mut self) {
            self.blocks.words_mut().fill(0);
            self.len = 0;
        }

        fn memory_usage(&self) -> usize {
            self.blocks.allocated_bytes()
        }

        fn capacity(&self) -> Option<usize> {
            self.sized_for.capacity()
        }
    };
}
pub(crate) use block_filter_state;
