//! The key hashes on structured integer keys: filled with sequential keys,
//! keys one bit apart from the ones looked up, keys in the high bits only,
//! strided keys and random ones, each filter's measured FPP holds its exact
//! theory (the block-load and bit-fill variance of random placement
//! included) and its FPP given the fill, under hasher id 2 (XXH3) and id 3
//! (the folded multiply, the default).
//!
//! The checks fail for a weaker hash: with one folded multiply instead of
//! two, sequential keys spread over a blocked filter's blocks more evenly
//! than random keys (measured FPP 0.89× its theory), a split-block filter's
//! 0.72×, and a standard filter's FPP rises 1.06–1.19× where keys differ in
//! one bit.

use filterlab_bloom::{
    BlockedBloomFilter, BloomFilter, Filter, HashAlgorithm, KeyHasher, SplitBlockBloomFilter,
};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::theory::wilson_interval;

/// Keys inserted per filter, at p = 1%.
const ITEMS: u64 = 100_000;

/// Never-inserted keys looked up per filter: about 4000 false positives,
/// a ±6% interval at the confidence below.
const QUERIES: u64 = 400_000;

/// Checks in this file (filters × key sets × hashers); each interval is
/// at confidence 1 − 10⁻³ / CHECKS (Bonferroni), 99.9% for the file.
const CHECKS: u64 = 3 * 7 * 2;

/// A structured key set: the i-th key inserted and the i-th looked up,
/// never one of the inserted.
struct KeySet {
    name: &'static str,
    inserted: fn(u64) -> u64,
    queried: fn(u64) -> u64,
}

const KEY_SETS: [KeySet; 7] = [
    KeySet {
        name: "sequential",
        inserted: |i| i,
        queried: |i| ITEMS + i,
    },
    KeySet {
        name: "one bit apart (bit 0)",
        inserted: |i| 2 * i,
        queried: |i| 2 * i + 1,
    },
    KeySet {
        name: "one bit apart (bit 40)",
        inserted: |i| i,
        queried: |i| i ^ 1 << 40,
    },
    KeySet {
        name: "one bit apart (bit 63)",
        inserted: |i| i,
        queried: |i| i | 1 << 63,
    },
    KeySet {
        name: "high 32 bits only",
        inserted: |i| i << 32,
        queried: |i| (ITEMS + i) << 32,
    },
    KeySet {
        name: "stride 4096",
        inserted: |i| i * 4096,
        queried: |i| (ITEMS + i) * 4096,
    },
    KeySet {
        name: "random",
        inserted: |i| insert_key(3, i),
        queried: |i| query_key(3, i),
    },
];

/// Fills `filter` (empty, sized for [`ITEMS`] keys at 1%) with the key
/// set's keys through its typed insert, and checks the FPP measured over
/// [`QUERIES`] never-inserted keys against the exact theory and the FPP
/// given the fill.
fn check(filter: &mut dyn Filter, name: &str, keys: &KeySet) {
    let hasher = *filter.hasher();
    for i in 0..ITEMS {
        filter
            .insert_hash(hasher.hash(&(keys.inserted)(i)))
            .unwrap();
    }
    let false_positives = (0..QUERIES)
        .filter(|&i| filter.contains_hash(hasher.hash(&(keys.queried)(i))))
        .count() as u64;
    let exact = filter.theoretical_fpp(ITEMS).unwrap();
    let conditional = filter.expected_fpp();
    let confidence = 1.0 - 1e-3 / CHECKS as f64;
    let (low, high) = wilson_interval(false_positives, QUERIES, confidence);
    let measured = false_positives as f64 / QUERIES as f64;
    let context = format!(
        "{name}, {:?}, {}: measured {measured:.4e} in [{low:.4e}, {high:.4e}], \
         exact {exact:.4e}, given the fill {conditional:.4e}",
        hasher.algorithm(),
        keys.name
    );
    println!("{context}");
    assert!(low <= exact && exact <= high, "theory outside: {context}");
    assert!(
        low <= conditional && conditional <= high,
        "FPP given the fill outside: {context}"
    );
}

/// Every filter of this crate whose FPP has an exact formula, empty, for
/// [`ITEMS`] keys at 1% with `hasher`.
fn filters(hasher: KeyHasher) -> [(&'static str, Box<dyn Filter>); 3] {
    [
        (
            "BloomFilter",
            Box::new(
                BloomFilter::with_fpp(0.01)
                    .expected_items(ITEMS)
                    .hasher(hasher)
                    .build()
                    .unwrap(),
            ),
        ),
        (
            "BlockedBloomFilter",
            Box::new(
                BlockedBloomFilter::with_fpp(0.01)
                    .expected_items(ITEMS)
                    .hasher(hasher)
                    .build()
                    .unwrap(),
            ),
        ),
        (
            "SplitBlockBloomFilter",
            Box::new(
                SplitBlockBloomFilter::with_fpp(0.01)
                    .expected_items(ITEMS)
                    .hasher(hasher)
                    .build()
                    .unwrap(),
            ),
        ),
    ]
}

#[test]
fn structured_integer_keys_meet_the_theory() {
    for algorithm in [HashAlgorithm::Xxh3ByValue, HashAlgorithm::FoldedMultiply] {
        for keys in &KEY_SETS {
            for (name, mut filter) in filters(KeyHasher::with_algorithm(algorithm, 11)) {
                check(filter.as_mut(), name, keys);
            }
        }
    }
}

/// Seeds that differ in one bit give unrelated functions, not one function
/// of XOR-shifted keys: over sequential keys, the hashes under seed 0 and
/// seed 1 share no value (a retry with the next seed meets new collisions).
#[test]
fn neighbouring_seeds_give_unrelated_hashes() {
    let [zero, one] = [0, 1].map(KeyHasher::new);
    let mut under_zero: Vec<u64> = (0..100_000u64).map(|key| zero.hash(&key)).collect();
    under_zero.sort_unstable();
    let shared = (0..100_000u64)
        .filter(|key| under_zero.binary_search(&one.hash(key)).is_ok())
        .count();
    assert_eq!(shared, 0);
}
