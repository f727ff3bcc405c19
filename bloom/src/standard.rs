//! The standard Bloom filter: k probes over one bit array.

use std::fmt;
use std::io::{Read, Write};
use std::sync::atomic::Ordering;

use filterlab_core::format::{FrameReader, FrameWriter, Header};
use filterlab_core::memory::{check_memory, zeroed_words};
use filterlab_core::sizing::SizeSearch;
use filterlab_core::theory::{
    bloom_estimate_items, bloom_fpp_classic, bloom_fpp_exact, bloom_fpp_given_fill,
    hash_bits_needed,
};
use filterlab_core::{
    Error, ErrorKind, Filter, FilterKind, Key, KeyHasher, Persist, Probes, for_each_batch,
};

use crate::AtomicBloomFilter;
use crate::atomic::AtomicU64;
use crate::common::{
    BuilderBase, SizedFor, Target, WordArray, builder_setters, count_ones, hashes_from_header,
    merge_by_words, serde_via_format,
};
use crate::kernel::prefetch;
use crate::sizing::{BloomSizing, HashChoice};

/// Everything that decides which bits a key sets: two filters with equal
/// configurations can be merged, and a file is only accepted by
/// [`Persist::read_from_expecting`] when its configuration equals the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BloomConfig {
    /// Bits in the array.
    pub num_bits: u64,
    /// Probes per key.
    pub num_hashes: u32,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

/// A standard Bloom filter: each key sets k bits chosen over the whole array.
///
/// Sized from an expected item count and a target FPP with an exact formula,
/// so the FPP you configure is the FPP you get at that load. Nothing inserted
/// is ever reported absent.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::{BloomFilter, Filter};
///
/// let mut seen = BloomFilter::with_fpp(0.01).expected_items(10_000).seed(7).build()?;
/// assert!(seen.insert("order-1"));      // new
/// assert!(!seen.insert("order-1"));     // already present
/// assert!(seen.contains("order-1"));
/// assert_eq!(seen.len(), 1);
///
/// // No false negatives; about 1% false positives at capacity.
/// seen.extend((0..10_000u64).map(|i| i * 2));
/// assert!((0..10_000u64).all(|i| seen.contains(&(i * 2))));
/// let false_positives = (0..10_000u64).filter(|i| seen.contains(&(i * 2 + 1))).count();
/// assert!(false_positives < 150);
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone)]
pub struct BloomFilter {
    // Crate-visible for the in-place conversion to `AtomicBloomFilter`.
    pub(crate) bits: Vec<u64>,
    pub(crate) num_bits: u64,
    pub(crate) num_hashes: u32,
    pub(crate) hasher: KeyHasher,
    pub(crate) len: u64,
    pub(crate) sized_for: SizedFor,
}

/// Configures a [`BloomFilter`]; made by [`BloomFilter::with_fpp`] or
/// [`BloomFilter::with_bits`].
#[derive(Clone, Debug)]
#[must_use]
pub struct BloomBuilder {
    base: BuilderBase,
    power_of_two: bool,
}

impl BloomBuilder {
    builder_setters!();

    /// Round the bit array up to a power of two, then use the smallest k that
    /// still meets the target (as IBM Streams' BloomFilter operator does):
    /// more memory, fewer probes per operation.
    pub fn power_of_two(mut self, enabled: bool) -> Self {
        self.power_of_two = enabled;
        self
    }

    /// The sizing this builder would allocate, without allocating.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`] for an FPP outside (0, 1), zero items,
    /// zero bits or a hash count outside 1..=64; [`ErrorKind::TooLarge`] over
    /// the memory limit.
    pub fn sizing(&self) -> Result<BloomSizing, Error> {
        match self.base.target {
            Target::Fpp(fpp) => self.sizing_for_fpp(fpp),
            Target::Bits(bits) => self.sizing_for_bits(bits),
        }
    }

    fn sizing_for_fpp(&self, fpp: f64) -> Result<BloomSizing, Error> {
        let items = self.base.items_for_fpp(fpp)?;
        let fpp_of = |bits: u64, k: u32| bloom_fpp_exact(bits, k, items);
        let problem = SizeSearch::new(items, fpp, 64, self.base.max_bits(), &fpp_of);
        let (mut bits, mut k, mut achieved) = problem.smallest()?;
        let mut choice = HashChoice::Optimal {
            optimum: bits as f64 / items as f64 * std::f64::consts::LN_2,
        };
        if self.power_of_two {
            bits = bits.checked_next_power_of_two().unwrap_or(u64::MAX);
            check_memory(bits / 8, self.base.max_memory, "the power-of-two bit array")?;
            (k, achieved) = problem.smallest_hashes(bits)?;
            choice = HashChoice::SmallestMeetingTarget {
                optimum: bits as f64 / items as f64 * std::f64::consts::LN_2,
            };
        }
        if let Some(explicit) = self.base.explicit_hashes()? {
            k = explicit;
            achieved = bloom_fpp_exact(bits, k, items)?;
            choice = HashChoice::Explicit;
        }
        Ok(BloomSizing {
            filter: "BloomFilter",
            expected_items: items,
            target_fpp: Some(fpp),
            requested_bits: filterlab_core::theory::bloom_optimal_bits(items, fpp),
            num_bits: bits,
            num_hashes: k,
            hash_choice: choice,
            power_of_two: self.power_of_two,
            unit_bits: 64,
            fpp_at_capacity: achieved,
            fpp_classic: bloom_fpp_classic(bits, k, items),
            hash_bits_needed: problem.hash_bits_needed(),
        })
    }

    fn sizing_for_bits(&self, requested: u64) -> Result<BloomSizing, Error> {
        if requested == 0 {
            return Err(Error::invalid("a Bloom filter needs at least 1 bit"));
        }
        let bits = if self.power_of_two {
            requested.checked_next_power_of_two().ok_or_else(|| {
                Error::new(ErrorKind::TooLarge, "no power of two holds that many bits")
            })?
        } else {
            requested
        };
        check_memory(
            bits.div_ceil(64).saturating_mul(8),
            self.base.max_memory,
            "the bit array",
        )?;
        let (k, choice, items) = self.base.hashes_for_bits(bits, |items| {
            let fpp_of = |bits: u64, k: u32| bloom_fpp_exact(bits, k, items);
            let problem = SizeSearch::new(items, 0.5, 1, self.base.max_bits(), &fpp_of);
            let optimum = bits as f64 / items as f64 * std::f64::consts::LN_2;
            Ok((
                problem.best_hashes(bits)?.0,
                HashChoice::Optimal { optimum },
            ))
        })?;
        let achieved = bloom_fpp_exact(bits, k, items)?;
        Ok(BloomSizing {
            filter: "BloomFilter",
            expected_items: items,
            target_fpp: None,
            requested_bits: requested as f64,
            num_bits: bits,
            num_hashes: k,
            hash_choice: choice,
            power_of_two: self.power_of_two,
            unit_bits: 64,
            fpp_at_capacity: achieved,
            fpp_classic: bloom_fpp_classic(bits, k, items),
            hash_bits_needed: hash_bits_needed(items, achieved),
        })
    }

    /// The configuration this builder would produce (for
    /// [`Persist::read_from_expecting`]), without allocating.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing).
    pub fn config(&self) -> Result<BloomConfig, Error> {
        let sizing = self.sizing()?;
        Ok(BloomConfig {
            num_bits: sizing.num_bits,
            num_hashes: sizing.num_hashes,
            hasher: self.base.hasher,
        })
    }

    /// Allocates the filter.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing); [`ErrorKind::TooLarge`] when the
    /// allocator refuses the memory.
    pub fn build(&self) -> Result<BloomFilter, Error> {
        let sizing = self.sizing()?;
        BloomFilter::from_sizing(&sizing, self.base.hasher)
    }

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
    /// A builder that sizes the filter for a target FPP; give it
    /// [`expected_items`](BloomBuilder::expected_items).
    pub fn with_fpp(fpp: f64) -> BloomBuilder {
        Self::builder(Target::Fpp(fpp))
    }

    /// A builder for an explicit number of bits; give it
    /// [`hashes`](BloomBuilder::hashes) or
    /// [`expected_items`](BloomBuilder::expected_items) to choose k.
    pub fn with_bits(num_bits: u64) -> BloomBuilder {
        Self::builder(Target::Bits(num_bits))
    }

    fn builder(target: Target) -> BloomBuilder {
        BloomBuilder {
            base: BuilderBase::new(target),
            power_of_two: false,
        }
    }

    /// The sizing for `expected_items` items at `fpp`, without allocating:
    /// the smallest whole-word bit array and k whose exact FPP at that load
    /// meets the target.
    ///
    /// # Errors
    ///
    /// As [`BloomBuilder::sizing`].
    pub fn params(expected_items: u64, fpp: f64) -> Result<BloomSizing, Error> {
        Self::with_fpp(fpp).expected_items(expected_items).sizing()
    }

    fn from_sizing(sizing: &BloomSizing, hasher: KeyHasher) -> Result<Self, Error> {
        let words = usize::try_from(sizing.num_bits.div_ceil(64))
            .map_err(|_| Error::new(ErrorKind::TooLarge, "bit array exceeds the address space"))?;
        Ok(Self {
            bits: zeroed_words(words)?,
            num_bits: sizing.num_bits,
            num_hashes: sizing.num_hashes,
            hasher,
            len: 0,
            sized_for: SizedFor {
                items: sizing.expected_items,
                fpp: sizing.target_fpp,
            },
        })
    }

    /// Adds `key`; returns `true` when it was not already reported present
    /// (and counts it in `len`). A Bloom filter never refuses a key.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.add_hash(self.hasher.hash(key))
    }

    /// Adds a pre-hashed key (the infallible body of `Filter::insert_hash`).
    #[inline]
    fn add_hash(&mut self, hash: u64) -> bool {
        let new = set_bits(&mut self.bits, self.num_bits, self.num_hashes, hash);
        self.len += u64::from(new);
        new
    }

    /// Adds every key, hashing them in batches and prefetching the bits of
    /// the keys ahead; returns how many were new. (`Extend` does the same
    /// without the count.)
    pub fn insert_many<I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator,
        I::Item: Key,
    {
        let hasher = self.hasher;
        let Ok(new) = for_each_batch(keys, &hasher, |hashes| {
            Ok::<_, std::convert::Infallible>(self.insert_batch(hashes))
        });
        new
    }

    fn insert_batch(&mut self, hashes: &[u64]) -> usize {
        let prefetching = self.bits.len() >= PREFETCH_MIN_WORDS;
        let mut new = 0;
        for (i, &hash) in hashes.iter().enumerate() {
            if let Some(&ahead) = hashes.get(i + PREFETCH_AHEAD).filter(|_| prefetching) {
                prefetch_probes(&self.bits, self.num_bits, self.num_hashes, ahead);
            }
            new += usize::from(self.add_hash(hash));
        }
        new
    }

    /// Whether a pre-hashed key may be present.
    #[inline]
    fn probe(&self, hash: u64) -> bool {
        all_bits_set(&self.bits, self.num_bits, self.num_hashes, hash)
    }

    /// Converts into an [`AtomicBloomFilter`] in place: the bit array's
    /// allocation is reused (on 64-bit targets), not copied.
    pub fn into_atomic(self) -> AtomicBloomFilter {
        AtomicBloomFilter::from(self)
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
        count_ones(&self.bits)
    }

    /// The fraction of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.set_bits() as f64 / self.num_bits as f64
    }

    /// The number of distinct items estimated from the set bits (Swamidass and
    /// Baldi): meaningful after merges, when [`len`](Filter::len) is itself an
    /// estimate. Infinite when every bit is set.
    pub fn estimated_len(&self) -> f64 {
        bloom_estimate_items(self.set_bits(), self.num_bits, self.num_hashes)
    }

    /// The classic estimate (1 − (1 − 1/m)^{kn})^k at `items`; slightly
    /// optimistic, see [`theoretical_fpp`](Filter::theoretical_fpp).
    pub fn classic_fpp(&self, items: u64) -> f64 {
        bloom_fpp_classic(self.num_bits, self.num_hashes, items)
    }

    /// This filter's configuration.
    pub fn config(&self) -> BloomConfig {
        BloomConfig {
            num_bits: self.num_bits,
            num_hashes: self.num_hashes,
            hasher: self.hasher,
        }
    }
}

/// Keys ahead of the one being processed whose bits a batched operation
/// prefetches. Measured on a 256 MiB filter at 10 bits/key (k = 7), with
/// all k words prefetched: 8 beats 4, 16 and 32 (each key already has k
/// lines in flight).
pub(crate) const PREFETCH_AHEAD: usize = 8;

/// A word of a bit array as the lookup reads it: a plain `u64`, or an
/// `AtomicU64` shared with inserting threads (a relaxed load, the same
/// instruction as a plain one on common targets).
pub(crate) trait Word {
    /// The word's current value.
    fn get(&self) -> u64;
}

impl Word for u64 {
    #[inline]
    fn get(&self) -> u64 {
        *self
    }
}

impl Word for AtomicU64 {
    #[inline]
    fn get(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }
}

/// Calls `set(word, mask)` for each of the key's k probes (the word index
/// and the probe's bit in it); whether any call reported a clear bit. The
/// one probe loop behind plain and atomic inserts.
#[inline]
pub(crate) fn set_bits_with(
    num_bits: u64,
    num_hashes: u32,
    hash: u64,
    mut set: impl FnMut(usize, u64) -> bool,
) -> bool {
    let mut probes = Probes::new(hash, num_bits);
    let mut new = false;
    // A count-down loop compiles to one fused decrement-and-branch per probe.
    let mut remaining = num_hashes;
    while remaining != 0 {
        let index = probes.next_index();
        new |= set((index >> 6) as usize, 1 << (index & 63));
        remaining -= 1;
    }
    new
}

/// Sets the key's k bits; whether any was clear. A free function over a
/// slice so the compiler knows the bit array aliases nothing else and keeps
/// the sizes in registers across the stores.
///
/// Whether the key is new is asked of the lookup first rather than read back
/// from each write, so every probe's write is a single memory-destination OR:
/// fewer instructions per insert let the out-of-order window overlap more
/// inserts' cache misses (measured here at 10M keys: about 10% faster).
#[inline]
fn set_bits(bits: &mut [u64], num_bits: u64, num_hashes: u32, hash: u64) -> bool {
    let new = !all_bits_set(bits, num_bits, num_hashes, hash);
    set_bits_with(num_bits, num_hashes, hash, |word, mask| {
        bits[word] |= mask;
        false
    });
    new
}

/// Whether all of the key's k bits are set.
///
/// The first three probes are tested together with one branch: at the usual
/// half-full array a never-inserted key fails them seven times in eight, so
/// that branch predicts well and successive lookups overlap their memory
/// accesses, where a branch per probe mispredicts on almost every negative
/// lookup. Measured here at 10M keys: negative lookups about 1.8x faster.
#[inline]
pub(crate) fn all_bits_set<W: Word>(bits: &[W], num_bits: u64, num_hashes: u32, hash: u64) -> bool {
    let bit = |index: u64| (bits[(index >> 6) as usize].get() >> (index & 63)) & 1;
    let mut probes = Probes::new(hash, num_bits);
    let head = num_hashes.min(BRANCH_FREE_PROBES);
    let mut all = 1;
    for _ in 0..head {
        all &= bit(probes.next_index());
    }
    if all == 0 {
        return false;
    }
    let mut remaining = num_hashes - head;
    while remaining != 0 {
        if bit(probes.next_index()) == 0 {
            return false;
        }
        remaining -= 1;
    }
    true
}

/// Probes tested without a branch between them by [`all_bits_set`].
const BRANCH_FREE_PROBES: u32 = 3;

/// Prefetches the words of the key's first `count` probes.
#[inline]
pub(crate) fn prefetch_probes<W>(bits: &[W], num_bits: u64, count: u32, hash: u64) {
    let mut probes = Probes::new(hash, num_bits);
    for _ in 0..count {
        prefetch(&bits[(probes.next_index() >> 6) as usize]);
    }
}

/// Batched lookup: while testing key i, prefetches all k words of key
/// i + [`PREFETCH_AHEAD`]. (Prefetching only the branch-free head, which is
/// all most negative lookups read, left positive lookups on a 256 MiB filter
/// at the one-by-one speed: 84 ns against 38 ns per key, for a 5% gain on
/// negative ones.)
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

/// Arrays smaller than this (1 MiB) stay in cache: prefetching their k words
/// per key only adds instructions (measured at 100,000 keys, 10 bits/key:
/// batched lookups 9.5 ns with it, 7.0 ns one by one).
pub(crate) const PREFETCH_MIN_WORDS: usize = 1 << 17;

impl Filter for BloomFilter {
    fn hasher(&self) -> &KeyHasher {
        &self.hasher
    }

    /// Never fails for a Bloom filter.
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(self.add_hash(hash))
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.probe(hash)
    }

    /// Inserts with the bits of the keys ahead prefetched.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        Ok(self.insert_batch(hashes))
    }

    /// Looks up with the first bits of the keys ahead prefetched, so that
    /// their memory accesses overlap.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        contains_batch(&self.bits, self.num_bits, self.num_hashes, hashes, found);
    }

    fn len(&self) -> usize {
        usize::try_from(self.len).unwrap_or(usize::MAX)
    }

    fn clear(&mut self) {
        self.bits.fill(0);
        self.len = 0;
    }

    fn memory_usage(&self) -> usize {
        self.bits.len() * 8
    }

    fn capacity(&self) -> Option<usize> {
        self.sized_for.capacity()
    }

    /// (X/m)^k for the X bits set now: exact for this instance.
    fn expected_fpp(&self) -> f64 {
        bloom_fpp_given_fill(self.set_bits(), self.num_bits, self.num_hashes)
    }

    /// The exact FPP after `items` distinct inserts (Bose et al.).
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        bloom_fpp_exact(self.num_bits, self.num_hashes, items).ok()
    }
}

impl<K: Key> Extend<K> for BloomFilter {
    /// Inserts every key as [`insert_many`](BloomFilter::insert_many) does.
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        self.insert_many(keys);
    }
}

impl WordArray for BloomFilter {
    type Config = BloomConfig;

    fn config(&self) -> BloomConfig {
        BloomFilter::config(self)
    }

    fn words(&self) -> &[u64] {
        &self.bits
    }

    fn words_mut(&mut self) -> &mut [u64] {
        &mut self.bits
    }

    fn items(&self) -> u64 {
        self.len
    }

    fn set_items(&mut self, items: u64) {
        self.len = items;
    }

    fn estimated_len(&self) -> f64 {
        BloomFilter::estimated_len(self)
    }
}

merge_by_words!(BloomFilter);

impl PartialEq for BloomFilter {
    fn eq(&self, other: &Self) -> bool {
        self.config() == other.config()
            && self.len == other.len
            && self.sized_for == other.sized_for
            && self.bits == other.bits
    }
}

impl Eq for BloomFilter {}

impl fmt::Debug for BloomFilter {
    /// A summary; the bit array itself can be gigabytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BloomFilter")
            .field("num_bits", &self.num_bits)
            .field("num_hashes", &self.num_hashes)
            .field("hasher", &self.hasher)
            .field("len", &self.len)
            .field("sized_for", &self.sized_for)
            .field("set_bits", &self.set_bits())
            .finish_non_exhaustive()
    }
}

/// Header parameters, in order.
const PARAM_NAMES: [&str; 4] = ["num_bits", "num_hashes", "capacity", "target_fpp"];

impl BloomFilter {
    /// The header of a filter of this configuration, with a zero counter;
    /// shared with `AtomicBloomFilter`, which writes the same format.
    pub(crate) fn header_for(config: &BloomConfig, sized_for: SizedFor) -> Header {
        let [capacity, target_fpp] = sized_for.params();
        Header {
            kind: FilterKind::Bloom,
            hasher: config.hasher,
            items: 0,
            params: vec![
                config.num_bits,
                u64::from(config.num_hashes),
                capacity,
                target_fpp,
            ],
            payload_len: config.num_bits.div_ceil(64) * 8,
        }
    }
}

impl Persist for BloomFilter {
    type Config = BloomConfig;
    const KIND: FilterKind = FilterKind::Bloom;

    fn config(&self) -> BloomConfig {
        BloomFilter::config(self)
    }

    fn header(&self) -> Header {
        let mut header = BloomFilter::header_for(&self.config(), self.sized_for);
        header.items = self.len;
        header
    }

    fn write_payload<W: Write>(&self, out: &mut FrameWriter<W>) -> Result<(), Error> {
        out.write_words(&self.bits)
    }

    fn config_from_header(header: &Header) -> Result<BloomConfig, Error> {
        header.expect_params(PARAM_NAMES.len())?;
        let num_bits = header.param(0, PARAM_NAMES[0])?;
        if num_bits == 0 {
            return Err(Error::new(ErrorKind::InvalidHeader, "zero bits"));
        }
        let num_hashes = hashes_from_header(header, 1)?;
        SizedFor::from_header(header, 2)?;
        header.expect_payload_len(num_bits.div_ceil(64) * 8)?;
        Ok(BloomConfig {
            num_bits,
            num_hashes,
            hasher: header.hasher,
        })
    }

    fn read_payload<R: Read>(
        config: BloomConfig,
        header: &Header,
        input: &mut FrameReader<R>,
    ) -> Result<Self, Error> {
        let words = usize::try_from(config.num_bits.div_ceil(64))
            .map_err(|_| Error::new(ErrorKind::TooLarge, "bit array exceeds the address space"))?;
        let bits = input.read_words(words)?;
        let tail = config.num_bits % 64;
        if tail != 0 && bits.last().is_some_and(|last| last >> tail != 0) {
            return Err(Error::new(
                ErrorKind::InvalidHeader,
                "bits set beyond the end of the array",
            ));
        }
        Ok(Self {
            bits,
            num_bits: config.num_bits,
            num_hashes: config.num_hashes,
            hasher: config.hasher,
            len: header.items,
            sized_for: SizedFor::from_header(header, 2)?,
        })
    }
}

serde_via_format!(BloomFilter);
