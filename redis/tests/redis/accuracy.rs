//! The shared filter's FPP against the exact theory of its configuration,
//! its sizing against `BloomFilter`'s, and the cardinality estimate.

use filterlab_core::keys::insert_key;
use filterlab_core::theory::bloom_fpp_exact;
use filterlab_redis::{BloomFilter, RedisBloomFilter};

use crate::{Server, assert_fpp_within, create, false_positives};

/// Inserts `items` seeded keys, queries `queries` never-inserted ones, and
/// checks that the 99.9% Wilson interval of the measured FPP holds the exact
/// theory at that load and the FPP given the fill (from BITCOUNT).
fn check_fpp(server: &Server, items: u64, fpp: f64, queries: u64, seed: u64) {
    let mut filter = create(server, items, fpp, seed);
    let false_positives = false_positives(
        &mut filter,
        (items, queries, seed),
        |filter: &mut RedisBloomFilter, keys| filter.insert_many(keys).unwrap(),
        |filter: &mut RedisBloomFilter, keys| filter.contains_many(keys).unwrap(),
    );
    let exact = bloom_fpp_exact(filter.num_bits(), filter.num_hashes(), items).unwrap();
    let info = filter.info(true).unwrap();
    let conditional = info.fill.unwrap().expected_fpp;
    let what = format!(
        "n={items} p={fpp} m={} k={}",
        filter.num_bits(),
        filter.num_hashes()
    );
    let predictions = [("exact theory", exact), ("FPP given the fill", conditional)];
    assert_fpp_within(false_positives, queries, &what, &predictions);
    assert!(
        exact <= fpp,
        "the sizing misses the target: {what}, exact {exact:.4e}"
    );
    assert_eq!(info.items, filter.len().unwrap());
    filter.delete().unwrap();
}

#[test]
fn fpp_matches_the_exact_theory() {
    let server = server_or_skip!();
    // About 2,000 and 500 false positives expected: ±5% and ±10% intervals.
    check_fpp(&server, 20_000, 0.01, 200_000, 0x5eed_0001);
    check_fpp(&server, 5_000, 0.001, 500_000, 0x5eed_0002);
}

/// The builder sizes exactly as `BloomFilter::params`, so a local filter of
/// the same settings has the same bits and hashes.
#[test]
fn sizing_is_bloom_filters() {
    for (items, fpp) in [(1_000u64, 0.1), (1_000_000, 0.01), (10_000_000, 1e-6)] {
        let bloom = BloomFilter::with_fpp(fpp).expected_items(items);
        let shared = RedisBloomFilter::builder(bloom).sizing().unwrap();
        assert_eq!(shared, BloomFilter::params(items, fpp).unwrap());
    }
}

/// `estimated_len` (BITCOUNT and Swamidass–Baldi) is close to the exact
/// counter; `info` reports BF.INFO's fields.
#[test]
fn estimate_and_info() {
    let server = server_or_skip!();
    let mut filter = create(&server, 50_000, 0.01, 3);
    assert!(filter.is_empty().unwrap());
    assert_eq!(filter.estimated_len().unwrap(), 0.0);
    filter
        .insert_many((0..30_000u64).map(|i| insert_key(3, i)))
        .unwrap();
    let len = filter.len().unwrap();
    let estimate = filter.estimated_len().unwrap();
    // The estimate's relative error is well under 1% at this load.
    assert!(
        (estimate / len as f64 - 1.0).abs() < 0.02,
        "{estimate} vs {len}"
    );
    let info = filter.info(true).unwrap();
    assert_eq!(
        (
            info.capacity,
            info.items,
            info.filters(),
            info.expansion_rate()
        ),
        (50_000, len, 1, None)
    );
    assert_eq!(info.size, filter.num_bits().div_ceil(64) * 8);
    assert_eq!(info.fill.unwrap().set_bits, filter.set_bits().unwrap());
    assert!(info.ttl.is_none());
    assert!(info.to_string().contains("Number of items inserted"));
    filter.delete().unwrap();
}
