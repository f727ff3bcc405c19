//! Growth by 100×: a `ScalableBloomFilter` started at 10^4 keys grows to
//! 10^6 at a compound FPP of 1% (inserts, growth included), and lookups in
//! the grown filter, which searches every layer (keys held and keys never
//! inserted alternate), for each layer type.
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
    let keys: Vec<u64> = (0..ITEMS).map(|i| insert_key(9, i)).collect();
    let grow = |filter: &mut ScalableBloomFilter<L>| {
        let new = filter
            .insert_many(keys.iter())
            .expect("grows without a limit");
        (new, filter.layers().len())
    };
    let mut group = c.benchmark_group(format!("{} layers, 1e4 to 1e6", L::NAME));
    group.throughput(Throughput::Elements(ITEMS));
    let empty = || builder.build().expect("a valid configuration");
    group.bench_function("grow", |b| {
        b.iter_batched_ref(empty, grow, BatchSize::LargeInput);
    });
    let mut full = empty();
    grow(&mut full);
    let mixed: Vec<u64> = (0..ITEMS / 2)
        .flat_map(|i| [keys[i as usize], query_key(9, i)])
        .collect();
    group.bench_function("contains, every layer", |b| {
        b.iter(|| {
            full.contains_many(mixed.iter())
                .into_iter()
                .filter(|&hit| hit)
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
