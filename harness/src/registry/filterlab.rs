//! The filterlab filters' entries, with their sizings for `recommend`.

use std::f64::consts::LN_2;

use filterlab_bloom::{
    AtomicBloomFilter, BlockedBloomFilter, BloomFilter, BloomSizing, SplitBlockBloomFilter,
};
use filterlab_counting_bloom::{Blocked, CountingBloomBuilder, CountingSizing, Layout, Standard};
use filterlab_cuckoo::{CuckooBuilder, CuckooFilter, CuckooSizing};
use filterlab_peers::{FilterlabSubject, Mode, Subject, Workload};
use filterlab_scalable::{ScalableBloomBuilder, ScalableBloomFilter, ScalableSizing};

use crate::error::Error;
use crate::registry::entry::{
    Build, Capability, Entry, GROWTH_SPAN, Locality, LookupCost, Origin, Sizer, Sizing,
    SpaceFormula,
};
use crate::registry::statics::static_entries;

/// The standard Bloom filter's sizing (plain and atomic alike).
const BLOOM_SIZER: Sizer = Sizer {
    for_target: |n, p| {
        Ok(Sizing::bloom(
            &BloomFilter::params(n, p)?,
            Locality::RandomLines,
        ))
    },
    within_memory: |n, bytes| {
        let sizing = BloomFilter::with_bits(bytes.saturating_mul(8))
            .expected_items(n)
            .sizing()?;
        Ok(Sizing::bloom(&sizing, Locality::RandomLines))
    },
};

/// A blocked filter's block: one 64-byte cache line.
const BLOCK: Locality = Locality::OneBlock { bytes: 64 };

/// A split-block filter's block: half a cache line, 32-byte aligned.
const SPLIT_BLOCK: Locality = Locality::OneBlock { bytes: 32 };

/// The entry of a filter built of blocks (blocked, split-block): the two
/// share their builder and sizing methods but no trait, so one macro
/// writes both: `block_entry!(Type, description, theory, space label, locality)`.
macro_rules! block_entry {
    ($filter:ident, $description:expr, $theory:expr, $space:expr, $locality:expr) => {
        Entry::new(
            stringify!($filter),
            Origin::Filterlab,
            "filterlab-bloom",
            $description,
            $theory,
            Build::Empty(|w| {
                let builder = $filter::with_fpp(w.fpp).expected_items(w.items);
                Ok(FilterlabSubject::new(builder.seed(w.seed).build()?).boxed())
            }),
        )
        .space(SpaceFormula {
            label: $space,
            bits_per_item: |n, p| $filter::params(n, p).map_or(f64::NAN, |s| s.bits_per_item()),
        })
        .sizer(Sizer {
            for_target: |n, p| Ok(Sizing::bloom(&$filter::params(n, p)?, $locality)),
            within_memory: |n, bytes| {
                let builder = $filter::with_bits(bytes.saturating_mul(8));
                Ok(Sizing::bloom(
                    &builder.expected_items(n).sizing()?,
                    $locality,
                ))
            },
        })
    };
}

/// The standard Bloom filter's optimum: −ln p / ln²2 bits per item.
pub(crate) const BLOOM_SPACE: SpaceFormula = SpaceFormula {
    label: "−ln p / ln²2 = 1.44·log2(1/p)",
    bits_per_item: |_, fpp| -fpp.ln() / (LN_2 * LN_2),
};

/// The exact standard-Bloom theory, as every standard Bloom filter here states it.
pub(crate) const BLOOM_THEORY: &str = "exact: Σ_i P(X = i)·(i/m)^k over the X bits set by kn throws (Bose et al. 2008), with its own m and k";

fn bloom(workload: &Workload, power_of_two: bool) -> filterlab_bloom::BloomBuilder {
    BloomFilter::with_fpp(workload.fpp)
        .expected_items(workload.items)
        .seed(workload.seed)
        .power_of_two(power_of_two)
}

/// AtomicBloomFilter's inserts through `&self`: key by key, or batched.
fn atomic_insert(filter: &AtomicBloomFilter, keys: &[u64], mode: Mode) -> usize {
    match mode {
        Mode::OneKey => keys.iter().filter(|key| filter.insert(*key)).count(),
        Mode::Batched => filter.insert_many(keys),
    }
}

/// The largest power of two not above `bits` (at least 64).
fn power_of_two_at_most(bits: u64) -> u64 {
    if bits < 64 { 64 } else { 1 << bits.ilog2() }
}

/// The filterlab filters, one entry each.
pub fn filterlab_entries() -> Vec<Entry> {
    let mut entries = bloom_entries();
    entries.extend(counting_and_cuckoo_entries());
    entries.extend(scalable_entries());
    entries.extend(static_entries());
    entries
}

/// filterlab-bloom's filters.
fn bloom_entries() -> Vec<Entry> {
    let bloom_filter = |name, description, build| {
        Entry::new(
            name,
            Origin::Filterlab,
            "filterlab-bloom",
            description,
            BLOOM_THEORY,
            build,
        )
        .space(BLOOM_SPACE)
        .sizer(BLOOM_SIZER)
    };
    vec![
        bloom_filter(
            "BloomFilter",
            "standard Bloom filter sized by its exact FPP to the smallest whole-word array",
            Build::Empty(|w| Ok(FilterlabSubject::new(bloom(w, false).build()?).boxed())),
        ),
        bloom_filter(
            "BloomFilter-pow2",
            "BloomFilter with the array rounded up to a power of two and the fewest probes meeting the target",
            Build::Empty(|w| Ok(FilterlabSubject::new(bloom(w, true).build()?).boxed())),
        )
        .space(SpaceFormula {
            label: "−n ln p / ln²2 rounded up to a power of two, per item",
            bits_per_item: |n, p| {
                let bits = (BLOOM_SPACE.bits_per_item)(n, p) * n as f64;
                (bits.ceil() as u64).next_power_of_two() as f64 / n as f64
            },
        })
        .sizer(Sizer {
            for_target: |n, p| {
                let builder = BloomFilter::with_fpp(p).expected_items(n);
                Ok(Sizing::bloom(&builder.power_of_two(true).sizing()?, Locality::RandomLines))
            },
            within_memory: |n, bytes| {
                let bits = power_of_two_at_most(bytes.saturating_mul(8));
                let sizing = BloomFilter::with_bits(bits).expected_items(n).sizing()?;
                Ok(Sizing::bloom(&sizing, Locality::RandomLines))
            },
        }),
        block_entry!(
            BlockedBloomFilter,
            "blocked Bloom filter: k probes inside one 512-bit block per key, striped over its eight 64-bit words (k ≤ 16), sized by the exact blocked FPP",
            "exact: Σ_i Binomial(i; n, 1/blocks) × the exact FPP of one striped 512-bit block holding i keys (load mixture of Putze, Sanders, Singler 2007)",
            "smallest whole-block array whose exact blocked FPP meets p",
            BLOCK
        ),
        block_entry!(
            SplitBlockBloomFilter,
            "split-block Bloom filter (Parquet's layout, sbbf's): one bit in each of the eight 32-bit words of one 256-bit block per key, k = 8 fixed, sized by the exact split-block FPP",
            "exact: Σ_i Binomial(i; n, 1/blocks)·(1 − (31/32)^i)^8 (one bit in each of the eight 32-bit words of a 256-bit block)",
            "smallest whole-block array whose exact split-block FPP meets p",
            SPLIT_BLOCK
        ),
        bloom_filter(
            "AtomicBloomFilter",
            "BloomFilter whose inserts take &self (atomic fetch_or), for several threads",
            Build::Empty(|w| {
                let filter = bloom(w, false).build_atomic()?;
                Ok(FilterlabSubject::new(filter).concurrent(atomic_insert).boxed())
            }),
        )
        .can(&[Capability::ConcurrentInserts]),
    ]
}

/// The filters that delete: counting Bloom and cuckoo.
fn counting_and_cuckoo_entries() -> Vec<Entry> {
    vec![
        counting_filter::<Standard>(
            "CountingBloomFilter",
            "counting Bloom filter: 4-bit saturating counters at the bits BloomFilter would set, sized by its exact FPP; deletes, a multiset",
            "exact: the Bloom formula with its m counters as bits and its k (Bose et al. 2008); a saturated counter (15) is never decremented",
            "4 bits × the counters of the exact Bloom sizing (whole 64-byte lines)",
        ),
        counting_filter::<Blocked>(
            "BlockedCountingBloomFilter",
            "blocked counting Bloom filter: a key's k 4-bit counters in one 64-byte block of 128, sized by the exact blocked formula; deletes, a multiset",
            "exact: Σ_i Pois(i; n/blocks) × the exact FPP of one 128-counter block holding i keys (Putze, Sanders, Singler 2007); gated on each instance's exact state-conditional FPP, the mean over blocks of (nonzero counters / 128)^k, because at p ≤ 1e-5 a few crowded blocks move one instance's FPP 15–20% around that expectation (measured: 1.17e-5 and 8.6e-6 for p = 1e-5)",
            "4 bits × the counters of the exact blocked sizing (128 per 64-byte block)",
        )
        .gated_on_state(),
        cuckoo_filter(
            "CuckooFilter",
            "cuckoo filter, 4-slot buckets, the fingerprint width and load (≤ 95%) meeting p with the fewest bits; deletes, a multiset; refuses when full, losing nothing",
            "a priori 1 − (1 − q)^(8α), q = 1/(2^f − 1), at load α (Fan et al. 2014; an upper bound); gated on the state-conditional FPP 1 − A², A the mean over buckets of (1 − q)^(occupied slots)",
            Build::Empty(|w| cuckoo_subject(&cuckoo(w))),
        )
        .can(&[Capability::Deletes]),
        cuckoo_filter(
            "CuckooFilter-grow",
            "CuckooFilter that adds a sub-table twice the previous one's size when the newest holds its capacity (expansion 2), sub-table t taking the FPP share P·(1 − r)·r^t (r = 0.85) with a longer fingerprint; lookups check every sub-table, newest first",
            "compound a priori 1 − Π(1 − p_t) over the sub-tables at their widths, filled in order to their capacities: at most P (each p_t an upper bound); gated on the compound state-conditional FPP",
            Build::Empty(|w| cuckoo_subject(&cuckoo(w).expansion(2))),
        )
        .can(&[Capability::Deletes, Capability::Growth])
        .space(SpaceFormula {
            label: "first sub-table: f/α of the width meeting P·(1 − r), r = 0.85, with the fewest bits",
            bits_per_item: |n, p| {
                let builder = CuckooFilter::with_fpp(p).expected_items(n).expansion(2);
                builder.sizing().map_or(f64::NAN, |s| s.bits_per_item())
            },
        })
        .sizer(Sizer {
            for_target: |n, p| {
                let builder = CuckooFilter::with_fpp(p).expected_items(n).expansion(2);
                Ok(cuckoo_sizing(&builder.sizing()?))
            },
            ..CUCKOO_SIZER
        }),
    ]
}

/// filterlab-scalable's filter, scaling and not.
fn scalable_entries() -> Vec<Entry> {
    vec![
        Entry::new(
            "ScalableBloomFilter",
            Origin::Filterlab,
            "filterlab-scalable",
            "scalable Bloom filter of blocked layers (growth 2, tightening 0.85, P0 = 0.15·P), first layer sized for n; grows without bound",
            "exact compound: 1 − Π(1 − p_i) over the layers' exact blocked FPPs at their counted loads (Almeida et al. 2007), below P0/(1 − r) = P",
            Build::Empty(|w| Ok(FilterlabSubject::new(scalable(w).build()?).boxed())),
        )
        .can(&[Capability::Growth])
        .space(SpaceFormula {
            label: "first layer: the blocked sizing for n at P0 = P·(1 − 0.85)",
            bits_per_item: |n, p| {
                ScalableBloomFilter::params(n, p).map_or(f64::NAN, |s| s.bits_per_item())
            },
        })
        .sizer(Sizer {
            for_target: |n, p| scalable_sizing(&ScalableBloomFilter::with_fpp(p).initial_capacity(n)),
            within_memory: |_, _| Err(grows()),
        }),
        Entry::new(
            "ScalableBloomFilter-nonscaling",
            Origin::Filterlab,
            "filterlab-scalable",
            "ScalableBloomFilter in its non-scaling mode (BF.RESERVE NONSCALING): one blocked layer sized for P; refuses new keys past n, unchanged",
            "exact: Σ_i Binomial(i; n, 1/blocks) × the exact FPP of one striped 512-bit block holding i keys (load mixture of Putze, Sanders, Singler 2007)",
            Build::Empty(|w| Ok(FilterlabSubject::new(scalable(w).non_scaling(true).build()?).boxed())),
        )
        .space(SpaceFormula {
            label: "one layer: the blocked sizing for n at P",
            bits_per_item: |n, p| {
                let builder = ScalableBloomFilter::with_fpp(p).initial_capacity(n);
                builder.non_scaling(true).sizing().map_or(f64::NAN, |s| s.bits_per_item())
            },
        })
        .sizer(Sizer {
            for_target: |n, p| {
                let builder = ScalableBloomFilter::with_fpp(p).initial_capacity(n);
                scalable_sizing(&builder.non_scaling(true))
            },
            within_memory: |_, _| Err(grows()),
        }),
    ]
}

/// A 4-bit counting filter of layout `L` (standard or blocked).
type Counting<L> = CountingBloomBuilder<L, 4>;

/// A 4-bit counting filter's entry: built, sized and described the same
/// way for either layout.
fn counting_filter<L: Layout>(
    name: &'static str,
    description: &'static str,
    theory_note: &'static str,
    space: &'static str,
) -> Entry {
    Entry::new(
        name,
        Origin::Filterlab,
        "filterlab-counting-bloom",
        description,
        theory_note,
        Build::Empty(|w| {
            let builder = Counting::<L>::with_fpp(w.fpp).expected_items(w.items);
            Ok(FilterlabSubject::new(builder.seed(w.seed).build()?)
                .removable()
                .boxed())
        }),
    )
    .can(&[Capability::Deletes])
    .space(SpaceFormula {
        label: space,
        bits_per_item: |n, p| {
            let sizing = Counting::<L>::with_fpp(p).expected_items(n).sizing();
            sizing.map_or(f64::NAN, |s| s.bits_per_item())
        },
    })
    .sizer(Sizer {
        for_target: |n, p| {
            Ok(counting_sizing(
                &Counting::<L>::with_fpp(p).expected_items(n).sizing()?,
            ))
        },
        within_memory: |n, bytes| {
            let builder = Counting::<L>::with_counters(bytes.saturating_mul(2));
            Ok(counting_sizing(&builder.expected_items(n).sizing()?))
        },
    })
}

/// A counting filter's sizing record.
fn counting_sizing(sizing: &CountingSizing) -> Sizing {
    let locality = if sizing.block_counters.is_some() {
        BLOCK
    } else {
        Locality::RandomLines
    };
    let lookup = LookupCost::of_probes(sizing.num_hashes, sizing.hash_choice, locality);
    Sizing::exact(
        sizing.to_string(),
        sizing.bytes(),
        sizing.fpp_at_capacity,
        lookup,
    )
    .with_bits(sizing.bits_per_item(), sizing.hash_limited())
}

/// A cuckoo filter's sizing record: two buckets per lookup; when it grows,
/// the compound a-priori FPP of the sub-tables that hold [`GROWTH_SPAN`]
/// times the items.
fn cuckoo_sizing(sizing: &CuckooSizing) -> Sizing {
    let span = sizing.expected_items.saturating_mul(GROWTH_SPAN);
    let fpp_after_growth = sizing.growth.map(|_| sizing.fpp_after(span));
    Sizing {
        report: sizing.to_string(),
        memory_bytes: sizing.bytes,
        bits_per_item: sizing.bits_per_item(),
        fpp_at_capacity: sizing.fpp_at_capacity,
        fpp_exact: false,
        fpp_after_growth,
        lookup: LookupCost {
            probes: 2,
            fewest_meeting_target: false,
            locality: Locality::TwoBuckets,
        },
        hash_limited: sizing.hash_limited(),
    }
}

/// The cuckoo filter's builder for a workload.
fn cuckoo(workload: &Workload) -> CuckooBuilder {
    CuckooFilter::with_fpp(workload.fpp)
        .expected_items(workload.items)
        .seed(workload.seed)
}

/// A cuckoo filter as a subject: it removes, and its theory is a bound.
fn cuckoo_subject(builder: &CuckooBuilder) -> Result<Box<dyn Subject>, Error> {
    let subject = FilterlabSubject::new(builder.build()?).removable();
    Ok(subject.approximate_theory().boxed())
}

/// The cuckoo filter's load target when sized within a memory budget.
const CUCKOO_LOAD: f64 = 0.95;

/// A cuckoo filter entry: sized like `CuckooFilter::params`, gated on its
/// state-conditional FPP (its a-priori formula is an upper bound).
fn cuckoo_filter(
    name: &'static str,
    description: &'static str,
    theory_note: &'static str,
    build: Build,
) -> Entry {
    Entry::new(
        name,
        Origin::Filterlab,
        "filterlab-cuckoo",
        description,
        theory_note,
        build,
    )
    .gated_on_state()
    .space(SpaceFormula {
        label: "f/α: fingerprint bits over the load (≤ 95%) of the width meeting p with the fewest bits",
        bits_per_item: |n, p| CuckooFilter::params(n, p).map_or(f64::NAN, |s| s.bits_per_item()),
    })
    .sizer(CUCKOO_SIZER)
}

/// The cuckoo filter's sizing, as `CuckooFilter::params`.
const CUCKOO_SIZER: Sizer = Sizer {
    for_target: |n, p| Ok(cuckoo_sizing(&CuckooFilter::params(n, p)?)),
    // The buckets for n at 95% load, and the widest fingerprint that fits.
    within_memory: |n, bytes| {
        let buckets = ((n as f64 / (4.0 * CUCKOO_LOAD)).ceil() as u64).max(1);
        let bits = (bytes.saturating_sub(16).saturating_mul(8) / (4 * buckets)).min(32);
        let builder = CuckooFilter::with_buckets(buckets).fingerprint_bits(bits as u32);
        Ok(cuckoo_sizing(&builder.expected_items(n).sizing()?))
    },
};

/// The scalable filter's builder for a workload (first layer for its n).
fn scalable(workload: &Workload) -> ScalableBloomBuilder {
    ScalableBloomFilter::with_fpp(workload.fpp)
        .initial_capacity(workload.items)
        .seed(workload.seed)
}

/// A scalable filter's sizing record at its initial capacity.
fn scalable_sizing(builder: &ScalableBloomBuilder) -> Result<Sizing, Error> {
    let sizing: ScalableSizing = builder.sizing()?;
    let first: &BloomSizing = &sizing
        .layers
        .first()
        .ok_or_else(|| Error::failed("a scalable sizing without layers"))?
        .sizing;
    let layer = Sizing::bloom(first, BLOCK);
    let fpp_after_growth = if sizing.config.non_scaling {
        None
    } else {
        let span = sizing.items.saturating_mul(GROWTH_SPAN);
        Some(builder.sizing_for(span)?.fpp_at_items)
    };
    Ok(Sizing {
        report: sizing.to_string(),
        memory_bytes: sizing.bytes,
        bits_per_item: sizing.bits_per_item(),
        fpp_at_capacity: sizing.fpp_at_items,
        fpp_after_growth,
        ..layer
    })
}

/// Why a scalable filter has no sizing within a memory budget.
fn grows() -> Error {
    Error::usage("a scalable filter is sized by its target FPP and grows with its items")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_round_down() {
        assert_eq!(power_of_two_at_most(1000), 512);
        assert_eq!(power_of_two_at_most(1024), 1024);
    }

    #[test]
    fn cuckoo_lookups_read_two_buckets() {
        let sizing = (cuckoo_filter("x", "", "", Build::Empty(|_| unreachable!()))
            .sizer
            .unwrap()
            .for_target)(1_000_000, 0.001)
        .unwrap();
        assert_eq!(sizing.lookup.memory_accesses(), 2);
        assert_eq!(
            sizing.lookup.to_string(),
            "2 buckets of 4 fingerprints, each a random cache line"
        );
        assert!(sizing.bits_per_item < 13.7, "{}", sizing.bits_per_item);
    }
}
