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
    let mut seconds = Vec::new();
    // Runs `experiment` when `wanted`, timed.
    let mut timed = |experiment, wanted: bool, run: &mut dyn FnMut() -> Result<(), Error>| {
        if !wanted {
            return Ok(());
        }
        let start = Instant::now();
        run()?;
        seconds.push((experiment, start.elapsed().as_secs_f64()));
        Ok::<(), Error>(())
    };
    let mut accuracy = Vec::new();
    // Space is read from the accuracy rows.
    let accuracy_needed = config.runs(Experiment::Accuracy) || config.runs(Experiment::Space);
    timed(Experiment::Accuracy, accuracy_needed, &mut || {
        accuracy = accuracy::run(&entries, config, quiet)?;
        Ok(())
    })?;
    let (mut speed, mut capacity, mut churn, mut growth) = (None, None, None, None);
    timed(
        Experiment::Speed,
        config.runs(Experiment::Speed),
        &mut || {
            speed = Some(speed::run(&entries, config, quiet));
            Ok(())
        },
    )?;
    timed(
        Experiment::Capacity,
        config.runs(Experiment::Capacity),
        &mut || {
            capacity = Some(capacity::run(&entries, config, quiet)?);
            Ok(())
        },
    )?;
    timed(
        Experiment::Churn,
        config.runs(Experiment::Churn),
        &mut || {
            churn = Some(churn::run(&entries, config, quiet)?);
            Ok(())
        },
    )?;
    timed(
        Experiment::Growth,
        config.runs(Experiment::Growth),
        &mut || {
            growth = Some(growth::run(&entries, config, quiet)?);
            Ok(())
        },
    )?;
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
        seconds,
    })
}

impl Measurements {
    /// Why the gate fails, one line per failing row (accuracy, churn,
    /// growth); empty when it passes.
    pub fn gate(&self) -> Vec<String> {
        let mut failures = accuracy::gate(&self.accuracy);
        if let Some(churned) = &self.churn {
            failures.extend(churn::gate(&churned.rows));
        }
        if let Some(grown) = &self.growth {
            failures.extend(growth::gate(&grown.rows));
        }
        failures
    }
}
