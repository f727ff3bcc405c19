//! The tables of `filterlab bench`: the same rows as aligned text for a
//! terminal and as Markdown for a CI job summary.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::bench::case::{mode_label, op_label};
use crate::bench::compare::{Change, Metric};
use crate::bench::counts::{CountRow, RowKey};
use crate::bench::sanity::SanityRow;
use crate::bench::wall::WallRow;
use crate::render::table::table;

/// A table: a header and rows of cells; the first `text_columns` columns
/// are words (left-aligned), the rest numbers (right-aligned).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Cells, row by row.
    pub rows: Vec<Vec<String>>,
    /// Leading columns of words.
    pub text_columns: usize,
}

impl Table {
    /// Aligned plain text.
    pub fn text(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (index, (cell, &width)) in cells.iter().zip(&widths).enumerate() {
                let pad = " ".repeat(width - cell.chars().count());
                if index > 0 {
                    out.push_str("  ");
                }
                if index < self.text_columns {
                    let _ = write!(out, "{cell}{pad}");
                } else {
                    let _ = write!(out, "{pad}{cell}");
                }
            }
            out.trim_end().to_owned()
        };
        let mut out = line(&self.header);
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }

    /// Markdown.
    pub fn markdown(&self) -> String {
        table(&self.header, &self.rows)
    }
}

/// A count per operation with the precision it deserves.
pub fn per_op(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

/// The counts, one row per (size, filter, operation, mode); with a
/// baseline, the change of instructions and estimated cycles beside them.
pub fn counts_table(rows: &[CountRow], changes: Option<&[Change]>) -> Table {
    let mut header: Vec<String> = [
        "size",
        "filter",
        "operation",
        "mode",
        "instructions/op",
        "L1 misses/op",
        "LL misses/op",
        "est. cycles/op",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut by_key: BTreeMap<(RowKey, Metric), f64> = BTreeMap::new();
    if let Some(changes) = changes {
        header.extend(["Δ instructions".to_owned(), "Δ est. cycles".to_owned()]);
        for change in changes {
            by_key.insert((change.key.clone(), change.metric), change.percent());
        }
    }
    let body = rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                row.size.label().to_owned(),
                if row.gated {
                    row.filter.clone()
                } else {
                    format!("{} (not gated)", row.filter)
                },
                op_label(row.op).to_owned(),
                mode_label(row.mode).to_owned(),
                per_op(row.instructions_per_op),
                per_op(row.l1_misses_per_op),
                per_op(row.ll_misses_per_op),
                per_op(row.est_cycles_per_op),
            ];
            if changes.is_some() {
                for metric in [Metric::Instructions, Metric::EstCycles] {
                    cells.push(
                        by_key
                            .get(&(row.key(), metric))
                            .map_or_else(|| "=".to_owned(), |p| format!("{p:+.2}%")),
                    );
                }
            }
            cells
        })
        .collect();
    Table {
        header,
        rows: body,
        text_columns: 4,
    }
}

/// `15 rounds`, or `10 runs of 15 rounds`.
fn runs_label(row: &WallRow) -> String {
    if row.runs > 1 {
        format!("{} runs of {} rounds", row.runs, row.rounds)
    } else {
        format!("{} rounds", row.rounds)
    }
}

/// The wall-clock ratios; with a baseline, its range beside them.
pub fn wall_table(rows: &[WallRow], baseline: &[WallRow]) -> Table {
    let mut header: Vec<String> = [
        "size",
        "filter",
        "operation",
        "mode",
        "peer",
        "ratio",
        "interval",
    ]
    .map(str::to_owned)
    .to_vec();
    if !baseline.is_empty() {
        header.push("baseline".to_owned());
    }
    let body = rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                row.size.label().to_owned(),
                row.filter.clone(),
                op_label(row.op).to_owned(),
                mode_label(row.mode).to_owned(),
                row.peer.clone(),
                format!("{:.3}", row.ratio),
                format!(
                    "[{:.3}, {:.3}] ({:.0}%, {})",
                    row.ratio_low,
                    row.ratio_high,
                    100.0 * row.coverage,
                    runs_label(row)
                ),
            ];
            if !baseline.is_empty() {
                cells.push(baseline.iter().find(|b| b.key() == row.key()).map_or_else(
                    || "-".to_owned(),
                    |b| {
                        format!(
                            "{:.3} [{:.3}, {:.3}] ({})",
                            b.ratio,
                            b.ratio_low,
                            b.ratio_high,
                            runs_label(b)
                        )
                    },
                ));
            }
            cells
        })
        .collect();
    Table {
        header,
        rows: body,
        text_columns: 5,
    }
}

/// Counts beside times.
pub fn sanity_table(rows: &[SanityRow]) -> Table {
    Table {
        header: [
            "filter",
            "operation",
            "mode",
            "instructions/op",
            "est. cycles/op",
            "ns/op (median)",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows: rows
            .iter()
            .map(|row| {
                vec![
                    row.filter.clone(),
                    op_label(row.op).to_owned(),
                    mode_label(row.mode).to_owned(),
                    per_op(row.instructions_per_op),
                    per_op(row.est_cycles_per_op),
                    format!("{:.1}", row.ns_per_op),
                ]
            })
            .collect(),
        text_columns: 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_markdown_hold_the_same_cells() {
        let table = Table {
            header: vec!["filter".into(), "n".into()],
            rows: vec![
                vec!["a".into(), "1".into()],
                vec!["bcd".into(), "100".into()],
            ],
            text_columns: 1,
        };
        assert_eq!(table.text(), "filter    n\na         1\nbcd     100\n");
        assert_eq!(
            table.markdown(),
            "| filter | n |\n|---|---|\n| a | 1 |\n| bcd | 100 |\n"
        );
        assert_eq!(per_op(1234.5), "1234");
        assert_eq!(per_op(12.34), "12.3");
        assert_eq!(per_op(0.01234), "0.012");
    }
}
