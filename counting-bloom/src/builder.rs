//! The configuration of a counting Bloom filter and the builder that sizes
//! it: from a target FPP and load by the layout's exact formula, or from an
//! explicit number of counters. (`build` sits beside the filter it
//! allocates, in `filter.rs`, so that this file needs nothing from there.)

use std::cell::RefCell;
use std::f64::consts::LN_2;
use std::marker::PhantomData;

use filterlab_core::memory::check_memory;
use filterlab_core::sizing::{BuilderBase, HashChoice, SizeSearch, Target};
use filterlab_core::theory::{
    BlockFppTable, blocked_bloom_classic_best_hashes, blocked_bloom_fpp_with, bloom_optimal_bits,
    counter_overflow_bound_fan, hash_bits_needed,
};
use filterlab_core::{Error, ErrorKind, KeyHasher};

use crate::counters::{BLOCK_BYTES, Width, blocks_for};
use crate::layout::{self, Layout, overflow_probability};
use crate::sizing::CountingSizing;

/// Everything that decides which counters a key counts: two filters with
/// equal configurations can be merged, and a file is only accepted by
/// [`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting)
/// when its configuration equals the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CountingBloomConfig {
    /// Counters in the array.
    pub num_counters: u64,
    /// Bits per counter: 4, 8 or 16.
    pub counter_bits: u32,
    /// Counters per 64-byte block for the blocked layout; `None` for the
    /// standard layout.
    pub block_counters: Option<u32>,
    /// Counters probed per key.
    pub num_hashes: u32,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

impl CountingBloomConfig {
    /// The configuration of a filter of layout `L` with `BITS`-bit counters.
    pub(crate) fn of<L: Layout, const BITS: u32>(
        num_counters: u64,
        num_hashes: u32,
        hasher: KeyHasher,
    ) -> Self {
        Self {
            num_counters,
            counter_bits: BITS,
            block_counters: L::BLOCKED.then_some(Width::<BITS>::PER_BLOCK as u32),
            num_hashes,
            hasher,
        }
    }
}

/// Configures a counting Bloom filter of layout `L` with `BITS`-bit
/// counters; made by `with_fpp` or `with_counters` of `CountingBloomFilter`
/// or `BlockedCountingBloomFilter`.
///
/// # Examples
///
/// ```
/// use filterlab_counting_bloom::{CountingBloomFilter, Membership};
///
/// // 8-bit counters for keys inserted many times over.
/// let filter = CountingBloomFilter::with_fpp(0.001)
///     .expected_items(50_000)
///     .counter_bits::<8>()
///     .seed(3)
///     .build()?;
/// assert_eq!(filter.counter_max(), 255);
/// assert!(filter.theoretical_fpp(50_000).unwrap() <= 0.001);
/// # Ok::<(), filterlab_counting_bloom::Error>(())
/// ```
///
/// Counters are 4, 8 or 16 bits wide; any other width does not compile:
///
/// ```compile_fail
/// use filterlab_counting_bloom::CountingBloomFilter;
///
/// let filter = CountingBloomFilter::with_fpp(0.01).expected_items(10).counter_bits::<5>().build();
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct CountingBloomBuilder<L: Layout, const BITS: u32> {
    base: BuilderBase,
    layout: PhantomData<L>,
}

/// The exact FPP of layout `L` at one load for any (counters, k): for the
/// blocked layout each k's per-block table is built once per sizing, as a
/// search evaluates dozens of sizes for the same few k.
struct ExactFpp<L, const BITS: u32> {
    items: u64,
    tables: RefCell<Vec<Option<BlockFppTable>>>,
    layout: PhantomData<L>,
}

impl<L: Layout, const BITS: u32> ExactFpp<L, BITS> {
    fn new(items: u64) -> Self {
        Self {
            items,
            tables: RefCell::new(Vec::new()),
            layout: PhantomData,
        }
    }

    fn fpp(&self, num_counters: u64, num_hashes: u32) -> Result<f64, Error> {
        if !L::BLOCKED {
            return layout::exact_fpp::<L, BITS>(num_counters, num_hashes, self.items);
        }
        let per_block = Width::<BITS>::PER_BLOCK;
        let mut tables = self.tables.borrow_mut();
        let slot = num_hashes as usize;
        if tables.len() <= slot {
            tables.resize(slot + 1, None);
        }
        let table = match &mut tables[slot] {
            Some(table) => table,
            empty => empty.insert(BlockFppTable::new(per_block as u32, num_hashes)?),
        };
        Ok(blocked_bloom_fpp_with(
            table,
            num_counters / per_block,
            self.items,
        ))
    }

    /// Where the search for k starts: (m/n)·ln 2 for the standard layout;
    /// for the blocked one the best k of Putze et al.'s approximation
    /// (cheap, and well below (m/n)·ln 2 in small blocks).
    fn hashes_near(&self, num_counters: u64) -> u32 {
        let per_block = Width::<BITS>::PER_BLOCK;
        blocked_bloom_classic_best_hashes(num_counters / per_block, per_block as u32, self.items)
    }

    /// The size search over whole blocks up to `max_counters`, for `fpp`.
    fn search<'a>(
        &'a self,
        fpp: f64,
        max_counters: u64,
        fpp_of: &'a dyn Fn(u64, u32) -> Result<f64, Error>,
        near: &'a dyn Fn(u64) -> u32,
    ) -> SizeSearch<'a> {
        let search = SizeSearch::new(
            self.items,
            fpp,
            Width::<BITS>::PER_BLOCK,
            max_counters,
            fpp_of,
        );
        if L::BLOCKED {
            search.starting_hashes(near)
        } else {
            search
        }
    }

    /// Why the search chose its k for `num_counters`.
    fn choice(&self, num_counters: u64) -> HashChoice {
        if L::BLOCKED {
            HashChoice::Blocked {
                approximate: self.hashes_near(num_counters),
            }
        } else {
            HashChoice::Optimal {
                optimum: num_counters as f64 / self.items as f64 * LN_2,
            }
        }
    }
}

impl<L: Layout, const BITS: u32> CountingBloomBuilder<L, BITS> {
    fn new(target: Target) -> Self {
        Self {
            base: BuilderBase::new(target),
            layout: PhantomData,
        }
    }

    /// A builder that sizes a filter of layout `L` and width `BITS` for a
    /// target FPP (what `with_fpp` of the two filter names returns, for
    /// code generic over both).
    pub fn with_fpp(fpp: f64) -> Self {
        Self::new(Target::Fpp(fpp))
    }

    /// A builder for an explicit number of counters (rounded up to whole
    /// blocks for the blocked layout).
    pub fn with_counters(num_counters: u64) -> Self {
        Self::new(Target::Size(num_counters))
    }

    filterlab_core::builder_setters!(base => expected_items, hashes, seed, hasher, max_memory);

    /// Counters of `WIDTH` bits: 4 (the default, two per byte), 8 or 16.
    /// Wider counters saturate later (at 255 or 65,535 instead of 15) for
    /// two or four times the memory. Any other width does not compile.
    pub fn counter_bits<const WIDTH: u32>(self) -> CountingBloomBuilder<L, WIDTH> {
        let () = Width::<WIDTH>::CHECK;
        CountingBloomBuilder {
            base: self.base,
            layout: PhantomData,
        }
    }

    /// The most counters the memory limit allows, in whole blocks.
    fn max_counters(&self) -> u64 {
        (self.base.max_memory / BLOCK_BYTES as u64).saturating_mul(Width::<BITS>::PER_BLOCK)
    }

    /// The sizing this builder would allocate, without allocating.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`] for an FPP outside (0, 1), zero items,
    /// zero counters or a hash count outside 1..=64; [`ErrorKind::TooLarge`]
    /// over the memory limit.
    pub fn sizing(&self) -> Result<CountingSizing, Error> {
        let () = Width::<BITS>::CHECK;
        match self.base.target {
            Target::Fpp(fpp) => self.sizing_for_fpp(fpp),
            Target::Size(counters) => self.sizing_for_counters(counters),
        }
    }

    fn sizing_for_fpp(&self, fpp: f64) -> Result<CountingSizing, Error> {
        let items = self.base.items_for_fpp(fpp)?;
        let exact = ExactFpp::<L, BITS>::new(items);
        let fpp_of = |m: u64, k: u32| exact.fpp(m, k);
        let near = |m: u64| exact.hashes_near(m);
        let search = exact.search(fpp, self.max_counters(), &fpp_of, &near);
        let (counters, k, achieved) = search.smallest()?;
        let chosen = (k, achieved, exact.choice(counters));
        let (k, achieved, choice) = self.base.explicit_or(chosen, |k| exact.fpp(counters, k))?;
        Ok(Self::report(
            items,
            Some(fpp),
            bloom_optimal_bits(items, fpp),
            (counters, k, choice),
            achieved,
        ))
    }

    fn sizing_for_counters(&self, requested: u64) -> Result<CountingSizing, Error> {
        if requested == 0 {
            return Err(Error::invalid(
                "a counting Bloom filter needs at least 1 counter",
            ));
        }
        let counters = if L::BLOCKED {
            blocks_for::<BITS>(requested)
                .checked_mul(Width::<BITS>::PER_BLOCK)
                .ok_or_else(|| Error::new(ErrorKind::TooLarge, "too many counters"))?
        } else {
            requested
        };
        // Bytes past `u64` are too large under any cap (saturated, they
        // would pass a cap of `u64::MAX`).
        let bytes = blocks_for::<BITS>(counters)
            .checked_mul(BLOCK_BYTES as u64)
            .ok_or_else(|| Error::new(ErrorKind::TooLarge, "too many counters"))?;
        check_memory(bytes, self.base.max_memory, "the counter array")?;
        let (k, choice, items) = self
            .base
            .hashes_for_size(counters, "with_counters", |items| {
                let exact = ExactFpp::<L, BITS>::new(items);
                let fpp_of = |m: u64, k: u32| exact.fpp(m, k);
                let near = |m: u64| exact.hashes_near(m);
                let search = exact.search(0.5, self.max_counters(), &fpp_of, &near);
                Ok((search.best_hashes(counters)?.0, exact.choice(counters)))
            })?;
        let achieved = ExactFpp::<L, BITS>::new(items).fpp(counters, k)?;
        Ok(Self::report(
            items,
            None,
            requested as f64,
            (counters, k, choice),
            achieved,
        ))
    }

    fn report(
        items: u64,
        target_fpp: Option<f64>,
        requested_counters: f64,
        (num_counters, num_hashes, hash_choice): (u64, u32, HashChoice),
        fpp_at_capacity: f64,
    ) -> CountingSizing {
        CountingSizing {
            filter: L::NAME,
            expected_items: items,
            target_fpp,
            requested_counters,
            num_counters,
            counter_bits: BITS,
            block_counters: L::BLOCKED.then_some(Width::<BITS>::PER_BLOCK as u32),
            num_hashes,
            hash_choice,
            fpp_at_capacity,
            overflow_probability: overflow_probability::<L, BITS>(num_counters, num_hashes, items),
            overflow_bound_fan: (!L::BLOCKED)
                .then(|| counter_overflow_bound_fan(num_counters, num_hashes, items, 1 << BITS)),
            hash_bits_needed: hash_bits_needed(items, target_fpp.unwrap_or(fpp_at_capacity)),
        }
    }

    /// The configuration this builder would produce (for
    /// [`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting)),
    /// without allocating.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing).
    pub fn config(&self) -> Result<CountingBloomConfig, Error> {
        self.sizing().map(|sizing| self.config_of(&sizing))
    }

    pub(crate) fn config_of(&self, sizing: &CountingSizing) -> CountingBloomConfig {
        CountingBloomConfig::of::<L, BITS>(sizing.num_counters, sizing.num_hashes, self.base.hasher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Standard;

    /// Regression `build_counting/counters-2e62-cap-u64max-bits-per-item-overflows`:
    /// a sizing of 2^61 bytes, whose bits (2^64) do not fit a `u64`.
    #[test]
    fn bits_per_item_of_a_2e61_byte_sizing() {
        let sizing = CountingBloomBuilder::<Standard, 4>::with_counters(1 << 62)
            .hashes(1)
            .max_memory(u64::MAX)
            .sizing()
            .unwrap();
        assert_eq!(sizing.bytes(), 1 << 61);
        let per_item = 2f64.powi(64) / sizing.expected_items as f64;
        assert_eq!(sizing.bits_per_item(), per_item);
        assert!(sizing.to_string().contains("bits per item"));
    }

    /// Counters whose bytes exceed `u64` are too large under any cap.
    #[test]
    fn bytes_past_u64_are_too_large() {
        let sizing = CountingBloomBuilder::<Standard, 16>::with_counters(u64::MAX)
            .hashes(1)
            .max_memory(u64::MAX)
            .sizing();
        assert_eq!(sizing.err().map(|e| e.kind()), Some(ErrorKind::TooLarge));
    }
}
