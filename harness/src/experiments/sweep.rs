//! The sweep: for every size n and target p, every filter built for (n, p)
//! and holding n keys, its bits per item and its one-key negative lookup
//! time (the lookup a filter exists to make cheap), with the FPP those
//! lookups found. The Pareto charts (bits against ns at one n, per p) and
//! the skyline map (the fewest bits and the fastest lookup meeting p, per
//! cell) are drawn from it.
//!
//! The filters of a cell are built on the run's worker threads at the same
//! time, then timed one at a time in rounds that alternate between them, so
//! that a slow phase of a shared machine does not land on one filter: up to
//! 10^7 items every filter of the cell at once, beyond that as many as
//! there are workers (all of them would not fit in memory).

use std::sync::{Barrier, Mutex, PoisonError};

use filterlab_core::theory::wilson_interval;
use filterlab_peers::{Mode, Subject, Theory, Workload};
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::experiments::accuracy::{AccuracyRow, DESIGN_TOLERANCE, derive_seed, row_confidence};
use crate::experiments::speed::TimedKeys;
use crate::experiments::timing::{self, Rounds};
use crate::experiments::verdict::TheoryKind;
use crate::progress::{Stage, Tracker};
use crate::registry::{Entry, Origin};
use crate::text::{format_count, plural};

/// Cells up to this many items build every filter before timing them.
const ALTERNATE_UP_TO: u64 = 10_000_000;

/// One row of `sweep.csv`: one filter at one (n, p).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// Items it was built for and holds.
    pub n: u64,
    /// The target FPP it was built for.
    pub target_fpp: f64,
    /// Bits of storage per item.
    pub bits_per_item: f64,
    /// Median ns per negative lookup, one key at a time.
    pub negative_ns: f64,
    /// Fastest round.
    pub min_negative_ns: f64,
    /// Slowest round.
    pub max_negative_ns: f64,
    /// Timed rounds.
    pub rounds: u32,
    /// Never-inserted keys looked up per round.
    pub queries: u64,
    /// Of them, answered present.
    pub false_positives: u64,
    /// false_positives / queries.
    pub empirical_fpp: f64,
    /// Wilson interval, lower end (Bonferroni over every cell).
    pub ci_low: f64,
    /// Wilson interval, upper end.
    pub ci_high: f64,
    /// The filter's theory at n, where it has one.
    pub theoretical_fpp: Option<f64>,
    /// Inserts refused as full.
    pub refused: u64,
    /// Whether it delivered p here: nothing refused, the interval reaching
    /// p, its exact theory (if any) within 0.1% of p, and its accuracy row
    /// at the nearest n measured meeting p.
    pub meets_target: bool,
}

/// What the sweep measured.
pub struct SweepResults {
    /// One row per filter, n and p.
    pub rows: Vec<SweepRow>,
    /// Filters not measured at a cell, and why.
    pub notes: Vec<String>,
}

/// One filter built for a cell, and its timings so far.
struct Built {
    index: usize,
    subject: Box<dyn Subject>,
    refused: u64,
    ns: Vec<f64>,
    false_positives: u64,
}

/// Runs the sweep over `entries`; `accuracy` decides, with the sweep's own
/// measurement, which filters meet each target.
pub fn run(
    entries: &[Entry],
    config: &RunConfig,
    accuracy: &[AccuracyRow],
    progress: &Tracker,
) -> SweepResults {
    let fpps = &config.accuracy_fpps;
    let cells = config.sweep_items.len() * fpps.len();
    let stage = progress.stage("sweep", (cells * entries.len()) as u64);
    let confidence = row_confidence(config.family_error_rate, cells * entries.len());
    let notes = Mutex::new(Vec::new());
    let mut rows = Vec::new();
    let lookups = config.speed_lookups.max(1);
    for &items in &config.sweep_items {
        let seed = derive_seed(config.seed, &[items, 0x5eed_5eee]);
        let timed = TimedKeys::new(config, items, seed, lookups);
        // A filter whose FPP does not depend on p is measured at the first
        // target only: the same filter is its row at every other one.
        let mut fixed: Vec<SweepRow> = Vec::new();
        for (position, &fpp) in fpps.iter().enumerate() {
            let indices: Vec<usize> = (0..entries.len())
                .filter(|&i| position == 0 || entries[i].fixed_fpp.is_none())
                .collect();
            let cell = Cell {
                entries,
                workload: Workload { items, fpp, seed },
                keys: &timed,
                rounds: config.sweep_repetitions_at(items),
                accuracy,
                confidence,
                stage: &stage,
                notes: &notes,
            };
            let workers = config.threads.max(1);
            let batch = if items <= ALTERNATE_UP_TO {
                entries.len()
            } else {
                workers
            };
            let measured = cell.measure(&indices, workers, batch);
            if position == 0 {
                fixed = measured
                    .iter()
                    .filter(|r| is_fixed(entries, &r.filter))
                    .cloned()
                    .collect();
                rows.extend(measured);
                continue;
            }
            let mut cell_rows = measured;
            cell_rows.extend(fixed.iter().map(|row| row.retarget(fpp, accuracy)));
            let position = |row: &SweepRow| entries.iter().position(|e| e.name == row.filter);
            cell_rows.sort_by_key(position);
            rows.extend(cell_rows);
        }
    }
    stage.finish(&format!(
        "{} at {}",
        plural(entries.len() as u64, "filter", "filters"),
        plural(cells as u64, "(n, p) cell", "(n, p) cells")
    ));
    SweepResults {
        rows,
        notes: notes.into_inner().unwrap_or_else(PoisonError::into_inner),
    }
}

/// Whether the filter called `filter` has one FPP whatever the target.
fn is_fixed(entries: &[Entry], filter: &str) -> bool {
    entries
        .iter()
        .any(|e| e.name == filter && e.fixed_fpp.is_some())
}

/// Whether a filter delivered `fpp` at `items`: nothing refused, the
/// interval reaching `fpp`, its exact theory (if any) within 0.1% of it,
/// and its accuracy row at the nearest n measured meeting it.
fn meets(
    (refused, ci_low): (u64, f64),
    exact_theory: Option<f64>,
    (filter, items, fpp): (&str, u64, f64),
    accuracy: &[AccuracyRow],
) -> bool {
    let design_over = exact_theory.is_some_and(|t| t > fpp * DESIGN_TOLERANCE);
    let accuracy_meets =
        nearest_accuracy(accuracy, filter, items, fpp).is_none_or(AccuracyRow::meets_target);
    refused == 0 && ci_low <= fpp && !design_over && accuracy_meets
}

impl SweepRow {
    /// This row of a filter with one FPP whatever the target, as its row
    /// at target `fpp`: the same measurement, judged against `fpp`.
    fn retarget(&self, fpp: f64, accuracy: &[AccuracyRow]) -> Self {
        Self {
            target_fpp: fpp,
            meets_target: meets(
                (self.refused, self.ci_low),
                self.theoretical_fpp,
                (&self.filter, self.n, fpp),
                accuracy,
            ),
            ..self.clone()
        }
    }
}

/// One (n, p) of the sweep.
struct Cell<'a> {
    entries: &'a [Entry],
    workload: Workload,
    keys: &'a TimedKeys<'a>,
    rounds: u32,
    accuracy: &'a [AccuracyRow],
    confidence: f64,
    stage: &'a Stage<'a>,
    notes: &'a Mutex<Vec<String>>,
}

impl Cell<'_> {
    /// Builds `entry` holding every key; `None` (with a note) when it cannot.
    fn build(&self, index: usize) -> Option<Built> {
        let entry = &self.entries[index];
        match entry.build_with(&self.workload, &self.keys.keys) {
            Ok((subject, refused)) => Some(Built {
                index,
                subject,
                refused: refused.len() as u64,
                ns: Vec::new(),
                false_positives: 0,
            }),
            Err(err) => {
                if let Ok(mut notes) = self.notes.lock() {
                    notes.push(format!(
                        "{} at n = {}, p = {:e}: not measured ({err})",
                        entry.name,
                        format_count(self.workload.items),
                        self.workload.fpp
                    ));
                }
                None
            }
        }
    }

    /// One timed round of negative lookups, one key at a time, as
    /// [`timing::lookups`] times every lookup of the report.
    fn time(&self, filter: &mut Built) {
        let negatives = &self.keys.negatives[..];
        let (found, ns) = timing::lookups(
            filter.subject.as_ref(),
            negatives,
            Mode::OneKey,
            negatives.len() as u64,
        );
        filter.false_positives = found;
        filter.ns.push(ns);
    }

    /// The rows of the filters at `indices`, in entry order, measured
    /// `batch` filters at a time (every filter of a small cell at once; a
    /// large cell's filters a few at a time, so that they fit in memory).
    fn measure(&self, indices: &[usize], workers: usize, batch: usize) -> Vec<SweepRow> {
        indices
            .chunks(batch.max(1))
            .flat_map(|chunk| self.measure_batch(chunk, workers))
            .collect()
    }

    /// The rows of the filters at `indices`: the workers build their share
    /// of them at the same time, then take turns timing theirs, one filter
    /// at a time while the others wait, round after round, so the rounds
    /// alternate between the filters and nothing else runs while one is
    /// timed. (A filter stays on the thread that built it.)
    fn measure_batch(&self, indices: &[usize], workers: usize) -> Vec<SweepRow> {
        let workers = workers.clamp(1, indices.len().max(1));
        let turns = Barrier::new(workers);
        let mut rows: Vec<SweepRow> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|worker| {
                    let turns = &turns;
                    scope.spawn(move || {
                        let mut mine: Vec<Built> = indices
                            .iter()
                            .skip(worker)
                            .step_by(workers)
                            .filter_map(|&index| {
                                let built = self.build(index);
                                self.stage.step(&self.describe());
                                built
                            })
                            .collect();
                        turns.wait();
                        for _ in 0..self.rounds {
                            for turn in 0..workers {
                                if turn == worker {
                                    for filter in &mut mine {
                                        self.time(filter);
                                    }
                                }
                                turns.wait();
                            }
                        }
                        mine.iter().map(|f| self.row(f)).collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        let position = |row: &SweepRow| self.entries.iter().position(|e| e.name == row.filter);
        rows.sort_by_key(position);
        rows
    }

    fn describe(&self) -> String {
        format!(
            "n = {}, p = {:e}",
            format_count(self.workload.items),
            self.workload.fpp
        )
    }

    /// The row of one measured filter.
    fn row(&self, filter: &Built) -> SweepRow {
        let (accuracy, confidence) = (self.accuracy, self.confidence);
        let entry = &self.entries[filter.index];
        let Workload { items, fpp, .. } = self.workload;
        let rounds = Rounds::of(&filter.ns);
        let queries = self.keys.negatives.len() as u64;
        let (ci_low, ci_high) = wilson_interval(filter.false_positives, queries, confidence);
        let theory = filter.subject.theory(items);
        let exact = theory
            .filter(|t| TheoryKind::of(Some(*t)) == TheoryKind::Exact)
            .map(Theory::fpp);
        SweepRow {
            filter: entry.name.to_owned(),
            origin: entry.origin,
            n: items,
            target_fpp: fpp,
            bits_per_item: filter.subject.memory_usage() as f64 * 8.0 / items as f64,
            negative_ns: rounds.median,
            min_negative_ns: rounds.min,
            max_negative_ns: rounds.max,
            rounds: rounds.count,
            queries,
            false_positives: filter.false_positives,
            empirical_fpp: filter.false_positives as f64 / queries.max(1) as f64,
            ci_low,
            ci_high,
            theoretical_fpp: theory.map(Theory::fpp),
            refused: filter.refused,
            meets_target: meets(
                (filter.refused, ci_low),
                exact,
                (entry.name, items, fpp),
                accuracy,
            ),
        }
    }
}

/// The accuracy row of `filter` at `fpp` whose n is nearest `items` (on a
/// log scale), if the accuracy experiment measured it.
fn nearest_accuracy<'a>(
    accuracy: &'a [AccuracyRow],
    filter: &str,
    items: u64,
    fpp: f64,
) -> Option<&'a AccuracyRow> {
    let distance = |row: &AccuracyRow| ((row.n as f64).ln() - (items as f64).ln()).abs();
    accuracy
        .iter()
        .filter(|r| r.filter == filter && r.target_fpp == fpp)
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Experiment, Preset};
    use crate::registry;

    #[test]
    fn every_filter_has_a_row_per_cell_and_bloom_meets_its_target() {
        let entries = registry::select(
            registry::registry(),
            &["BloomFilter".into(), "xorf-BinaryFuse8".into()],
        )
        .unwrap();
        let mut config = RunConfig::preset(Preset::Tiny, 3, 1);
        config.experiments = vec![Experiment::Sweep];
        config.sweep_items = vec![2_000, 5_000];
        let results = run(&entries, &config, &[], &Tracker::hidden());
        assert_eq!(results.rows.len(), 2 * 2 * 2, "{:?}", results.notes);
        let bloom: Vec<&SweepRow> = results
            .rows
            .iter()
            .filter(|r| r.filter == "BloomFilter")
            .collect();
        assert!(bloom.iter().all(|r| r.meets_target), "{bloom:?}");
        assert!(
            bloom
                .iter()
                .all(|r| r.negative_ns > 0.0 && r.bits_per_item > 4.0)
        );
        // A static 8-bit-fingerprint filter: 9 to 12 bits per item whatever p
        // (more at small n).
        let xorf: Vec<&SweepRow> = results
            .rows
            .iter()
            .filter(|r| r.filter == "xorf-BinaryFuse8")
            .collect();
        assert!(
            xorf.iter().all(|r| (8.5..12.0).contains(&r.bits_per_item)),
            "{xorf:?}"
        );
        // A filter at a time (as cells too large to hold every filter are
        // measured), on one worker or two: the same filters, bits and FPP.
        let timed = TimedKeys::new(
            &config,
            2_000,
            derive_seed(3, &[2_000, 0x5eed_5eee]),
            10_000,
        );
        let stage = Tracker::hidden();
        let stage = stage.stage("sweep", 1);
        let notes = Mutex::new(Vec::new());
        let cell = Cell {
            entries: &entries,
            workload: Workload {
                items: 2_000,
                fpp: 0.1,
                seed: derive_seed(3, &[2_000, 0x5eed_5eee]),
            },
            keys: &timed,
            rounds: 2,
            accuracy: &[],
            confidence: 0.99,
            stage: &stage,
            notes: &notes,
        };
        let first = &results.rows[..2];
        for (workers, batch) in [(1, 1), (2, 1), (2, 2)] {
            let rows = cell.measure(&[0, 1], workers, batch);
            assert_eq!(rows.len(), 2);
            for (row, earlier) in rows.iter().zip(first) {
                assert_eq!(row.filter, earlier.filter);
                assert_eq!(row.bits_per_item, earlier.bits_per_item);
                assert_eq!(row.false_positives, earlier.false_positives);
                assert_eq!(row.rounds, 2);
            }
        }
    }
}
