//! One builder for the README's measurement sections, so that each section
//! says only what it measured: heading, introduction, one table row per
//! filter, notes.

use std::fmt::{Display, Write as _};

use crate::registry::Entry;
use crate::render::table::{bullets, table};

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
