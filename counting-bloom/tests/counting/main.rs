//! Integration tests of filterlab-counting-bloom: the conformance suite for
//! both layouts and every width, a multiset oracle, accuracy against the
//! exact theory (before and after deletes), saturation, the equivalent Bloom
//! filter, merges, bad input and the on-disk format. This file holds the
//! statistical check and the helpers the modules share.

mod accuracy;
mod api;
mod conformance;
mod format;
mod oracle;

use std::fmt::Debug;

use filterlab_core::keys::insert_key;
use filterlab_core::testing::count_false_positives;
use filterlab_core::theory::wilson_interval;
use filterlab_counting_bloom::{Filter, RemovableFilter};

/// Clears `filter` and inserts the `seed`-th stream of `items` keys.
pub(crate) fn fill<F: Filter>(filter: &mut F, seed: u64, items: u64) {
    filter.clear();
    let hasher = *filter.hasher();
    let hashes: Vec<u64> = (0..items)
        .map(|i| hasher.hash(&insert_key(seed, i)))
        .collect();
    filter
        .insert_hashes(&hashes)
        .expect("a counting Bloom filter never refuses a key");
}

/// Fills `filter` with `items` keys of the `seed`-th stream, then removes
/// the first `removed` of them (checking that each removal succeeds).
pub(crate) fn fill_then_remove<F: RemovableFilter>(
    filter: &mut F,
    seed: u64,
    items: u64,
    removed: u64,
) {
    fill(filter, seed, items);
    let hasher = *filter.hasher();
    for i in 0..removed {
        let removed = filter.remove_hash(hasher.hash(&insert_key(seed, i)));
        assert!(matches!(removed, Ok(true)), "removing inserted key {i}");
    }
}

/// Measures the FPP of independently keyed instances of one configuration,
/// each loaded by `load(filter, seed)` so that it holds `held` keys, over
/// about `hits / FPP` queries, and checks it against the filter's exact
/// theory for `held` keys.
///
/// The Wilson interval (99.9%) covers query sampling; the number of
/// instances makes the variation between filters small beside it (about
/// 4e5 keys held in all). The mean FPP conditional on each instance's
/// counters ([`Filter::expected_fpp`], exact for an instance) is checked
/// against the same interval. With a `target`, the sizing must meet it and
/// the measurement must not exceed it beyond the interval.
pub(crate) fn check_fpp_against_theory<F: Filter + Debug>(
    filter: &mut F,
    held: u64,
    target: Option<f64>,
    seed: u64,
    hits: f64,
    load: impl Fn(&mut F, u64),
) {
    let exact = filter
        .theoretical_fpp(held)
        .expect("a counting Bloom filter has an exact formula");
    let instances = (400_000 / held).max(1);
    let queries_each = ((hits / exact) as u64).div_ceil(instances);
    let (mut false_positives, mut conditional) = (0, 0.0);
    for instance in 0..instances {
        let instance_seed = seed ^ (instance << 32);
        load(filter, instance_seed);
        assert_eq!(filter.len() as u64, held);
        conditional += filter.expected_fpp();
        false_positives += count_false_positives(filter, instance_seed, queries_each);
    }
    let queries = instances * queries_each;
    let conditional = conditional / instances as f64;
    let empirical = false_positives as f64 / queries as f64;
    let (low, high) = wilson_interval(false_positives, queries, 0.999);
    let context = format!(
        "held={held} p={target:?} {filter:?} instances={instances}: empirical {empirical:.4e} \
         in [{low:.4e}, {high:.4e}], exact {exact:.4e}, conditional {conditional:.4e}"
    );
    println!("{context}");
    assert!(
        low <= exact && exact <= high,
        "exact theory outside the interval: {context}"
    );
    assert!(
        low <= conditional && conditional <= high,
        "FPP given the counters outside the interval: {context}"
    );
    if let Some(target) = target {
        assert!(
            low <= target,
            "empirical FPP above the target beyond the interval: {context}"
        );
        assert!(
            exact <= target,
            "sizing does not meet the target: {context}"
        );
    }
}

/// The mean of `samples` and the half-width of its 99.9% two-sided
/// interval (normal, from the sample variance).
pub(crate) fn mean_and_half_width(samples: &[f64]) -> (f64, f64) {
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 3.2905 * (variance / n).sqrt())
}
