//! The wall-clock mode: a filterlab filter and its peer timed in
//! alternating rounds in one process (the speed experiment's timing, one
//! repetition per round), reported as the median of the per-round ratios
//! with a distribution-free interval. Its unit is a ratio because absolute
//! times swing 2-4x on shared machines while both filters of a round see
//! the same machine. It sees what counts cannot: memory-level parallelism,
//! the real caches, the AVX-512 kernels Valgrind cannot run.

use std::collections::BTreeMap;

use filterlab_peers::Mode;
use serde::{Deserialize, Serialize};

use crate::bench::case::{BENCH_FPP, Size, mode_label, op_label};
use crate::config::{DEFAULT_SEED, Preset, RunConfig};
use crate::error::Error;
use crate::experiments::speed::{self, Operation, SpeedRow};
use crate::progress::Tracker;
use crate::registry::{self, Entry};

/// Each filterlab filter's peer in the wall-clock mode: the crate a user
/// would otherwise pick for the same need.
pub const PEERS: [(&str, &str); 9] = [
    ("BloomFilter", "fastbloom"),
    ("BlockedBloomFilter", "fastbloom"),
    ("SplitBlockBloomFilter", "sbbf-rs-safe"),
    ("AtomicBloomFilter", "fastbloom"),
    ("CountingBloomFilter", "fastbloom-rs"),
    ("BlockedCountingBloomFilter", "fastbloom-rs"),
    ("CuckooFilter", "cuckoofilter"),
    ("CuckooFilter-grow", "scalable_cuckoo_filter"),
    ("ScalableBloomFilter", "growable-bloom-filter"),
];

/// The progress stage of the wall-clock mode.
pub const WALL_STAGE: &str = "wall-clock";

/// The confidence of the ratio intervals.
pub const CONFIDENCE: f64 = 0.95;

/// A median and a distribution-free interval around it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The sample median.
    pub median: f64,
    /// The lower order statistic.
    pub low: f64,
    /// The upper order statistic.
    pub high: f64,
    /// The interval's exact coverage of the true median (at least the
    /// confidence asked for, when there are enough values).
    pub coverage: f64,
}

/// The median of `values` and the interval between the order statistics
/// k and n + 1 − k, with k the largest for which the binomial coverage
/// 1 − 2·P(Bin(n, ½) ≤ k − 1) is at least `confidence` (k = 1, min to max,
/// when n is too small for it). Valid for any continuous distribution.
pub fn median_interval(values: &[f64], confidence: f64) -> Option<Interval> {
    let mut sorted = values.to_vec();
    sorted.retain(|v| v.is_finite());
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    // P(Bin(n, 1/2) <= j) for j = 0, 1, ...
    let mut below = Vec::with_capacity(n);
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = 0.0;
    for j in 0..n {
        sum += term;
        below.push(sum);
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    let coverage_at = |k: usize| 1.0 - 2.0 * below[k - 1];
    let k = (1..=n.div_ceil(2))
        .rev()
        .find(|&k| coverage_at(k) >= confidence)
        .unwrap_or(1);
    Some(Interval {
        median: speed::median(&sorted),
        low: sorted[k - 1],
        high: sorted[n - k],
        coverage: coverage_at(k),
    })
}

/// One ratio of a filterlab filter's time to its peer's (a row of
/// `bench-wall.csv` and of the wall-clock baseline).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WallRow {
    /// The filterlab filter.
    pub filter: String,
    /// Its peer, always one key at a time.
    pub peer: String,
    /// The operation.
    pub op: Operation,
    /// The filterlab filter's mode.
    pub mode: Mode,
    /// The size class.
    pub size: Size,
    /// Items in each filter.
    pub items: u64,
    /// Rounds (ratios) measured.
    pub rounds: u32,
    /// Median of the per-round ratios: below 1, the filterlab filter is faster.
    pub ratio: f64,
    /// The interval's lower end.
    pub ratio_low: f64,
    /// The interval's upper end.
    pub ratio_high: f64,
    /// The interval's coverage.
    pub coverage: f64,
}

/// What identifies a wall-clock row.
pub type WallKey = (String, String, Operation, Mode, Size);

impl WallRow {
    /// Its key.
    pub fn key(&self) -> WallKey {
        (
            self.filter.clone(),
            self.peer.clone(),
            self.op,
            self.mode,
            self.size,
        )
    }

    /// `BloomFilter insert (batched) / fastbloom at in-cache`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} ({}) / {} at {}",
            self.filter,
            op_label(self.op),
            mode_label(self.mode),
            self.peer,
            self.size.label()
        )
    }
}

/// The filterlab filters of `entries` that have a peer, with it.
///
/// # Errors
///
/// When a peer is missing from the registry.
pub fn pairs(entries: &[Entry]) -> Result<Vec<(Entry, Entry)>, Error> {
    let all = registry::registry();
    PEERS
        .iter()
        .filter(|(ours, _)| entries.iter().any(|e| e.name == *ours))
        .map(|(ours, peer)| {
            let picked = registry::select(all.clone(), &[(*ours).to_owned(), (*peer).to_owned()])?;
            match <[Entry; 2]>::try_from(picked) {
                Ok([a, b]) if a.name == *ours => Ok((a, b)),
                Ok([b, a]) => Ok((a, b)),
                Err(_) => Err(Error::failed(format!("no peer {peer} for {ours}"))),
            }
        })
        .collect()
}

/// Operations per timing: a pass over 10^4 lookups takes a few hundred
/// microseconds, too short to time on a busy machine, so each timing runs
/// at least this many (the speed experiment repeats fills and passes).
const TIMED_OPERATIONS: u64 = 1_000_000;

/// The speed experiment's configuration for one size, one repetition.
fn one_repetition(size: Size) -> RunConfig {
    let mut config = RunConfig::preset(Preset::Tiny, DEFAULT_SEED, 1);
    config.speed_items = vec![size.items()];
    config.speed_fpp = BENCH_FPP;
    config.speed_lookups = TIMED_OPERATIONS;
    config.speed_repetitions = 1;
    config.speed_large_repetitions = 1;
    config
}

/// Times every operation of `entries` at `size` in `repetitions`
/// alternating repetitions: the speed experiment's medians (its progress
/// the stage "speed" of `progress`).
pub fn timings(
    entries: &[Entry],
    size: Size,
    repetitions: u32,
    progress: &Tracker,
) -> Vec<SpeedRow> {
    let mut config = one_repetition(size);
    config.speed_repetitions = repetitions;
    config.speed_large_repetitions = repetitions;
    speed::run(entries, &config, progress).rows
}

/// Measures each pair at each size over `rounds` rounds; in each round the
/// two filters run in turn (which goes first alternates), each one key at
/// a time and the filterlab filter batched too. Its progress is the stage
/// [`WALL_STAGE`] of `progress`.
pub fn measure(
    pairs: &[(Entry, Entry)],
    sizes: &[Size],
    rounds: u32,
    progress: &Tracker,
) -> Vec<WallRow> {
    let stage = progress.stage(
        WALL_STAGE,
        (pairs.len() * sizes.len()) as u64 * u64::from(rounds),
    );
    let hidden = Tracker::hidden();
    let mut rows = Vec::new();
    for &size in sizes {
        let config = one_repetition(size);
        for (ours, peer) in pairs {
            // Ratios per (op, our mode), one per round.
            let mut ratios: BTreeMap<(Operation, Mode), Vec<f64>> = BTreeMap::new();
            for round in 0..rounds {
                let order = if round % 2 == 0 {
                    [ours.clone(), peer.clone()]
                } else {
                    [peer.clone(), ours.clone()]
                };
                let times = speed::run(&order, &config, &hidden).rows;
                let time = |name: &str, op, mode| {
                    times
                        .iter()
                        .find(|r| r.filter == name && r.op == op && r.mode == mode)
                        .map(|r| r.ns_per_op)
                };
                for row in times.iter().filter(|r| r.filter == ours.name) {
                    if let Some(theirs) = time(peer.name, row.op, Mode::OneKey) {
                        ratios
                            .entry((row.op, row.mode))
                            .or_default()
                            .push(row.ns_per_op / theirs);
                    }
                }
                stage.step(&format!(
                    "{} / {} at {} round {}",
                    ours.name,
                    peer.name,
                    size.label(),
                    round + 1
                ));
            }
            for ((op, mode), values) in ratios {
                if let Some(interval) = median_interval(&values, CONFIDENCE) {
                    rows.push(WallRow {
                        filter: ours.name.to_owned(),
                        peer: peer.name.to_owned(),
                        op,
                        mode,
                        size,
                        items: size.items(),
                        rounds: values.len() as u32,
                        ratio: interval.median,
                        ratio_low: interval.low,
                        ratio_high: interval.high,
                        coverage: interval.coverage,
                    });
                }
            }
        }
    }
    stage.finish(&format!(
        "{} ratios of {} pairs over {rounds} rounds",
        rows.len(),
        pairs.len()
    ));
    rows
}

/// A wall-clock row whose interval lies wholly outside the baseline's.
#[derive(Clone, Debug, PartialEq)]
pub struct WallChange {
    /// This run's row.
    pub now: WallRow,
    /// The baseline's row.
    pub then: WallRow,
}

impl WallChange {
    /// One line: the row, both intervals.
    pub fn describe(&self) -> String {
        format!(
            "{}: ratio {:.3} [{:.3}, {:.3}], baseline {:.3} [{:.3}, {:.3}]",
            self.now.describe(),
            self.now.ratio,
            self.now.ratio_low,
            self.now.ratio_high,
            self.then.ratio,
            self.then.ratio_low,
            self.then.ratio_high
        )
    }
}

/// Wall-clock rows compared with the baseline's: a slower ratio whose
/// interval lies above the baseline's is a regression, a faster one below
/// it an improvement; overlapping intervals are no change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WallComparison {
    /// Intervals above the baseline's.
    pub regressions: Vec<WallChange>,
    /// Intervals below the baseline's.
    pub improvements: Vec<WallChange>,
    /// Rows compared.
    pub compared: usize,
}

/// Compares wall-clock rows with the baseline's.
pub fn compare(baseline: &[WallRow], run: &[WallRow]) -> WallComparison {
    let before: BTreeMap<WallKey, &WallRow> = baseline.iter().map(|r| (r.key(), r)).collect();
    let mut comparison = WallComparison::default();
    for row in run {
        let Some(&then) = before.get(&row.key()) else {
            continue;
        };
        comparison.compared += 1;
        let change = WallChange {
            now: row.clone(),
            then: then.clone(),
        };
        if row.ratio_low > then.ratio_high {
            comparison.regressions.push(change);
        } else if row.ratio_high < then.ratio_low {
            comparison.improvements.push(change);
        }
    }
    comparison
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_intervals_use_binomial_order_statistics() {
        let values: Vec<f64> = (1..=15).map(f64::from).collect();
        let interval = median_interval(&values, 0.95).unwrap();
        assert_eq!(interval.median, 8.0);
        // n = 15: k = 4, coverage 1 - 2·P(Bin(15, ½) ≤ 3) = 0.9648.
        assert_eq!((interval.low, interval.high), (4.0, 12.0));
        assert!((interval.coverage - 0.964_844).abs() < 1e-5, "{interval:?}");
        // Too few values for 95%: min to max, with the coverage it has.
        let few = median_interval(&[3.0, 1.0, 2.0], 0.95).unwrap();
        assert_eq!((few.low, few.median, few.high), (1.0, 2.0, 3.0));
        assert_eq!(few.coverage, 0.75);
        assert!(median_interval(&[], 0.95).is_none());
        assert!(median_interval(&[f64::NAN], 0.95).is_none());
    }

    fn row(ratio: f64, low: f64, high: f64) -> WallRow {
        WallRow {
            filter: "BloomFilter".into(),
            peer: "fastbloom".into(),
            op: Operation::Insert,
            mode: Mode::OneKey,
            size: Size::InCache,
            items: 100_000,
            rounds: 15,
            ratio,
            ratio_low: low,
            ratio_high: high,
            coverage: 0.96,
        }
    }

    #[test]
    fn only_disjoint_intervals_are_flagged() {
        let baseline = [row(0.8, 0.75, 0.85)];
        assert_eq!(
            compare(&baseline, &[row(0.84, 0.8, 0.9)]).regressions.len(),
            0
        );
        let slower = compare(&baseline, &[row(0.95, 0.9, 1.0)]);
        assert_eq!(slower.regressions.len(), 1);
        assert!(
            slower.regressions[0]
                .describe()
                .starts_with("BloomFilter insert (one_key) / fastbloom at in-cache: ratio 0.950")
        );
        let faster = compare(&baseline, &[row(0.6, 0.55, 0.7)]);
        assert_eq!((faster.improvements.len(), faster.compared), (1, 1));
    }

    #[test]
    fn every_pair_exists() {
        let all = registry::registry();
        let found = pairs(&all).unwrap();
        assert_eq!(found.len(), PEERS.len());
        for ((ours, peer), (a, b)) in found.iter().zip(PEERS) {
            assert_eq!((ours.name, peer.name), (a, b));
        }
    }
}
