//! The builder that sizes a cuckoo filter: the fingerprint width and the
//! fewest buckets whose a-priori FPP meets a target, or an explicit size.
//! (`build` sits beside the filter it allocates, in `filter.rs`, so that
//! this file needs nothing from there.)

use filterlab_core::memory::check_memory;
use filterlab_core::sizing::{BuilderBase, Target, check_items};
use filterlab_core::theory::{cuckoo_fpp, hash_bits_needed};
use filterlab_core::{Error, ErrorKind};

use crate::config::{
    CuckooConfig, DEFAULT_MAX_KICKS, DEFAULT_MAX_TABLES, DEFAULT_TIGHTENING, Growth, LOAD_TARGET,
    check_capacity, check_fingerprint_bits, check_growth, check_max_kicks, check_memory_limit,
    slots_in,
};
use crate::growth::load_meeting;
use crate::sizing::{CuckooSizing, FingerprintChoice};
use crate::table::{MAX_FINGERPRINT_BITS, MIN_FINGERPRINT_BITS, SLOTS, table_bytes};

/// Configures a `CuckooFilter`; made by `CuckooFilter::with_fpp` or
/// `CuckooFilter::with_buckets`.
#[derive(Clone, Debug)]
#[must_use]
pub struct CuckooBuilder {
    /// The target, load, hasher and memory limit (no k: a cuckoo filter
    /// has fingerprints instead).
    pub(crate) base: BuilderBase,
    fingerprint_bits: Option<u32>,
    max_kicks: u32,
    expansion: Option<u32>,
    max_tables: u32,
    tightening: f64,
}

impl CuckooBuilder {
    pub(crate) fn new(target: Target) -> Self {
        Self {
            base: BuilderBase::new(target),
            fingerprint_bits: None,
            max_kicks: DEFAULT_MAX_KICKS,
            expansion: None,
            max_tables: DEFAULT_MAX_TABLES,
            tightening: DEFAULT_TIGHTENING,
        }
    }

    filterlab_core::builder_setters!(base => expected_items, seed, hasher);

    filterlab_core::builder_setters! {
        /// An explicit fingerprint width (4..=32 bits), overriding the
        /// sizing's choice; required with `CuckooFilter::with_buckets`.
        fingerprint_bits(bits: u32) => fingerprint_bits = Some(bits);
        /// Kicks an insert tries before it is refused or the filter grows
        /// (default 500, at most 65535).
        max_kicks(kicks: u32) => max_kicks = kicks;
        /// Grow instead of refusing when full: each new sub-table has
        /// `expansion` times the buckets of the one before (1..=32768),
        /// and fingerprints long enough for its share of the FPP.
        expansion(expansion: u32) => expansion = Some(expansion);
        /// The tightening ratio r in (0, 1) of a growing filter (default
        /// 0.85): sub-table t takes the share P·(1 − r)·r^t of the target
        /// FPP P, so a smaller r gives the first tables more of it and
        /// lengthens later fingerprints faster (by log2(1/r) bits each).
        tightening(ratio: f64) => tightening = ratio;
        /// The most sub-tables a growing filter may have, the first
        /// included (default 32, at most 256).
        max_tables(tables: u32) => max_tables = tables;
        /// The most bytes the filter may take, sub-tables included
        /// (default 64 GiB, at most 2^48): building over it is an error,
        /// growing over it is refused as full.
        max_memory(bytes: u64) => base.max_memory = bytes;
    }

    fn growth(&self) -> Result<Option<Growth>, Error> {
        self.expansion
            .map(|expansion| {
                let growth = Growth {
                    expansion,
                    max_tables: self.max_tables,
                    tightening: self.tightening,
                };
                check_growth(growth).map(|()| growth)
            })
            .transpose()
    }

    /// The sizing this builder would allocate, without allocating.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`] for an FPP outside (0, 1), zero items,
    /// zero buckets, more items than slots, a fingerprint width outside
    /// 4..=32, kicks outside 1..=65535, a bad growth policy or a memory
    /// limit over 2^48; [`ErrorKind::TooLarge`] over the memory limit.
    pub fn sizing(&self) -> Result<CuckooSizing, Error> {
        check_max_kicks(self.max_kicks)?;
        check_memory_limit(self.base.max_memory)?;
        let growth = self.growth()?;
        let explicit = self
            .fingerprint_bits
            .map(|bits| check_fingerprint_bits(bits).map(|()| bits))
            .transpose()?;
        let (items, fpp, bits, buckets, choice) = match self.base.target {
            Target::Fpp(fpp) => {
                let items = self.base.items_for_fpp(fpp)?;
                // A growing filter's first table takes its share P·(1 − r).
                let first = growth.map_or(fpp, |growth| fpp * (1.0 - growth.tightening));
                let (bits, buckets, choice) = smallest_table(items, first, explicit)?;
                (items, Some(fpp), bits, buckets, choice)
            }
            Target::Size(buckets) => {
                if buckets == 0 {
                    return Err(Error::invalid("a cuckoo filter needs at least 1 bucket"));
                }
                let bits = explicit
                    .ok_or_else(|| Error::invalid("with_buckets needs fingerprint_bits(f)"))?;
                let items = match self.base.expected_items {
                    Some(items) => {
                        check_items(items)?;
                        check_capacity(items, buckets)?;
                        items
                    }
                    None => ((slots_in(buckets) as f64 * LOAD_TARGET) as u64).max(1),
                };
                (items, None, bits, buckets, FingerprintChoice::Explicit)
            }
        };
        let bytes = table_bytes(buckets, bits).unwrap_or(u64::MAX);
        check_memory(bytes, self.base.max_memory, "the cuckoo table")?;
        let load = items as f64 / (buckets as f64 * f64::from(SLOTS));
        Ok(CuckooSizing {
            expected_items: items,
            target_fpp: fpp,
            fingerprint_bits: bits,
            fingerprint_choice: choice,
            slots_per_bucket: SLOTS,
            buckets,
            load,
            bytes,
            fpp_at_capacity: cuckoo_fpp(bits, SLOTS, load),
            fpp_full: cuckoo_fpp(bits, SLOTS, 1.0),
            growth,
            hash_bits_used: (buckets as f64).log2() + f64::from(bits),
            hash_bits_needed: hash_bits_needed(
                items,
                fpp.unwrap_or_else(|| cuckoo_fpp(bits, SLOTS, load)),
            ),
        })
    }

    /// The configuration this builder would produce (for
    /// [`read_from_expecting`](filterlab_core::Persist::read_from_expecting)),
    /// without allocating.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing).
    pub fn config(&self) -> Result<CuckooConfig, Error> {
        Ok(self.config_of(&self.sizing()?))
    }

    /// The configuration of a filter of `sizing` built by this builder.
    pub(crate) fn config_of(&self, sizing: &CuckooSizing) -> CuckooConfig {
        CuckooConfig {
            buckets: sizing.buckets,
            fingerprint_bits: sizing.fingerprint_bits,
            max_kicks: self.max_kicks,
            growth: sizing.growth,
            hasher: self.base.hasher,
        }
    }
}

/// For `items` at `fpp`: the fingerprint width (the caller's, or the one
/// giving the fewest bits) and the fewest buckets whose a-priori FPP at
/// that load meets the target.
fn smallest_table(
    items: u64,
    fpp: f64,
    explicit: Option<u32>,
) -> Result<(u32, u64, FingerprintChoice), Error> {
    let widths = explicit.map_or(MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS, |bits| {
        bits..=bits
    });
    let mut best: Option<(u32, u64, f64)> = None;
    for bits in widths {
        let load = load_meeting(fpp, bits, LOAD_TARGET);
        let slots_needed = (items as f64 / load).ceil();
        let mut buckets = (slots_needed / f64::from(SLOTS)).ceil();
        if buckets.is_nan() || buckets >= 2f64.powi(62) {
            continue;
        }
        let meets = |buckets: f64| {
            cuckoo_fpp(bits, SLOTS, items as f64 / (buckets * f64::from(SLOTS))) <= fpp
        };
        // Rounding can leave the FPP a hair over the target: a few more buckets.
        for _ in 0..4 {
            if meets(buckets) {
                break;
            }
            buckets += (buckets * 1e-12).max(1.0);
        }
        if !meets(buckets) {
            continue;
        }
        let total_bits = buckets * f64::from(SLOTS) * f64::from(bits);
        if best.is_none_or(|(_, _, fewest)| total_bits < fewest) {
            best = Some((bits, buckets as u64, total_bits));
        }
    }
    let (bits, buckets, _) = best.ok_or_else(|| {
        Error::new(
            ErrorKind::TooLarge,
            format!("{items} items at FPP {fpp:e} need more buckets than a table can have"),
        )
    })?;
    let choice = if explicit.is_some() {
        FingerprintChoice::Explicit
    } else {
        FingerprintChoice::FewestBits
    };
    Ok((bits, buckets.max(1), choice))
}
