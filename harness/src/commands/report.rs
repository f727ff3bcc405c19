//! `filterlab report`: selects the filters, runs the experiments, writes
//! the CSV files, the SVG plots and README.md into a staging directory,
//! publishes it, then applies the accuracy gate.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::RunConfig;
use crate::error::Error;
use crate::experiments::measurements::{Measurements, measure};
use crate::machine::Machine;
use crate::output::Staging;
use crate::registry::{self, Entry};
use crate::render::charts::{charts, draw_all};
use crate::render::csv::write_all as write_csv_files;
use crate::render::markdown::readme;

/// What `filterlab report` was asked to do.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// The output directory.
    pub out: PathBuf,
    /// What to measure.
    pub config: RunConfig,
    /// Filters to measure (all when empty).
    pub filters: Vec<String>,
    /// No progress output.
    pub quiet: bool,
    /// The command line, for the report.
    pub command_line: String,
}

/// What a finished report run produced.
#[derive(Debug)]
pub struct ReportSummary {
    /// Where the report is.
    pub out: PathBuf,
    /// Accuracy rows of filterlab filters checked by the gate.
    pub gated_rows: usize,
    /// Total wall time in seconds.
    pub seconds: f64,
}

/// Runs `filterlab report` over the registry.
///
/// # Errors
///
/// As [`run_with`].
pub fn run(options: &ReportOptions) -> Result<ReportSummary, Error> {
    run_with(registry::registry(), options)
}

/// Runs `filterlab report` over `entries` (the registry, or any list of
/// entries: a test adds one of its own).
///
/// # Errors
///
/// Usage errors for bad options or an unwritable output directory (before
/// anything runs); a gate error, after the report is written, when a
/// filterlab filter has a false negative or its gated reference outside
/// its interval (accuracy, churn, growth).
pub fn run_with(entries: Vec<Entry>, options: &ReportOptions) -> Result<ReportSummary, Error> {
    let start = Instant::now();
    let entries = registry::select(entries, &options.filters)?;
    let staging = Staging::create(&options.out)?;
    let machine = Machine::detect();
    let measured = measure(entries, &options.config, options.quiet)?;
    write_report(&measured, &machine, &options.command_line, staging.path())?;
    let out = staging.publish()?;
    let failures = measured.gate();
    if !failures.is_empty() {
        return Err(Error::gate(format!(
            "accuracy gate failed; the report in {} shows it:\n  {}",
            out.display(),
            failures.join("\n  ")
        )));
    }
    Ok(ReportSummary {
        out,
        gated_rows: measured
            .accuracy
            .iter()
            .filter(|r| r.is_filterlab())
            .count(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Writes the CSV files, plots and README.md of `measured` into `dir`.
///
/// # Errors
///
/// When a file cannot be written.
pub fn write_report(
    measured: &Measurements,
    machine: &Machine,
    command_line: &str,
    dir: &Path,
) -> Result<(), Error> {
    write_csv_files(measured, dir)?;
    let charts = charts(measured);
    draw_all(&charts, dir)?;
    fs::write(
        dir.join("README.md"),
        readme(measured, machine, command_line, &charts),
    )?;
    Ok(())
}
