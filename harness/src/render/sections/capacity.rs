//! The past-capacity section: FPP, memory, refusals and losses at 100%,
//! 200% and 300% of the configured capacity.

use crate::experiments::capacity::{CapacityResults, CapacityRow};
use crate::experiments::measurements::Measurements;
use crate::render::section::{Section, rows_per_filter};
use crate::render::table::header;
use crate::text::{format_count, sci};

/// The past-capacity section of the README.
pub fn capacity_section(measured: &Measurements, capacity: &CapacityResults) -> String {
    let config = &measured.config;
    let mut section = Section::new("Past capacity");
    section.paragraph(format_args!(
        "Each filter configured for {} items at p = {}, then offered up to 3× as many keys. \
         FPP over {} never-inserted keys; false negatives among the keys it accepted. A filter \
         that refuses keys when full says so and keeps what it holds (refused, 0 false \
         negatives); one that makes room by dropping stored keys shows them as false negatives \
         (capacity_refused.svg plots both per key offered).",
        format_count(config.capacity_items),
        config.capacity_fpp,
        format_count(config.capacity_queries)
    ));
    let header = header(&[
        "filter",
        "FPP at 100%",
        "FPP at 200%",
        "FPP at 300%",
        "memory at 300% / at 100%",
        "refused",
        "false negatives",
    ]);
    let body = rows_per_filter(
        &measured.entries,
        &capacity.rows,
        |r: &CapacityRow, filter| r.filter == filter,
        |mine| {
            let at = |load: f64| {
                mine.iter()
                    .min_by(|a, b| (a.load - load).abs().total_cmp(&(b.load - load).abs()))
                    .copied()
            };
            let (full, double, triple) = (at(1.0)?, at(2.0)?, at(3.0)?);
            Some(vec![
                sci(full.empirical_fpp),
                sci(double.empirical_fpp),
                sci(triple.empirical_fpp),
                format!(
                    "{:.2}×",
                    triple.memory_bytes as f64 / full.memory_bytes.max(1) as f64
                ),
                triple.refused.to_string(),
                triple.false_negatives.to_string(),
            ])
        },
    );
    section.table(&header, &body);
    section.finish(&capacity.notes)
}
