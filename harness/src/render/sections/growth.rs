//! The growth section: per filter that grows and target, its FPP against
//! its bound and the target at every doubling, its memory against a Bloom
//! filter sized for the items held, and its lookup times.

use std::fmt::Write as _;

use crate::experiments::growth::{GrowthResults, GrowthRow};
use crate::experiments::measurements::Measurements;
use crate::render::table::{bullets, header, table};
use crate::text::{format_count, sci};

/// The growth section of the README.
pub fn growth_section(measured: &Measurements, growth: &GrowthResults) -> String {
    let config = &measured.config;
    let mut out = String::new();
    let _ = writeln!(out, "## Growth (filters that grow)\n");
    let _ = writeln!(
        out,
        "Each filter that grows, built for {} items at P, fed keys up to {} and measured at every \
         doubling: the FPP over fresh never-inserted keys (Wilson interval, Bonferroni over every \
         point), its theory for the keys it holds, memory per item against a `BloomFilter` sized \
         for them at P, and one-key lookups (one thread, no other filter running). The gate holds \
         filterlab filters to 0 false negatives at every point; one with an exact theory (the \
         scalable Bloom filter's compound formula) to that formula at its actual fill inside every \
         interval and to a measured FPP never above P beyond it; one whose theory is a bound (the \
         grown cuckoo filter's compound a-priori FPP, which is above P by design: its sub-tables \
         keep the first one's fingerprint width) to a measured FPP never above that bound beyond \
         the interval.\n",
        format_count(config.growth_initial),
        format_count(config.growth_final)
    );
    for &p in &config.growth_fpps {
        let body: Vec<Vec<String>> = measured
            .entries
            .iter()
            .filter_map(|entry| {
                let mine: Vec<&GrowthRow> = growth
                    .rows
                    .iter()
                    .filter(|r| r.at.filter == entry.name && r.at.target_fpp == p)
                    .collect();
                let last = mine.last()?;
                let worst = mine
                    .iter()
                    .map(|r| r.sample.empirical_fpp)
                    .fold(0.0, f64::max);
                let above = mine.iter().filter(|r| r.above_target()).count();
                let inside = mine
                    .iter()
                    .filter(|r| r.sample.theory_inside() == Some(true))
                    .count();
                Some(vec![
                    entry.name.to_owned(),
                    format_count(last.at.items),
                    sci(last.sample.empirical_fpp),
                    last.sample
                        .theoretical_fpp
                        .map_or_else(|| "n/a".to_owned(), sci),
                    format!("{inside}/{} ({})", mine.len(), last.sample.theory),
                    format!("{} ({above} of {} above P)", sci(worst), mine.len()),
                    format!("{:.2}", last.at.bits_per_item),
                    format!("{:.2}", last.at.bloom_bits_per_item),
                    format!("{:.0} / {:.0}", last.at.positive_ns, last.at.negative_ns),
                    last.at.refused.to_string(),
                    last.at.false_negatives.to_string(),
                ])
            })
            .collect();
        let _ = writeln!(out, "P = {p:e}:\n");
        out.push_str(&table(
            &header(&[
                "filter",
                "items at the end",
                "FPP at the end",
                "theory at the end",
                "points with theory inside",
                "worst FPP at any point",
                "bits/item",
                "BloomFilter bits/item for those items",
                "lookup ns positive / negative",
                "refused",
                "false negatives",
            ]),
            &body,
        ));
        out.push('\n');
    }
    out.push_str(&bullets(&growth.notes));
    out
}
