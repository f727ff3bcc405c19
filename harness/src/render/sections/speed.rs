//! The speed section: ns per operation for each filter and size, one
//! table per operation. Every filter has a row of one-key figures; a
//! filter with a batch API has a second row, "(batched)", right below it.

use filterlab_peers::Mode;

use crate::experiments::measurements::Measurements;
use crate::experiments::speed::{Operation, SpeedResults, SpeedRow};
use crate::render::guide::anchor;
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
         \"(batched)\"; the peers offer no batch API. Removal is one key at a time. The \
         machine is shared, so differences under about 1.5× between runs are noise; the min \
         and max of the repetitions are in speed.csv (column `mode`). The same operations \
         counted in instructions and simulated cache misses, free of that noise: \
         [{COUNTS_HEADING}](#{}).",
        measured.config.speed_fpp,
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
    section.finish(&speed.notes)
}
