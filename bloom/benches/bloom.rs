//! Insert, positive and negative lookups for `BloomFilter` beside the peer
//! crates fastbloom 0.17 (with foldhash, its fastest hasher) and bloomfilter 3,
//! on the same u64 keys in the same groups.
//!
//! `cargo bench -p filterlab-bloom --bench bloom`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use filterlab_bloom::{BloomFilter, Filter};
use filterlab_core::testing::{insert_key, query_key};

/// The operations every benchmarked filter offers on u64 keys.
trait Subject {
    const NAME: &'static str;
    fn sized(items: u64, fpp: f64) -> Self;
    fn add(&mut self, key: u64);
    fn has(&self, key: u64) -> bool;
    fn reset(&mut self);
}

impl Subject for BloomFilter {
    const NAME: &'static str = "filterlab";
    fn sized(items: u64, fpp: f64) -> Self {
        BloomFilter::with_fpp(fpp)
            .expected_items(items)
            .seed(1)
            .build()
            .unwrap()
    }
    fn add(&mut self, key: u64) {
        self.insert(&key);
    }
    fn has(&self, key: u64) -> bool {
        self.contains(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
}

impl Subject for fastbloom::BloomFilter<foldhash::fast::RandomState> {
    const NAME: &'static str = "fastbloom";
    fn sized(items: u64, fpp: f64) -> Self {
        fastbloom::BloomFilter::with_false_pos(fpp)
            .hasher(foldhash::fast::RandomState::default())
            .expected_items(items as usize)
    }
    fn add(&mut self, key: u64) {
        self.insert(&key);
    }
    fn has(&self, key: u64) -> bool {
        self.contains(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
}

impl Subject for bloomfilter::Bloom<u64> {
    const NAME: &'static str = "bloomfilter";
    fn sized(items: u64, fpp: f64) -> Self {
        bloomfilter::Bloom::new_for_fp_rate(items as usize, fpp).unwrap()
    }
    fn add(&mut self, key: u64) {
        self.set(&key);
    }
    fn has(&self, key: u64) -> bool {
        self.check(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
}

const LOOKUPS: u64 = 1_000_000;

/// Benchmarks one filter type at one (n, p) in the three groups.
fn bench_subject<S: Subject>(c: &mut Criterion, items: u64, fpp: f64) {
    let label = format!("n={items:.0e},p={fpp:.0e}");
    let mut filter = S::sized(items, fpp);

    let mut group = c.benchmark_group("insert");
    group.throughput(Throughput::Elements(items));
    group.bench_function(BenchmarkId::new(S::NAME, &label), |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                filter.reset();
                let start = Instant::now();
                for i in 0..items {
                    filter.add(insert_key(7, i));
                }
                total += start.elapsed();
            }
            total
        });
    });
    group.finish();

    // The filter now holds n keys; look up a spread of them and of never-inserted keys.
    let lookups = LOOKUPS.min(items);
    let stride = items / lookups;
    let present: Vec<u64> = (0..lookups).map(|i| insert_key(7, i * stride)).collect();
    let absent: Vec<u64> = (0..lookups).map(|i| query_key(7, i)).collect();
    for (group_name, keys) in [("lookup_positive", &present), ("lookup_negative", &absent)] {
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(lookups));
        group.bench_function(BenchmarkId::new(S::NAME, &label), |b| {
            b.iter(|| {
                keys.iter()
                    .filter(|&&key| filter.has(black_box(key)))
                    .count()
            });
        });
        group.finish();
    }
}

fn bloom_vs_peers(c: &mut Criterion) {
    for items in [100_000u64, 10_000_000] {
        for fpp in [1e-2, 1e-3] {
            bench_subject::<BloomFilter>(c, items, fpp);
            bench_subject::<fastbloom::BloomFilter<foldhash::fast::RandomState>>(c, items, fpp);
            bench_subject::<bloomfilter::Bloom<u64>>(c, items, fpp);
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bloom_vs_peers
}
criterion_main!(benches);
