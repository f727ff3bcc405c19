//! Integration tests of filterlab-scalable: the conformance suite across
//! growth, FPP against the exact compound theory while growing, the format
//! and chunked dump, and bad input.

mod conformance;
mod dump;
mod errors;
mod growth;

use filterlab_core::Membership;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::testing::count_false_positives;
use filterlab_core::theory::wilson_interval;
use filterlab_scalable::{Filter, KeyHasher, Layer, Persist, ScalableBloomFilter};

/// Inserts the `seed`-th stream of keys `from..to` into `filter`, by
/// batches; returns how many were new.
pub(crate) fn insert_range<L: Layer>(
    filter: &mut ScalableBloomFilter<L>,
    seed: u64,
    from: u64,
    to: u64,
) -> usize {
    filter
        .insert_many((from..to).map(|i| insert_key(seed, i)))
        .expect("a scaling filter under its caps never refuses a key")
}

/// One measurement of a growing filter at a checkpoint.
#[derive(Debug)]
pub(crate) struct Checkpoint {
    pub(crate) items: u64,
    pub(crate) instances: u64,
    pub(crate) queries: u64,
    pub(crate) false_positives: u64,
    /// The exact compound theory at the instances' counted items, averaged.
    pub(crate) exact: f64,
    /// The FPP given each instance's fill, averaged.
    pub(crate) conditional: f64,
    pub(crate) bound: f64,
    pub(crate) bits_per_item: f64,
    pub(crate) layers: usize,
}

impl Checkpoint {
    pub(crate) fn measured(&self) -> f64 {
        self.false_positives as f64 / self.queries as f64
    }

    pub(crate) fn interval(&self) -> (f64, f64) {
        wilson_interval(self.false_positives, self.queries, 0.999)
    }
}

/// Grows `instances` filters made by `make` (seeds `seed..seed + instances`)
/// to `items` keys each and queries each with `queries / instances`
/// never-inserted keys. Pooling instances averages out the variation
/// between small filters, which the Wilson interval (query sampling only)
/// does not cover.
pub(crate) fn measure<L: Layer>(
    make: impl Fn(u64) -> ScalableBloomFilter<L>,
    items: u64,
    instances: u64,
    queries: u64,
    seed: u64,
) -> Checkpoint {
    let queries_each = queries.div_ceil(instances);
    let mut point = Checkpoint {
        items,
        instances,
        queries: queries_each * instances,
        false_positives: 0,
        exact: 0.0,
        conditional: 0.0,
        bound: 0.0,
        bits_per_item: 0.0,
        layers: 0,
    };
    // The exact theory at each instance's count (instances differ only by
    // the few keys they swallowed as false positives), each count once.
    let mut theory = std::collections::HashMap::new();
    for instance in 0..instances {
        let instance_seed = seed + instance;
        let mut filter = make(instance_seed);
        insert_range(&mut filter, instance_seed, 0, items);
        point.exact += *theory.entry(filter.len()).or_insert_with(|| {
            filter
                .theoretical_fpp(filter.len() as u64)
                .expect("a scalable filter has an exact formula")
        });
        point.conditional += filter.expected_fpp();
        point.bound = filter.fpp_bound();
        point.bits_per_item += filter.memory_usage() as f64 * 8.0 / filter.len() as f64;
        point.layers = filter.layers().len();
        point.false_positives += count_false_positives(&filter, instance_seed, queries_each);
    }
    let n = instances as f64;
    point.exact /= n;
    point.conditional /= n;
    point.bits_per_item /= n;
    point
}

/// Keys the golden file holds.
pub(crate) const GOLDEN_KEYS: [&str; 5] = ["alpha", "beta", "gamma", "delta", "epsilon"];

/// Core's golden-file check under both hasher ids
/// ([`filterlab_core::testing::check_golden_hashers`]) with
/// [`GOLDEN_KEYS`], seed 42, and the files `{stem}-v1.bin` (id 1) and
/// `{stem}-v1-hasher2.bin` (id 2) in `tests/golden/`; the id-1 bytes.
pub(crate) fn check_golden<F>(build: impl Fn(KeyHasher) -> F, stem: &str) -> Vec<u8>
where
    F: Filter + Persist + PartialEq + std::fmt::Debug,
{
    let path = |name: String| format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    let (v1, v2) = (
        path(format!("{stem}-v1.bin")),
        path(format!("{stem}-v1-hasher2.bin")),
    );
    filterlab_core::testing::check_golden_hashers(build, 42, &GOLDEN_KEYS, v1, v2)
}

/// A filter at P = 1e-2 with the default layers, `initial` keys in the first
/// layer and the hasher seeded with `seed`, holding the first `items` keys
/// of the `seed`-th stream.
pub(crate) fn grown(initial: u64, seed: u64, items: u64) -> ScalableBloomFilter {
    let mut filter = ScalableBloomFilter::with_fpp(0.01)
        .initial_capacity(initial)
        .seed(seed)
        .build()
        .unwrap();
    insert_range(&mut filter, seed, 0, items);
    filter
}

/// Lookups of never-inserted keys, one by one and batched, agree, and
/// batched lookups of the `inserted` keys of the `seed`-th stream find them
/// all (with layers large enough to be answered by their batched lookups and
/// small ones answered key by key).
pub(crate) fn check_batched_lookups_agree<L: Layer>(
    filter: &ScalableBloomFilter<L>,
    seed: u64,
    inserted: u64,
) {
    let keys: Vec<u64> = (0..inserted).map(|i| insert_key(seed, i)).collect();
    assert!(filter.contains_many(&keys).iter().all(|&hit| hit));
    let probes: Vec<u64> = (0..100_000).map(|i| query_key(seed, i)).collect();
    let batched = filter.contains_many(&probes);
    let single: Vec<bool> = probes.iter().map(|key| filter.contains(key)).collect();
    assert_eq!(batched, single);
}
