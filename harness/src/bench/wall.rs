//! The wall-clock mode: a filterlab filter and its peer timed in
//! alternating rounds, each round in a fresh process (the speed
//! experiment's timing, one repetition per round), reported as the median
//! of the per-round ratios with a distribution-free interval. Its unit is a ratio because absolute
//! times swing 2-4x on shared machines while both filters of a round see
//! the same machine. It sees what counts cannot: memory-level parallelism,
//! the real caches, the AVX-512 kernels Valgrind cannot run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use filterlab_peers::Mode;
use serde::{Deserialize, Serialize};

use crate::bench::case::{BENCH_FPP, Size, mode_label, op_label};
use crate::config::{DEFAULT_SEED, Preset, RunConfig};
use crate::error::Error;
use crate::experiments::speed::{self, Operation, SpeedRow};
use crate::experiments::timing;
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
        median: timing::median(&sorted),
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
    /// Rounds (ratios) measured in each run.
    pub rounds: u32,
    /// Independent runs the row sums up (a baseline's several; see
    /// [`envelope`]).
    #[serde(default = "single_run")]
    pub runs: u32,
    /// Median of the per-round ratios: below 1, the filterlab filter is faster.
    pub ratio: f64,
    /// The interval's lower end.
    pub ratio_low: f64,
    /// The interval's upper end.
    pub ratio_high: f64,
    /// The interval's coverage.
    pub coverage: f64,
}

fn single_run() -> u32 {
    1
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

/// One round's ratio of a filterlab operation's time to the peer's one key
/// at a time (a line a round's child process prints).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundRatio {
    /// The operation.
    pub op: Operation,
    /// The filterlab filter's mode.
    pub mode: Mode,
    /// Its time over the peer's.
    pub ratio: f64,
}

/// One round of the pair whose filterlab filter is `ours`, in this process:
/// both filters timed in turn (the peer first when `peer_first`), each one
/// key at a time and the filterlab filter batched too; the ratios as CSV
/// lines (what `filterlab bench --wall-round` prints).
///
/// # Errors
///
/// When `ours` has no peer, or the CSV cannot be written.
pub fn round(ours: &str, size: Size, peer_first: bool) -> Result<String, Error> {
    let entries = registry::select(registry::registry(), &[ours.to_owned()])?;
    let [(ours, peer)] = <[(Entry, Entry); 1]>::try_from(pairs(&entries)?)
        .map_err(|_| Error::usage(format!("`{ours}` has no wall-clock peer")))?;
    let order = if peer_first {
        [peer.clone(), ours.clone()]
    } else {
        [ours.clone(), peer.clone()]
    };
    let times = speed::run(&order, &one_repetition(size), &Tracker::hidden()).rows;
    let time = |name: &str, op, mode| {
        times
            .iter()
            .find(|r| r.filter == name && r.op == op && r.mode == mode)
            .map(|r| r.ns_per_op)
    };
    let mut out = csv::Writer::from_writer(Vec::new());
    for row in times.iter().filter(|r| r.filter == ours.name) {
        if let Some(theirs) = time(peer.name, row.op, Mode::OneKey) {
            out.serialize(RoundRatio {
                op: row.op,
                mode: row.mode,
                ratio: row.ns_per_op / theirs,
            })?;
        }
    }
    let bytes = out
        .into_inner()
        .map_err(|err| Error::failed(format!("round ratios: {err}")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Runs one round in a child process of `exe` (this `filterlab`) and
/// reads its ratios. A fresh process per round: memory placement (which
/// physical pages, and so which cache sets, the arrays get) is fixed for a
/// process's life and moves a ratio by 10 to 30% from one process to the
/// next, so rounds in one process would give intervals that two runs of
/// the same code fall outside of.
fn round_in_child(
    exe: &Path,
    ours: &str,
    size: Size,
    peer_first: bool,
) -> Result<Vec<RoundRatio>, Error> {
    let mut command = Command::new(exe);
    command.args(["bench", "--wall-round", ours, "--sizes", size.label()]);
    if peer_first {
        command.arg("--peer-first");
    }
    let output = command
        .output()
        .map_err(|err| Error::failed(format!("cannot run `{}`: {err}", exe.display())))?;
    if !output.status.success() {
        return Err(Error::failed(format!(
            "a wall-clock round of {ours} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    csv::Reader::from_reader(output.stdout.as_slice())
        .deserialize()
        .collect::<Result<_, _>>()
        .map_err(|err| Error::failed(format!("a wall-clock round of {ours}: {err}")))
}

/// Measures each pair at each size in `runs` independent runs of `rounds`
/// rounds, each round in its own child process of `exe` (which filter goes
/// first alternates); one run's rows as they are, several runs' as their
/// [`envelope`]. Its progress is the stage [`WALL_STAGE`] of `progress`.
///
/// # Errors
///
/// When a round's process fails.
pub fn measure(
    exe: &Path,
    pairs: &[(Entry, Entry)],
    sizes: &[Size],
    (rounds, runs): (u32, u32),
    progress: &Tracker,
) -> Result<Vec<WallRow>, Error> {
    let stage = progress.stage(
        WALL_STAGE,
        (pairs.len() * sizes.len()) as u64 * u64::from(rounds) * u64::from(runs),
    );
    let mut each_run = Vec::new();
    for run in 0..runs {
        let rows = one_run(exe, pairs, sizes, rounds, &|what: &str| {
            stage.step(&if runs > 1 {
                format!("run {} of {runs}: {what}", run + 1)
            } else {
                what.to_owned()
            });
        })?;
        each_run.push(rows);
    }
    let rows = if runs == 1 {
        each_run.pop().unwrap_or_default()
    } else {
        envelope(&each_run)
    };
    stage.finish(&format!(
        "{} ratios of {} pairs over {rounds} rounds × {runs} runs, a process a round",
        rows.len(),
        pairs.len()
    ));
    Ok(rows)
}

/// One run of [`measure`]; `step` is told of each round.
fn one_run(
    exe: &Path,
    pairs: &[(Entry, Entry)],
    sizes: &[Size],
    rounds: u32,
    step: &dyn Fn(&str),
) -> Result<Vec<WallRow>, Error> {
    let mut rows = Vec::new();
    for &size in sizes {
        for (ours, peer) in pairs {
            // Ratios per (op, our mode), one per round.
            let mut ratios: BTreeMap<(Operation, Mode), Vec<f64>> = BTreeMap::new();
            for round in 0..rounds {
                for r in round_in_child(exe, ours.name, size, round % 2 == 1)? {
                    ratios.entry((r.op, r.mode)).or_default().push(r.ratio);
                }
                step(&format!(
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
                        runs: 1,
                        ratio: interval.median,
                        ratio_low: interval.low,
                        ratio_high: interval.high,
                        coverage: interval.coverage,
                    });
                }
            }
        }
    }
    Ok(rows)
}

/// Several runs' rows as one row per key: the median of the runs' medians,
/// and the range from the lowest interval end to the highest. On a shared
/// machine the other tenants move a ratio from one run to the next by more
/// than one run's interval shows (`BlockedBloomFilter`'s negative lookups
/// against fastbloom's: 0.24 in most runs, 0.33 to 0.36 in some, minutes
/// apart, each interval a few hundredths wide), so a baseline is the range
/// of several runs, not one run's interval.
pub fn envelope(runs: &[Vec<WallRow>]) -> Vec<WallRow> {
    let mut by_key: BTreeMap<WallKey, Vec<&WallRow>> = BTreeMap::new();
    for row in runs.iter().flatten() {
        by_key.entry(row.key()).or_default().push(row);
    }
    by_key
        .into_values()
        .filter_map(|rows| {
            // A row of several runs stands for its median once per run.
            let medians: Vec<f64> = rows
                .iter()
                .flat_map(|r| std::iter::repeat_n(r.ratio, r.runs as usize))
                .collect();
            let first = rows.first()?;
            Some(WallRow {
                rounds: rows.iter().map(|r| r.rounds).min()?,
                runs: rows.iter().map(|r| r.runs).sum(),
                ratio: median_interval(&medians, CONFIDENCE)?.median,
                ratio_low: rows
                    .iter()
                    .map(|r| r.ratio_low)
                    .fold(f64::INFINITY, f64::min),
                ratio_high: rows
                    .iter()
                    .map(|r| r.ratio_high)
                    .fold(f64::NEG_INFINITY, f64::max),
                coverage: rows.iter().map(|r| r.coverage).fold(1.0, f64::min),
                ..(*first).clone()
            })
        })
        .collect()
}

/// A wall-clock row whose interval lies past the baseline's range (and
/// the tolerance).
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

/// How far past the baseline's range a ratio's interval must lie to count
/// as a change. The range covers the runs saved into the baseline; the
/// host's other tenants move a ratio further at times no saved run saw
/// (`BlockedBloomFilter`'s negative lookups against fastbloom's: 0.24 in
/// most runs, 0.33 to 0.36 for minutes at a time). What the wall clock is
/// there to catch, a lost SIMD kernel or batching path, costs 1.5× and
/// more; the instruction counts gate everything else at 1%.
pub const WALL_TOLERANCE: f64 = 0.25;

/// Wall-clock rows compared with the baseline's: a slower ratio whose
/// interval lies above the baseline's range by more than
/// [`WALL_TOLERANCE`] is a regression, a faster one as far below it an
/// improvement; anything else is no change.
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
        if row.ratio_low > then.ratio_high * (1.0 + WALL_TOLERANCE) {
            comparison.regressions.push(change);
        } else if row.ratio_high * (1.0 + WALL_TOLERANCE) < then.ratio_low {
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
            runs: 1,
            ratio,
            ratio_low: low,
            ratio_high: high,
            coverage: 0.96,
        }
    }

    #[test]
    fn only_intervals_past_the_baseline_range_and_its_tolerance_are_flagged() {
        let baseline = [row(0.8, 0.75, 0.85)];
        let flagged = |now: WallRow| {
            let comparison = compare(&baseline, &[now]);
            (comparison.regressions.len(), comparison.improvements.len())
        };
        // Overlapping, and disjoint but within the 25% tolerance: no change.
        assert_eq!(flagged(row(0.84, 0.8, 0.9)), (0, 0));
        assert_eq!(flagged(row(1.05, 1.0, 1.1)), (0, 0));
        assert_eq!(flagged(row(0.55, 0.5, 0.61)), (0, 0));
        // Beyond it (0.85 × 1.25 = 1.0625; 0.75 / 1.25 = 0.6).
        assert_eq!(flagged(row(1.1, 1.07, 1.15)), (1, 0));
        assert_eq!(flagged(row(0.5, 0.45, 0.59)), (0, 1));
        let slower = compare(&baseline, &[row(1.1, 1.07, 1.15)]);
        assert!(
            slower.regressions[0]
                .describe()
                .starts_with("BloomFilter insert (one_key) / fastbloom at in-cache: ratio 1.100")
        );
        assert_eq!(slower.compared, 1);
    }

    #[test]
    fn an_envelope_spans_every_run_and_takes_the_median_of_their_medians() {
        let runs = [
            vec![row(0.25, 0.24, 0.26)],
            vec![row(0.35, 0.34, 0.37)],
            vec![row(0.24, 0.23, 0.25)],
        ];
        let [merged] = <[WallRow; 1]>::try_from(envelope(&runs)).unwrap();
        assert_eq!(
            (
                merged.ratio,
                merged.ratio_low,
                merged.ratio_high,
                merged.runs
            ),
            (0.25, 0.23, 0.37, 3)
        );
        // A run inside that range is no change; against the first run's
        // interval alone, the same run is a regression.
        assert!(
            compare(std::slice::from_ref(&merged), &[row(0.35, 0.34, 0.37)])
                .regressions
                .is_empty()
        );
        assert_eq!(
            compare(&runs[0], &[row(0.35, 0.34, 0.37)])
                .regressions
                .len(),
            1
        );
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
