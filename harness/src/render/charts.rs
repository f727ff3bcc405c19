//! What the report plots: one [`Chart`] per SVG file, built from the
//! measurements; every filter keeps its colour in every chart, and its
//! batched figures are dashed in that colour.

use filterlab_peers::Mode;

use crate::error::Error;
use crate::experiments::capacity::{CapacityResults, CapacityRow};
use crate::experiments::churn::{ChurnResults, ChurnRow};
use crate::experiments::growth::{GrowthResults, GrowthRow};
use crate::experiments::measurements::Measurements;
use crate::experiments::speed::{Operation, SpeedResults};
use crate::registry::Entry;
use crate::render::plot::{self, Chart, Series, Style};
use crate::text::format_count;

/// A chart and the file it is drawn to.
pub struct ChartFile {
    /// The SVG file name.
    pub file: &'static str,
    /// The chart.
    pub chart: Chart,
}

/// One measured point: the filter, the mode, and (x, y).
type Point<'a> = (&'a str, Mode, (f64, f64));

/// A point of a measurement that has no mode (accuracy, space, capacity).
fn one_key(filter: &str, x: f64, y: f64) -> Point<'_> {
    (filter, Mode::OneKey, (x, y))
}

/// The series of every entry with points among `points`, in entry order,
/// one per mode.
fn series_by_entry(entries: &[Entry], points: &[Point<'_>]) -> Vec<Series> {
    let mut series = Vec::new();
    for (colour, entry) in entries.iter().enumerate() {
        for mode in Mode::ALL {
            let mine: Vec<(f64, f64)> = points
                .iter()
                .filter(|&&(filter, of, _)| filter == entry.name && of == mode)
                .map(|&(_, _, xy)| xy)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let (name, style) = match mode {
                Mode::OneKey => (entry.name.to_owned(), Style::Measured(colour)),
                Mode::Batched => (format!("{} (batched)", entry.name), Style::Dashed(colour)),
            };
            series.push(Series {
                name,
                points: mine,
                style,
            });
        }
    }
    series
}

/// The report's charts, with their file names.
pub fn charts(measured: &Measurements) -> Vec<ChartFile> {
    let mut charts = Vec::new();
    charts.extend(accuracy_chart(measured));
    charts.extend(space_chart(measured));
    if let Some(speed) = &measured.speed {
        charts.extend(speed_charts(measured, speed));
    }
    if let Some(capacity) = &measured.capacity {
        charts.extend(capacity_charts(measured, capacity));
    }
    if let Some(churn) = &measured.churn {
        charts.extend(churn_charts(measured, churn));
    }
    if let Some(growth) = &measured.growth {
        charts.extend(growth_charts(measured, growth));
    }
    charts
}

/// A line's legend suffix and its (x, y) for a row, where it has one.
type Line<'a, R> = (&'a str, &'a dyn Fn(&R) -> Option<(f64, f64)>);

/// Every entry's series of `rows`, two per entry: `solid` in its colour,
/// `dashed` (labelled with `dashed_suffix`) dashed in its colour, each
/// (x, y) where the function gives one.
fn paired_series<R>(
    entries: &[Entry],
    rows: &[R],
    filter: fn(&R) -> &str,
    solid: Line<'_, R>,
    dashed: Line<'_, R>,
) -> Vec<Series> {
    let mut series = Vec::new();
    for (colour, entry) in entries.iter().enumerate() {
        let mine: Vec<&R> = rows.iter().filter(|r| filter(r) == entry.name).collect();
        for ((suffix, y), style) in [solid, dashed]
            .into_iter()
            .zip([Style::Measured(colour), Style::Dashed(colour)])
        {
            let points: Vec<(f64, f64)> = mine.iter().filter_map(|r| y(r)).collect();
            if !points.is_empty() {
                series.push(Series {
                    name: format!("{}{suffix}", entry.name),
                    points,
                    style,
                });
            }
        }
    }
    series
}

/// Measured FPP and live false negatives against churn.
fn churn_charts(measured: &Measurements, churn: &ChurnResults) -> [ChartFile; 2] {
    let config = &measured.config;
    let name: fn(&ChurnRow) -> &str = |r| r.at.filter.as_str();
    let mut fpp = paired_series(
        &measured.entries,
        &churn.rows,
        name,
        ("", &|r| Some((r.at.churn, r.sample.empirical_fpp))),
        (" (theory)", &|r| {
            r.sample.theoretical_fpp.map(|t| (r.at.churn, t))
        }),
    );
    fpp.push(Series {
        name: "target".into(),
        points: vec![
            (0.0, config.churn_fpp),
            (f64::from(config.churn_span), config.churn_fpp),
        ],
        style: Style::Reference,
    });
    let lost = paired_series(
        &measured.entries,
        &churn.rows,
        name,
        ("", &|r| Some((r.at.churn, r.at.false_negatives as f64))),
        (" (failed removals)", &|r| {
            (r.at.failed_removals > 0).then_some((r.at.churn, r.at.failed_removals as f64))
        }),
    );
    let title = |what: &str| {
        format!(
            "{what} under churn (capacity {}, p = {}; sliding window: remove the oldest, insert a new key)",
            format_count(config.churn_items),
            config.churn_fpp
        )
    };
    [
        ChartFile {
            file: "churn_fpp.svg",
            chart: Chart {
                title: title("Measured FPP (dashed: theory for the live keys)"),
                x_label: "window steps / capacity".into(),
                y_label: "FPP".into(),
                x_log: false,
                y_log: true,
                series: fpp,
            },
        },
        ChartFile {
            file: "churn_false_negatives.svg",
            chart: Chart {
                title: title("Live keys reported absent"),
                x_label: "window steps / capacity".into(),
                y_label: "false negatives among the live keys".into(),
                x_log: false,
                y_log: false,
                series: lost,
            },
        },
    ]
}

/// FPP, memory and lookup time against items held while growing; solid at
/// the first target, dashed at the second.
fn growth_charts(measured: &Measurements, growth: &GrowthResults) -> [ChartFile; 3] {
    let config = &measured.config;
    let (first, second) = (
        config.growth_fpps.first().copied().unwrap_or(f64::NAN),
        config.growth_fpps.get(1).copied().unwrap_or(f64::NAN),
    );
    let name: fn(&GrowthRow) -> &str = |r| r.at.filter.as_str();
    let solid = format!(" (P = {first:e})");
    let dashed = format!(" (P = {second:e})");
    let at = |p: f64, y: fn(&GrowthRow) -> f64| {
        move |r: &GrowthRow| (r.at.target_fpp == p).then(|| (r.at.items as f64, y(r)))
    };
    let chart = |y: fn(&GrowthRow) -> f64| {
        paired_series(
            &measured.entries,
            &growth.rows,
            name,
            (&solid, &at(first, y)),
            (&dashed, &at(second, y)),
        )
    };
    let mut fpp = chart(|r| r.sample.empirical_fpp);
    let span = (config.growth_initial as f64, config.growth_final as f64);
    for p in [first, second] {
        fpp.push(Series {
            name: format!("target {p:e}"),
            points: vec![(span.0, p), (span.1, p)],
            style: Style::Reference,
        });
    }
    let growing = |what: &str| {
        format!(
            "{what} while growing from capacity {} (solid: P = {first:e}, dashed: P = {second:e})",
            format_count(config.growth_initial)
        )
    };
    let file = |file, title, y_label: &str, y_log, series| ChartFile {
        file,
        chart: Chart {
            title,
            x_label: "items inserted".into(),
            y_label: y_label.to_owned(),
            x_log: true,
            y_log,
            series,
        },
    };
    [
        file(
            "growth_fpp.svg",
            growing("Measured FPP"),
            "measured FPP",
            true,
            fpp,
        ),
        file(
            "growth_memory.svg",
            growing("Memory per item"),
            "bits per item held",
            false,
            chart(|r| r.at.bits_per_item),
        ),
        file(
            "growth_lookup.svg",
            growing("Negative lookup, one key at a time"),
            "ns per lookup",
            true,
            chart(|r| r.at.negative_ns),
        ),
    ]
}

/// Draws every chart into `dir`.
///
/// # Errors
///
/// When a file cannot be written.
pub fn draw_all(charts: &[ChartFile], dir: &std::path::Path) -> Result<(), Error> {
    for chart in charts {
        plot::draw(&chart.chart, &dir.join(chart.file))?;
    }
    Ok(())
}

/// A reference curve over the target FPP: its name and y(p).
type Reference = (&'static str, fn(f64) -> f64);

/// One value per filter and target FPP (log x axis), with reference curves.
fn against_target(
    measured: &Measurements,
    points: &[Point<'_>],
    references: &[Reference],
    (file, title, y_label, y_log): (&'static str, String, &str, bool),
) -> ChartFile {
    let mut series = series_by_entry(&measured.entries, points);
    for &(name, y) in references {
        series.push(Series {
            name: name.to_owned(),
            points: measured
                .config
                .accuracy_fpps
                .iter()
                .map(|&p| (p, y(p)))
                .collect(),
            style: Style::Reference,
        });
    }
    ChartFile {
        file,
        chart: Chart {
            title,
            x_label: "target FPP".into(),
            y_label: y_label.to_owned(),
            x_log: true,
            y_log,
            series,
        },
    }
}

/// Measured FPP against target at the largest n.
fn accuracy_chart(measured: &Measurements) -> Option<ChartFile> {
    let largest = measured.accuracy.iter().map(|r| r.n).max()?;
    let rows = measured.accuracy.iter().filter(move |r| r.n == largest);
    Some(against_target(
        measured,
        &rows
            .map(|r| one_key(&r.filter, r.target_fpp, r.empirical_fpp))
            .collect::<Vec<_>>(),
        &[("target (measured = target)", |p| p)],
        (
            "accuracy.svg",
            format!("Measured FPP against target, n = {}", format_count(largest)),
            "measured FPP",
            true,
        ),
    ))
}

/// Bits per item against target, beside the Bloom optimum and the bound.
fn space_chart(measured: &Measurements) -> Option<ChartFile> {
    let n = measured.space.first()?.n;
    Some(against_target(
        measured,
        &measured
            .space
            .iter()
            .map(|r| one_key(&r.filter, r.target_fpp, r.bits_per_item))
            .collect::<Vec<_>>(),
        &[
            ("Bloom optimum 1.44·log2(1/p)", |p| {
                -p.ln() / std::f64::consts::LN_2.powi(2)
            }),
            ("lower bound log2(1/p)", |p| -p.log2()),
        ],
        (
            "space.svg",
            format!("Bits per item against target FPP, n = {}", format_count(n)),
            "bits per item",
            false,
        ),
    ))
}

/// ns per operation against n, one chart per operation; one key at a time
/// solid, batched dashed.
fn speed_charts(measured: &Measurements, speed: &SpeedResults) -> Vec<ChartFile> {
    let mut charts = Vec::new();
    for (file, ops, what) in [
        (
            "speed_insert.svg",
            &[Operation::Insert, Operation::Build][..],
            "insert (static filters: build, per key)",
        ),
        (
            "speed_lookup_positive.svg",
            &[Operation::LookupPositive][..],
            "positive lookup",
        ),
        (
            "speed_lookup_negative.svg",
            &[Operation::LookupNegative][..],
            "negative lookup",
        ),
        ("speed_remove.svg", &[Operation::Remove][..], "remove"),
    ] {
        let points: Vec<Point<'_>> = speed
            .rows
            .iter()
            .filter(|r| ops.contains(&r.op))
            .map(|r| (r.filter.as_str(), r.mode, (r.n as f64, r.ns_per_op)))
            .collect();
        let series = series_by_entry(&measured.entries, &points);
        if series.is_empty() {
            continue;
        }
        charts.push(ChartFile {
            file,
            chart: Chart {
                title: format!(
                    "{what}: ns per operation (median), p = {}; dashed: batched",
                    measured.config.speed_fpp
                ),
                x_label: "items in the filter".into(),
                y_label: "ns per operation".into(),
                x_log: true,
                y_log: true,
                series,
            },
        });
    }
    charts
}

/// FPP, memory, refusals and losses against load past capacity.
fn capacity_charts(measured: &Measurements, capacity: &CapacityResults) -> [ChartFile; 3] {
    let config = &measured.config;
    let by_entry = |y: fn(&CapacityRow) -> f64| {
        let points: Vec<Point<'_>> = capacity
            .rows
            .iter()
            .map(|r| one_key(&r.filter, r.load, y(r)))
            .collect();
        series_by_entry(&measured.entries, &points)
    };
    let mut fpp = by_entry(|r| r.empirical_fpp);
    fpp.push(Series {
        name: "target".into(),
        points: vec![(0.0, config.capacity_fpp), (3.0, config.capacity_fpp)],
        style: Style::Reference,
    });
    let memory = by_entry(|r| r.memory_bytes as f64 * 8.0 / r.capacity as f64);
    let share = |count: u64, r: &CapacityRow| count as f64 / r.offered.max(1) as f64;
    let refused = paired_series(
        &measured.entries,
        &capacity.rows,
        |r: &CapacityRow| r.filter.as_str(),
        ("", &|r| Some((r.load, share(r.refused, r)))),
        (" (lost)", &|r| {
            (r.false_negatives > 0).then(|| (r.load, share(r.false_negatives, r)))
        }),
    );
    [
        ChartFile {
            file: "capacity_fpp.svg",
            chart: Chart {
                title: format!(
                    "Measured FPP past capacity (capacity {}, p = {})",
                    format_count(config.capacity_items),
                    config.capacity_fpp
                ),
                x_label: "keys offered / capacity".into(),
                y_label: "measured FPP".into(),
                x_log: false,
                y_log: true,
                series: fpp,
            },
        },
        ChartFile {
            file: "capacity_memory.svg",
            chart: Chart {
                title: "Memory past capacity".into(),
                x_label: "keys offered / capacity".into(),
                y_label: "bits per item of capacity".into(),
                x_log: false,
                y_log: false,
                series: memory,
            },
        },
        ChartFile {
            file: "capacity_refused.svg",
            chart: Chart {
                title: "Keys refused (solid) and accepted keys lost (dashed) past capacity, per key offered"
                    .into(),
                x_label: "keys offered / capacity".into(),
                y_label: "share of the keys offered".into(),
                x_log: false,
                y_log: false,
                series: refused,
            },
        },
    ]
}
