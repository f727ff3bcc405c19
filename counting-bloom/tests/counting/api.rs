//! The API's semantics: the equivalent Bloom filter, merges as multisets,
//! `count`, removals that cannot succeed, sizing, and bad parameters.

use filterlab_core::Membership;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::testing::{check_invalid_fpps, check_merges_refuse, expect_error};
use filterlab_core::theory::{bloom_fpp_exact, bloom_optimal_bits};
use filterlab_counting_bloom::{
    Blocked, BlockedCountingBloomFilter, CountingBloomBuilder, CountingBloomFilter, ErrorKind,
    HashChoice, Layout, Merge, RemovableFilter, Standard,
};

use crate::conformance::{filled, sized};

/// `to_bloom` answers exactly as the counting filter, on 1e6 keys (members
/// and non-members), after inserts and removals, one by one and batched.
#[test]
fn to_bloom_answers_identically() {
    let items = 500_000;
    let (mut counting, inserted) = filled(items, 31);
    assert_eq!(counting.remove_many(&inserted[..100_000]), 100_000);
    let bloom = counting.to_bloom().unwrap();
    assert_eq!(bloom.num_bits(), counting.num_counters());
    assert_eq!(bloom.num_hashes(), counting.num_hashes());
    assert_eq!(bloom.hasher(), counting.hasher());
    assert_eq!(bloom.set_bits(), counting.nonzero_counters());
    assert_eq!(bloom.target_fpp(), counting.target_fpp());
    assert_eq!(bloom.capacity(), counting.capacity());
    // Its len estimates the 400,000 distinct keys held.
    let len = bloom.len() as f64;
    assert!((len / 400_000.0 - 1.0).abs() < 0.02, "{len}");
    let probes: Vec<u64> = inserted
        .iter()
        .copied()
        .chain((0..items).map(|i| query_key(31, i)))
        .collect();
    assert_eq!(probes.len(), 1_000_000);
    let expected = counting.contains_many(&probes);
    assert_eq!(bloom.contains_many(&probes), expected);
    assert!(
        probes
            .iter()
            .zip(&expected)
            .all(|(key, &hit)| bloom.contains(key) == hit)
    );
    // Same FPP: the non-members it calls present are the counting filter's.
    let false_positives = expected[items as usize..]
        .iter()
        .filter(|&&hit| hit)
        .count();
    assert!(false_positives > 0);
    assert_eq!(bloom.expected_fpp(), counting.expected_fpp());
}

#[test]
fn to_bloom_of_odd_sizes_and_widths() {
    let mut counting = CountingBloomBuilder::<Standard, 16>::with_counters(1000)
        .hashes(3)
        .seed(4)
        .build()
        .unwrap();
    counting.extend(0..100u64);
    let bloom = counting.to_bloom().unwrap();
    assert_eq!(bloom.num_bits(), 1000);
    assert!((0..10_000u64).all(|key| bloom.contains(&key) == counting.contains(&key)));
    let empty = sized::<Standard, 8>(100, 0.01, 1).to_bloom().unwrap();
    assert!(empty.is_empty() && empty.set_bits() == 0);
}

fn union_and_intersect<L: Layout>() {
    let mut a = sized::<L, 4>(10_000, 0.01, 41);
    let mut b = sized::<L, 4>(10_000, 0.01, 41);
    a.extend(0..6_000u64);
    a.extend(0..1_000u64); // two copies of 0..1000 in a
    b.extend(4_000..10_000u64);
    let (a0, b0) = (a.clone(), b.clone());

    // Union: the multiset sum.
    let mut union = a.clone();
    union.union(&b).unwrap();
    assert_eq!(union.len(), a.len() + b.len());
    assert!(union.contains_many(0..10_000u64).iter().all(|&hit| hit));
    assert!((4_000..6_000u64).all(|key| union.count(&key) >= 2));
    assert!((0..1_000u64).all(|key| union.count(&key) >= 2));
    // Removing b's keys from the sum gives back a exactly.
    assert_eq!(union.remove_many(4_000..10_000u64), 6_000);
    assert_eq!(union, a);

    // Intersect: the keys of both stay, len bounds what is held.
    let mut both = a.clone();
    both.intersect(&b).unwrap();
    assert!(both.contains_many(4_000..6_000u64).iter().all(|&hit| hit));
    assert!(both.len() <= a.len().min(b.len()));
    assert!(both.len() >= 2_000);
    // Keys of only one side are mostly gone: the FPP is at most either's.
    let kept = (0..4_000u64).filter(|key| both.contains(key)).count();
    assert!(kept < 400, "{kept}");
    // With itself: unchanged.
    let mut same = a.clone();
    same.intersect(&a).unwrap();
    assert_eq!(same, a);
    assert_eq!((a, b), (a0, b0));
}

#[test]
fn union_is_a_multiset_sum_and_intersect_keeps_common_keys() {
    union_and_intersect::<Standard>();
    union_and_intersect::<Blocked>();
}

#[test]
fn merges_refuse_other_configurations_unchanged() {
    let mut a = sized::<Standard, 4>(1000, 0.01, 1);
    a.insert("x");
    let other_hashes = CountingBloomFilter::with_counters(a.num_counters())
        .hashes(a.num_hashes() + 1)
        .seed(1)
        .build()
        .unwrap();
    let others = [
        sized::<Standard, 4>(1000, 0.01, 2),
        sized::<Standard, 4>(1000, 0.001, 1),
        sized::<Standard, 4>(2000, 0.01, 1),
        other_hashes,
    ];
    check_merges_refuse(&a, &others);
}

/// `count` bounds a key's multiplicity from above; saturated counters
/// count "at least the maximum".
#[test]
fn count_is_at_least_the_multiplicity() {
    fn check<L: Layout, const BITS: u32>() {
        let mut filter = sized::<L, BITS>(2_000, 0.01, 51);
        for key in 0..1_000u64 {
            for _ in 0..=key % 20 {
                filter.insert(&key);
            }
        }
        let max = filter.counter_max();
        for key in 0..1_000u64 {
            let copies = (key % 20 + 1) as u32;
            let count = filter.count(&key);
            assert!(count >= copies.min(max), "{key}: {count} < {copies}");
            if copies >= max {
                assert_eq!(count, max);
            }
        }
        assert_eq!(filter.count(&u64::MAX), 0, "an absent key");
        // Exact where no other key shares a counter: most keys.
        let exact = (0..1_000u64)
            .filter(|&key| filter.count(&key) == ((key % 20 + 1) as u32).min(max))
            .count();
        assert!(exact > 800, "{exact}");
    }
    check::<Standard, 4>();
    check::<Standard, 8>();
    check::<Blocked, 4>();
    check::<Blocked, 16>();
}

#[test]
fn removals_that_cannot_succeed_change_nothing() {
    fn check<L: Layout>() {
        let mut filter = sized::<L, 4>(1000, 0.01, 61);
        let empty = filter.clone();
        assert!(!filter.remove(&7u64), "removing from an empty filter");
        assert!(matches!(filter.remove_hash(12345), Ok(false)));
        assert_eq!(filter.remove_hashes(&[1, 2, 3]), 0);
        assert_eq!(filter, empty);
        filter.extend(0..500u64);
        let full = filter.clone();
        let absent: Vec<u64> = (1_000_000..1_010_000u64)
            .filter(|key| !filter.contains(key))
            .collect();
        assert!(absent.len() > 9_800);
        assert_eq!(filter.remove_many(&absent), 0);
        assert_eq!(filter, full);
    }
    check::<Standard>();
    check::<Blocked>();
}

/// A never-inserted key whose probes hit one counter twice can test
/// positive in the standard layout while that counter holds 1: its removal
/// must stop at zero and put back what it took, leaving the filter exactly
/// as it was. In the blocked layout a key adds and takes one per distinct
/// counter, so every key that tests positive can be removed.
#[test]
fn a_removal_that_would_go_below_zero_is_undone() {
    fn removals<L: Layout>() -> (u32, u32) {
        let (mut undone, mut done) = (0, 0);
        for seed in 0..400u64 {
            // 128 counters and 12 probes: repeated probes are common.
            let mut filter = CountingBloomBuilder::<L, 4>::with_counters(128)
                .hashes(12)
                .seed(seed)
                .build()
                .unwrap();
            filter.extend((0..12u64).map(|i| insert_key(seed, i)));
            for i in 0..200 {
                let key = query_key(seed, i);
                if !filter.contains(&key) {
                    continue;
                }
                let before = filter.clone();
                if filter.remove(&key) {
                    done += 1;
                } else {
                    assert_eq!(filter, before, "seed {seed} key {i}");
                    undone += 1;
                }
                filter = before;
            }
        }
        (undone, done)
    }
    let (undone, done) = removals::<Standard>();
    println!("standard: {undone} removals undone, {done} done");
    assert!(undone >= 10 && done >= 10, "{undone} {done}");
    let (undone, done) = removals::<Blocked>();
    println!("blocked: {undone} removals undone, {done} done");
    assert!(undone == 0 && done >= 10, "{undone} {done}");
}

#[test]
fn sizing_costs_four_bits_per_bloom_bit() {
    let sizing = CountingBloomFilter::params(1_000_000, 0.01).unwrap();
    assert_eq!(sizing.num_hashes, 7);
    assert_eq!(sizing.counter_bits, 4);
    assert!(sizing.fpp_at_capacity <= 0.01);
    assert_eq!(sizing.num_counters % 128, 0);
    assert!(sizing.num_counters as f64 <= sizing.requested_counters * 1.01);
    let smaller = sizing.num_counters - 128;
    assert!((6..=8).all(|k| bloom_fpp_exact(smaller, k, 1_000_000).unwrap() > 0.01));
    assert_eq!(sizing.bits_per_item(), 4.0 * sizing.bloom_bits_per_item());
    let bloom = filterlab_counting_bloom::BloomFilter::params(1_000_000, 0.01).unwrap();
    assert!(sizing.bloom_bits_per_item() <= bloom.bits_per_item() * 1.001);
    let report = sizing.to_string();
    for needle in [
        "CountingBloomFilter sizing (4-bit counters)",
        "expected items",
        "counters allocated",
        "memory",
        "hashes (k)",
        "FPP at capacity",
        "counter overflow",
        "Fan et al.",
        "hash bits",
    ] {
        assert!(report.contains(needle), "missing {needle:?} in\n{report}");
    }
    println!("{report}");
}

#[test]
fn blocked_sizing_pays_for_small_blocks() {
    for (bits, overhead_range) in [(4u32, 0.10..0.17), (8, 0.2..0.35), (16, 0.4..0.7)] {
        let sizing = match bits {
            4 => BlockedCountingBloomFilter::params(1_000_000, 0.01).unwrap(),
            8 => CountingBloomBuilder::<Blocked, 8>::with_fpp(0.01)
                .expected_items(1_000_000)
                .sizing()
                .unwrap(),
            _ => CountingBloomBuilder::<Blocked, 16>::with_fpp(0.01)
                .expected_items(1_000_000)
                .sizing()
                .unwrap(),
        };
        assert!(sizing.fpp_at_capacity <= 0.01);
        assert_eq!(sizing.block_counters, Some(512 / bits));
        assert!(matches!(sizing.hash_choice, HashChoice::Blocked { .. }));
        let overhead = sizing.num_counters as f64 / bloom_optimal_bits(1_000_000, 0.01) - 1.0;
        println!("{bits}-bit blocked: {overhead:.3} more counters than standard\n{sizing}");
        assert!(overhead_range.contains(&overhead), "{overhead} {sizing:?}");
    }
}

#[test]
fn explicit_sizes() {
    let filter = CountingBloomFilter::with_counters(1000)
        .hashes(3)
        .build()
        .unwrap();
    assert_eq!(filter.num_counters(), 1000);
    assert_eq!(filter.memory_usage(), 512); // 8 blocks of 128 counters
    let blocked = BlockedCountingBloomFilter::with_counters(1000)
        .hashes(3)
        .build()
        .unwrap();
    assert_eq!(blocked.num_counters(), 1024);
    let sized = CountingBloomFilter::with_counters(96_000)
        .expected_items(10_000)
        .sizing()
        .unwrap();
    assert_eq!(sized.num_hashes, 7);
    assert!(sized.target_fpp.is_none());
    // Without a load, the one k = 7 is optimal for.
    let implied = CountingBloomFilter::with_counters(96_000)
        .hashes(7)
        .sizing()
        .unwrap();
    let optimal_load = (96_000.0 * std::f64::consts::LN_2 / 7.0).round() as u64;
    assert_eq!(implied.expected_items, optimal_load);
}

#[test]
fn bad_parameters_are_typed_errors() {
    fn check<L: Layout>() {
        let invalid = ErrorKind::InvalidParameter;
        let builder = CountingBloomBuilder::<L, 4>::with_fpp;
        check_invalid_fpps(|fpp| builder(fpp).expected_items(1000).build());
        let counters = CountingBloomBuilder::<L, 4>::with_counters;
        for case in [
            builder(0.01),
            builder(0.01).expected_items(0),
            builder(0.01).expected_items(1000).hashes(0),
            builder(0.01).expected_items(1000).hashes(65),
            // A bad k is refused as such, before the size it would need.
            builder(0.01)
                .expected_items(1_000_000)
                .max_memory(1 << 20)
                .hashes(65),
            counters(0).hashes(3),
            counters(100),
            counters(100).hashes(0),
            counters(100).hashes(65),
            counters(100).expected_items(0),
        ] {
            expect_error(case.build(), invalid, &case);
        }
        let too_large = ErrorKind::TooLarge;
        for case in [
            builder(1e-300).expected_items(u64::MAX),
            builder(0.5).expected_items(u64::MAX),
            builder(0.01).expected_items(1_000_000).max_memory(1 << 20),
            counters(u64::MAX).hashes(3),
            counters(1 << 24).hashes(3).max_memory((1 << 23) - 1),
        ] {
            expect_error(case.build(), too_large, &case);
        }
        assert!(
            counters(1 << 24)
                .hashes(3)
                .max_memory(1 << 23)
                .build()
                .is_ok()
        );
        // No cap at all: still a typed error, not an overflow.
        let uncapped = builder(1e-300)
            .expected_items(u64::MAX)
            .max_memory(u64::MAX);
        assert_eq!(uncapped.sizing().unwrap_err().kind(), too_large);
    }
    check::<Standard>();
    check::<Blocked>();
    assert_eq!(
        CountingBloomFilter::params(0, 0.01).unwrap_err().kind(),
        ErrorKind::InvalidParameter
    );
}

#[test]
fn memory_and_estimates() {
    let mut filter = sized::<Blocked, 4>(10_000, 0.01, 71);
    assert_eq!(filter.memory_usage() % 64, 0);
    assert_eq!(filter.memory_usage() as u64 * 2, filter.num_counters());
    assert_eq!(filter.expected_fpp(), 0.0);
    filter.extend((0..10_000u64).map(|i| insert_key(71, i)));
    let expected = filter.expected_fpp();
    let theory = filter.theoretical_fpp(10_000).unwrap();
    assert!(
        (expected / theory - 1.0).abs() < 0.15,
        "{expected} vs {theory}"
    );
    assert!(filter.fill_ratio() > 0.3 && filter.fill_ratio() < 0.6);
    assert_eq!(filter.counter_bits(), 4);
    assert_eq!(filter.saturated_counters(), 0);
}

/// Batched operations (prefetching on arrays of a few MiB) answer exactly
/// as one-by-one ones: the same counts, lookups and final filter.
#[test]
fn batches_agree_with_single_operations() {
    fn check<L: Layout>() {
        // 2^23 4-bit counters = 4 MiB: above the size where batches prefetch.
        let mut batched = CountingBloomBuilder::<L, 4>::with_counters(1 << 23)
            .hashes(6)
            .seed(81)
            .build()
            .unwrap();
        let mut single = batched.clone();
        let keys: Vec<u64> = (0..200_000).map(|i| insert_key(81, i % 150_000)).collect();
        let new = keys.iter().filter(|key| single.insert(*key)).count();
        assert_eq!(batched.insert_many(&keys), new);
        assert_eq!(batched, single);
        let probes: Vec<u64> = (0..200_000).map(|i| query_key(81, i)).collect();
        let one_by_one: Vec<bool> = probes.iter().map(|key| single.contains(key)).collect();
        assert_eq!(batched.contains_many(&probes), one_by_one);
        assert!(batched.contains_many(&keys).iter().all(|&hit| hit));
        let mixed: Vec<u64> = keys[..50_000]
            .iter()
            .chain(&probes[..50_000])
            .copied()
            .collect();
        let removed = mixed.iter().filter(|key| single.remove(*key)).count();
        assert_eq!(batched.remove_many(&mixed), removed);
        assert_eq!(batched, single);
    }
    check::<Standard>();
    check::<Blocked>();
}
