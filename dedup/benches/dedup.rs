//! Checks per second through the library: one key at a time against the
//! batched path, on a filter far larger than the caches (15 million uniques
//! at P = 1e-6: 64 MiB), half the keys new and half repeated, and with
//! three partitions searched.
//!
//! `cargo bench -p filterlab-dedup --bench dedup`. The command itself
//! against awk and sort is measured by `dedup/bench/run.sh`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use filterlab_core::keys::insert_key;
use filterlab_dedup::{Deduplicator, DeduplicatorBuilder, PartitionKey};

const UNIQUES: u64 = 15_000_000;
const CHECKS: u64 = 1_000_000;

/// The de-duplicator measured: unpartitioned, or `count` partitions searched.
fn builder(partitions: Option<u64>) -> DeduplicatorBuilder {
    let builder = Deduplicator::with_fpp(1e-6).expected_items(UNIQUES);
    match partitions {
        Some(count) => builder.partitions(count).search_all(true),
        None => builder,
    }
}

/// The checkpoint of a de-duplicator holding `UNIQUES / 2` keys in each
/// partition, and the partition the checks go to (the highest).
fn half_full(partitions: Option<u64>) -> (Vec<u8>, Option<PartitionKey>) {
    let mut dedup = builder(partitions).build().expect("64 MiB per partition");
    for day in 1..=partitions.unwrap_or(1) {
        let partition = partitions.map(|_| PartitionKey::from(day));
        let keys = (0..UNIQUES / 2).map(|i| insert_key(day, i));
        dedup.check_many(keys, partition.as_ref()).expect("checks");
    }
    let mut checkpoint = Vec::new();
    dedup
        .write_checkpoint_to(&mut checkpoint)
        .expect("to memory");
    (checkpoint, partitions.map(PartitionKey::from))
}

fn checks(c: &mut Criterion) {
    let mut group = c.benchmark_group("dedup");
    group.throughput(Throughput::Elements(CHECKS));
    group.sample_size(10);
    // Half repeated (inserted above), half new.
    let keys: Vec<u64> = (0..CHECKS)
        .map(|i| insert_key(if i % 2 == 0 { 1 } else { 99 }, i))
        .collect();
    for (name, partitions) in [
        ("unpartitioned", None),
        ("3 partitions, search-all", Some(3)),
    ] {
        let (checkpoint, partition) = half_full(partitions);
        // Every iteration starts from the same half-full state.
        let fresh = || {
            let mut dedup = builder(partitions).build().expect("sizing");
            dedup
                .read_checkpoint_from(&checkpoint[..])
                .expect("its own checkpoint");
            dedup
        };
        let hasher = fresh().hasher();
        let hashes: Vec<u64> = keys.iter().map(|k| hasher.hash(k)).collect();
        group.bench_function(format!("{name}/one by one"), |b| {
            b.iter_batched_ref(
                fresh,
                |dedup| {
                    for &hash in &hashes {
                        black_box(dedup.check_hash(hash, partition.as_ref()).ok());
                    }
                },
                BatchSize::PerIteration,
            );
        });
        group.bench_function(format!("{name}/batched"), |b| {
            let mut verdicts = Vec::with_capacity(hashes.len());
            b.iter_batched_ref(
                fresh,
                |dedup| {
                    verdicts.clear();
                    dedup
                        .check_hashes(&hashes, partition.as_ref(), &mut verdicts)
                        .ok();
                    black_box(verdicts.len())
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, checks);
criterion_main!(benches);
