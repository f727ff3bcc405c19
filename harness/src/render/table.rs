//! Markdown tables.

use std::fmt::Write as _;

/// A Markdown table with `header` and one line per row of `rows`.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header.iter().map(|_| "---|").collect::<String>()
    );
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

/// Header cells from string literals.
pub fn header(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|&cell| cell.to_owned()).collect()
}

/// A Markdown list, one item per line, then a blank line; nothing when empty.
pub fn bullets(items: &[String]) -> String {
    let mut out = String::new();
    for item in items {
        let _ = writeln!(out, "- {item}");
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_a_rule_under_the_header() {
        let text = table(&header(&["a", "b"]), &[vec!["1".into(), "2".into()]]);
        assert_eq!(text, "| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert_eq!(bullets(&[]), "");
        assert_eq!(bullets(&["x".into()]), "- x\n\n");
    }
}
