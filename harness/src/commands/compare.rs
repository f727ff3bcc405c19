//! `filterlab compare`: every filter at one (n, p), accuracy and speed, as a
//! table on stdout, on generated keys or the user's (`--keys`). Nothing is
//! written to disk.

use std::fmt::Write as _;
use std::sync::Arc;

use filterlab_peers::Mode;

use crate::config::{Experiment, Preset, RunConfig, check_workload};
use crate::error::Error;
use crate::experiments::accuracy;
use crate::experiments::keys::KeySet;
use crate::experiments::measurements::{Measurements, measure};
use crate::experiments::speed::Operation;
use crate::registry;
use crate::render::evidence::label;
use crate::text::{columns, format_count, sci};

/// A `compare` request.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRequest {
    /// Items (capacity and inserted); with `keys`, their inserted count.
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
    /// The user's keys, measured instead of generated ones.
    pub keys: Option<Arc<KeySet>>,
}

/// The columns of the table, and which are numbers (right-aligned).
const COLUMNS: [(&str, bool); 11] = [
    ("filter", false),
    ("bits/item", true),
    ("theory", true),
    ("measured", true),
    ("interval", true),
    ("FN", true),
    ("insert", true),
    ("lookup+", true),
    ("lookup-", true),
    ("remove", true),
    ("verdict", false),
];

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
    let mut config = RunConfig {
        experiments: vec![Experiment::Accuracy, Experiment::Speed],
        accuracy_items: vec![request.items],
        accuracy_fpps: vec![request.fpp],
        speed_items: vec![request.items],
        speed_fpp: request.fpp,
        speed_repetitions: 3,
        speed_large_repetitions: 1,
        speed_large_items: 100_000_000,
        ..base
    };
    if let Some(keys) = &request.keys {
        (config, _) = config.with_keys(Arc::clone(keys));
    }
    let measured = measure(entries, &config, request.quiet)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} items at target FPP {:e} (seed {}); interval confidence {:.3}%",
        format_count(request.items),
        request.fpp,
        request.seed,
        measured.accuracy.first().map_or(0.0, |r| r.confidence) * 100.0
    );
    let _ = match &request.keys {
        Some(keys) => writeln!(
            out,
            "Keys: {keys}.\nThe FPP (\"measured\") is the share of the {} held-out keys each \
             filter answered present.\n",
            format_count(keys.held_out().len() as u64)
        ),
        None => writeln!(
            out,
            "Keys: generated (seeded u64 streams); the FPP over never-inserted keys.\n"
        ),
    };
    out.push_str(&table(&measured));
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

/// The table: one row per filter, a "(batched)" row below each filter with
/// a batch API, in columns.
fn table(measured: &Measurements) -> String {
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
    let mut rows = vec![
        COLUMNS
            .iter()
            .map(|(name, _)| (*name).to_owned())
            .collect::<Vec<_>>(),
    ];
    for row in &measured.accuracy {
        let [insert, positive, negative, remove] =
            timed.map(|ops| ns(&row.filter, ops, Mode::OneKey));
        rows.push(vec![
            label(&measured.entries, &row.filter),
            format!("{:.2}", row.bits_per_item),
            row.theoretical_fpp.map_or_else(|| "n/a".to_owned(), sci),
            sci(row.empirical_fpp),
            format!("[{}, {}]", sci(row.ci_low), sci(row.ci_high)),
            row.false_negatives.to_string(),
            insert,
            positive,
            negative,
            remove,
            row.verdict.to_string(),
        ]);
        if speed
            .iter()
            .any(|s| s.filter == row.filter && s.mode == Mode::Batched)
        {
            let [insert, positive, negative, _] =
                timed.map(|ops| ns(&row.filter, ops, Mode::Batched));
            let mut batched = vec!["  (batched)".to_owned()];
            batched.extend(std::iter::repeat_n(String::new(), 5));
            batched.extend([insert, positive, negative, "-".to_owned()]);
            rows.push(batched);
        }
    }
    let right: Vec<bool> = COLUMNS.iter().map(|&(_, number)| number).collect();
    columns(&rows, &right)
}
