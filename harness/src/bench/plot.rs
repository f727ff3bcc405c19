//! The charts of a bench run: estimated cycles per operation against the
//! filter's size, one chart per operation and family of filters (at most
//! eight lines each), one key at a time.

use std::path::{Path, PathBuf};

use filterlab_peers::Mode;

use crate::bench::case::op_label;
use crate::bench::counts::CountRow;
use crate::error::Error;
use crate::experiments::speed::Operation;
use crate::registry::{Capability, Entry};
use crate::render::plot::{self, Chart, Series, Style};

/// A chart family: filters that serve the same need.
fn family(entry: &Entry) -> &'static str {
    if entry.has(Capability::Growth)
        || entry.has(Capability::StaticSet)
        || entry.name.starts_with("Scalable")
    {
        "growth_and_static"
    } else if entry.has(Capability::Deletes) {
        "deletes"
    } else {
        "bloom"
    }
}

/// Draws the charts of `rows` into `dir`; returns the files written.
///
/// # Errors
///
/// When a chart cannot be written.
pub fn draw(rows: &[CountRow], entries: &[Entry], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for op in [
        Operation::Insert,
        Operation::LookupPositive,
        Operation::LookupNegative,
    ] {
        for name in ["bloom", "deletes", "growth_and_static"] {
            let series: Vec<Series> = entries
                .iter()
                .enumerate()
                .filter(|(_, entry)| family(entry) == name)
                .filter_map(|(index, entry)| {
                    let mut points: Vec<(f64, f64)> = rows
                        .iter()
                        .filter(|r| {
                            r.filter == entry.name
                                && r.mode == Mode::OneKey
                                && (r.op == op
                                    || (op == Operation::Insert && r.op == Operation::Build))
                        })
                        .map(|r| (r.items as f64, r.est_cycles_per_op))
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    (!points.is_empty()).then(|| Series {
                        name: entry.name.to_owned(),
                        points,
                        style: Style::Measured(index),
                    })
                })
                .collect();
            if series.is_empty() {
                continue;
            }
            let chart = Chart {
                title: format!(
                    "{} ({}), one key at a time: est. cycles per operation (Valgrind, not time)",
                    op_label(op),
                    name.replace('_', " ")
                ),
                x_label: "items in the filter".to_owned(),
                y_label: "estimated cycles per operation".to_owned(),
                x_log: true,
                y_log: true,
                series,
            };
            let path = dir.join(format!("bench_{}_{name}.svg", op_label(op)));
            plot::draw(&chart, &path)?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;

    #[test]
    fn families_hold_at_most_eight_filters() {
        let all = registry();
        for name in ["bloom", "deletes", "growth_and_static"] {
            let count = all.iter().filter(|e| family(e) == name).count();
            assert!((1..=8).contains(&count), "{name}: {count}");
        }
    }
}
