//! The churn section: per filter that deletes, how its FPP and its live
//! keys fared over 10× its capacity of sliding-window steps, and what
//! removing never-inserted keys did to it.

use std::fmt::Write as _;

use crate::experiments::churn::{ChurnResults, ChurnRow};
use crate::experiments::measurements::Measurements;
use crate::registry::Entry;
use crate::render::evidence::label;
use crate::render::section::{Section, rows_per_filter};
use crate::render::table::{header, table};
use crate::text::{format_count, sci};

/// The churn section of the README.
pub fn churn_section(measured: &Measurements, churn: &ChurnResults) -> String {
    let config = &measured.config;
    let mut section = Section::new("Churn (filters that delete)");
    section.paragraph(format_args!(
        "Each filter that deletes, built for n = {} at p = {}, filled with n keys, then {}·n \
         sliding-window steps: remove the oldest live key, insert a new one. At {} points: the FPP \
         over {} fresh never-inserted keys (Wilson interval at the confidence in churn.csv, \
         Bonferroni over every point), the theory for the live keys, and the live keys reported \
         absent. The gate holds filterlab filters to 0 false negatives, 0 removals that find nothing, \
         and their state-conditional FPP (their own formula at the filter's actual state: one \
         instance varies around the a-priori theory by more than the query interval covers) \
         inside the interval at every point.",
        format_count(config.churn_items),
        config.churn_fpp,
        config.churn_span,
        config.churn_points + 1,
        format_count(config.churn_queries)
    ));
    let body = rows_per_filter(
        &measured.entries,
        &churn.rows,
        |r: &ChurnRow, filter| r.at.filter == filter,
        |mine| {
            let last = mine.last()?;
            let inside: Vec<bool> = mine.iter().filter_map(|r| r.sample.passes()).collect();
            let theory_inside = mine
                .iter()
                .filter(|r| r.sample.theory_inside() == Some(true))
                .count();
            Some(vec![
                format!("{:.0}×", last.at.churn),
                sci(last.sample.empirical_fpp),
                last.sample
                    .theoretical_fpp
                    .map_or_else(|| "n/a".to_owned(), sci),
                format!("{theory_inside}/{} ({})", mine.len(), last.sample.theory),
                if inside.is_empty() {
                    "not gated".to_owned()
                } else {
                    format!(
                        "{}/{} ({})",
                        inside.iter().filter(|&&b| b).count(),
                        inside.len(),
                        last.sample.gated_on.label()
                    )
                },
                mine.iter()
                    .map(|r| r.at.false_negatives)
                    .max()
                    .unwrap_or(0)
                    .to_string(),
                last.at.failed_removals.to_string(),
                last.at.refused.to_string(),
            ])
        },
    );
    section.table(
        &header(&[
            "filter",
            "churn",
            "FPP at the end",
            "theory at the end",
            "points with theory inside",
            "points with the gated FPP inside",
            "most live keys lost at a point",
            "removals that found nothing",
            "inserts refused",
        ]),
        &body,
    );
    section.push_str(&removals_table(&measured.entries, churn));
    section.finish(&churn.notes)
}

/// What removing never-inserted positive keys did to each filter.
fn removals_table(entries: &[Entry], churn: &ChurnResults) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Removing keys that were never inserted but test positive (each filter holding n keys; \
         only remove keys you inserted — this is what happens otherwise):\n"
    );
    let body: Vec<Vec<String>> = churn
        .bogus
        .iter()
        .map(|r| {
            vec![
                label(entries, &r.filter),
                format!(
                    "{} of {} scanned",
                    format_count(r.removed),
                    format_count(r.scanned)
                ),
                format_count(r.reported_removed),
                format_count(r.false_negatives),
                format!("{:.2}", r.false_negatives_per_removal),
            ]
        })
        .collect();
    out.push_str(&table(
        &header(&[
            "filter",
            "never-inserted positives removed",
            "removals reported done",
            "inserted keys lost",
            "lost per removal",
        ]),
        &body,
    ));
    out.push('\n');
    out
}
