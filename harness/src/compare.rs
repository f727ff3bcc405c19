//! `filterlab compare`: every filter at one (n, p), accuracy and speed, as a
//! table on stdout. Nothing is written to disk.

use std::fmt::Write as _;

use crate::Error;
use crate::accuracy;
use crate::config::{Experiment, Preset, RunConfig, format_count};
use crate::registry;
use crate::report::{measure, sci};

/// A `compare` request.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRequest {
    /// Items (capacity and inserted).
    pub items: u64,
    /// Target FPP.
    pub fpp: f64,
    /// Filters (all when empty).
    pub filters: Vec<String>,
    /// Master seed.
    pub seed: u64,
    /// Worker threads for the accuracy rows.
    pub threads: usize,
    /// No progress output.
    pub quiet: bool,
}

/// Measures and formats the comparison.
///
/// # Errors
///
/// Usage errors for bad arguments or unknown filters; failures when a filter
/// cannot be built.
pub fn compare(request: &CompareRequest) -> Result<String, Error> {
    crate::cli::check_workload(request.items, request.fpp)?;
    let entries = registry::select(&request.filters)?;
    let base = RunConfig::preset(Preset::Full, request.seed, request.threads);
    let config = RunConfig {
        experiments: vec![Experiment::Accuracy, Experiment::Speed],
        accuracy_items: vec![request.items],
        accuracy_fpps: vec![request.fpp],
        speed_items: vec![request.items],
        speed_fpp: request.fpp,
        speed_repetitions: 3,
        speed_large_repetitions: 1,
        ..base
    };
    let measured = measure(entries, &config, request.quiet)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} items at target FPP {:e} (seed {}); interval confidence {:.3}%\n",
        format_count(request.items),
        request.fpp,
        request.seed,
        measured.accuracy.first().map_or(0.0, |r| r.confidence) * 100.0
    );
    let _ = writeln!(
        out,
        "{:<22} {:>9} {:>10} {:>10} {:>23} {:>4} {:>8} {:>8} {:>8} {:>8}  verdict",
        "filter",
        "bits/item",
        "theory",
        "measured",
        "interval",
        "FN",
        "insert",
        "lookup+",
        "lookup-",
        "remove"
    );
    let speed = measured.speed.as_ref().map_or(&[][..], |s| &s.rows[..]);
    for row in &measured.accuracy {
        let ns = |ops: &[&str]| {
            speed
                .iter()
                .find(|s| s.filter == row.filter && ops.contains(&s.op.as_str()))
                .map_or_else(|| "-".to_owned(), |s| format!("{:.1}", s.ns_per_op))
        };
        let _ = writeln!(
            out,
            "{:<22} {:>9.2} {:>10} {:>10} {:>23} {:>4} {:>8} {:>8} {:>8} {:>8}  {}",
            row.filter,
            row.bits_per_item,
            row.theoretical_fpp.map_or_else(|| "n/a".to_owned(), sci),
            sci(row.empirical_fpp),
            format!("[{}, {}]", sci(row.ci_low), sci(row.ci_high)),
            row.false_negatives,
            ns(&["insert", "build"]),
            ns(&["lookup_positive"]),
            ns(&["lookup_negative"]),
            ns(&["remove"]),
            row.verdict
        );
    }
    let _ = writeln!(out, "\nns per operation: median of 3 runs; one thread.");
    let failures = accuracy::gate(&measured.accuracy);
    if !failures.is_empty() {
        let _ = writeln!(
            out,
            "\nAccuracy gate failures:\n  {}",
            failures.join("\n  ")
        );
    }
    Ok(out)
}
