//! One builder for the README's measurement sections, so that each section
//! says only what it measured: heading, introduction, one table row per
//! filter, notes.

use std::fmt::{Display, Write as _};

use crate::registry::Entry;
use crate::render::table::{bullets, table};

/// A table column: its heading, and how one row's facts fill its cell.
pub type Column<'f, R> = (&'static str, &'f dyn Fn(&R) -> String);

/// A README section under construction: `## title`, then paragraphs and
/// tables (each followed by a blank line), then the notes as a list.
pub struct Section(String);

impl Section {
    /// A section headed `## title`.
    pub fn new(title: &str) -> Self {
        Self(format!("## {title}\n\n"))
    }

    /// A paragraph, then a blank line.
    pub fn paragraph(&mut self, text: impl Display) {
        let _ = writeln!(self.0, "{text}\n");
    }

    /// Markdown already laid out (a sub-table, a list), as it is.
    pub fn push_str(&mut self, markdown: &str) {
        self.0.push_str(markdown);
    }

    /// A table, then a blank line.
    pub fn table(&mut self, header: &[String], body: &[Vec<String>]) {
        self.0.push_str(&table(header, body));
        self.0.push('\n');
    }

    /// A table laid out by column, each heading beside how its cell is
    /// filled so the two cannot drift apart: one line per item of `rows`,
    /// then a blank line.
    pub fn columns<R>(&mut self, rows: &[R], columns: &[Column<'_, R>]) {
        let header: Vec<String> = columns.iter().map(|&(h, _)| h.to_owned()).collect();
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|row| columns.iter().map(|(_, cell)| cell(row)).collect())
            .collect();
        self.table(&header, &body);
    }

    /// The finished section, `notes` as its closing list (none when empty).
    pub fn finish(mut self, notes: &[String]) -> String {
        self.0.push_str(&bullets(notes));
        self.0
    }
}

/// The body of a per-filter table: one row per registered filter that has
/// results, in registry order, starting with its name. `belongs` picks a
/// filter's results (in measurement order) out of `results`; `cells` turns
/// them into the rest of the row, or `None` to leave the filter out.
pub fn rows_per_filter<'r, R>(
    entries: &[Entry],
    results: &'r [R],
    belongs: impl Fn(&R, &str) -> bool,
    mut cells: impl FnMut(&[&'r R]) -> Option<Vec<String>>,
) -> Vec<Vec<String>> {
    entries
        .iter()
        .filter_map(|entry| {
            let mine: Vec<&R> = results.iter().filter(|r| belongs(r, entry.name)).collect();
            if mine.is_empty() {
                return None;
            }
            let mut row = vec![entry.display_name()];
            row.extend(cells(&mine)?);
            Some(row)
        })
        .collect()
}
