//! The peer crates' entries: each adapter of `filterlab-peers`, described.

use std::f64::consts::LN_2;

use filterlab_peers::{
    BinaryFuse8, BinaryFuse16, BloomFilterCrate, Cuckoo, FastBloom, FastBloomRsCounting, Growable,
    PeerSubject, QFILTER_GROWTH_CEILING, QFilter, ScalableCuckoo, SplitBlock, Xor8,
    sbbf_bits_per_key,
};

use crate::registry::entry::{
    Build, BuildEmpty, BuildFromKeys, Capability, Entry, Origin, SpaceFormula,
};
use crate::registry::filterlab::{BLOOM_SPACE, BLOOM_THEORY};

/// qfilter's theory, fixed or resizeable.
const QFILTER_THEORY: &str = "exact: 1 − (1 − 2^−F)^n, a query matching one of the n keys' F-bit fingerprints (quotient and remainder; growth keeps F)";

/// qfilter's bits per item at n for p, when it may grow `ceiling` times:
/// its own layout (64-slot blocks of 17 + 8r bytes, r remainder bits).
fn qfilter_bits_per_item(n: u64, p: f64, ceiling: u64) -> f64 {
    let slots = |items: u64| {
        let mut slots = items.next_power_of_two().max(64);
        while (slots * 19).div_ceil(20) < items {
            slots *= 2;
        }
        slots
    };
    let (initial, maximum) = (slots(n), slots(n.saturating_mul(ceiling)));
    let remainder = (1.0 / p).log2().ceil() + f64::from(maximum.ilog2() - initial.ilog2());
    let bytes = initial as f64 / 64.0 * (17.0 + 8.0 * remainder) + 8.0;
    bytes * 8.0 / n as f64
}

/// A peer crate's entry: its registry name, package and version, what it
/// is, what its theory is worth, and how it is built.
fn peer(
    name: &'static str,
    package: &'static str,
    description: &'static str,
    theory_note: &'static str,
    build: Build,
) -> Entry {
    Entry::new(name, Origin::Peer, package, description, theory_note, build)
}

/// The peer crates, one entry each.
pub fn peer_entries() -> Vec<Entry> {
    let mut entries = set_peers();
    entries.extend(delete_and_grow_peers());
    entries
}

/// The peers of the Bloom filters and the static filter.
fn set_peers() -> Vec<Entry> {
    // A standard Bloom filter: the exact formula and the optimum's space.
    let bloom = |name, package, description, build: BuildEmpty| {
        peer(
            name,
            package,
            description,
            BLOOM_THEORY,
            Build::Empty(build),
        )
        .space(BLOOM_SPACE)
    };
    vec![
        bloom(
            "fastbloom",
            "fastbloom 0.17",
            "standard Bloom filter with foldhash, its fastest hasher (its default is SipHash-1-3)",
            |w| Ok(PeerSubject::boxed(FastBloom::new(w))),
        ),
        bloom(
            "bloomfilter",
            "bloomfilter 3.0",
            "standard Bloom filter with two seeded SipHash-1-3 hashes",
            |w| Ok(PeerSubject::boxed(BloomFilterCrate::new(w)?)),
        ),
        peer(
            "sbbf-rs-safe",
            "sbbf-rs-safe 0.3",
            "split-block Bloom filter (Parquet's; SIMD), fed XXH3-64 of the key, sized here by the split-block formula",
            "exact: Σ_i Binomial(i; n, 1/blocks)·(1 − (31/32)^i)^8 (one bit in each of the eight 32-bit words of a 256-bit block)",
            Build::Empty(|w| Ok(PeerSubject::boxed(SplitBlock::new(w)?))),
        )
        .space(SpaceFormula {
            label: "split-block formula (8 probes in one 256-bit block), whole bits per key",
            bits_per_item: |n, p| sbbf_bits_per_key(n, p).map_or(f64::NAN, |b| b as f64),
        }),
        peer(
            "cuckoofilter",
            "cuckoofilter 0.5",
            "cuckoo filter, 8-bit fingerprints, 4-slot buckets; drops a random item when full",
            "approximate: 1 − (1 − 1/255)^(8·load), a query comparing its fingerprint with two 4-slot buckets (Fan et al. 2014)",
            Build::Empty(|w| Ok(PeerSubject::boxed(Cuckoo::new(w)))),
        )
        .can(&[Capability::Deletes])
        .unreproducible()
        .space(SpaceFormula {
            label: "8 bits × slots / n, slots = n rounded up to a power of two (p not configurable)",
            bits_per_item: |n, _| 8.0 * n.next_power_of_two() as f64 / n as f64,
        }),
        peer(
            "growable-bloom-filter",
            "growable-bloom-filter 2.1",
            "scalable Bloom filter (growth 2, tightening 0.85) of partitioned Bloom layers",
            "none: its FPP depends on its growth history",
            Build::Empty(|w| Ok(PeerSubject::boxed(Growable::new(w)))),
        )
        .can(&[Capability::Growth])
        .space(SpaceFormula {
            label: "⌈log2(1/p)⌉ / ln 2 (first partitioned layer)",
            bits_per_item: |_, p| (1.0 / p).log2().ceil() / LN_2,
        }),
        xorf(
            "xorf-BinaryFuse8",
            "xorf 0.13 BinaryFuse8",
            (8, |_, keys| Ok(PeerSubject::boxed(BinaryFuse8::build(keys)?))),
            "binary fuse filter with 8-bit fingerprints, 3-wise, built once from the whole key set (static)",
            SpaceFormula {
                label: "8 bits × 1.125 (p fixed at 2^−8)",
                bits_per_item: |_, _| 9.0,
            },
        ),
        xorf(
            "xorf-BinaryFuse16",
            "xorf 0.13 BinaryFuse16",
            (16, |_, keys| Ok(PeerSubject::boxed(BinaryFuse16::build(keys)?))),
            "binary fuse filter with 16-bit fingerprints, 3-wise, built once from the whole key set (static)",
            SpaceFormula {
                label: "16 bits × 1.125 (p fixed at 2^−16)",
                bits_per_item: |_, _| 18.0,
            },
        ),
        xorf(
            "xorf-Xor8",
            "xorf 0.13 Xor8",
            (8, |_, keys| Ok(PeerSubject::boxed(Xor8::build(keys)?))),
            "xor filter (Graf and Lemire 2020, binary fuse's predecessor), 8-bit fingerprints in 1.23 n + 32 slots, built once from the whole key set (static)",
            SpaceFormula {
                label: "8 bits × (1.23 n + 32) / n (p fixed at 2^−8)",
                bits_per_item: |n, _| 8.0 * (1.23 + 32.0 / n.max(1) as f64),
            },
        ),
    ]
}

/// An xorf filter's entry: static, with `bits`-bit fingerprints (exact at
/// 2^−bits whatever the target), built by `build`.
fn xorf(
    name: &'static str,
    package: &'static str,
    (bits, build): (i32, BuildFromKeys),
    description: &'static str,
    space: SpaceFormula,
) -> Entry {
    let theory = if bits == 8 {
        "exact: 2^−8, the chance that a query's 8-bit fingerprint matches"
    } else {
        "exact: 2^−16, the chance that a query's 16-bit fingerprint matches"
    };
    peer(name, package, description, theory, Build::FromKeys(build))
        .can(&[Capability::StaticSet])
        .fixed_fpp(2f64.powi(-bits))
        .space(space)
}

/// The peers of the counting, cuckoo and scalable filters.
fn delete_and_grow_peers() -> Vec<Entry> {
    vec![
        peer(
            "fastbloom-rs",
            "fastbloom-rs 0.5",
            "counting Bloom filter, 4-bit counters, k probes by double hashing over two unseeded XXH3 hashes; repeat inserts count",
            "approximate: the exact Bloom formula with its m counters and k (its double hashing mod m is not independent probes)",
            Build::Empty(|w| Ok(PeerSubject::boxed(FastBloomRsCounting::new(w)))),
        )
        .can(&[Capability::Deletes])
        .space(SpaceFormula {
            label: "4 × −ln p / ln²2 (4-bit counters)",
            bits_per_item: |n, p| 4.0 * (BLOOM_SPACE.bits_per_item)(n, p),
        }),
        peer(
            "qfilter",
            "qfilter 0.3",
            "rank-select quotient filter with seeded foldhash; deletes and counts; `insert` skips a key whose fingerprint is stored, so removing the other key loses it; refuses when full",
            QFILTER_THEORY,
            Build::Empty(|w| Ok(PeerSubject::boxed(QFilter::new(w)?))),
        )
        .can(&[Capability::Deletes])
        .space(SpaceFormula {
            label: "(⌈log2(1/p)⌉ + 2.125) bits × slots / n, slots a power of two ≥ n/0.95",
            bits_per_item: |n, p| qfilter_bits_per_item(n, p, 1),
        }),
        peer(
            "qfilter-resizeable",
            "qfilter 0.3",
            "qfilter's resizeable mode, told in advance it may grow to 1000× n (p holds at that maximum: 10 more remainder bits from the start); doubles when full",
            QFILTER_THEORY,
            Build::Empty(|w| Ok(PeerSubject::boxed(QFilter::resizeable(w)?))),
        )
        .can(&[Capability::Deletes, Capability::Growth])
        .space(SpaceFormula {
            label: "as qfilter, with log2(1000) ≈ 10 more remainder bits for its maximum",
            bits_per_item: |n, p| qfilter_bits_per_item(n, p, QFILTER_GROWTH_CEILING),
        }),
        peer(
            "scalable_cuckoo_filter",
            "scalable_cuckoo_filter 0.5",
            "cuckoo sub-filters of doubling capacity and halving FPP (P/2, P/4, …), with seeded foldhash and a seeded RNG; lookups check every sub-filter. Its fingerprints are the hash's top bits with 0 meaning empty, unguarded: the adapter sets the top bit of a hash that would give fingerprint 0 (1 in 2^f keys)",
            "approximate: 1 − Π(1 − p_i), sub-filter i filled in order to 95% with p_i = 1 − (1 − 2^−f_i)^(8·load)",
            Build::Empty(|w| Ok(PeerSubject::boxed(ScalableCuckoo::new(w)))),
        )
        .can(&[Capability::Deletes, Capability::Growth])
        .space(SpaceFormula {
            label: "⌈log2(2/p) + 3⌉ bits × slots (a power of two ≥ n) / n, its first sub-filter",
            bits_per_item: |n, p| {
                let bits = ((2.0 / p).log2() + 3.0).ceil();
                bits * n.div_ceil(4).next_power_of_two() as f64 * 4.0 / n as f64
            },
        }),
    ]
}
