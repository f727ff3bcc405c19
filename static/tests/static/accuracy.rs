//! The FPP against each filter's exact theory (seeded keys, a Wilson
//! interval at 99.9%, many independently keyed filters), and the space
//! each takes.

use filterlab_core::testing::{check_fpp_against_theory_after, count_false_positives};
use filterlab_static::{
    BinaryFuseBuilder, BinaryFuseFilter, Fingerprint, Membership, RibbonFilter,
};

use crate::{fuse, keys, ribbon};

/// Keys a measured filter holds: 2^4 partitions of a Ribbon filter, so
/// that wide and narrow ones mix.
const HELD: u64 = 20_000;

#[test]
fn ribbon_fpp_matches_its_exact_theory() {
    for (fpp, seed) in [
        (0.1, 1),
        (0.03, 2),
        (0.01, 3),
        (0.0015, 4),
        (1.0 / 256.0, 5),
    ] {
        let mut filter = ribbon(fpp, seed, HELD);
        let (partitions, wide) = filter.partitions();
        assert!(
            partitions == 16 && (fpp == 1.0 / 256.0 || (0 < wide && wide < 16)),
            "{filter:?}"
        );
        let load = |filter: &mut RibbonFilter, seed: u64| *filter = ribbon(fpp, seed, HELD);
        check_fpp_against_theory_after(&mut filter, load, HELD, Some(fpp), seed, 1000.0);
    }
}

fn check_fuse_fpp<F: Fingerprint, const ARITY: usize>(seed: u64, hits: f64) {
    let mut filter = fuse::<F, ARITY>(seed, HELD);
    let load = |filter: &mut BinaryFuseFilter<F, ARITY>, seed: u64| *filter = fuse(seed, HELD);
    let exact = filter.expected_fpp();
    check_fpp_against_theory_after(&mut filter, load, HELD, Some(exact), seed, hits);
}

#[test]
fn binary_fuse_fpp_matches_its_exact_theory() {
    check_fuse_fpp::<u8, 3>(11, 1000.0);
    check_fuse_fpp::<u8, 4>(12, 1000.0);
    check_fuse_fpp::<u16, 3>(13, 150.0);
    check_fuse_fpp::<u16, 4>(14, 150.0);
    // 2^-32: 2^24 queries expect 0.004 false positives; two or more would
    // come with probability 8e-6.
    for seed in [15, 16] {
        let filter = fuse::<u32, 3>(seed, HELD);
        assert!(
            count_false_positives(&filter, seed, 1 << 24) <= 1,
            "{filter:?}"
        );
    }
}

/// The Ribbon filter's space: within 5% of log2(1/p) for every FPP from
/// 0.1 to 10^-5 at 10^5 keys (the target; measured at 10^6 and 10^8 by
/// the benches), and its sizing's prediction within 0.5% of the build.
#[test]
fn ribbon_bits_per_item_within_5_percent_of_the_bound() {
    let keys = keys(21, 100_000);
    for fpp in [
        0.1, 0.07, 0.05, 0.03, 0.02, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5,
    ] {
        let filter = RibbonFilter::with_fpp(fpp).build(&keys).unwrap();
        let bound = fpp.recip().log2();
        let bits = filter.bits_per_item();
        assert!(
            bits <= 1.05 * bound,
            "p = {fpp}: {bits:.3} bits a key, bound {bound:.3}"
        );
        assert!(filter.expected_fpp() <= fpp, "{filter:?}");
        let sizing = RibbonFilter::params(100_000, fpp).unwrap();
        assert!(
            (sizing.bits_per_item() / bits - 1.0).abs() < 0.005,
            "{sizing:?} vs {bits}"
        );
        assert_eq!(sizing.fpp, filter.expected_fpp());
    }
}

/// The binary fuse filter's array: Graf and Lemire's sizes (1.125 slots a
/// key with 3 hashes, 1.075 with 4, for large sets), what xorf's
/// BinaryFuse8 takes: 9.04 bits a key at 10^6 keys.
#[test]
fn binary_fuse_sizes_are_graf_and_lemires() {
    let per_key = |slots: u64, n: u64| slots as f64 / n as f64;
    assert!(
        (per_key(BinaryFuseBuilder::<u8, 3>::num_slots(1_000_000), 1_000_000) - 1.1305).abs()
            < 1e-3
    );
    assert!(
        (per_key(
            BinaryFuseBuilder::<u8, 3>::num_slots(100_000_000),
            100_000_000
        ) - 1.125)
            .abs()
            < 1e-3
    );
    assert!(
        (per_key(
            BinaryFuseBuilder::<u8, 4>::num_slots(100_000_000),
            100_000_000
        ) - 1.075)
            .abs()
            < 2e-3
    );
    let filter = fuse::<u16, 4>(22, 100_000);
    assert_eq!(
        filter.num_slots(),
        BinaryFuseBuilder::<u16, 4>::num_slots(100_000)
    );
    assert_eq!(
        filter.memory_usage() as u64,
        (2 * filter.num_slots()).next_multiple_of(8)
    );
}
