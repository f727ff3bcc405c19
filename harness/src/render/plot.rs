//! SVG line charts (plotters' SVG backend needs no fonts): one function
//! draws every chart of the report; logarithmic axes are drawn in log10
//! space with labels converted back.

use std::path::Path;

use plotters::prelude::*;

use crate::error::Error;

/// Readable, distinct line colours (0xRRGGBB); a filter keeps its colour in
/// every chart.
const COLOURS: [u32; 12] = [
    0x00_72b2, 0xd5_5e00, 0x00_9e73, 0xcc_79a7, 0x56_b4e9, 0xe6_9f00, 0x78_3ca0, 0x96_9600,
    0xaa_2828, 0x28_28a0, 0x5a_5a5a, 0x00_5a3c,
];

/// The colour of series `index`.
fn colour(index: usize) -> RGBColor {
    let [_, red, green, blue] = COLOURS[index % COLOURS.len()].to_be_bytes();
    RGBColor(red, green, blue)
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A measured filter: solid line with points, colour by its index.
    Measured(usize),
    /// A second line of the same filter (its batch API, its theory): dashed, in its colour.
    Dashed(usize),
    /// A reference curve (bound, target): dashed black.
    Reference,
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend label.
    pub name: String,
    /// (x, y) points in data units.
    pub points: Vec<(f64, f64)>,
    /// How to draw it.
    pub style: Style,
}

/// A chart: title, axes and series.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The caption.
    pub title: String,
    /// The x axis description.
    pub x_label: String,
    /// The y axis description.
    pub y_label: String,
    /// Logarithmic x axis.
    pub x_log: bool,
    /// Logarithmic y axis.
    pub y_log: bool,
    /// The lines.
    pub series: Vec<Series>,
}

fn to_axis(value: f64, log: bool) -> Option<f64> {
    let mapped = if log { value.log10() } else { value };
    mapped.is_finite().then_some(mapped)
}

fn axis_label(value: f64, log: bool) -> String {
    if !log {
        let text = format!("{value:.2}");
        return text.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    let power = 10f64.powf(value);
    let integral_exponent = (value - value.round()).abs() < 1e-9;
    if (1.0..1e5).contains(&power) {
        // Plain numbers with two significant digits: 2.5, 63, 250.
        if power >= 10.0 {
            let magnitude = 10f64.powi(power.log10().floor() as i32 - 1);
            format!("{:.0}", (power / magnitude).round() * magnitude)
        } else {
            let text = format!("{power:.1}");
            text.trim_end_matches(".0").to_owned()
        }
    } else if integral_exponent {
        format!("1e{}", value.round() as i32)
    } else {
        format!("{power:.1e}")
    }
}

/// The axis range covering `values`, with a margin.
fn range(values: impl Iterator<Item = f64>, log: bool) -> std::ops::Range<f64> {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !low.is_finite() {
        return 0.0..1.0;
    }
    let span = (high - low).max(if log { 0.5 } else { high.abs().max(1.0) * 0.1 });
    let low = if !log && low >= 0.0 {
        0.0
    } else {
        low - span * 0.05
    };
    low..high + span * 0.08
}

/// Draws `chart` to an SVG file at `path`.
///
/// # Errors
///
/// When the file cannot be written.
pub fn draw(chart: &Chart, path: &Path) -> Result<(), Error> {
    let failed =
        |err: &dyn std::fmt::Display| Error::failed(format!("drawing {}: {err}", path.display()));
    let series: Vec<(&Series, Vec<(f64, f64)>)> = chart
        .series
        .iter()
        .map(|s| {
            let points = s
                .points
                .iter()
                .filter_map(|&(x, y)| Some((to_axis(x, chart.x_log)?, to_axis(y, chart.y_log)?)))
                .collect();
            (s, points)
        })
        .collect();
    let all = || series.iter().flat_map(|(_, points)| points.iter());
    let x_range = range(all().map(|p| p.0), chart.x_log);
    let y_range = range(all().map(|p| p.1), chart.y_log);

    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| failed(&e))?;
    let mut context = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| failed(&e))?;
    let x_format = |v: &f64| axis_label(*v, chart.x_log);
    let y_format = |v: &f64| axis_label(*v, chart.y_log);
    context
        .configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| failed(&e))?;
    for (s, points) in &series {
        if points.is_empty() {
            continue;
        }
        match s.style {
            Style::Measured(index) | Style::Dashed(index) => {
                let colour = colour(index);
                let dashed = matches!(s.style, Style::Dashed(_));
                let line = colour.stroke_width(2);
                let drawn = if dashed {
                    context.draw_series(DashedLineSeries::new(points.clone(), 8, 4, line))
                } else {
                    context.draw_series(LineSeries::new(points.clone(), line))
                };
                drawn
                    .map_err(|e| failed(&e))?
                    .label(s.name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line));
                context
                    .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(|e| failed(&e))?;
            }
            Style::Reference => {
                context
                    .draw_series(DashedLineSeries::new(
                        points.clone(),
                        6,
                        4,
                        BLACK.stroke_width(1),
                    ))
                    .map_err(|e| failed(&e))?
                    .label(s.name.clone())
                    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
            }
        }
    }
    context
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| failed(&e))?;
    root.present().map_err(|e| failed(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_labels_read_as_powers() {
        assert_eq!(axis_label(-3.0, true), "1e-3");
        assert_eq!(axis_label(2.0, true), "100");
        assert_eq!(axis_label(250f64.log10(), true), "250");
        assert_eq!(axis_label(63.1f64.log10(), true), "63");
        assert_eq!(axis_label(2.5f64.log10(), true), "2.5");
        assert_eq!(axis_label(8.0, true), "1e8");
        assert_eq!(axis_label(0.003_2f64.log10(), true), "3.2e-3");
        assert_eq!(axis_label(0.5, false), "0.5");
        assert_eq!(axis_label(150.0, false), "150");
        assert_eq!(axis_label(2.25, false), "2.25");
    }

    #[test]
    fn draws_an_svg() {
        let dir = std::env::temp_dir().join(format!("filterlab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chart.svg");
        let chart = Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_log: true,
            y_log: true,
            series: vec![
                Series {
                    name: "a".into(),
                    points: vec![(1e-3, 2.0), (1e-2, 3.0), (0.0, 1.0)],
                    style: Style::Measured(0),
                },
                Series {
                    name: "a (batched)".into(),
                    points: vec![(1e-3, 1.5), (1e-2, 2.5)],
                    style: Style::Dashed(0),
                },
                Series {
                    name: "bound".into(),
                    points: vec![(1e-3, 1.0), (1e-2, 1.5)],
                    style: Style::Reference,
                },
            ],
        };
        draw(&chart, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("bound") && svg.contains("a (batched)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
