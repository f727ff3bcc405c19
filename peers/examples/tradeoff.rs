//! Speed against accuracy: the standard, blocked and atomic Bloom filters at
//! several sizes, beside split-block (sbbf-rs-safe) and fastbloom filters of
//! the same size, on the same keys.
//!
//! For each bits-per-key setting it builds every filter for n keys, measures
//! the FPP on never-inserted keys next to the filter's own theory, and times
//! inserts (refilling the emptied filter key by key, each insert's answer
//! used) and lookups in rounds that alternate between the filters (the minimum over
//! rounds is reported, so a noisy machine slows every filter alike rather
//! than whichever ran during a burst).
//!
//! ```text
//! cargo run --release -p filterlab-peers --example tradeoff [-- ITEMS [ROUNDS [BITS,...]]]
//! ```
//!
//! Defaults: 10,000,000 items, 7 rounds, 8,10,12,16,20 bits per key.

use std::hint::black_box;
use std::time::Instant;

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, Kernel};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_peers::bench::ExampleArgs;
use filterlab_peers::{
    FastBloom, FilterlabSubject, Mode, PeerSubject, SplitBlock, Subject, Theory,
};

/// Lookups per timing and never-inserted keys per FPP measurement.
const LOOKUPS: u64 = 1_000_000;

/// The seed of every filter's hasher.
const SEED: u64 = 1;

/// A filter under test, named, measured through `filterlab_peers::Subject`
/// (the trait the harness measures through): one dynamic call per pass
/// over a million keys, not per key.
struct Named {
    name: &'static str,
    filter: Box<dyn Subject>,
}

/// Every filter at `bits_per_key`, each built empty for `items` keys.
fn subjects(items: u64, bits_per_key: u64) -> Vec<Named> {
    let bits = bits_per_key * items;
    let standard = || {
        BloomFilter::with_bits(bits)
            .expected_items(items)
            .seed(SEED)
    };
    let blocked = |kernel| {
        let filter = BlockedBloomFilter::with_bits(bits)
            .expected_items(items)
            .seed(SEED)
            .kernel(kernel)
            .build()
            .expect("valid sizes");
        FilterlabSubject::new(filter).boxed()
    };
    let mut list = vec![Named {
        name: "BlockedBloomFilter",
        filter: blocked(Kernel::detect()),
    }];
    if Kernel::detect() != Kernel::Scalar {
        list.push(Named {
            name: "BlockedBloomFilter (scalar)",
            filter: blocked(Kernel::Scalar),
        });
    }
    list.extend([
        Named {
            name: "BloomFilter",
            filter: FilterlabSubject::new(standard().build().expect("valid sizes")).boxed(),
        },
        Named {
            name: "AtomicBloomFilter",
            filter: FilterlabSubject::new(standard().build_atomic().expect("valid sizes")).boxed(),
        },
        // Given the same XXH3 key hash as this crate's filters.
        Named {
            name: "sbbf-rs-safe (split block)",
            filter: PeerSubject::boxed(SplitBlock::with_bits_per_key(bits_per_key, items, SEED)),
        },
        // With foldhash, its fastest hasher.
        Named {
            name: "fastbloom (standard)",
            filter: PeerSubject::boxed(FastBloom::with_bits(bits, items, SEED)),
        },
    ]);
    list
}

/// Nanoseconds per key of one call of `lookup` over `keys`, after an
/// untimed call: the filters together exceed the caches, so the first pass
/// after another filter ran would measure cache refills instead.
fn time(keys: &[u64], lookup: impl Fn(&[u64]) -> Option<u64>) -> Option<f64> {
    black_box(lookup(keys)?);
    let start = Instant::now();
    let found = lookup(keys)?;
    let elapsed = start.elapsed();
    black_box(found);
    Some(elapsed.as_nanos() as f64 / keys.len() as f64)
}

fn main() {
    let mut args = ExampleArgs::from_env();
    let items: u64 = args.next_or(10_000_000, "ITEMS");
    let rounds: usize = args.next_or(7, "ROUNDS");
    let sizes: Vec<u64> = args.next_raw().map_or_else(
        || vec![8, 10, 12, 16, 20],
        |a| a.split(',').map(|b| b.parse().expect("BITS")).collect(),
    );
    let lookups = LOOKUPS.min(items);
    let absent: Vec<u64> = (0..LOOKUPS).map(|i| query_key(7, i)).collect();
    let present: Vec<u64> = (0..lookups)
        .map(|i| insert_key(7, i * (items / lookups)))
        .collect();
    println!(
        "{items} u64 keys; FPP over {LOOKUPS} never-inserted keys; ns/key = min over {rounds} alternating rounds"
    );
    println!(
        "\n{:<28} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "filter", "bits/key", "FPP", "theory", "insert", "neg ns", "neg bat", "pos ns", "pos bat"
    );
    let all_keys: Vec<u64> = (0..items).map(|i| insert_key(7, i)).collect();
    for bits_per_key in sizes {
        let mut list = subjects(items, bits_per_key);
        // [insert, negative, negative batched, positive, positive batched] per filter.
        let mut best = vec![[f64::INFINITY; 5]; list.len()];
        let mut refused = Vec::new();
        for _ in 0..rounds {
            for (subject, best) in list.iter_mut().zip(&mut best) {
                // Empties the filter and inserts every key one at a time,
                // using each insert's answer (as RedisBloom's BF.ADD reports it).
                let filter = subject.filter.as_mut();
                filter.clear();
                let start = Instant::now();
                black_box(filter.insert_keys(&all_keys, Mode::OneKey, &mut refused));
                best[0] = best[0].min(start.elapsed().as_nanos() as f64 / items as f64);
                let filter = &*filter;
                let batched = filter.has_batch_api();
                let count = |mode: Mode| {
                    move |keys: &[u64]| {
                        (mode == Mode::OneKey || batched)
                            .then(|| filter.count_contained(keys, mode))
                    }
                };
                let runs = [
                    time(&absent, count(Mode::OneKey)),
                    time(&absent, count(Mode::Batched)),
                    time(&present, count(Mode::OneKey)),
                    time(&present, count(Mode::Batched)),
                ];
                for (slot, run) in best[1..].iter_mut().zip(runs) {
                    *slot = slot.min(run.unwrap_or(f64::NAN));
                }
            }
        }
        assert!(refused.is_empty(), "a filter refused keys");
        for (subject, best) in list.iter().zip(&best) {
            let filter = &subject.filter;
            let false_positives = filter.count_contained(&absent, Mode::OneKey);
            let fpp = false_positives as f64 / LOOKUPS as f64;
            let theory = filter.theory(items).map_or_else(
                || "-".to_owned(),
                |t| format!("{:.3}%", 100.0 * Theory::fpp(t)),
            );
            let cell = |ns: f64| {
                if ns.is_finite() {
                    format!("{ns:.1}")
                } else {
                    "-".to_owned()
                }
            };
            println!(
                "{:<28} {:>9.2} {:>8.3}% {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
                subject.name,
                filter.memory_usage() as f64 * 8.0 / items as f64,
                100.0 * fpp,
                theory,
                cell(best[0]),
                cell(best[1]),
                cell(best[2]),
                cell(best[3]),
                cell(best[4]),
            );
        }
        println!();
    }
}
