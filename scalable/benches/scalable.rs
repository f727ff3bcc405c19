//! Growth by 100×: a `ScalableBloomFilter` started at 10^4 keys and grown to
//! 10^6 at a compound FPP of 1% (inserts, growth included), then lookups of
//! inserted and never-inserted keys in the grown filter (every layer
//! searched), with each layer type.
//!
//! `cargo bench -p filterlab-scalable`, or filtered, e.g. `-- BloomFilter`.
//! (Comparisons with other growing filters live in the repository's
//! unpublished `filterlab-peers` crate.)

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_scalable::{
    BlockedBloomFilter, BloomFilter, Layer, ScalableBloomBuilder, ScalableBloomFilter,
};

const INITIAL: u64 = 10_000;
const ITEMS: u64 = 1_000_000;

fn grown<L: Layer + Clone>(c: &mut Criterion) {
    let builder = ScalableBloomBuilder::<L>::new(0.01).initial_capacity(INITIAL);
    let empty = builder.build().expect("a valid configuration");
    let keys: Vec<u64> = (0..ITEMS).map(|i| insert_key(9, i)).collect();
    let mut full = empty.clone();
    full.insert_many(keys.iter())
        .expect("grows without a limit");
    let mut group = c.benchmark_group(format!("{} layers, 1e4 to 1e6", L::NAME));
    group.throughput(Throughput::Elements(ITEMS));
    group.bench_function("insert, growing", |b| {
        let grow =
            |filter: &mut ScalableBloomFilter<L>| keys.iter().map(|key| filter.insert(key)).count();
        b.iter_batched_ref(|| empty.clone(), grow, BatchSize::LargeInput);
    });
    group.bench_function("contains inserted", |b| {
        b.iter(|| keys.iter().filter(|&key| full.contains(key)).count());
    });
    group.bench_function("contains never inserted", |b| {
        b.iter(|| {
            (0..ITEMS)
                .filter(|&i| full.contains(&query_key(9, i)))
                .count()
        });
    });
    group.finish();
}

fn layers(c: &mut Criterion) {
    grown::<BloomFilter>(c);
    grown::<BlockedBloomFilter>(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = layers
}
criterion_main!(benches);
