//! Integration tests of filterlab-static: the conformance suite of both
//! filters (`contract`), their FPP against the exact theory and their
//! space (`accuracy`), builds at and around every size boundary
//! (`boundaries`), and the format, its golden files and the views
//! (`format`).

mod accuracy;
mod boundaries;
mod contract;
mod format;

use filterlab_core::keys::insert_key;
use filterlab_static::{
    BinaryFuseFilter, BuildFromKeys, Fingerprint, Membership, Persist, RibbonFilter,
};

/// The `seed`-th stream of `count` distinct keys.
pub(crate) fn keys(seed: u64, count: u64) -> Vec<u64> {
    (0..count).map(|i| insert_key(seed, i)).collect()
}

/// A Ribbon filter at `fpp` of the `seed`-th stream of `count` keys.
pub(crate) fn ribbon(fpp: f64, seed: u64, count: u64) -> RibbonFilter {
    RibbonFilter::with_fpp(fpp)
        .seed(seed)
        .build(keys(seed, count))
        .unwrap()
}

/// A binary fuse filter of the `seed`-th stream of `count` keys.
pub(crate) fn fuse<F: Fingerprint, const ARITY: usize>(
    seed: u64,
    count: u64,
) -> BinaryFuseFilter<F, ARITY> {
    BinaryFuseFilter::<F, ARITY>::builder()
        .seed(seed)
        .build(keys(seed, count))
        .unwrap()
}

/// Builds the filter of `keys` with `builder` and checks what every build
/// promises: every key found (one at a time, batched, and through a view of
/// its bytes), `len` the distinct keys, and a round trip through the format.
pub(crate) fn check_build<B>(builder: &B, keys: &[u64]) -> B::Filter
where
    B: BuildFromKeys,
    B::Filter: filterlab_core::view::Viewable + PartialEq + std::fmt::Debug,
{
    use filterlab_core::view::{Checksum, Viewable};
    let built = builder.build_from_keys(keys).unwrap();
    let filter = built.filter;
    let distinct: std::collections::HashSet<&u64> = keys.iter().collect();
    assert_eq!(filter.len(), distinct.len(), "{filter:?}");
    assert!(keys.iter().all(|key| filter.contains(key)), "{filter:?}");
    assert!(
        filter.contains_many(keys).iter().all(|&hit| hit),
        "{filter:?}"
    );
    let bytes = filter.to_bytes();
    assert_eq!(B::Filter::from_bytes(&bytes).unwrap(), filter);
    let view = B::Filter::view(&bytes, Checksum::Verify).unwrap();
    assert!(
        keys.iter()
            .all(|key| view.contains_hash(builder.hasher().hash(key)))
    );
    filter
}
