//! A quick single-threaded speed and memory figure after 100× growth: the
//! measurement behind the default layer type.
//!
//! Grows scalable filters with standard and with blocked layers from 10,000
//! to 1,000,000 keys at P = 1e-2, then times positive and negative lookups
//! one key at a time and batched (`contains_many`, hashing included in
//! both), and reports memory per item and the measured FPP; standard and
//! blocked Bloom filters sized for the final 1,000,000 keys are timed
//! beside them for reference. Rounds alternate between the filters and the
//! minimum over rounds is reported, so a busy machine slows all alike.
//!
//! ```text
//! cargo run --release -p filterlab-scalable --example scalable_speed [-- INITIAL FINAL ROUNDS]
//! ```

use std::hint::black_box;
use std::time::Instant;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_scalable::{BlockedBloomFilter, BloomFilter, Filter, ScalableBloomFilter};

const FPP: f64 = 1e-2;
const SEED: u64 = 0x5eed;

struct Subject {
    name: String,
    filter: Box<dyn Lookups>,
    /// Nanoseconds per key: positive, negative, positive batched, negative batched.
    best: [f64; 4],
}

/// Lookups through monomorphized loops (one dynamic call per key set).
trait Lookups {
    fn count(&self, keys: &[u64]) -> usize;
    fn count_batched(&self, keys: &[u64]) -> usize;
    fn bits_per_item(&self, items: u64) -> f64;
    fn layers(&self) -> usize;
}

impl<F: Filter> Lookups for F {
    fn count(&self, keys: &[u64]) -> usize {
        keys.iter()
            .filter(|&key| self.contains(black_box(key)))
            .count()
    }
    fn count_batched(&self, keys: &[u64]) -> usize {
        self.contains_many(black_box(keys))
            .iter()
            .filter(|&&hit| hit)
            .count()
    }
    fn bits_per_item(&self, items: u64) -> f64 {
        self.memory_usage() as f64 * 8.0 / items as f64
    }
    fn layers(&self) -> usize {
        1
    }
}

/// A scalable filter, reporting its layer count.
struct Scalable<L: filterlab_scalable::Layer>(ScalableBloomFilter<L>);

impl<L: filterlab_scalable::Layer> Lookups for Scalable<L> {
    fn count(&self, keys: &[u64]) -> usize {
        self.0.count(keys)
    }
    fn count_batched(&self, keys: &[u64]) -> usize {
        self.0.count_batched(keys)
    }
    fn bits_per_item(&self, items: u64) -> f64 {
        self.0.bits_per_item(items)
    }
    fn layers(&self) -> usize {
        self.0.layers().len()
    }
}

fn grown<L: filterlab_scalable::Layer>(initial: u64, keys: &[u64]) -> Scalable<L> {
    let mut filter = ScalableBloomFilter::with_fpp(FPP)
        .layers::<L>()
        .initial_capacity(initial)
        .build()
        .expect("valid parameters");
    let started = Instant::now();
    filter.insert_many(keys).expect("no caps are reached");
    eprintln!(
        "grew ScalableBloomFilter<{}> to {} keys in {:.2} s",
        L::NAME,
        keys.len(),
        started.elapsed().as_secs_f64()
    );
    Scalable(filter)
}

fn time_per_key(keys: &[u64], run: impl Fn(&[u64]) -> usize) -> (f64, usize) {
    let started = Instant::now();
    let hits = run(keys);
    (
        started.elapsed().as_nanos() as f64 / keys.len() as f64,
        hits,
    )
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|arg| arg.parse().expect("numbers: INITIAL FINAL ROUNDS"))
        .collect();
    let initial = args.first().copied().unwrap_or(10_000);
    let items = args.get(1).copied().unwrap_or(1_000_000);
    let rounds = args.get(2).copied().unwrap_or(7);
    let positives: Vec<u64> = (0..items).map(|i| insert_key(SEED, i)).collect();
    let negatives: Vec<u64> = (0..items).map(|i| query_key(SEED, i)).collect();

    let mut subjects = vec![
        Subject {
            name: format!("ScalableBloomFilter<BlockedBloomFilter> grown {initial}->{items}"),
            filter: Box::new(grown::<BlockedBloomFilter>(initial, &positives)),
            best: [f64::INFINITY; 4],
        },
        Subject {
            name: format!("ScalableBloomFilter<BloomFilter> grown {initial}->{items}"),
            filter: Box::new(grown::<BloomFilter>(initial, &positives)),
            best: [f64::INFINITY; 4],
        },
    ];
    let mut bloom = BloomFilter::with_fpp(FPP)
        .expected_items(items)
        .build()
        .expect("valid");
    bloom.extend(&positives);
    let mut blocked = BlockedBloomFilter::with_fpp(FPP)
        .expected_items(items)
        .build()
        .expect("valid");
    blocked.extend(&positives);
    subjects.push(Subject {
        name: format!("BloomFilter sized for {items}"),
        filter: Box::new(bloom),
        best: [f64::INFINITY; 4],
    });
    subjects.push(Subject {
        name: format!("BlockedBloomFilter sized for {items}"),
        filter: Box::new(blocked),
        best: [f64::INFINITY; 4],
    });

    let mut false_positives = vec![0; subjects.len()];
    for _ in 0..rounds {
        for (subject, fp) in subjects.iter_mut().zip(&mut false_positives) {
            let filter = &subject.filter;
            let runs = [
                time_per_key(&positives, |keys| filter.count(keys)),
                time_per_key(&negatives, |keys| filter.count(keys)),
                time_per_key(&positives, |keys| filter.count_batched(keys)),
                time_per_key(&negatives, |keys| filter.count_batched(keys)),
            ];
            assert_eq!(runs[0].1, positives.len(), "a false negative");
            assert_eq!(runs[2].1, positives.len(), "a false negative");
            assert_eq!(runs[1].1, runs[3].1, "batched and single lookups disagree");
            *fp = runs[1].1;
            for (best, (ns, _)) in subject.best.iter_mut().zip(runs) {
                *best = best.min(ns);
            }
        }
    }
    println!(
        "{items} u64 keys at P = {FPP:e}; ns per lookup (hashing included), min of {rounds} rounds"
    );
    println!(
        "{:<58} {:>6} {:>9} {:>11} {:>7} {:>7} {:>7} {:>7}",
        "filter", "layers", "bits/key", "FPP", "pos", "neg", "pos bat", "neg bat"
    );
    for (subject, fp) in subjects.iter().zip(&false_positives) {
        println!(
            "{:<58} {:>6} {:>9.2} {:>11.3e} {:>7.1} {:>7.1} {:>7.1} {:>7.1}",
            subject.name,
            subject.filter.layers(),
            subject.filter.bits_per_item(items),
            *fp as f64 / items as f64,
            subject.best[0],
            subject.best[1],
            subject.best[2],
            subject.best[3]
        );
    }
}
