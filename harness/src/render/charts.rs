//! What the report plots: one [`Chart`] per SVG file, built from the
//! measurements; every filter keeps its colour in every chart, and its
//! batched figures are dashed in that colour.

use filterlab_peers::Mode;

use crate::error::Error;
use crate::experiments::accuracy::AccuracyRow;
use crate::experiments::capacity::{CapacityResults, CapacityRow};
use crate::experiments::measurements::Measurements;
use crate::experiments::space::SpaceRow;
use crate::experiments::speed::{Operation, SpeedResults, SpeedRow};
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

/// The series of every entry with rows among `rows`, in entry order; rows
/// map to points with `point`, and to a mode with `mode`.
fn series_by_entry<T>(
    entries: &[Entry],
    rows: &[&T],
    filter_of: impl Fn(&T) -> &str,
    mode_of: impl Fn(&T) -> Mode,
    point: impl Fn(&T) -> (f64, f64),
) -> Vec<Series> {
    let mut series = Vec::new();
    for (colour, entry) in entries.iter().enumerate() {
        for mode in Mode::ALL {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|row| filter_of(row) == entry.name && mode_of(row) == mode)
                .map(|row| point(row))
                .collect();
            if points.is_empty() {
                continue;
            }
            let (name, style) = match mode {
                Mode::OneKey => (entry.name.to_owned(), Style::Measured(colour)),
                Mode::Batched => (format!("{} (batched)", entry.name), Style::Batched(colour)),
            };
            series.push(Series {
                name,
                points,
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

/// Measured FPP against target at the largest n.
fn accuracy_chart(measured: &Measurements) -> Option<ChartFile> {
    let largest = measured.accuracy.iter().map(|r| r.n).max()?;
    let rows: Vec<&AccuracyRow> = measured
        .accuracy
        .iter()
        .filter(|r| r.n == largest)
        .collect();
    let mut series = series_by_entry(
        &measured.entries,
        &rows,
        |r| &r.filter,
        |_| Mode::OneKey,
        |r| (r.target_fpp, r.empirical_fpp),
    );
    series.push(Series {
        name: "target (measured = target)".into(),
        points: measured
            .config
            .accuracy_fpps
            .iter()
            .map(|&p| (p, p))
            .collect(),
        style: Style::Reference,
    });
    Some(ChartFile {
        file: "accuracy.svg",
        chart: Chart {
            title: format!("Measured FPP against target, n = {}", format_count(largest)),
            x_label: "target FPP".into(),
            y_label: "measured FPP".into(),
            x_log: true,
            y_log: true,
            series,
        },
    })
}

/// Bits per item against target, beside the Bloom optimum and the bound.
fn space_chart(measured: &Measurements) -> Option<ChartFile> {
    let first = measured.space.first()?;
    let fpps = &measured.config.accuracy_fpps;
    let rows: Vec<&SpaceRow> = measured.space.iter().collect();
    let mut series = series_by_entry(
        &measured.entries,
        &rows,
        |r| &r.filter,
        |_| Mode::OneKey,
        |r| (r.target_fpp, r.bits_per_item),
    );
    series.push(Series {
        name: "Bloom optimum 1.44·log2(1/p)".into(),
        points: fpps
            .iter()
            .map(|&p| (p, -p.ln() / std::f64::consts::LN_2.powi(2)))
            .collect(),
        style: Style::Reference,
    });
    series.push(Series {
        name: "lower bound log2(1/p)".into(),
        points: fpps.iter().map(|&p| (p, -p.log2())).collect(),
        style: Style::Reference,
    });
    Some(ChartFile {
        file: "space.svg",
        chart: Chart {
            title: format!(
                "Bits per item against target FPP, n = {}",
                format_count(first.n)
            ),
            x_label: "target FPP".into(),
            y_label: "bits per item".into(),
            x_log: true,
            y_log: false,
            series,
        },
    })
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
        let rows: Vec<&SpeedRow> = speed.rows.iter().filter(|r| ops.contains(&r.op)).collect();
        let series = series_by_entry(
            &measured.entries,
            &rows,
            |r| &r.filter,
            |r| r.mode,
            |r| (r.n as f64, r.ns_per_op),
        );
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
    let rows: Vec<&CapacityRow> = capacity.rows.iter().collect();
    let by_entry = |point: fn(&CapacityRow) -> (f64, f64)| {
        series_by_entry(
            &measured.entries,
            &rows,
            |r| &r.filter,
            |_| Mode::OneKey,
            point,
        )
    };
    let mut fpp = by_entry(|r| (r.load, r.empirical_fpp));
    fpp.push(Series {
        name: "target".into(),
        points: vec![(0.0, config.capacity_fpp), (3.0, config.capacity_fpp)],
        style: Style::Reference,
    });
    let memory = by_entry(|r| (r.load, r.memory_bytes as f64 * 8.0 / r.capacity as f64));
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
