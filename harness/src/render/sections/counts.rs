//! The committed instruction counts (`filterlab bench`'s baseline) as a
//! README section: per operation and size, every filter and peer counted,
//! so that "faster than a peer" can be read in instructions and cache
//! misses free of the machine's noise. The report does not count them (that
//! takes Valgrind and half an hour); it shows the committed file and says
//! which it is, or that there is none.

use std::path::{Path, PathBuf};

use filterlab_peers::Mode;

use crate::bench::baseline::{Setup, read_rows};
use crate::bench::case::Size;
use crate::bench::counts::CountRow;
use crate::bench::table::per_op;
use crate::experiments::speed::Operation;
use crate::registry::Entry;
use crate::render::evidence::label;
use crate::render::section::Section;
use crate::render::table::header;
use crate::text::format_count;

/// The section's heading (without the `## `).
pub const COUNTS_HEADING: &str = "Instruction counts (Valgrind; counts, not time)";

/// The operations of each table, in order, with its title (a static
/// filter's build, per key, beside the inserts, as in the speed section).
const OPERATIONS: [(&[Operation], &str); 4] = [
    (
        &[Operation::Insert, Operation::Build],
        "Insert (build for static filters)",
    ),
    (&[Operation::LookupPositive], "Positive lookup"),
    (&[Operation::LookupNegative], "Negative lookup"),
    (&[Operation::Remove], "Remove"),
];

/// The committed counts a report shows, or why it has none.
pub struct CommittedCounts {
    path: PathBuf,
    read: Result<(String, Vec<CountRow>), String>,
}

impl CommittedCounts {
    /// The counts in `path` (a file `filterlab bench --save` wrote); a
    /// missing or unreadable file is kept as the reason, for the report to
    /// say.
    pub fn read(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            read: read_rows(path).map_err(|err| err.to_string()),
        }
    }

    /// The committed one-key negative lookup of `filter` in the size class
    /// nearest `items` (on a log scale): that class's items, instructions
    /// and estimated cycles per lookup; what breaks a tie of timings.
    pub fn negative_lookup(&self, filter: &str, items: u64) -> Option<(u64, f64, f64)> {
        let (_, rows) = self.read.as_ref().ok()?;
        let distance = |row: &CountRow| ((row.items as f64).ln() - (items as f64).ln()).abs();
        rows.iter()
            .filter(|r| {
                r.filter == filter && r.op == Operation::LookupNegative && r.mode == Mode::OneKey
            })
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
            .map(|r| (r.items, r.instructions_per_op, r.est_cycles_per_op))
    }
}

/// The section: the setup the counts were made with, the formula of the
/// estimated cycles, then one table per operation and size, filters and
/// peers ranked by estimated cycles.
pub fn counts_section(counts: &CommittedCounts, entries: &[Entry]) -> String {
    let mut section = Section::new(COUNTS_HEADING);
    let path = counts.path.display();
    let (header_lines, rows) = match &counts.read {
        Ok((header_lines, rows)) if !rows.is_empty() => (header_lines, rows),
        Ok(_) => {
            section.paragraph(format_args!(
                "The committed counts in `{path}` hold no rows; `filterlab bench --save` counts \
                 them (it needs Valgrind)."
            ));
            return section.finish(&[]);
        }
        Err(reason) => {
            section.paragraph(format_args!(
                "No committed instruction counts are shown: this report looked for `{path}` \
                 (relative to where it ran) and could not read it ({reason}). `filterlab bench \
                 --save` counts them under Valgrind; the file is committed in the repository's \
                 reports/."
            ));
            return section.finish(&[]);
        }
    };
    let setup = Setup::parse(header_lines);
    let formula = header_lines
        .lines()
        .find_map(|line| line.strip_prefix("# est. cycles"))
        .map_or_else(
            || "not recorded in the file".to_owned(),
            |rest| format!("est. cycles{rest}"),
        );
    section.paragraph(format_args!(
        "**These are counts, not times**: instructions and simulated cache misses per operation, \
         counted by Valgrind's callgrind with `filterlab bench` and committed in `{path}`; this \
         run did not count them. They are the same on every run and machine, so they show \
         differences that timings on a shared machine hide, but they weigh every instruction \
         alike and see no memory-level parallelism (batched lookups gain in time more than in \
         counts). Estimated cycles: {formula}. Made with {} and {}; build: {}; simulated caches \
         `{}` (size in bytes, ways, line bytes); CPU features seen under Valgrind: {}. Sizes: \
         {} items (in-cache: every filter's array fits in the simulated last level) and {} \
         (exceeds-llc: every array exceeds it). Ranked by estimated cycles; rows marked \
         \"varies\" (a filter with random evictions) differ between runs.",
        setup.valgrind,
        setup.rustc,
        setup.build,
        setup.cache,
        setup.features,
        format_count(Size::InCache.items()),
        format_count(Size::ExceedsLlc.items()),
    ));
    let head = header(&[
        "filter",
        "instructions/op",
        "L1 misses/op",
        "LL misses/op",
        "est. cycles/op",
    ]);
    for (ops, title) in OPERATIONS {
        for size in Size::MEASURED {
            let mut mine: Vec<&CountRow> = rows
                .iter()
                .filter(|r| ops.contains(&r.op) && r.size == size)
                .collect();
            if mine.is_empty() {
                continue;
            }
            mine.sort_by(|a, b| a.est_cycles_per_op.total_cmp(&b.est_cycles_per_op));
            let body: Vec<Vec<String>> = mine
                .iter()
                .map(|row| {
                    let mut name = label(entries, &row.filter);
                    if row.op == Operation::Build {
                        name.push_str(" (build)");
                    }
                    if row.mode == Mode::Batched {
                        name.push_str(" (batched)");
                    }
                    if !row.gated {
                        name.push_str(" (varies)");
                    }
                    vec![
                        name,
                        per_op(row.instructions_per_op),
                        per_op(row.l1_misses_per_op),
                        per_op(row.ll_misses_per_op),
                        per_op(row.est_cycles_per_op),
                    ]
                })
                .collect();
            section.paragraph(format_args!(
                "**{title}**, n = {} ({}), counts per operation:",
                format_count(size.items()),
                size.label()
            ));
            section.table(&head, &body);
        }
    }
    section.finish(&[])
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::bench::baseline::write_rows;
    use crate::bench::callgrind::Events;
    use crate::registry::registry;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "filterlab-counts-{name}-{}.csv",
            std::process::id()
        ))
    }

    #[test]
    fn the_committed_counts_show_as_counts_with_their_setup_ranked_by_cycles() {
        let entries = registry();
        let peer = entries.iter().find(|e| !e.is_filterlab()).unwrap();
        let row = |entry: &Entry, mode, ir: u64| {
            CountRow::new(
                entry,
                Operation::LookupNegative,
                mode,
                Size::InCache,
                10,
                Events::from_array([ir, 0, 0, 0, 0, 0, 0, 0, 0]),
            )
        };
        let xorf = entries
            .iter()
            .find(|e| e.name == "xorf-BinaryFuse8")
            .unwrap();
        let mut build = row(xorf, Mode::OneKey, 3000);
        build.op = Operation::Build;
        let rows = [
            row(&entries[0], Mode::OneKey, 900),
            row(&entries[0], Mode::Batched, 500),
            row(peer, Mode::OneKey, 700),
            build,
        ];
        let path = temp("found");
        let setup = Setup::current("valgrind-3.19.0".into(), "avx2".into());
        write_rows(&path, &setup.header(), &rows).unwrap();
        let text = counts_section(&CommittedCounts::read(&path), &entries);
        fs::remove_file(&path).unwrap();
        assert!(
            text.starts_with(&format!("## {COUNTS_HEADING}\n")),
            "{text}"
        );
        assert!(text.contains("counts, not times"), "{text}");
        assert!(text.contains("valgrind-3.19.0"), "{text}");
        assert!(text.contains("--LL=1048576,16,64"), "{text}");
        assert!(text.contains("35 × LL misses"), "{text}");
        assert!(text.contains("**Negative lookup**, n = "), "{text}");
        // A static filter's build is counted with the inserts.
        let built = format!("| {} (build) | 300 |", xorf.display_name());
        assert!(text.contains(&built), "{text}");
        // Ranked by estimated cycles: batched (50), the peer (70), one key (90).
        let batched = format!("| {} (batched) | 50.0 |", entries[0].display_name());
        let peer_row = format!("| {} | 70.0 |", peer.display_name());
        let one_key = format!("| {} | 90.0 |", entries[0].display_name());
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{needle}: {text}"))
        };
        assert!(at(&batched) < at(&peer_row) && at(&peer_row) < at(&one_key));
    }

    #[test]
    fn a_missing_file_is_said_not_failed() {
        let path = temp("missing");
        let text = counts_section(&CommittedCounts::read(&path), &registry());
        assert!(
            text.starts_with(&format!("## {COUNTS_HEADING}\n")),
            "{text}"
        );
        assert!(text.contains("No committed instruction counts"), "{text}");
        assert!(text.contains(&path.display().to_string()), "{text}");
    }
}
