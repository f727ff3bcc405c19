//! The shared conformance suite, across growth boundaries and at the caps.

use filterlab_core::testing::Conformance;
use filterlab_scalable::{BloomFilter, Filter, ScalableBloomFilter};

fn growing(seed: u64) -> ScalableBloomFilter {
    // 16 keys in the first layer: the suite's 2,000 keys cross 7 layers.
    ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(16)
        .seed(seed)
        .build()
        .unwrap()
}

#[test]
fn conformance_across_growth() {
    Conformance::new("ScalableBloomFilter", || growing(1))
        .with_variant(|| growing(2))
        .check();
}

#[test]
fn conformance_standard_layers_growth_4() {
    let make = |fpp| {
        move || {
            ScalableBloomFilter::with_fpp(fpp)
                .layers::<BloomFilter>()
                .initial_capacity(10)
                .growth(4)
                .tightening(0.5)
                .build()
                .unwrap()
        }
    };
    Conformance::new("ScalableBloomFilter<BloomFilter>", make(0.01))
        .with_variant(make(0.02))
        .check();
}

/// A non-scaling filter: the suite checks that a refused key is `Full` and
/// leaves the filter unchanged (reached only through duplicates and false
/// positives, as the suite inserts at most the capacity).
#[test]
fn conformance_non_scaling() {
    let make = |capacity| {
        move || {
            ScalableBloomFilter::with_fpp(0.01)
                .initial_capacity(capacity)
                .non_scaling(true)
                .build()
                .unwrap()
        }
    };
    Conformance::new("ScalableBloomFilter(non-scaling)", make(300))
        .with_variant(make(301))
        .check();
}

/// Capped at about 4 layers by memory: the suite's 2,000 keys hit the cap,
/// so refusals (`Full`, filter unchanged; batched inserts stopping at the
/// first refusal) are exercised in every case that inserts enough keys.
#[test]
fn conformance_at_the_memory_cap() {
    let make = |layers| {
        move || {
            ScalableBloomFilter::with_fpp(0.01)
                .initial_capacity(16)
                .max_memory(600)
                .max_layers(layers)
                .build()
                .unwrap()
        }
    };
    let mut filter = make(64)();
    assert!(filter.layers()[0].memory_usage() < 600);
    let refused = (0..2000u64)
        .filter(|key| filter.insert(key).is_err())
        .count();
    assert!(
        refused > 1000 && filter.layers().len() < 6,
        "{}",
        filter.info()
    );
    Conformance::new("ScalableBloomFilter(memory cap)", make(64))
        .with_variant(make(63))
        .check();
}
