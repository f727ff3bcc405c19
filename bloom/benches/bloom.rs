//! Insert, positive and negative lookups for this crate's Bloom filters
//! beside the peer crates fastbloom 0.17 (with foldhash, its fastest
//! hasher), bloomfilter 3 and sbbf-rs-safe 0.3 (split-block, SIMD), on the
//! same u64 keys in the same groups. (Batched lookups on 256 MiB filters are
//! in the `batched` bench.)
//!
//! `cargo bench -p filterlab-bloom --bench bloom` (everything, about 15
//! minutes), or filtered, e.g. `-- 'lookup_negative/.*n=1e7'`.
//!
//! Each subject prints its size and the FPP measured on the million
//! never-inserted lookup keys, so speed and accuracy are read together.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use filterlab_bloom::{AtomicBloomFilter, BlockedBloomFilter, BloomFilter, Filter, Kernel};
use filterlab_core::KeyHasher;
use filterlab_core::keys::{insert_key, query_key};

/// How a filter is sized: for a target FPP, or with a fixed number of bits
/// per key (the peers' usual 10, and what sbbf-rs-safe takes).
#[derive(Clone, Copy, Debug)]
enum Size {
    Fpp(f64),
    BitsPerKey(u64),
}

impl Size {
    fn label(self, items: u64) -> String {
        match self {
            Self::Fpp(p) => format!("n={items:.0e},p={p:.0e}"),
            Self::BitsPerKey(b) => format!("n={items:.0e},bits={b}"),
        }
    }
}

/// The operations every benchmarked filter offers on u64 keys.
trait Subject: Sized {
    const NAME: &'static str;
    /// `None` when the filter cannot be sized that way.
    fn sized(items: u64, size: Size) -> Option<Self>;
    /// Inserts; whether the key was new (the benchmark uses the answer, so
    /// every filter does the work of RedisBloom's BF.ADD).
    fn add(&mut self, key: u64) -> bool;
    fn has(&self, key: u64) -> bool;
    fn reset(&mut self);
    fn bits(&self) -> u64;
}

impl Subject for BloomFilter {
    const NAME: &'static str = "filterlab";
    fn sized(items: u64, size: Size) -> Option<Self> {
        let builder = match size {
            Size::Fpp(p) => BloomFilter::with_fpp(p),
            Size::BitsPerKey(b) => BloomFilter::with_bits(b * items),
        };
        builder.expected_items(items).seed(1).build().ok()
    }
    fn add(&mut self, key: u64) -> bool {
        self.insert(&key)
    }
    fn has(&self, key: u64) -> bool {
        self.contains(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
    fn bits(&self) -> u64 {
        self.num_bits()
    }
}

impl Subject for AtomicBloomFilter {
    const NAME: &'static str = "filterlab-atomic";
    fn sized(items: u64, size: Size) -> Option<Self> {
        BloomFilter::sized(items, size).map(BloomFilter::into_atomic)
    }
    fn add(&mut self, key: u64) -> bool {
        self.insert(&key)
    }
    fn has(&self, key: u64) -> bool {
        self.contains(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
    fn bits(&self) -> u64 {
        self.num_bits()
    }
}

fn blocked(items: u64, size: Size, kernel: Kernel) -> Option<BlockedBloomFilter> {
    let builder = match size {
        Size::Fpp(p) => BlockedBloomFilter::with_fpp(p),
        Size::BitsPerKey(b) => BlockedBloomFilter::with_bits(b * items),
    };
    builder
        .expected_items(items)
        .seed(1)
        .kernel(kernel)
        .build()
        .ok()
}

impl Subject for BlockedBloomFilter {
    const NAME: &'static str = "filterlab-blocked";
    fn sized(items: u64, size: Size) -> Option<Self> {
        blocked(items, size, Kernel::detect())
    }
    fn add(&mut self, key: u64) -> bool {
        self.insert(&key)
    }
    fn has(&self, key: u64) -> bool {
        self.contains(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
    fn bits(&self) -> u64 {
        self.num_bits()
    }
}

/// The blocked filter with its portable kernel, as on CPUs without AVX2.
struct ScalarBlocked(BlockedBloomFilter);

impl Subject for ScalarBlocked {
    const NAME: &'static str = "filterlab-blocked-scalar";
    fn sized(items: u64, size: Size) -> Option<Self> {
        blocked(items, size, Kernel::Scalar).map(Self)
    }
    fn add(&mut self, key: u64) -> bool {
        self.0.insert(&key)
    }
    fn has(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn reset(&mut self) {
        self.0.clear();
    }
    fn bits(&self) -> u64 {
        self.0.num_bits()
    }
}

impl Subject for fastbloom::BloomFilter<foldhash::fast::RandomState> {
    const NAME: &'static str = "fastbloom";
    fn sized(items: u64, size: Size) -> Option<Self> {
        let hasher = foldhash::fast::RandomState::default();
        Some(match size {
            Size::Fpp(p) => fastbloom::BloomFilter::with_false_pos(p)
                .hasher(hasher)
                .expected_items(items as usize),
            Size::BitsPerKey(b) => fastbloom::BloomFilter::with_num_bits((b * items) as usize)
                .hasher(hasher)
                .expected_items(items as usize),
        })
    }
    fn add(&mut self, key: u64) -> bool {
        // fastbloom answers whether the key was (maybe) present already.
        !self.insert(&key)
    }
    fn has(&self, key: u64) -> bool {
        self.contains(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
    fn bits(&self) -> u64 {
        self.num_bits() as u64
    }
}

impl Subject for bloomfilter::Bloom<u64> {
    const NAME: &'static str = "bloomfilter";
    fn sized(items: u64, size: Size) -> Option<Self> {
        match size {
            Size::Fpp(p) => bloomfilter::Bloom::new_for_fp_rate(items as usize, p).ok(),
            Size::BitsPerKey(b) => {
                bloomfilter::Bloom::new((b * items).div_ceil(8) as usize, items as usize).ok()
            }
        }
    }
    fn add(&mut self, key: u64) -> bool {
        !self.check_and_set(&key)
    }
    fn has(&self, key: u64) -> bool {
        self.check(&key)
    }
    fn reset(&mut self) {
        self.clear();
    }
    fn bits(&self) -> u64 {
        self.len()
    }
}

/// sbbf-rs-safe takes key hashes: given the same XXH3 hash as this crate's
/// filters, so the comparison is of the filters, not the hash functions.
struct Sbbf {
    filter: sbbf_rs_safe::Filter,
    hasher: KeyHasher,
}

impl Subject for Sbbf {
    const NAME: &'static str = "sbbf-rs-safe";
    /// Sized by bits per key only: it has no FPP-based sizing.
    fn sized(items: u64, size: Size) -> Option<Self> {
        match size {
            Size::Fpp(_) => None,
            Size::BitsPerKey(b) => Some(Self {
                filter: sbbf_rs_safe::Filter::new(b as usize, items as usize),
                hasher: KeyHasher::new(1),
            }),
        }
    }
    fn add(&mut self, key: u64) -> bool {
        // sbbf answers whether the key's bits were all set already.
        !self.filter.insert_hash(self.hasher.hash_u64(key))
    }
    fn has(&self, key: u64) -> bool {
        self.filter.contains_hash(self.hasher.hash_u64(key))
    }
    fn reset(&mut self) {
        self.filter.reset();
    }
    fn bits(&self) -> u64 {
        self.filter.as_bytes().len() as u64 * 8
    }
}

const LOOKUPS: u64 = 1_000_000;

/// Benchmarks one filter type at one size in the three groups.
fn bench_subject<S: Subject>(c: &mut Criterion, items: u64, size: Size) {
    let Some(mut filter) = S::sized(items, size) else {
        return;
    };
    let label = size.label(items);

    let mut group = c.benchmark_group("insert");
    group.throughput(Throughput::Elements(items));
    group.bench_function(BenchmarkId::new(S::NAME, &label), |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                filter.reset();
                let start = Instant::now();
                let mut new = 0u64;
                for i in 0..items {
                    new += u64::from(filter.add(insert_key(7, i)));
                }
                total += start.elapsed();
                black_box(new);
            }
            total
        });
    });
    group.finish();
    // Whatever the insert benchmark ran, the filter must hold exactly the n keys.
    filter.reset();
    for i in 0..items {
        filter.add(insert_key(7, i));
    }

    // Look up a spread of inserted keys and as many never-inserted ones.
    let lookups = LOOKUPS.min(items);
    let stride = items / lookups;
    let present: Vec<u64> = (0..lookups).map(|i| insert_key(7, i * stride)).collect();
    let absent: Vec<u64> = (0..lookups).map(|i| query_key(7, i)).collect();
    let false_positives = absent.iter().filter(|&&key| filter.has(key)).count();
    eprintln!(
        "{} {label}: {:.2} bits/key, FPP {:.3}% on {lookups} never-inserted keys",
        S::NAME,
        filter.bits() as f64 / items as f64,
        100.0 * false_positives as f64 / lookups as f64
    );
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
        for size in [Size::BitsPerKey(10), Size::Fpp(1e-2), Size::Fpp(1e-3)] {
            bench_subject::<BlockedBloomFilter>(c, items, size);
            bench_subject::<ScalarBlocked>(c, items, size);
            bench_subject::<Sbbf>(c, items, size);
            bench_subject::<BloomFilter>(c, items, size);
            bench_subject::<AtomicBloomFilter>(c, items, size);
            bench_subject::<fastbloom::BloomFilter<foldhash::fast::RandomState>>(c, items, size);
            bench_subject::<bloomfilter::Bloom<u64>>(c, items, size);
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
