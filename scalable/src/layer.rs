//! What a scalable filter needs of its layers, for the two Bloom filters of
//! filterlab-bloom.

use std::fmt;

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, BloomSizing};
use filterlab_core::theory::bloom_fpp_exact;
use filterlab_core::{Error, Filter, KeyHasher, Persist};

/// The layer type of `ScalableBloomFilter` unless chosen otherwise.
///
/// `BlockedBloomFilter`: measured by `examples/scalable_speed.rs` after growing
/// 100× at P = 1e-2 (see the crate README), it answers lookups 1.4×
/// (positive, one by one) to 2.9× (negative, batched) faster than standard
/// layers for 9% more memory, at the same measured FPP.
pub type DefaultLayer = BlockedBloomFilter;

mod sealed {
    pub trait Sealed {}
    impl Sealed for filterlab_bloom::BloomFilter {}
    impl Sealed for filterlab_bloom::BlockedBloomFilter {}
}

/// A Bloom filter a `ScalableBloomFilter` can
/// stack: [`BloomFilter`] (fewest bits) or [`BlockedBloomFilter`] (one cache
/// line per lookup).
///
/// A layer is sized for a capacity and an FPP target with its own exact
/// formula, answers [`Filter`] queries on the scalable filter's key hash, and
/// is written in its own format inside the scalable filter's. The trait is
/// sealed: the two types above are the layers this crate is tested with.
pub trait Layer: Filter + Persist + Clone + PartialEq + fmt::Debug + sealed::Sealed {
    /// The type's name in reports, e.g. "BloomFilter".
    const NAME: &'static str;

    /// The layer for `capacity` keys at FPP `fpp`, sized without allocating.
    ///
    /// # Errors
    ///
    /// Those of the layer's builder: [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter),
    /// [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge) over `max_memory` bytes.
    fn sizing(capacity: u64, fpp: f64, max_memory: u64) -> Result<BloomSizing, Error>;

    /// Allocates an empty layer for `capacity` keys at FPP `fpp`.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing); [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge)
    /// when the allocator refuses.
    fn build(capacity: u64, fpp: f64, hasher: KeyHasher, max_memory: u64) -> Result<Self, Error>;

    /// The exact FPP of a layer of this sizing after `items` distinct keys.
    ///
    /// # Errors
    ///
    /// Those of the exact formula.
    fn fpp_of(sizing: &BloomSizing, items: u64) -> Result<f64, Error>;

    /// Bits in the layer's array.
    fn num_bits(&self) -> u64;

    /// Probes per key.
    fn num_hashes(&self) -> u32;

    /// Bits currently set.
    fn set_bits(&self) -> u64;

    /// The FPP target the layer was sized for.
    fn target_fpp(&self) -> Option<f64>;
}

/// Implements [`Layer`] for a filterlab-bloom filter whose builder, sizing
/// record and accessors have the same names (they share one builder base).
macro_rules! bloom_layer {
    ($filter:ident, $fpp_of:expr) => {
        impl Layer for $filter {
            const NAME: &'static str = stringify!($filter);

            fn sizing(capacity: u64, fpp: f64, max_memory: u64) -> Result<BloomSizing, Error> {
                $filter::with_fpp(fpp)
                    .expected_items(capacity)
                    .max_memory(max_memory)
                    .sizing()
            }

            fn build(
                capacity: u64,
                fpp: f64,
                hasher: KeyHasher,
                max_memory: u64,
            ) -> Result<Self, Error> {
                $filter::with_fpp(fpp)
                    .expected_items(capacity)
                    .hasher(hasher)
                    .max_memory(max_memory)
                    .build()
            }

            fn fpp_of(sizing: &BloomSizing, items: u64) -> Result<f64, Error> {
                let fpp_of: fn(&BloomSizing, u64) -> Result<f64, Error> = $fpp_of;
                fpp_of(sizing, items)
            }

            fn num_bits(&self) -> u64 {
                $filter::num_bits(self)
            }

            fn num_hashes(&self) -> u32 {
                $filter::num_hashes(self)
            }

            fn set_bits(&self) -> u64 {
                $filter::set_bits(self)
            }

            fn target_fpp(&self) -> Option<f64> {
                $filter::target_fpp(self)
            }
        }
    };
}

bloom_layer!(BloomFilter, |sizing, items| bloom_fpp_exact(
    sizing.num_bits,
    sizing.num_hashes,
    items
));
bloom_layer!(BlockedBloomFilter, BlockedBloomFilter::sizing_fpp);
