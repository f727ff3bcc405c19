//! The conformance suite: the query contract, duplicates, the format and
//! the views, for each filter and each fingerprint width and arity.

use filterlab_core::testing::StaticConformance;
use filterlab_static::{BinaryFuseFilter, RibbonFilter};

#[test]
fn ribbon_conformance() {
    // A power of two (no wide partitions) and a mixed width.
    for fpp in [1.0 / 256.0, 0.01] {
        StaticConformance::new("RibbonFilter", RibbonFilter::with_fpp(fpp).seed(1))
            .with_variant(RibbonFilter::with_fpp(fpp).seed(2))
            .cases(24)
            .check();
    }
}

#[test]
fn binary_fuse_conformance() {
    StaticConformance::new(
        "BinaryFuseFilter<u8>",
        BinaryFuseFilter::<u8>::builder().seed(1),
    )
    .with_variant(BinaryFuseFilter::<u8>::builder().seed(2))
    .cases(24)
    .check();
    StaticConformance::new(
        "BinaryFuseFilter<u16, 4>",
        BinaryFuseFilter::<u16, 4>::builder().seed(1),
    )
    .with_variant(BinaryFuseFilter::<u16, 4>::builder().seed(2))
    .cases(16)
    .check();
    StaticConformance::new(
        "BinaryFuseFilter<u32>",
        BinaryFuseFilter::<u32>::builder().seed(1),
    )
    .cases(16)
    .check();
}

/// Batched lookups answer as one-key ones, for inserted keys and
/// never-inserted ones alike: a binary fuse filter on both sides of the
/// size from which its batch prefetches (1 MiB of fingerprints), a Ribbon
/// filter above its own (64 KiB).
#[test]
fn batched_lookups_agree_with_one_key_ones_below_and_above_prefetching() {
    use filterlab_core::keys::query_key;
    use filterlab_static::Membership;

    fn agree<M: Membership>(filter: &M, inserted: &[u64]) {
        let mut queries = inserted.to_vec();
        queries.extend((0..100_000).map(|i| query_key(9, i)));
        let one_key: Vec<bool> = queries.iter().map(|key| filter.contains(key)).collect();
        assert_eq!(filter.contains_many(&queries), one_key);
    }
    for count in [50_000, 1_000_000] {
        let inserted = crate::keys(3, count);
        let fuse = crate::fuse::<u8, 3>(3, count);
        assert_eq!(fuse.memory_usage() >= 1 << 20, count == 1_000_000);
        agree(&fuse, &inserted);
    }
    let inserted = crate::keys(4, 100_000);
    let ribbon = crate::ribbon(0.01, 4, 100_000);
    assert!(ribbon.memory_usage() >= 1 << 16);
    agree(&ribbon, &inserted);
}

/// Many copies of a few keys: a Ribbon partition then holds far more hashes
/// than the average and is grouped in place, not through its buffer; every
/// key is found, each counted once, and the repeats reported.
#[test]
fn heavy_repeats_are_counted_once() {
    use filterlab_core::BuildFromKeys;
    use filterlab_static::Membership;

    let distinct = crate::keys(11, 3_000);
    let mut keys: Vec<u64> = distinct.clone();
    keys.extend(std::iter::repeat_n(distinct[0], 20_000));
    keys.extend(std::iter::repeat_n(distinct[1], 20_000));
    let built = RibbonFilter::with_fpp(0.01).build_from_keys(&keys).unwrap();
    assert_eq!(built.filter.len(), 3_000);
    assert_eq!(built.report.duplicates, 40_000);
    assert!(distinct.iter().all(|key| built.filter.contains(key)));
    // Its widths and partitions are chosen for the 43,000 hashes given,
    // before the repeats are found; what the FPP is follows from them.
    assert!(built.filter.theoretical_fpp(3_000).unwrap() <= 0.01);
}
