//! How far counts can be trusted as a proxy for time: the counts of the
//! in-cache size beside the wall-clock times of the same operations on the
//! same filters (filled with the same keys; more lookups, so that each
//! timing is long enough), and the Spearman rank correlation between the two.

use serde::{Deserialize, Serialize};

use crate::bench::counts::CountRow;
use crate::experiments::speed::{Operation, SpeedRow};
use filterlab_peers::Mode;

/// One operation's counts beside its time (a row of `bench-timings.csv`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SanityRow {
    /// The filter.
    pub filter: String,
    /// The operation.
    pub op: Operation,
    /// One key at a time or batched.
    pub mode: Mode,
    /// Instructions per operation (Valgrind).
    pub instructions_per_op: f64,
    /// Estimated cycles per operation (Valgrind's simulated caches).
    pub est_cycles_per_op: f64,
    /// Median wall-clock ns per operation on this machine.
    pub ns_per_op: f64,
}

/// The rows of `counts` that `timings` also measured (same filter,
/// operation, mode and size).
pub fn join(counts: &[CountRow], timings: &[SpeedRow]) -> Vec<SanityRow> {
    counts
        .iter()
        .filter_map(|count| {
            let time = timings.iter().find(|t| {
                t.filter == count.filter
                    && t.op == count.op
                    && t.mode == count.mode
                    && t.n == count.items
            })?;
            Some(SanityRow {
                filter: count.filter.clone(),
                op: count.op,
                mode: count.mode,
                instructions_per_op: count.instructions_per_op,
                est_cycles_per_op: count.est_cycles_per_op,
                ns_per_op: time.ns_per_op,
            })
        })
        .collect()
}

/// Ranks 1..n, ties sharing their mean rank.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        let mean = (start + end + 1) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = mean;
        }
        start = end;
    }
    ranks
}

/// Spearman's ρ: the Pearson correlation of the ranks; `None` for fewer
/// than 3 pairs or a constant series.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 3 {
        return None;
    }
    let (rx, ry) = (ranks(x), ranks(y));
    let mean = (x.len() + 1) as f64 / 2.0;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mean) * (b - mean);
        sxx += (a - mean) * (a - mean);
        syy += (b - mean) * (b - mean);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// The two correlations of `rows`: (instructions vs ns, est. cycles vs ns).
pub fn correlations(rows: &[SanityRow]) -> (Option<f64>, Option<f64>) {
    let ns: Vec<f64> = rows.iter().map(|r| r.ns_per_op).collect();
    let instructions: Vec<f64> = rows.iter().map(|r| r.instructions_per_op).collect();
    let cycles: Vec<f64> = rows.iter().map(|r| r.est_cycles_per_op).collect();
    (spearman(&instructions, &ns), spearman(&cycles, &ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_is_rank_based() {
        assert_eq!(
            spearman(&[1.0, 2.0, 3.0], &[10.0, 200.0, 3000.0]),
            Some(1.0)
        );
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
        assert_eq!(ranks(&[5.0, 1.0, 5.0]), [2.5, 1.0, 2.5]);
        let rho = spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap();
        assert!((rho - 0.8).abs() < 1e-12, "{rho}");
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(spearman(&[1.0], &[1.0]), None);
    }
}
