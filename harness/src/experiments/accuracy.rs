//! The accuracy experiment: for every filter, capacity n and target p, the
//! empirical FPP over never-inserted keys with a Wilson interval, beside the
//! filter's theory; false negatives; and the gate CI runs.
//!
//! Two traps are handled:
//!
//! - **Instance variation.** A Wilson interval only covers the sampling of
//!   queries, not the variation between filter instances (for a Bloom filter
//!   the fill X varies, and the FPP of one instance is (X/m)^k, whose relative
//!   spread ≈ √(k ln 2 / n) dominates for small n). Each row therefore pools
//!   ⌈instance_items / n⌉ independently seeded instances (64 at n = 10^3), which
//!   shrinks that spread below a tenth of the query-sampling variance, and also
//!   reports `fill_fpp`: the mean of each instance's FPP conditional on its
//!   actual state, where the filter can tell.
//! - **Multiple comparisons.** With many rows, some would miss a 95% interval
//!   by chance. The run's family-wise error rate (1%) is split over its rows
//!   (Bonferroni): each row's interval has confidence 1 − 0.01/rows.

use std::borrow::Cow;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::mix64;
use filterlab_core::theory::wilson_interval;
use filterlab_peers::{Mode, Subject, Theory, Workload};
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::error::Error;
use crate::experiments::sample::FppSample;
use crate::experiments::verdict::{TargetCheck, TargetStatus, TheoryCheck, TheoryKind, Verdict};
use crate::parallel::map_in_order;
use crate::progress::Tracker;
use crate::registry::{Entry, GateOn, Origin};
use crate::text::format_count;

/// A design FPP up to this factor over the target still counts as meeting it
/// (here and in the sweep).
pub(crate) const DESIGN_TOLERANCE: f64 = 1.001;

/// Query keys are generated and looked up in chunks of this many.
const QUERY_CHUNK: u64 = 4096;

/// One row of `accuracy.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    /// The filter's registry name.
    pub filter: String,
    /// filterlab or a peer.
    pub origin: Origin,
    /// Capacity the filter was sized for; exactly this many keys are inserted.
    pub n: u64,
    /// The target FPP it was sized for.
    pub target_fpp: f64,
    /// Bits of storage per item (first instance).
    pub bits_per_item: f64,
    /// The FPP the filter's formula predicts at n (empty when unknown).
    pub theoretical_fpp: Option<f64>,
    /// What that formula is worth.
    pub theory: TheoryKind,
    /// Mean FPP conditional on each instance's state, weighted by its queries.
    pub fill_fpp: Option<f64>,
    /// False positives / queries.
    pub empirical_fpp: f64,
    /// Wilson interval, lower end, at `confidence`.
    pub ci_low: f64,
    /// Wilson interval, upper end, at `confidence`.
    pub ci_high: f64,
    /// The interval's confidence (Bonferroni-adjusted).
    pub confidence: f64,
    /// Never-inserted keys queried, over all instances.
    pub queries: u64,
    /// Queries answered "present".
    pub false_positives: u64,
    /// Independently seeded filters pooled in this row.
    pub instances: u32,
    /// Inserted (and accepted) keys answered "absent", over all instances.
    pub false_negatives: u64,
    /// Inserts the filter refused as full, over all instances.
    pub refused: u64,
    /// The row's verdict ([`judge`](Self::judge) of the fields above).
    pub verdict: Verdict,
    /// What the accuracy gate holds this row to (filterlab filters only).
    pub gated_on: GateOn,
}

impl AccuracyRow {
    /// The verdict on this row's measurements.
    pub fn judge(&self) -> Verdict {
        let theory = match (self.theoretical_fpp, self.theory_inside()) {
            (Some(_), Some(true)) => TheoryCheck::Inside(self.theory),
            (Some(theory), _) => TheoryCheck::Outside(self.theory, self.empirical_fpp / theory),
            (None, _) => TheoryCheck::Missing,
        };
        let target = if self.ci_low > self.target_fpp {
            TargetCheck::Misses(self.empirical_fpp / self.target_fpp)
        } else if let Some(excess) = self.design_excess() {
            TargetCheck::TheoryOver(excess)
        } else {
            TargetCheck::Meets
        };
        Verdict {
            false_negatives: self.false_negatives,
            refused: self.refused,
            theory,
            target,
        }
    }

    /// The row's pooled FPP measurement as the single-instance experiments
    /// record theirs: one set of interval and gate rules serves both.
    pub fn sample(&self) -> FppSample {
        FppSample {
            queries: self.queries,
            false_positives: self.false_positives,
            empirical_fpp: self.empirical_fpp,
            ci_low: self.ci_low,
            ci_high: self.ci_high,
            confidence: self.confidence,
            theoretical_fpp: self.theoretical_fpp,
            theory: self.theory,
            fill_fpp: self.fill_fpp,
            gated_on: self.gated_on,
        }
    }

    /// Whether the theory lies inside the interval; `None` without a theory.
    pub fn theory_inside(&self) -> Option<bool> {
        self.sample().theory_inside()
    }

    /// Whether the fill-conditional FPP lies inside the interval.
    pub fn fill_inside(&self) -> Option<bool> {
        self.sample().fill_inside()
    }

    /// The filter's exact theory / target, when the design itself exceeds
    /// the target by more than 0.1% (e.g. sized with the optimistic classic
    /// formula); `None` otherwise.
    pub fn design_excess(&self) -> Option<f64> {
        let theory = self
            .theoretical_fpp
            .filter(|_| self.theory == TheoryKind::Exact)?;
        let ratio = theory / self.target_fpp;
        (ratio > DESIGN_TOLERANCE).then_some(ratio)
    }

    /// How the row stands against its target.
    pub fn status(&self) -> TargetStatus {
        let delivered =
            self.false_negatives == 0 && self.refused == 0 && self.ci_low <= self.target_fpp;
        match (delivered, self.design_excess()) {
            (true, None) => TargetStatus::Meets,
            (true, Some(_)) => TargetStatus::TheoryOverTarget,
            (false, _) => TargetStatus::Misses,
        }
    }

    /// Whether the filter delivered its target ([`TargetStatus::Meets`]).
    pub fn meets_target(&self) -> bool {
        self.status() == TargetStatus::Meets
    }

    /// Whether this row is a filterlab filter's.
    pub fn is_filterlab(&self) -> bool {
        self.origin == Origin::Filterlab
    }

    fn describe(&self) -> String {
        format!(
            "{} at n = {}, p = {:e}",
            self.filter,
            format_count(self.n),
            self.target_fpp
        )
    }
}

/// Why the accuracy gate fails, one line per failing row; empty when it passes.
///
/// The gate holds filterlab filters (not peers) to: no false negatives, and
/// the reference their entry names inside the row's interval: an exact
/// theory ([`GateOn::Theory`]), or the FPP given each instance's state
/// ([`GateOn::State`], which must then be known), by the rules of
/// [`FppSample::failure`], which the churn and growth experiments share.
pub fn gate(rows: &[AccuracyRow]) -> Vec<String> {
    let mut failures = Vec::new();
    for row in rows.iter().filter(|r| r.is_filterlab()) {
        if row.false_negatives > 0 {
            failures.push(format!(
                "{}: {} false negatives",
                row.describe(),
                row.false_negatives
            ));
        }
        if row.gated_on == GateOn::State && row.fill_fpp.is_none() {
            failures.push(format!(
                "{}: gated on its state-conditional FPP, which it does not report",
                row.describe()
            ));
        } else if let Some(why) = row.sample().failure() {
            failures.push(format!("{}: {why}", row.describe()));
        }
    }
    failures
}

/// A seed derived from the master seed and a row's coordinates.
pub fn derive_seed(master: u64, parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(mix64(master ^ 0xacc0_4a7e), |seed, &part| {
            mix64(seed ^ mix64(part.wrapping_add(0x9e37_79b9_7f4a_7c15)))
        })
}

/// One accuracy row to measure.
struct Task<'a> {
    entry: &'a Entry,
    items: u64,
    fpp: f64,
}

/// The Bonferroni-adjusted confidence of each row when `rows` rows share
/// the family-wise error rate `family`.
pub fn row_confidence(family: f64, rows: usize) -> f64 {
    1.0 - family / rows.max(1) as f64
}

/// Runs the accuracy experiment over `entries`. A filter whose FPP does
/// not depend on the target ([`Entry::fixed_fpp`]) is the same filter at
/// every p: it is measured once per n, at the first target, and that
/// measurement is its row at every target, judged against each.
///
/// # Errors
///
/// When a filter cannot be built for a row's workload.
pub fn run(
    entries: &[Entry],
    config: &RunConfig,
    progress: &Tracker,
) -> Result<Vec<AccuracyRow>, Error> {
    let mut tasks = Vec::new();
    for entry in entries {
        for &items in &config.accuracy_items {
            for &fpp in &config.accuracy_fpps {
                tasks.push(Task { entry, items, fpp });
            }
        }
    }
    let confidence = row_confidence(config.family_error_rate, tasks.len());
    let first = config.accuracy_fpps.first().copied();
    let measured_here = |task: &Task<'_>| task.entry.fixed_fpp.is_none() || Some(task.fpp) == first;
    let measured_tasks: Vec<&Task<'_>> = tasks.iter().filter(|t| measured_here(t)).collect();
    // Largest tasks (smallest p, largest n) first, so the workers finish together.
    let mut order: Vec<usize> = (0..measured_tasks.len()).collect();
    order.sort_by(|&a, &b| {
        let cost = |t: &Task<'_>| {
            config.expected_false_positives / t.entry.fixed_fpp.unwrap_or(t.fpp) + t.items as f64
        };
        cost(measured_tasks[b]).total_cmp(&cost(measured_tasks[a]))
    });
    let stage = progress.stage("accuracy", order.len() as u64);
    let rows = map_in_order(&order, config.threads, |index| {
        let task = measured_tasks[index];
        let row = measure(task.entry, task.items, task.fpp, config, confidence);
        if let Ok(row) = &row {
            stage.step(&format!("{}: {}", row.describe(), row.verdict));
        }
        row
    });
    stage.finish(&format!("{} rows", tasks.len()));
    let measured: Vec<AccuracyRow> = rows.into_iter().collect::<Result<_, _>>()?;
    Ok(tasks
        .iter()
        .filter_map(|task| {
            let at = |fpp: f64| {
                measured.iter().find(|r| {
                    r.filter == task.entry.name && r.n == task.items && r.target_fpp == fpp
                })
            };
            if measured_here(task) {
                return at(task.fpp).cloned();
            }
            let mut row = at(first?)?.clone();
            row.target_fpp = task.fpp;
            row.verdict = row.judge();
            Some(row)
        })
        .collect())
}

/// Measures one row: `instances` seeded filters of capacity `items` at `fpp`,
/// each filled with exactly `items` keys and probed with its share of the
/// row's never-inserted queries.
///
/// # Errors
///
/// When the filter cannot be built.
pub fn measure(
    entry: &Entry,
    items: u64,
    fpp: f64,
    config: &RunConfig,
    confidence: f64,
) -> Result<AccuracyRow, Error> {
    let instances = config.instances(items);
    let user = config.keys.as_deref();
    let mut totals = Totals::default();
    let mut queries = 0;
    let mut theory = None;
    let mut bits_per_item = 0.0;
    let mut fill_weighted = Some(0.0);
    for instance in 0..instances {
        let seed = derive_seed(config.seed, &[items, fpp.to_bits(), u64::from(instance)]);
        let workload = Workload { items, fpp, seed };
        let keys: Cow<'_, [u64]> = match user {
            Some(user) => Cow::Borrowed(user.inserted()),
            None => Cow::Owned((0..items).map(|i| insert_key(seed, i)).collect()),
        };
        let (subject, refused) = entry
            .build_with(&workload, &keys)
            .map_err(|e| e.context(format!("{} at n = {items}, p = {fpp:e}", entry.name)))?;
        if instance == 0 {
            theory = subject.theory(items);
            bits_per_item = subject.memory_usage() as f64 * 8.0 / items as f64;
            // Enough queries for the expected false positives at the lower of
            // the target and the predicted FPP (at its own FPP for a filter
            // whose row serves every target).
            let expected = match entry.fixed_fpp {
                Some(fixed) => fixed,
                None => theory.map_or(fpp, |t| t.fpp().min(fpp)),
            }
            .max(1e-12);
            queries = ((config.expected_false_positives / expected).ceil() as u64)
                .clamp(u64::from(instances) * 100, config.max_queries.max(1));
            // The user's keys: every held-out key, whatever that gives.
            if let Some(user) = user {
                queries = (user.held_out().len() as u64).min(config.max_queries.max(1));
            }
        }
        let share = queries / u64::from(instances)
            + u64::from(u64::from(instance) < queries % u64::from(instances));
        totals.refused += refused.len() as u64;
        totals.false_negatives += count_false_negatives(subject.as_ref(), &keys, &refused);
        totals.false_positives += match user {
            Some(user) => {
                subject.count_contained(&user.held_out()[..share as usize], Mode::Batched)
            }
            None => count_positives(subject.as_ref(), seed, share),
        };
        fill_weighted = match (fill_weighted, subject.fill_fpp()) {
            (Some(sum), Some(fill)) => Some(sum + fill * share as f64),
            _ => None,
        };
    }
    let (ci_low, ci_high) = wilson_interval(totals.false_positives, queries, confidence);
    let mut row = AccuracyRow {
        filter: entry.name.to_owned(),
        origin: entry.origin,
        n: items,
        target_fpp: fpp,
        bits_per_item,
        theoretical_fpp: theory.map(Theory::fpp),
        theory: TheoryKind::of(theory),
        fill_fpp: fill_weighted.map(|sum| sum / queries as f64),
        empirical_fpp: totals.false_positives as f64 / queries as f64,
        ci_low,
        ci_high,
        confidence,
        queries,
        false_positives: totals.false_positives,
        instances,
        false_negatives: totals.false_negatives,
        refused: totals.refused,
        verdict: Verdict::UNJUDGED,
        gated_on: entry.gate,
    };
    row.verdict = row.judge();
    Ok(row)
}

#[derive(Default)]
struct Totals {
    false_positives: u64,
    false_negatives: u64,
    refused: u64,
}

/// Inserted keys the filter accepted but now reports absent.
pub fn count_false_negatives(subject: &dyn Subject, keys: &[u64], refused: &[usize]) -> u64 {
    if refused.is_empty() {
        return keys.len() as u64 - subject.count_contained(keys, Mode::Batched);
    }
    let mut refused_sorted = refused.to_vec();
    refused_sorted.sort_unstable();
    let accepted: Vec<u64> = keys
        .iter()
        .enumerate()
        .filter(|(index, _)| refused_sorted.binary_search(index).is_err())
        .map(|(_, &key)| key)
        .collect();
    accepted.len() as u64 - subject.count_contained(&accepted, Mode::Batched)
}

/// Positives among the first `queries` keys of the never-inserted stream.
pub fn count_positives(subject: &dyn Subject, seed: u64, queries: u64) -> u64 {
    let mut chunk = Vec::with_capacity(QUERY_CHUNK as usize);
    let mut positives = 0;
    let mut next = 0;
    while next < queries {
        let end = (next + QUERY_CHUNK).min(queries);
        chunk.clear();
        chunk.extend((next..end).map(|i| query_key(seed, i)));
        positives += subject.count_contained(&chunk, Mode::Batched);
        next = end;
    }
    positives
}

/// A made-up row for tests: `filter` at (`n`, `p`) with `bits` per item,
/// its exact theory `fpp` measured as `fpp` on a million queries.
#[cfg(test)]
pub(crate) fn made_up(filter: &str, n: u64, p: f64, bits: f64, fpp: f64) -> AccuracyRow {
    let queries = 1_000_000;
    let false_positives = (fpp * queries as f64).round() as u64;
    let (ci_low, ci_high) = wilson_interval(false_positives, queries, 0.999);
    let mut row = AccuracyRow {
        filter: filter.to_owned(),
        origin: Origin::Filterlab,
        n,
        target_fpp: p,
        bits_per_item: bits,
        theoretical_fpp: Some(fpp),
        theory: TheoryKind::Exact,
        fill_fpp: None,
        empirical_fpp: false_positives as f64 / queries as f64,
        ci_low,
        ci_high,
        confidence: 0.999,
        queries,
        false_positives,
        instances: 1,
        false_negatives: 0,
        refused: 0,
        verdict: Verdict::UNJUDGED,
        gated_on: GateOn::Theory,
    };
    row.verdict = row.judge();
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(origin: Origin, theory: f64, low: f64, high: f64, false_negatives: u64) -> AccuracyRow {
        let mut row = AccuracyRow {
            filter: "X".into(),
            origin,
            n: 1000,
            target_fpp: 0.01,
            bits_per_item: 9.6,
            theoretical_fpp: Some(theory),
            theory: TheoryKind::Exact,
            fill_fpp: None,
            empirical_fpp: f64::midpoint(low, high),
            ci_low: low,
            ci_high: high,
            confidence: 0.999,
            queries: 40_000,
            false_positives: 400,
            instances: 1,
            false_negatives,
            refused: 0,
            verdict: Verdict::UNJUDGED,
            gated_on: match origin {
                Origin::Filterlab => GateOn::Theory,
                Origin::Peer => GateOn::Nothing,
            },
        };
        row.verdict = row.judge();
        row
    }

    #[test]
    fn gate_passes_theory_inside_and_no_false_negatives() {
        assert!(gate(&[row(Origin::Filterlab, 0.01, 0.009, 0.011, 0)]).is_empty());
    }

    #[test]
    fn gate_fails_on_false_negatives_and_theory_outside() {
        let failures = gate(&[
            row(Origin::Filterlab, 0.01, 0.009, 0.011, 2),
            row(Origin::Filterlab, 0.01, 0.012, 0.014, 0),
        ]);
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(failures[0].contains("2 false negatives"));
        assert!(failures[1].contains("exact theory 1.0000e-2 against"));
    }

    #[test]
    fn gate_on_state_checks_the_fill_conditional_fpp() {
        let mut cuckoo = row(Origin::Filterlab, 0.02, 0.009, 0.011, 0);
        cuckoo.theory = TheoryKind::Approximate;
        cuckoo.gated_on = GateOn::State;
        let failures = gate(std::slice::from_ref(&cuckoo));
        assert!(failures[0].contains("does not report"), "{failures:?}");
        cuckoo.fill_fpp = Some(0.0101);
        assert!(gate(std::slice::from_ref(&cuckoo)).is_empty());
        cuckoo.fill_fpp = Some(0.012);
        let failures = gate(&[cuckoo]);
        assert!(
            failures[0].contains("state-conditional FPP 1.2000e-2 against"),
            "{failures:?}"
        );
    }

    #[test]
    fn gate_ignores_peers_and_non_exact_theories() {
        let mut approximate = row(Origin::Filterlab, 0.01, 0.012, 0.014, 0);
        approximate.theory = TheoryKind::Approximate;
        let peer = row(Origin::Peer, 0.01, 0.02, 0.03, 5);
        assert!(gate(&[approximate, peer]).is_empty());
    }

    #[test]
    fn verdicts_say_what_happened() {
        let missed = row(Origin::Peer, 0.01, 0.02, 0.03, 5);
        let text = missed.verdict.to_string();
        assert_eq!(
            text,
            "5 FALSE NEGATIVES; exact theory OUTSIDE interval (measured 2.500× theory); \
             FPP misses target (2.50× p)"
        );
        assert_eq!(missed.status(), TargetStatus::Misses);
        let fine = row(Origin::Filterlab, 0.01, 0.009, 0.011, 0);
        assert_eq!(
            fine.verdict.to_string(),
            "exact theory inside interval; FPP meets target"
        );
        assert!(fine.meets_target());
        let mut over = row(Origin::Peer, 0.010_04, 0.009, 0.011, 0);
        over.refused = 3;
        over.verdict = over.judge();
        assert_eq!(over.status(), TargetStatus::Misses);
        assert_eq!(
            over.verdict.to_string(),
            "3 inserts refused (full); exact theory inside interval; \
             measured FPP within target, but its exact theory is 1.0040× p"
        );
    }

    #[test]
    fn verdicts_read_back_from_their_words() {
        let mut none = row(Origin::Peer, 0.01, 0.009, 0.011, 0);
        none.theoretical_fpp = None;
        none.theory = TheoryKind::None;
        none.verdict = none.judge();
        assert_eq!(none.verdict.to_string(), "no theory; FPP meets target");
        for verdict in [
            none.verdict,
            row(Origin::Peer, 0.01, 0.02, 0.03, 5).verdict,
            row(Origin::Peer, 0.010_04, 0.009, 0.011, 0).verdict,
        ] {
            let text = verdict.to_string();
            let back: Verdict = text.parse().unwrap();
            assert_eq!(back.to_string(), text);
        }
        assert!("FPP meets target".parse::<Verdict>().is_err());
        assert!("nonsense; FPP meets target".parse::<Verdict>().is_err());
    }

    #[test]
    fn bonferroni_splits_the_family_rate() {
        assert!((row_confidence(0.01, 100) - 0.9999).abs() < 1e-12);
        assert!((row_confidence(0.01, 0) - 0.99).abs() < 1e-12);
        assert_ne!(derive_seed(1, &[2, 3]), derive_seed(1, &[3, 2]));
    }
}
