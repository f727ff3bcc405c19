//! Churn and lookups in this crate's two layouts, 4-bit counters, sized
//! for 10^6 keys at 1%: each iteration inserts 10^6 keys one by one and
//! removes them again (the filter ends empty, as it began), and looks up
//! 10^6 keys, half of them held, in a filter holding half of its capacity.
//! One generic function measures both layouts through the `Filter` and
//! `RemovableFilter` traits.
//!
//! `cargo bench -p filterlab-counting-bloom`, or filtered, e.g. `-- blocked`.
//! (Comparisons with other crates' counting filters live in the
//! repository's unpublished `filterlab-peers` crate.)

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use filterlab_core::keys::insert_key;
use filterlab_counting_bloom::{
    BlockedCountingBloomFilter, CountingBloomFilter, Error, RemovableFilter,
};

const ITEMS: u64 = 1_000_000;

fn churn_and_lookups<F: RemovableFilter>(c: &mut Criterion, layout: &str, built: Result<F, Error>) {
    let mut filter = built.expect("a million keys fit the default memory limit");
    let hasher = *filter.hasher();
    let hashes: Vec<u64> = (0..ITEMS).map(|i| hasher.hash(&insert_key(3, i))).collect();
    let mut group = c.benchmark_group(format!("counting {layout}"));
    group.throughput(Throughput::Elements(2 * ITEMS));
    group.bench_function("insert then remove each key", |b| {
        b.iter(|| {
            let added = hashes
                .iter()
                .filter(|&&h| filter.insert_hash(h).is_ok())
                .count();
            let removed = hashes
                .iter()
                .filter(|&&h| filter.remove_hash(h).unwrap_or(false))
                .count();
            assert_eq!(
                (added, removed, filter.len()),
                (hashes.len(), hashes.len(), 0)
            );
        });
    });
    // Every other key held: half the lookups are of held keys.
    for &h in hashes.iter().step_by(2) {
        filter
            .insert_hash(h)
            .expect("a counting filter takes every key");
    }
    group.throughput(Throughput::Elements(ITEMS));
    group.bench_function("contains, half held", |b| {
        b.iter(|| hashes.iter().filter(|&&h| filter.contains_hash(h)).count());
    });
    group.finish();
}

fn layouts(c: &mut Criterion) {
    let standard = CountingBloomFilter::with_fpp(0.01).expected_items(ITEMS);
    churn_and_lookups(c, "standard", standard.build());
    let blocked = BlockedCountingBloomFilter::with_fpp(0.01).expected_items(ITEMS);
    churn_and_lookups(c, "blocked", blocked.build());
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = layouts
}
criterion_main!(benches);
