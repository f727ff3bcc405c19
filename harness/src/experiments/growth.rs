//! The growth experiment, for every filter that grows: built for a small
//! capacity, fed keys up to 1000 times that, and measured at every doubling
//! on the way: the FPP with its interval beside the filter's theory (its
//! bound) and the target, memory per item beside a `BloomFilter` sized for
//! the items held, and one-key lookup times (timed as [`timing`] times
//! every lookup of the report; at the end, over several rounds). Run on one
//! thread, filter after filter, so the timings are comparable.

use filterlab_bloom::BloomFilter;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::mix64;
use filterlab_peers::{Mode, Subject, Theory, Workload};
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::error::Error;
use crate::experiments::accuracy::{count_false_negatives, derive_seed, row_confidence};
use crate::experiments::sample::{FppSample, SampledRow, dynamic_with};
use crate::experiments::timing::{self, Rounds};
use crate::progress::Tracker;
use crate::registry::{Build, Capability, Entry, GateOn, Origin};
use crate::text::{format_count, plural};

/// Fewest never-inserted keys queried at a point.
const MIN_QUERIES: u64 = 4096;

/// Positive lookups timed per point, at most.
pub const POSITIVE_LOOKUPS: u64 = 100_000;

/// Where one growth row was measured: the filter, its size, its memory,
/// its losses and its lookup times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GrowthPoint {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// The capacity it was built for.
    pub initial_capacity: u64,
    /// The target FPP it was built for.
    pub target_fpp: f64,
    /// Keys offered so far.
    pub items: u64,
    /// Items offered / initial capacity.
    pub growth: f64,
    /// Bytes of storage now.
    pub memory_bytes: u64,
    /// Bits of storage per item held.
    pub bits_per_item: f64,
    /// Bits per item of a `BloomFilter` sized for these items at the target.
    pub bloom_bits_per_item: f64,
    /// Accepted keys answered absent.
    pub false_negatives: u64,
    /// Inserts refused as full so far.
    pub refused: u64,
    /// ns per positive lookup, one key at a time.
    pub positive_ns: f64,
    /// ns per negative lookup, one key at a time (the median of the
    /// rounds at the end, one round before).
    pub negative_ns: f64,
    /// The fastest round.
    pub min_negative_ns: f64,
    /// The slowest round.
    pub max_negative_ns: f64,
}

/// One row of `growth.csv`: one filter at one doubling.
pub type GrowthRow = SampledRow<GrowthPoint>;

impl GrowthRow {
    /// Whether the whole interval lies above the target.
    pub fn above_target(&self) -> bool {
        self.sample.ci_low > self.at.target_fpp
    }
}

/// What the growth experiment measured.
pub struct GrowthResults {
    /// One row per filter, target and doubling.
    pub rows: Vec<GrowthRow>,
    /// Filters skipped, and why.
    pub notes: Vec<String>,
}

/// Why the growth gate fails; empty when it passes.
///
/// Every filterlab filter: no false negatives; the measured FPP never above
/// the target beyond its interval (every filterlab filter that grows keeps
/// its target); with an exact theory (the scalable Bloom filter's compound
/// formula), that formula at the instance's actual fill (its
/// state-conditional FPP, see [`GateOn::single_instance`]) inside each
/// point's interval; with a theory that is a bound (the grown cuckoo
/// filter's compound a-priori FPP), the measured FPP never above the bound
/// beyond the interval.
pub fn gate(rows: &[GrowthRow]) -> Vec<String> {
    let mut failures = Vec::new();
    for row in rows.iter().filter(|r| r.at.origin == Origin::Filterlab) {
        let (point, sample) = (&row.at, &row.sample);
        let at = format!(
            "{} grown to {} items (from {}, P = {:e})",
            point.filter,
            format_count(point.items),
            format_count(point.initial_capacity),
            point.target_fpp
        );
        if point.false_negatives > 0 {
            failures.push(format!("{at}: {} false negatives", point.false_negatives));
        }
        failures.extend(sample.failure().map(|why| format!("{at}: {why}")));
        if sample.gated_on != GateOn::Nothing && row.above_target() {
            failures.push(format!(
                "{at}: measured {:.4e}, above the target beyond its interval",
                sample.empirical_fpp
            ));
        }
    }
    failures
}

/// The item counts measured: every doubling of the initial capacity up to
/// the final count, and the final count.
pub fn points(initial: u64, last: u64) -> Vec<u64> {
    let mut points: Vec<u64> = std::iter::successors(Some(initial.max(1)), |&n| n.checked_mul(2))
        .take_while(|&n| n <= last)
        .collect();
    if points.last() != Some(&last) {
        points.push(last);
    }
    points
}

/// Runs the growth experiment over the entries that grow.
///
/// # Errors
///
/// When a filter cannot be built for the initial capacity.
pub fn run(
    entries: &[Entry],
    config: &RunConfig,
    progress: &Tracker,
) -> Result<GrowthResults, Error> {
    let (growing, notes) = dynamic_with(entries, Capability::Growth);
    let at = points(config.growth_initial, config.growth_final);
    let rows = growing.len() * config.growth_fpps.len() * at.len();
    let confidence = row_confidence(config.family_error_rate, rows);
    let stage = progress.stage("growth", (growing.len() * config.growth_fpps.len()) as u64);
    let mut results = Vec::with_capacity(rows);
    for &fpp in &config.growth_fpps {
        for entry in &growing {
            results.extend(grow(entry, fpp, &at, config, confidence)?);
            stage.step(&format!("{} at P = {fpp:e}", entry.name));
        }
    }
    stage.finish(&plural(growing.len() as u64, "filter", "filters"));
    Ok(GrowthResults {
        rows: results,
        notes,
    })
}

/// Grows one filter through `points`, a row at each.
fn grow(
    entry: &Entry,
    fpp: f64,
    points: &[u64],
    config: &RunConfig,
    confidence: f64,
) -> Result<Vec<GrowthRow>, Error> {
    let initial = config.growth_initial;
    let seed = derive_seed(config.seed, &[initial, fpp.to_bits(), 0x9e0_0717]);
    let workload = Workload {
        items: initial,
        fpp,
        seed,
    };
    let Build::Empty(build) = entry.build else {
        return Ok(Vec::new());
    };
    let mut subject = build(&workload)
        .map_err(|e| e.context(format!("{} for the growth experiment", entry.name)))?;
    let last = points.last().copied().unwrap_or(initial);
    let keys: Vec<u64> = (0..last).map(|i| insert_key(seed, i)).collect();
    let queries = ((config.expected_false_positives / fpp).ceil() as u64)
        .clamp(MIN_QUERIES, config.growth_max_queries.max(MIN_QUERIES));
    let mut refused = Vec::new();
    let mut rows = Vec::with_capacity(points.len());
    let mut inserted = 0;
    for (point, &items) in points.iter().enumerate() {
        let mut refused_now = Vec::new();
        let from = inserted as usize;
        subject.insert_keys(&keys[from..items as usize], Mode::Batched, &mut refused_now);
        refused.extend(refused_now.into_iter().map(|position| from + position));
        inserted = items;
        let held = &keys[..items as usize];
        let accepted = items - refused.len() as u64;
        // The end of growth, where the guide judges a filter, gets the
        // rounds a sweep cell gets.
        let rounds = if items == last {
            config.sweep_repetitions.max(1)
        } else {
            1
        };
        let (false_positives, negative) = negatives(
            subject.as_ref(),
            seed,
            point as u64 * queries,
            queries,
            rounds,
        );
        let positive_ns = positives(subject.as_ref(), held, seed);
        let memory_bytes = subject.memory_usage() as u64;
        rows.push(GrowthRow {
            at: GrowthPoint {
                filter: entry.name.to_owned(),
                origin: entry.origin,
                initial_capacity: initial,
                target_fpp: fpp,
                items,
                growth: items as f64 / initial as f64,
                memory_bytes,
                bits_per_item: memory_bytes as f64 * 8.0 / accepted.max(1) as f64,
                bloom_bits_per_item: BloomFilter::params(accepted.max(1), fpp)
                    .map_or(f64::NAN, |s| s.bits_per_item()),
                false_negatives: count_false_negatives(subject.as_ref(), held, &refused),
                refused: refused.len() as u64,
                positive_ns,
                negative_ns: negative.median,
                min_negative_ns: negative.min,
                max_negative_ns: negative.max,
            },
            sample: FppSample::new(
                subject.as_ref(),
                accepted,
                (false_positives, queries),
                confidence,
                |theory| {
                    GateOn::single_instance(entry.origin, theory.is_some_and(Theory::is_exact))
                },
            ),
        });
    }
    Ok(rows)
}

/// Positives among `count` fresh never-inserted keys from `offset`, and
/// the ns per lookup, one key at a time, over `rounds` timed rounds.
fn negatives(
    subject: &dyn Subject,
    seed: u64,
    offset: u64,
    count: u64,
    rounds: u32,
) -> (u64, Rounds) {
    let keys: Vec<u64> = (0..count).map(|i| query_key(seed, offset + i)).collect();
    let mut found = 0;
    let mut ns = Vec::new();
    for _ in 0..rounds.max(1) {
        let (positives, round) = timing::lookups(subject, &keys, Mode::OneKey, count);
        found = positives;
        ns.push(round);
    }
    (found, Rounds::of(&ns))
}

/// ns per positive lookup of inserted keys drawn pseudo-randomly from `held`.
fn positives(subject: &dyn Subject, held: &[u64], seed: u64) -> f64 {
    let count = POSITIVE_LOOKUPS.min(held.len() as u64 * 4).max(1);
    let sample: Vec<u64> = (0..count)
        .map(|i| held[(mix64(seed ^ i) % held.len() as u64) as usize])
        .collect();
    timing::lookups(subject, &sample, Mode::OneKey, count).1
}

/// A made-up growth row for tests: `filter` grown from 10^3 to `items`
/// at P = 1e-2, with `bits` per item, `ns` per negative lookup (±2%) and
/// the low end of its FPP interval.
#[cfg(test)]
pub(crate) fn made_up(filter: &str, items: u64, bits: f64, ns: f64, ci_low: f64) -> GrowthRow {
    GrowthRow {
        at: GrowthPoint {
            filter: filter.to_owned(),
            origin: Origin::Filterlab,
            initial_capacity: 1000,
            target_fpp: 0.01,
            items,
            growth: items as f64 / 1000.0,
            memory_bytes: (bits * items as f64 / 8.0) as u64,
            bits_per_item: bits,
            bloom_bits_per_item: 9.6,
            false_negatives: 0,
            refused: 0,
            positive_ns: ns,
            negative_ns: ns,
            min_negative_ns: ns * 0.98,
            max_negative_ns: ns * 1.02,
        },
        sample: FppSample {
            queries: 40_000,
            false_positives: 300,
            empirical_fpp: 0.0075,
            ci_low,
            ci_high: 0.009,
            confidence: 0.999,
            theoretical_fpp: Some(0.008),
            theory: crate::experiments::verdict::TheoryKind::Approximate,
            fill_fpp: None,
            gated_on: GateOn::Bound,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doublings_end_at_the_final_count() {
        assert_eq!(points(1000, 8000), [1000, 2000, 4000, 8000]);
        assert_eq!(points(1000, 5000), [1000, 2000, 4000, 5000]);
        assert_eq!(points(1000, 1_000_000).len(), 11);
    }
}
