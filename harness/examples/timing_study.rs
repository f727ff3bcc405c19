//! Why the speed experiment and the sweep disagreed: each difference
//! between their ways of timing a one-key negative lookup, measured on its
//! own against one baseline in the same process, A and B alternating, the
//! median ratio over the repetitions printed beside its range.
//!
//! The baseline is the harness's one method ([`timing::lookups`]): a
//! filter built once, warmed by an untimed pass, timed over a slice of
//! 10^6 never-inserted keys built beforehand, charged the thread's CPU time.
//! Each factor changes one thing:
//!
//! - `cold`: no warm-up, caches flushed first by reading 64 MiB (what the
//!   sweep's rounds did: twenty other filters timed in between);
//! - `fill+positive`: the filter is the last of ⌈10^6/n⌉ fills and has just
//!   served 10^6 positive lookups, no warm-up (the speed experiment);
//! - `chunked`: the keys made 4096 at a time just before each chunk, one
//!   clock reading per chunk (the growth experiment);
//! - `contended`: two threads spinning on the two cores meanwhile (a
//!   neighbour on a shared machine), charged wall time and CPU time.
//!
//! `cargo run --release -p filterlab-harness --example timing_study [-- REPS]`

use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_harness::experiments::timing::{self, Elapsed, measure, median};
use filterlab_harness::registry::{self, Build, Entry};
use filterlab_peers::{Mode, Subject, Workload};

const LOOKUPS: u64 = 1_000_000;
const FILTERS: [&str; 6] = [
    "BloomFilter",
    "BlockedBloomFilter",
    "SplitBlockBloomFilter",
    "sbbf-rs-safe",
    "xorf-BinaryFuse8",
    "cuckoofilter",
];

fn ns(elapsed: Elapsed, operations: u64, wall: bool) -> f64 {
    let seconds = if wall {
        elapsed.wall
    } else {
        elapsed.seconds()
    };
    seconds * 1e9 / operations as f64
}

/// A new filter of `entry` holding `keys`, built `rounds` times (the last kept).
fn build(entry: &Entry, workload: &Workload, keys: &[u64], rounds: u64) -> Box<dyn Subject> {
    let mut last = None;
    for _ in 0..rounds {
        drop(last.take());
        let subject = match entry.build {
            Build::Empty(build) => {
                let mut subject = build(workload).expect("builds");
                subject.insert_keys(keys, Mode::OneKey, &mut Vec::new());
                subject
            }
            Build::FromKeys(build) => build(workload, keys).expect("builds"),
        };
        last = Some(subject);
    }
    last.expect("one round")
}

fn flush(buffer: &mut [u64]) {
    for (i, word) in buffer.iter_mut().enumerate() {
        *word = word.wrapping_add(i as u64);
    }
    black_box(buffer);
}

/// The factors, in the order [`repetition`] measures them.
const FACTORS: [&str; 5] = [
    "cold",
    "fill+positive",
    "chunked",
    "contended wall",
    "contended cpu",
];

/// One size's keys and workload.
struct Workbench {
    seed: u64,
    inserted: Vec<u64>,
    negatives: Vec<u64>,
    positives: Vec<u64>,
    workload: Workload,
}

/// Runs `work` while two threads spin on the machine's two cores.
fn contended<T>(work: impl FnOnce() -> T) -> T {
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..2)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = black_box(x.wrapping_mul(31).wrapping_add(1));
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let result = work();
    stop.store(true, Ordering::Relaxed);
    for spinner in spinners {
        spinner.join().expect("spinner");
    }
    result
}

/// One repetition for `entry`: the baseline's wall ns, and each factor's
/// ratio to the baseline (wall to wall for "contended wall", else CPU to CPU).
fn repetition(
    entry: &Entry,
    once: &dyn Subject,
    k: &Workbench,
    evict: &mut [u64],
) -> (f64, [f64; 5]) {
    let n = k.inserted.len() as u64;
    let (_, base) = timing::lookups(once, &k.negatives, Mode::OneKey, LOOKUPS);
    timing::lookups(once, &k.negatives[..1 << 16], Mode::OneKey, 1);
    let ((), e) = measure(|| {
        black_box(once.count_contained(&k.negatives, Mode::OneKey));
    });
    let base_wall = ns(e, LOOKUPS, true);
    let mut ratios = [0.0; 5];
    // Cold: caches flushed, no warm-up.
    flush(evict);
    let (_, e) = measure(|| once.count_contained(&k.negatives, Mode::OneKey));
    ratios[0] = ns(e, LOOKUPS, false) / base;
    // The speed experiment's state.
    let filled = build(entry, &k.workload, &k.inserted, LOOKUPS.div_ceil(n));
    black_box(filled.count_contained(&k.positives, Mode::OneKey));
    let (_, e) = measure(|| filled.count_contained(&k.negatives, Mode::OneKey));
    drop(filled);
    ratios[1] = ns(e, LOOKUPS, false) / base;
    // Keys made in chunks, a clock reading per chunk.
    timing::lookups(once, &k.negatives[..1 << 16], Mode::OneKey, 1);
    let mut chunk = Vec::with_capacity(4096);
    let mut seconds = 0.0;
    for start in (0..LOOKUPS).step_by(4096) {
        chunk.clear();
        chunk.extend((start..LOOKUPS.min(start + 4096)).map(|i| query_key(k.seed, i)));
        let (_, e) = measure(|| once.count_contained(black_box(&chunk), Mode::OneKey));
        seconds += e.seconds();
    }
    ratios[2] = seconds * 1e9 / LOOKUPS as f64 / base;
    // Two spinning neighbours.
    let (_, e) = contended(|| {
        measure(|| {
            (0..5)
                .map(|_| once.count_contained(&k.negatives, Mode::OneKey))
                .sum::<u64>()
        })
    });
    ratios[3] = ns(e, 5 * LOOKUPS, true) / base_wall;
    ratios[4] = ns(e, 5 * LOOKUPS, false) / base;
    (base_wall, ratios)
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let entries = registry::select(
        registry::registry(),
        &FILTERS.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
    )
    .expect("registered");
    let mut evict = vec![1u64; 8 << 20];
    let start = Instant::now();
    for _ in 0..1_000_000 {
        black_box(Instant::now());
    }
    let per_call = start.elapsed().as_secs_f64() * 1e3;
    println!("Instant::now() costs {per_call:.1} ns a call here");
    println!(
        "filter, n: baseline ns (wall) | ratio to it, median [min, max] over {reps} repetitions"
    );
    for n in [10_000u64, 1_000_000, 10_000_000] {
        let seed = 0x5eed ^ n;
        let keys: Vec<u64> = (0..n).map(|i| insert_key(seed, i)).collect();
        let k = Workbench {
            seed,
            negatives: (0..LOOKUPS).map(|i| query_key(seed, i)).collect(),
            positives: (0..LOOKUPS)
                .map(|i| keys[(i * 7919 % n) as usize])
                .collect(),
            inserted: keys,
            workload: Workload {
                items: n,
                fpp: 0.01,
                seed,
            },
        };
        for entry in &entries {
            let once = build(entry, &k.workload, &k.inserted, 1);
            let mut baselines = Vec::new();
            let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); FACTORS.len()];
            for _ in 0..reps {
                let (base, factors) = repetition(entry, once.as_ref(), &k, &mut evict);
                baselines.push(base);
                for (all, one) in ratios.iter_mut().zip(factors) {
                    all.push(one);
                }
            }
            baselines.sort_by(f64::total_cmp);
            let mut line = format!(
                "{:<22} n = {:>8}: {:6.1} ns |",
                entry.name,
                n,
                median(&baselines)
            );
            for (name, mut values) in FACTORS.iter().zip(ratios) {
                values.sort_by(f64::total_cmp);
                let _ = write!(
                    line,
                    " {name} {:.2} [{:.2}, {:.2}] |",
                    median(&values),
                    values[0],
                    values[values.len() - 1]
                );
            }
            println!("{line}");
        }
    }
}
