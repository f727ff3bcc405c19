//! The standard Bloom filter: k probes over one bit array.

use filterlab_core::memory::check_memory;
use filterlab_core::sizing::{BuilderBase, HashChoice, SizeSearch, Target};
use filterlab_core::theory::{bloom_fpp_classic, bloom_fpp_exact};
use filterlab_core::{Error, ErrorKind, Key, KeyHasher};

use crate::common::{Array, builder_entry_points, builder_methods, merge_by_words, sized_for};
use crate::sizing::BloomSizing;
use crate::words::{BitArray, BloomConfig, for_each_probe_mut, word_filter};

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
    // Crate-visible for the in-place conversions of `AtomicBloomFilter`.
    pub(crate) bits: BitArray<u64>,
    /// Inserts that returned `true`: at most the bits set, since each set a
    /// clear bit (the invariant readers and merges keep, so `+= 1` cannot
    /// overflow).
    pub(crate) len: u64,
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
    builder_methods!(expected_items, hashes, seed, hasher, max_memory);

    /// Round the bit array up to a power of two, then use the smallest k that
    /// still meets the target (as IBM Streams' BloomFilter operator does):
    /// more memory, fewer probes per operation.
    pub fn power_of_two(mut self, enabled: bool) -> Self {
        self.power_of_two = enabled;
        self
    }

    fn new(target: Target) -> Self {
        Self {
            base: BuilderBase::new(target),
            power_of_two: false,
        }
    }

    /// What this builder's sizing records say of the array.
    fn array(&self) -> Array {
        Array {
            filter: "BloomFilter",
            unit_bits: 64,
            power_of_two: self.power_of_two,
            classic: bloom_fpp_classic,
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
            bits = next_power_of_two(bits)?;
            check_memory(bits / 8, self.base.max_memory, "the power-of-two bit array")?;
            (k, achieved) = problem.smallest_hashes(bits)?;
            choice = HashChoice::SmallestMeetingTarget {
                optimum: bits as f64 / items as f64 * std::f64::consts::LN_2,
            };
        }
        let chosen = (k, achieved, choice);
        let (k, achieved, choice) = self.base.explicit_or(chosen, |k| fpp_of(bits, k))?;
        let sizing = self
            .array()
            .record(items, Target::Fpp(fpp), (bits, k, choice), achieved);
        Ok(sizing)
    }

    fn sizing_for_bits(&self, requested: u64) -> Result<BloomSizing, Error> {
        if requested == 0 {
            return Err(Error::invalid("a Bloom filter needs at least 1 bit"));
        }
        let bits = if self.power_of_two {
            next_power_of_two(requested)?
        } else {
            requested
        };
        check_memory(
            bits.div_ceil(64).saturating_mul(8),
            self.base.max_memory,
            "the bit array",
        )?;
        let (k, choice, items) = self.base.hashes_for_size(bits, "with_bits", |items| {
            let fpp_of = |bits: u64, k: u32| bloom_fpp_exact(bits, k, items);
            let problem = SizeSearch::new(items, 0.5, 1, self.base.max_bits(), &fpp_of);
            let optimum = bits as f64 / items as f64 * std::f64::consts::LN_2;
            Ok((
                problem.best_hashes(bits)?.0,
                HashChoice::Optimal { optimum },
            ))
        })?;
        let achieved = bloom_fpp_exact(bits, k, items)?;
        Ok(self
            .array()
            .record(items, Target::Size(requested), (bits, k, choice), achieved))
    }

    /// The configuration this builder would produce (for
    /// [`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting)),
    /// without allocating.
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
}

/// The array of `bits` bits rounded up to a power of two, or TooLarge when
/// no power of two in a u64 holds it.
fn next_power_of_two(bits: u64) -> Result<u64, Error> {
    bits.checked_next_power_of_two()
        .ok_or_else(|| Error::new(ErrorKind::TooLarge, "no power of two holds that many bits"))
}

impl BloomFilter {
    /// Bits set and the estimate from them, counted once (for merges).
    pub(crate) fn set_bits_and_estimate(&self) -> (u64, f64) {
        self.bits.set_bits_and_estimate()
    }

    builder_entry_points!(
        BloomBuilder,
        with_bits: "",
        params: "the smallest whole-word bit array and k"
    );

    fn from_sizing(sizing: &BloomSizing, hasher: KeyHasher) -> Result<Self, Error> {
        let config = BloomConfig {
            num_bits: sizing.num_bits,
            num_hashes: sizing.num_hashes,
            hasher,
        };
        Ok(Self {
            bits: BitArray::zeroed(config, sized_for(sizing))?,
            len: 0,
        })
    }

    /// Adds `key`; returns `true` when it was not already reported present
    /// (and counts it in `len`). A Bloom filter never refuses a key.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.add_hash(self.bits.hasher.hash(key))
    }

    /// Adds a pre-hashed key (the infallible body of `Filter::insert_hash`).
    #[inline]
    fn add_hash(&mut self, hash: u64) -> bool {
        let bits = &mut self.bits;
        let new = set_bits(&mut bits.words, bits.num_bits, bits.num_hashes, hash);
        self.len += u64::from(new);
        new
    }

    /// The classic estimate (1 − (1 − 1/m)^{kn})^k at `items`; slightly
    /// optimistic, see
    /// [`theoretical_fpp`](filterlab_core::Membership::theoretical_fpp).
    pub fn classic_fpp(&self, items: u64) -> f64 {
        bloom_fpp_classic(self.bits.num_bits, self.bits.num_hashes, items)
    }
}

word_filter!(BloomFilter, add_hash, add_hash, mut);

/// Sets the key's k bits; whether any was clear. A free function over a
/// slice so the compiler knows the bit array aliases nothing else and keeps
/// the sizes in registers across the stores.
///
/// One pass, without a branch: each probe loads its word, stores it back
/// with the bit set and keeps the bit it found (as fastbloom does). A probe
/// that finds its bit set by an earlier probe of the same key does not hide
/// that the bit was clear: the earlier probe saw it clear. (Asking the
/// lookup first, then OR-ing each word in memory, took two passes: about
/// 200 instructions per insert at k = 7 against 150, and a lookup's early
/// exit that mispredicts.)
#[inline]
fn set_bits(bits: &mut [u64], num_bits: u64, num_hashes: u32, hash: u64) -> bool {
    let mut all = 1;
    for_each_probe_mut(bits, num_bits, num_hashes, hash, |word, bit| {
        let old = *word;
        *word = old | 1 << bit;
        all &= old >> bit;
    });
    all & 1 == 0
}

merge_by_words!(BloomFilter, BloomConfig, bits);

impl PartialEq for BloomFilter {
    fn eq(&self, other: &Self) -> bool {
        self.config() == other.config()
            && self.len == other.len
            && self.bits.sized_for == other.bits.sized_for
            && self.bits.words == other.bits.words
    }
}

impl Eq for BloomFilter {}
