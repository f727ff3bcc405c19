//! The word-array code of the standard Bloom filter, written once for the
//! plain filter (`BloomFilter`, over `u64` words) and the concurrent one
//! (`AtomicBloomFilter`, over `AtomicU64` words), as fastbloom does for its
//! two: the configuration and the kind-1 format they share, probing, batched
//! lookups with prefetch, counting ones, and ([`word_filter!`]) the public
//! surface both offer. What differs stays with each filter: how an insert
//! writes its bits, and how the item counter counts.

use std::io::{Read, Write};
use std::sync::atomic::Ordering;

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::memory::{addressable, zeroed_words};
use filterlab_core::sizing::{SizedFor, hashes_from_header};
use filterlab_core::theory::{bloom_estimate_items, bloom_fpp_exact, bloom_fpp_given_fill};
use filterlab_core::{Error, ErrorKind, FilterKind, KeyHasher, Probes, prefetch, reduce};

use crate::common::check_counter;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::AtomicU64;
/// The atomic word: std's, or loom's when model-checking (`--cfg loom`).
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::AtomicU64;

/// Everything that decides which bits a key sets: two filters with equal
/// configurations can be merged, and a file is only accepted by
/// [`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting)
/// when its configuration equals the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BloomConfig {
    /// Bits in the array.
    pub num_bits: u64,
    /// Probes per key.
    pub num_hashes: u32,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

/// Header parameters of kind 1, in order.
const PARAM_NAMES: [&str; 4] = ["num_bits", "num_hashes", "capacity", "target_fpp"];

/// Words written per chunk when serializing atomic words (a snapshot is
/// taken chunk by chunk).
const WRITE_CHUNK: usize = 8192;

impl BloomConfig {
    /// Validates the parameters of a kind-1 header.
    pub(crate) fn from_header(header: &Header) -> Result<Self, Error> {
        header.expect_params(PARAM_NAMES.len())?;
        let num_bits = header.param(0, PARAM_NAMES[0])?;
        if num_bits == 0 {
            return Err(Error::new(ErrorKind::InvalidHeader, "zero bits"));
        }
        let num_hashes = hashes_from_header(header, 1)?;
        SizedFor::from_header(header, 2)?;
        header.expect_payload_len(num_bits.div_ceil(64) * 8)?;
        Ok(Self {
            num_bits,
            num_hashes,
            hasher: header.hasher,
        })
    }

    /// Words in the array, or an error when they exceed the address space.
    fn word_count(&self) -> Result<usize, Error> {
        addressable(self.num_bits.div_ceil(64), "bit array")
    }
}

/// A word of a bit array: a plain `u64`, or an `AtomicU64` shared with
/// inserting threads (read with a relaxed load, the same instruction as a
/// plain one on common targets).
pub(crate) trait Word: Sized {
    /// A word holding `value`.
    fn new(value: u64) -> Self;

    /// The word's current value.
    fn get(&self) -> u64;

    /// Appends the words to a payload.
    fn write_all<W: Write>(words: &[Self], out: &mut FrameWriter<W>) -> Result<(), Error>;
}

impl Word for u64 {
    #[inline]
    fn new(value: u64) -> Self {
        value
    }

    #[inline]
    fn get(&self) -> u64 {
        *self
    }

    fn write_all<W: Write>(words: &[Self], out: &mut FrameWriter<W>) -> Result<(), Error> {
        out.write_words(words)
    }
}

/// A word of a borrowed payload (a view's): eight little-endian bytes at
/// any alignment, read as one unaligned load on little-endian CPUs.
impl Word for [u8; 8] {
    #[inline]
    fn new(value: u64) -> Self {
        value.to_le_bytes()
    }

    #[inline]
    fn get(&self) -> u64 {
        u64::from_le_bytes(*self)
    }

    fn write_all<W: Write>(words: &[Self], out: &mut FrameWriter<W>) -> Result<(), Error> {
        out.write_bytes(words.as_flattened())
    }
}

impl Word for AtomicU64 {
    #[inline]
    fn new(value: u64) -> Self {
        AtomicU64::new(value)
    }

    #[inline]
    fn get(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }

    /// A snapshot taken chunk by chunk, without a full copy.
    fn write_all<W: Write>(words: &[Self], out: &mut FrameWriter<W>) -> Result<(), Error> {
        let mut chunk = Vec::with_capacity(WRITE_CHUNK);
        for words in words.chunks(WRITE_CHUNK) {
            chunk.clear();
            chunk.extend(words.iter().map(Word::get));
            out.write_words(&chunk)?;
        }
        Ok(())
    }
}

/// An item counter: the plain filter's `u64`, or the atomic filter's
/// counter split over cache lines. Either counts inserts that set a clear
/// bit, so it never exceeds the bits set.
pub(crate) trait Counter {
    /// A counter at `items`.
    fn new(items: u64) -> Self;

    /// The count.
    fn get(&self) -> u64;

    /// The count as a file records it: never above the bits set
    /// (`set_bits` counts them, if the counter needs to know).
    fn recorded(&self, set_bits: impl FnOnce() -> u64) -> u64;
}

impl Counter for u64 {
    fn new(items: u64) -> Self {
        items
    }

    fn get(&self) -> u64 {
        *self
    }

    /// The count itself: a plain filter's counter is within its bits set.
    fn recorded(&self, _: impl FnOnce() -> u64) -> u64 {
        *self
    }
}

/// A standard Bloom filter's bit array with everything that decides which
/// bits a key sets and what it was sized for: all of the filter but its
/// item counter.
#[derive(Clone)]
pub(crate) struct BitArray<W> {
    /// ⌈m/64⌉ words; bit i of the array is bit i mod 64 of word i / 64.
    pub(crate) words: Vec<W>,
    pub(crate) num_bits: u64,
    pub(crate) num_hashes: u32,
    pub(crate) hasher: KeyHasher,
    pub(crate) sized_for: SizedFor,
}

impl BitArray<u64> {
    /// An empty array of this configuration.
    pub(crate) fn zeroed(config: BloomConfig, sized_for: SizedFor) -> Result<Self, Error> {
        Ok(Self {
            words: zeroed_words(config.word_count()?)?,
            num_bits: config.num_bits,
            num_hashes: config.num_hashes,
            hasher: config.hasher,
            sized_for,
        })
    }

    /// Reads the payload of a kind-1 file whose header was validated into
    /// `config`: refuses bits set past the end of the array, and an item
    /// counter above the bits set (see [`check_counter`]).
    pub(crate) fn read<R: Read>(
        config: BloomConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let words = input.read_words(config.word_count()?)?;
        check_tail(&words, config.num_bits)?;
        let bits = Self {
            words,
            num_bits: config.num_bits,
            num_hashes: config.num_hashes,
            hasher: config.hasher,
            sized_for: SizedFor::from_header(header, 2)?,
        };
        check_counter(header.items, bits.set_bits())?;
        Ok(bits)
    }

    /// The words (for merges, which combine them one by one).
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// The words, mutably.
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }
}

impl<W: Word> BitArray<W> {
    /// The same array over other words, converted in place: `Vec`'s
    /// in-place collection reuses the allocation where the layouts match
    /// (`u64` and `AtomicU64` on 64-bit targets).
    pub(crate) fn map<V>(mut self, convert: impl FnMut(W) -> V) -> BitArray<V> {
        let words = std::mem::take(&mut self.words);
        self.with_words(words.into_iter().map(convert).collect())
    }

    /// This array's configuration and sizing around other words.
    pub(crate) fn with_words<V>(&self, words: Vec<V>) -> BitArray<V> {
        BitArray {
            words,
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            hasher: self.hasher,
            sized_for: self.sized_for,
        }
    }

    /// Whether all of the key's k bits are set.
    #[inline]
    pub(crate) fn contains(&self, hash: u64) -> bool {
        all_bits_set(&self.words, self.num_bits, self.num_hashes, hash)
    }

    /// Batched lookup: while testing key i, prefetches all k words of key
    /// i + [`PREFETCH_AHEAD`]. (Prefetching only the first three probes, which
    /// is all most negative lookups read, left positive lookups on a 256 MiB
    /// filter at the one-by-one speed: 84 ns against 38 ns per key, for a 5%
    /// gain on negative ones.)
    pub(crate) fn contains_batch(&self, hashes: &[u64], found: &mut [bool]) {
        contains_batch(&self.words, self.num_bits, self.num_hashes, hashes, found);
    }

    /// Whether the array is large enough for prefetching to pay.
    #[inline]
    pub(crate) fn prefetching(&self) -> bool {
        self.words.len() >= PREFETCH_MIN_WORDS
    }

    /// Prefetches the words of the key's k probes.
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        prefetch_probes(&self.words, self.num_bits, self.num_hashes, hash);
    }

    /// Bits currently set.
    pub(crate) fn set_bits(&self) -> u64 {
        count_ones(&self.words)
    }

    /// (X/m)^k for the X bits set now.
    pub(crate) fn fpp_given_fill(&self) -> f64 {
        bloom_fpp_given_fill(self.set_bits(), self.num_bits, self.num_hashes)
    }

    /// The exact FPP after `items` distinct inserts (Bose et al.).
    pub(crate) fn exact_fpp(&self, items: u64) -> Option<f64> {
        bloom_fpp_exact(self.num_bits, self.num_hashes, items).ok()
    }

    /// The distinct items estimated from the set bits (Swamidass and
    /// Baldi); infinite when every bit is set.
    pub(crate) fn estimated_len(&self) -> f64 {
        self.set_bits_and_estimate().1
    }

    /// [`set_bits`](Self::set_bits) and the estimate from them, counted once.
    pub(crate) fn set_bits_and_estimate(&self) -> (u64, f64) {
        let set = self.set_bits();
        (
            set,
            bloom_estimate_items(set, self.num_bits, self.num_hashes),
        )
    }

    /// Clears every bit.
    pub(crate) fn clear(&mut self) {
        for word in &mut self.words {
            *word = W::new(0);
        }
    }

    /// The configuration.
    pub(crate) fn config(&self) -> BloomConfig {
        BloomConfig {
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            hasher: self.hasher,
        }
    }

    /// The kind-1 header of a filter of this array holding `items` items.
    pub(crate) fn header(&self, items: u64) -> Header {
        let [capacity, target_fpp] = self.sized_for.params();
        Header {
            kind: FilterKind::Bloom,
            hasher: self.hasher,
            items,
            params: vec![
                self.num_bits,
                u64::from(self.num_hashes),
                capacity,
                target_fpp,
            ],
            payload_len: self.num_bits.div_ceil(64) * 8,
        }
    }

    /// Writes the payload: the words, little-endian.
    pub(crate) fn write<O: Write>(&self, out: &mut FrameWriter<O>) -> Result<(), Error> {
        W::write_all(&self.words, out)
    }
}

/// Refuses bits set past the end of an array of `num_bits` bits in its
/// last word (the file of a filter never has them).
pub(crate) fn check_tail<W: Word>(words: &[W], num_bits: u64) -> Result<(), Error> {
    let tail = num_bits % 64;
    if tail != 0 && words.last().is_some_and(|last| last.get() >> tail != 0) {
        return Err(Error::new(
            ErrorKind::InvalidHeader,
            "bits set beyond the end of the array",
        ));
    }
    Ok(())
}

/// Keys ahead of the one being processed whose bits a batched operation
/// prefetches. Measured on a 256 MiB filter at 10 bits/key (k = 7), with
/// all k words prefetched: 8 beats 4, 16 and 32 (each key already has k
/// lines in flight).
pub(crate) const PREFETCH_AHEAD: usize = 8;

/// Arrays smaller than this (1 MiB) stay in cache: prefetching their k words
/// per key only adds instructions (measured at 100,000 keys, 10 bits/key:
/// batched lookups 9.5 ns with it, 7.0 ns one by one).
const PREFETCH_MIN_WORDS: usize = 1 << 17;

/// The words that hold an array of `num_bits` bits: exactly
/// ⌈`num_bits`/64⌉ of `words` (panics if there are fewer, which no
/// `BitArray` allows). One check per key, on the filter's fixed sizes (a
/// loop over keys hoists it), so that the probes read their words
/// unchecked: a probe index lies below `num_bits`.
#[inline]
fn probed_words<T>(words: &[T], num_bits: u64) -> &[T] {
    &words[..num_bits.div_ceil(64) as usize]
}

/// [`probed_words`] of a mutable array.
#[inline]
fn probed_words_mut<T>(words: &mut [T], num_bits: u64) -> &mut [T] {
    &mut words[..num_bits.div_ceil(64) as usize]
}

/// The word that holds bit `index` of `words` (from [`probed_words`] for
/// `num_bits`), and the bit in it.
#[allow(unsafe_code)]
#[inline]
fn probed_word<T>(words: &[T], num_bits: u64, index: u64) -> (&T, u32) {
    debug_assert!(index < num_bits && words.len() as u64 == num_bits.div_ceil(64));
    // SAFETY: `index` comes from `Probes` over `num_bits` (a `reduce` onto
    // 0..num_bits), so `index >> 6 < ⌈num_bits / 64⌉`, and `words` holds
    // exactly that many words (`probed_words`).
    let word = unsafe { words.get_unchecked((index >> 6) as usize) };
    (word, (index & 63) as u32)
}

/// [`probed_word`] of a mutable array.
#[allow(unsafe_code)]
#[inline]
fn probed_word_mut<T>(words: &mut [T], num_bits: u64, index: u64) -> (&mut T, u32) {
    debug_assert!(index < num_bits && words.len() as u64 == num_bits.div_ceil(64));
    // SAFETY: as in `probed_word`; the borrow of `words` is exclusive.
    let word = unsafe { words.get_unchecked_mut((index >> 6) as usize) };
    (word, (index & 63) as u32)
}

/// Calls `visit(index)` for each of the key's k probe indexes over
/// `num_bits` bits, in order.
#[inline]
fn for_each_index(num_bits: u64, num_hashes: u32, hash: u64, mut visit: impl FnMut(u64)) {
    let mut probes = Probes::new(hash, num_bits);
    // A count-down loop compiles to one fused decrement-and-branch per probe.
    let mut remaining = num_hashes;
    while remaining != 0 {
        visit(probes.next_index());
        remaining -= 1;
    }
}

/// Calls `visit(word, bit)` for each of the key's k probes, in order: the
/// probe's word in `words` (an array of `num_bits` bits) and its bit in
/// that word (0..64). The one probe loop behind atomic inserts and
/// prefetches.
#[inline]
pub(crate) fn for_each_probe<T>(
    words: &[T],
    num_bits: u64,
    num_hashes: u32,
    hash: u64,
    mut visit: impl FnMut(&T, u32),
) {
    let words = probed_words(words, num_bits);
    for_each_index(num_bits, num_hashes, hash, |index| {
        let (word, bit) = probed_word(words, num_bits, index);
        visit(word, bit);
    });
}

/// [`for_each_probe`] with each word mutable: the loop of plain inserts.
#[inline]
pub(crate) fn for_each_probe_mut<T>(
    words: &mut [T],
    num_bits: u64,
    num_hashes: u32,
    hash: u64,
    mut visit: impl FnMut(&mut T, u32),
) {
    let words = probed_words_mut(words, num_bits);
    for_each_index(num_bits, num_hashes, hash, |index| {
        let (word, bit) = probed_word_mut(words, num_bits, index);
        visit(word, bit);
    });
}

/// Whether all of the key's k bits are set: it stops at the first bit
/// clear, before the next probe is even computed, so a never-inserted key
/// in a half-full array costs two probes on average instead of k. The
/// second hash, which only the probes after the first need, is derived
/// after the first probe's test ([`Probes::after_first`]).
#[inline]
pub(crate) fn all_bits_set<W: Word>(bits: &[W], num_bits: u64, num_hashes: u32, hash: u64) -> bool {
    let words = probed_words(bits, num_bits);
    let is_set = |index: u64| {
        let (word, bit) = probed_word(words, num_bits, index);
        word.get() >> bit & 1 == 1
    };
    if !is_set(reduce(hash, num_bits)) {
        return false;
    }
    let mut probes = Probes::after_first(hash, num_bits);
    let mut remaining = num_hashes.saturating_sub(1);
    while remaining != 0 {
        if !is_set(probes.next_index()) {
            return false;
        }
        remaining -= 1;
    }
    true
}

/// Sets `found[i]` to whether the key of `hashes[i]` has all its bits set
/// in `bits` (an array of `num_bits` bits, an owned filter's or a view's),
/// prefetching the words of the key [`PREFETCH_AHEAD`] places ahead in
/// arrays too large for the cache.
#[inline]
pub(crate) fn contains_batch<W: Word>(
    bits: &[W],
    num_bits: u64,
    num_hashes: u32,
    hashes: &[u64],
    found: &mut [bool],
) {
    let prefetching = bits.len() >= PREFETCH_MIN_WORDS;
    for (i, (answer, &hash)) in found.iter_mut().zip(hashes).enumerate() {
        if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD).filter(|_| prefetching) {
            prefetch_probes(bits, num_bits, num_hashes, ahead);
        }
        *answer = all_bits_set(bits, num_bits, num_hashes, hash);
    }
}

/// Prefetches the words of the key's first `count` probes.
#[inline]
fn prefetch_probes<W>(bits: &[W], num_bits: u64, count: u32, hash: u64) {
    for_each_probe(bits, num_bits, count, hash, |word, _| prefetch(word));
}

/// Bits set in `words`.
pub(crate) fn count_ones<W: Word>(words: &[W]) -> u64 {
    words.iter().map(|w| u64::from(w.get().count_ones())).sum()
}

/// The public surface `BloomFilter` and `AtomicBloomFilter` share, written
/// once: batched inserts, accessors, `Filter`, `Extend`, `Persist` (kind 1)
/// and `Debug`. The filter has a field `bits: BitArray<_>`, a field
/// `len: impl Counter`, its single-key insert `$insert(hash) -> bool` and
/// the same insert for a key whose words are already prefetched,
/// `$insert_prefetched(hash) -> bool` (batches prefetch ahead), through
/// `&mut self` when `mut` is given and `&self` otherwise.
macro_rules! word_filter {
    ($filter:ident, $insert:ident, $insert_prefetched:ident $(, $mutable:ident)?) => {
        impl $filter {
            /// Adds every key, hashing them in batches and prefetching the
            /// bits of the keys ahead; returns how many inserts returned
            /// `true`. (`Extend` does the same without the count.)
            pub fn insert_many<I>(&$($mutable)? self, keys: I) -> usize
            where
                I: IntoIterator,
                I::Item: ::filterlab_core::Key,
            {
                let hasher = self.bits.hasher;
                let Ok(new) = ::filterlab_core::for_each_batch(keys, &hasher, |hashes| {
                    Ok::<_, ::std::convert::Infallible>(self.insert_batch(hashes))
                });
                new
            }

            /// Inserts with the bits of the key [`PREFETCH_AHEAD`] places
            /// ahead prefetched.
            ///
            /// [`PREFETCH_AHEAD`]: $crate::words::PREFETCH_AHEAD
            fn insert_batch(&$($mutable)? self, hashes: &[u64]) -> usize {
                let prefetching = self.bits.prefetching();
                let mut new = 0;
                for (i, &hash) in hashes.iter().enumerate() {
                    let ahead = hashes.get(i + $crate::words::PREFETCH_AHEAD);
                    if let Some(&ahead) = ahead.filter(|_| prefetching) {
                        self.bits.prefetch(ahead);
                    }
                    new += usize::from(self.$insert_prefetched(hash));
                }
                new
            }

            /// Bits in the array.
            pub fn num_bits(&self) -> u64 {
                self.bits.num_bits
            }

            /// Probes per key.
            pub fn num_hashes(&self) -> u32 {
                self.bits.num_hashes
            }

            /// The FPP target the filter was sized for, if any.
            pub fn target_fpp(&self) -> Option<f64> {
                self.bits.sized_for.fpp
            }

            /// Bits currently set.
            pub fn set_bits(&self) -> u64 {
                self.bits.set_bits()
            }

            /// The fraction of bits set.
            pub fn fill_ratio(&self) -> f64 {
                self.set_bits() as f64 / self.bits.num_bits as f64
            }

            /// The number of distinct items estimated from the set bits
            /// (Swamidass and Baldi): meaningful after merges, when
            /// [`len`](::filterlab_core::Membership::len) is itself an estimate.
            /// Infinite when every bit is set.
            pub fn estimated_len(&self) -> f64 {
                self.bits.estimated_len()
            }

            /// This filter's configuration.
            pub fn config(&self) -> $crate::words::BloomConfig {
                self.bits.config()
            }
        }

        impl ::filterlab_core::Membership for $filter {
            fn hasher(&self) -> &::filterlab_core::KeyHasher {
                &self.bits.hasher
            }

            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                self.bits.contains(hash)
            }

            /// Looks up with the bits of the keys ahead prefetched, so that
            /// their memory accesses overlap.
            fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
                self.bits.contains_batch(hashes, found);
            }

            fn len(&self) -> usize {
                usize::try_from($crate::words::Counter::get(&self.len)).unwrap_or(usize::MAX)
            }

            fn memory_usage(&self) -> usize {
                self.bits.words.len() * 8
            }

            fn capacity(&self) -> Option<usize> {
                self.bits.sized_for.capacity()
            }

            /// (X/m)^k for the X bits set now: exact for this instance.
            fn expected_fpp(&self) -> f64 {
                self.bits.fpp_given_fill()
            }

            /// The exact FPP after `items` distinct inserts (Bose et al.).
            fn theoretical_fpp(&self, items: u64) -> Option<f64> {
                self.bits.exact_fpp(items)
            }
        }

        impl ::filterlab_core::Filter for $filter {
            /// Never fails for a Bloom filter.
            #[inline]
            fn insert_hash(&mut self, hash: u64) -> Result<bool, ::filterlab_core::Error> {
                Ok(self.$insert(hash))
            }

            /// Inserts with the bits of the keys ahead prefetched.
            fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, ::filterlab_core::Error> {
                Ok(self.insert_batch(hashes))
            }

            fn clear(&mut self) {
                self.bits.clear();
                self.len = $crate::words::Counter::new(0);
            }
        }

        impl<K: ::filterlab_core::Key> Extend<K> for $filter {
            #[doc = concat!("Inserts every key as [`insert_many`](", stringify!($filter), "::insert_many) does.")]
            fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
                self.insert_many(keys);
            }
        }

        impl ::filterlab_core::Persist for $filter {
            type Config = $crate::words::BloomConfig;
            /// Kind 1, the format of `BloomFilter` and `AtomicBloomFilter`
            /// alike.
            const KIND: ::filterlab_core::FilterKind = ::filterlab_core::FilterKind::Bloom;

            fn config(&self) -> $crate::words::BloomConfig {
                self.bits.config()
            }

            fn header(&self) -> ::filterlab_core::format::Header {
                let items = $crate::words::Counter::recorded(&self.len, || self.bits.set_bits());
                self.bits.header(items)
            }

            fn write_payload<W: ::std::io::Write>(
                &self,
                out: &mut ::filterlab_core::format::FrameWriter<W>,
            ) -> Result<(), ::filterlab_core::Error> {
                self.bits.write(out)
            }

            fn config_from_header(
                header: &::filterlab_core::format::Header,
            ) -> Result<$crate::words::BloomConfig, ::filterlab_core::Error> {
                $crate::words::BloomConfig::from_header(header)
            }

            fn read_payload<R: ::std::io::Read>(
                config: $crate::words::BloomConfig,
                header: &::filterlab_core::format::Header,
                input: &mut ::filterlab_core::format::FrameReader<R>,
            ) -> Result<Self, ::filterlab_core::Error> {
                let bits = $crate::words::BitArray::read(config, header, input)?;
                Ok(Self {
                    bits: bits.map($crate::words::Word::new),
                    len: $crate::words::Counter::new(header.items),
                })
            }
        }

        impl ::std::fmt::Debug for $filter {
            /// A summary; the bit array itself can be gigabytes.
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                let bits = &self.bits;
                let len = $crate::words::Counter::get(&self.len);
                let size = ("num_bits", bits.num_bits);
                let hashes = (bits.num_hashes, &bits.hasher);
                $crate::common::debug_summary(f, stringify!($filter), size, hashes, len, &bits.sized_for)
                    .field("set_bits", &self.set_bits())
                    .finish_non_exhaustive()
            }
        }

        ::filterlab_core::serde_via_format!($filter);
        ::filterlab_core::inherent_methods!($filter: filter, write, read);
    };
}
pub(crate) use word_filter;

#[cfg(test)]
mod tests {
    use filterlab_core::mix64;

    use super::*;

    /// Random cases (fewer under Miri, which runs the unchecked reads).
    const CASES: u64 = if cfg!(miri) { 300 } else { 20_000 };

    /// The probe loops (unchecked reads, the lookup's early exit and its
    /// late second hash) against a plain reference: every probe's bit, read
    /// with bounds checks, on random sparse and dense arrays whose sizes are
    /// and are not multiples of 64 bits, k from 1 to 20.
    #[test]
    fn probes_match_a_checked_reference() {
        let mut next = 0x0bad_5eed_u64;
        let mut random = || {
            next = mix64(next.wrapping_add(0x9e37_79b9_7f4a_7c15));
            next
        };
        for case in 0..CASES {
            let num_bits = 1 + random() % 700;
            let dense = case % 2 == 0;
            let mut words: Vec<u64> = (0..num_bits.div_ceil(64))
                .map(|_| {
                    if dense {
                        random() | random()
                    } else {
                        random() & random()
                    }
                })
                .collect();
            let tail = num_bits % 64;
            if tail != 0 {
                *words.last_mut().unwrap() &= (1 << tail) - 1;
            }
            let (hash, num_hashes) = (random(), 1 + (case % 20) as u32);
            let indexes: Vec<u64> = Probes::new(hash, num_bits)
                .take(num_hashes as usize)
                .collect();
            let is_set = |words: &[u64], i: u64| words[(i >> 6) as usize] >> (i & 63) & 1 == 1;
            let present = indexes.iter().all(|&i| is_set(&words, i));
            assert_eq!(all_bits_set(&words, num_bits, num_hashes, hash), present);
            let mut visited = Vec::new();
            for_each_probe(&words, num_bits, num_hashes, hash, |word, bit| {
                visited.push((std::ptr::from_ref(word), bit));
            });
            let expected: Vec<_> = indexes
                .iter()
                .map(|&i| (&raw const words[(i >> 6) as usize], (i & 63) as u32))
                .collect();
            assert_eq!(visited, expected);
            for_each_probe_mut(&mut words, num_bits, num_hashes, hash, |word, bit| {
                *word |= 1 << bit;
            });
            assert!(indexes.iter().all(|&i| is_set(&words, i)));
            assert!(all_bits_set(&words, num_bits, num_hashes, hash));
        }
    }
}
