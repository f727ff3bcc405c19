//! The counting Bloom filter: one implementation for both layouts and every
//! counter width.

use std::fmt;
use std::marker::PhantomData;

use filterlab_core::sizing::SizedFor;
use filterlab_core::theory::{bloom_fpp_given_block_fills, bloom_fpp_given_fill};
use filterlab_core::{
    Error, ErrorKind, Filter, Key, KeyHasher, Membership, Merge, Probes, RemovableFilter,
    for_each_batch, prefetch,
};

use crate::block;
use crate::builder::{CountingBloomBuilder, CountingBloomConfig};
use crate::counters::{BLOCK_BYTES, BLOCK_WORDS, Counters, Width, block_count};
use crate::kernel;
use crate::layout::{self, Blocked, Layout, Standard, overflow_probability};
use crate::sizing::CountingSizing;

/// A counting Bloom filter with `BITS`-bit counters (4, 8 or 16) laid out
/// by `L` ([`Standard`] or [`Blocked`]). The 4-bit filters have names of
/// their own, [`CountingBloomFilter`] and [`BlockedCountingBloomFilter`];
/// other widths are `CountingBloom<Standard, 8>` and so on, built with
/// [`CountingBloomBuilder::counter_bits`].
///
/// Each key adds one to k counters and a removal takes one away, so keys can
/// be deleted. Nothing inserted and not removed is ever reported absent:
///
/// - a counter that reaches its largest value 2^BITS − 1 **saturates**: it
///   sticks there and is never decremented again (see
///   [`saturated_counters`](Self::saturated_counters) and
///   [`overflow_probability`](Self::overflow_probability));
/// - a removal that would take a counter below zero changes nothing and
///   returns `false`, and so does any removal from a filter whose
///   [`len`](Membership::len) is zero.
///
/// One thing the filter cannot detect: **removing a key that was never
/// inserted** but tests positive (a false positive) takes one from counters
/// that inserted keys need, and can make those keys false negatives. Only
/// remove keys you inserted.
///
/// The filter is a multiset: inserting a key again adds a copy (and returns
/// `false`, as the key was present), and `len` counts every insert minus
/// every successful removal.
#[derive(Clone)]
pub struct CountingBloom<L: Layout, const BITS: u32> {
    counters: Counters,
    num_counters: u64,
    num_hashes: u32,
    hasher: KeyHasher,
    len: u64,
    sized_for: SizedFor,
    /// The blocked layout's kernel, detected once (unused by the standard
    /// layout).
    kernel: block::Kernel,
    layout: PhantomData<L>,
}

/// A counting Bloom filter with 4-bit counters: each key's k counters
/// chosen over the whole array, exactly where
/// [`BloomFilter`](filterlab_bloom::BloomFilter) sets its bits, so that
/// [`to_bloom`](CountingBloom::to_bloom) gives the equivalent Bloom filter.
/// For 8- or 16-bit counters see [`CountingBloomBuilder::counter_bits`].
///
/// # Examples
///
/// ```
/// use filterlab_counting_bloom::{CountingBloomFilter, Filter};
///
/// let mut sessions = CountingBloomFilter::with_fpp(0.01).expected_items(10_000).seed(7).build()?;
/// assert!(sessions.insert("alice"));       // new
/// assert!(!sessions.insert("alice"));      // a second copy
/// assert_eq!(sessions.len(), 2);
/// assert!(sessions.remove("alice"));
/// assert!(sessions.contains("alice"));     // one copy left
/// assert!(sessions.remove("alice"));
/// assert!(!sessions.contains("alice"));
/// assert!(!sessions.remove("alice"));      // nothing left to remove: unchanged
/// # Ok::<(), filterlab_counting_bloom::Error>(())
/// ```
pub type CountingBloomFilter = CountingBloom<Standard, 4>;

/// A counting Bloom filter with 4-bit counters whose keys each keep their k
/// counters in one 64-byte block (128 counters), so an insert, lookup or remove
/// touches one cache line. Sized by the exact blocked formula, it takes more
/// counters than [`CountingBloomFilter`] for the same FPP.
///
/// # Examples
///
/// ```
/// use filterlab_counting_bloom::{BlockedCountingBloomFilter, Filter};
///
/// let mut live = BlockedCountingBloomFilter::with_fpp(0.01).expected_items(10_000).build()?;
/// live.extend(0..10_000u64);
/// assert_eq!(live.remove_many(0..5_000u64), 5_000);
/// assert!(live.contains_many(5_000..10_000u64).iter().all(|&hit| hit));
/// # Ok::<(), filterlab_counting_bloom::Error>(())
/// ```
pub type BlockedCountingBloomFilter = CountingBloom<Blocked, 4>;

/// Counts over every counter, in one pass.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    pub(crate) nonzero: u64,
    pub(crate) saturated: u64,
    pub(crate) sum: u128,
}

/// Arrays smaller than this (1 MiB) stay in cache: batches skip prefetching.
const PREFETCH_MIN_BLOCKS: usize = 1 << 14;

impl CountingBloomFilter {
    /// A builder that sizes the filter for a target FPP; give it
    /// [`expected_items`](CountingBloomBuilder::expected_items). 4-bit
    /// counters unless [`counter_bits`](CountingBloomBuilder::counter_bits)
    /// says otherwise.
    pub fn with_fpp(fpp: f64) -> CountingBloomBuilder<Standard, 4> {
        CountingBloomBuilder::with_fpp(fpp)
    }

    /// A builder for an explicit number of counters; give it
    /// [`hashes`](CountingBloomBuilder::hashes) or
    /// [`expected_items`](CountingBloomBuilder::expected_items) to choose k.
    pub fn with_counters(num_counters: u64) -> CountingBloomBuilder<Standard, 4> {
        CountingBloomBuilder::with_counters(num_counters)
    }

    /// The sizing of a 4-bit filter for `expected_items` items at `fpp`,
    /// without allocating: the fewest counters (in whole 64-byte blocks)
    /// and the k whose exact FPP at that load meets the target.
    ///
    /// # Errors
    ///
    /// As [`CountingBloomBuilder::sizing`].
    pub fn params(expected_items: u64, fpp: f64) -> Result<CountingSizing, Error> {
        Self::with_fpp(fpp).expected_items(expected_items).sizing()
    }
}

impl BlockedCountingBloomFilter {
    /// A builder that sizes the filter for a target FPP with the exact
    /// blocked formula; give it
    /// [`expected_items`](CountingBloomBuilder::expected_items).
    pub fn with_fpp(fpp: f64) -> CountingBloomBuilder<Blocked, 4> {
        CountingBloomBuilder::with_fpp(fpp)
    }

    /// A builder for an explicit number of counters, rounded up to whole
    /// blocks; give it [`hashes`](CountingBloomBuilder::hashes) or
    /// [`expected_items`](CountingBloomBuilder::expected_items) to choose k.
    pub fn with_counters(num_counters: u64) -> CountingBloomBuilder<Blocked, 4> {
        CountingBloomBuilder::with_counters(num_counters)
    }

    /// The sizing of a 4-bit blocked filter for `expected_items` items at
    /// `fpp`, without allocating.
    ///
    /// # Errors
    ///
    /// As [`CountingBloomBuilder::sizing`].
    pub fn params(expected_items: u64, fpp: f64) -> Result<CountingSizing, Error> {
        Self::with_fpp(fpp).expected_items(expected_items).sizing()
    }
}

impl<L: Layout, const BITS: u32> CountingBloomBuilder<L, BITS> {
    /// Allocates the filter.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing); [`ErrorKind::TooLarge`] when the
    /// allocator refuses the memory.
    pub fn build(&self) -> Result<CountingBloom<L, BITS>, Error> {
        let sizing = self.sizing()?;
        let blocks = block_count::<BITS>(sizing.num_counters)?;
        let sized_for = sizing.sized_for();
        Ok(CountingBloom::from_parts(
            &self.config_of(&sizing),
            sized_for,
            Counters::zeroed(blocks)?,
            0,
        ))
    }
}

impl<L: Layout, const BITS: u32> CountingBloom<L, BITS> {
    /// A filter of `config` with the given counters (validated by the caller).
    pub(crate) fn from_parts(
        config: &CountingBloomConfig,
        sized_for: SizedFor,
        counters: Counters,
        len: u64,
    ) -> Self {
        let () = Width::<BITS>::CHECK;
        Self {
            counters,
            num_counters: config.num_counters,
            num_hashes: config.num_hashes,
            hasher: config.hasher,
            len,
            sized_for,
            kernel: block::Kernel::detect::<BITS>(config.num_hashes),
            layout: PhantomData,
        }
    }

    #[inline]
    pub(crate) fn counter_at(&self, index: u64) -> u64 {
        let (word, shift) = Width::<BITS>::locate(index);
        (self.counters.word(word) >> shift) & Width::<BITS>::MAX
    }

    /// The fewest counts one insert adds (before saturation): k for the
    /// standard layout, one for the blocked one, whose keys add one to each
    /// distinct counter they name.
    pub(crate) fn least_counts_per_item(&self) -> u32 {
        if L::BLOCKED { 1 } else { self.num_hashes }
    }

    /// The block of a key of the blocked layout.
    #[inline]
    fn block_of(&self, hash: u64) -> usize {
        block::block_index(hash, self.counters.blocks.len())
    }

    /// Whether every counter of the key is nonzero.
    #[inline]
    fn probe(&self, hash: u64) -> bool {
        let k = self.num_hashes;
        if L::BLOCKED {
            self.kernel
                .contains::<BITS>(&self.counters.blocks[self.block_of(hash)], hash, k)
        } else {
            let probes = Probes::new(hash, self.num_counters);
            kernel::all_nonzero::<BITS>(&self.counters, probes, k)
        }
    }

    /// Adds one to the counters of a pre-hashed key (`UP`: whether it was
    /// new), or takes one from them (whether it could: see `take`). Always
    /// inlined, as `add` is.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn step<const UP: bool>(&mut self, hash: u64) -> bool {
        let k = self.num_hashes;
        if L::BLOCKED {
            let index = self.block_of(hash);
            let block = &mut self.counters.blocks[index];
            self.kernel.step::<BITS, UP>(block, hash, k)
        } else {
            let probes = Probes::new(hash, self.num_counters);
            if UP {
                kernel::increment::<BITS>(&mut self.counters, probes, k)
            } else {
                kernel::decrement::<BITS>(&mut self.counters, probes, k)
            }
        }
    }

    /// Inserts a pre-hashed key; whether it was new. Always inlined into
    /// its two callers (the one-key insert and the batch), and `step` into
    /// it: left to the inliner, a user's loop of one-key inserts called
    /// them, 15 instructions more a key for the blocked layout (callgrind:
    /// 335 → 350). All three of `insert_hash`, `add` and `step` are
    /// needed: with any one left to the inliner, 346 to 363.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn add(&mut self, hash: u64) -> bool {
        let new = self.step::<true>(hash);
        self.len = self.len.saturating_add(1);
        new
    }

    /// Removes one copy of a pre-hashed key, or changes nothing and returns
    /// `false` when it cannot be present: `len` is zero, or a counter would
    /// go below zero.
    #[inline]
    fn take(&mut self, hash: u64) -> bool {
        if self.len == 0 {
            return false;
        }
        let taken = self.step::<false>(hash);
        self.len -= u64::from(taken);
        taken
    }

    /// Asks for the memory of a key's counters ahead of its turn in a batch:
    /// its block, or its k cache lines.
    #[inline]
    fn prefetch_key(&self, hash: u64) {
        if L::BLOCKED {
            prefetch(&self.counters.blocks[self.block_of(hash)]);
        } else {
            let probes = Probes::new(hash, self.num_counters);
            for word in kernel::probe_words::<BITS>(probes, self.num_hashes) {
                prefetch(&self.counters.blocks[word / BLOCK_WORDS]);
            }
        }
    }

    /// Runs `op` on every key of a batch, prefetching the counters of the
    /// keys `L::PREFETCH_AHEAD` ahead; how many times it returned `true`.
    fn batch(&mut self, hashes: &[u64], op: impl Fn(&mut Self, u64) -> bool) -> usize {
        let ahead = self.prefetch_ahead(hashes);
        let mut hits = 0;
        for (i, &hash) in hashes.iter().enumerate() {
            if let Some(&next) = ahead.and_then(|ahead| hashes.get(i + ahead)) {
                self.prefetch_key(next);
            }
            hits += usize::from(op(self, hash));
        }
        hits
    }

    /// How far ahead a batch prefetches, after prefetching the memory of
    /// its first keys that far: not at all for arrays that stay in cache.
    fn prefetch_ahead(&self, hashes: &[u64]) -> Option<usize> {
        let ahead = self.prefetch_distance()?;
        for &hash in hashes.iter().take(ahead) {
            self.prefetch_key(hash);
        }
        Some(ahead)
    }

    /// How far ahead batches prefetch: not at all for arrays that stay in
    /// cache.
    fn prefetch_distance(&self) -> Option<usize> {
        (self.counters.blocks.len() >= PREFETCH_MIN_BLOCKS).then_some(L::PREFETCH_AHEAD)
    }

    /// Adds `key` (another copy if it is present already); returns `true`
    /// when it was not already reported present. Never refuses a key: a
    /// counter that is full saturates instead.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.add(self.hasher.hash(key))
    }

    /// Removes one copy of `key`; `false`, with the filter unchanged, when
    /// it cannot be present (a counter is zero, or the filter holds no item).
    ///
    /// Only remove keys that were inserted: removing a never-inserted key
    /// that tests positive takes one from counters that inserted keys need.
    #[inline]
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.take(self.hasher.hash(key))
    }

    /// An upper bound on how many copies of `key` the filter holds: the
    /// smallest of its counters (0 when it is absent; 2^BITS − 1 when they
    /// are all saturated, meaning "at least that many").
    pub fn count<K: Key + ?Sized>(&self, key: &K) -> u32 {
        self.count_hash(self.hasher.hash(key))
    }

    /// [`count`](Self::count) for a pre-hashed key.
    pub fn count_hash(&self, hash: u64) -> u32 {
        let k = self.num_hashes;
        let count = if L::BLOCKED {
            block::minimum::<BITS>(&self.counters.blocks[self.block_of(hash)], hash, k)
        } else {
            kernel::minimum::<BITS>(&self.counters, Probes::new(hash, self.num_counters), k)
        };
        count as u32
    }

    /// Adds every key, hashing them in batches and prefetching the counters
    /// of the keys ahead; returns how many were new. (`Extend` does the same
    /// without the count.)
    pub fn insert_many<I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator,
        I::Item: Key,
    {
        self.hashed_batches(keys, |filter, hashes| filter.batch(hashes, Self::add))
    }

    /// Removes one copy of every key, in order, hashing them in batches and
    /// prefetching the counters of the keys ahead; returns how many were
    /// removed (the others could not be present and changed nothing).
    pub fn remove_many<I>(&mut self, keys: I) -> usize
    where
        I: IntoIterator,
        I::Item: Key,
    {
        self.hashed_batches(keys, Self::remove_hashes)
    }

    /// Hashes `keys` in batches and runs `op` on each; the sum of its counts.
    fn hashed_batches<I>(&mut self, keys: I, op: impl Fn(&mut Self, &[u64]) -> usize) -> usize
    where
        I: IntoIterator,
        I::Item: Key,
    {
        let hasher = self.hasher;
        let Ok(count) = for_each_batch(keys, &hasher, |hashes| {
            Ok::<_, std::convert::Infallible>(op(self, hashes))
        });
        count
    }

    /// Removes one copy of each pre-hashed key, in order, prefetching ahead;
    /// returns how many were removed. Leaves the filter exactly as
    /// [`remove_hash`](RemovableFilter::remove_hash) on each would.
    pub fn remove_hashes(&mut self, hashes: &[u64]) -> usize {
        self.batch(hashes, Self::take)
    }

    /// Counters in the array.
    pub fn num_counters(&self) -> u64 {
        self.num_counters
    }

    /// Probes (counters) per key.
    pub fn num_hashes(&self) -> u32 {
        self.num_hashes
    }

    /// Bits per counter: 4, 8 or 16.
    pub fn counter_bits(&self) -> u32 {
        BITS
    }

    /// The largest value a counter holds, 2^BITS − 1, where it saturates.
    pub fn counter_max(&self) -> u32 {
        Width::<BITS>::MAX as u32
    }

    /// The FPP target the filter was sized for, if any.
    pub fn target_fpp(&self) -> Option<f64> {
        self.sized_for.fpp
    }

    /// One pass over every counter.
    pub(crate) fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for word in self.counters.words() {
            tally.nonzero += u64::from(Width::<BITS>::nonzero(word).count_ones());
            tally.saturated += u64::from(Width::<BITS>::saturated(word).count_ones());
            tally.sum += u128::from(Width::<BITS>::counters(word).sum::<u64>());
        }
        tally
    }

    /// Counters stuck at their maximum: they are never decremented again,
    /// so the keys they count can no longer be removed completely (they stay
    /// present; nothing becomes a false negative). O(m).
    pub fn saturated_counters(&self) -> u64 {
        self.counters
            .words()
            .map(|word| u64::from(Width::<BITS>::saturated(word).count_ones()))
            .sum()
    }

    /// Counters above zero: the bits set in the equivalent Bloom filter. O(m).
    pub fn nonzero_counters(&self) -> u64 {
        self.counters
            .words()
            .map(|word| u64::from(Width::<BITS>::nonzero(word).count_ones()))
            .sum()
    }

    /// The fraction of counters above zero.
    pub fn fill_ratio(&self) -> f64 {
        self.nonzero_counters() as f64 / self.num_counters as f64
    }

    /// An upper bound on the probability that some counter has saturated
    /// after `items` inserts of distinct keys: m times the exact probability
    /// that one counter received 2^BITS − 1 increments (a binomial tail, or
    /// for the blocked layout its mixture over block loads), at most 1.
    pub fn overflow_probability_at(&self, items: u64) -> f64 {
        overflow_probability::<L, BITS>(self.num_counters, self.num_hashes, items)
    }

    /// [`overflow_probability_at`](Self::overflow_probability_at) the
    /// capacity the filter was sized for.
    pub fn overflow_probability(&self) -> f64 {
        self.overflow_probability_at(self.sized_for.items)
    }

    /// This filter's configuration.
    pub fn config(&self) -> CountingBloomConfig {
        CountingBloomConfig::of::<L, BITS>(self.num_counters, self.num_hashes, self.hasher)
    }

    /// What the binary format needs of the filter: its configuration,
    /// counters, sized-for record and item counter.
    pub(crate) fn parts(&self) -> (CountingBloomConfig, &Counters, SizedFor, u64) {
        (self.config(), &self.counters, self.sized_for, self.len)
    }

    /// Combines `other`'s counters into `self`'s counter by counter, after
    /// checking that the configurations match; `self` is unchanged otherwise.
    fn merge(&mut self, other: &Self, combine: impl Fn(u64, u64) -> u64) -> Result<(), Error> {
        if self.config() != other.config() {
            return Err(Error::new(
                ErrorKind::Incompatible,
                format!("cannot merge {:?} with {:?}", self.config(), other.config()),
            ));
        }
        for (mine, theirs) in self.counters.words_mut().zip(other.counters.words()) {
            *mine = Width::<BITS>::combine(*mine, theirs, &combine);
        }
        Ok(())
    }
}

impl<L: Layout, const BITS: u32> Membership for CountingBloom<L, BITS> {
    fn hasher(&self) -> &KeyHasher {
        &self.hasher
    }

    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        self.probe(hash)
    }

    /// Looks up with the counters of the keys ahead prefetched, so that
    /// their memory accesses overlap.
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        let ahead = self.prefetch_ahead(hashes);
        for (i, (answer, &hash)) in found.iter_mut().zip(hashes).enumerate() {
            if let Some(&next) = ahead.and_then(|ahead| hashes.get(i + ahead)) {
                self.prefetch_key(next);
            }
            *answer = self.probe(hash);
        }
    }

    /// Every accepted insert (duplicates included) minus every successful
    /// removal; after a [`union`](Merge::union) the sum of both, after an
    /// [`intersect`](Merge::intersect) an upper bound.
    fn len(&self) -> usize {
        usize::try_from(self.len).unwrap_or(usize::MAX)
    }

    fn memory_usage(&self) -> usize {
        self.counters.blocks.len() * BLOCK_BYTES
    }

    fn capacity(&self) -> Option<usize> {
        self.sized_for.capacity()
    }

    /// (X/m)^k for the X nonzero counters now, or for the blocked layout its
    /// mean over blocks: exact for this instance.
    fn expected_fpp(&self) -> f64 {
        let k = self.num_hashes;
        if L::BLOCKED {
            let nonzero_per_block = self.counters.blocks.iter().map(|block| {
                block
                    .0
                    .iter()
                    .map(|&word| u64::from(Width::<BITS>::nonzero(word).count_ones()))
                    .sum()
            });
            bloom_fpp_given_block_fills(nonzero_per_block, Width::<BITS>::PER_BLOCK, k)
        } else {
            bloom_fpp_given_fill(self.nonzero_counters(), self.num_counters, k)
        }
    }

    /// The exact FPP after `items` distinct inserts: that of the Bloom
    /// filter with the same counters as bits and the same k (Bose et al.;
    /// for the blocked layout, the block-load mixture of Putze et al. with
    /// the exact per-block FPP).
    fn theoretical_fpp(&self, items: u64) -> Option<f64> {
        layout::exact_fpp::<L, BITS>(self.num_counters, self.num_hashes, items).ok()
    }
}

impl<L: Layout, const BITS: u32> Filter for CountingBloom<L, BITS> {
    /// Never fails: a full counter saturates instead. Always inlined, as
    /// `add` is.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(self.add(hash))
    }

    /// Inserts with the counters of the keys ahead prefetched.
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        Ok(self.batch(hashes, Self::add))
    }

    fn clear(&mut self) {
        for word in self.counters.words_mut() {
            *word = 0;
        }
        self.len = 0;
    }
}

impl<L: Layout, const BITS: u32> RemovableFilter for CountingBloom<L, BITS> {
    /// Never fails; see [`CountingBloom::remove`].
    #[inline]
    fn remove_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(self.take(hash))
    }
}

// `remove` is this type's own: it never fails.
filterlab_core::inherent_methods!([L: Layout, const BITS: u32] CountingBloom<L, BITS>: filter, write, read);

impl<L: Layout, const BITS: u32> Merge for CountingBloom<L, BITS> {
    /// Adds the counters (saturating): the multiset sum, so `len` becomes
    /// len_a + len_b and every key of either stays present.
    fn union(&mut self, other: &Self) -> Result<(), Error> {
        self.merge(other, |a, b| (a + b).min(Width::<BITS>::MAX))?;
        self.len = self.len.saturating_add(other.len);
        Ok(())
    }

    /// Keeps the smaller of each pair of counters: every key held by both
    /// stays present. `len` becomes an upper bound on the items held:
    /// min(len_a, len_b, sum of the counters / k), or for the blocked
    /// layout, whose keys may add fewer than k, min(len_a, len_b, sum).
    fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        self.merge(other, u64::min)?;
        let held = self.tally().sum / u128::from(self.least_counts_per_item());
        let held = u64::try_from(held).unwrap_or(u64::MAX);
        self.len = self.len.min(other.len).min(held);
        Ok(())
    }
}

impl<L: Layout, const BITS: u32, K: Key> Extend<K> for CountingBloom<L, BITS> {
    /// Inserts every key as [`insert_many`](CountingBloom::insert_many) does.
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        self.insert_many(keys);
    }
}

impl<L: Layout, const BITS: u32> PartialEq for CountingBloom<L, BITS> {
    fn eq(&self, other: &Self) -> bool {
        self.config() == other.config()
            && self.len == other.len
            && self.sized_for == other.sized_for
            && self.counters == other.counters
    }
}

impl<L: Layout, const BITS: u32> Eq for CountingBloom<L, BITS> {}

impl<L: Layout, const BITS: u32> fmt::Debug for CountingBloom<L, BITS> {
    /// A summary; the counters themselves can be gigabytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tally = self.tally();
        f.debug_struct(L::NAME)
            .field("num_counters", &self.num_counters)
            .field("counter_bits", &BITS)
            .field("num_hashes", &self.num_hashes)
            .field("hasher", &self.hasher)
            .field("len", &self.len)
            .field("sized_for", &self.sized_for)
            .field("nonzero", &tally.nonzero)
            .field("saturated", &tally.saturated)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches over an array large enough to prefetch leave the filter
    /// exactly as single operations do.
    fn batches_prefetch_and_agree<L: Layout>() {
        let counters = PREFETCH_MIN_BLOCKS as u64 * Width::<4>::PER_BLOCK;
        let mut batched = CountingBloomBuilder::<L, 4>::with_counters(counters)
            .hashes(5)
            .build()
            .unwrap();
        assert!(batched.prefetch_distance().is_some());
        let mut single = batched.clone();
        let keys = if cfg!(miri) { 300 } else { 5000 };
        let hashes: Vec<u64> = (0..keys).map(|i| filterlab_core::mix64(i % 250)).collect();
        let new: usize = hashes.iter().map(|&h| usize::from(single.add(h))).sum();
        assert_eq!(batched.insert_hashes(&hashes).unwrap(), new);
        assert_eq!(batched, single);
        let mut found = vec![false; hashes.len()];
        batched.contains_hashes(&hashes, &mut found);
        assert!(found.iter().all(|&hit| hit));
        let removed: usize = hashes[..100]
            .iter()
            .map(|&h| usize::from(single.take(h)))
            .sum();
        assert_eq!(batched.remove_hashes(&hashes[..100]), removed);
        assert_eq!(batched, single);
    }

    #[test]
    fn batches_prefetch_and_agree_standard() {
        batches_prefetch_and_agree::<Standard>();
    }

    #[test]
    fn batches_prefetch_and_agree_blocked() {
        batches_prefetch_and_agree::<Blocked>();
    }
}
