//! Cache-line-aligned storage for 512-bit blocks, in safe code.
//!
//! A `Vec` of a 64-byte-aligned block type would be aligned too, but it is
//! allocated by writing every block; a zeroed `Vec<u64>` comes from the OS
//! lazily, so building a multi-gigabyte filter does not touch every page.
//! The blocks start at the
//! first 64-byte boundary inside it: at most 7 words of slack.

use filterlab_core::memory::zeroed_words;
use filterlab_core::{Error, ErrorKind};

/// 64-bit words per 512-bit block.
pub(crate) const BLOCK_WORDS: usize = 8;
/// Words allocated beyond the blocks, to reach a 64-byte boundary.
const SLACK: usize = BLOCK_WORDS - 1;

/// `blocks` 512-bit blocks starting at a 64-byte boundary of `words`.
pub(crate) struct BlockStorage {
    words: Vec<u64>,
    offset: usize,
    blocks: usize,
}

/// Words to skip from `words[0]` to reach a 64-byte boundary.
fn offset_of(words: &[u64]) -> usize {
    let address = words.as_ptr() as usize;
    (address.wrapping_neg() % 64) / size_of::<u64>()
}

fn word_count(blocks: usize) -> Result<usize, Error> {
    blocks
        .checked_mul(BLOCK_WORDS)
        .and_then(|words| words.checked_add(SLACK))
        .ok_or_else(|| Error::new(ErrorKind::TooLarge, "block array exceeds the address space"))
}

impl BlockStorage {
    /// `blocks` zeroed blocks, or an error when the memory cannot be had.
    pub(crate) fn zeroed(blocks: usize) -> Result<Self, Error> {
        let words = zeroed_words(word_count(blocks)?)?;
        let offset = offset_of(&words);
        Ok(Self {
            words,
            offset,
            blocks,
        })
    }

    /// Takes `words` (whole blocks) and moves them, in place, to a 64-byte
    /// boundary of the same allocation.
    pub(crate) fn from_words(mut words: Vec<u64>) -> Result<Self, Error> {
        let len = words.len();
        let blocks = len / BLOCK_WORDS;
        debug_assert_eq!(len % BLOCK_WORDS, 0);
        words.try_reserve_exact(SLACK).map_err(|_| {
            Error::new(
                ErrorKind::TooLarge,
                "cannot allocate the block array's alignment slack",
            )
        })?;
        // The reservation may have moved the words; pushing within it will not.
        let offset = offset_of(&words);
        words.resize(len + SLACK, 0);
        words.copy_within(..len, offset);
        words[..offset].fill(0);
        words[offset + len..].fill(0);
        Ok(Self {
            words,
            offset,
            blocks,
        })
    }

    /// The blocks as a mutable array of words.
    #[inline]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        let end = self.offset + self.blocks * BLOCK_WORDS;
        &mut self.words[self.offset..end]
    }

    /// One block, mutably.
    #[inline]
    pub(crate) fn block_mut(&mut self, index: usize) -> &mut [u64; BLOCK_WORDS] {
        let start = self.offset + index * BLOCK_WORDS;
        let words = &mut self.words[start..start + BLOCK_WORDS];
        words.try_into().unwrap_or_else(|_| unreachable!())
    }

    /// Bytes allocated, alignment slack included.
    pub(crate) fn allocated_bytes(&self) -> usize {
        self.words.len() * size_of::<u64>()
    }

    /// The blocks as an array of words.
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        let end = self.offset + self.blocks * BLOCK_WORDS;
        &self.words[self.offset..end]
    }

    /// One block.
    #[inline]
    pub(crate) fn block(&self, index: usize) -> &[u64; BLOCK_WORDS] {
        let start = self.offset + index * BLOCK_WORDS;
        let words = &self.words[start..start + BLOCK_WORDS];
        words.try_into().unwrap_or_else(|_| unreachable!())
    }
}

impl Clone for BlockStorage {
    fn clone(&self) -> Self {
        let mut words = vec![0; self.words.len()];
        let offset = offset_of(&words);
        words[offset..offset + self.blocks * BLOCK_WORDS].copy_from_slice(self.words());
        Self {
            words,
            offset,
            blocks: self.blocks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(storage: &BlockStorage) -> bool {
        storage.words().as_ptr() as usize % 64 == 0
    }

    #[test]
    fn blocks_are_aligned_and_zeroed() {
        for blocks in [1, 2, 3, 100, 1000] {
            let mut storage = BlockStorage::zeroed(blocks).unwrap();
            assert!(aligned(&storage));
            assert_eq!(storage.words().len(), blocks * BLOCK_WORDS);
            assert!(storage.words().iter().all(|&w| w == 0));
            storage.block_mut(blocks - 1)[7] = 5;
            let copy = storage.clone();
            assert!(aligned(&copy));
            assert_eq!(copy.words(), storage.words());
            assert_eq!(copy.block(blocks - 1)[7], 5);
        }
        assert_eq!(
            BlockStorage::zeroed(usize::MAX / 4).err().map(|e| e.kind()),
            Some(ErrorKind::TooLarge)
        );
    }

    #[test]
    fn words_move_to_a_boundary_in_place() {
        for blocks in [1usize, 5, 64] {
            let words: Vec<u64> = (1..=(blocks * BLOCK_WORDS) as u64).collect();
            let storage = BlockStorage::from_words(words.clone()).unwrap();
            assert!(aligned(&storage));
            assert_eq!(storage.words(), &words[..]);
            assert_eq!(storage.block(blocks - 1)[7], words[words.len() - 1]);
        }
    }
}
