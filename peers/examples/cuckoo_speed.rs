//! Single-threaded speed of issue 10's cuckoo filter beside its peers, in
//! one run: 10^7 u64 keys into a cuckoo filter with 12-bit fingerprints
//! sized for 95% load (about 15 MiB), cuckoofilter 0.5 and
//! qfilter 0.3 sized by their own rules for the same keys at the cuckoo
//! filter's a-priori FPP; insert (to 95% load), positive and negative
//! lookups one key at a time (every filter through its one-key API), the
//! cuckoo filter's batched lookups (`contains_many`), and the random-read
//! baseline of filterlab-bloom's `batched` bench (two random cache lines
//! per key in 256 MiB).
//!
//! ```text
//! cargo run --release -p filterlab-peers --example cuckoo_speed [-- ITEMS [ROUNDS]]
//! ```
//!
//! Defaults: 10,000,000 items, 5 rounds. Within a round the filters (and,
//! beside the batched lookups, the random reads) take turns every 2^17
//! keys, so that a burst of other work on a shared machine slows all of
//! them alike; each round prints its figures and the ratios
//! the issue names, and the last line the ratios of the per-column minima. Keys are hashed
//! inside the timing, each filter by its own hasher.

use std::hint::black_box;
use std::time::Instant;

use filterlab_core::{Membership, mix64, reduce};
use filterlab_cuckoo::CuckooFilter;
use filterlab_peers::bench::{ExampleArgs, Keys};
use filterlab_peers::{Cuckoo, FilterlabSubject, Mode, PeerSubject, QFilter, Subject, Workload};

/// The columns of one filter's figures, in ns per key.
const COLUMNS: [&str; 5] = ["insert", "pos", "neg", "pos bat", "neg bat"];

/// Bytes of the random-read baseline (filterlab-bloom's `batched` bench).
const BASELINE_BYTES: usize = 256 << 20;

/// Keys per timed slice: the filters take turns slice by slice, so that a
/// burst of other work on the shared machine slows each of them alike.
const SLICE: usize = 1 << 17;

/// The random-read baseline: an array and the precomputed random
/// positions read, two per lookup.
struct RandomReads {
    array: Vec<u64>,
    indexes: Vec<usize>,
}

impl RandomReads {
    /// Reads the positions of lookups `first..first + count`.
    fn read(&self, first: usize, count: usize) -> u64 {
        let start = (2 * first).min(self.indexes.len());
        let end = (2 * (first + count)).min(self.indexes.len());
        self.indexes[start..end]
            .iter()
            .map(|&i| self.array[black_box(i)])
            .fold(0, u64::wrapping_add)
    }
}

/// Nanoseconds per key of `run` on each subject over `keys`, the subjects
/// taking turns slice by slice (NaN where `run` gives `None`), and of the
/// random reads taking their turn too when given (NaN otherwise; wall
/// time: the thread's CPU time in `/proc/thread-self/schedstat` was seen to
/// lag by tens of milliseconds on a virtual machine).
fn interleaved(
    subjects: &mut [(&str, Box<dyn Subject>)],
    keys: &[u64],
    baseline: Option<&RandomReads>,
    mut run: impl FnMut(&mut dyn Subject, &[u64]) -> Option<u64>,
) -> (Vec<f64>, f64) {
    let mut nanos = vec![Some(0u128); subjects.len()];
    let mut baseline_nanos = baseline.map(|_| 0u128);
    for (number, slice) in keys.chunks(SLICE).enumerate() {
        for ((_, subject), total) in subjects.iter_mut().zip(&mut nanos) {
            let (start, answer) = (Instant::now(), run(subject.as_mut(), black_box(slice)));
            *total = total.zip(answer).map(|(total, answer)| {
                black_box(answer);
                total + start.elapsed().as_nanos()
            });
        }
        if let (Some(reads), Some(total)) = (baseline, baseline_nanos.as_mut()) {
            let start = Instant::now();
            black_box(reads.read(number * SLICE, slice.len()));
            *total += start.elapsed().as_nanos();
        }
    }
    let per_key = |total: Option<u128>| total.map_or(f64::NAN, |n| n as f64 / keys.len() as f64);
    (
        nanos.into_iter().map(per_key).collect(),
        per_key(baseline_nanos),
    )
}

/// One round: every filter emptied and filled to `keys.inserted`, then
/// looked up (present and absent keys, one key at a time, then batched
/// where there is a batch API, the random reads taking turns with the
/// batched passes), the filters taking turns slice by slice. Returns ns
/// per key, one row per filter, and the random reads' ns per lookup beside
/// the batched positive and negative passes.
fn round(
    subjects: &mut [(&str, Box<dyn Subject>)],
    keys: &Keys,
    reads: &RandomReads,
) -> (Vec<[f64; 5]>, [f64; 2]) {
    for (_, subject) in subjects.iter_mut() {
        subject.clear();
    }
    let (insert, _) = interleaved(subjects, &keys.inserted, None, |subject, slice| {
        let mut refused = Vec::new();
        let new = subject.insert_keys(slice, Mode::OneKey, &mut refused);
        assert!(refused.is_empty(), "{} keys refused", refused.len());
        Some(new)
    });
    let lookups = |subjects: &mut [(&str, Box<dyn Subject>)], looked_up: &[u64], mode: Mode| {
        let baseline = (mode == Mode::Batched).then_some(reads);
        interleaved(subjects, looked_up, baseline, |subject, slice| {
            (mode == Mode::OneKey || subject.has_batch_api())
                .then(|| subject.count_contained(slice, mode))
        })
    };
    let (positive, _) = lookups(subjects, &keys.present, Mode::OneKey);
    let (negative, _) = lookups(subjects, &keys.absent, Mode::OneKey);
    let (positive_batched, positive_baseline) = lookups(subjects, &keys.present, Mode::Batched);
    let (negative_batched, negative_baseline) = lookups(subjects, &keys.absent, Mode::Batched);
    let columns = [
        insert,
        positive,
        negative,
        positive_batched,
        negative_batched,
    ];
    let rows = (0..subjects.len())
        .map(|row| columns.each_ref().map(|column| column[row]))
        .collect();
    (rows, [positive_baseline, negative_baseline])
}

fn main() -> Result<(), filterlab_cuckoo::Error> {
    let mut args = ExampleArgs::from_env();
    let items: u64 = args.next_or(10_000_000, "ITEMS");
    let rounds: usize = args.next_or(5, "ROUNDS");
    let buckets = (items as f64 / (4.0 * 0.95)).ceil() as u64;
    let ours = CuckooFilter::with_buckets(buckets)
        .fingerprint_bits(12)
        .expected_items(items)
        .seed(1)
        .build()?;
    let workload = Workload {
        items,
        fpp: ours.theoretical_fpp(items).unwrap_or(2e-3),
        seed: 1,
    };
    println!(
        "{items} u64 keys; filterlab-cuckoo f = 12, {buckets} buckets ({:.1} MiB), peers sized for FPP {:.2e}; wall ns/key, {rounds} rounds, filters interleaved",
        ours.memory_usage() as f64 / f64::from(1 << 20),
        workload.fpp,
    );
    let mut subjects: Vec<(&str, Box<dyn Subject>)> = vec![
        ("filterlab-cuckoo", FilterlabSubject::new(ours).boxed()),
        ("cuckoofilter", PeerSubject::boxed(Cuckoo::new(&workload))),
        ("qfilter", PeerSubject::boxed(QFilter::new(&workload)?)),
    ];
    let keys = Keys::new(items, items.min(2_000_000));
    let words = BASELINE_BYTES / 8;
    let reads = RandomReads {
        array: (0..words as u64).map(mix64).collect(),
        indexes: (0..2 * keys.absent.len() as u64)
            .map(|i| reduce(mix64(i ^ 0x5eed), words as u64) as usize)
            .collect(),
    };

    print!("\n{:<6} {:<18}", "round", "filter");
    for column in COLUMNS {
        print!(" {column:>8}");
    }
    println!();
    let mut best = vec![[f64::INFINITY; 5]; subjects.len()];
    let mut best_baseline = [f64::INFINITY; 2];
    for number in 1..=rounds {
        let (times, baseline) = round(&mut subjects, &keys, &reads);
        for ((name, _), (figures, best)) in subjects.iter().zip(times.iter().zip(&mut best)) {
            print!("{number:<6} {name:<18}");
            for t in figures {
                print!(" {t:>8.1}");
            }
            println!();
            for (slot, &t) in best.iter_mut().zip(figures) {
                *slot = slot.min(t);
            }
        }
        for (slot, t) in best_baseline.iter_mut().zip(baseline) {
            *slot = slot.min(t);
        }
        println!(
            "{number:<6} random reads, 2 lines/key in 256 MiB, beside pos bat / neg bat: {:.1} / {:.1}",
            baseline[0], baseline[1]
        );
        print_ratios(&format!("round {number}"), &times, baseline);
    }
    print_ratios("minima", &best, best_baseline);
    Ok(())
}

/// The ratios issue 10 sets targets for: filterlab-cuckoo (row 0) over
/// cuckoofilter (row 1) and qfilter (row 2), and its batched lookups over
/// the random-read baseline.
fn print_ratios(label: &str, times: &[[f64; 5]], baseline: [f64; 2]) {
    let ratio = |column: usize, peer: usize| times[0][column] / times[peer][column];
    println!(
        "{label}: vs cuckoofilter insert {:.2}x (< 1), pos {:.2}x, neg {:.2}x (<= 0.5); \
         vs qfilter pos {:.2}x, neg {:.2}x (<= 1); batched / baseline pos {:.2}x, neg {:.2}x (<= 2)",
        ratio(0, 1),
        ratio(1, 1),
        ratio(2, 1),
        ratio(1, 2),
        ratio(2, 2),
        times[0][3] / baseline[0],
        times[0][4] / baseline[1],
    );
}
