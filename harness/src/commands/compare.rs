//! `filterlab compare`: every filter at one (n, p), accuracy and speed, as a
//! table on stdout. Nothing is written to disk.

use std::fmt::Write as _;

use filterlab_peers::Mode;

use crate::config::{Experiment, Preset, RunConfig, check_workload};
use crate::error::Error;
use crate::experiments::accuracy;
use crate::experiments::measurements::measure;
use crate::experiments::speed::Operation;
use crate::registry;
use crate::text::{format_count, sci};

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
    check_workload(request.items, request.fpp)?;
    let entries = registry::select(registry::registry(), &request.filters)?;
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
    let ns = |filter: &str, ops: &[Operation], mode: Mode| {
        speed
            .iter()
            .find(|s| s.filter == filter && s.mode == mode && ops.contains(&s.op))
            .map_or_else(|| "-".to_owned(), |s| format!("{:.1}", s.ns_per_op))
    };
    let timed = [
        &[Operation::Insert, Operation::Build][..],
        &[Operation::LookupPositive],
        &[Operation::LookupNegative],
        &[Operation::Remove],
    ];
    for row in &measured.accuracy {
        let [insert, positive, negative, remove] =
            timed.map(|ops| ns(&row.filter, ops, Mode::OneKey));
        let _ = writeln!(
            out,
            "{:<22} {:>9.2} {:>10} {:>10} {:>23} {:>4} {insert:>8} {positive:>8} {negative:>8} {remove:>8}  {}",
            row.filter,
            row.bits_per_item,
            row.theoretical_fpp.map_or_else(|| "n/a".to_owned(), sci),
            sci(row.empirical_fpp),
            format!("[{}, {}]", sci(row.ci_low), sci(row.ci_high)),
            row.false_negatives,
            row.verdict
        );
        if speed
            .iter()
            .any(|s| s.filter == row.filter && s.mode == Mode::Batched)
        {
            let [insert, positive, negative, _] =
                timed.map(|ops| ns(&row.filter, ops, Mode::Batched));
            let _ = writeln!(
                out,
                "{:<22} {:>9} {:>10} {:>10} {:>23} {:>4} {insert:>8} {positive:>8} {negative:>8} {:>8}",
                "  (batched)", "", "", "", "", "", "-"
            );
        }
    }
    let _ = writeln!(
        out,
        "\nns per operation: median of 3 runs; one thread; one key at a time, and for filters \
         with a batch API also batched (the \"(batched)\" lines)."
    );
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
