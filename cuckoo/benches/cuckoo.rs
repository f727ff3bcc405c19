//! A cuckoo filter of 12-bit fingerprints in 4-slot buckets filled to 95%
//! (10^6 keys): inserts up to that load, lookups (half of the keys held)
//! one by one and batched, and removals.
//!
//! `cargo bench -p filterlab-cuckoo`, or filtered, e.g. `-- remove`.
//! (Comparisons with other crates' cuckoo and quotient filters live in the
//! repository's unpublished `filterlab-peers` crate.)

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_cuckoo::CuckooFilter;

const ITEMS: u64 = 1_000_000;

fn cuckoo(c: &mut Criterion) {
    let buckets = (ITEMS as f64 / (4.0 * 0.95)).ceil() as u64;
    let empty = CuckooFilter::with_buckets(buckets)
        .fingerprint_bits(12)
        .expected_items(ITEMS)
        .build()
        .expect("a valid configuration");
    let keys: Vec<u64> = (0..ITEMS).map(|i| insert_key(5, i)).collect();
    let absent: Vec<u64> = (0..ITEMS).map(|i| query_key(5, i)).collect();
    let mut full = empty.clone();
    full.insert_many(keys.iter()).expect("95% load fits");

    let mut group = c.benchmark_group("cuckoo 12-bit, 95% load");
    group.throughput(Throughput::Elements(ITEMS));
    group.bench_function("insert to 95%", |b| {
        let fill = |filter: &mut CuckooFilter| keys.iter().map(|key| filter.insert(key)).count();
        b.iter_batched_ref(|| empty.clone(), fill, BatchSize::LargeInput);
    });
    // Held and never-inserted keys alternate: both buckets are read for
    // the absent ones, often only the first for the held ones.
    let mixed: Vec<u64> = keys
        .iter()
        .zip(&absent)
        .flat_map(|(&a, &b)| [a, b])
        .collect();
    group.bench_function("contains, half held", |b| {
        b.iter(|| mixed.iter().filter(|&key| full.contains(key)).count());
    });
    group.bench_function("contains_many, half held", |b| {
        b.iter(|| black_box(full.contains_many(&mixed)));
    });
    group.bench_function("remove every key", |b| {
        let drain = |filter: &mut CuckooFilter| keys.iter().map(|key| filter.remove(key)).count();
        b.iter_batched_ref(|| full.clone(), drain, BatchSize::LargeInput);
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = cuckoo
}
criterion_main!(benches);
