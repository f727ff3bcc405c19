//! The growth section: per filter that grows and target, its FPP against
//! its bound and the target at every doubling, its memory against a Bloom
//! filter sized for the items held, and its lookup times.

use crate::experiments::growth::{GrowthResults, GrowthRow};
use crate::experiments::measurements::Measurements;
use crate::render::section::{Section, rows_per_filter};
use crate::render::table::header;
use crate::text::{format_count, sci};

/// The growth section of the README.
pub fn growth_section(measured: &Measurements, growth: &GrowthResults) -> String {
    let config = &measured.config;
    let mut section = Section::new("Growth (filters that grow)");
    section.paragraph(format_args!(
        "Each filter that grows, built for {} items at P, fed keys up to {} and measured at every \
         doubling: the FPP over fresh never-inserted keys (Wilson interval, Bonferroni over every \
         point), its theory for the keys it holds, memory per item against a `BloomFilter` sized \
         for them at P, and one-key lookups (one thread, no other filter running). The gate holds \
         filterlab filters to 0 false negatives and a measured FPP never above P beyond its \
         interval at every point; one with an exact theory (the scalable Bloom filter's compound \
         formula) to that formula at its actual fill inside every interval; one whose theory is a \
         bound (the grown cuckoo filter's compound a-priori FPP, at most P) to a measured FPP \
         never above that bound beyond the interval.",
        format_count(config.growth_initial),
        format_count(config.growth_final)
    ));
    for &p in &config.growth_fpps {
        let body = rows_per_filter(
            &measured.entries,
            &growth.rows,
            |r: &GrowthRow, filter| r.at.filter == filter && r.at.target_fpp == p,
            |mine| {
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
            },
        );
        section.paragraph(format_args!("P = {p:e}:"));
        section.table(
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
        );
    }
    section.finish(&growth.notes)
}
