//! Batched lookups (`contains_many`: hash a batch, prefetch the lines of the
//! keys ahead, probe) against one-by-one lookups, in a blocked and a
//! standard Bloom filter of 256 MiB at 10 bits/key, beside what bounds them:
//! independent random reads of a 256 MiB array, in the same run.
//!
//! `cargo bench -p filterlab-peers --bench batched` (building the filters
//! takes about a minute: 215 million keys each).
//!
//! Both ways of looking up go through `filterlab_peers::Subject`, the trait
//! the harness measures through: [`Mode::OneKey`] (hash, then
//! `contains_hash`, key after key) and [`Mode::Batched`] (`contains_hashes`
//! on batches of hashes, prefetching the keys ahead).

mod common;

use std::hint::black_box;

use common::{Size, blocked, bloom};
use criterion::{Criterion, Throughput};
use filterlab_bloom::{Error, Filter, Kernel};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_peers::{FilterlabSubject, Mode, Subject};

const LOOKUPS: u64 = 1_000_000;

/// Keys making a 10 bits/key filter of at least 256 MiB (2^31 bits).
const BIG_ITEMS: u64 = (1 << 31) / 10 + 1;

/// Batched lookups in filters far larger than the caches, beside the cost
/// that bounds them: independent random reads of an array of the same size.
fn batched_vs_random_reads(c: &mut Criterion) {
    // The baseline: one independent random read per lookup in 256 MiB
    // (group `random_read`), dropped before the filters are built.
    filterlab_peers::bench::random_reads(c, 256 << 20, 1, LOOKUPS);
    let mut group = c.benchmark_group("batched");
    group.throughput(Throughput::Elements(LOOKUPS));
    let absent: Vec<u64> = (0..LOOKUPS).map(|i| query_key(9, i)).collect();
    let present: Vec<u64> = (0..LOOKUPS)
        .map(|i| insert_key(9, i * (BIG_ITEMS / LOOKUPS)))
        .collect();

    let ten_bits = Size::BitsPerKey(10);
    let filters = [
        (
            "blocked",
            big(blocked(BIG_ITEMS, ten_bits, 9, Kernel::detect()).build()),
        ),
        ("standard", big(bloom(BIG_ITEMS, ten_bits, 9).build())),
    ];
    for (name, filter) in &filters {
        eprintln!(
            "batched/{name}: {} MiB, {} keys",
            filter.memory_usage() >> 20,
            BIG_ITEMS
        );
        for (kind, keys) in [("negative", &absent), ("positive", &present)] {
            for (mode, way) in [
                (Mode::OneKey, "one_by_one"),
                (Mode::Batched, "contains_many"),
            ] {
                group.bench_function(format!("{name}/{way}/{kind}"), |b| {
                    b.iter(|| filter.count_contained(black_box(keys), mode));
                });
            }
        }
    }
    group.finish();
}

/// A filter holding the `BIG_ITEMS` keys, to measure.
fn big<F: Filter + Extend<u64> + 'static>(filter: Result<F, Error>) -> Box<dyn Subject> {
    let mut filter = filter.expect("valid sizes");
    filter.extend((0..BIG_ITEMS).map(|i| insert_key(9, i)));
    FilterlabSubject::new(filter).boxed()
}

fn main() {
    filterlab_peers::bench::run(batched_vs_random_reads);
}
