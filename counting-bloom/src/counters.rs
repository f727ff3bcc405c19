//! Saturating counters of 4, 8 or 16 bits, packed into the 64-bit words of
//! 64-byte blocks. One implementation serves every width: the width is a
//! const generic, and everything that depends on it is a constant of
//! [`Width`].

use std::io::Read;

use filterlab_core::format::{FrameReader, FrameWriter};
use filterlab_core::memory::addressable;
use filterlab_core::{Error, ErrorKind};

/// Bytes per block: one cache line.
pub const BLOCK_BYTES: usize = 64;

/// 64-bit words per block.
pub(crate) const BLOCK_WORDS: usize = BLOCK_BYTES / 8;

/// One 64-byte block of packed counters, aligned to a cache line so that a
/// blocked filter's key touches exactly one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub(crate) struct Block(pub(crate) [u64; BLOCK_WORDS]);

impl Block {
    pub(crate) const ZERO: Self = Self([0; BLOCK_WORDS]);
}

/// The constants of `BITS`-bit counters packed into `u64` words: counter i
/// is bits `(i mod P)·BITS ..` of word `i / P`, P = 64 / BITS, and its
/// largest value `MAX` = 2^BITS − 1 is where it saturates (sticks).
pub(crate) struct Width<const BITS: u32>;

impl<const BITS: u32> Width<BITS> {
    /// Evaluated by every constructor: a width other than 4, 8 or 16 fails
    /// to compile as soon as a filter of that width is built or read.
    pub(crate) const CHECK: () = assert!(
        BITS == 4 || BITS == 8 || BITS == 16,
        "counters are 4, 8 or 16 bits wide"
    );
    /// The saturated value.
    pub(crate) const MAX: u64 = (1 << BITS) - 1;
    /// Counters per 64-bit word.
    pub(crate) const PER_WORD: u64 = 64 / BITS as u64;
    /// Counters per 64-byte block.
    pub(crate) const PER_BLOCK: u64 = Self::PER_WORD * BLOCK_WORDS as u64;
    /// The lowest bit of every counter of a word.
    const LOW: u64 = u64::MAX / Self::MAX;

    /// The word (as an index into the blocks' words) and bit shift of counter `index`.
    #[inline]
    pub(crate) fn locate(index: u64) -> (usize, u32) {
        (
            (index / Self::PER_WORD) as usize,
            (index % Self::PER_WORD) as u32 * BITS,
        )
    }

    /// The lowest bit of every nonzero counter of `word`, the rest zero.
    #[inline]
    pub(crate) fn nonzero(word: u64) -> u64 {
        // Fold each counter onto its lowest bit; bits folded in from the
        // next counter land above it and are masked off.
        let mut folded = word;
        let mut shift = BITS / 2;
        while shift > 0 {
            folded |= folded >> shift;
            shift /= 2;
        }
        folded & Self::LOW
    }

    /// The lowest bit of every saturated counter of `word`.
    #[inline]
    pub(crate) fn saturated(word: u64) -> u64 {
        !Self::nonzero(!word) & Self::LOW
    }

    /// The counters of `word`, lowest first.
    #[inline]
    pub(crate) fn counters(word: u64) -> impl Iterator<Item = u64> {
        (0..Self::PER_WORD).map(move |i| (word >> (i as u32 * BITS)) & Self::MAX)
    }

    /// Rebuilds a word counter by counter from `a` and `b`.
    #[inline]
    pub(crate) fn combine(a: u64, b: u64, f: impl Fn(u64, u64) -> u64) -> u64 {
        Self::counters(a)
            .zip(Self::counters(b))
            .enumerate()
            .fold(0, |word, (i, (x, y))| word | f(x, y) << (i as u32 * BITS))
    }
}

/// 64-byte blocks holding `num_counters` counters of `BITS` bits.
pub(crate) fn blocks_for<const BITS: u32>(num_counters: u64) -> u64 {
    num_counters.div_ceil(Width::<BITS>::PER_BLOCK)
}

/// [`blocks_for`] as a length: an error instead of a truncation when the
/// blocks exceed the address space.
pub(crate) fn block_count<const BITS: u32>(num_counters: u64) -> Result<usize, Error> {
    addressable(blocks_for::<BITS>(num_counters), "counter array")
}

/// The counter array: whole blocks, zeroed, and the helpers every layout
/// shares to read and write it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Counters {
    pub(crate) blocks: Vec<Block>,
}

/// Blocks read or written per chunk of the payload.
const IO_CHUNK: usize = 1024;

fn cannot_allocate(count: usize) -> Error {
    Error::new(
        ErrorKind::TooLarge,
        format!("cannot allocate {count} blocks of {BLOCK_BYTES} bytes"),
    )
}

impl Counters {
    /// Word `index` of the array, counting across blocks.
    #[inline]
    pub(crate) fn word(&self, index: usize) -> u64 {
        self.blocks[index / BLOCK_WORDS].0[index % BLOCK_WORDS]
    }

    /// Word `index` of the array, to change.
    #[inline]
    pub(crate) fn word_mut(&mut self, index: usize) -> &mut u64 {
        &mut self.blocks[index / BLOCK_WORDS].0[index % BLOCK_WORDS]
    }

    /// `count` zeroed blocks, or an error instead of an abort when the
    /// allocator refuses.
    pub(crate) fn zeroed(count: usize) -> Result<Self, Error> {
        let mut blocks = Vec::new();
        blocks
            .try_reserve_exact(count)
            .map_err(|_| cannot_allocate(count))?;
        blocks.resize(count, Block::ZERO);
        Ok(Self { blocks })
    }

    /// Every word, block by block.
    pub(crate) fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.iter().flat_map(|block| block.0)
    }

    /// Every word, mutably.
    pub(crate) fn words_mut(&mut self) -> impl Iterator<Item = &mut u64> {
        self.blocks.iter_mut().flat_map(|block| block.0.iter_mut())
    }

    /// Writes the blocks as little-endian words.
    pub(crate) fn write<W: std::io::Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        let mut words = Vec::with_capacity(IO_CHUNK * BLOCK_WORDS);
        for chunk in self.blocks.chunks(IO_CHUNK) {
            words.clear();
            words.extend(chunk.iter().flat_map(|block| block.0));
            out.write_words(&words)?;
        }
        Ok(())
    }

    /// Reads `count` blocks of little-endian words. Memory grows with the
    /// bytes actually received, so a crafted count with a short input fails
    /// as truncated instead of allocating for the count.
    pub(crate) fn read<R: Read>(input: &mut FrameReader<R>, count: usize) -> Result<Self, Error> {
        let mut bytes = vec![0u8; IO_CHUNK * BLOCK_BYTES];
        let mut blocks: Vec<Block> = Vec::new();
        while blocks.len() < count {
            let take = (count - blocks.len()).min(IO_CHUNK);
            let chunk = &mut bytes[..take * BLOCK_BYTES];
            input.read_bytes_into(chunk)?;
            if blocks.capacity() - blocks.len() < take {
                let grow = blocks.len().max(take).min(count - blocks.len());
                blocks
                    .try_reserve_exact(grow)
                    .map_err(|_| cannot_allocate(count))?;
            }
            blocks.extend(chunk.chunks_exact(BLOCK_BYTES).map(|source| {
                Block(std::array::from_fn(|i| {
                    u64::from_le_bytes(source[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]))
                }))
            }));
        }
        Ok(Self { blocks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_width<const BITS: u32>() {
        let () = Width::<BITS>::CHECK;
        let max = Width::<BITS>::MAX;
        assert_eq!(Width::<BITS>::PER_BLOCK, 512 / u64::from(BITS));
        // A word with counters 0, 1, MAX, MAX - 1, 0, ...
        let values = [0, 1, max, max - 1];
        let word = (0..Width::<BITS>::PER_WORD).fold(0u64, |word, i| {
            word | values[i as usize % 4] << (i as u32 * BITS)
        });
        let counters: Vec<u64> = Width::<BITS>::counters(word).collect();
        assert!(
            counters
                .iter()
                .enumerate()
                .all(|(i, &c)| c == values[i % 4])
        );
        for i in 0..Width::<BITS>::PER_WORD {
            let (word_index, shift) = Width::<BITS>::locate(i + 3 * Width::<BITS>::PER_WORD);
            assert_eq!((word_index, shift), (3, i as u32 * BITS));
            let low = 1 << shift;
            let value = values[i as usize % 4];
            assert_eq!(Width::<BITS>::nonzero(word) & low != 0, value != 0);
            assert_eq!(Width::<BITS>::saturated(word) & low != 0, value == max);
        }
        let sum = Width::<BITS>::combine(word, word, |a, b| (a + b).min(max));
        assert!(
            Width::<BITS>::counters(sum)
                .enumerate()
                .all(|(i, c)| c == (2 * values[i % 4]).min(max))
        );
    }

    #[test]
    fn widths_pack_and_fold() {
        check_width::<4>();
        check_width::<8>();
        check_width::<16>();
    }

    #[test]
    fn blocks_are_cache_lines() {
        assert_eq!(std::mem::size_of::<Block>(), 64);
        assert_eq!(std::mem::align_of::<Block>(), 64);
        let counters = Counters::zeroed(3).unwrap();
        assert_eq!(counters.blocks.as_ptr() as usize % 64, 0);
        assert_eq!(counters.words().count(), 24);
        assert_eq!(
            Counters::zeroed(usize::MAX / 64).err().map(|e| e.kind()),
            Some(ErrorKind::TooLarge)
        );
    }
}
