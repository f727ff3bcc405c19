//! Statistical checks of a filter against its own exact theory, written
//! once for every filter's tests: seeded key streams, many independently
//! keyed instances, and a Wilson interval with a stated confidence; they
//! assert that theory lies inside the interval, never that a number is
//! "small".

use std::fmt::Debug;

use crate::keys::{insert_key, query_key};
use crate::theory::wilson_interval;
use crate::{Filter, Membership};

/// Counts the false positives of `filter` over `queries` never-inserted keys
/// of the seeded stream [`query_key`], hashed with
/// the filter's hasher.
pub fn count_false_positives<F: Membership + ?Sized>(filter: &F, seed: u64, queries: u64) -> u64 {
    let hasher = *filter.hasher();
    let mut hashes = Vec::with_capacity(1024);
    let mut found = vec![false; 1024];
    let mut positives = 0;
    let mut next = 0;
    while next < queries {
        let batch = (queries - next).min(1024);
        hashes.clear();
        hashes.extend((next..next + batch).map(|i| hasher.hash(&query_key(seed, i))));
        filter.contains_hashes(&hashes, &mut found[..batch as usize]);
        positives += found[..batch as usize].iter().filter(|&&hit| hit).count() as u64;
        next += batch;
    }
    positives
}

/// Clears `filter` and inserts the `seed`-th stream of `items` keys
/// ([`insert_key`]) as one batch.
///
/// # Panics
///
/// When the filter refuses a key: the checks that fill filters size them
/// for the keys they insert.
pub fn fill<F: Filter + ?Sized>(filter: &mut F, seed: u64, items: u64) {
    filter.clear();
    let hasher = *filter.hasher();
    let hashes: Vec<u64> = (0..items)
        .map(|i| hasher.hash(&insert_key(seed, i)))
        .collect();
    if let Err(err) = filter.insert_hashes(&hashes) {
        panic!("filling with {items} keys: {err}");
    }
}

/// The mean FPP of `instances` independently keyed fillings of `filter`
/// with `items` keys (seeds `seed..seed + instances`), 64 never-inserted
/// queries apiece, and the half-width of its 99.9% two-sided interval
/// (normal, from the sample variance): for small filters, whose FPP varies
/// between instances more than one instance's queries can resolve.
pub fn mean_fpp_over_instances<F: Filter + ?Sized>(
    filter: &mut F,
    seed: u64,
    items: u64,
    instances: u64,
) -> (f64, f64) {
    let queries_each = 64;
    let (mut sum, mut sum_squares) = (0.0, 0.0);
    for instance in 0..instances {
        let instance_seed = seed + instance;
        fill(filter, instance_seed, items);
        let rate =
            count_false_positives(filter, instance_seed, queries_each) as f64 / queries_each as f64;
        sum += rate;
        sum_squares += rate * rate;
    }
    let n = instances as f64;
    let mean = sum / n;
    let standard_error = ((sum_squares / n - mean * mean) / (n - 1.0)).sqrt();
    (mean, 3.2905 * standard_error)
}

/// Measures the FPP of `filter` filled with `items` keys, over about 1000
/// false positives, and checks it against the filter's exact theory (see
/// [`check_fpp_against_theory_after`]).
///
/// # Panics
///
/// When the theory, or the FPP given each instance's fill, lies outside the
/// 99.9% interval of the measurement; with a `target`, when the sizing does
/// not meet it or the measurement exceeds it beyond the interval.
pub fn check_fpp_against_theory<F: Filter + Debug + ?Sized>(
    filter: &mut F,
    items: u64,
    target: Option<f64>,
    seed: u64,
) {
    let load = |filter: &mut F, seed: u64| fill(filter, seed, items);
    check_fpp_against_theory_after(filter, load, items, target, seed, 1000.0);
}

/// Measures the FPP of independently keyed instances of `filter`, each
/// loaded by `load(filter, seed)` so that it holds `held` keys, over about
/// `hits / FPP` queries, and checks it against the filter's exact theory
/// ([`Membership::theoretical_fpp`]) for `held` keys. For a filter built
/// from a key set, `load` builds it from the `seed`-th stream of keys.
///
/// The Wilson interval (99.9%) covers query sampling only, so the number of
/// instances is chosen to make the variation between filters negligible
/// beside it (about 4e5 keys held in all); the mean FPP conditional on each
/// instance's fill ([`Membership::expected_fpp`], exact for an instance) is
/// checked against the same interval.
///
/// # Panics
///
/// As [`check_fpp_against_theory`]; when the filter has no exact formula.
pub fn check_fpp_against_theory_after<F: Membership + Debug + ?Sized>(
    filter: &mut F,
    load: impl Fn(&mut F, u64),
    held: u64,
    target: Option<f64>,
    seed: u64,
    hits: f64,
) {
    let exact = filter
        .theoretical_fpp(held)
        .expect("the filter has an exact formula");
    let instances = (400_000 / held).max(1);
    let queries_each = ((hits / exact) as u64).div_ceil(instances);
    let (mut false_positives, mut conditional) = (0, 0.0);
    for instance in 0..instances {
        let instance_seed = seed ^ (instance << 32);
        load(filter, instance_seed);
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
        "FPP given the fill outside the interval: {context}"
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
