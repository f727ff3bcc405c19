//! The standard Bloom filter over atomic words: inserts through `&self`
//! from many threads.

use std::fmt;
use std::sync::atomic::Ordering;

use filterlab_core::{Error, Key, Merge};

use crate::standard::{BloomBuilder, BloomFilter};
use crate::words::{AtomicU64, BitArray, Counter, Word, for_each_probe, word_filter};

/// Cells of the insert counter.
const COUNTER_CELLS: usize = 16;

/// One counter cell on a cache line of its own.
#[repr(align(64))]
struct CounterCell(AtomicU64);

/// The item counter, split over cache-line-sized cells picked by the key
/// hash: threads counting new keys at once rarely touch the same line, where
/// one shared counter would bounce between their caches on every new key.
struct InsertCounter {
    cells: Box<[CounterCell]>,
}

impl InsertCounter {
    /// Counts one new key: a call that flipped a bit itself, so the count
    /// stays within the bits set and cannot overflow.
    #[inline]
    fn increment(&self, hash: u64) {
        let cell = (hash >> 60) as usize % COUNTER_CELLS;
        self.cells[cell].0.fetch_add(1, Ordering::Relaxed);
    }
}

impl Counter for InsertCounter {
    fn new(items: u64) -> Self {
        let cells = (0..COUNTER_CELLS)
            .map(|cell| CounterCell(AtomicU64::new(if cell == 0 { items } else { 0 })))
            .collect();
        Self { cells }
    }

    /// The count: exact once the inserting threads are done.
    fn get(&self) -> u64 {
        self.cells
            .iter()
            .map(|cell| cell.0.load(Ordering::Relaxed))
            .fold(0, u64::saturating_add)
    }

    /// The count, at most the bits `set_bits` then finds set. While threads
    /// insert, relaxed loads may see a count before the bits of the inserts
    /// it counts; the words a file or snapshot reads afterwards hold at
    /// least the bits counted here (a later load of a word never sees fewer
    /// bits), so the recorded counter stays within them.
    fn recorded(&self, set_bits: impl FnOnce() -> u64) -> u64 {
        self.get().min(set_bits())
    }
}

impl fmt::Debug for InsertCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A standard Bloom filter that many threads insert into at once.
///
/// Each probe sets its bit with an `AtomicU64::fetch_or` (skipped when a
/// relaxed load already sees the bit set: bits are never cleared while the
/// filter is shared), so concurrent inserts never lose a bit: once every
/// insert has returned (and the
/// inserting threads were joined, or synchronized with the reader in any
/// other way), every inserted key is reported present. Lookups are relaxed
/// loads, the same instructions as [`BloomFilter`]'s.
///
/// It answers exactly as a [`BloomFilter`] of the same configuration holding
/// the same keys, shares its binary format (a file written by either is read
/// by both), and converts to and from one in place with
/// [`freeze`](Self::freeze) and [`BloomFilter::into_atomic`]: the bit array
/// is reused, not copied.
///
/// # The item counter
///
/// [`len`](filterlab_core::Membership::len) counts exactly the
/// [`insert`](Self::insert) calls that returned `true`, and an insert returns
/// `true` when it flipped at least one bit from clear to set itself. A bit
/// flips once, so once the inserting threads are done `len` never exceeds
/// [`set_bits`](Self::set_bits), as in [`BloomFilter`], and the counter
/// cannot overflow. (A file or snapshot taken while threads insert records
/// at most the bits it holds; a file whose counter exceeds its bits set is
/// refused when read.) Against the number of distinct keys inserted:
///
/// - **Over:** a key inserted by one thread at a time is counted at most
///   once, as in [`BloomFilter`]. Only a key inserted *concurrently with
///   itself* by T threads can be counted more than once: each racing insert
///   that sets one of its bits first returns `true`, so it counts at most
///   min(T, k) times. If no key is inserted concurrently with itself, `len`
///   never exceeds the number of distinct keys.
/// - **Under:** a key is not counted only when all its bits were already set
///   by other keys when it was inserted, as in [`BloomFilter`] (a false
///   positive at insert time, at most the filter's FPP per insert).
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{BloomFilter, Filter};
///
/// let filter = BloomFilter::with_fpp(0.01).expected_items(100_000).build_atomic()?;
/// std::thread::scope(|scope| {
///     for thread in 0..4u64 {
///         let filter = &filter;
///         scope.spawn(move || {
///             for i in 0..25_000u64 {
///                 filter.insert(&(thread * 25_000 + i));
///             }
///         });
///     }
/// });
/// assert!((0..100_000u64).all(|key| filter.contains(&key)));
/// assert!(filter.len() <= 100_000);
///
/// // Freeze into a plain filter (no copy) to persist or merge it.
/// let frozen: BloomFilter = filter.freeze();
/// assert!(frozen.contains(&42u64));
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
pub struct AtomicBloomFilter {
    bits: BitArray<AtomicU64>,
    len: InsertCounter,
}

impl BloomBuilder {
    /// Allocates the filter as an [`AtomicBloomFilter`], for inserting from
    /// many threads.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build).
    pub fn build_atomic(&self) -> Result<AtomicBloomFilter, Error> {
        self.build().map(BloomFilter::into_atomic)
    }
}

impl BloomFilter {
    /// Converts into an [`AtomicBloomFilter`] in place: the bit array's
    /// allocation is reused (on 64-bit targets), not copied.
    pub fn into_atomic(self) -> AtomicBloomFilter {
        AtomicBloomFilter::from(self)
    }
}

impl From<BloomFilter> for AtomicBloomFilter {
    /// Converts in place: the words are reused as atomics (on 64-bit
    /// targets, where `u64` and `AtomicU64` have the same layout).
    fn from(filter: BloomFilter) -> Self {
        Self {
            bits: filter.bits.map(AtomicU64::new),
            len: InsertCounter::new(filter.len),
        }
    }
}

impl From<AtomicBloomFilter> for BloomFilter {
    /// Converts in place; see [`AtomicBloomFilter::freeze`].
    fn from(filter: AtomicBloomFilter) -> Self {
        filter.freeze()
    }
}

impl AtomicBloomFilter {
    /// Adds `key`; returns `true` when this call set at least one bit (see
    /// [the counter semantics](Self#the-item-counter)).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.insert_hash_shared(self.bits.hasher.hash(key))
    }

    /// Adds a pre-hashed key through a shared reference; see
    /// [`insert`](Self::insert). (`Filter::insert_hash` does the same
    /// through `&mut self`.)
    #[inline]
    pub fn insert_hash_shared(&self, hash: u64) -> bool {
        let bits = &self.bits;
        // A locked instruction holds back every later load until it is done,
        // so probing word by word waits for the cache misses one after
        // another. Prefetching all k words first lets them overlap (measured
        // here at 100M keys, one key at a time: 184 -> 160 ns per insert).
        if bits.prefetching() {
            bits.prefetch(hash);
        }
        self.insert_prefetched(hash)
    }

    /// The insert itself, for a key whose words are prefetched already (by
    /// [`insert_hash_shared`](Self::insert_hash_shared), or a batch ahead).
    #[inline]
    fn insert_prefetched(&self, hash: u64) -> bool {
        let bits = &self.bits;
        let mut new = false;
        let (num_bits, num_hashes) = (bits.num_bits, bits.num_hashes);
        for_each_probe(&bits.words, num_bits, num_hashes, hash, |word, bit| {
            // Bits are never cleared while shared (`clear` takes `&mut`): a
            // bit seen set stays set, and skipping its read-modify-write
            // (a locked instruction) is what makes a full filter cheap.
            let mask = 1 << bit;
            new |= word.load(Ordering::Relaxed) & mask == 0
                && word.fetch_or(mask, Ordering::Relaxed) & mask == 0;
        });
        if new {
            self.len.increment(hash);
        }
        new
    }

    /// The plain filter with the same bits and counter, converted in place:
    /// the atomics are reused as words (on 64-bit targets), not copied.
    pub fn freeze(self) -> BloomFilter {
        BloomFilter {
            bits: self.bits.map(AtomicU64::into_inner),
            len: self.len.get(),
        }
    }

    /// A plain copy of the filter as it is now (bits written concurrently
    /// with the copy may or may not be in it).
    pub fn snapshot(&self) -> BloomFilter {
        let words = self.bits.words.iter().map(Word::get).collect();
        let bits = self.bits.with_words(words);
        BloomFilter {
            len: self.len.recorded(|| bits.set_bits()),
            bits,
        }
    }

    /// Applies a merge of plain filters to this one: its words are
    /// converted in place, `other` is snapshotted.
    fn merge_with(
        &mut self,
        other: &Self,
        merge: impl FnOnce(&mut BloomFilter, &BloomFilter) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let words = std::mem::take(&mut self.bits.words);
        let mut plain = BloomFilter {
            bits: self.bits.with_words(words).map(AtomicU64::into_inner),
            len: self.len.get(),
        };
        let result = merge(&mut plain, &other.snapshot());
        self.bits.words = plain.bits.map(AtomicU64::new).words;
        self.len = InsertCounter::new(plain.len);
        result
    }
}

word_filter!(AtomicBloomFilter, insert_hash_shared, insert_prefetched);

impl Merge for AtomicBloomFilter {
    /// As [`BloomFilter`]'s union (bitwise OR, estimated `len`).
    fn union(&mut self, other: &Self) -> Result<(), Error> {
        self.merge_with(other, BloomFilter::union)
    }

    /// As [`BloomFilter`]'s intersection (bitwise AND, estimated `len`).
    fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        self.merge_with(other, BloomFilter::intersect)
    }
}

impl Clone for AtomicBloomFilter {
    /// A copy of the filter as it is now; see [`snapshot`](Self::snapshot).
    fn clone(&self) -> Self {
        self.snapshot().into_atomic()
    }
}

impl PartialEq for AtomicBloomFilter {
    fn eq(&self, other: &Self) -> bool {
        self.snapshot() == other.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Freezing and thawing reuse the bit array's allocation: the words are
    /// neither copied to a new array nor held twice. (This relies on std's
    /// in-place collection of `vec::IntoIter` maps, which applies when the
    /// layouts match, as they do on 64-bit targets.)
    #[cfg(all(target_pointer_width = "64", not(loom)))]
    #[test]
    fn conversions_reuse_the_allocation() {
        let mut plain = BloomFilter::with_bits(1 << 16).hashes(3).build().unwrap();
        plain.insert("kept");
        let address = plain.bits.words.as_ptr() as usize;
        let atomic = plain.into_atomic();
        assert_eq!(atomic.bits.words.as_ptr() as usize, address);
        atomic.insert("added");
        let frozen = atomic.freeze();
        assert_eq!(frozen.bits.words.as_ptr() as usize, address);
        assert!(frozen.contains("kept") && frozen.contains("added"));
        assert_eq!(frozen.len(), 2);
    }
}
