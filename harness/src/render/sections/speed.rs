//! The speed section: ns per operation for each filter and size, one
//! table per operation. Every filter has a row of one-key figures; a
//! filter with a batch API has a second row, "(batched)", right below it.

use filterlab_peers::Mode;

use crate::experiments::measurements::Measurements;
use crate::experiments::speed::{Operation, SpeedResults, SpeedRow, insert_threads};
use crate::render::evidence::label;
use crate::render::guide::anchor;
use crate::render::pick::{EXACT_TIE, Interval};
use crate::render::section::Section;
use crate::render::sections::counts::COUNTS_HEADING;
use crate::text::format_count;

/// The operations of each table, and its title.
const TABLES: [(&str, &[Operation]); 5] = [
    (
        "Insert (build for static filters)",
        &[Operation::Insert, Operation::Build],
    ),
    (
        "Insert from all cores into one shared filter (wall-clock per key)",
        &[Operation::InsertConcurrent],
    ),
    ("Positive lookup", &[Operation::LookupPositive]),
    ("Negative lookup", &[Operation::LookupNegative]),
    ("Remove", &[Operation::Remove]),
];

/// The speed section of the README.
pub fn speed_section(measured: &Measurements, speed: &SpeedResults) -> String {
    let mut section = Section::new("Speed");
    section.paragraph(format_args!(
        "Median ns per operation over the repetitions (filters sized for n at p = {}; \
         u64 keys, each filter hashing with its own hasher; one thread unless stated; insert \
         times fill an empty filter to n; static filters report their construction per key as \
         `build`). Every filter is timed **one key at a time** (for filterlab's filters \
         `insert_hash` / `contains_hash` after hashing each key, for the peers their own API): \
         the rows with a plain name compare like with like. filterlab's filters are also timed \
         through their **batch API** (`insert_hashes` / `contains_hashes`: 256 keys hashed, \
         then probed with the memory of the keys ahead prefetched), in the rows marked \
         \"(batched)\"; the peers offer no batch API. Removal is one key at a time. Every \
         single-thread figure of this report is timed one way: the timing thread's CPU time \
         (what other processes take from it on a shared machine is left out; the concurrent \
         inserts are wall time), lookups after an untimed warm-up pass, over keys read from \
         memory. The one-key negative lookups at p = {} are the sweep's wherever it measured \
         that n (the figures of the [skyline and Pareto charts](#summary-charts)); this \
         experiment times them too, as a check: {}. The min and max of the repetitions are in speed.csv. The same operations \
         counted in instructions and simulated cache misses, free of any noise: \
         [{COUNTS_HEADING}](#{}).",
        measured.config.speed_fpp,
        measured.config.speed_fpp,
        measured.agreement.as_ref().map_or_else(
            || "the sweep did not run".to_owned(),
            crate::experiments::timing::Agreement::describe
        ),
        anchor(COUNTS_HEADING)
    ));
    let mut sizes: Vec<u64> = speed.rows.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for (title, ops) in TABLES {
        let rows: Vec<&SpeedRow> = speed.rows.iter().filter(|r| ops.contains(&r.op)).collect();
        if rows.is_empty() {
            continue;
        }
        section.paragraph(format_args!("**{title}**, ns/op:"));
        let mut header = vec!["filter".to_owned()];
        header.extend(sizes.iter().map(|&n| format!("n = {}", format_count(n))));
        let mut body: Vec<Vec<String>> = Vec::new();
        for entry in &measured.entries {
            for mode in Mode::ALL {
                let mine: Vec<&&SpeedRow> = rows
                    .iter()
                    .filter(|r| r.filter == entry.name && r.mode == mode)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                let mut cells = vec![match mode {
                    Mode::OneKey => entry.display_name(),
                    Mode::Batched => format!("{} (batched)", entry.display_name()),
                }];
                cells.extend(sizes.iter().map(|&n| {
                    mine.iter()
                        .find(|r| r.n == n)
                        .map_or_else(String::new, |r| format!("{:.1}", r.ns_per_op))
                }));
                body.push(cells);
            }
        }
        section.table(&header, &body);
    }
    let inverted = inversions(measured, speed);
    if !inverted.is_empty() {
        section.paragraph(
            "**A smaller filter measured slower than a larger one** (beyond both figures' \
             intervals), and why:",
        );
        let lines: Vec<String> = inverted.iter().map(|line| format!("- {line}")).collect();
        section.push_str(&format!("{}\n\n", lines.join("\n")));
    }
    section.finish(&speed.notes)
}

/// Run-to-run differences up to this factor are the machine's noise: two
/// runs of the quick sweep here had 95% of their cells within 14% of each
/// other (the intervals of [`Interval::spread`] only hold a run's rounds).
const RUN_TO_RUN: f64 = 1.15;

/// Each filter, operation and mode whose figure at a smaller n is slower,
/// beyond both intervals, than at a larger n, with why: the filter more
/// loaded at the smaller n (fewer bits per item in the sweep at the speed
/// p), the fixed cost of starting threads (concurrent inserts, wall
/// time), or a difference within the run-to-run noise; else said
/// unexplained.
pub fn inversions(measured: &Measurements, speed: &SpeedResults) -> Vec<String> {
    let bits = |filter: &str, n: u64| {
        measured.sweep.as_ref().and_then(|sweep| {
            sweep
                .rows
                .iter()
                .find(|r| {
                    r.filter == filter && r.n == n && r.target_fpp == measured.config.speed_fpp
                })
                .map(|r| r.bits_per_item)
        })
    };
    let interval = |r: &SpeedRow| Interval::spread(r.ns_per_op, r.min_ns_per_op, r.max_ns_per_op);
    let mut lines = Vec::new();
    for small in &speed.rows {
        for large in speed.rows.iter().filter(|r| {
            r.filter == small.filter && r.op == small.op && r.mode == small.mode && r.n > small.n
        }) {
            if !interval(large).beats(&interval(small)) {
                continue;
            }
            let ratio = small.ns_per_op / large.ns_per_op;
            let why = match (bits(&small.filter, small.n), bits(&small.filter, large.n)) {
                _ if small.op == Operation::InsertConcurrent => format!(
                    "wall time, and starting {} threads (and waiting for the cores on a shared \
                     machine) is shared by only {} keys",
                    insert_threads(),
                    format_count(small.n)
                ),
                (Some(a), Some(b)) if a < b / EXACT_TIE => format!(
                    "it is more loaded at n = {} ({a:.2} bits/item against {b:.2})",
                    format_count(small.n)
                ),
                _ if ratio <= RUN_TO_RUN => {
                    format!("{ratio:.2}×, within this machine's run-to-run noise ({RUN_TO_RUN}×)")
                }
                _ => "unexplained (the same bits per item at both sizes)".to_owned(),
            };
            let mode = match small.mode {
                Mode::OneKey => "",
                Mode::Batched => " (batched)",
            };
            lines.push(format!(
                "{}{mode}, {}: {:.1} ns at n = {}, {:.1} at n = {}: {why}.",
                label(&measured.entries, &small.filter),
                operation_words(small.op),
                small.ns_per_op,
                format_count(small.n),
                large.ns_per_op,
                format_count(large.n)
            ));
        }
    }
    lines
}

/// How an operation reads in a sentence.
fn operation_words(op: Operation) -> &'static str {
    match op {
        Operation::Insert => "insert",
        Operation::InsertConcurrent => "insert from all cores",
        Operation::Build => "build",
        Operation::LookupPositive => "positive lookup",
        Operation::LookupNegative => "negative lookup",
        Operation::Remove => "remove",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Preset, RunConfig};
    use crate::experiments::measurements::made_up::{speed_row, sweep_row};
    use crate::experiments::sweep::SweepResults;

    /// A smaller filter slower than a larger one beyond both intervals is
    /// listed with why (more loaded there, when its bits per item say so),
    /// or as unexplained; within the intervals it is not listed.
    #[test]
    fn a_smaller_filter_slower_than_a_larger_one_is_explained_or_flagged() {
        let negative = Operation::LookupNegative;
        let speed = SpeedResults {
            rows: vec![
                speed_row("loaded", 10_000, negative, 35.0),
                speed_row("loaded", 1_000_000, negative, 20.0),
                speed_row("odd", 10_000, negative, 40.0),
                speed_row("odd", 1_000_000, negative, 20.0),
                speed_row("fine", 10_000, negative, 10.5),
                speed_row("fine", 1_000_000, negative, 10.0),
            ],
            builds: Vec::new(),
            notes: Vec::new(),
        };
        let mut bits = vec![
            sweep_row("loaded", 10_000, 0.01, 35.0),
            sweep_row("loaded", 1_000_000, 0.01, 20.0),
        ];
        bits[0].bits_per_item = 14.96;
        bits[1].bits_per_item = 19.14;
        let measured = Measurements {
            entries: Vec::new(),
            config: RunConfig::preset(Preset::Tiny, 1, 1),
            accuracy: Vec::new(),
            space: Vec::new(),
            speed: None,
            capacity: None,
            churn: None,
            growth: None,
            sweep: Some(SweepResults {
                rows: bits,
                notes: Vec::new(),
            }),
            redis: None,
            seconds: Vec::new(),
            agreement: None,
        };
        let lines = inversions(&measured, &speed);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[0],
            "loaded, negative lookup: 35.0 ns at n = 10^4, 20.0 at n = 10^6: it is more loaded \
             at n = 10^4 (14.96 bits/item against 19.14)."
        );
        assert!(lines[1].starts_with("odd, negative lookup") && lines[1].contains("unexplained"));
    }
}
