//! `filterlab report`: selects the filters, chooses where to write (never
//! over a report made with more data), runs the experiments, writes the
//! CSV files, the SVG plots and README.md into a staging directory,
//! publishes it, then applies the accuracy gate and the guide check.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::commands::bench::DEFAULT_BASELINE;
use crate::config::{Experiment, RunConfig};
use crate::error::Error;
use crate::experiments::measurements::{Measurements, measure, plan};
use crate::machine::Machine;
use crate::output::{RunRecord, Staging};
use crate::registry::{self, Entry};
use crate::render::charts::{draw_all, figures};
use crate::render::csv::write_all as write_csv_files;
use crate::render::guide::check_guide;
pub use crate::render::markdown::Context;
use crate::render::markdown::readme;
use crate::render::sections::counts::CommittedCounts;
use crate::text::format_count;

/// Where a report goes when `--out` is not given.
pub const DEFAULT_OUT: &str = "reports";

/// Where the default run goes instead when [`DEFAULT_OUT`] holds a report
/// made with more data.
pub const FALLBACK_OUT: &str = "target/filterlab-report";

/// What `filterlab report` was asked to do.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// The output directory; `None` for the default (see [`destination`]).
    pub out: Option<PathBuf>,
    /// What to measure.
    pub config: RunConfig,
    /// Filters to measure (all when empty).
    pub filters: Vec<String>,
    /// No progress output.
    pub quiet: bool,
    /// The command line, for the report.
    pub command_line: String,
    /// Experiments dropped because they cannot run on the user's keys.
    pub skipped: Vec<Experiment>,
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

/// Where a run recorded by `record` writes: `requested` unless it holds a
/// report with more data (a usage error then); without a request,
/// [`DEFAULT_OUT`], or [`FALLBACK_OUT`] when that holds more data, with a
/// note saying so.
///
/// # Errors
///
/// A usage error when the chosen directory holds a report with more data.
pub fn destination(
    requested: Option<&Path>,
    record: &RunRecord,
) -> Result<(PathBuf, Option<String>), Error> {
    let richer = |dir: &Path| RunRecord::read(dir).filter(|old| !record.covers(old));
    let refuse = |dir: &Path, old: &RunRecord| {
        Error::usage(format!(
            "{} holds {}; this run ({}) has less data and would overwrite it. Write it \
             elsewhere with --out DIR, or regenerate that report with the same or more data{}.",
            dir.display(),
            old.describe(),
            record.describe(),
            old.preset_flag()
                .map_or_else(String::new, |flag| format!(" ({flag})"))
        ))
    };
    if let Some(dir) = requested {
        return match richer(dir) {
            Some(old) => Err(refuse(dir, &old)),
            None => Ok((dir.to_owned(), None)),
        };
    }
    let default = Path::new(DEFAULT_OUT);
    let Some(old) = richer(default) else {
        return Ok((default.to_owned(), None));
    };
    let fallback = Path::new(FALLBACK_OUT);
    if let Some(older) = richer(fallback) {
        return Err(refuse(fallback, &older));
    }
    let note = format!(
        "{} holds {}, which this run would replace with less data: writing to {} instead \
         (--out DIR to choose; {} regenerates {}).",
        default.display(),
        old.describe(),
        fallback.display(),
        old.preset_flag().unwrap_or("the same run"),
        default.display()
    );
    Ok((fallback.to_owned(), Some(note)))
}

/// Runs `filterlab report` over `entries` (the registry, or any list of
/// entries: a test adds one of its own).
///
/// # Errors
///
/// Usage errors for bad options, an unwritable output directory or one
/// holding a report with more data (before anything runs); a gate error,
/// after the report is written, when a filterlab filter has a false
/// negative or its gated reference outside its interval (accuracy, churn,
/// growth), or when the guide breaks its rules (a cell too long, a need
/// without its section).
pub fn run_with(entries: Vec<Entry>, options: &ReportOptions) -> Result<ReportSummary, Error> {
    let start = Instant::now();
    let all = entries.len();
    let entries = registry::select(entries, &options.filters)?;
    let config = &options.config;
    let preset_experiments = RunConfig::preset(config.preset, config.seed, 1).experiments;
    let mut record = RunRecord {
        preset: config.preset.name().to_owned(),
        seed: config.seed,
        filters: entries.len(),
        complete: entries.len() == all
            && config.keys.is_none()
            && preset_experiments.iter().all(|e| config.runs(*e)),
        command: options.command_line.clone(),
        timing_cells_agreeing: None,
        timing_cells_compared: None,
    };
    let (out, note) = destination(options.out.as_deref(), &record)?;
    if let Some(note) = &note {
        eprintln!("filterlab: {note}");
    }
    let staging = Staging::create(&out)?;
    if !options.quiet {
        eprintln!(
            "filterlab: the {} report ({} filters, n up to {}; {}) into {}",
            config.preset.name(),
            entries.len(),
            format_count(config.largest_timed_items()),
            estimate(&entries, config),
            out.display()
        );
    }
    let machine = Machine::detect();
    // Read before the run: the report may be written into the same folder.
    let counts = CommittedCounts::read(Path::new(DEFAULT_BASELINE));
    let measured = measure(entries, config, options.quiet)?;
    let context = Context {
        machine: &machine,
        command_line: &options.command_line,
        skipped: &options.skipped,
        counts: &counts,
    };
    if let Some(agreement) = &measured.agreement {
        record.timing_cells_agreeing = Some(agreement.within);
        record.timing_cells_compared = Some(agreement.cells);
        if !options.quiet || !agreement.passes() {
            let verdict = if agreement.passes() {
                "agree"
            } else {
                "DISAGREE (a busy machine, or a timing that depends on the experiment)"
            };
            eprintln!("filterlab: timings {verdict}: {}", agreement.describe());
        }
    }
    let readme = write_report(&measured, &context, staging.path())?;
    record.write(staging.path())?;
    let out = staging.publish()?;
    let mut failures = measured.gate();
    // The guide exists when accuracy was measured (it picks from those rows).
    if !measured.accuracy.is_empty() {
        failures.extend(check_guide(&readme));
    }
    if !failures.is_empty() {
        return Err(Error::gate(format!(
            "accuracy gate or guide check failed; the report in {} shows it:\n  {}",
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

/// "about 4 minutes on 2 cores", from the progress plan.
fn estimate(entries: &[Entry], config: &RunConfig) -> String {
    let seconds = plan(entries, config).total();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let time = if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.0} minutes", seconds / 60.0)
    };
    format!("estimated {time} on {cores} cores")
}

/// Writes the CSV files, plots and README.md of `measured` into `dir`;
/// returns the README.
///
/// # Errors
///
/// When a file cannot be written.
pub fn write_report(
    measured: &Measurements,
    context: &Context<'_>,
    dir: &Path,
) -> Result<String, Error> {
    write_csv_files(measured, dir)?;
    let figures = figures(measured);
    draw_all(&figures, dir)?;
    let readme = readme(measured, context, &figures);
    fs::write(dir.join("README.md"), &readme)?;
    Ok(readme)
}
