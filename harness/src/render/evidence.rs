//! The measured rows the decision guide and `recommend` quote, and how
//! they read in words: [`Evidence`].

use std::fmt::Write as _;

use filterlab_peers::Mode;

use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::capacity::CapacityRow;
use crate::experiments::churn::{BogusRemovalRow, ChurnRow};
use crate::experiments::growth::GrowthRow;
use crate::experiments::measurements::Measurements;
use crate::experiments::speed::{Operation, SpeedRow};
use crate::registry::{Capability, Entry};
use crate::render::pick::{Contender, Interval};
use crate::text::{format_count, sci};

/// Why [`Evidence::contender`] has no figure for a filter the run did not
/// measure in the state asked for.
pub const NOT_MEASURED: &str = "not measured";

/// Measured rows the guide and `recommend` quote from.
#[derive(Clone, Copy)]
pub struct Evidence<'a> {
    /// Accuracy rows.
    pub accuracy: &'a [AccuracyRow],
    /// Speed rows.
    pub speed: &'a [SpeedRow],
    /// Over-capacity rows.
    pub capacity: &'a [CapacityRow],
    /// Churn rows.
    pub churn: &'a [ChurnRow],
    /// Removals of never-inserted keys.
    pub bogus: &'a [BogusRemovalRow],
    /// Growth rows.
    pub growth: &'a [GrowthRow],
}

impl<'a> Evidence<'a> {
    /// The rows of a run.
    pub fn of(measured: &'a Measurements) -> Self {
        Self {
            accuracy: &measured.accuracy,
            speed: measured.speed.as_ref().map_or(&[][..], |s| &s.rows[..]),
            capacity: measured.capacity.as_ref().map_or(&[][..], |c| &c.rows[..]),
            churn: measured.churn.as_ref().map_or(&[][..], |c| &c.rows[..]),
            bogus: measured.churn.as_ref().map_or(&[][..], |c| &c.bogus[..]),
            growth: measured.growth.as_ref().map_or(&[][..], |g| &g.rows[..]),
        }
    }

    /// Over the churn: the most live keys reported absent at any point and
    /// the removals that found nothing; `None` when not measured.
    pub fn churn_losses(&self, filter: &str) -> Option<(u64, u64)> {
        let last = self.churn.iter().rfind(|r| r.at.filter == filter)?;
        let worst = self
            .churn
            .iter()
            .filter(|r| r.at.filter == filter)
            .map(|r| r.at.false_negatives)
            .max()
            .unwrap_or(0);
        Some((worst, last.at.failed_removals))
    }

    /// " over 10× capacity of churn: 0 false negatives, FPP 9.9e-3 at the
    /// end (theory 1.0e-2); removing never-inserted positives lost 2.1
    /// inserted keys each", from what was measured.
    fn churn_text(&self, filter: &str) -> Option<String> {
        let (worst, failed) = self.churn_losses(filter)?;
        let last = self.churn.iter().rfind(|r| r.at.filter == filter)?;
        let mut text = format!(
            " over {:.0}× capacity of churn: {worst} false negatives at worst",
            last.at.churn
        );
        if failed > 0 {
            let _ = write!(text, " and {failed} removals that found nothing");
        }
        let _ = write!(text, ", FPP {} at the end", sci(last.sample.empirical_fpp));
        if let Some(theory) = last.sample.theoretical_fpp {
            let _ = write!(text, " (theory {})", sci(theory));
        }
        if let Some(bogus) = self.bogus.iter().find(|r| r.filter == filter)
            && bogus.removed > 0
        {
            let _ = write!(
                text,
                "; removing never-inserted positive keys lost {:.2} inserted keys each",
                bogus.false_negatives_per_removal
            );
        }
        Some(text)
    }

    /// The growth rows of `filter` at the target nearest `fpp`.
    pub fn growth_at(&self, filter: &str, fpp: f64) -> Vec<&'a GrowthRow> {
        let mut targets: Vec<f64> = self.growth.iter().map(|r| r.at.target_fpp).collect();
        targets.dedup();
        let Some(p) = nearest(&targets, fpp) else {
            return Vec::new();
        };
        self.growth
            .iter()
            .filter(|r| r.at.filter == filter && r.at.target_fpp == p)
            .collect()
    }

    /// " grown 1000× at P = 1e-2: FPP 8.1e-3 at the end, 0 of 11 points
    /// above P, 14.9 bits/item, negative lookup 40 ns", from what was measured.
    fn growth_text(&self, filter: &str, fpp: f64) -> Option<String> {
        let rows = self.growth_at(filter, fpp);
        let last = rows.last()?;
        let above = rows.iter().filter(|r| r.above_target()).count();
        let worst = rows
            .iter()
            .map(|r| r.sample.empirical_fpp)
            .fold(0.0, f64::max);
        Some(format!(
            " grown {:.0}× at P = {:e}: FPP {} at the end, at most {} ({above} of {} points above \
             P beyond their interval), {:.2} bits/item ({:.2} for a BloomFilter of those items), \
             one-key lookups {:.0} ns positive, {:.0} ns negative",
            last.at.growth,
            last.at.target_fpp,
            sci(last.sample.empirical_fpp),
            sci(worst),
            rows.len(),
            last.at.bits_per_item,
            last.at.bloom_bits_per_item,
            last.at.positive_ns,
            last.at.negative_ns
        ))
    }

    /// `filter` in the state a user needing `capability` will have it in,
    /// as a [`Contender`]: its measure there and its one-key negative
    /// lookup there; or why it does not qualify there.
    ///
    /// - growth: at the end of growth at the target nearest `fpp`: bits per
    ///   item, every point's FPP within P (no interval above it), no key
    ///   lost;
    /// - deletes: after the churn: bits per live key, no key lost, no
    ///   removal that found nothing, the FPP there within p;
    /// - concurrent inserts: the wall-clock ns per key with every core
    ///   inserting, at the largest n timed;
    /// - otherwise: bits per item at the largest n, at `fpp`, meeting it.
    ///
    /// # Errors
    ///
    /// Why it does not qualify ("not measured" when it was not).
    pub fn contender(
        &self,
        filter: &str,
        capability: Option<Capability>,
        fpp: f64,
    ) -> Result<Contender<String>, String> {
        let lookup = |min: Option<f64>, median: Option<f64>, max: Option<f64>| {
            median
                .filter(|ns| *ns > 0.0)
                .map(|ns| Interval::spread(ns, min.unwrap_or(ns), max.unwrap_or(ns)))
        };
        let not_measured = || NOT_MEASURED.to_owned();
        let (measure, looked_up) = match capability {
            Some(Capability::Growth) => {
                let rows = self.growth_at(filter, fpp);
                let last = rows.last().ok_or_else(not_measured)?;
                let above = rows.iter().filter(|r| r.above_target()).count();
                if above > 0 {
                    return Err(format!("above P at {above} of {} points", rows.len()));
                }
                if last.at.false_negatives > 0 {
                    return Err(format!("{} keys lost", last.at.false_negatives));
                }
                let at = &last.at;
                (
                    Interval::exact(at.bits_per_item),
                    lookup(
                        Some(at.min_negative_ns),
                        Some(at.negative_ns),
                        Some(at.max_negative_ns),
                    ),
                )
            }
            Some(Capability::Deletes) => {
                let last = self
                    .churn
                    .iter()
                    .rfind(|r| r.at.filter == filter)
                    .ok_or_else(not_measured)?;
                match self.churn_losses(filter) {
                    Some((0, 0)) | None => {}
                    Some((lost, failed)) => {
                        return Err(format!("{lost} lost, {failed} failed removals"));
                    }
                }
                if last.sample.ci_low > last.at.target_fpp {
                    return Err("above p after churn".to_owned());
                }
                let at = &last.at;
                (
                    Interval::exact(at.bits_per_item),
                    lookup(at.min_negative_ns, at.negative_ns, at.max_negative_ns),
                )
            }
            Some(Capability::ConcurrentInserts) => {
                let row = self
                    .speed_row(filter, Operation::InsertConcurrent, Mode::OneKey, None)
                    .ok_or_else(not_measured)?;
                let negative =
                    self.speed_row(filter, Operation::LookupNegative, Mode::OneKey, Some(row.n));
                (
                    Interval::spread(row.ns_per_op, row.min_ns_per_op, row.max_ns_per_op),
                    negative.and_then(|r| {
                        lookup(
                            Some(r.min_ns_per_op),
                            Some(r.ns_per_op),
                            Some(r.max_ns_per_op),
                        )
                    }),
                )
            }
            Some(Capability::StaticSet) | None => {
                let largest = self.largest().ok_or_else(not_measured)?;
                let row = self
                    .accuracy_at(filter, largest, fpp)
                    .ok_or_else(not_measured)?;
                if !row.meets_target() {
                    return Err("misses the target".to_owned());
                }
                let negative =
                    self.speed_row(filter, Operation::LookupNegative, Mode::OneKey, None);
                (
                    Interval::exact(row.bits_per_item),
                    negative.and_then(|r| {
                        lookup(
                            Some(r.min_ns_per_op),
                            Some(r.ns_per_op),
                            Some(r.max_ns_per_op),
                        )
                    }),
                )
            }
        };
        Ok(Contender {
            item: filter.to_owned(),
            measure,
            lookup: looked_up,
        })
    }

    /// The speed row of `filter`, `op` and `mode` at `n`, or at the largest
    /// n it was measured at.
    pub fn speed_row(
        &self,
        filter: &str,
        op: Operation,
        mode: Mode,
        n: Option<u64>,
    ) -> Option<&'a SpeedRow> {
        self.speed
            .iter()
            .filter(|r| r.filter == filter && r.op == op && r.mode == mode)
            .filter(|r| n.is_none_or(|n| r.n == n))
            .max_by_key(|r| r.n)
    }

    /// The largest n in the accuracy rows.
    pub fn largest(&self) -> Option<u64> {
        self.accuracy.iter().map(|r| r.n).max()
    }

    /// The target FPPs measured, in order of first appearance.
    fn fpps(&self) -> Vec<f64> {
        let mut fpps: Vec<f64> = Vec::new();
        for row in self.accuracy {
            if !fpps.contains(&row.target_fpp) {
                fpps.push(row.target_fpp);
            }
        }
        fpps
    }

    pub(crate) fn accuracy_at(&self, filter: &str, n: u64, fpp: f64) -> Option<&'a AccuracyRow> {
        self.accuracy
            .iter()
            .find(|r| r.filter == filter && r.n == n && r.target_fpp == fpp)
    }

    /// The (n, ns/op) of `op` in `mode` for `filter` at the largest n it
    /// was measured at.
    pub fn speed(&self, filter: &str, op: Operation, mode: Mode) -> Option<(u64, f64)> {
        self.speed_row(filter, op, mode, None)
            .map(|r| (r.n, r.ns_per_op))
    }

    /// "{what} 12 ns at n = 10^8", from [`speed`](Self::speed).
    pub(crate) fn speed_text(
        &self,
        filter: &str,
        op: Operation,
        mode: Mode,
        what: &str,
    ) -> Option<String> {
        self.speed(filter, op, mode)
            .map(|(n, ns)| format!("{what} {ns:.0} ns at n = {}", format_count(n)))
    }

    fn capacity_at(&self, filter: &str, load: f64) -> Option<&'a CapacityRow> {
        self.capacity
            .iter()
            .filter(|r| r.filter == filter)
            .min_by(|a, b| (a.load - load).abs().total_cmp(&(b.load - load).abs()))
    }

    /// Concurrent against single-thread inserts, mode by mode.
    fn concurrent_text(&self, filter: &str) -> Option<String> {
        let parts: Vec<String> = Mode::ALL
            .into_iter()
            .filter_map(|mode| {
                let (n, all) = self.speed(filter, Operation::InsertConcurrent, mode)?;
                let (_, one) = self.speed(filter, Operation::Insert, mode)?;
                Some(format!(
                    "{}: all cores {all:.0} ns per key, one thread {one:.0} ns, at n = {}",
                    mode_label(mode),
                    format_count(n)
                ))
            })
            .collect();
        (!parts.is_empty())
            .then(|| format!(" inserts into one shared filter, {}", parts.join("; ")))
    }

    /// What a filter did, in words: its row nearest `fpp` at the largest n,
    /// keys it lost, its remove and concurrent-insert speed (one key at a
    /// time), and its behaviour at 300% of capacity; whatever was measured.
    pub fn summary(&self, filter: &str, fpp: f64) -> String {
        let mut parts = Vec::new();
        let Some(largest) = self.largest() else {
            return String::new();
        };
        if let Some(row) =
            nearest(&self.fpps(), fpp).and_then(|p| self.accuracy_at(filter, largest, p))
        {
            let mut part = format!(
                " at p = {:e}, n = {}: {}",
                row.target_fpp,
                format_count(row.n),
                describe_row(row)
            );
            if !row.meets_target() {
                part.push_str(" (misses the target)");
            }
            parts.push(part);
        }
        let lost: u64 = self
            .accuracy
            .iter()
            .filter(|r| r.filter == filter)
            .map(|r| r.false_negatives)
            .sum();
        if lost > 0 {
            parts.push(format!(
                " it lost {lost} inserted keys (false negatives) across the accuracy rows"
            ));
        }
        parts.extend(self.speed_text(
            filter,
            Operation::LookupNegative,
            Mode::OneKey,
            " negative lookup one key at a time",
        ));
        parts.extend(self.speed_text(filter, Operation::Remove, Mode::OneKey, " remove"));
        parts.extend(self.churn_text(filter));
        parts.extend(self.growth_text(filter, fpp));
        parts.extend(self.concurrent_text(filter));
        if let Some(row) = self.capacity_at(filter, 3.0) {
            let mut part = format!(" at 300% of its capacity: FPP {}", sci(row.empirical_fpp));
            if let Some(full) = self.capacity_at(filter, 1.0) {
                let _ = write!(
                    part,
                    ", memory {:.2}× that at 100%",
                    row.memory_bytes as f64 / full.memory_bytes.max(1) as f64
                );
            }
            if row.false_negatives > 0 {
                let _ = write!(part, ", {} false negatives", row.false_negatives);
            }
            parts.push(part);
        }
        parts.join(";")
    }
}

/// How the report names the filter with registry name `filter`: its
/// entry's display name, or the name itself when no entry has it.
pub fn label(entries: &[Entry], filter: &str) -> String {
    entries
        .iter()
        .find(|e| e.name == filter)
        .map_or_else(|| filter.to_owned(), Entry::display_name)
}

/// How a mode reads in the guide.
pub(crate) fn mode_label(mode: Mode) -> &'static str {
    match mode {
        Mode::OneKey => "one key at a time",
        Mode::Batched => "batched",
    }
}

/// "9.59 bits/item, measured FPP 9.70e-3".
pub(crate) fn describe_row(row: &AccuracyRow) -> String {
    format!(
        "{:.2} bits/item, measured FPP {}",
        row.bits_per_item,
        sci(row.empirical_fpp)
    )
}

/// The value in `values` nearest to `target` on a log scale.
pub fn nearest(values: &[f64], target: f64) -> Option<f64> {
    values.iter().copied().min_by(|a, b| {
        (a.ln() - target.ln())
            .abs()
            .total_cmp(&(b.ln() - target.ln()).abs())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::growth::made_up;
    use crate::render::pick::pick;

    fn evidence<'a>(growth: &'a [GrowthRow], churn: &'a [ChurnRow]) -> Evidence<'a> {
        Evidence {
            accuracy: &[],
            speed: &[],
            capacity: &[],
            churn,
            bogus: &[],
            growth,
        }
    }

    /// The growth row, grown from 10^3 to 10^6 at P = 1e-2: the
    /// guide's rule (each filter at the end of growth, every doubling
    /// within P) picks CuckooFilter (grow), which nothing beats on both
    /// bits and lookup; scalable_cuckoo_filter, the fewest bits before
    /// growing, is beaten on both there; a filter above P on the way does
    /// not qualify however few its bits.
    #[test]
    fn the_guide_judges_growth_at_the_end_of_growth() {
        let mut rows = Vec::new();
        for (filter, bits, ns) in [
            ("scalable_cuckoo_filter", 19.92, 1104.0),
            ("CuckooFilter-grow", 16.58, 164.0),
            ("ScalableBloomFilter", 18.38, 95.0),
            ("qfilter-resizeable", 19.14, 58.0),
            ("growable-bloom-filter", 13.19, 406.0),
        ] {
            rows.push(made_up(filter, 2000, 11.5, ns / 2.0, 0.005));
            rows.push(made_up(filter, 1_000_000, bits, ns, 0.005));
        }
        // growable-bloom-filter's interval lies above P at the end.
        rows[9].sample.ci_low = 0.03;
        let evidence = evidence(&rows, &[]);
        let names = [
            "scalable_cuckoo_filter",
            "CuckooFilter-grow",
            "ScalableBloomFilter",
            "qfilter-resizeable",
            "growable-bloom-filter",
        ];
        let judged: Vec<_> = names
            .iter()
            .map(|f| evidence.contender(f, Some(Capability::Growth), 0.01))
            .collect();
        assert_eq!(
            judged[4].as_ref().unwrap_err(),
            "above P at 1 of 2 points",
            "a filter whose FPP left P does not qualify"
        );
        let contenders: Vec<_> = judged.into_iter().filter_map(Result::ok).collect();
        let chosen = pick(&contenders).unwrap();
        assert_eq!(chosen.best.item, "CuckooFilter-grow");
        assert_eq!(chosen.best.measure.value, 16.58);
        assert!(contenders.iter().all(|c| !chosen.best.beaten_by(c)));
        let scalable_cuckoo = &contenders[0];
        assert!(scalable_cuckoo.beaten_by(&chosen.best));
    }

    /// Deletes judged after the churn: bits per live key there, and a
    /// filter that lost keys or whose FPP there is above p does not qualify.
    #[test]
    fn the_guide_judges_deletes_after_churn() {
        let mut churned = Vec::new();
        for (filter, bits, lost, ci_low) in [
            ("small-but-lossy", 9.0, 3, 0.008),
            ("small-but-above-p", 9.5, 0, 0.02),
            ("kept-everything", 13.4, 0, 0.008),
        ] {
            let mut row = crate::experiments::churn::made_up(filter, bits, lost);
            row.sample.ci_low = ci_low;
            churned.push(row);
        }
        let evidence = evidence(&[], &churned);
        let judged: Vec<_> = ["small-but-lossy", "small-but-above-p", "kept-everything"]
            .iter()
            .map(|f| evidence.contender(f, Some(Capability::Deletes), 0.01))
            .collect();
        assert_eq!(judged[0].as_ref().unwrap_err(), "3 lost, 0 failed removals");
        assert_eq!(judged[1].as_ref().unwrap_err(), "above p after churn");
        let kept = judged[2].as_ref().unwrap();
        assert_eq!(kept.measure.value, 13.4);
        assert_eq!(kept.lookup.map(|l| l.value), Some(30.0));
        assert_eq!(
            evidence
                .contender("never-churned", Some(Capability::Deletes), 0.01)
                .unwrap_err(),
            NOT_MEASURED
        );
    }
}
