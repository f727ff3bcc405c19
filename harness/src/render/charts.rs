//! What the report plots: one [`Chart`] per SVG file, built from the
//! measurements; every filter keeps its colour in every chart, and its
//! batched figures are dashed in that colour.

use filterlab_peers::Mode;

use crate::error::Error;
use crate::experiments::capacity::{CapacityResults, CapacityRow};
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
                Mode::Batched => (format!("{} (batched)", entry.name), Style::Batched(colour)),
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
    charts
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

/// FPP and memory against load past capacity.
fn capacity_charts(measured: &Measurements, capacity: &CapacityResults) -> [ChartFile; 2] {
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
    ]
}
