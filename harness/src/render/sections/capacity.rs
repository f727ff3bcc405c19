//! The past-capacity section: FPP, memory, refusals and losses at 100%,
//! 200% and 300% of the configured capacity.

use std::fmt::Write as _;

use crate::experiments::capacity::{CapacityResults, CapacityRow};
use crate::experiments::measurements::Measurements;
use crate::render::table::{bullets, header, table};
use crate::text::{format_count, sci};

/// The past-capacity section of the README.
pub fn capacity_section(measured: &Measurements, capacity: &CapacityResults) -> String {
    let mut out = String::new();
    let config = &measured.config;
    let _ = writeln!(out, "## Past capacity\n");
    let _ = writeln!(
        out,
        "Each filter configured for {} items at p = {}, then offered up to 3× as many keys. \
         FPP over {} never-inserted keys; false negatives among the keys it accepted. A filter \
         that refuses keys when full says so and keeps what it holds (refused, 0 false \
         negatives); one that makes room by dropping stored keys shows them as false negatives \
         (capacity_refused.svg plots both per key offered).\n",
        format_count(config.capacity_items),
        config.capacity_fpp,
        format_count(config.capacity_queries)
    );
    let header = header(&[
        "filter",
        "FPP at 100%",
        "FPP at 200%",
        "FPP at 300%",
        "memory at 300% / at 100%",
        "refused",
        "false negatives",
    ]);
    let body: Vec<Vec<String>> = measured
        .entries
        .iter()
        .filter_map(|entry| {
            let mine: Vec<&CapacityRow> = capacity
                .rows
                .iter()
                .filter(|r| r.filter == entry.name)
                .collect();
            let at = |load: f64| {
                mine.iter()
                    .min_by(|a, b| (a.load - load).abs().total_cmp(&(b.load - load).abs()))
                    .copied()
            };
            let (full, double, triple) = (at(1.0)?, at(2.0)?, at(3.0)?);
            Some(vec![
                entry.name.to_owned(),
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
        })
        .collect();
    out.push_str(&table(&header, &body));
    out.push('\n');
    out.push_str(&bullets(&capacity.notes));
    out
}
