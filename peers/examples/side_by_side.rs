//! One key at a time, side by side with the peers: `BloomFilter` against
//! fastbloom 0.17 (foldhash) at the same bits per key, and
//! `BlockedBloomFilter` and `SplitBlockBloomFilter` against sbbf-rs-safe 0.3
//! (split blocks, fed this crate's XXH3 key hash) at 10 bits per key (the
//! split-block filter then has sbbf's very layout and FPP);
//! `SplitBlockBloomFilter` sized for the blocked filter's exact FPP against
//! the blocked filter (the same FPP, fewer or more bits);
//! `AtomicBloomFilter`'s one-thread insert beside the plain filter's.
//!
//! Every filter lives in the one process and is measured through
//! `filterlab_peers::Subject` (one dynamic call per pass over the keys). Each
//! round empties every filter and inserts the n keys one at a time (each
//! insert's answer used, BF.ADD's work), then looks up a million inserted
//! and a million never-inserted keys one at a time; the filters take turns,
//! the order rotating by one each round, and each cell is the minimum over
//! the rounds, so a noisy machine slows every filter alike rather than
//! whichever ran during a burst. The FPP is measured on the never-inserted
//! keys. Each pair's ratios are printed twice: of the minima, and as the
//! median of the per-round ratios (the two filters timed in the same round)
//! with every round's.
//!
//! ```text
//! cargo run --release -p filterlab-peers --example side_by_side [-- ITEMS,... [ROUNDS]]
//! ```
//!
//! Defaults: 10,000,000 and 100,000,000 items, 15 rounds.

use filterlab_core::Membership;
use std::hint::black_box;

use filterlab_bloom::{BlockedBloomFilter, BloomFilter, Filter, Kernel, SplitBlockBloomFilter};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_peers::bench::{BestOfRounds, take_turns};
use filterlab_peers::{FastBloom, FilterlabSubject, Mode, PeerSubject, SplitBlock, Subject};

/// Lookups per timing, and never-inserted keys per FPP measurement.
const LOOKUPS: u64 = 1_000_000;

/// The seed of every filter's hasher.
const SEED: u64 = 1;

/// The timed cells: ns per key of insert, positive and negative lookups.
const CELLS: usize = 3;

/// A filter under test, named.
fn named(name: impl Into<String>, filter: Box<dyn Subject>) -> BestOfRounds {
    BestOfRounds::new(name, filter, CELLS)
}

/// One of this crate's filters as a subject.
fn ours<F: Filter + 'static>(filter: F) -> Box<dyn Subject> {
    FilterlabSubject::new(filter).boxed()
}

/// The filters of one run at `items` keys, and the pairs to compare (ours,
/// theirs) by index.
fn subjects(items: u64) -> (Vec<BestOfRounds>, [(usize, usize); 5]) {
    // The standard filter sized for 1%: 9.59 bits per key; fastbloom gets
    // exactly as many bits.
    let standard = || BloomFilter::with_fpp(0.01).expected_items(items).seed(SEED);
    let plain = standard().build().expect("valid sizes");
    let bits = plain.num_bits();
    let blocked = BlockedBloomFilter::with_bits(10 * items)
        .expected_items(items)
        .seed(SEED)
        .kernel(Kernel::detect())
        .build()
        .expect("valid sizes");
    let split = |builder: filterlab_bloom::SplitBlockBloomBuilder| {
        builder
            .expected_items(items)
            .seed(SEED)
            .kernel(Kernel::detect())
            .build()
            .expect("valid sizes")
    };
    let blocked_fpp = blocked.theoretical_fpp(items).expect("an exact formula");
    let split_ten_bits = split(SplitBlockBloomFilter::with_bits(10 * items));
    let split_same_fpp = split(SplitBlockBloomFilter::with_fpp(blocked_fpp));
    let list = vec![
        named("BloomFilter", ours(plain)),
        named(
            "fastbloom 0.17 (foldhash)",
            PeerSubject::boxed(FastBloom::with_bits(bits, items, SEED)),
        ),
        named(
            format!("BlockedBloomFilter ({:?})", Kernel::detect()),
            ours(blocked),
        ),
        named(
            "sbbf-rs-safe 0.3 (XXH3)",
            PeerSubject::boxed(SplitBlock::with_bits_per_key(10, items, SEED)),
        ),
        named(
            "AtomicBloomFilter (1 thread)",
            ours(standard().build_atomic().expect("valid sizes")),
        ),
        named(
            format!("SplitBlockBloomFilter ({:?})", Kernel::detect()),
            ours(split_ten_bits),
        ),
        named(
            format!("SplitBlock at p={:.2}%", 100.0 * blocked_fpp),
            ours(split_same_fpp),
        ),
    ];
    (list, [(0, 1), (2, 3), (5, 3), (6, 2), (4, 0)])
}

/// One round of one filter: refill it key by key, then look up; keeps the
/// minimum of each cell.
fn round(subject: &mut BestOfRounds, keys: &[u64], present: &[u64], absent: &[u64]) {
    subject.subject.clear();
    let mut refused = Vec::new();
    subject.time(0, keys.len(), |filter| {
        filter.insert_keys(black_box(keys), Mode::OneKey, &mut refused)
    });
    assert!(refused.is_empty(), "{} refused keys", subject.name);
    subject.time_lookups(1, present, Mode::OneKey);
    subject.time_lookups(2, absent, Mode::OneKey);
}

fn run(items: u64, rounds: usize) {
    let keys: Vec<u64> = (0..items).map(|i| insert_key(7, i)).collect();
    let lookups = LOOKUPS.min(items);
    let present: Vec<u64> = (0..lookups)
        .map(|i| insert_key(7, i * (items / lookups)))
        .collect();
    let absent: Vec<u64> = (0..LOOKUPS).map(|i| query_key(7, i)).collect();
    let (mut list, pairs) = subjects(items);
    take_turns(&mut list, rounds, |subject| {
        round(subject, &keys, &present, &absent);
    });
    println!(
        "\nn = {items:.0e}: ns/key, minimum over {rounds} rounds (order rotating); FPP on {LOOKUPS} never-inserted keys"
    );
    println!(
        "{:<30} {:>9} {:>8} {:>8} {:>8} {:>8}",
        "filter", "bits/key", "FPP", "insert", "pos", "neg"
    );
    for subject in &list {
        let filter = &subject.subject;
        let fpp = filter.count_contained(&absent, Mode::OneKey) as f64 / LOOKUPS as f64;
        let [insert, positive, negative] = [0, 1, 2].map(|cell| subject.best(cell));
        println!(
            "{:<30} {:>9.2} {:>7.3}% {insert:>8.2} {positive:>8.2} {negative:>8.2}",
            subject.name,
            filter.memory_usage() as f64 * 8.0 / items as f64,
            100.0 * fpp,
        );
    }
    println!("ratios (ours / theirs; below 1.00 is faster), of the minima:");
    for &(ours, theirs) in &pairs {
        let (a, b) = (&list[ours], &list[theirs]);
        let ratio = |cell: usize| a.best(cell) / b.best(cell);
        println!(
            "  {} / {}: insert {:.2}, pos {:.2}, neg {:.2}",
            a.name,
            b.name,
            ratio(0),
            ratio(1),
            ratio(2)
        );
    }
    println!("per-round ratios (the two timed in the same round), median and every round:");
    for (ours, theirs) in pairs {
        let (a, b) = (&list[ours], &list[theirs]);
        println!("  {} / {}:", a.name, b.name);
        for (cell, label) in ["insert", "pos", "neg"].into_iter().enumerate() {
            let mut ratios: Vec<f64> = a
                .rounds(cell)
                .iter()
                .zip(b.rounds(cell))
                .map(|(mine, theirs)| mine / theirs)
                .collect();
            let listed: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            ratios.sort_by(f64::total_cmp);
            let median = ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN);
            println!(
                "    {label:<6} median {median:.2}  rounds {}",
                listed.join(" ")
            );
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let sizes: Vec<u64> = args.next().map_or_else(
        || vec![10_000_000, 100_000_000],
        |a| {
            a.split(',')
                .map(|n| n.parse::<f64>().expect("ITEMS") as u64)
                .collect()
        },
    );
    let rounds: usize = args.next().map_or(15, |a| a.parse().expect("ROUNDS"));
    for items in sizes {
        run(items, rounds);
    }
}
