//! The one way every single-thread timing of the report is taken (speed,
//! sweep, churn, growth), so that a filter, operation, n and p have one
//! figure whichever experiment measured them, and the check that two
//! experiments timing the same cell agree ([`Agreement`]).
//!
//! - **CPU time, not wall time.** A pass is charged the timing thread's
//!   CPU time (`CLOCK_THREAD_CPUTIME_ID`), which equals its wall time when
//!   nothing else runs and leaves out the time another process (or the
//!   hypervisor) takes the core away. In the report committed before this
//!   method, the speed experiment's one-key lookups at n ≤ 10^5 ran 1.3–2.0×
//!   slower than the sweep's, fast and slow filters alike, and where one of
//!   its five repetitions escaped, that one matched the sweep (cuckoofilter
//!   at 10^5: fastest 25.2 ns, median 45.7, sweep 25.1): another process
//!   had the core. Two threads spinning beside a timed pass here raise its
//!   wall time 2.3–3.7× and leave its CPU time within 3%
//!   (`examples/timing_study.rs`). CPU time does not remove what a
//!   neighbour does to the shared caches: [`Agreement`] checks the result.
//!   Where the platform has no thread clock, wall time is used.
//! - **Warm.** Lookups are timed after an untimed pass over the first
//!   [`WARM_UP_KEYS`] keys, so that a filter that fits in a cache is timed
//!   in it, whatever ran before (the sweep times many filters in turn; the
//!   speed experiment times each right after filling it).
//! - **Keys from memory.** The keys are a slice built before timing, read
//!   in order (the hardware prefetcher streams it); one clock reading per
//!   pass, not per key.

use std::hint::black_box;
use std::time::Instant;

use filterlab_peers::{Mode, Subject};

/// Keys of the untimed pass that warms a filter before a timed lookup pass.
pub const WARM_UP_KEYS: usize = 1 << 16;

/// Two experiments' figures for one cell agree when within this factor.
pub const AGREEMENT_FACTOR: f64 = 1.25;

/// The share of cells that must agree.
pub const AGREEMENT_SHARE: f64 = 0.95;

/// The timing thread's CPU time so far, in seconds, where the platform
/// has a thread clock.
#[allow(
    clippy::unnecessary_wraps,
    reason = "None where the platform has no thread clock"
)]
fn thread_cpu_seconds() -> Option<f64> {
    #[cfg(unix)]
    {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Some(now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// What a stretch of work took: wall time and the thread's CPU time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elapsed {
    /// Wall-clock seconds.
    pub wall: f64,
    /// The timing thread's CPU seconds, where the platform tells.
    pub cpu: Option<f64>,
}

impl Elapsed {
    /// The seconds charged to the work: its CPU time, or its wall time
    /// without a thread clock.
    pub fn seconds(&self) -> f64 {
        self.cpu.unwrap_or(self.wall)
    }

    /// The share of the wall time the thread did not run (0 without a
    /// thread clock).
    pub fn lost(&self) -> f64 {
        self.cpu
            .map_or(0.0, |cpu| (1.0 - cpu / self.wall.max(1e-12)).max(0.0))
    }
}

/// Runs `work` and says what it took.
pub fn measure<T>(work: impl FnOnce() -> T) -> (T, Elapsed) {
    let cpu = thread_cpu_seconds();
    let wall = Instant::now();
    let result = work();
    let elapsed = Elapsed {
        wall: wall.elapsed().as_secs_f64(),
        cpu: cpu.zip(thread_cpu_seconds()).map(|(from, to)| to - from),
    };
    (result, elapsed)
}

/// Runs `work` of `operations` operations: its result and the ns charged
/// per operation.
pub fn per_operation<T>(operations: u64, work: impl FnOnce() -> T) -> (T, f64) {
    let (result, elapsed) = measure(work);
    (result, elapsed.seconds() * 1e9 / operations.max(1) as f64)
}

/// Looks up `keys` in `subject` in `mode`, after an untimed pass over the
/// first [`WARM_UP_KEYS`] of them, in as many passes as reach
/// `min_operations`: the keys found present in one pass and the ns charged
/// per lookup.
pub fn lookups(subject: &dyn Subject, keys: &[u64], mode: Mode, min_operations: u64) -> (u64, f64) {
    if keys.is_empty() {
        return (0, f64::NAN);
    }
    black_box(subject.count_contained(black_box(&keys[..keys.len().min(WARM_UP_KEYS)]), mode));
    let passes = min_operations.div_ceil(keys.len() as u64).max(1);
    per_operation(passes * keys.len() as u64, || {
        let mut found = 0;
        for _ in 0..passes {
            found = subject.count_contained(black_box(keys), mode);
        }
        black_box(found)
    })
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

/// Timed rounds of one cell, summarized: the median and the fastest and
/// slowest round (the interval two filters' figures are compared by).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rounds {
    /// Median ns per operation.
    pub median: f64,
    /// The fastest round.
    pub min: f64,
    /// The slowest round.
    pub max: f64,
    /// Rounds timed.
    pub count: u32,
}

impl Rounds {
    /// The summary of `samples` (NaN figures when there are none).
    pub fn of(samples: &[f64]) -> Self {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() {
            return Self {
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
                count: 0,
            };
        }
        Self {
            median: median(&sorted),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            count: sorted.len() as u32,
        }
    }
}

/// How two experiments' figures for the same cells compare: the cells
/// within [`AGREEMENT_FACTOR`] of each other, out of all compared, and the
/// widest disagreement.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreement {
    /// What was compared ("speed and sweep one-key negative lookups").
    pub what: String,
    /// Cells whose two figures are within the factor.
    pub within: usize,
    /// Cells compared.
    pub cells: usize,
    /// The cell with the largest ratio (the larger figure over the smaller), and that ratio.
    pub worst: Option<(String, f64)>,
}

impl Agreement {
    /// Compares `cells`: (a cell's name, one experiment's figure, the
    /// other's). Cells without two positive figures are left out.
    pub fn of(what: &str, cells: impl IntoIterator<Item = (String, f64, f64)>) -> Self {
        let mut agreement = Self {
            what: what.to_owned(),
            within: 0,
            cells: 0,
            worst: None,
        };
        for (cell, a, b) in cells {
            if !(a > 0.0 && b > 0.0) {
                continue;
            }
            let ratio = a.max(b) / a.min(b);
            agreement.cells += 1;
            if ratio <= AGREEMENT_FACTOR {
                agreement.within += 1;
            }
            if agreement.worst.as_ref().is_none_or(|(_, w)| ratio > *w) {
                agreement.worst = Some((cell, ratio));
            }
        }
        agreement
    }

    /// Whether at least [`AGREEMENT_SHARE`] of the cells agree (and some
    /// were compared).
    pub fn passes(&self) -> bool {
        self.cells > 0 && self.within as f64 >= AGREEMENT_SHARE * self.cells as f64
    }

    /// "speed and sweep: 103 of 105 cells within 1.25× (98%; at least 95%
    /// wanted), widest 1.31× (BloomFilter n = 10^7)".
    pub fn describe(&self) -> String {
        if self.cells == 0 {
            return format!("{}: no cell measured by both", self.what);
        }
        let worst = self
            .worst
            .as_ref()
            .map_or_else(String::new, |(cell, ratio)| {
                format!(", widest {ratio:.2}× ({cell})")
            });
        format!(
            "{}: {} of {} cells within {AGREEMENT_FACTOR}× ({:.0}%; at least {:.0}% wanted){worst}",
            self.what,
            self.within,
            self.cells,
            100.0 * self.within as f64 / self.cells as f64,
            100.0 * AGREEMENT_SHARE
        )
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
        let rounds = Rounds::of(&[3.0, 1.0, 2.0]);
        assert_eq!((rounds.median, rounds.min, rounds.max), (2.0, 1.0, 3.0));
        assert_eq!(rounds.count, 3);
        assert!(Rounds::of(&[]).median.is_nan());
    }

    /// Made-up figures: 20 cells, `off` of them `factor` apart.
    fn cells(off: usize, factor: f64) -> Vec<(String, f64, f64)> {
        (0..20)
            .map(|i| {
                let a = 5.0 + i as f64;
                let b = if i < off { a * factor } else { a * 1.1 };
                (format!("cell {i}"), a, b)
            })
            .collect()
    }

    #[test]
    fn the_agreement_check_fails_on_a_2x_disagreement() {
        let agreeing = Agreement::of("a and b", cells(0, 2.0));
        assert!(agreeing.passes(), "{}", agreeing.describe());
        assert_eq!((agreeing.within, agreeing.cells), (20, 20));
        // One cell in 20 off by 2× is the 5% allowed; two are not.
        assert!(Agreement::of("a and b", cells(1, 2.0)).passes());
        let disagreeing = Agreement::of("a and b", cells(2, 2.0));
        assert!(!disagreeing.passes());
        assert_eq!((disagreeing.within, disagreeing.cells), (18, 20));
        assert_eq!(
            disagreeing.worst,
            Some(("cell 0".to_owned(), 2.0)),
            "the widest is named"
        );
        assert!(
            disagreeing
                .describe()
                .starts_with("a and b: 18 of 20 cells within 1.25× (90%"),
            "{}",
            disagreeing.describe()
        );
        // Either way round, and never on cells without two figures.
        let flipped: Vec<_> = cells(20, 0.5).into_iter().collect();
        assert!(!Agreement::of("a and b", flipped).passes());
        let missing = Agreement::of("a and b", [("x".to_owned(), f64::NAN, 1.0)]);
        assert_eq!(missing.cells, 0);
        assert!(!missing.passes());
    }

    #[test]
    fn cpu_time_is_charged_and_what_others_took_is_seen() {
        let (sum, elapsed) = measure(|| (0..2_000_000u64).map(black_box).sum::<u64>());
        assert_eq!(sum, 1_999_999_000_000);
        assert!(elapsed.wall > 0.0);
        if let Some(cpu) = elapsed.cpu {
            assert!(cpu > 0.0);
            assert_eq!(elapsed.seconds(), cpu);
        }
        // Asleep, the thread runs for almost none of the wall time.
        let ((), asleep) = measure(|| std::thread::sleep(std::time::Duration::from_millis(20)));
        if asleep.cpu.is_some() {
            assert!(asleep.lost() > 0.5, "{asleep:?}");
        }
    }
}
