//! Speed against accuracy: the standard, blocked and atomic Bloom filters at
//! several sizes, beside split-block (sbbf-rs-safe) and fastbloom filters of
//! the same size, on the same keys.
//!
//! For each bits-per-key setting it builds every filter with n keys, measures
//! the FPP on never-inserted keys next to the filter's own theory, and times
//! inserts (refilling the emptied filter key by key, each insert's answer
//! used) and lookups in rounds that alternate between the filters (the minimum over
//! rounds is reported, so a noisy machine slows every filter alike rather
//! than whichever ran during a burst).
//!
//! ```text
//! cargo run --release -p filterlab-bloom --example tradeoff [-- ITEMS [ROUNDS [BITS,...]]]
//! ```
//!
//! Defaults: 10,000,000 items, 7 rounds, 8,10,12,16,20 bits per key.

use std::hint::black_box;
use std::time::Instant;

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, Filter, Kernel};
use filterlab_core::KeyHasher;
use filterlab_core::keys::{insert_key, query_key};

/// Lookups per timing and never-inserted keys per FPP measurement.
const LOOKUPS: u64 = 1_000_000;

/// One filter under test, timed through monomorphized loops (one dynamic
/// call per million lookups, not per lookup).
trait Subject {
    fn name(&self) -> String;
    fn bits(&self) -> u64;
    /// The filter's own FPP prediction at `items`, if it has one.
    fn theory(&self, items: u64) -> Option<f64>;
    fn count(&self, keys: &[u64]) -> usize;
    /// Batched lookups, for filters that have them.
    fn count_batched(&self, keys: &[u64]) -> Option<usize>;
    /// Empties the filter and inserts `keys` one at a time, using each
    /// insert's answer (as RedisBloom's BF.ADD reports it); how many were new.
    fn refill(&mut self, keys: &[u64]) -> usize;
}

/// This crate's filters, through the `Filter` trait.
struct Ours<F> {
    name: &'static str,
    filter: F,
}

impl<F: Filter> Subject for Ours<F> {
    fn name(&self) -> String {
        self.name.to_owned()
    }
    fn bits(&self) -> u64 {
        self.filter.memory_usage() as u64 * 8
    }
    fn theory(&self, items: u64) -> Option<f64> {
        self.filter.theoretical_fpp(items)
    }
    fn count(&self, keys: &[u64]) -> usize {
        keys.iter()
            .filter(|&key| self.filter.contains(black_box(key)))
            .count()
    }
    fn count_batched(&self, keys: &[u64]) -> Option<usize> {
        Some(
            self.filter
                .contains_many(black_box(keys))
                .iter()
                .filter(|&&hit| hit)
                .count(),
        )
    }
    fn refill(&mut self, keys: &[u64]) -> usize {
        self.filter.clear();
        let hasher = *self.filter.hasher();
        keys.iter()
            .filter(|&key| matches!(self.filter.insert_hash(hasher.hash(key)), Ok(true)))
            .count()
    }
}

/// sbbf-rs-safe, given the same XXH3 key hash as this crate's filters, and
/// its bits per key (to rebuild it empty).
struct Sbbf(sbbf_rs_safe::Filter, KeyHasher, usize);

impl Subject for Sbbf {
    fn name(&self) -> String {
        "sbbf-rs-safe (split block)".to_owned()
    }
    fn bits(&self) -> u64 {
        self.0.as_bytes().len() as u64 * 8
    }
    fn theory(&self, _: u64) -> Option<f64> {
        None
    }
    fn count(&self, keys: &[u64]) -> usize {
        keys.iter()
            .filter(|&&key| self.0.contains_hash(self.1.hash_u64(black_box(key))))
            .count()
    }
    fn count_batched(&self, _: &[u64]) -> Option<usize> {
        None
    }
    fn refill(&mut self, keys: &[u64]) -> usize {
        self.0 = sbbf_rs_safe::Filter::new(self.2, keys.len());
        // sbbf answers whether the key's bits were all set already.
        keys.iter()
            .filter(|&&key| !self.0.insert_hash(self.1.hash_u64(key)))
            .count()
    }
}

/// fastbloom with foldhash, its fastest hasher.
struct FastBloom(fastbloom::BloomFilter<foldhash::fast::RandomState>);

impl Subject for FastBloom {
    fn name(&self) -> String {
        "fastbloom (standard)".to_owned()
    }
    fn bits(&self) -> u64 {
        self.0.num_bits() as u64
    }
    fn theory(&self, _: u64) -> Option<f64> {
        None
    }
    fn count(&self, keys: &[u64]) -> usize {
        keys.iter()
            .filter(|&key| self.0.contains(black_box(key)))
            .count()
    }
    fn count_batched(&self, _: &[u64]) -> Option<usize> {
        None
    }
    fn refill(&mut self, keys: &[u64]) -> usize {
        self.0.clear();
        // fastbloom answers whether the key was (maybe) present already.
        keys.iter().filter(|&key| !self.0.insert(key)).count()
    }
}

fn blocked(items: u64, bits_per_key: u64, kernel: Kernel) -> BlockedBloomFilter {
    let mut filter = BlockedBloomFilter::with_bits(bits_per_key * items)
        .expected_items(items)
        .seed(1)
        .kernel(kernel)
        .build()
        .expect("valid sizes");
    filter.extend((0..items).map(|i| insert_key(7, i)));
    filter
}

/// Every filter at `bits_per_key`, each holding the same `items` keys.
fn subjects(items: u64, bits_per_key: u64) -> Vec<Box<dyn Subject>> {
    let keys = || (0..items).map(|i| insert_key(7, i));
    let mut standard = BloomFilter::with_bits(bits_per_key * items)
        .expected_items(items)
        .seed(1)
        .build()
        .expect("valid sizes");
    standard.extend(keys());
    let atomic = standard.clone().into_atomic();
    let mut sbbf = sbbf_rs_safe::Filter::new(bits_per_key as usize, items as usize);
    let hasher = KeyHasher::new(1);
    for key in keys() {
        sbbf.insert_hash(hasher.hash_u64(key));
    }
    let mut fast = fastbloom::BloomFilter::with_num_bits((bits_per_key * items) as usize)
        .hasher(foldhash::fast::RandomState::default())
        .expected_items(items as usize);
    for key in keys() {
        fast.insert(&key);
    }
    let mut list: Vec<Box<dyn Subject>> = vec![Box::new(Ours {
        name: "BlockedBloomFilter",
        filter: blocked(items, bits_per_key, Kernel::detect()),
    })];
    if Kernel::detect() != Kernel::Scalar {
        list.push(Box::new(Ours {
            name: "BlockedBloomFilter (scalar)",
            filter: blocked(items, bits_per_key, Kernel::Scalar),
        }));
    }
    list.push(Box::new(Ours {
        name: "BloomFilter",
        filter: standard,
    }));
    list.push(Box::new(Ours {
        name: "AtomicBloomFilter",
        filter: atomic,
    }));
    list.push(Box::new(Sbbf(sbbf, hasher, bits_per_key as usize)));
    list.push(Box::new(FastBloom(fast)));
    list
}

/// Nanoseconds per key of one call of `lookup` over `keys`, after an
/// untimed call: the filters together exceed the caches, so the first pass
/// after another filter ran would measure cache refills instead.
fn time(keys: &[u64], lookup: impl Fn(&[u64]) -> Option<usize>) -> Option<f64> {
    black_box(lookup(keys)?);
    let start = Instant::now();
    let found = lookup(keys)?;
    let elapsed = start.elapsed();
    black_box(found);
    Some(elapsed.as_nanos() as f64 / keys.len() as f64)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let items: u64 = args
        .next()
        .map_or(10_000_000, |a| a.parse().expect("ITEMS"));
    let rounds: usize = args.next().map_or(7, |a| a.parse().expect("ROUNDS"));
    let sizes: Vec<u64> = args.next().map_or_else(
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
        for _ in 0..rounds {
            for (subject, best) in list.iter_mut().zip(&mut best) {
                let start = Instant::now();
                black_box(subject.refill(&all_keys));
                best[0] = best[0].min(start.elapsed().as_nanos() as f64 / items as f64);
                let subject = &**subject;
                let runs = [
                    time(&absent, |keys| Some(subject.count(keys))),
                    time(&absent, |keys| subject.count_batched(keys)),
                    time(&present, |keys| Some(subject.count(keys))),
                    time(&present, |keys| subject.count_batched(keys)),
                ];
                for (slot, run) in best[1..].iter_mut().zip(runs) {
                    *slot = slot.min(run.unwrap_or(f64::NAN));
                }
            }
        }
        for (subject, best) in list.iter().zip(&best) {
            let false_positives = subject.count(&absent);
            let fpp = false_positives as f64 / LOOKUPS as f64;
            let theory = subject
                .theory(items)
                .map_or_else(|| "-".to_owned(), |t| format!("{:.3}%", 100.0 * t));
            let cell = |ns: f64| {
                if ns.is_finite() {
                    format!("{ns:.1}")
                } else {
                    "-".to_owned()
                }
            };
            println!(
                "{:<28} {:>9.2} {:>8.3}% {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
                subject.name(),
                subject.bits() as f64 / items as f64,
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
