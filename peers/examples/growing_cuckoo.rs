//! A growing `CuckooFilter` beside scalable_cuckoo_filter 0.5, both built
//! for INITIAL keys at FPP P and fed GROWTH times that: at every doubling
//! the bits per item and the FPP measured on never-inserted keys (99%
//! Wilson interval), and at the end one-key positive and negative lookups,
//! the filters taking turns in ROUNDS rounds (the order rotating), each
//! round printing ours / theirs. Besides the default configuration
//! (tightening 0.85, expansion 2), variants of the tightening ratio r and
//! the expansion e, the measurements the defaults were chosen by.
//!
//! ```text
//! cargo run --release -p filterlab-peers --features bench --example growing_cuckoo [-- P [INITIAL [GROWTH [ROUNDS]]]]
//! ```
//!
//! Defaults: P = 0.01, 1,000 keys, 1000× growth, 9 rounds. Keys are
//! hashed inside the timing, each filter by its own hasher.

use std::hint::black_box;
use std::time::Instant;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::theory::wilson_interval;
use filterlab_cuckoo::{CuckooFilter, DEFAULT_TIGHTENING};
use filterlab_peers::bench::ExampleArgs;
use filterlab_peers::{FilterlabSubject, Mode, PeerSubject, ScalableCuckoo, Subject, Workload};

/// The seed of every filter and key stream.
const SEED: u64 = 7;

/// Keys looked up per pass, present and absent each.
const LOOKUPS: u64 = 200_000;

/// The configurations compared: (tightening, expansion); the first is the
/// default.
const VARIANTS: [(f64, u32); 7] = [
    (DEFAULT_TIGHTENING, 2),
    (0.5, 2),
    (0.7, 2),
    (0.9, 2),
    (0.95, 2),
    (DEFAULT_TIGHTENING, 3),
    (DEFAULT_TIGHTENING, 4),
];

/// A subject and what it measured at each doubling.
struct Grown {
    name: String,
    subject: Box<dyn Subject>,
    /// (keys, bits per item, measured FPP, interval low, interval high).
    points: Vec<(u64, f64, f64, f64, f64)>,
    /// Inserts refused.
    refused: usize,
    /// ns per positive and negative lookup, per round.
    times: Vec<[f64; 2]>,
}

/// Inserts `keys` in doublings from `initial`, measuring at each.
fn grow(
    name: String,
    mut subject: Box<dyn Subject>,
    keys: &[u64],
    initial: u64,
    fpp: f64,
) -> Grown {
    let mut points = Vec::new();
    let mut refused = Vec::new();
    let mut held = 0;
    let mut next = initial;
    let queries = ((4000.0 / fpp) as u64).min(4_000_000);
    loop {
        let to = next.min(keys.len() as u64);
        subject.insert_keys(
            &keys[held as usize..to as usize],
            Mode::Batched,
            &mut refused,
        );
        held = to;
        let absent: Vec<u64> = (0..queries).map(|i| query_key(SEED ^ held, i)).collect();
        let positives = subject.count_contained(&absent, Mode::Batched);
        let (low, high) = wilson_interval(positives, queries, 0.99);
        let bits = subject.memory_usage() as f64 * 8.0 / held as f64;
        points.push((held, bits, positives as f64 / queries as f64, low, high));
        if held == keys.len() as u64 {
            break;
        }
        next *= 2;
    }
    let present = subject.count_contained(keys, Mode::Batched);
    assert_eq!(present, keys.len() as u64, "{name} lost keys");
    Grown {
        name,
        subject,
        points,
        refused: refused.len(),
        times: Vec::new(),
    }
}

/// ns per key of one-key lookups of `keys`, after an untimed pass (the
/// filters together exceed the caches).
fn time_lookups(subject: &dyn Subject, keys: &[u64]) -> f64 {
    black_box(subject.count_contained(keys, Mode::OneKey));
    let start = Instant::now();
    black_box(subject.count_contained(black_box(keys), Mode::OneKey));
    start.elapsed().as_nanos() as f64 / keys.len() as f64
}

/// min – max (median) of `values`.
fn spread(values: &mut [f64]) -> String {
    values.sort_by(f64::total_cmp);
    format!(
        "{:.2} – {:.2} ({:.2})",
        values[0],
        values[values.len() - 1],
        values[values.len() / 2]
    )
}

fn main() -> Result<(), filterlab_cuckoo::Error> {
    let mut args = ExampleArgs::from_env();
    let fpp: f64 = args.next_or(0.01, "P");
    let initial: u64 = args.next_or(1000, "INITIAL");
    let growth: u64 = args.next_or(1000, "GROWTH");
    let rounds: usize = args.next_or(9, "ROUNDS");
    let total = initial * growth;
    let keys: Vec<u64> = (0..total).map(|i| insert_key(SEED, i)).collect();
    let workload = Workload {
        items: initial,
        fpp,
        seed: SEED,
    };
    let mut grown = Vec::new();
    for (tightening, expansion) in VARIANTS {
        let filter = CuckooFilter::with_fpp(fpp)
            .expected_items(initial)
            .expansion(expansion)
            .tightening(tightening)
            .seed(SEED)
            .build()?;
        let name = format!("CuckooFilter r={tightening} e={expansion}");
        let subject = FilterlabSubject::new(filter).boxed();
        grown.push(grow(name, subject, &keys, initial, fpp));
    }
    let peer = PeerSubject::boxed(ScalableCuckoo::new(&workload));
    grown.push(grow(
        "scalable_cuckoo_filter".to_owned(),
        peer,
        &keys,
        initial,
        fpp,
    ));

    println!(
        "P = {fpp:e}, {initial} keys grown {growth}×; bits/item and measured FPP [99% interval] at each doubling"
    );
    for one in &grown {
        println!("{} ({} refused):", one.name, one.refused);
        for &(held, bits, measured, low, high) in &one.points {
            let mark = if low > fpp { "  ABOVE P" } else { "" };
            println!(
                "  {held:>10} keys: {bits:6.2} bits/item, FPP {measured:.3e} [{low:.3e}, {high:.3e}]{mark}"
            );
        }
    }

    let present: Vec<u64> = (0..LOOKUPS)
        .map(|i| keys[(i * 7919 % total) as usize])
        .collect();
    let absent: Vec<u64> = (0..LOOKUPS).map(|i| query_key(SEED ^ 0xab5e, i)).collect();
    let count = grown.len();
    for round in 0..rounds {
        for turn in 0..count {
            let one = &mut grown[(round + turn) % count];
            let times = [
                time_lookups(one.subject.as_ref(), &present),
                time_lookups(one.subject.as_ref(), &absent),
            ];
            one.times.push(times);
        }
    }
    let peer = count - 1;
    println!(
        "\none-key lookups at {total} keys, ns per key, {rounds} rounds: positive / negative; ratio to scalable_cuckoo_filter per round, min – max (median)"
    );
    for one in &grown {
        let mut ratios: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for (mine, theirs) in one.times.iter().zip(&grown[peer].times) {
            for kind in 0..2 {
                ratios[kind].push(mine[kind] / theirs[kind]);
            }
        }
        let mut ns: [Vec<f64>; 2] = [0, 1].map(|kind| one.times.iter().map(|t| t[kind]).collect());
        let [positive, negative] = &mut ratios;
        println!(
            "{:<34} {} / {} ns; ratio {} / {}",
            one.name,
            spread(&mut ns[0]),
            spread(&mut ns[1]),
            spread(positive),
            spread(negative)
        );
    }
    Ok(())
}
