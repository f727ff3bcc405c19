//! Where a key's counters lie: anywhere in the array ([`Standard`]) or all
//! in one 64-byte block ([`Blocked`]). The layout decides the probe
//! positions and the exact formulas; everything else is shared.

use std::fmt::Debug;

use filterlab_core::theory::{
    blocked_bloom_fpp, blocked_counter_tail, bloom_fpp_exact, counter_tail,
};
use filterlab_core::{Error, Probes, reduce};

use crate::counters::Width;

mod sealed {
    use super::{Error, Positions};

    /// The layout-specific half of the implementation, out of the public API.
    pub trait Sealed {
        /// The filter's type name, for reports and `Debug`.
        const NAME: &'static str;
        /// Whether a key's counters share one block.
        const BLOCKED: bool;
        /// Probes tested without a branch between them: a few for the
        /// standard layout (a negative lookup usually fails among them, and
        /// one branch on all of them predicts well), all of them for the
        /// blocked one (they share a cache line).
        const BRANCH_FREE_PROBES: u32;
        /// Keys ahead whose memory batched operations prefetch.
        const PREFETCH_AHEAD: usize;

        /// The counters a key with `hash` probes in an array of `num_counters`.
        fn positions<const BITS: u32>(hash: u64, num_counters: u64) -> Positions;

        /// The exact FPP after `items` distinct inserts.
        fn exact_fpp<const BITS: u32>(
            num_counters: u64,
            num_hashes: u32,
            items: u64,
        ) -> Result<f64, Error>;

        /// The probability that one given counter received at least
        /// `threshold` increments after `items` inserts.
        fn counter_tail<const BITS: u32>(
            num_counters: u64,
            num_hashes: u32,
            items: u64,
            threshold: u32,
        ) -> Result<f64, Error>;
    }
}

/// Where a key's counters lie; implemented by [`Standard`] and [`Blocked`]
/// only.
pub trait Layout: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {}

/// Each key's k counters chosen over the whole array with core's
/// [`Probes`], exactly as `filterlab_bloom::BloomFilter` chooses its bits:
/// the fewest counters for an FPP, k cache lines per operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Standard;

/// Each key's k counters inside one 64-byte block (128 4-bit, 64 8-bit or
/// 32 16-bit counters), so an insert, lookup or remove touches one cache
/// line; sized by the exact blocked formula, it needs more counters for the
/// same FPP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Blocked;

impl Layout for Standard {}
impl Layout for Blocked {}

/// The counters one key probes, as indexes into the whole array.
#[derive(Clone, Debug)]
pub struct Positions {
    base: u64,
    probes: Probes,
}

impl Positions {
    /// The next counter.
    #[inline]
    pub(crate) fn next_index(&mut self) -> u64 {
        self.base + self.probes.next_index()
    }
}

impl sealed::Sealed for Standard {
    const NAME: &'static str = "CountingBloomFilter";
    const BLOCKED: bool = false;
    const BRANCH_FREE_PROBES: u32 = 3;
    /// As `BloomFilter`'s batches (k lines per key already in flight).
    const PREFETCH_AHEAD: usize = 8;

    #[inline]
    fn positions<const BITS: u32>(hash: u64, num_counters: u64) -> Positions {
        Positions {
            base: 0,
            probes: Probes::new(hash, num_counters),
        }
    }

    fn exact_fpp<const BITS: u32>(
        num_counters: u64,
        num_hashes: u32,
        items: u64,
    ) -> Result<f64, Error> {
        bloom_fpp_exact(num_counters, num_hashes, items)
    }

    fn counter_tail<const BITS: u32>(
        num_counters: u64,
        num_hashes: u32,
        items: u64,
        threshold: u32,
    ) -> Result<f64, Error> {
        counter_tail(num_counters, num_hashes, items, threshold)
    }
}

impl sealed::Sealed for Blocked {
    const NAME: &'static str = "BlockedCountingBloomFilter";
    const BLOCKED: bool = true;
    const BRANCH_FREE_PROBES: u32 = filterlab_core::sizing::MAX_HASHES;
    /// One line per key: far more keys in flight pay (as for
    /// `BlockedBloomFilter`).
    const PREFETCH_AHEAD: usize = 32;

    /// The block by multiply-shift over the high bits of the hash, as
    /// `BlockedBloomFilter` chooses it; the counters in it by [`Probes`]
    /// over the block's counters, seeded with the hash rotated by 32 bits so
    /// that its first probes come from the low half, which the block index
    /// does not use.
    #[inline]
    fn positions<const BITS: u32>(hash: u64, num_counters: u64) -> Positions {
        let per_block = Width::<BITS>::PER_BLOCK;
        let block = reduce(hash, num_counters / per_block);
        Positions {
            base: block * per_block,
            probes: Probes::new(hash.rotate_left(32), per_block),
        }
    }

    fn exact_fpp<const BITS: u32>(
        num_counters: u64,
        num_hashes: u32,
        items: u64,
    ) -> Result<f64, Error> {
        let per_block = Width::<BITS>::PER_BLOCK;
        blocked_bloom_fpp(
            num_counters / per_block,
            per_block as u32,
            num_hashes,
            items,
        )
    }

    fn counter_tail<const BITS: u32>(
        num_counters: u64,
        num_hashes: u32,
        items: u64,
        threshold: u32,
    ) -> Result<f64, Error> {
        let per_block = Width::<BITS>::PER_BLOCK;
        blocked_counter_tail(
            num_counters / per_block,
            per_block as u32,
            num_hashes,
            items,
            threshold,
        )
    }
}
