//! Where a key's counters lie: anywhere in the array ([`Standard`]) or all
//! in one 64-byte block ([`Blocked`]). The layout decides the probe
//! positions and the exact formulas; everything else is shared.

use std::fmt::Debug;

use filterlab_core::Error;
use filterlab_core::theory::{
    blocked_bloom_fpp, blocked_counter_tail, bloom_fpp_exact, counter_tail, saturation_threshold,
};

use crate::counters::Width;

mod sealed {
    /// The layout-specific half of the implementation, out of the public API.
    pub trait Sealed {
        /// The filter's type name, for reports and `Debug`.
        const NAME: &'static str;
        /// Whether a key's counters share one block.
        const BLOCKED: bool;
        /// Keys ahead whose memory batched operations prefetch.
        const PREFETCH_AHEAD: usize;
    }
}

/// Where a key's counters lie; implemented by [`Standard`] and [`Blocked`]
/// only.
pub trait Layout: sealed::Sealed + Copy + Default + Debug + Send + Sync + 'static {}

/// Each key's k counters chosen over the whole array with core's
/// [`Probes`](filterlab_core::Probes), exactly as `filterlab_bloom::BloomFilter` chooses its bits:
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

impl sealed::Sealed for Standard {
    const NAME: &'static str = "CountingBloomFilter";
    const BLOCKED: bool = false;
    /// Measured at 10M keys, p = 1e-2 (k = 7 lines per key): 16 ahead gave
    /// batched lookups of 32 ns against 36 ns for 8 and 51 ns for 4.
    const PREFETCH_AHEAD: usize = 16;
}

impl sealed::Sealed for Blocked {
    const NAME: &'static str = "BlockedCountingBloomFilter";
    const BLOCKED: bool = true;
    /// One line per key, so far more keys in flight pay: measured at 10M
    /// keys, p = 1e-2, batched lookups took 12.5 ns at 64 ahead, 13 ns at
    /// 32, 16 ns at 16 and 23 ns at 8 (as for `BlockedBloomFilter`).
    const PREFETCH_AHEAD: usize = 64;
}

/// A formula evaluated for layout `L`: `standard` over the whole array, or
/// `blocked` over its blocks, given their number and counters each.
fn per_layout<L: Layout, const BITS: u32, T>(
    num_counters: u64,
    standard: impl FnOnce() -> T,
    blocked: impl FnOnce(u64, u32) -> T,
) -> T {
    let per_block = Width::<BITS>::PER_BLOCK;
    if L::BLOCKED {
        blocked(num_counters / per_block, per_block as u32)
    } else {
        standard()
    }
}

/// The exact FPP of layout `L` after `items` distinct inserts: the Bloom
/// filter's with the same counters as bits, or the blocked Bloom filter's
/// with blocks of the block's counters.
pub(crate) fn exact_fpp<L: Layout, const BITS: u32>(
    num_counters: u64,
    num_hashes: u32,
    items: u64,
) -> Result<f64, Error> {
    per_layout::<L, BITS, _>(
        num_counters,
        || bloom_fpp_exact(num_counters, num_hashes, items),
        |blocks, per_block| blocked_bloom_fpp(blocks, per_block, num_hashes, items),
    )
}

/// An upper bound on the probability that some counter of layout `L` has
/// saturated after `items` distinct inserts: m times the exact tail of one
/// counter at its saturation value (the probability that a given counter
/// received that many increments: a binomial tail, or for the blocked
/// layout its mixture over block loads), at most 1 (and 1 where the exact
/// tail is not evaluated: a bound still).
pub(crate) fn overflow_probability<L: Layout, const BITS: u32>(
    num_counters: u64,
    num_hashes: u32,
    items: u64,
) -> f64 {
    let tail = |threshold| {
        per_layout::<L, BITS, _>(
            num_counters,
            || counter_tail(num_counters, num_hashes, items, threshold),
            |blocks, per_block| {
                blocked_counter_tail(blocks, per_block, num_hashes, items, threshold)
            },
        )
    };
    saturation_threshold(BITS)
        .and_then(tail)
        .map_or(1.0, |tail| (num_counters as f64 * tail).min(1.0))
}
