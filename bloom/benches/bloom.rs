//! Inserts and lookups of this crate's four filters, each sized for 10^6
//! keys at 1%: one key at a time and batched (`insert_many`,
//! `contains_many`). One generic function measures them all through the
//! `Filter` trait.
//!
//! `cargo bench -p filterlab-bloom`, or filtered, e.g. `-- blocked`.
//! (Side-by-side comparisons with other crates' filters live in the
//! repository's unpublished `filterlab-peers` crate.)

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use filterlab_bloom::{
    AtomicBloomFilter, BlockedBloomFilter, BloomFilter, Error, Filter, SplitBlockBloomFilter,
};
use filterlab_core::keys::{insert_key, query_key};

const ITEMS: u64 = 1_000_000;
const FPP: f64 = 0.01;

/// Measures one filter type, given empty, in a group of its own.
fn measure<F: Filter + Extend<u64> + Clone>(
    c: &mut Criterion,
    name: &str,
    empty: Result<F, Error>,
) {
    let empty = empty.expect("a million keys fit the default memory limit");
    let keys: Vec<u64> = (0..ITEMS).map(|i| insert_key(1, i)).collect();
    let absent: Vec<u64> = (0..ITEMS).map(|i| query_key(1, i)).collect();
    let mut full = empty.clone();
    full.extend(keys.iter().copied());

    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(ITEMS));
    group.bench_function("insert one by one", |b| {
        let insert = |filter: &mut F| {
            let hasher = *filter.hasher();
            keys.iter()
                .filter(|&key| filter.insert_hash(hasher.hash(key)).unwrap_or(false))
                .count()
        };
        b.iter_batched_ref(|| empty.clone(), insert, BatchSize::LargeInput);
    });
    group.bench_function("insert batched", |b| {
        let extend = |filter: &mut F| filter.extend(keys.iter().copied());
        b.iter_batched_ref(|| empty.clone(), extend, BatchSize::LargeInput);
    });
    for (kind, queries) in [("present", &keys), ("absent", &absent)] {
        group.bench_function(format!("contains {kind} one by one"), |b| {
            b.iter(|| queries.iter().filter(|&key| full.contains(key)).count());
        });
        group.bench_function(format!("contains {kind} batched"), |b| {
            b.iter(|| black_box(full.contains_many(queries.iter())));
        });
    }
    group.finish();
}

fn filters(c: &mut Criterion) {
    measure(
        c,
        "bloom",
        BloomFilter::with_fpp(FPP).expected_items(ITEMS).build(),
    );
    measure(
        c,
        "blocked",
        BlockedBloomFilter::with_fpp(FPP)
            .expected_items(ITEMS)
            .build(),
    );
    let split_block = SplitBlockBloomFilter::with_fpp(FPP).expected_items(ITEMS);
    measure(c, "split_block", split_block.build());
    let atomic = BloomFilter::with_fpp(FPP)
        .expected_items(ITEMS)
        .build_atomic();
    measure::<AtomicBloomFilter>(c, "atomic", atomic);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = filters
}
criterion_main!(benches);
