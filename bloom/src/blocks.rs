//! Aligned storage for the blocks of the blocked layouts (512-bit blocks
//! for `BlockedBloomFilter`, 256-bit ones for `SplitBlockBloomFilter`), and
//! its allocator.
//!
//! The blocks are a slice of a type aligned to its size, so a 512-bit block
//! is one cache line (a 256-bit one half of one) and indexing it costs a
//! single bounds check (measured: single
//! lookups about 10% faster than slicing 8 words out of an offset
//! `Vec<u64>`). They come from the allocator already zeroed (see
//! [`ZeroedBlocks`]), so building a multi-gigabyte filter does not write
//! every page up front.
//!
//! The `unsafe` code here: the allocation itself, its views as blocks, and
//! the view of blocks as plain words. Each block states why it is sound.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::io::Read;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use filterlab_core::format::FrameReader;
use filterlab_core::{Error, ErrorKind};

/// 64-bit words per 512-bit block.
pub(crate) const BLOCK_WORDS: usize = 8;

/// 64-bit words per 256-bit split block.
pub(crate) const SPLIT_WORDS: usize = 4;

/// One 512-bit block: a cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub(crate) struct Block(pub(crate) [u64; BLOCK_WORDS]);

/// One 256-bit block of a split-block filter: half a cache line, aligned
/// to 32 bytes so that a 256-bit vector load never splits a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
pub(crate) struct SplitBlock(pub(crate) [u64; SPLIT_WORDS]);

/// A block type of a [`BlockStorage`]: an array of `u64` words aligned to
/// its own size.
///
/// # Safety
///
/// The type must be `repr(C)` around its [`Words`](Self::Words), an array
/// of [`WORDS`](Self::WORDS) `u64`s, with an alignment equal to its size
/// (so no padding), and the all-zero bytes must be a valid value: the
/// storage views blocks as words and words as blocks, and starts zeroed.
pub(crate) unsafe trait WordBlock: Copy + Send + Sync + 'static {
    /// The words, `[u64; WORDS]`.
    type Words;
    /// 64-bit words per block.
    const WORDS: usize;
    /// The block's words.
    fn words(&self) -> &Self::Words;
    /// The block's words, mutably.
    fn words_mut(&mut self) -> &mut Self::Words;
}

/// Implements [`WordBlock`] for `$block`, a `repr(C)` tuple struct around
/// `[u64; $words]` aligned to its size.
macro_rules! word_block {
    ($block:ident, $words:expr) => {
        // SAFETY: `$block` is `repr(C)` around `[u64; $words]` with an
        // alignment equal to its size (asserted below), and any bits are a
        // valid `u64`.
        unsafe impl WordBlock for $block {
            type Words = [u64; $words];
            const WORDS: usize = $words;

            #[inline]
            fn words(&self) -> &Self::Words {
                &self.0
            }

            #[inline]
            fn words_mut(&mut self) -> &mut Self::Words {
                &mut self.0
            }
        }

        const _: () = assert!(size_of::<$block>() == 8 * $words);
        const _: () = assert!(align_of::<$block>() == size_of::<$block>());
    };
}

word_block!(Block, BLOCK_WORDS);
word_block!(SplitBlock, SPLIT_WORDS);

/// Bytes read per chunk when loading a filter.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Arrays up to this size first ask the allocator for exactly their bytes,
/// and keep them when they come aligned, as allocators with size classes
/// (jemalloc, the Redis server's) give a 64-byte multiple: a small
/// filter's slack of 63 bytes would otherwise move it into the next class
/// (a 3-block array took 256 bytes in the server instead of 192). Above
/// it the slack is under 0.4%, and a refused attempt would briefly hold
/// the array twice.
const EXACT_FIRST_BYTES: usize = 16 << 10;

/// An owned, aligned array of blocks that starts out zeroed without being
/// written: it is carved out of a `calloc`-style zeroed allocation, whose
/// pages the OS provides lazily. (`alloc_zeroed` with a 64-byte alignment
/// would allocate and then write every byte.)
struct ZeroedBlocks<B: WordBlock = Block> {
    /// The allocation, as made.
    base: NonNull<u8>,
    layout: Layout,
    /// The first block boundary in it; `len` blocks follow.
    blocks: NonNull<B>,
    len: usize,
}

// SAFETY: `ZeroedBlocks` owns its allocation exclusively (like a
// `Box<[B]>`); a `WordBlock` is plain data that is `Send` and `Sync`.
unsafe impl<B: WordBlock> Send for ZeroedBlocks<B> {}
// SAFETY: as above; shared access only reads through `&[B]`.
unsafe impl<B: WordBlock> Sync for ZeroedBlocks<B> {}

impl<B: WordBlock> ZeroedBlocks<B> {
    /// `len` zeroed blocks; `None` when the size overflows or the allocator
    /// refuses.
    fn new(len: usize) -> Option<Self> {
        let exact = len.checked_mul(size_of::<B>())?;
        if exact <= EXACT_FIRST_BYTES
            && let Some(blocks) = Self::carve(len, exact, 0)
        {
            return Some(blocks);
        }
        let slack = align_of::<B>() - 1;
        Self::carve(len, exact.checked_add(slack)?, slack)
    }

    /// `len` zeroed blocks carved out of a zeroed allocation of `size`
    /// bytes, at most `slack` bytes past its start; `None` when the
    /// allocator refuses or its block starts too far from a boundary.
    fn carve(len: usize, size: usize, slack: usize) -> Option<Self> {
        // Byte-aligned so that the allocator can use its zeroing `calloc`.
        let layout = Layout::from_size_align(size.max(1), 1).ok()?;
        // SAFETY: the layout has a non-zero size.
        let base = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        let skip = base.as_ptr().align_offset(align_of::<B>());
        if skip > slack {
            // `align_offset` may in principle give up; then so do we.
            // SAFETY: `base` was allocated above with `layout`.
            unsafe { dealloc(base.as_ptr(), layout) };
            return None;
        }
        // SAFETY: `skip <= slack` and `size` is `len` blocks and `slack`
        // bytes, so `base + skip` and the `len` blocks after it lie inside
        // the allocation.
        let blocks = unsafe { base.add(skip) }.cast::<B>();
        Some(Self {
            base,
            layout,
            blocks,
            len,
        })
    }
}

impl<B: WordBlock> Drop for ZeroedBlocks<B> {
    fn drop(&mut self) {
        // SAFETY: `base` was allocated with `layout` in `new` and is freed
        // only here.
        unsafe { dealloc(self.base.as_ptr(), self.layout) }
    }
}

impl<B: WordBlock> Deref for ZeroedBlocks<B> {
    type Target = [B];

    #[inline]
    fn deref(&self) -> &[B] {
        // SAFETY: `blocks` is aligned for `B` and followed by `len` blocks
        // inside the live allocation (see `new`), all initialized: zeroed at
        // allocation (all-zero bytes are a valid `WordBlock`, plain `u64`s)
        // and only ever written as `B`s since. The borrow of `self` keeps the
        // allocation alive and, being shared, excludes writers.
        unsafe { core::slice::from_raw_parts(self.blocks.as_ptr(), self.len) }
    }
}

impl<B: WordBlock> DerefMut for ZeroedBlocks<B> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [B] {
        // SAFETY: as in `deref`; the borrow of `self` is exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.blocks.as_ptr(), self.len) }
    }
}

impl<B: WordBlock> Clone for ZeroedBlocks<B> {
    /// Panics, like `Vec::clone`, when the allocator refuses.
    fn clone(&self) -> Self {
        let Some(mut copy) = Self::new(self.len) else {
            std::alloc::handle_alloc_error(self.layout)
        };
        copy.copy_from_slice(self);
        copy
    }
}

/// The blocks as one array of words.
#[inline]
fn block_words<B: WordBlock>(blocks: &[B]) -> &[u64] {
    // SAFETY: a `WordBlock` is `repr(C)` around `[u64; WORDS]` with no
    // padding (its alignment equals its size), so `blocks` is
    // `WORDS * blocks.len()` initialized, aligned `u64`s, borrowed for the
    // same lifetime.
    unsafe { core::slice::from_raw_parts(blocks.as_ptr().cast::<u64>(), blocks.len() * B::WORDS) }
}

/// The blocks as one mutable array of words.
#[inline]
fn block_words_mut<B: WordBlock>(blocks: &mut [B]) -> &mut [u64] {
    // SAFETY: as in `block_words`; the borrow is exclusive, and any `u64`
    // values written keep every block valid.
    unsafe {
        core::slice::from_raw_parts_mut(blocks.as_mut_ptr().cast::<u64>(), blocks.len() * B::WORDS)
    }
}

/// The block array of a blocked filter: 512-bit [`Block`]s unless told,
/// and what the filter's kernel reads beside the blocks (`P`, nothing
/// unless told), so that a one-key function reaches both through one
/// pointer.
#[derive(Clone)]
pub(crate) struct BlockStorage<B: WordBlock = Block, P = ()> {
    blocks: ZeroedBlocks<B>,
    params: P,
}

fn too_large<B>(count: usize) -> Error {
    Error::new(
        ErrorKind::TooLarge,
        format!("cannot allocate {count} blocks of {} bytes", size_of::<B>()),
    )
}

impl<B: WordBlock> BlockStorage<B> {
    /// `count` zeroed blocks, or an error when the memory cannot be had.
    pub(crate) fn zeroed(count: usize) -> Result<Self, Error> {
        let blocks = ZeroedBlocks::new(count).ok_or_else(|| too_large::<B>(count))?;
        Ok(Self { blocks, params: () })
    }

    /// Reads `count` blocks of little-endian words. Memory grows with the
    /// bytes actually received (doubling), so a crafted count with a short
    /// input fails as truncated instead of allocating for the count.
    pub(crate) fn read<R: Read>(input: &mut FrameReader<R>, count: usize) -> Result<Self, Error> {
        let block_bytes = size_of::<B>();
        let chunk_blocks = READ_CHUNK_BYTES / block_bytes;
        let mut bytes = vec![0u8; chunk_blocks * block_bytes];
        let mut storage = Self::zeroed(0)?;
        let mut filled = 0;
        while filled < count {
            let take = (count - filled).min(chunk_blocks);
            let chunk = &mut bytes[..take * block_bytes];
            input.read_bytes_into(chunk)?;
            if filled + take > storage.blocks.len() {
                let size = (2 * storage.blocks.len()).max(filled + take).min(count);
                let mut grown = Self::zeroed(size)?;
                grown.blocks[..filled].copy_from_slice(&storage.blocks[..filled]);
                storage = grown;
            }
            let words = block_words_mut(&mut storage.blocks[filled..filled + take]);
            for (word, source) in words.iter_mut().zip(chunk.chunks_exact(8)) {
                *word = u64::from_le_bytes(source.try_into().unwrap_or([0; 8]));
            }
            filled += take;
        }
        Ok(storage)
    }

    /// These blocks with `params` beside them.
    pub(crate) fn with_params<P>(self, params: P) -> BlockStorage<B, P> {
        BlockStorage {
            blocks: self.blocks,
            params,
        }
    }
}

impl<B: WordBlock, P> BlockStorage<B, P> {
    /// What the kernel reads beside the blocks.
    #[inline]
    pub(crate) fn params(&self) -> &P {
        &self.params
    }

    /// Replaces what the kernel reads beside the blocks.
    pub(crate) fn set_params(&mut self, params: P) {
        self.params = params;
    }

    /// The blocks as an array of words.
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        block_words(&self.blocks)
    }

    /// The blocks as a mutable array of words.
    #[inline]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        block_words_mut(&mut self.blocks)
    }

    /// The blocks.
    #[inline]
    pub(crate) fn blocks(&self) -> &[B] {
        &self.blocks
    }

    /// The blocks, mutably.
    #[inline]
    pub(crate) fn blocks_mut(&mut self) -> &mut [B] {
        &mut self.blocks
    }

    /// One block.
    #[inline]
    pub(crate) fn block(&self, index: usize) -> &B::Words {
        self.blocks[index].words()
    }

    /// One block, mutably.
    #[inline]
    pub(crate) fn block_mut(&mut self, index: usize) -> &mut B::Words {
        self.blocks[index].words_mut()
    }

    /// Bytes of the block array.
    pub(crate) fn allocated_bytes(&self) -> usize {
        size_of_val::<[B]>(&self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_blocks_are_aligned_words() {
        for len in [0, 1, 3, 1000] {
            let mut blocks = ZeroedBlocks::<Block>::new(len).unwrap();
            assert_eq!(blocks.len(), len);
            assert_eq!(blocks.as_ptr() as usize % 64, 0);
            assert!(blocks.iter().all(|block| block.0 == [0; 8]));
            let words = block_words_mut(&mut blocks);
            assert_eq!(words.len(), 8 * len);
            for (i, word) in words.iter_mut().enumerate() {
                *word = i as u64;
            }
            let copy = blocks.clone();
            assert_eq!(copy.as_ptr() as usize % 64, 0);
            assert_eq!(block_words(&copy), block_words(&blocks));
            if len > 0 {
                assert_eq!(blocks[len - 1].0[7], 8 * len as u64 - 1);
                assert_eq!(block_words(&copy)[8 * len - 1], 8 * len as u64 - 1);
            }
            drop(blocks);
            assert!(copy.iter().enumerate().all(|(i, b)| b.0[0] == 8 * i as u64));
        }
        assert!(ZeroedBlocks::<Block>::new(usize::MAX / 32).is_none());
        // Shared across threads like a Box<[Block]>.
        let blocks = ZeroedBlocks::<Block>::new(4).unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| assert_eq!(blocks[3].0, [0; 8]));
        });
    }

    /// An allocation of exactly the blocks' bytes is kept only when it came
    /// aligned (which the system allocator may or may not do); either way
    /// the blocks are aligned and zeroed.
    #[test]
    fn an_exact_allocation_is_kept_only_aligned() {
        let held: Vec<ZeroedBlocks<Block>> = (0..64)
            .filter_map(|_| ZeroedBlocks::<Block>::carve(3, 3 * 64, 0))
            .collect();
        for blocks in &held {
            assert_eq!(blocks.as_ptr() as usize % 64, 0);
            assert_eq!(blocks.layout.size(), 3 * 64);
            assert!(blocks.iter().all(|block| block.0 == [0; 8]));
        }
        // Past 16 KiB (257 blocks) the slack is always asked for.
        for len in [1, 3, 256, 257] {
            let blocks = ZeroedBlocks::<Block>::new(len).unwrap();
            let exact = len * 64;
            if blocks.layout.size() == exact {
                assert!(exact <= EXACT_FIRST_BYTES);
                assert_eq!(blocks.base, blocks.blocks.cast::<u8>());
            } else {
                assert_eq!(blocks.layout.size(), exact + 63, "{len} blocks");
            }
        }
    }

    /// `count` blocks of `B`: aligned to the block's size, zeroed, each
    /// block the words at its place, and a clone keeps contents and
    /// alignment; a count past the address space is refused.
    fn check_storage<B: WordBlock>(counts: &[usize]) {
        let size = size_of::<B>();
        for &count in counts {
            let mut storage = BlockStorage::<B>::zeroed(count).unwrap();
            assert_eq!(storage.words().len(), count * B::WORDS);
            assert_eq!(storage.allocated_bytes(), count * size);
            assert!(storage.words().iter().all(|&w| w == 0));
            let last = count * B::WORDS - 1;
            storage.words_mut()[last] = 5;
            storage.words_mut()[0] = 9;
            for copy in [storage.clone(), storage] {
                assert_eq!(copy.words().as_ptr() as usize % size, 0);
                assert_eq!((copy.words()[0], copy.words()[last]), (9, 5));
                let block = std::ptr::from_ref(copy.block(count - 1)).cast::<u64>();
                assert!(std::ptr::eq(
                    block,
                    copy.words()[last + 1 - B::WORDS..].as_ptr()
                ));
            }
        }
        let too_many = BlockStorage::<B>::zeroed(usize::MAX / size + 1);
        assert_eq!(too_many.err().map(|e| e.kind()), Some(ErrorKind::TooLarge));
    }

    #[test]
    fn storage_is_aligned_and_zeroed() {
        check_storage::<Block>(&[1, 2, 3, 100, 1000]);
    }

    #[test]
    fn split_storage_is_aligned_half_lines() {
        check_storage::<SplitBlock>(&[1, 2, 3, 101]);
    }
}
