//! Integration tests of filterlab-counting-bloom: the conformance suite for
//! both layouts and every width, a multiset oracle, accuracy against the
//! exact theory (before and after deletes), saturation, the equivalent Bloom
//! filter, merges, bad input and the on-disk format. This file holds the
//! helpers the modules share beside core's `testing` checks.

mod accuracy;
mod api;
mod conformance;
mod format;
mod oracle;

use filterlab_core::keys::insert_key;
use filterlab_core::testing::fill;
use filterlab_counting_bloom::RemovableFilter;

/// Fills `filter` with `items` keys of the `seed`-th stream, then removes
/// the first `removed` of them (checking that each removal succeeds and
/// that the filter then holds the rest).
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
    assert_eq!(filter.len() as u64, items - removed);
}

/// The mean of `samples` and the half-width of its 99.9% two-sided
/// interval (normal, from the sample variance).
pub(crate) fn mean_and_half_width(samples: &[f64]) -> (f64, f64) {
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 3.2905 * (variance / n).sqrt())
}
