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
