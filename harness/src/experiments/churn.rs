//! The churn experiment, for every filter that deletes: fill one filter to
//! its capacity n, then slide a window of n live keys over 10·n more
//! (remove the oldest, insert a new one). At regular points: the FPP over
//! fresh never-inserted keys with its interval, beside the theory for the
//! live load and the FPP given the filter's state, and the live keys it
//! reports absent, and its memory per live key; at the end, the one-key
//! negative lookup after the churn (timed as [`timing`] times every lookup
//! of the report, over several rounds). Then, on a new filter, the damage
//! that removing keys that were never inserted (but test positive) does to
//! the inserted ones.

use filterlab_core::keys::{insert_key, query_key};
use filterlab_peers::{Mode, Subject, Workload};
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::error::Error;
use crate::experiments::accuracy::{count_false_negatives, derive_seed, row_confidence};
use crate::experiments::sample::{FppSample, SampledRow, dynamic_with};
use crate::experiments::timing::{self, Rounds};
use crate::parallel::map_in_order;
use crate::progress::Tracker;
use crate::registry::{Build, Capability, Entry, GateOn, Origin};
use crate::text::{format_count, plural};

/// Where one churn row was measured: the filter, the point, and what it
/// lost or refused so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChurnPoint {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// The capacity n: the live keys the window holds.
    pub capacity: u64,
    /// The target FPP.
    pub target_fpp: f64,
    /// Sliding-window steps so far (remove the oldest, insert a new key).
    pub steps: u64,
    /// Steps so far / capacity.
    pub churn: f64,
    /// Keys live now: accepted and not yet removed.
    pub live: u64,
    /// Live keys answered absent now.
    pub false_negatives: u64,
    /// Removals of live keys that found nothing, so far: the key was
    /// answered absent just before, or the removal said it was not there.
    pub failed_removals: u64,
    /// Inserts refused as full, so far.
    pub refused: u64,
    /// Bytes of storage now.
    pub memory_bytes: u64,
    /// Bits of storage per live key.
    pub bits_per_item: f64,
    /// At the end of the churn: median ns per negative lookup, one key at
    /// a time (empty at the other points).
    pub negative_ns: Option<f64>,
    /// The fastest round.
    pub min_negative_ns: Option<f64>,
    /// The slowest round.
    pub max_negative_ns: Option<f64>,
}

/// One row of `churn.csv`: one filter at one point of the churn.
pub type ChurnRow = SampledRow<ChurnPoint>;

/// One row of `churn_removals.csv`: what removing never-inserted keys that
/// test positive did to a filter holding n keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BogusRemovalRow {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// Keys inserted first.
    pub capacity: u64,
    /// The target FPP.
    pub target_fpp: f64,
    /// Never-inserted keys scanned for positives.
    pub scanned: u64,
    /// Positives found and removed (the aim is `churn_bogus_removals`).
    pub removed: u64,
    /// Of those removals, how many the filter reported as done.
    pub reported_removed: u64,
    /// Inserted keys answered absent afterwards.
    pub false_negatives: u64,
    /// false_negatives / removed.
    pub false_negatives_per_removal: f64,
}

/// What the churn experiment measured.
pub struct ChurnResults {
    /// Rows over time, per filter.
    pub rows: Vec<ChurnRow>,
    /// Damage of removing never-inserted keys, per filter.
    pub bogus: Vec<BogusRemovalRow>,
    /// Filters skipped, and why.
    pub notes: Vec<String>,
}

/// Why the churn gate fails, one line per failing point; empty when it passes.
///
/// Every filterlab filter must report each live key present at every point
/// and find every key it removes, and its state-conditional FPP (its own
/// formula at the filter's actual state: one instance is measured, see
/// [`GateOn::single_instance`]) must lie inside each point's interval.
pub fn gate(rows: &[ChurnRow]) -> Vec<String> {
    let mut failures = Vec::new();
    for ChurnRow { at: point, sample } in rows.iter().filter(|r| r.at.origin == Origin::Filterlab) {
        let at = format!(
            "{} churn at {:.1}× capacity (n = {}, p = {:e})",
            point.filter,
            point.churn,
            format_count(point.capacity),
            point.target_fpp
        );
        if point.false_negatives > 0 || point.failed_removals > 0 {
            failures.push(format!(
                "{at}: {} false negatives, {} removals that found nothing",
                point.false_negatives, point.failed_removals
            ));
        }
        failures.extend(sample.failure().map(|why| format!("{at}: {why}")));
    }
    failures
}

/// Runs the churn experiment over the entries that delete.
///
/// # Errors
///
/// When a filter cannot be built for the configured capacity.
pub fn run(
    entries: &[Entry],
    config: &RunConfig,
    progress: &Tracker,
) -> Result<ChurnResults, Error> {
    let (removable, notes) = dynamic_with(entries, Capability::Deletes);
    let points = u64::from(config.churn_points.max(1));
    let confidence = row_confidence(
        config.family_error_rate,
        removable.len() * (points as usize + 1),
    );
    let stage = progress.stage("churn", removable.len() as u64);
    let order: Vec<usize> = (0..removable.len()).collect();
    let results = map_in_order(&order, config.threads, |index| {
        let entry = removable[index];
        let measured = churn(entry, config, confidence)
            .and_then(|rows| Ok((rows, bogus_removals(entry, config)?)));
        stage.step(entry.name);
        measured
    });
    stage.finish(&plural(removable.len() as u64, "filter", "filters"));
    let (mut rows, mut bogus) = (Vec::new(), Vec::new());
    for result in results {
        let (churned, removed) = result?;
        rows.extend(churned);
        bogus.push(removed);
    }
    Ok(ChurnResults { rows, bogus, notes })
}

/// The filter of `entry` for the churn workload, and that workload.
fn build(
    entry: &Entry,
    config: &RunConfig,
    salt: u64,
) -> Result<(Box<dyn Subject>, Workload), Error> {
    let capacity = config.churn_items;
    let seed = derive_seed(config.seed, &[capacity, salt]);
    let workload = Workload {
        items: capacity,
        fpp: config.churn_fpp,
        seed,
    };
    let Build::Empty(build) = entry.build else {
        return Err(Error::failed(format!("{}: static", entry.name)));
    };
    let subject = build(&workload)
        .map_err(|e| e.context(format!("{} for the churn experiment", entry.name)))?;
    Ok((subject, workload))
}

/// Fills one filter to capacity, then slides the window; a row at each point.
fn churn(entry: &Entry, config: &RunConfig, confidence: f64) -> Result<Vec<ChurnRow>, Error> {
    let (mut subject, workload) = build(entry, config, 0xc4_2000)?;
    let capacity = workload.items;
    let seed = workload.seed;
    let span = capacity * u64::from(config.churn_span);
    let points = u64::from(config.churn_points.max(1));
    let key = |i: u64| insert_key(seed, i);
    // accepted[i]: whether key i was taken (refused keys never enter the window).
    let mut accepted = vec![true; (capacity + span) as usize];
    let first: Vec<u64> = (0..capacity).map(key).collect();
    let mut refused_positions = Vec::new();
    subject.insert_keys(&first, Mode::OneKey, &mut refused_positions);
    for &position in &refused_positions {
        accepted[position] = false;
    }
    let mut refused = refused_positions.len() as u64;
    let mut failed_removals = 0;
    let mut rows = Vec::new();
    let mut step = 0;
    for point in 0..=points {
        let until = span * point / points;
        while step < until {
            if accepted[step as usize] {
                // Asked before the removal, because some peers' removals do
                // not say whether they found the key.
                let absent = subject.count_contained(&[key(step)], Mode::OneKey) == 0;
                if subject.remove_keys(&[key(step)]) == Some(0) || absent {
                    failed_removals += 1;
                }
            }
            let new = capacity + step;
            let mut refusal = Vec::new();
            subject.insert_keys(&[key(new)], Mode::OneKey, &mut refusal);
            if !refusal.is_empty() {
                accepted[new as usize] = false;
                refused += 1;
            }
            step += 1;
        }
        let live: Vec<u64> = (step..step + capacity)
            .filter(|&i| accepted[i as usize])
            .map(key)
            .collect();
        let queries = config.churn_queries;
        let block = point * queries;
        let lookup = (point == points).then(|| {
            let keys: Vec<u64> = (0..config.speed_lookups.max(1))
                .map(|i| query_key(seed, (points + 1) * queries + i))
                .collect();
            let rounds: Vec<f64> = (0..config.sweep_repetitions.max(1))
                .map(|_| timing::lookups(subject.as_ref(), &keys, Mode::OneKey, 1).1)
                .collect();
            Rounds::of(&rounds)
        });
        let memory_bytes = subject.memory_usage() as u64;
        let mut positives = 0;
        for start in (0..queries).step_by(4096) {
            let chunk: Vec<u64> = (start..queries.min(start + 4096))
                .map(|i| query_key(seed, block + i))
                .collect();
            positives += subject.count_contained(&chunk, Mode::OneKey);
        }
        rows.push(ChurnRow {
            at: ChurnPoint {
                filter: entry.name.to_owned(),
                origin: entry.origin,
                capacity,
                target_fpp: workload.fpp,
                steps: step,
                churn: step as f64 / capacity as f64,
                live: live.len() as u64,
                false_negatives: count_false_negatives(subject.as_ref(), &live, &[]),
                failed_removals,
                refused,
                memory_bytes,
                bits_per_item: memory_bytes as f64 * 8.0 / live.len().max(1) as f64,
                negative_ns: lookup.map(|r| r.median),
                min_negative_ns: lookup.map(|r| r.min),
                max_negative_ns: lookup.map(|r| r.max),
            },
            // One instance: its state-conditional FPP (exact for it), as
            // `GateOn::single_instance` explains.
            sample: FppSample::new(
                subject.as_ref(),
                live.len() as u64,
                (positives, queries),
                confidence,
                |_| match entry.origin {
                    Origin::Filterlab => GateOn::State,
                    Origin::Peer => GateOn::Nothing,
                },
            ),
        });
    }
    Ok(rows)
}

/// Fills a new filter to capacity, finds never-inserted keys that test
/// positive (up to `churn_bogus_removals`, scanning at most
/// `churn_bogus_scan` keys), removes them, and counts the inserted keys
/// lost.
fn bogus_removals(entry: &Entry, config: &RunConfig) -> Result<BogusRemovalRow, Error> {
    let (mut subject, workload) = build(entry, config, 0xb0_9005)?;
    let keys: Vec<u64> = (0..workload.items)
        .map(|i| insert_key(workload.seed, i))
        .collect();
    let mut refused = Vec::new();
    subject.insert_keys(&keys, Mode::OneKey, &mut refused);
    let wanted = config.churn_bogus_removals;
    let mut positives = Vec::new();
    let mut scanned = 0;
    while (positives.len() as u64) < wanted && scanned < config.churn_bogus_scan {
        let end = (scanned + 4096).min(config.churn_bogus_scan);
        for i in scanned..end {
            let query = query_key(workload.seed, i);
            if subject.count_contained(&[query], Mode::OneKey) == 1 {
                positives.push(query);
                if positives.len() as u64 == wanted {
                    break;
                }
            }
        }
        scanned = end;
    }
    let reported_removed = subject.remove_keys(&positives).unwrap_or(0);
    let false_negatives = count_false_negatives(subject.as_ref(), &keys, &refused);
    let removed = positives.len() as u64;
    Ok(BogusRemovalRow {
        filter: entry.name.to_owned(),
        origin: entry.origin,
        capacity: workload.items,
        target_fpp: workload.fpp,
        scanned,
        removed,
        reported_removed,
        false_negatives,
        false_negatives_per_removal: if removed == 0 {
            f64::NAN
        } else {
            false_negatives as f64 / removed as f64
        },
    })
}

/// A made-up last churn row for tests: `filter` after 10× its capacity of
/// churn at p = 1e-2, `bits` per live key, `lost` live keys, a 30 ns (±2%)
/// negative lookup.
#[cfg(test)]
pub(crate) fn made_up(filter: &str, bits: f64, lost: u64) -> ChurnRow {
    ChurnRow {
        at: ChurnPoint {
            filter: filter.to_owned(),
            origin: Origin::Filterlab,
            capacity: 1000,
            target_fpp: 0.01,
            steps: 10_000,
            churn: 10.0,
            live: 1000,
            false_negatives: lost,
            failed_removals: 0,
            refused: 0,
            memory_bytes: (bits * 1000.0 / 8.0) as u64,
            bits_per_item: bits,
            negative_ns: Some(30.0),
            min_negative_ns: Some(29.4),
            max_negative_ns: Some(30.6),
        },
        sample: FppSample {
            queries: 100_000,
            false_positives: 1000,
            empirical_fpp: 0.01,
            ci_low: 0.009,
            ci_high: 0.011,
            confidence: 0.999,
            theoretical_fpp: Some(0.01),
            theory: crate::experiments::verdict::TheoryKind::Exact,
            fill_fpp: Some(0.01),
            gated_on: GateOn::State,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(gated_on: GateOn, fill: f64, false_negatives: u64) -> ChurnRow {
        ChurnRow {
            at: ChurnPoint {
                filter: "X".into(),
                origin: Origin::Filterlab,
                capacity: 1000,
                target_fpp: 0.01,
                steps: 500,
                churn: 0.5,
                live: 1000,
                false_negatives,
                failed_removals: 0,
                refused: 0,
                memory_bytes: 1250,
                bits_per_item: 10.0,
                negative_ns: None,
                min_negative_ns: None,
                max_negative_ns: None,
            },
            sample: FppSample {
                queries: 10_000,
                false_positives: 100,
                empirical_fpp: 0.01,
                ci_low: 0.008,
                ci_high: 0.012,
                confidence: 0.999,
                theoretical_fpp: Some(0.02),
                theory: crate::experiments::verdict::TheoryKind::Approximate,
                fill_fpp: Some(fill),
                gated_on,
            },
        }
    }

    #[test]
    fn the_gate_holds_each_point_to_its_reference_and_no_losses() {
        assert!(gate(&[row(GateOn::State, 0.011, 0)]).is_empty());
        // An approximate theory outside the interval is not gated.
        assert!(gate(&[row(GateOn::Theory, 0.5, 0)]).is_empty());
        let failures = gate(&[row(GateOn::State, 0.02, 3)]);
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(failures[0].contains("3 false negatives"));
        assert!(failures[1].contains("state-conditional FPP 2.0000e-2 against"));
        let mut peer = row(GateOn::Nothing, 0.5, 9);
        peer.at.origin = Origin::Peer;
        assert!(gate(&[peer]).is_empty());
    }
}
