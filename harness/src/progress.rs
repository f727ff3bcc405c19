//! Progress of a whole run: on a terminal one indicatif bar over every
//! experiment with the time left; otherwise (piped, CI logs) one line per
//! experiment as it finishes. The time left comes from a cost estimate of
//! each experiment ([`Plan`]), corrected by the rate the run actually goes at.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Bar units per estimated second (the bar counts milliseconds).
const UNITS_PER_SECOND: f64 = 1000.0;

/// Each experiment's estimated share of the run, in seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    stages: Vec<(&'static str, f64)>,
}

impl Plan {
    /// Adds an experiment called `label`, estimated at `seconds`.
    pub fn add(&mut self, label: &'static str, seconds: f64) {
        self.stages.push((label, seconds.max(0.01)));
    }

    /// The estimate of `label` (0 when it is not planned).
    fn seconds(&self, label: &str) -> f64 {
        self.stages
            .iter()
            .filter(|(name, _)| *name == label)
            .map(|(_, s)| s)
            .sum()
    }

    /// The whole run's estimate.
    pub fn total(&self) -> f64 {
        self.stages.iter().map(|(_, s)| s).sum()
    }
}

/// The progress of one run, shared by its experiments (and their threads).
pub struct Tracker {
    bar: Option<ProgressBar>,
    plan: Plan,
    quiet: bool,
    start: Instant,
    /// Bar units of the experiments already finished.
    finished: AtomicU64,
}

impl Tracker {
    /// Progress over the experiments of `plan`; nothing is shown when `quiet`.
    pub fn new(plan: Plan, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new((plan.total() * UNITS_PER_SECOND) as u64);
            let style = ProgressStyle::with_template(
                "[{elapsed_precise}] {bar:30} {percent:>3}%  about {eta} left  {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        });
        Self {
            bar,
            plan,
            quiet,
            start: Instant::now(),
            finished: AtomicU64::new(0),
        }
    }

    /// A tracker that shows nothing (tests, library callers).
    pub fn hidden() -> Self {
        Self::new(Plan::default(), true)
    }

    /// The experiment called `label` starts; it will report `steps` steps.
    pub fn stage(&self, label: &'static str, steps: u64) -> Stage<'_> {
        Stage {
            tracker: self,
            label,
            steps: steps.max(1),
            done: AtomicU64::new(0),
            units: self.plan.seconds(label) * UNITS_PER_SECOND,
            start: Instant::now(),
        }
    }

    /// The estimated time left, from the plan and the rate so far.
    fn time_left(&self, position: f64) -> Duration {
        let total = self.plan.total() * UNITS_PER_SECOND;
        let elapsed = self.start.elapsed().as_secs_f64();
        if position <= 0.0 || total <= position {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(elapsed * (total - position) / position)
    }
}

impl Drop for Tracker {
    /// The run is over (or failed): the bar goes, whatever was not reached.
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// One experiment's progress within the run.
pub struct Stage<'a> {
    tracker: &'a Tracker,
    label: &'static str,
    steps: u64,
    done: AtomicU64,
    units: f64,
    start: Instant,
}

impl Stage<'_> {
    /// One step done; `what` says which (shown on a terminal only).
    pub fn step(&self, what: &str) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.tracker.bar {
            let share = done.min(self.steps) as f64 / self.steps as f64;
            let base = self.tracker.finished.load(Ordering::Relaxed);
            bar.set_position(base + (share * self.units) as u64);
            bar.set_message(format!("{}: {what}", self.label));
        }
    }

    /// The experiment is done: on a terminal the bar moves to its end;
    /// otherwise one line says what it did, how long it took and about how
    /// long the run has left.
    pub fn finish(self, summary: &str) {
        let tracker = self.tracker;
        let position = tracker
            .finished
            .fetch_add(self.units as u64, Ordering::Relaxed)
            + self.units as u64;
        if let Some(bar) = &tracker.bar {
            bar.set_position(position);
            if position >= bar.length().unwrap_or(0) {
                bar.finish_and_clear();
            }
        } else if !tracker.quiet {
            let left = tracker.time_left(position as f64).as_secs();
            let left = if left == 0 {
                String::new()
            } else {
                format!("; about {} left", minutes(left))
            };
            eprintln!(
                "[{:>5.0} s] {}: {summary} in {:.1} s{left}",
                tracker.start.elapsed().as_secs_f64(),
                self.label,
                self.start.elapsed().as_secs_f64()
            );
        }
    }
}

/// "4 min 10 s", "35 s".
fn minutes(seconds: u64) -> String {
    if seconds < 60 {
        format!("{seconds} s")
    } else {
        format!("{} min {} s", seconds / 60, seconds % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_add_up_and_time_left_follows_the_rate() {
        let mut plan = Plan::default();
        plan.add("a", 10.0);
        plan.add("b", 30.0);
        assert_eq!(plan.total(), 40.0);
        assert_eq!(plan.seconds("b"), 30.0);
        assert_eq!(plan.seconds("c"), 0.0);
        let tracker = Tracker::new(plan, true);
        let stage = tracker.stage("a", 4);
        for _ in 0..4 {
            stage.step("x");
        }
        stage.finish("4 steps");
        assert_eq!(tracker.finished.load(Ordering::Relaxed), 10_000);
        // A quarter done: three times the time so far is left.
        let left = tracker.time_left(10_000.0).as_secs_f64();
        let elapsed = tracker.start.elapsed().as_secs_f64();
        assert!(left <= 3.0 * elapsed + 1e-3, "{left} {elapsed}");
        assert_eq!(minutes(250), "4 min 10 s");
        assert_eq!(minutes(35), "35 s");
    }
}
