//! The charts of a bench run: estimated cycles per operation against the
//! filter's size, drawn as the report's speed figures are (one figure per
//! operation, small multiples by family, each filter in its report colour
//! and marker, batched dashed), so that counts and times read alike; the
//! titles and axes say they are counts, not time.

use std::path::Path;

use crate::bench::counts::CountRow;
use crate::error::Error;
use crate::registry::Entry;
use crate::render::charts::{FigureFile, draw_all, operation_figures};
use crate::render::plot::{Axis, Point};

/// The figures of `rows` (files `bench_{operation}.svg`).
pub fn figures(rows: &[CountRow], entries: &[Entry]) -> Vec<FigureFile> {
    operation_figures(
        entries,
        (
            "bench",
            &Axis::new("est. cycles per operation (Valgrind)", true),
        ),
        &|filter, ops, mode| {
            let mut points: Vec<Point> = rows
                .iter()
                .filter(|r| r.filter == filter && r.mode == mode && ops.contains(&r.op))
                .map(|r| Point::at(r.items as f64, r.est_cycles_per_op))
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            points
        },
        &|what| {
            format!(
                "{what}: estimated cycles per operation counted under Valgrind (counts, not time)"
            )
        },
    )
}

/// Draws the figures of `rows` into `dir`.
///
/// # Errors
///
/// When a file cannot be written.
pub fn draw(rows: &[CountRow], entries: &[Entry], dir: &Path) -> Result<(), Error> {
    draw_all(&figures(rows, entries), dir)
}

#[cfg(test)]
mod tests {
    use filterlab_peers::Mode;

    use super::*;
    use crate::bench::callgrind::Events;
    use crate::bench::case::Size;
    use crate::experiments::speed::Operation;
    use crate::registry::registry;

    #[test]
    fn one_figure_per_operation_counted_with_lines_in_size_order() {
        let entries = registry();
        let row = |size: Size, op, mode| {
            CountRow::new(
                &entries[0],
                op,
                mode,
                size,
                10,
                Events::from_array([1000 * size.items(), 0, 0, 0, 0, 0, 0, 0, 0]),
            )
        };
        let rows = [
            row(Size::ExceedsLlc, Operation::Insert, Mode::OneKey),
            row(Size::InCache, Operation::Insert, Mode::OneKey),
            row(Size::InCache, Operation::Insert, Mode::Batched),
            row(Size::InCache, Operation::LookupNegative, Mode::OneKey),
        ];
        let figures = figures(&rows, &entries);
        let files: Vec<&str> = figures.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(files, ["bench_insert.svg", "bench_lookup_negative.svg"]);
        let insert = figures[0].figure.panels[0].series();
        assert_eq!(insert.len(), 2, "{insert:?}");
        let xs: Vec<f64> = insert[0].points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [1e5, 2e6]);
        assert!(insert[1].name.ends_with("(batched)"));
        assert!(figures[0].figure.title.contains("not time"));
    }
}
