//! `--check`: a run's counts beside the baseline's, row by row. Counts
//! repeat exactly, so any change is the code's (or the toolchain's); the
//! thresholds only decide which changes are worth failing CI for.

use std::collections::BTreeMap;
use std::fmt;

use crate::bench::case::{mode_label, op_label};
use crate::bench::counts::{CountRow, RowKey};

/// A counted quantity, per operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    /// Instructions executed.
    Instructions,
    /// Estimated cycles (instructions weighted by simulated cache misses).
    EstCycles,
    /// First-level cache misses.
    L1Misses,
    /// Last-level cache misses.
    LlMisses,
}

impl Metric {
    /// Every metric, in table order.
    pub const ALL: [Self; 4] = [
        Self::Instructions,
        Self::L1Misses,
        Self::LlMisses,
        Self::EstCycles,
    ];

    /// Its name in messages.
    pub fn label(self) -> &'static str {
        match self {
            Self::Instructions => "instructions",
            Self::EstCycles => "est. cycles",
            Self::L1Misses => "L1 misses",
            Self::LlMisses => "LL misses",
        }
    }

    /// The increase (in percent) beyond which `--check` fails, and the
    /// decrease beyond which it lists an improvement; `None` for the miss
    /// counts, which the estimated cycles already weigh (and which move by
    /// large percentages on small counts).
    pub fn threshold(self) -> Option<f64> {
        match self {
            Self::Instructions => Some(1.0),
            Self::EstCycles => Some(3.0),
            Self::L1Misses | Self::LlMisses => None,
        }
    }

    /// Its value per operation in `row`.
    pub fn per_op(self, row: &CountRow) -> f64 {
        match self {
            Self::Instructions => row.instructions_per_op,
            Self::EstCycles => row.est_cycles_per_op,
            Self::L1Misses => row.l1_misses_per_op,
            Self::LlMisses => row.ll_misses_per_op,
        }
    }
}

/// The thresholds, as every output states them.
pub fn thresholds_text() -> String {
    let gated: Vec<String> = Metric::ALL
        .iter()
        .filter_map(|m| m.threshold().map(|t| format!("+{t}% {}", m.label())))
        .collect();
    format!(
        "fails on {} per operation; lists improvements beyond the same amounts downwards; L1 and LL misses are shown, not gated (the estimated cycles weigh them)",
        gated.join(", ")
    )
}

/// A row as people read it: `BlockedBloomFilter lookup_negative (one_key) at in-cache`.
pub fn describe(key: &RowKey) -> String {
    format!(
        "{} {} ({}) at {}",
        key.0,
        op_label(key.1),
        mode_label(key.2),
        key.3.label()
    )
}

/// One metric of one row that changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The row.
    pub key: RowKey,
    /// The metric.
    pub metric: Metric,
    /// Per operation in the baseline.
    pub before: f64,
    /// Per operation in this run.
    pub after: f64,
}

impl Change {
    /// The change in percent of the baseline.
    pub fn percent(&self) -> f64 {
        if self.before == 0.0 {
            if self.after == 0.0 {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            100.0 * (self.after - self.before) / self.before
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} {:.2} -> {:.2} per op ({:+.2}%",
            describe(&self.key),
            self.metric.label(),
            self.before,
            self.after,
            self.percent()
        )?;
        match self.metric.threshold() {
            Some(t) => write!(f, ", threshold ±{t}%)"),
            None => f.write_str(")"),
        }
    }
}

/// A run compared with the baseline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Gated metrics above their threshold: `--check` fails.
    pub regressions: Vec<Change>,
    /// Gated metrics below minus their threshold.
    pub improvements: Vec<Change>,
    /// Other changes: within thresholds, ungated metrics, ungated rows.
    pub other_changes: Vec<Change>,
    /// Rows whose nine counts are all identical to the baseline's.
    pub identical: usize,
    /// Rows with at least one count changed.
    pub changed: usize,
    /// Rows of the run the baseline lacks: `--check` fails (save a new baseline).
    pub not_in_baseline: Vec<RowKey>,
    /// Baseline rows this run did not measure (a subset run).
    pub not_measured: usize,
}

impl Comparison {
    /// Whether `--check` passes.
    pub fn passed(&self) -> bool {
        self.regressions.is_empty() && self.not_in_baseline.is_empty()
    }
}

/// Compares `run` with `baseline`, row by row.
pub fn compare(baseline: &[CountRow], run: &[CountRow]) -> Comparison {
    let before: BTreeMap<RowKey, &CountRow> = baseline.iter().map(|r| (r.key(), r)).collect();
    let mut comparison = Comparison::default();
    let mut seen = 0;
    for row in run {
        let key = row.key();
        let Some(old) = before.get(&key) else {
            comparison.not_in_baseline.push(key);
            continue;
        };
        seen += 1;
        if old.events() == row.events() && old.ops == row.ops {
            comparison.identical += 1;
            continue;
        }
        comparison.changed += 1;
        for metric in Metric::ALL {
            let change = Change {
                key: key.clone(),
                metric,
                before: metric.per_op(old),
                after: metric.per_op(row),
            };
            if change.before == change.after {
                continue;
            }
            let percent = change.percent();
            match metric.threshold().filter(|_| row.gated) {
                Some(limit) if percent > limit => comparison.regressions.push(change),
                Some(limit) if percent < -limit => comparison.improvements.push(change),
                _ => comparison.other_changes.push(change),
            }
        }
    }
    comparison.not_measured = baseline.len().saturating_sub(seen);
    comparison
}

#[cfg(test)]
mod tests {
    use filterlab_peers::Mode;

    use super::*;
    use crate::bench::callgrind::Events;
    use crate::bench::case::Size;
    use crate::experiments::speed::Operation;
    use crate::registry::registry;

    fn row(name: &str, op: Operation, ir: u64, ll: u64) -> CountRow {
        let entry = registry().into_iter().find(|e| e.name == name).unwrap();
        let events = Events::from_array([ir, ir / 4, ir / 8, 0, 100, 0, 0, ll, 0]);
        CountRow::new(&entry, op, Mode::OneKey, Size::InCache, 1000, events)
    }

    #[test]
    fn regressions_beyond_the_thresholds_fail_and_name_the_row() {
        let baseline = vec![
            row("BlockedBloomFilter", Operation::Insert, 100_000, 10),
            row("BlockedBloomFilter", Operation::LookupNegative, 50_000, 10),
            row("BloomFilter", Operation::Insert, 80_000, 10),
            row("fastbloom", Operation::Insert, 80_000, 10),
        ];
        let mut run = baseline.clone();
        assert!(compare(&baseline, &run).passed());
        assert_eq!(compare(&baseline, &run).identical, 4);
        // +5% instructions on one row, -10% on another, +0.5% on a third.
        run[1] = row("BlockedBloomFilter", Operation::LookupNegative, 52_500, 10);
        run[2] = row("BloomFilter", Operation::Insert, 72_000, 10);
        run[3] = row("fastbloom", Operation::Insert, 80_400, 10);
        let comparison = compare(&baseline, &run);
        assert!(!comparison.passed());
        let failed: Vec<String> = comparison
            .regressions
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert!(
            failed[0].starts_with(
                "BlockedBloomFilter lookup_negative (one_key) at in-cache: instructions 50.00 -> 52.50 per op (+5.00%"
            ),
            "{failed:?}"
        );
        assert!(failed[1].contains("est. cycles"), "{failed:?}");
        assert_eq!(comparison.improvements.len(), 2);
        assert_eq!(comparison.improvements[0].key.0, "BloomFilter");
        // The small change and the ungated miss counts are listed, not failed.
        assert!(
            comparison
                .other_changes
                .iter()
                .any(|c| c.key.0 == "fastbloom")
        );
        assert_eq!((comparison.identical, comparison.changed), (1, 3));
        // Last-level misses alone move the estimated cycles.
        let misses = vec![row("BloomFilter", Operation::Insert, 80_000, 500)];
        let comparison = compare(&baseline[2..3], &misses);
        assert_eq!(comparison.regressions.len(), 1);
        assert_eq!(comparison.regressions[0].metric, Metric::EstCycles);
    }

    #[test]
    fn ungated_and_missing_rows() {
        let baseline = vec![row("cuckoofilter", Operation::Insert, 100_000, 10)];
        let run = vec![
            row("cuckoofilter", Operation::Insert, 200_000, 10),
            row("BloomFilter", Operation::Remove, 1, 0),
        ];
        let comparison = compare(&baseline, &run);
        assert!(comparison.regressions.is_empty());
        assert!(!comparison.other_changes.is_empty());
        assert_eq!(comparison.not_in_baseline.len(), 1);
        assert!(!comparison.passed());
        let subset = compare(&baseline, &[]);
        assert_eq!(subset.not_measured, 1);
        assert!(subset.passed());
        assert!(thresholds_text().contains("+1% instructions, +3% est. cycles"));
    }
}
