//! Insert, lookup and remove in this crate's two layouts, 4-bit counters,
//! sized for 10^6 keys at 1%: one key at a time, through the `Filter` and
//! `RemovableFilter` traits (one generic function for both layouts).
//!
//! `cargo bench -p filterlab-counting-bloom`, or filtered, e.g. `-- blocked`.
//! (Comparisons with other crates' counting filters live in the
//! repository's unpublished `filterlab-peers` crate.)

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_counting_bloom::{
    BlockedCountingBloomFilter, CountingBloomFilter, Error, RemovableFilter,
};

const ITEMS: u64 = 1_000_000;

fn layout<F: RemovableFilter + Extend<u64> + Clone>(
    c: &mut Criterion,
    name: &str,
    built: Result<F, Error>,
) {
    let empty = built.expect("a million keys fit the default memory limit");
    let keys: Vec<u64> = (0..ITEMS).map(|i| insert_key(3, i)).collect();
    let mut full = empty.clone();
    full.extend(keys.iter().copied());
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(ITEMS));
    group.bench_function("insert", |b| {
        let fill = |filter: &mut F| {
            keys.iter()
                .map(|key| filter.insert_hash(filter.hasher().hash(key)))
                .count()
        };
        b.iter_batched_ref(|| empty.clone(), fill, BatchSize::LargeInput);
    });
    group.bench_function("contains, inserted", |b| {
        b.iter(|| keys.iter().filter(|&key| full.contains(key)).count());
    });
    group.bench_function("contains, never inserted", |b| {
        b.iter(|| {
            (0..ITEMS)
                .filter(|&i| full.contains(&query_key(3, i)))
                .count()
        });
    });
    group.bench_function("remove every key", |b| {
        let drain = |filter: &mut F| {
            keys.iter()
                .filter(|&key| filter.remove(key).unwrap_or(false))
                .count()
        };
        b.iter_batched_ref(|| full.clone(), drain, BatchSize::LargeInput);
    });
    group.finish();
}

fn layouts(c: &mut Criterion) {
    layout(
        c,
        "standard",
        CountingBloomFilter::with_fpp(0.01)
            .expected_items(ITEMS)
            .build(),
    );
    let blocked = BlockedCountingBloomFilter::with_fpp(0.01).expected_items(ITEMS);
    layout(c, "blocked", blocked.build());
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = layouts
}
criterion_main!(benches);
