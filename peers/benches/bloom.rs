//! Insert, positive and negative lookups for this crate's Bloom filters
//! beside the peer crates fastbloom 0.17 (with foldhash, its fastest
//! hasher), bloomfilter 3 and sbbf-rs-safe 0.3 (split-block, SIMD; beside
//! this crate's split-block filter), on the
//! same u64 keys in the same groups, one key at a time. (Batched lookups on
//! 256 MiB filters are in the `batched` bench.)
//!
//! `cargo bench -p filterlab-peers --bench bloom` (everything, about 15
//! minutes), or filtered, e.g. `-- 'lookup_negative/.*n=1e7'` or
//! `-- 'n=1e7,bits=10'`.
//!
//! Every filter is measured through `filterlab_peers::Subject`, the trait
//! the harness measures through: one generic bench function, one dynamic
//! call per pass over the keys. Each subject prints its size and the FPP
//! measured on the million never-inserted lookup keys, so speed and
//! accuracy are read together.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::{Size, blocked, bloom, split_block};
use criterion::{BenchmarkId, Criterion, Throughput};
use filterlab_bloom::Kernel;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_peers::{
    BloomFilterCrate, FastBloom, FilterlabSubject, Mode, PeerSubject, SplitBlock, Subject, Workload,
};

/// The seed of every filter's hasher.
const SEED: u64 = 1;

/// Builds one benchmarked filter, empty, for `items` keys at a size;
/// `None` when it cannot be sized that way.
type Make = fn(u64, Size) -> Option<Box<dyn Subject>>;

fn workload(items: u64, fpp: f64) -> Workload {
    Workload {
        items,
        fpp,
        seed: SEED,
    }
}

/// Every benchmarked filter, in group order.
const SUBJECTS: [(&str, Make); 8] = [
    ("filterlab-blocked", |n, size| {
        let filter = blocked(n, size, SEED, Kernel::detect()).build().ok()?;
        Some(FilterlabSubject::new(filter).boxed())
    }),
    // The blocked filter with its portable kernel, as on CPUs without AVX2.
    ("filterlab-blocked-scalar", |n, size| {
        let filter = blocked(n, size, SEED, Kernel::Scalar).build().ok()?;
        Some(FilterlabSubject::new(filter).boxed())
    }),
    // Sbbf's layout, sized by its exact FPP (or at sbbf's 10 bits per key).
    ("filterlab-split-block", |n, size| {
        let filter = split_block(n, size, SEED, Kernel::detect()).build().ok()?;
        Some(FilterlabSubject::new(filter).boxed())
    }),
    // Given the same XXH3 key hash as this crate's filters, so the
    // comparison is of the filters, not the hash functions.
    ("sbbf-rs-safe", |n, size| {
        let filter = match size {
            Size::Fpp(p) => SplitBlock::new(&workload(n, p)).ok()?,
            Size::BitsPerKey(b) => SplitBlock::with_bits_per_key(b, n, SEED),
        };
        Some(PeerSubject::boxed(filter))
    }),
    ("filterlab", |n, size| {
        Some(FilterlabSubject::new(bloom(n, size, SEED).build().ok()?).boxed())
    }),
    ("filterlab-atomic", |n, size| {
        Some(FilterlabSubject::new(bloom(n, size, SEED).build_atomic().ok()?).boxed())
    }),
    ("fastbloom", |n, size| {
        Some(PeerSubject::boxed(match size {
            Size::Fpp(p) => FastBloom::new(&workload(n, p)),
            Size::BitsPerKey(b) => FastBloom::with_bits(b * n, n, SEED),
        }))
    }),
    ("bloomfilter", |n, size| {
        let filter = match size {
            Size::Fpp(p) => BloomFilterCrate::new(&workload(n, p)),
            Size::BitsPerKey(b) => BloomFilterCrate::with_bits(b * n, n, SEED),
        };
        Some(PeerSubject::boxed(filter.ok()?))
    }),
];

const LOOKUPS: u64 = 1_000_000;

/// Benchmarks one filter at one size in the three groups, one key at a time.
fn bench_subject(c: &mut Criterion, name: &str, filter: &mut dyn Subject, items: u64, size: Size) {
    let label = size.label(items);
    let keys: Vec<u64> = (0..items).map(|i| insert_key(7, i)).collect();
    let mut refused = Vec::new();

    let mut group = c.benchmark_group("insert");
    group.throughput(Throughput::Elements(items));
    group.bench_function(BenchmarkId::new(name, &label), |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                filter.clear();
                let start = Instant::now();
                // Every insert's answer is used: each filter does BF.ADD's work.
                let new = filter.insert_keys(black_box(&keys), Mode::OneKey, &mut refused);
                total += start.elapsed();
                black_box(new);
            }
            total
        });
    });
    group.finish();
    // Whatever the insert benchmark ran, the filter must hold exactly the n keys.
    filter.clear();
    filter.insert_keys(&keys, Mode::OneKey, &mut refused);
    assert!(refused.is_empty(), "{name} refused keys");

    // Look up a spread of inserted keys and as many never-inserted ones.
    let lookups = LOOKUPS.min(items);
    let stride = items / lookups;
    let present: Vec<u64> = (0..lookups).map(|i| insert_key(7, i * stride)).collect();
    let absent: Vec<u64> = (0..lookups).map(|i| query_key(7, i)).collect();
    let false_positives = filter.count_contained(&absent, Mode::OneKey);
    eprintln!(
        "{name} {label}: {:.2} bits/key, FPP {:.3}% on {lookups} never-inserted keys",
        filter.memory_usage() as f64 * 8.0 / items as f64,
        100.0 * false_positives as f64 / lookups as f64
    );
    for (group_name, keys) in [("lookup_positive", &present), ("lookup_negative", &absent)] {
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(lookups));
        group.bench_function(BenchmarkId::new(name, &label), |b| {
            b.iter(|| filter.count_contained(black_box(keys), Mode::OneKey));
        });
        group.finish();
    }
}

fn bloom_vs_peers(c: &mut Criterion) {
    for items in [100_000u64, 10_000_000] {
        for size in [Size::BitsPerKey(10), Size::Fpp(1e-2), Size::Fpp(1e-3)] {
            for (name, make) in SUBJECTS {
                if let Some(mut filter) = make(items, size) {
                    bench_subject(c, name, filter.as_mut(), items, size);
                }
            }
        }
    }
}

fn main() {
    filterlab_peers::bench::run(bloom_vs_peers);
}
