//! The speed experiment: ns per insert, positive lookup, negative lookup and
//! remove (where supported), from cache-resident to DRAM-sized filters, the
//! median of several repetitions. Subjects alternate within each repetition
//! so that a slow phase of a shared machine does not land on one filter.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::mix64;
use serde::{Deserialize, Serialize};

use crate::accuracy::derive_seed;
use crate::config::{RunConfig, format_count};
use crate::progress::Progress;
use crate::registry::{Build, Entry};
use crate::subject::{Subject, Workload};

/// One row of `speed.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedRow {
    /// The filter's registry name.
    pub filter: String,
    /// "filterlab" or "peer".
    pub origin: String,
    /// "insert", "insert_concurrent" (all cores inserting into one shared
    /// filter; wall-clock ns per key), "build" (static filters: construction
    /// per key), "lookup_positive", "lookup_negative" or "remove".
    pub op: String,
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
}

/// The operations, in report order.
pub const OPERATIONS: [&str; 6] = [
    "insert",
    "insert_concurrent",
    "build",
    "lookup_positive",
    "lookup_negative",
    "remove",
];

/// Threads for the concurrent-insert measurement: every core.
pub fn insert_threads() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// The result of the speed experiment: rows and notes on what could not be run.
pub struct SpeedResults {
    /// Medians per filter, operation and size.
    pub rows: Vec<SpeedRow>,
    /// Filters skipped at a size, and why.
    pub notes: Vec<String>,
}

/// Timings of one (filter, op, n), in ns per operation.
type Samples = BTreeMap<(usize, &'static str, u64), Vec<f64>>;

/// Runs the speed experiment over `entries`.
pub fn run(entries: &[Entry], config: &RunConfig, quiet: bool) -> SpeedResults {
    let steps: u64 = config
        .speed_items
        .iter()
        .map(|&n| u64::from(config.speed_repetitions_at(n)) * entries.len() as u64)
        .sum();
    let progress = Progress::new("speed", steps, quiet);
    let mut samples = Samples::new();
    let mut notes = Vec::new();
    let mut failed: Vec<(usize, u64)> = Vec::new();
    for &items in &config.speed_items {
        let seed = derive_seed(config.seed, &[items, 0x5bee_d000]);
        let keys: Vec<u64> = (0..items).map(|i| insert_key(seed, i)).collect();
        // Lookups use as many distinct query keys as operations timed, and
        // positive keys drawn pseudo-randomly from the inserted ones: a short
        // list repeated in order would let the branch predictor learn it.
        let lookups = config.speed_lookups.max(1);
        let positives: Vec<u64> = (0..lookups)
            .map(|i| keys[(mix64(seed ^ i) % items) as usize])
            .collect();
        let negatives: Vec<u64> = (0..lookups).map(|i| query_key(seed, i)).collect();
        let removals = &keys[..items.min(lookups) as usize];
        let workload = Workload {
            items,
            fpp: config.speed_fpp,
            seed,
        };
        for repetition in 0..config.speed_repetitions_at(items) {
            for (index, entry) in entries.iter().enumerate() {
                if failed.contains(&(index, items)) {
                    progress.step(&format!(
                        "{} n = {} skipped",
                        entry.name,
                        format_count(items)
                    ));
                    continue;
                }
                let timing = Timing {
                    keys: &keys,
                    positives: &positives,
                    negatives: &negatives,
                    removals,
                    min_operations: config.speed_lookups,
                };
                match timing.measure(entry, &workload) {
                    Ok(measured) => {
                        for (op, ns) in measured {
                            samples.entry((index, op, items)).or_default().push(ns);
                        }
                    }
                    Err(err) => {
                        notes.push(format!(
                            "{} at n = {}: not measured ({err})",
                            entry.name,
                            format_count(items)
                        ));
                        failed.push((index, items));
                    }
                }
                progress.step(&format!(
                    "{} n = {} repetition {}",
                    entry.name,
                    format_count(items),
                    repetition + 1
                ));
            }
        }
    }
    progress.finish();
    SpeedResults {
        rows: summarize(entries, &samples, config.speed_fpp),
        notes,
    }
}

/// Turns samples into median rows, in registry, operation and size order.
fn summarize(entries: &[Entry], samples: &Samples, fpp: f64) -> Vec<SpeedRow> {
    let mut rows = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        for op in OPERATIONS {
            for ((_, _, items), mut values) in samples
                .iter()
                .filter(|((i, o, _), _)| *i == index && *o == op)
                .map(|(key, values)| (*key, values.clone()))
            {
                values.sort_by(f64::total_cmp);
                rows.push(SpeedRow {
                    filter: entry.name.to_owned(),
                    origin: entry.origin.label().to_owned(),
                    op: op.to_owned(),
                    n: items,
                    ns_per_op: median(&values),
                    min_ns_per_op: values[0],
                    max_ns_per_op: values[values.len() - 1],
                    repetitions: values.len() as u32,
                    target_fpp: fpp,
                });
            }
        }
    }
    rows
}

/// The median of sorted, non-empty values.
pub fn median(sorted: &[f64]) -> f64 {
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        f64::midpoint(sorted[middle - 1], sorted[middle])
    }
}

/// The keys of one size and how long to time.
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
}

impl Timing<'_> {
    /// One repetition for one filter: (operation, ns per operation) pairs.
    fn measure(
        &self,
        entry: &Entry,
        workload: &Workload,
    ) -> Result<Vec<(&'static str, f64)>, crate::Error> {
        let items = self.keys.len() as u64;
        let rounds = self.min_operations.div_ceil(items).max(1);
        let mut results = Vec::new();
        let mut elapsed = 0.0;
        let mut subject: Option<Box<dyn Subject>> = None;
        let mut refused = Vec::new();
        for _ in 0..rounds {
            // Drop the previous filter before building the next one.
            drop(subject.take());
            match entry.build {
                Build::Empty(build) => {
                    let mut fresh = build(workload)?;
                    refused.clear();
                    let start = Instant::now();
                    fresh.insert_keys(self.keys, &mut refused);
                    elapsed += start.elapsed().as_secs_f64();
                    subject = Some(fresh);
                }
                Build::FromKeys(build) => {
                    let start = Instant::now();
                    let fresh = build(workload, self.keys)?;
                    elapsed += start.elapsed().as_secs_f64();
                    subject = Some(fresh);
                }
            }
        }
        let op = match entry.build {
            Build::Empty(_) => "insert",
            Build::FromKeys(_) => "build",
        };
        results.push((op, elapsed * 1e9 / (rounds * items) as f64));
        let Some(mut subject) = subject else {
            return Ok(results);
        };
        for (op, keys) in [
            ("lookup_positive", self.positives),
            ("lookup_negative", self.negatives),
        ] {
            let passes = self.min_operations.div_ceil(keys.len() as u64).max(1);
            let start = Instant::now();
            let mut found = 0;
            for _ in 0..passes {
                found += subject.count_contained(black_box(keys));
            }
            black_box(found);
            let seconds = start.elapsed().as_secs_f64();
            results.push((op, seconds * 1e9 / (passes * keys.len() as u64) as f64));
        }
        if let Build::Empty(build) = entry.build {
            let shared = build(workload)?;
            let start = Instant::now();
            if shared
                .insert_keys_concurrently(self.keys, insert_threads())
                .is_some()
            {
                let seconds = start.elapsed().as_secs_f64();
                results.push(("insert_concurrent", seconds * 1e9 / items as f64));
            }
        }
        let start = Instant::now();
        if let Some(removed) = subject.remove_keys(self.removals) {
            let seconds = start.elapsed().as_secs_f64();
            black_box(removed);
            results.push(("remove", seconds * 1e9 / self.removals.len() as f64));
        }
        Ok(results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[1.0]), 1.0);
        assert_eq!(median(&[1.0, 3.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 10.0]), 2.0);
    }
}
