//! The shared conformance suite, across growth boundaries and at the caps.

use filterlab_core::testing::Conformance;
use filterlab_scalable::{BloomFilter, ScalableBloomBuilder, ScalableBloomFilter};

/// The builder at P = 1e-2 with `initial` keys in the first layer.
fn builder(initial: u64) -> ScalableBloomBuilder {
    ScalableBloomFilter::with_fpp(0.01).initial_capacity(initial)
}

/// 16 keys in the first layer: the suite's 2,000 keys cross 7 layers.
fn growing(seed: u64) -> ScalableBloomFilter {
    builder(16).seed(seed).build().unwrap()
}

/// As [`growing`], with the first layer at 0.65·P (layout 2).
fn first_share(seed: u64) -> ScalableBloomFilter {
    builder(16)
        .first_layer_share(0.65)
        .seed(seed)
        .build()
        .unwrap()
}

/// A non-scaling filter: the suite checks that a refused key is `Full` and
/// leaves the filter unchanged (reached only through duplicates and false
/// positives, as the suite inserts at most the capacity).
fn non_scaling(capacity: u64) -> ScalableBloomFilter {
    builder(capacity).non_scaling(true).build().unwrap()
}

/// Capped at about 4 layers by memory: the suite's 2,000 keys hit the cap,
/// so refusals (`Full`, filter unchanged; batched inserts stopping at the
/// first refusal) are exercised in every case that inserts enough keys.
fn capped(layers: u64) -> ScalableBloomFilter {
    let layers = u32::try_from(layers).unwrap();
    builder(16)
        .max_memory(600)
        .max_layers(layers)
        .build()
        .unwrap()
}

/// A suite: its name, the filters it builds from a number, that number and
/// the variant's.
type Suite = (&'static str, fn(u64) -> ScalableBloomFilter, u64, u64);

/// The suite across growth, for a non-scaling filter and at the memory cap,
/// each with a variant of another seed, capacity or layer cap.
#[test]
fn conformance_default_layers() {
    let suites: [Suite; 4] = [
        ("ScalableBloomFilter", growing, 1, 2),
        ("ScalableBloomFilter(first share)", first_share, 1, 2),
        ("ScalableBloomFilter(non-scaling)", non_scaling, 300, 301),
        ("ScalableBloomFilter(memory cap)", capped, 64, 63),
    ];
    for (name, make, config, variant) in suites {
        Conformance::varying(name, make, config, variant).check();
    }
}

/// Every state inserts, `clear` and accepted files reach reads back, across
/// layers and at the memory cap.
#[test]
fn reachable_states_persist() {
    // Built once each: a sequence costs less than sizing a filter. Reading
    // a filter of several layers back is the slow step, hence fewer cases
    // for the growing ones.
    let growing = growing(1);
    Conformance::new("ScalableBloomFilter", move || growing.clone())
        .cases(64)
        .check_states();
    let capped = capped(64);
    Conformance::new("ScalableBloomFilter(memory cap)", move || capped.clone())
        .cases(64)
        .check_states();
    let standard = standard_layers(0.01);
    Conformance::new("ScalableBloomFilter<BloomFilter>", move || standard.clone()).check_states();
}

/// The memory cap of [`capped`] is reached within the suite's keys.
#[test]
fn the_memory_cap_is_reached() {
    let mut filter = capped(64);
    assert!(filter.layers()[0].memory_usage() < 600);
    let refused = (0..2000u64)
        .filter(|key| filter.insert(key).is_err())
        .count();
    assert!(
        refused > 1000 && filter.layers().len() < 6,
        "{}",
        filter.info()
    );
}

/// Standard layers from 10 keys, growing ×4 and tightening ×0.5, at `fpp`.
fn standard_layers(fpp: f64) -> ScalableBloomFilter<BloomFilter> {
    ScalableBloomFilter::with_fpp(fpp)
        .layers::<BloomFilter>()
        .initial_capacity(10)
        .growth(4)
        .tightening(0.5)
        .build()
        .unwrap()
}

#[test]
fn conformance_standard_layers_growth_4() {
    Conformance::varying(
        "ScalableBloomFilter<BloomFilter>",
        standard_layers,
        0.01,
        0.02,
    )
    .check();
}
