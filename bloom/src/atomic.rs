//! The standard Bloom filter over atomic words: inserts through `&self`
//! from many threads.

use std::fmt;
use std::io::{Read, Write};
use std::sync::atomic::Ordering;

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::theory::{bloom_estimate_items, bloom_fpp_exact, bloom_fpp_given_fill};
use filterlab_core::{Error, Filter, FilterKind, Key, KeyHasher, Merge, Persist, for_each_batch};

use crate::BloomFilter;
use crate::common::{SizedFor, serde_via_format};
use crate::standard::{
    BloomConfig, PREFETCH_AHEAD, PREFETCH_MIN_WORDS, all_bits_set, contains_batch, prefetch_probes,
    set_bits_with,
};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::AtomicU64;
/// The atomic word: std's, or loom's when model-checking (`--cfg loom`).
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::AtomicU64;

/// Words written per chunk when serializing (a snapshot is taken chunk by chunk).
const WRITE_CHUNK: usize = 8192;

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
    fn new(value: u64) -> Self {
        let cells = (0..COUNTER_CELLS)
            .map(|cell| CounterCell(AtomicU64::new(if cell == 0 { value } else { 0 })))
            .collect();
        Self { cells }
    }

    /// Counts one new key.
    #[inline]
    fn increment(&self, hash: u64) {
        let cell = (hash >> 60) as usize % COUNTER_CELLS;
        self.cells[cell].0.fetch_add(1, Ordering::Relaxed);
    }

    /// The count: exact once the inserting threads are done.
    fn get(&self) -> u64 {
        self.cells
            .iter()
            .map(|cell| cell.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
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
/// [`len`](Filter::len) counts exactly the [`insert`](Self::insert) calls
/// that returned `true`, and an insert returns `true` when it set at least
/// one bit that was clear. Against the number of distinct keys inserted:
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
    bits: Vec<AtomicU64>,
    num_bits: u64,
    num_hashes: u32,
    hasher: KeyHasher,
    len: InsertCounter,
    sized_for: SizedFor,
}

impl From<BloomFilter> for AtomicBloomFilter {
    /// Converts in place: the words are reused as atomics (on 64-bit
    /// targets, where `u64` and `AtomicU64` have the same layout).
    fn from(filter: BloomFilter) -> Self {
        Self {
            bits: filter.bits.into_iter().map(AtomicU64::new).collect(),
            num_bits: filter.num_bits,
            num_hashes: filter.num_hashes,
            hasher: filter.hasher,
            len: InsertCounter::new(filter.len),
            sized_for: filter.sized_for,
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
        self.insert_hash_shared(self.hasher.hash(key))
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
        if bits.len() >= PREFETCH_MIN_WORDS {
            prefetch_probes(bits, self.num_bits, self.num_hashes, hash);
        }
        let new = set_bits_with(self.num_bits, self.num_hashes, hash, |word, mask| {
            // Bits are never cleared while shared (`clear` takes `&mut`): a
            // bit seen set stays set, and skipping its read-modify-write
            // (a locked instruction) is what makes a full filter cheap.
            let word = &bits[word];
            word.load(Ordering::Relaxed) & mask == 0
                && word.fetch_or(mask, Ordering::Relaxed) & mask == 0
        });
        if new {
            self.len.increment(hash);
        }
        new
    }

    /// Adds every key through a shared reference, hashing them in batches
    /// and prefetching the bits of the keys ahead; returns how many inserts
    /// returned `true`.
    pub fn insert_many<I>(&self, keys: I) -> usize
    where
        I: IntoIterator,
        I::Item: Key,
    {
        let Ok(new) = for_each_batch(keys, &self.hasher, |hashes| {
            Ok::<_, std::convert::Infallible>(self.insert_batch(hashes))
        });
        new
    }

    fn insert_batch(&self, hashes: &[u64]) -> usize {
        let prefetching = self.bits.len() >= PREFETCH_MIN_WORDS;
        let mut new = 0;
        for (i, &hash) in hashes.iter().enumerate() {
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD).filter(|_| prefetching) {
                prefetch_probes(&self.bits, self.num_bits, self.num_hashes, ahead);
            }
            new += usize::from(self.insert_hash_shared(hash));
        }
        new
    }

    /// The plain filter with the same bits and counter, converted in place:
    /// the atomics are reused as words (on 64-bit targets), not copied.
    pub fn freeze(mut self) -> BloomFilter {
        let words = std::mem::take(&mut self.bits)
            .into_iter()
            .map(AtomicU64::into_inner)
            .collect();
        self.plain_with(words)
    }

    /// The plain filter of this configuration and counter around `words`.
    fn plain_with(&self, words: Vec<u64>) -> BloomFilter {
        BloomFilter {
            bits: words,
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            hasher: self.hasher,
            len: self.len.get(),
            sized_for: self.sized_for,
        }
    }

    /// A plain copy of the filter as it is now (bits written concurrently
    /// with the copy may or may not be in it).
    pub fn snapshot(&self) -> BloomFilter {
        self.plain_with(
            self.bits
                .iter()
                .map(|word| word.load(Ordering::Relaxed))
                .collect(),
        )
    }

    /// Bits in the array.
    pub fn num_bits(&self) -> u64 {
        self.num_bits
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.num_hashes
    }

    /// The FPP target the filter was sized for, if any.
    pub fn target_fpp(&self) -> Option<f64> {
        self.sized_for.fpp
    }

    /// Bits currently set.
    pub fn set_bits(&self) -> u64 {
        self.bits
            .iter()
            .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
            .sum()
    }

    /// The fraction of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.set_bits() as f64 / self.num_bits as f64
    }

    /// The number of distinct items estimated from the set bits (Swamidass
    /// and Baldi). Infinite when every bit is set.
    pub fn estimated_len(&self) -> f64 {
        bloom_estimate_items(self.set_bits(), self.num_bits, self.num_hashes)
    }

    /// This filter's configuration (that of the equivalent [`BloomFilter`]).
    pub fn config(&self) -> BloomConfig {
        BloomConfig {
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            hasher: self.hasher,
        }
    }

    /// Applies a merge of plain filters to this one: its words are
    /// converted in place, `other` is snapshotted.
    fn merge_with(
        &mut self,
        other: &Self,
        merge: impl FnOnce(&mut BloomFilter, &BloomFilter) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let words = std::mem::take(&mut self.bits)
            .into_iter()
            .map(AtomicU64::into_inner)
            .collect();
        let mut plain = self.plain_with(words);
        let result = merge(&mut plain, &other.snapshot());
        self.bits = plain.bits.into_iter().map(AtomicU64::new).collect();
        self.len = InsertCounter::new(plain.len);
        result
    }
}

impl Filter for AtomicBloomFilter {
    fn hasher(&self) -> &KeyHasher {
        &self.hasher
    }

    /// Never fails for a Bloom filter.
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(self.insert_hash_shared(hash))
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        all_bits_set(&self.bits, self.num_bits, self.num_hashes, hash)
    }

    /// Inserts with the bits of the keys ahead prefetched.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        Ok(self.insert_batch(hashes))
    }

    /// Looks up with the first bits of the keys ahead prefetched.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        contains_batch(&self.bits, self.num_bits, self.num_hashes, hashes, found);
    }

    fn len(&self) -> usize {
        usize::try_from(self.len.get()).unwrap_or(usize::MAX)
    }

    fn clear(&mut self) {
        for word in &mut self.bits {
            *word = AtomicU64::new(0);
        }
        self.len = InsertCounter::new(0);
    }

    fn memory_usage(&self) -> usize {
        self.bits.len() * 8
    }

    fn capacity(&self) -> Option<usize> {
        self.sized_for.capacity()
    }

    /// (X/m)^k for the X bits set now.
    fn expected_fpp(&self) -> f64 {
        bloom_fpp_given_fill(self.set_bits(), self.num_bits, self.num_hashes)
    }

    /// The exact FPP after `items` distinct inserts, as [`BloomFilter`]'s.
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        bloom_fpp_exact(self.num_bits, self.num_hashes, items).ok()
    }
}

impl<K: Key> Extend<K> for AtomicBloomFilter {
    /// Inserts every key as [`insert_many`](AtomicBloomFilter::insert_many) does.
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        self.insert_many(keys);
    }
}

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

impl fmt::Debug for AtomicBloomFilter {
    /// A summary; the bit array itself can be gigabytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicBloomFilter")
            .field("num_bits", &self.num_bits)
            .field("num_hashes", &self.num_hashes)
            .field("hasher", &self.hasher)
            .field("len", &self.len)
            .field("sized_for", &self.sized_for)
            .field("set_bits", &self.set_bits())
            .finish_non_exhaustive()
    }
}

impl Persist for AtomicBloomFilter {
    type Config = BloomConfig;
    /// The same format as [`BloomFilter`].
    const KIND: FilterKind = FilterKind::Bloom;

    fn config(&self) -> BloomConfig {
        AtomicBloomFilter::config(self)
    }

    fn header(&self) -> Header {
        let mut header = BloomFilter::header_for(&self.config(), self.sized_for);
        header.items = self.len.get();
        header
    }

    /// Streams a snapshot chunk by chunk, without a full copy.
    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        let mut chunk = Vec::with_capacity(WRITE_CHUNK);
        for words in self.bits.chunks(WRITE_CHUNK) {
            chunk.clear();
            chunk.extend(words.iter().map(|word| word.load(Ordering::Relaxed)));
            out.write_words(&chunk)?;
        }
        Ok(())
    }

    fn config_from_header(header: &Header) -> Result<BloomConfig, Error> {
        <BloomFilter as Persist>::config_from_header(header)
    }

    fn read_payload<R: Read>(
        config: BloomConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        BloomFilter::read_payload(config, header, input).map(BloomFilter::into_atomic)
    }
}

// Through a snapshot, as `Persist::write_to`.
serde_via_format!(AtomicBloomFilter);

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
        let address = plain.bits.as_ptr() as usize;
        let atomic = plain.into_atomic();
        assert_eq!(atomic.bits.as_ptr() as usize, address);
        atomic.insert("added");
        let frozen = atomic.freeze();
        assert_eq!(frozen.bits.as_ptr() as usize, address);
        assert!(frozen.contains("kept") && frozen.contains("added"));
        assert_eq!(frozen.len(), 2);
    }
}
