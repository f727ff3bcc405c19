//! The speed experiment: ns per insert, positive lookup, negative lookup and
//! remove (where supported), from cache-resident to DRAM-sized filters, the
//! median of several repetitions, each timed as [`timing`] says (the
//! method every single-thread timing of the report shares). Every filter is timed one key at a time
//! (what every peer crate offers) and, when it has one, through its batch
//! API, so that tables can compare like with like. Subjects alternate within
//! each repetition so that a slow phase of a shared machine does not land on
//! one filter.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::hint::black_box;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::mix64;
use filterlab_peers::{Mode, Subject, Workload};
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::error::Error;
use crate::experiments::accuracy::derive_seed;
use crate::experiments::timing::{self, Rounds};
use crate::progress::Tracker;
use crate::registry::{Build, Capability, Entry, Origin};
use crate::text::{format_count, plural};

/// An operation timed (the `op` column of speed.csv).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Filling an empty filter to n, per key.
    Insert,
    /// All cores inserting into one shared filter: wall-clock ns per key.
    InsertConcurrent,
    /// A static filter's construction from its n keys, per key.
    Build,
    /// Looking up inserted keys.
    LookupPositive,
    /// Looking up never-inserted keys.
    LookupNegative,
    /// Removing inserted keys.
    Remove,
}

impl Operation {
    /// Every operation, in report order.
    pub const ALL: [Self; 6] = [
        Self::Insert,
        Self::InsertConcurrent,
        Self::Build,
        Self::LookupPositive,
        Self::LookupNegative,
        Self::Remove,
    ];
}

/// One row of `speed.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedRow {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// The operation.
    pub op: Operation,
    /// Items in the filter.
    pub n: u64,
    /// Median ns per operation over the repetitions.
    pub ns_per_op: f64,
    /// Fastest repetition.
    pub min_ns_per_op: f64,
    /// Slowest repetition.
    pub max_ns_per_op: f64,
    /// Repetitions measured.
    pub repetitions: u32,
    /// The target FPP the filter was sized for.
    pub target_fpp: f64,
    /// One key at a time, or through the filter's batch API. Static
    /// filters' construction and removals count as one key at a time.
    pub mode: Mode,
}

/// One row of `build.csv`: what building a static filter from its n keys
/// took in memory (its time per key is speed.csv's `build` row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BuildRow {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// Keys it was built from.
    pub n: u64,
    /// The most heap bytes the build held at once beyond what the process
    /// held before it (its working memory and the filter it returned),
    /// counted by the harness's allocator ([`filterlab_counting_alloc`]);
    /// the largest over the repetitions. The keys handed to it are not counted.
    pub peak_bytes: u64,
    /// Bytes of the filter built.
    pub filter_bytes: u64,
    /// Constructions started again with a new seed, where the filter
    /// reports it (the most over the repetitions).
    pub retries: Option<u32>,
}

impl BuildRow {
    /// Peak bytes per key.
    pub fn peak_bytes_per_key(&self) -> f64 {
        self.peak_bytes as f64 / self.n.max(1) as f64
    }

    /// The peak over the filter plus the keys' 64-bit hashes (8 bytes a
    /// key), what a build cannot do with less.
    pub fn peak_over_filter_and_hashes(&self) -> f64 {
        self.peak_bytes as f64 / (self.filter_bytes + 8 * self.n).max(1) as f64
    }
}

/// Threads for the concurrent-insert measurement: every core.
pub fn insert_threads() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// The result of the speed experiment: rows and notes on what could not be run.
pub struct SpeedResults {
    /// Medians per filter, operation and size.
    pub rows: Vec<SpeedRow>,
    /// The static filters' builds: peak memory per size.
    pub builds: Vec<BuildRow>,
    /// Filters skipped at a size, and why.
    pub notes: Vec<String>,
}

/// Timings of one (filter, op, mode, n), in ns per operation.
type Samples = BTreeMap<(usize, Operation, Mode, u64), Vec<f64>>;

/// Runs the speed experiment over `entries`: in each repetition every
/// filter in turn, each one key at a time and then, if it has a batch API,
/// batched.
pub fn run(entries: &[Entry], config: &RunConfig, progress: &Tracker) -> SpeedResults {
    let steps: u64 = config
        .speed_items
        .iter()
        .map(|&n| u64::from(config.speed_repetitions_at(n)) * entries.len() as u64)
        .sum();
    let stage = progress.stage("speed", steps);
    let mut samples = Samples::new();
    let mut builds: Vec<BuildRow> = Vec::new();
    let mut notes = Vec::new();
    let mut failed: Vec<(usize, u64)> = Vec::new();
    for &items in &config.speed_items {
        let seed = derive_seed(config.seed, &[items, 0x5bee_d000]);
        let lookups = config.speed_lookups.max(1);
        let TimedKeys {
            keys,
            positives,
            negatives,
        } = TimedKeys::new(config, items, seed, lookups);
        let timing = Timing {
            keys: &keys,
            positives: &positives,
            negatives: &negatives,
            removals: &keys[..items.min(lookups) as usize],
            min_operations: config.speed_lookups,
            workload: Workload {
                items,
                fpp: config.speed_fpp,
                seed,
            },
        };
        for repetition in 0..config.speed_repetitions_at(items) {
            for (index, entry) in entries.iter().enumerate() {
                let what = format!("{} n = {}", entry.name, format_count(items));
                if failed.contains(&(index, items)) {
                    stage.step(&format!("{what} skipped"));
                    continue;
                }
                match timing.measure(entry) {
                    Ok(measured) => {
                        for (op, mode, ns) in measured.timings {
                            samples
                                .entry((index, op, mode, items))
                                .or_default()
                                .push(ns);
                        }
                        if let Some(build) = measured.build {
                            keep_largest(&mut builds, build);
                        }
                    }
                    Err(err) => {
                        notes.push(format!("{what}: not measured ({err})"));
                        failed.push((index, items));
                    }
                }
                stage.step(&format!("{what} repetition {}", repetition + 1));
            }
        }
    }
    stage.finish(&format!(
        "{} at {}",
        plural(entries.len() as u64, "filter", "filters"),
        plural(config.speed_items.len() as u64, "size", "sizes")
    ));
    SpeedResults {
        rows: summarize(entries, &samples, config.speed_fpp),
        builds,
        notes,
    }
}

/// Adds `build` to `builds`, or raises the row of the same filter and n to
/// its peak and retries (the largest over the repetitions).
fn keep_largest(builds: &mut Vec<BuildRow>, build: BuildRow) {
    match builds
        .iter_mut()
        .find(|b| b.filter == build.filter && b.n == build.n)
    {
        Some(kept) => {
            kept.peak_bytes = kept.peak_bytes.max(build.peak_bytes);
            kept.retries = kept.retries.max(build.retries);
        }
        None => builds.push(build),
    }
}

/// The keys one size is timed with: generated from the seed, or the user's.
pub struct TimedKeys<'a> {
    /// Every key inserted.
    pub keys: Cow<'a, [u64]>,
    /// Inserted keys to look up.
    pub positives: Vec<u64>,
    /// Never-inserted keys to look up.
    pub negatives: Cow<'a, [u64]>,
}

impl<'a> TimedKeys<'a> {
    /// `items` keys to insert and `lookups` lookups of each kind; the
    /// user's keys (all of them, whatever `items`) when the run has some.
    /// Negative lookups use distinct never-inserted keys (the user's
    /// held-out keys, repeated when fewer), positive ones inserted keys
    /// drawn pseudo-randomly: a short list repeated in order would let the
    /// branch predictor learn it.
    pub fn new(config: &'a RunConfig, items: u64, seed: u64, lookups: u64) -> Self {
        let (keys, negatives): (Cow<'a, [u64]>, Cow<'a, [u64]>) = match config.keys.as_deref() {
            Some(user) => (
                Cow::Borrowed(user.inserted()),
                Cow::Borrowed(user.held_out()),
            ),
            None => (
                Cow::Owned((0..items).map(|i| insert_key(seed, i)).collect()),
                Cow::Owned((0..lookups).map(|i| query_key(seed, i)).collect()),
            ),
        };
        let count = keys.len().max(1) as u64;
        let positives = (0..lookups)
            .map(|i| keys[(mix64(seed ^ i) % count) as usize])
            .collect();
        Self {
            keys,
            positives,
            negatives,
        }
    }
}

/// Turns samples into median rows, in registry, operation, mode and size order.
fn summarize(entries: &[Entry], samples: &Samples, fpp: f64) -> Vec<SpeedRow> {
    samples
        .iter()
        .map(|(&(index, op, mode, n), values)| {
            let rounds = Rounds::of(values);
            let entry = &entries[index];
            SpeedRow {
                filter: entry.name.to_owned(),
                origin: entry.origin,
                op,
                n,
                ns_per_op: rounds.median,
                min_ns_per_op: rounds.min,
                max_ns_per_op: rounds.max,
                repetitions: rounds.count,
                target_fpp: fpp,
                mode,
            }
        })
        .collect()
}

/// The keys of one size, the workload, and how long to time.
struct Timing<'a> {
    /// Every key inserted.
    keys: &'a [u64],
    /// Inserted keys to look up (with repeats when n is small).
    positives: &'a [u64],
    /// Distinct never-inserted keys to look up.
    negatives: &'a [u64],
    /// Distinct inserted keys to remove.
    removals: &'a [u64],
    /// Lookups and inserts are repeated until at least this many operations ran.
    min_operations: u64,
    /// What every filter is built for.
    workload: Workload,
}

/// What one repetition of one filter measured: (operation, mode, ns per
/// operation), and a static filter's build memory.
struct Measured {
    timings: Vec<(Operation, Mode, f64)>,
    build: Option<BuildRow>,
}

impl Timing<'_> {
    /// One repetition for one filter: (operation, mode, ns per operation),
    /// one key at a time, then batched when the filter has a batch API. A
    /// static filter is built once (its build is one key at a time: it
    /// takes the keys whole) and its lookups timed in both modes.
    fn measure(&self, entry: &Entry) -> Result<Measured, Error> {
        let mut measured = Measured {
            timings: Vec::new(),
            build: None,
        };
        let mut built_once: Option<Box<dyn Subject>> = None;
        for mode in Mode::ALL {
            let mut subject = if let Some(subject) = built_once.take() {
                subject
            } else {
                let (op, ns, subject) = self.fill(entry, mode, &mut measured.build)?;
                measured.timings.push((op, mode, ns));
                subject
            };
            for (op, keys) in [
                (Operation::LookupPositive, self.positives),
                (Operation::LookupNegative, self.negatives),
            ] {
                let (_, ns) = timing::lookups(subject.as_ref(), keys, mode, self.min_operations);
                measured.timings.push((op, mode, ns));
            }
            if let Some(ns) = self.concurrent_insert(entry, mode)? {
                measured
                    .timings
                    .push((Operation::InsertConcurrent, mode, ns));
            }
            if mode == Mode::OneKey {
                let operations = self.removals.len() as u64;
                let (removed, ns) =
                    timing::per_operation(operations, || subject.remove_keys(self.removals));
                if black_box(removed).is_some() {
                    measured.timings.push((Operation::Remove, mode, ns));
                }
            }
            if !subject.has_batch_api() {
                break;
            }
            if !entry.takes_inserts() {
                built_once = Some(subject);
            }
        }
        Ok(measured)
    }

    /// Fills a new filter with every key in `mode` (a static filter: builds
    /// it, and sets `build` to the most memory a build held), `min_operations`
    /// keys at least over as many rounds as that takes; the operation, its
    /// ns per key, and the last filter.
    fn fill(
        &self,
        entry: &Entry,
        mode: Mode,
        build: &mut Option<BuildRow>,
    ) -> Result<(Operation, f64, Box<dyn Subject>), Error> {
        let items = self.keys.len() as u64;
        let rounds = self.min_operations.div_ceil(items).max(1);
        let mut elapsed = 0.0;
        let mut refused = Vec::new();
        let mut last = None;
        let mut peak = 0;
        for _ in 0..rounds {
            // Drop the previous filter before building the next one.
            drop(last.take());
            let (subject, seconds) = match entry.build {
                Build::Empty(make) => {
                    let mut fresh = make(&self.workload)?;
                    refused.clear();
                    let ((), took) = timing::measure(|| {
                        black_box(fresh.insert_keys(self.keys, mode, &mut refused));
                    });
                    (fresh, took.seconds())
                }
                Build::FromKeys(make) => {
                    let ((fresh, took), held) = filterlab_counting_alloc::peak_during(|| {
                        timing::measure(|| make(&self.workload, self.keys))
                    });
                    peak = peak.max(held);
                    (fresh?, took.seconds())
                }
            };
            elapsed += seconds;
            last = Some(subject);
        }
        let subject = last.ok_or_else(|| Error::failed("no round ran"))?;
        let op = match entry.build {
            Build::Empty(_) => Operation::Insert,
            Build::FromKeys(_) => {
                *build = Some(BuildRow {
                    filter: entry.name.to_owned(),
                    origin: entry.origin,
                    n: items,
                    peak_bytes: peak,
                    filter_bytes: subject.memory_usage() as u64,
                    retries: subject.build_retries(),
                });
                Operation::Build
            }
        };
        Ok((op, elapsed * 1e9 / (rounds * items) as f64, subject))
    }

    /// Wall-clock ns per key of all cores inserting every key into one new
    /// filter in `mode`; `None` when it takes no concurrent inserts.
    fn concurrent_insert(&self, entry: &Entry, mode: Mode) -> Result<Option<f64>, Error> {
        let Build::Empty(build) = entry.build else {
            return Ok(None);
        };
        if !entry.has(Capability::ConcurrentInserts) {
            return Ok(None);
        }
        let shared = build(&self.workload)?;
        // Several threads: wall time, the time a user waits.
        let (new, took) =
            timing::measure(|| shared.insert_keys_concurrently(self.keys, insert_threads(), mode));
        Ok(new.map(|new| {
            black_box(new);
            took.wall * 1e9 / self.keys.len() as f64
        }))
    }
}
