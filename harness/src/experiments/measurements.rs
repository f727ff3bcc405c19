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
use crate::experiments::speed::{self, SpeedResults};
use crate::registry::Entry;

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
    /// Redis results (perhaps only a note saying why it was skipped), when run.
    pub redis: Option<RedisResults>,
    /// Wall time per experiment, in seconds.
    pub seconds: Vec<(Experiment, f64)>,
}

/// Runs the experiments of `config` over `entries`.
///
/// # Errors
///
/// When a filter cannot be built for a workload.
pub fn measure(
    entries: Vec<Entry>,
    config: &RunConfig,
    quiet: bool,
) -> Result<Measurements, Error> {
    let mut timer = Timer {
        config,
        seconds: Vec::new(),
    };
    // Space is read from the accuracy rows.
    let accuracy_needed = config.runs(Experiment::Accuracy) || config.runs(Experiment::Space);
    let accuracy = timer
        .run_if(Experiment::Accuracy, accuracy_needed, || {
            accuracy::run(&entries, config, quiet)
        })?
        .unwrap_or_default();
    let speed = timer.run(Experiment::Speed, || {
        Ok(speed::run(&entries, config, quiet))
    })?;
    let capacity = timer.run(Experiment::Capacity, || {
        capacity::run(&entries, config, quiet)
    })?;
    let churn = timer.run(Experiment::Churn, || churn::run(&entries, config, quiet))?;
    let growth = timer.run(Experiment::Growth, || growth::run(&entries, config, quiet))?;
    let redis = timer.run(Experiment::Redis, || {
        Ok(redis::run(&entries, config, quiet))
    })?;
    let space = if config.runs(Experiment::Space) {
        space::from_accuracy(&entries, &accuracy)
    } else {
        Vec::new()
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
        redis,
        seconds: timer.seconds,
    })
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
