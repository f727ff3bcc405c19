//! The cost of one key at a time in `BlockedBloomFilter`, `BloomFilter` and
//! `AtomicBloomFilter` (one thread),
//! without hashing: inserts and lookups of pre-hashed keys through
//! `Filter::insert_hash` / `contains_hash`, alternating rounds, minimum
//! ns per key. Small enough to run under `valgrind --tool=callgrind`, whose
//! instruction counts per key are the evidence for where an insert's time
//! goes when hardware counters are not available.
//!
//! ```text
//! cargo run --release -p filterlab-peers --example one_key_cost [-- ITEMS [ROUNDS]]
//! ```

use std::hint::black_box;
use std::time::Instant;

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, Filter};

use filterlab_core::mix64;

fn time(count: usize, work: impl FnOnce() -> u64) -> f64 {
    let start = Instant::now();
    black_box(work());
    start.elapsed().as_nanos() as f64 / count as f64
}

/// Inserts every hash, then looks them up; returns (insert, lookup) ns/key.
fn round(filter: &mut dyn Filter, hashes: &[u64]) -> [f64; 2] {
    filter.clear();
    let insert = time(hashes.len(), || {
        hashes
            .iter()
            .map(|&h| u64::from(filter.insert_hash(black_box(h)).unwrap_or(false)))
            .sum()
    });
    let lookup = time(hashes.len(), || {
        hashes
            .iter()
            .map(|&h| u64::from(filter.contains_hash(black_box(h))))
            .sum()
    });
    [insert, lookup]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let items = args
        .next()
        .map_or(1e6, |a| a.parse::<f64>().expect("ITEMS")) as u64;
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("ROUNDS"));
    let hashes: Vec<u64> = (0..items).map(|i| mix64(i ^ 0x5555)).collect();
    let mut filters: Vec<(&str, Box<dyn Filter>)> = vec![
        (
            "BlockedBloomFilter",
            Box::new(
                BlockedBloomFilter::with_bits(10 * items)
                    .expected_items(items)
                    .build()
                    .expect("valid sizes"),
            ),
        ),
        (
            "BloomFilter",
            Box::new(
                BloomFilter::with_fpp(0.01)
                    .expected_items(items)
                    .build()
                    .expect("valid sizes"),
            ),
        ),
        (
            "AtomicBloomFilter",
            Box::new(
                BloomFilter::with_fpp(0.01)
                    .expected_items(items)
                    .build_atomic()
                    .expect("valid sizes"),
            ),
        ),
    ];
    let mut best = vec![[f64::INFINITY; 2]; filters.len()];
    for r in 0..rounds {
        for turn in 0..filters.len() {
            let i = (r + turn) % filters.len();
            let times = round(filters[i].1.as_mut(), &hashes);
            for (b, t) in best[i].iter_mut().zip(times) {
                *b = b.min(t);
            }
        }
    }
    for ((name, _), [insert, lookup]) in filters.iter().zip(best) {
        println!("{name:<20} n = {items:.0e}: insert {insert:6.2} ns, lookup {lookup:6.2} ns");
    }
}
