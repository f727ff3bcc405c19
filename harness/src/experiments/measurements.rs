//! One run of the experiments a configuration asks for, over a list of
//! registry entries: everything the report, `compare` and the decision
//! guide are rendered from, and the gate over all of it.

use std::time::Instant;

use crate::config::{Experiment, RunConfig};
use crate::error::Error;
use crate::experiments::accuracy::{self, AccuracyRow};
use crate::experiments::capacity::{self, CapacityResults};
use crate::experiments::churn::{self, ChurnResults};
use crate::experiments::growth::{self, GrowthResults};
use crate::experiments::redis::{self, RedisResults};
use crate::experiments::space::{self, SpaceRow};
use crate::experiments::speed::{self, Operation, SpeedResults};
use crate::experiments::sweep::{self, SweepResults};
use crate::experiments::timing::{self, Agreement};
use crate::progress::{Plan, Tracker};
use crate::registry::{Capability, Entry};
use crate::text::format_count;

/// Everything measured in one run.
pub struct Measurements {
    /// The filters measured.
    pub entries: Vec<Entry>,
    /// The run's configuration.
    pub config: RunConfig,
    /// Accuracy rows (empty when not run).
    pub accuracy: Vec<AccuracyRow>,
    /// Space rows (empty when not run).
    pub space: Vec<SpaceRow>,
    /// Speed results, when run.
    pub speed: Option<SpeedResults>,
    /// Over-capacity results, when run.
    pub capacity: Option<CapacityResults>,
    /// Churn results, when run.
    pub churn: Option<ChurnResults>,
    /// Growth results, when run.
    pub growth: Option<GrowthResults>,
    /// Sweep results, when run.
    pub sweep: Option<SweepResults>,
    /// Redis results (perhaps only a note saying why it was skipped), when run.
    pub redis: Option<RedisResults>,
    /// Wall time per experiment, in seconds.
    pub seconds: Vec<(Experiment, f64)>,
    /// How the speed experiment's one-key negative lookups agreed with the
    /// sweep's on the cells both timed, when both ran.
    pub agreement: Option<Agreement>,
}

/// Runs the experiments of `config` over `entries`, with one progress bar
/// (or one line per experiment) unless `quiet`.
///
/// # Errors
///
/// When a filter cannot be built for a workload.
pub fn measure(
    entries: Vec<Entry>,
    config: &RunConfig,
    quiet: bool,
) -> Result<Measurements, Error> {
    let progress = Tracker::new(plan(&entries, config), quiet);
    let mut timer = Timer {
        config,
        seconds: Vec::new(),
    };
    // Space is read from the accuracy rows.
    let accuracy_needed = config.runs(Experiment::Accuracy) || config.runs(Experiment::Space);
    let accuracy = timer
        .run_if(Experiment::Accuracy, accuracy_needed, || {
            accuracy::run(&entries, config, &progress)
        })?
        .unwrap_or_default();
    let speed = timer.run(Experiment::Speed, || {
        Ok(speed::run(&entries, config, &progress))
    })?;
    let sweep = timer.run(Experiment::Sweep, || {
        Ok(sweep::run(&entries, config, &accuracy, &progress))
    })?;
    let capacity = timer.run(Experiment::Capacity, || {
        capacity::run(&entries, config, &progress)
    })?;
    let churn = timer.run(Experiment::Churn, || {
        churn::run(&entries, config, &progress)
    })?;
    let growth = timer.run(Experiment::Growth, || {
        growth::run(&entries, config, &progress)
    })?;
    let redis = timer.run(Experiment::Redis, || {
        Ok(redis::run(&entries, config, &progress))
    })?;
    let space = if config.runs(Experiment::Space) {
        space::from_accuracy(&entries, &accuracy)
    } else {
        Vec::new()
    };
    let mut speed = speed;
    let agreement = match (&mut speed, &sweep) {
        (Some(speed), Some(sweep)) => Some(one_figure_per_cell(speed, sweep)),
        _ => None,
    };
    Ok(Measurements {
        entries,
        config: config.clone(),
        accuracy,
        space,
        speed,
        capacity,
        churn,
        growth,
        sweep,
        redis,
        seconds: timer.seconds,
        agreement,
    })
}

/// The speed experiment and the sweep both time the one-key negative
/// lookup of a filter sized for n at the speed experiment's p: how their
/// figures agree (the check that the timings do not depend on the
/// experiment), then the speed rows take the sweep's figure, so the report
/// has one figure for each filter, n and p (the sweep's: it times every
/// p, the skyline and Pareto charts are drawn from it).
pub fn one_figure_per_cell(speed: &mut SpeedResults, sweep: &SweepResults) -> Agreement {
    let p = speed.rows.first().map_or(f64::NAN, |r| r.target_fpp);
    let same_cell = |row: &speed::SpeedRow| {
        (row.op == Operation::LookupNegative && row.mode == filterlab_peers::Mode::OneKey)
            .then(|| {
                sweep
                    .rows
                    .iter()
                    .find(|s| s.filter == row.filter && s.n == row.n && s.target_fpp == p)
            })
            .flatten()
    };
    let agreement = Agreement::of(
        "speed experiment and sweep, one-key negative lookups",
        speed.rows.iter().filter_map(|row| {
            let swept = same_cell(row)?;
            Some((
                format!("{} n = {}", row.filter, format_count(row.n)),
                row.ns_per_op,
                swept.negative_ns,
            ))
        }),
    );
    for index in 0..speed.rows.len() {
        if let Some(swept) = same_cell(&speed.rows[index]).cloned() {
            let row = &mut speed.rows[index];
            row.ns_per_op = swept.negative_ns;
            row.min_ns_per_op = swept.min_negative_ns;
            row.max_ns_per_op = swept.max_negative_ns;
            row.repetitions = swept.rounds;
        }
    }
    agreement
}

/// Rough ns per key operation in a filter of `items` keys: cache-resident
/// up to 10^6 keys, a DRAM access or more beyond, and at 10^8 keys (the
/// full run) a TLB miss too: the full run's speed experiment took 1,688 s
/// against the 998 s that 60 ns there predicted.
fn ns_per_operation(items: u64) -> f64 {
    match items {
        0..=1_000_000 => 30.0,
        1_000_001..=10_000_000 => 60.0,
        _ => 115.0,
    }
}

/// Each experiment's estimated seconds on this machine, for the progress
/// bar's time left (the bar corrects them by the rate it observes). The
/// constants are fitted to the default run on the 2-core machine the
/// report is timed on (an AMD EPYC VM: accuracy took 120 s there, idle,
/// where 42 ns per operation predicted 81 s): the time left is then right
/// from the first experiment on, which it is not when one experiment runs
/// at twice its estimate and another at half. Every timed lookup pass
/// counts its untimed warm-up ([`timing::WARM_UP_KEYS`]).
pub fn plan(entries: &[Entry], config: &RunConfig) -> Plan {
    let mut plan = Plan::default();
    let threads = config.threads.max(1) as f64;
    let lookups = config.speed_lookups as f64;
    let timed = |keys: f64| keys + keys.min(timing::WARM_UP_KEYS as f64);
    let with = |capability| entries.iter().filter(|e| e.has(capability)).count() as f64;
    for experiment in &config.experiments {
        let seconds = match experiment {
            Experiment::Accuracy => {
                let mut operations = 0.0;
                for entry in entries {
                    for &n in &config.accuracy_items {
                        let instances = f64::from(config.instances(n));
                        // A fixed-FPP filter: one row per n, at its own FPP.
                        let targets: Vec<f64> = match entry.fixed_fpp {
                            Some(fixed) => vec![fixed],
                            None => config.accuracy_fpps.clone(),
                        };
                        for p in targets {
                            let queries = (config.expected_false_positives / p)
                                .clamp(instances * 100.0, config.max_queries as f64);
                            operations += queries + n as f64 * instances;
                        }
                    }
                }
                operations * 62e-9 / threads
            }
            Experiment::Speed => {
                let mut seconds = 0.0;
                for entry in entries {
                    // A static filter is built once; a peer has no batch API.
                    let (fills, passes) = match (entry.takes_inserts(), entry.is_filterlab()) {
                        (true, _) => (2.0, 4.0),
                        (false, true) => (1.0, 4.0),
                        (false, false) => (1.0, 2.0),
                    };
                    for &n in &config.speed_items {
                        let inserts = (n as f64).max(lookups);
                        let repetitions = f64::from(config.speed_repetitions_at(n));
                        seconds += repetitions
                            * (fills * inserts + passes * timed(lookups) + lookups)
                            * ns_per_operation(n);
                    }
                }
                seconds * 1e-9
            }
            Experiment::Sweep => {
                let mut seconds = 0.0;
                for &n in &config.sweep_items {
                    let rounds = f64::from(config.sweep_repetitions_at(n));
                    seconds += (n as f64 + rounds * timed(lookups)) * ns_per_operation(n);
                }
                // A fixed-FPP filter is measured at one target per n.
                let cells: f64 = entries
                    .iter()
                    .map(|e| {
                        if e.fixed_fpp.is_some() {
                            1.0
                        } else {
                            config.accuracy_fpps.len() as f64
                        }
                    })
                    .sum();
                seconds * cells * 1e-9
            }
            Experiment::Capacity => {
                let points = f64::from(3 * config.capacity_steps_per_capacity + 1);
                let operations =
                    3.0 * config.capacity_items as f64 + points * config.capacity_queries as f64;
                // Static filters have no capacity to go past.
                let dynamic = entries.iter().filter(|e| e.takes_inserts()).count() as f64;
                operations * dynamic * 110e-9 / threads
            }
            Experiment::Churn => {
                let steps = f64::from(config.churn_span) * config.churn_items as f64;
                let queries = f64::from(config.churn_points + 1) * config.churn_queries as f64
                    + f64::from(config.sweep_repetitions) * timed(lookups);
                with(Capability::Deletes) * (steps * 250e-9 + queries * 65e-9)
            }
            Experiment::Growth => {
                let points = (config.growth_final as f64 / config.growth_initial as f64)
                    .log2()
                    .ceil()
                    + 1.0;
                // Negative rounds (the end has the sweep's), positive
                // lookups at each point; the slow peers' lookups dominate.
                let rounds = points + f64::from(config.sweep_repetitions.max(1)) - 1.0;
                let positives = points * timed(growth::POSITIVE_LOOKUPS as f64);
                let mut seconds = 0.0;
                for &p in &config.growth_fpps {
                    let queries = (config.expected_false_positives / p)
                        .clamp(4096.0, config.growth_max_queries as f64);
                    seconds += config.growth_final as f64 * 660e-9
                        + (rounds * timed(queries) + positives) * 300e-9;
                }
                with(Capability::Growth) * seconds
            }
            // One server (scripts and reference), then a cluster started
            // (about five seconds) and measured.
            Experiment::Redis => {
                config.redis_items as f64 * 34e-6 + config.redis_per_key as f64 * 500e-6 + 5.0
            }
            Experiment::Space => 0.0,
        };
        plan.add(experiment.name(), seconds);
    }
    plan
}

/// Runs the experiments a configuration asks for, recording each one's
/// wall time in the order they ran.
struct Timer<'a> {
    config: &'a RunConfig,
    seconds: Vec<(Experiment, f64)>,
}

impl Timer<'_> {
    /// `run`'s result when the configuration asks for `experiment`, timed;
    /// `None` when it does not.
    fn run<T>(
        &mut self,
        experiment: Experiment,
        run: impl FnOnce() -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        let wanted = self.config.runs(experiment);
        self.run_if(experiment, wanted, run)
    }

    /// `run`'s result when `wanted`, timed as `experiment`.
    fn run_if<T>(
        &mut self,
        experiment: Experiment,
        wanted: bool,
        run: impl FnOnce() -> Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        if !wanted {
            return Ok(None);
        }
        let start = Instant::now();
        let result = run()?;
        self.seconds
            .push((experiment, start.elapsed().as_secs_f64()));
        Ok(Some(result))
    }
}

impl Measurements {
    /// Why the gate fails, one line per failing row (accuracy, churn,
    /// growth, redis); empty when it passes.
    pub fn gate(&self) -> Vec<String> {
        let mut failures = accuracy::gate(&self.accuracy);
        if let Some(churned) = &self.churn {
            failures.extend(churn::gate(&churned.rows));
        }
        if let Some(grown) = &self.growth {
            failures.extend(growth::gate(&grown.rows));
        }
        if let Some(shared) = &self.redis {
            failures.extend(redis::gate(&shared.rows, shared.cluster_fpp.as_ref()));
        }
        failures
    }
}

/// Made-up rows for tests.
#[cfg(test)]
pub(crate) mod made_up {
    use filterlab_peers::Mode;

    use crate::experiments::speed::{Operation, SpeedRow};
    use crate::experiments::sweep::SweepRow;
    use crate::registry::Origin;

    /// A one-key speed row at p = 1e-2, its rounds ±10%.
    pub(crate) fn speed_row(filter: &str, n: u64, op: Operation, ns: f64) -> SpeedRow {
        SpeedRow {
            filter: filter.to_owned(),
            origin: Origin::Filterlab,
            op,
            n,
            ns_per_op: ns,
            min_ns_per_op: ns * 0.9,
            max_ns_per_op: ns * 1.1,
            repetitions: 5,
            target_fpp: 0.01,
            mode: Mode::OneKey,
        }
    }

    /// A sweep row of 10 bits per item, its rounds ±5%.
    pub(crate) fn sweep_row(filter: &str, n: u64, p: f64, ns: f64) -> SweepRow {
        SweepRow {
            filter: filter.to_owned(),
            origin: Origin::Filterlab,
            n,
            target_fpp: p,
            bits_per_item: 10.0,
            negative_ns: ns,
            min_negative_ns: ns * 0.95,
            max_negative_ns: ns * 1.05,
            rounds: 3,
            queries: 1000,
            false_positives: 10,
            empirical_fpp: 0.01,
            ci_low: 0.005,
            ci_high: 0.02,
            theoretical_fpp: None,
            refused: 0,
            meets_target: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::made_up::{speed_row, sweep_row};
    use super::*;

    /// The default run's plan, fitted to the machine the report is timed
    /// on, stays within its five minutes with every registered filter;
    /// filters of one FPP whatever the target cost one target per n.
    #[test]
    fn the_default_run_is_planned_within_five_minutes() {
        use crate::config::Preset;
        let entries = crate::registry::registry();
        let config = RunConfig::preset(Preset::Default, 1, 2);
        let total = plan(&entries, &config).total();
        assert!(total <= 300.0, "{total:.0} s");
        let fixed: Vec<Entry> = entries
            .into_iter()
            .filter(|e| e.fixed_fpp.is_some())
            .collect();
        let mut unfixed = fixed.clone();
        for entry in &mut unfixed {
            entry.fixed_fpp = None;
        }
        let cost = |entries: &[Entry]| plan(entries, &config).total();
        assert!(
            cost(&fixed) * 1.5 < cost(&unfixed),
            "{} {}",
            cost(&fixed),
            cost(&unfixed)
        );
    }

    /// The speed experiment's one-key negative lookups are checked against
    /// the sweep's on the cells both timed (the same n, the speed p), then
    /// take the sweep's figures: one figure per filter, operation, n and p.
    #[test]
    fn one_figure_per_cell_after_the_check() {
        let mut speed = SpeedResults {
            rows: vec![
                speed_row("A", 10_000, Operation::LookupNegative, 10.0),
                speed_row("A", 1_000_000, Operation::LookupNegative, 40.0),
                speed_row("A", 10_000_000, Operation::LookupNegative, 90.0),
                speed_row("A", 10_000, Operation::Insert, 20.0),
            ],
            builds: Vec::new(),
            notes: Vec::new(),
        };
        let sweep = SweepResults {
            rows: vec![
                sweep_row("A", 10_000, 0.01, 11.0),
                sweep_row("A", 1_000_000, 0.01, 20.0),
                sweep_row("A", 1_000_000, 0.001, 25.0),
            ],
            notes: Vec::new(),
        };
        let agreement = one_figure_per_cell(&mut speed, &sweep);
        // 10^4 agrees (1.1×), 10^6 does not (2×); 10^7 has no sweep cell.
        assert_eq!((agreement.within, agreement.cells), (1, 2));
        assert!(!agreement.passes());
        let figures: Vec<(u64, Operation, f64, u32)> = speed
            .rows
            .iter()
            .map(|r| (r.n, r.op, r.ns_per_op, r.repetitions))
            .collect();
        assert_eq!(
            figures,
            [
                (10_000, Operation::LookupNegative, 11.0, 3),
                (1_000_000, Operation::LookupNegative, 20.0, 3),
                (10_000_000, Operation::LookupNegative, 90.0, 5),
                (10_000, Operation::Insert, 20.0, 5),
            ]
        );
        assert_eq!(speed.rows[1].min_ns_per_op, 19.0);
    }
}
