//! Integration tests of filterlab-bloom, one module per filter type, and the
//! checks they share: statistical, format, merge and parameter checks written
//! once over the filter type.

/// Checks the parameter errors every Bloom filter type shares: an FPP
/// outside (0, 1), zero items, zero bits, or k missing or outside 1..=64 are
/// `InvalidParameter`; sizes beyond any memory, or over a memory cap, are
/// `TooLarge`. (Defined before the modules that use it.)
macro_rules! check_bad_parameters {
    ($filter:ident) => {{
        use filterlab_bloom::ErrorKind::{InvalidParameter, TooLarge};
        use filterlab_core::testing::{check_invalid_fpps, expect_error};
        check_invalid_fpps(|fpp| $filter::params(1000, fpp));
        expect_error($filter::params(0, 0.01), InvalidParameter, "zero items");
        for builder in [
            $filter::with_fpp(0.01),
            $filter::with_bits(0).hashes(3),
            $filter::with_bits(100).hashes(0),
            $filter::with_bits(100).hashes(65),
            $filter::with_bits(100),
            $filter::with_fpp(0.01).expected_items(1000).hashes(0),
            // A bad k is refused as such, before the size it would need.
            $filter::with_fpp(0.01)
                .expected_items(10_000_000)
                .max_memory(1 << 20)
                .hashes(65),
        ] {
            expect_error(builder.build(), InvalidParameter, &builder);
        }
        for builder in [
            $filter::with_fpp(1e-300).expected_items(u64::MAX),
            $filter::with_fpp(0.5).expected_items(u64::MAX),
            $filter::with_bits(u64::MAX).hashes(3),
            $filter::with_fpp(0.01)
                .expected_items(10_000_000)
                .max_memory(1 << 20),
        ] {
            expect_error(builder.build(), TooLarge, &builder);
        }
    }};
}

/// Checks the kernel choice of a blocked filter type (a macro: `kernel`,
/// `set_kernel` and the builder's `kernel` are each type's own): `scalar`, a
/// filter built with `Kernel::Scalar`, keeps it; read back it starts with
/// the fastest kernel and still compares equal; and where the CPU lacks
/// AVX2, asking for it is an `InvalidParameter` that leaves the filter as it
/// was.
macro_rules! check_kernel_choice {
    ($filter:ident, $scalar:expr) => {{
        use filterlab_bloom::{ErrorKind, Kernel};
        let filter: $filter = $scalar;
        assert_eq!(filter.kernel(), Kernel::Scalar);
        let read = $filter::from_bytes(&filter.to_bytes()).unwrap();
        assert_eq!(read.kernel(), Kernel::detect());
        assert_eq!(read, filter);
        if !Kernel::Avx2.is_available() {
            let err = $filter::with_fpp(0.01)
                .expected_items(10)
                .kernel(Kernel::Avx2)
                .build()
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidParameter);
            let mut filter = filter.clone();
            assert!(filter.set_kernel(Kernel::Avx2).is_err());
            assert_eq!(filter.kernel(), Kernel::Scalar);
        }
    }};
}

/// The tests the two blocked layouts share, written once for `$filter`
/// (a macro: the builders and the inherent methods are each type's own):
/// `sized(items, fpp, seed, kernel)`, the conformance suite for every
/// kernel, the FPP grid against the exact theory (seeds from `$seed`), the
/// kernel choice, refused merges, the counter bound, estimates against
/// theory, serde; and the helpers `check_golden_every_kernel`, which reads
/// a golden file with every kernel, and `check_drift`, which checks that
/// a builder's filter is refused under each of `drifted`'s configurations.
macro_rules! block_layout_tests {
    ($filter:ident, $builder:ident, fpp_seeds: $seed:expr) => {
        fn sized(items: u64, fpp: f64, seed: u64, kernel: Kernel) -> $filter {
            let builder = $filter::with_fpp(fpp).expected_items(items).seed(seed);
            builder.kernel(kernel).build().unwrap()
        }

        #[test]
        fn conformance_every_kernel() {
            for kernel in kernels() {
                let by_seed = move |seed| sized(400, 0.01, seed, kernel);
                Conformance::varying(stringify!($filter), by_seed, 1, 2).check();
                let by_fpp = move |fpp| sized(400, fpp, 1, kernel);
                Conformance::varying(stringify!($filter), by_fpp, 0.01, 0.001).check_mergeable();
            }
        }

        /// Every state inserts, merges, `clear` and accepted files reach
        /// reads back (with the fastest kernel: the format does not depend
        /// on it).
        #[test]
        fn reachable_states_persist() {
            let make = || sized(100, 0.01, 1, Kernel::detect());
            Conformance::new(stringify!($filter), make)
                .mergeable()
                .check_states();
        }

        #[test]
        fn fpp_matches_exact_theory_every_kernel() {
            $crate::check_fpp_grid($seed, sized);
        }

        #[test]
        fn kernel_choice_and_errors() {
            check_kernel_choice!($filter, sized(1000, 0.01, 1, Kernel::Scalar));
        }

        #[test]
        fn merges_refuse_other_configurations() {
            let mut filter = sized(1000, 0.01, 1, Kernel::detect());
            filter.insert("x");
            let others = [(1000, 0.01, 2), (1000, 0.001, 1), (5000, 0.01, 1)]
                .map(|(items, fpp, seed)| sized(items, fpp, seed, Kernel::detect()));
            filterlab_core::testing::check_merges_refuse(&filter, &others);
        }

        #[test]
        fn a_counter_above_the_bits_set_is_refused() {
            for kernel in kernels() {
                $crate::check_counter_bound(sized(1000, 0.01, 6, kernel), $filter::set_bits);
            }
        }

        /// Empty, then 10,000 keys: the FPP given the fill is 0, then
        /// within 15% of the exact theory; the estimate from the bits set
        /// within 3% of the keys.
        #[test]
        fn estimates_follow_the_fill() {
            let mut filter = sized(10_000, 0.01, 4, Kernel::detect());
            assert_eq!(filter.expected_fpp(), 0.0);
            filter.extend((0..10_000u64).map(|i| insert_key(4, i)));
            let estimate = filter.estimated_len();
            assert!((estimate / 10_000.0 - 1.0).abs() < 0.03, "{estimate}");
            let expected = filter.expected_fpp();
            let theory = filter.theoretical_fpp(10_000).unwrap();
            let relative = (expected / theory - 1.0).abs();
            assert!(relative < 0.15, "{expected} vs {theory}");
        }

        #[cfg(feature = "serde")]
        #[test]
        fn serde_round_trip_validates() {
            let mut filter = sized(1000, 0.01, 8, Kernel::detect());
            fill(&mut filter, 8, 500);
            filterlab_core::testing::check_serde_round_trip(&filter);
        }

        /// `builder`'s filter is read back under its own configuration and
        /// refused, from its header alone, under each of `drifted`'s.
        fn check_drift(builder: &$builder, drifted: &[$builder]) {
            let others: Vec<_> = drifted
                .iter()
                .map(|other| other.config().unwrap())
                .collect();
            let (filter, same) = (builder.build().unwrap(), builder.config().unwrap());
            filterlab_core::testing::check_config_drift(&filter, &same, &others, 100);
        }

        /// The golden file read with every kernel holds its three keys.
        fn check_golden_every_kernel(golden: &[u8]) {
            for kernel in kernels() {
                let mut read = $filter::from_bytes(golden).unwrap();
                read.set_kernel(kernel).unwrap();
                assert!($crate::GOLDEN_KEYS.iter().all(|k| read.contains(*k)));
                assert_eq!(read.len(), 3);
            }
        }
    };
}

mod atomic;
mod blocked;
mod hash_quality;
mod keys;
mod sizing_claims;
mod split_block;
mod standard;
mod view;

use std::fmt::Debug;

use filterlab_bloom::{
    BlockedBloomFilter, BloomFilter, ErrorKind, Filter, HashAlgorithm, Kernel, KeyHasher, Merge,
    Persist,
};
use filterlab_core::format::FrameWriter;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::testing::{check_fpp_against_theory, fill};

/// The kernels this CPU runs; the scalar one always.
pub(crate) fn kernels() -> Vec<Kernel> {
    let all = [Kernel::Scalar, Kernel::Avx2];
    let available: Vec<Kernel> = all.into_iter().filter(|k| k.is_available()).collect();
    if available.len() < all.len() {
        eprintln!("kernels not available on this CPU, not tested: {all:?} vs {available:?}");
    }
    available
}

/// The blocked layouts' accuracy check: for every kernel, filters made by
/// `sized(items, target, seed, kernel)` for 1e3, 1e5 and 1e6 items at
/// targets 1e-1 to 1e-4 meet the target, and their measured FPP matches
/// their exact theory (seeds from `first_seed`).
pub(crate) fn check_fpp_grid<F: Filter + Debug>(
    first_seed: u64,
    sized: impl Fn(u64, f64, u64, Kernel) -> F,
) {
    for kernel in kernels() {
        for (index, &items) in [1_000u64, 100_000, 1_000_000].iter().enumerate() {
            for (jndex, &target) in [1e-1, 1e-2, 1e-3, 1e-4].iter().enumerate() {
                let seed = first_seed + 10 * index as u64 + jndex as u64;
                let mut filter = sized(items, target, seed, kernel);
                check_fpp_against_theory(&mut filter, items, Some(target), seed);
            }
        }
    }
}

/// A union's `len` estimates the merged set (30,000 and 30,000 keys sharing
/// 10,000), as does `estimated_len`; both sides' keys stay present. `make`
/// gives empty filters sized for 100,000 keys at 1%.
pub(crate) fn check_union_len<F: Merge + Extend<u64>>(
    make: impl Fn() -> F,
    estimated_len: impl Fn(&F) -> f64,
) {
    let (mut a, mut b) = (make(), make());
    a.extend(0..30_000u64);
    b.extend(20_000..50_000u64);
    assert_eq!(a.len(), 30_000);
    a.union(&b).unwrap();
    let len = a.len() as f64;
    assert!((len / 50_000.0 - 1.0).abs() < 0.03, "len {len}");
    assert!((estimated_len(&a) / 50_000.0 - 1.0).abs() < 0.03);
    assert!(a.contains_many(0..50_000u64).iter().all(|&hit| hit));
}

/// Keys the golden files hold.
pub(crate) const GOLDEN_KEYS: [&str; 3] = ["alpha", "beta", "gamma"];

/// Core's golden-file checks under the three hasher ids
/// ([`filterlab_core::testing::check_golden_hashers`] and
/// [`check_golden_by_value`](filterlab_core::testing::check_golden_by_value))
/// with [`GOLDEN_KEYS`], seed 42, and the files `{stem}-v1.bin` (id 1),
/// `{stem}-v1-hasher2.bin` (id 2) and `{stem}-v1-hasher3.bin` (id 3) in
/// `tests/golden/`; the id-1 bytes.
pub(crate) fn check_golden<F>(build: impl Fn(KeyHasher) -> F, stem: &str) -> Vec<u8>
where
    F: Filter + Persist + PartialEq + Debug,
{
    let path = |name: String| format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let (v1, v2, v3) = (
        path(format!("{stem}-v1.bin")),
        path(format!("{stem}-v1-hasher2.bin")),
        path(format!("{stem}-v1-hasher3.bin")),
    );
    let by_value = HashAlgorithm::FoldedMultiply;
    filterlab_core::testing::check_golden_by_value(&build, by_value, 42, &GOLDEN_KEYS, v3);
    filterlab_core::testing::check_golden_hashers(build, 42, &GOLDEN_KEYS, v1, v2)
}

/// The bytes of `filter` with its item counter replaced by `items`, and the
/// checksums recomputed: a file that passes every check but the counter's.
pub(crate) fn with_counter<F: Persist>(filter: &F, items: u64) -> Vec<u8> {
    let mut header = filter.header();
    header.items = items;
    with_header(filter, &header)
}

/// The bytes of `filter`'s payload under `header`, with the checksums
/// computed: a file whose only flaw is what the header says.
pub(crate) fn with_header<F: Persist>(
    filter: &F,
    header: &filterlab_core::format::Header,
) -> Vec<u8> {
    let mut frame = FrameWriter::new(Vec::new(), header).unwrap();
    filter.write_payload(&mut frame).unwrap();
    frame.finish().unwrap()
}

/// Every insert a Bloom filter counts sets a clear bit, so a valid counter
/// never exceeds the bits set: a file claiming more (up to `u64::MAX`, whose
/// next insert would overflow) is refused; one at the bound is read, and
/// later inserts keep the counter within the bits set.
pub(crate) fn check_counter_bound<F: Filter + Persist>(
    mut filter: F,
    set_bits: impl Fn(&F) -> u64,
) {
    fill(&mut filter, 12, 200);
    let bits = set_bits(&filter);
    assert!(filter.len() as u64 <= bits);
    for items in [bits + 1, u64::MAX / 2, u64::MAX] {
        let bytes = with_counter(&filter, items);
        let err = F::from_bytes(&bytes).map(|_| ()).unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::InvalidHeader,
            "counter {items}: {err}"
        );
    }
    let mut read = F::from_bytes(&with_counter(&filter, bits)).unwrap();
    assert_eq!(read.len() as u64, bits);
    let hasher = *read.hasher();
    for i in 0..2000 {
        read.insert_hash(hasher.hash(&query_key(12, i))).unwrap();
        assert!(read.len() as u64 <= set_bits(&read), "after {i} inserts");
    }
}

/// After a merge `len` is an estimate, clamped to what the inputs allow and
/// to the bits set: with one probe per key the estimate from the bits,
/// -m ln(1 - X/m), exceeds the X bits set, so without the second clamp a
/// merged filter would hold a counter its own file could not be read with.
/// `make` gives empty filters of one configuration with one hash per key.
pub(crate) fn check_merges_keep_len_within_the_bits_set<F: Merge + Persist>(
    make: impl Fn() -> F,
    set_bits: impl Fn(&F) -> u64,
    keys: u64,
) {
    let (mut a, mut b) = (make(), make());
    fill(&mut a, 21, keys);
    fill(&mut b, 22, keys);
    let mut union = make();
    fill(&mut union, 21, keys);
    union.union(&b).unwrap();
    let mut intersection = make();
    fill(&mut intersection, 21, keys);
    intersection.intersect(&b).unwrap();
    for (what, merged) in [("union", &union), ("intersection", &intersection)] {
        let bits = set_bits(merged);
        assert!(
            merged.len() as u64 <= bits,
            "{what}: len {} > {bits} bits set",
            merged.len()
        );
        let read = F::from_bytes(&merged.to_bytes()).unwrap();
        assert_eq!(read.len(), merged.len());
    }
    // The union still counts at least what either side did.
    assert!(union.len() >= a.len().max(b.len()));
}

/// Batched operations (prefetching on arrays of a few MiB) answer exactly
/// as one-by-one ones: the same new-key counts, the same lookups.
pub(crate) fn check_batches_agree<F: Filter + Clone>(mut filter: F) {
    let keys: Vec<u64> = (0..200_000).map(|i| insert_key(77, i)).collect();
    let mut one_by_one = filter.clone();
    let hasher = *filter.hasher();
    let hashes: Vec<u64> = keys.iter().map(|key| hasher.hash(key)).collect();
    let new = filter.insert_hashes(&hashes).unwrap();
    let single: usize = hashes
        .iter()
        .map(|&hash| usize::from(one_by_one.insert_hash(hash).unwrap()))
        .sum();
    assert_eq!(new, single);
    assert_eq!(filter.len(), one_by_one.len());
    assert!(filter.contains_many(&keys).iter().all(|&hit| hit));
    let probes: Vec<u64> = (0..200_000).map(|i| query_key(77, i)).collect();
    let batched = filter.contains_many(&probes);
    let single: Vec<bool> = probes.iter().map(|key| one_by_one.contains(key)).collect();
    assert_eq!(batched, single);
}

#[test]
fn batches_agree_with_single_operations() {
    // 16 Mbit = 2 MiB: above the size where batches start prefetching.
    let bits = 1 << 24;
    let standard = BloomFilter::with_bits(bits).hashes(7).build().unwrap();
    check_batches_agree(standard.clone());
    check_batches_agree(standard.into_atomic());
    for kernel in [
        filterlab_bloom::Kernel::Scalar,
        filterlab_bloom::Kernel::detect(),
    ] {
        check_batches_agree(
            BlockedBloomFilter::with_bits(bits)
                .hashes(6)
                .kernel(kernel)
                .build()
                .unwrap(),
        );
    }
}
