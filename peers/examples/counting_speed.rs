//! Single-threaded speed of the counting Bloom filters at 10M u64 keys and
//! p = 1e-2 (4-bit counters), with the Bloom filters beside them for
//! reference: insert, positive lookup, negative lookup and remove, one key
//! at a time and batched (hashed in batches, memory prefetched ahead).
//!
//! A `BlockedBloomFilter` as large as the blocked counting filter ("same
//! bytes") separates the blocked kernel's cost from its 4.4 times larger
//! footprint. Two more rows put the standard `CountingBloomFilter` in context:
//! fastbloom-rs 0.5's `CountingBloomFilter` (the peer issue #9 measures it
//! against; no batch API, so its batched columns are empty), and a
//! **random-read floor**: per key, the same hash and the same k probes as
//! `CountingBloomFilter` over an array of the same size, then k independent
//! reads of one byte in each probed 64-byte line, summed (lookups), or k
//! read-modify-writes of that byte (+1 for insert, −1 for remove). No
//! branch, no saturation, no early exit: what the memory system charges for
//! k random lines per key in this format, plus hashing.
//!
//! ```text
//! cargo run --release -p filterlab-peers --example counting_speed [-- ITEMS [ROUNDS [ONLY]]]
//! ```
//!
//! Defaults: 10,000,000 items, 3 rounds, every filter; ONLY is a
//! comma-separated list of words, and a filter runs when its name starts
//! with one of them (`Counting,fastbloom,random` for the three rows the
//! ratios compare). Every operation runs over all ITEMS
//! keys (lookups of never-inserted keys over as many, repeated up to 10M
//! lookups for smaller filters); each figure is the
//! minimum over rounds, which alternate between the filters so that a busy
//! machine slows every filter alike. Keys are hashed inside the timing.
//! Times are this thread's CPU time where Linux provides it (a machine
//! shared with other jobs would count their turns in wall time), wall time
//! elsewhere.

use std::hint::black_box;
use std::time::Instant;

use filterlab_bloom::{BlockedBloomFilter, BloomFilter};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::{KeyHasher, Membership, Probes};
use filterlab_counting_bloom::{
    BlockedCountingBloomFilter, CountingBloom, CountingBloomFilter, Filter, Layout,
};
use filterlab_peers::bench::ExampleArgs;
use filterlab_peers::{FastBloomRsCounting, PeerFilter, Workload};

/// The columns: what each figure times.
const COLUMNS: [&str; 8] = [
    "insert", "ins bat", "pos", "pos bat", "neg", "neg bat", "remove", "rem bat",
];

/// A filter under test: the `Filter` operations, and removals where it has
/// them. `None` where the subject cannot do what is asked (a batch API it
/// lacks, or removals).
trait Subject {
    fn name(&self) -> &'static str;
    fn clear(&mut self);
    fn memory_usage(&self) -> usize;
    /// Removes every key one by one / in batches; how many were removed.
    fn remove(&mut self, keys: &[u64], batched: bool) -> Option<usize>;
    /// Inserts every key one by one / in batches; how many were new.
    fn insert(&mut self, keys: &[u64], batched: bool) -> Option<usize>;
    fn count(&self, keys: &[u64], batched: bool) -> Option<usize>;
}

macro_rules! subject {
    ($type:ty, $name:literal, $remove:expr) => {
        impl Subject for $type {
            fn name(&self) -> &'static str {
                $name
            }
            fn clear(&mut self) {
                Filter::clear(self);
            }
            fn memory_usage(&self) -> usize {
                Membership::memory_usage(self)
            }
            fn remove(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
                let remove: Option<fn(&mut $type, &[u64], bool) -> usize> = $remove;
                remove.map(|remove| remove(self, keys, batched))
            }
            fn insert(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
                let batch = |filter: &mut Self, keys: &[u64]| filter.insert_many(keys);
                Some(each_or_batch(
                    self,
                    keys,
                    batched,
                    |filter, key| filter.insert(key),
                    batch,
                ))
            }
            fn count(&self, keys: &[u64], batched: bool) -> Option<usize> {
                Some(if batched {
                    self.contains_many(keys).iter().filter(|&&hit| hit).count()
                } else {
                    keys.iter()
                        .filter(|&key| self.contains(black_box(key)))
                        .count()
                })
            }
        }
    };
}

/// Runs `one` on every key (each through `black_box`), or `batch` on all
/// of them; how many times the answer was yes.
fn each_or_batch<T: ?Sized>(
    target: &mut T,
    keys: &[u64],
    batched: bool,
    one: impl Fn(&mut T, &u64) -> bool,
    batch: impl Fn(&mut T, &[u64]) -> usize,
) -> usize {
    if batched {
        batch(target, keys)
    } else {
        keys.iter()
            .filter(|&key| one(target, black_box(key)))
            .count()
    }
}

/// Removes every key from a counting filter, one by one or batched.
fn remove_all<L: Layout>(filter: &mut CountingBloom<L, 4>, keys: &[u64], batched: bool) -> usize {
    let batch = |filter: &mut CountingBloom<L, 4>, keys: &[u64]| filter.remove_many(keys);
    each_or_batch(filter, keys, batched, CountingBloom::remove, batch)
}

subject!(CountingBloomFilter, "CountingBloomFilter", Some(remove_all));
subject!(
    BlockedCountingBloomFilter,
    "BlockedCountingBloomFilter",
    Some(remove_all)
);
subject!(BlockedBloomFilter, "BlockedBloomFilter", None);
subject!(BloomFilter, "BloomFilter", None);

/// A `BlockedBloomFilter` as large as the blocked counting filter (4-bit
/// counters take about 4.4 times its memory): a lookup in it pays the same
/// cache and TLB misses, so its row separates the kernel's cost from the
/// footprint's. (Oversized, its FPP is far below p.)
struct SameBytes(BlockedBloomFilter);

impl Subject for SameBytes {
    fn name(&self) -> &'static str {
        "BlockedBloomFilter, same bytes"
    }
    fn clear(&mut self) {
        Subject::clear(&mut self.0);
    }
    fn memory_usage(&self) -> usize {
        Subject::memory_usage(&self.0)
    }
    fn remove(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
        self.0.remove(keys, batched)
    }
    fn insert(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
        Subject::insert(&mut self.0, keys, batched)
    }
    fn count(&self, keys: &[u64], batched: bool) -> Option<usize> {
        self.0.count(keys, batched)
    }
}

/// fastbloom-rs 0.5's counting filter through the peers' adapter (the one
/// the report measures): one key at a time only.
impl Subject for FastBloomRsCounting {
    fn name(&self) -> &'static str {
        "fastbloom-rs Counting"
    }
    fn clear(&mut self) {
        PeerFilter::clear(self);
    }
    fn memory_usage(&self) -> usize {
        PeerFilter::memory_usage(self)
    }
    fn remove(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
        (!batched).then(|| {
            keys.iter()
                .filter(|&&key| PeerFilter::remove(self, black_box(key)))
                .count()
        })
    }
    fn insert(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
        (!batched).then(|| {
            keys.iter()
                .filter(|&&key| {
                    matches!(
                        PeerFilter::insert(self, black_box(key)),
                        filterlab_peers::Inserted::New
                    )
                })
                .count()
        })
    }
    fn count(&self, keys: &[u64], batched: bool) -> Option<usize> {
        (!batched).then(|| {
            keys.iter()
                .filter(|&&key| PeerFilter::contains(self, black_box(key)))
                .count()
        })
    }
}

/// One 64-byte line of the floor's array, aligned like the filter's blocks.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// The random-read floor of the standard layout: the key hashed with the
/// filter's hasher, its k probes derived with core's `Probes` over the
/// filter's counters, and the 4-bit counter's byte in each probed line read
/// (lookups) or read, changed and written back (insert +1, remove −1), all
/// k independent of each other: no branch, no saturation check, no early
/// exit. The same array size, lines and key stream as the filter.
struct Floor {
    lines: Vec<Line>,
    num_counters: u64,
    num_hashes: u32,
    hasher: KeyHasher,
}

/// 4-bit counters per 64-byte line.
const COUNTERS_PER_LINE: u64 = 128;

impl Floor {
    /// The floor of `filter`: as many lines, its counters, k and hasher.
    fn of(filter: &CountingBloomFilter) -> Self {
        Self {
            lines: vec![Line([0; 64]); Membership::memory_usage(filter) / 64],
            num_counters: filter.num_counters(),
            num_hashes: filter.num_hashes(),
            hasher: *filter.hasher(),
        }
    }

    /// The (line, byte) of each of `key`'s k counters, in probe order.
    #[inline]
    fn bytes(&self, key: u64) -> impl Iterator<Item = (usize, usize)> + use<> {
        let mut probes = Probes::new(self.hasher.hash(&key), self.num_counters);
        (0..self.num_hashes).map(move |_| {
            let index = probes.next_index();
            (
                (index / COUNTERS_PER_LINE) as usize,
                (index % COUNTERS_PER_LINE / 2) as usize,
            )
        })
    }

    /// Adds `delta` to each probed byte of every key; a sum of what was read.
    fn modify(&mut self, keys: &[u64], delta: u8) -> usize {
        let mut sum = 0usize;
        for &key in keys {
            for (line, byte) in self.bytes(black_box(key)) {
                let byte = &mut self.lines[line].0[byte];
                sum = sum.wrapping_add(usize::from(*byte));
                *byte = byte.wrapping_add(delta);
            }
        }
        sum
    }
}

impl Subject for Floor {
    fn name(&self) -> &'static str {
        "random-read floor"
    }
    fn clear(&mut self) {
        self.lines.fill(Line([0; 64]));
    }
    fn memory_usage(&self) -> usize {
        self.lines.len() * 64
    }
    fn remove(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
        (!batched).then(|| self.modify(keys, u8::MAX))
    }
    fn insert(&mut self, keys: &[u64], batched: bool) -> Option<usize> {
        (!batched).then(|| self.modify(keys, 1))
    }
    /// The sum of the bytes read (not a count: it only keeps the reads).
    fn count(&self, keys: &[u64], batched: bool) -> Option<usize> {
        (!batched).then(|| {
            keys.iter().fold(0usize, |sum, &key| {
                self.bytes(black_box(key)).fold(sum, |sum, (line, byte)| {
                    sum.wrapping_add(usize::from(self.lines[line].0[byte]))
                })
            })
        })
    }
}

/// This thread's CPU time in nanoseconds, where Linux provides it: the
/// scheduler's `se.sum_exec_runtime` (milliseconds to the nanosecond), or
/// else user + system time from `/proc/thread-self/stat` (10 ms ticks).
fn cpu_time() -> Option<u64> {
    if let Ok(sched) = std::fs::read_to_string("/proc/thread-self/sched") {
        let runtime = sched
            .lines()
            .find_map(|line| line.strip_prefix("se.sum_exec_runtime"))
            .and_then(|rest| {
                rest.trim_start_matches([' ', ':'])
                    .trim()
                    .parse::<f64>()
                    .ok()
            });
        if let Some(millis) = runtime {
            return Some((millis * 1e6) as u64);
        }
    }
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name (which may hold spaces), from field 3.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000_000)
}

/// Nanoseconds per operation of `run`, which does `ops` operations: CPU
/// time where available (on a machine shared with other jobs, wall time
/// counts their turns too).
fn time(ops: usize, run: impl FnOnce() -> Option<usize>) -> f64 {
    let (start, cpu_start) = (Instant::now(), cpu_time());
    let Some(result) = run() else {
        return f64::NAN;
    };
    black_box(result);
    let nanos = match (cpu_start, cpu_time()) {
        (Some(begin), Some(end)) => end - begin,
        _ => start.elapsed().as_nanos() as u64,
    };
    nanos as f64 / ops as f64
}

/// One round of every column for one filter; lookups pass over the keys
/// `reps` times (small filters take too little time to measure once).
fn round(subject: &mut dyn Subject, keys: &[u64], absent: &[u64], reps: usize) -> [f64; 8] {
    subject.clear();
    let n = keys.len();
    let insert = time(n, || subject.insert(keys, false));
    let lookups = |keys: &[u64], batched: bool| {
        time(reps * keys.len(), || {
            (0..reps).map(|_| subject.count(keys, batched)).sum()
        })
    };
    let positive = lookups(keys, false);
    let positive_batched = lookups(keys, true);
    let negative = lookups(absent, false);
    let negative_batched = lookups(absent, true);
    let remove = time(n, || subject.remove(keys, false));
    subject.clear();
    let insert_batched = time(n, || subject.insert(keys, true));
    let remove_batched = time(n, || subject.remove(keys, true));
    [
        insert,
        insert_batched,
        positive,
        positive_batched,
        negative,
        negative_batched,
        remove,
        remove_batched,
    ]
}

fn main() {
    let mut args = ExampleArgs::from_env();
    let items: u64 = args.next_or(10_000_000, "ITEMS");
    let rounds: usize = args.next_or(3, "ROUNDS");
    let only: Option<String> = args.next_raw();
    let fpp = 0.01;
    let reps = (10_000_000 / items).max(1) as usize;
    let keys: Vec<u64> = (0..items).map(|i| insert_key(7, i)).collect();
    let absent: Vec<u64> = (0..items).map(|i| query_key(7, i)).collect();
    let build = "valid sizes";
    let counting = || {
        CountingBloomFilter::with_fpp(fpp)
            .expected_items(items)
            .seed(1)
            .build()
            .expect(build)
    };
    let blocked_counting = || {
        BlockedCountingBloomFilter::with_fpp(fpp)
            .expected_items(items)
            .seed(1)
            .build()
            .expect(build)
    };
    let blocked = || {
        BlockedBloomFilter::with_fpp(fpp)
            .expected_items(items)
            .seed(1)
            .build()
            .expect(build)
    };
    let workload = Workload {
        items,
        fpp,
        seed: 1,
    };
    let mut subjects: Vec<Box<dyn Subject>> = vec![
        Box::new(counting()),
        Box::new(FastBloomRsCounting::new(&workload)),
        Box::new(Floor::of(&counting())),
        Box::new(blocked_counting()),
        Box::new(blocked()),
        Box::new(SameBytes(
            BlockedBloomFilter::with_bits(8 * Membership::memory_usage(&blocked_counting()) as u64)
                .hashes(blocked().num_hashes())
                .seed(1)
                .build()
                .expect(build),
        )),
        Box::new(
            BloomFilter::with_fpp(fpp)
                .expected_items(items)
                .seed(1)
                .build()
                .expect(build),
        ),
    ];
    if let Some(only) = &only {
        subjects.retain(|subject| only.split(',').any(|word| subject.name().starts_with(word)));
    }
    println!(
        "{items} u64 keys at p = {fpp}, 4-bit counters; ns/key ({}), minimum over {rounds} alternating rounds; lookups repeated {reps}x",
        if cpu_time().is_some() {
            "thread CPU time"
        } else {
            "wall time"
        }
    );
    let mut best = vec![[f64::INFINITY; 8]; subjects.len()];
    for _ in 0..rounds {
        for (subject, best) in subjects.iter_mut().zip(&mut best) {
            let times = round(&mut **subject, &keys, &absent, reps);
            for (slot, t) in best.iter_mut().zip(times) {
                *slot = if t.is_nan() { t } else { slot.min(t) };
            }
        }
    }
    print_table(&mut subjects, &best, &keys, &absent);
    print_ratios(&subjects, &best);
}

/// The table: each filter's size, FPP on never-inserted keys (filled with
/// every key again, batched where it can) and best times.
fn print_table(subjects: &mut [Box<dyn Subject>], best: &[[f64; 8]], keys: &[u64], absent: &[u64]) {
    let items = keys.len();
    print!("\n{:<28} {:>9} {:>8}", "filter", "bits/key", "FPP");
    for column in COLUMNS {
        print!(" {column:>8}");
    }
    println!();
    for (subject, best) in subjects.iter_mut().zip(best) {
        subject.clear();
        if subject.insert(keys, true).is_none() {
            subject.insert(keys, false);
        }
        let bits = subject.memory_usage() as f64 * 8.0 / items as f64;
        let sample = &absent[..absent.len().min(1_000_000)];
        print!("{:<28} {bits:>9.2}", subject.name());
        match subject.count(sample, true) {
            Some(false_positives) => print!(
                " {:>7.3}%",
                100.0 * false_positives as f64 / sample.len() as f64
            ),
            None => match subject.count(sample, false) {
                Some(false_positives) if subject.name() != "random-read floor" => print!(
                    " {:>7.3}%",
                    100.0 * false_positives as f64 / sample.len() as f64
                ),
                _ => print!(" {:>8}", "-"),
            },
        }
        for t in best {
            if t.is_nan() {
                print!(" {:>8}", "-");
            } else {
                print!(" {t:>8.1}");
            }
        }
        println!();
    }
}

/// The one-key ratios of `CountingBloomFilter` to fastbloom-rs and to the
/// floor, and the blocked counting filter's lookups against the blocked
/// Bloom filter's, for the rows that ran.
fn print_ratios(subjects: &[Box<dyn Subject>], best: &[[f64; 8]]) {
    let column = |name: &str| COLUMNS.iter().position(|&c| c == name).expect("a column");
    let row = |name: &str| subjects.iter().position(|s| s.name() == name);
    let ratio = |a: usize, b: usize, c: &str| best[a][column(c)] / best[b][column(c)];
    let one_key = ["insert", "pos", "neg", "remove"];
    if let Some(ours) = row("CountingBloomFilter") {
        for other in ["fastbloom-rs Counting", "random-read floor"] {
            if let Some(other_row) = row(other) {
                print!("\nCountingBloomFilter / {other}, one key at a time:");
                for c in one_key {
                    print!(" {c} {:.2}", ratio(ours, other_row, c));
                }
            }
        }
        if let (Some(peer), Some(floor)) = (row("fastbloom-rs Counting"), row("random-read floor"))
        {
            print!("\nfastbloom-rs Counting / random-read floor:");
            for c in one_key {
                print!(" {c} {:.2}", ratio(peer, floor, c));
            }
        }
        println!();
    }
    println!();
    for bloom_row in ["BlockedBloomFilter", "BlockedBloomFilter, same bytes"] {
        if let (Some(counting), Some(bloom)) = (row("BlockedCountingBloomFilter"), row(bloom_row)) {
            println!(
                "BlockedCountingBloomFilter / {bloom_row}, lookups: positive {:.2}x ({:.2}x batched), negative {:.2}x ({:.2}x batched)",
                ratio(counting, bloom, "pos"),
                ratio(counting, bloom, "pos bat"),
                ratio(counting, bloom, "neg"),
                ratio(counting, bloom, "neg bat"),
            );
        }
    }
}
