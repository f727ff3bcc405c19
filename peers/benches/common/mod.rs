//! What the benches share: how a filter is sized. (Each bench uses part of
//! it; criterion's settings are `filterlab_peers::bench::run`, shared with
//! the other filter crates' benches.)
#![allow(dead_code)]

use filterlab_bloom::{
    BlockedBloomBuilder, BlockedBloomFilter, BloomBuilder, BloomFilter, Kernel,
    SplitBlockBloomBuilder, SplitBlockBloomFilter,
};

/// How a filter is sized: for a target FPP, or with a fixed number of bits
/// per key (the peers' usual 10, and what sbbf-rs-safe takes).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Size {
    Fpp(f64),
    BitsPerKey(u64),
}

impl Size {
    /// The benchmark id's parameter, e.g. `n=1e7,bits=10`.
    pub(crate) fn label(self, items: u64) -> String {
        match self {
            Self::Fpp(p) => format!("n={items:.0e},p={p:.0e}"),
            Self::BitsPerKey(b) => format!("n={items:.0e},bits={b}"),
        }
    }
}

/// A standard Bloom filter's builder for `items` keys at `size`.
pub(crate) fn bloom(items: u64, size: Size, seed: u64) -> BloomBuilder {
    match size {
        Size::Fpp(p) => BloomFilter::with_fpp(p),
        Size::BitsPerKey(b) => BloomFilter::with_bits(b * items),
    }
    .expected_items(items)
    .seed(seed)
}

/// A blocked Bloom filter's builder for `items` keys at `size`, with `kernel`.
pub(crate) fn blocked(items: u64, size: Size, seed: u64, kernel: Kernel) -> BlockedBloomBuilder {
    match size {
        Size::Fpp(p) => BlockedBloomFilter::with_fpp(p),
        Size::BitsPerKey(b) => BlockedBloomFilter::with_bits(b * items),
    }
    .expected_items(items)
    .seed(seed)
    .kernel(kernel)
}

/// A split-block Bloom filter's builder for `items` keys at `size`, with
/// `kernel`.
pub(crate) fn split_block(
    items: u64,
    size: Size,
    seed: u64,
    kernel: Kernel,
) -> SplitBlockBloomBuilder {
    match size {
        Size::Fpp(p) => SplitBlockBloomFilter::with_fpp(p),
        Size::BitsPerKey(b) => SplitBlockBloomFilter::with_bits(b * items),
    }
    .expected_items(items)
    .seed(seed)
    .kernel(kernel)
}
