//! SVG figures (plotters' SVG backend needs no fonts): small multiples of
//! line and scatter panels, each with its legend beside its data area, and
//! labelled grids. [`layout`] places everything before anything is drawn,
//! so that the tests can check the geometry the drawing uses; logarithmic
//! axes are drawn in log10 space with labels converted back.

use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::Error;
use crate::render::style::{Colour, Look, Marker, REFERENCE};

/// The font every text uses (resvg and browsers map it to a sans font).
const FONT: &str = "sans-serif";
/// Font sizes, as plotters takes them (it writes size / 1.24 px).
const TITLE_SIZE: f64 = 22.0;
const PANEL_TITLE_SIZE: f64 = 16.0;
const TEXT_SIZE: f64 = 15.0;
const SMALL_SIZE: f64 = 13.0;

/// Figure title band, panel title band, axis bands, data area, gaps.
const TITLE_H: i32 = 40;
const PANEL_TITLE_H: i32 = 26;
const Y_AXIS_W: i32 = 74;
const X_AXIS_H: i32 = 46;
const DATA_W: i32 = 400;
const DATA_H: i32 = 260;
/// The data area of a figure's only plot (a Pareto chart): room for labels.
const LARGE_W: i32 = 860;
const LARGE_H: i32 = 520;
const LEGEND_GAP: i32 = 14;
const LEGEND_ROW_H: i32 = 19;
const LEGEND_SAMPLE_W: i32 = 34;
const PANEL_GAP: i32 = 24;
const MARGIN: i32 = 16;
/// Grid panels: the row header and each cell.
const GRID_HEADER_W: i32 = 96;
const GRID_HEADER_H: i32 = 26;
const GRID_CELL_W: i32 = 300;
const GRID_CELL_H: i32 = 108;

/// Estimated width in pixels of `text` at plotters font size `size`
/// (DejaVu Sans, the widest common sans font, averages about 0.55 em per
/// character of these labels).
pub fn text_width(text: &str, size: f64) -> i32 {
    (text.chars().count() as f64 * 0.56 * size / 1.24).ceil() as i32
}

/// How a series' line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dash {
    /// A solid line.
    Solid,
    /// A dashed line (and a dashed sample in the legend).
    Dashed,
    /// A dotted line (a second reference line beside a dashed one).
    Dotted,
    /// No line: a legend entry for a marker alone.
    NoLine,
}

/// One measured point, with its interval where it has one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// x, in data units.
    pub x: f64,
    /// y, in data units.
    pub y: f64,
    /// A confidence interval on y (drawn as an error bar).
    pub interval: Option<(f64, f64)>,
}

impl Point {
    /// A point without an interval.
    pub fn at(x: f64, y: f64) -> Self {
        Self {
            x,
            y,
            interval: None,
        }
    }
}

/// One line of a panel, with a legend entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend label.
    pub name: String,
    /// The registry name of the filter it shows (`None` for references).
    pub filter: Option<String>,
    /// Its colour.
    pub colour: Colour,
    /// Its marker (`None` for a plain line).
    pub marker: Option<Marker>,
    /// Its line.
    pub dash: Dash,
    /// The points, joined in order.
    pub points: Vec<Point>,
}

impl Series {
    /// A filter's series, in its look.
    pub fn filter(name: String, filter: &str, look: Look, dash: Dash, points: Vec<Point>) -> Self {
        Self {
            name,
            filter: Some(filter.to_owned()),
            colour: look.colour,
            marker: Some(look.marker),
            dash,
            points,
        }
    }

    /// A reference line (a target, a bound): dashed black, no marker.
    pub fn reference(name: impl Into<String>, points: Vec<Point>) -> Self {
        Self {
            name: name.into(),
            filter: None,
            colour: REFERENCE,
            marker: None,
            dash: Dash::Dashed,
            points,
        }
    }

    /// A legend entry for what `marker` marks (no line, no points).
    pub fn key(name: impl Into<String>, marker: Marker) -> Self {
        Self {
            name: name.into(),
            filter: None,
            colour: REFERENCE,
            marker: Some(marker),
            dash: Dash::NoLine,
            points: Vec::new(),
        }
    }

    /// The same line drawn in `dash` (a second reference beside a first).
    #[must_use]
    pub fn dashed(mut self, dash: Dash) -> Self {
        self.dash = dash;
        self
    }

    /// Its colour, marker and dash: no two series of a panel share them.
    pub fn style(&self) -> (Colour, Option<Marker>, Dash) {
        (self.colour, self.marker, self.dash)
    }
}

/// A point drawn with its label beside it instead of a legend entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// The label (empty when another point's label names it).
    pub name: String,
    /// The registry name of the filter.
    pub filter: String,
    /// Its look.
    pub look: Look,
    /// Built once from its keys: a [`Marker::Ring`] around its marker.
    pub ringed: bool,
    /// x, in data units.
    pub x: f64,
    /// y, in data units.
    pub y: f64,
}

/// An axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// What it measures.
    pub label: String,
    /// Logarithmic.
    pub log: bool,
}

impl Axis {
    /// An axis labelled `label`, logarithmic when `log`.
    pub fn new(label: impl Into<String>, log: bool) -> Self {
        Self {
            label: label.into(),
            log,
        }
    }
}

/// A panel with axes: lines and labelled points.
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    /// The panel's title.
    pub title: String,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// Lines with legend entries (at most eight).
    pub series: Vec<Series>,
    /// Points labelled in place.
    pub labelled: Vec<Labelled>,
}

/// One line of text of a grid cell, with the filter it names.
#[derive(Clone, Debug, PartialEq)]
pub struct CellPart {
    /// What the part says ("fewest bits: 9.59").
    pub heading: String,
    /// The filter's label ("A = B" for filters tied within noise), or
    /// what stands in for one ("none meets p").
    pub name: String,
    /// The registry name and look of each filter named (several when tied).
    pub filters: Vec<(String, Look)>,
}

/// One cell of a grid.
#[derive(Clone, Debug, PartialEq)]
pub struct GridCell {
    /// Its column.
    pub column: usize,
    /// Its row.
    pub row: usize,
    /// What it says, top to bottom; each part gets its share of the cell,
    /// tinted in its filter's colour.
    pub parts: Vec<CellPart>,
}

/// A labelled grid: the skyline map.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// The panel's title.
    pub title: String,
    /// What the columns are.
    pub column_title: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Row headers.
    pub rows: Vec<String>,
    /// The cells.
    pub cells: Vec<GridCell>,
}

/// A panel of a figure.
#[derive(Clone, Debug, PartialEq)]
pub enum Panel {
    /// Axes with lines and points.
    Plot(Plot),
    /// A labelled grid.
    Grid(Grid),
}

impl Panel {
    /// Its lines (none for a grid).
    pub fn series(&self) -> &[Series] {
        match self {
            Self::Plot(plot) => &plot.series,
            Self::Grid(_) => &[],
        }
    }
}

/// A figure: a title and panels, two a row.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The caption.
    pub title: String,
    /// The panels.
    pub panels: Vec<Panel>,
    /// Whether every plot panel shares the x and y ranges.
    pub shared_axes: bool,
}

/// A rectangle in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    /// Left.
    pub x: i32,
    /// Top.
    pub y: i32,
    /// Width.
    pub w: i32,
    /// Height.
    pub h: i32,
}

impl Rect {
    /// Whether the two overlap (touching edges do not).
    pub fn intersects(&self, other: &Self) -> bool {
        self.x < other.x + other.w
            && other.x < self.x + self.w
            && self.y < other.y + other.h
            && other.y < self.y + self.h
    }

    /// Whether `other` lies inside.
    pub fn contains(&self, other: &Self) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.x + other.w <= self.x + self.w
            && other.y + other.h <= self.y + self.h
    }

    fn overlap(&self, other: &Self) -> i64 {
        let w = (self.x + self.w).min(other.x + other.w) - self.x.max(other.x);
        let h = (self.y + self.h).min(other.y + other.h) - self.y.max(other.y);
        i64::from(w.max(0)) * i64::from(h.max(0))
    }
}

/// Where one panel goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PanelLayout {
    /// The whole panel, title and axes included.
    pub outer: Rect,
    /// The data area (a grid's cells).
    pub data: Rect,
    /// The legend, beside the data area; `None` without series.
    pub legend: Option<Rect>,
}

/// Where everything of a figure goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The figure's width.
    pub width: i32,
    /// Its height.
    pub height: i32,
    /// One per panel, in order.
    pub panels: Vec<PanelLayout>,
}

/// The legend's size for `series`: a sample, then the longest label.
fn legend_size(series: &[Series]) -> Option<(i32, i32)> {
    let widest = series
        .iter()
        .map(|s| text_width(&s.name, TEXT_SIZE))
        .max()?;
    Some((
        LEGEND_SAMPLE_W + 10 + widest + 12,
        series.len() as i32 * LEGEND_ROW_H + 12,
    ))
}

/// A panel's size and its data area and legend relative to its corner;
/// `alone` when it is its figure's only panel (drawn large).
fn panel_parts(panel: &Panel, alone: bool) -> (i32, i32, Rect, Option<Rect>) {
    match panel {
        Panel::Plot(plot) => {
            let (w, h) = if alone {
                (LARGE_W, LARGE_H)
            } else {
                (DATA_W, DATA_H)
            };
            let data = Rect {
                x: Y_AXIS_W,
                y: PANEL_TITLE_H,
                w,
                h,
            };
            let legend = legend_size(&plot.series).map(|(w, h)| Rect {
                x: data.x + data.w + LEGEND_GAP,
                y: data.y,
                w,
                h,
            });
            let width = legend
                .map_or(data.x + data.w, |l| l.x + l.w)
                .max(data.x + text_width(&plot.title, PANEL_TITLE_SIZE));
            let height = (data.y + data.h + X_AXIS_H).max(legend.map_or(0, |l| l.y + l.h));
            (width, height, data, legend)
        }
        Panel::Grid(grid) => {
            let data = Rect {
                x: GRID_HEADER_W,
                y: PANEL_TITLE_H + GRID_HEADER_H,
                w: grid.columns.len() as i32 * GRID_CELL_W,
                h: grid.rows.len() as i32 * GRID_CELL_H,
            };
            let width = (data.x + data.w).max(text_width(&grid.title, PANEL_TITLE_SIZE));
            (width, data.y + data.h + 8, data, None)
        }
    }
}

/// Places a figure's panels, two a row (one when it has one panel), each
/// column as wide as its widest panel.
pub fn layout(figure: &Figure) -> Layout {
    let alone = figure.panels.len() == 1;
    let parts: Vec<_> = figure
        .panels
        .iter()
        .map(|p| panel_parts(p, alone))
        .collect();
    let columns = if parts.len() > 1 { 2 } else { 1 };
    let mut column_widths = vec![0; columns];
    for (index, &(w, ..)) in parts.iter().enumerate() {
        column_widths[index % columns] = column_widths[index % columns].max(w);
    }
    let mut panels = Vec::with_capacity(parts.len());
    let mut y = TITLE_H;
    for row in parts.chunks(columns) {
        let row_height = row.iter().map(|&(_, h, ..)| h).max().unwrap_or(0);
        let mut x = MARGIN;
        for (column, &(w, h, data, legend)) in row.iter().enumerate() {
            let shift = |r: Rect| Rect {
                x: r.x + x,
                y: r.y + y,
                ..r
            };
            panels.push(PanelLayout {
                outer: Rect { x, y, w, h },
                data: shift(data),
                legend: legend.map(shift),
            });
            x += column_widths[column] + PANEL_GAP;
        }
        y += row_height + PANEL_GAP;
    }
    let width =
        MARGIN + column_widths.iter().sum::<i32>() + PANEL_GAP * (columns as i32 - 1) + MARGIN;
    let title = text_width(&figure.title, TITLE_SIZE) + 2 * MARGIN;
    Layout {
        width: width.max(title),
        height: y - PANEL_GAP + MARGIN,
        panels,
    }
}

fn to_axis(value: f64, log: bool) -> Option<f64> {
    let mapped = if log { value.log10() } else { value };
    mapped.is_finite().then_some(mapped)
}

/// How a tick reads: plain numbers where short, powers of ten elsewhere.
pub fn axis_label(value: f64, log: bool) -> String {
    if !log {
        let text = format!("{value:.2}");
        return text.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    let integral_exponent = (value - value.round()).abs() < 1e-9;
    let power = if integral_exponent {
        10f64.powi(value.round() as i32)
    } else {
        10f64.powf(value)
    };
    if (0.01..1.0).contains(&power) {
        // Two significant digits as a decimal: 0.79, 0.5, 0.063.
        let digits = (1 - power.log10().floor() as i32) as usize;
        let text = format!("{power:.digits$}");
        return text.trim_end_matches('0').trim_end_matches('.').to_owned();
    }
    if (1.0..1e4).contains(&power) {
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
        // 2e4, 1.5e-3: one or two significant digits, as the ticks have.
        format!("{power:.1e}").replace(".0e", "e")
    }
}

/// An axis in plotters' linear coordinates (log10 units on a log axis)
/// with the ticks [`ticks`] chose.
struct Ticked {
    coord: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Self {
        Self {
            coord: range.into(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.coord.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, _: Hint) -> Vec<f64> {
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.coord.range()
    }
}

/// The ticks of a log axis over `range` (in log10 units): the powers of
/// ten when the axis spans enough decades, else the first of 1-2-5, then
/// 1-1.5-2-3-5-7, then every digit, that gives at least three ticks; at
/// most `most` of them. A linear axis gets multiples of 1, 2 or 5 times a
/// power of ten, at most `most`.
fn ticks(range: &std::ops::Range<f64>, log: bool, most: usize) -> Vec<f64> {
    let (low, high) = (range.start, range.end);
    if !log {
        let rough = (high - low) / most.max(1) as f64;
        if !(rough.is_finite() && rough > 0.0) {
            return Vec::new();
        }
        let power = 10f64.powf(rough.log10().floor());
        let step = [1.0, 2.0, 5.0]
            .into_iter()
            .map(|m| m * power)
            .find(|&step| (high - low) / step <= most as f64)
            .unwrap_or(10.0 * power);
        let first = (low / step).ceil() as i64;
        let last = (high / step).floor() as i64;
        return (first..=last).map(|i| i as f64 * step).collect();
    }
    let steps: [&[f64]; 4] = [
        &[1.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ];
    let candidates = |mantissas: &[f64]| -> Vec<f64> {
        let mut ticks = Vec::new();
        for decade in (low.floor() as i32)..=(high.ceil() as i32) {
            for mantissa in mantissas {
                let tick = f64::from(decade) + mantissa.log10();
                if (low..=high).contains(&tick) {
                    ticks.push(tick);
                }
            }
        }
        ticks
    };
    let mut chosen = candidates(steps[0]);
    for mantissas in &steps[1..] {
        if chosen.len() >= 3 {
            break;
        }
        chosen = candidates(mantissas);
    }
    // Too many decades for the axis: every second (third, ...) power.
    let every = chosen.len().div_ceil(most.max(1)).max(1);
    chosen.into_iter().step_by(every).collect()
}

/// The axis-space values of a plot along one axis (intervals included).
fn axis_values(plot: &Plot, vertical: bool) -> Vec<f64> {
    let axis = if vertical { &plot.y } else { &plot.x };
    let mut values = Vec::new();
    for point in plot.series.iter().flat_map(|s| &s.points) {
        if vertical {
            values.push(point.y);
            if let Some((low, high)) = point.interval {
                values.extend([low, high]);
            }
        } else {
            values.push(point.x);
        }
    }
    for point in &plot.labelled {
        values.push(if vertical { point.y } else { point.x });
    }
    values
        .into_iter()
        .filter_map(|v| to_axis(v, axis.log))
        .collect()
}

/// The axis range covering `values`, with a margin (wider for labelled
/// scatter plots, whose labels need room).
fn range(values: &[f64], log: bool, roomy: bool) -> std::ops::Range<f64> {
    let (low, high) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if !low.is_finite() {
        return 0.0..1.0;
    }
    if high - low < 1e-9 {
        // One value: a range around it.
        let half = if log { 0.5 } else { low.abs().max(1.0) * 0.5 };
        return low - half..high + half;
    }
    let span = (high - low).max(if log { 0.5 } else { high.abs().max(1.0) * 0.1 });
    let pad = if roomy { 0.12 } else { 0.05 };
    let low = if !log && low >= 0.0 {
        0.0
    } else {
        low - span * pad
    };
    low..high + span * (pad + 0.03)
}

/// A figure's x and y ranges per plot panel (shared when it says so).
fn ranges(figure: &Figure) -> Vec<(std::ops::Range<f64>, std::ops::Range<f64>)> {
    let plots: Vec<Option<&Plot>> = figure
        .panels
        .iter()
        .map(|p| match p {
            Panel::Plot(plot) => Some(plot),
            Panel::Grid(_) => None,
        })
        .collect();
    let of = |plots: &[&Plot], vertical: bool| {
        let values: Vec<f64> = plots
            .iter()
            .flat_map(|p| axis_values(p, vertical))
            .collect();
        let first = plots.first();
        let log = first.is_some_and(|p| if vertical { p.y.log } else { p.x.log });
        let roomy = plots.iter().any(|p| !p.labelled.is_empty());
        range(&values, log, roomy)
    };
    let all: Vec<&Plot> = plots.iter().flatten().copied().collect();
    let shared = (of(&all, false), of(&all, true));
    plots
        .iter()
        .map(|plot| match plot {
            Some(plot) if !figure.shared_axes => (of(&[plot], false), of(&[plot], true)),
            _ => shared.clone(),
        })
        .collect()
}

fn rgb(colour: Colour) -> RGBColor {
    let [_, red, green, blue] = colour.to_be_bytes();
    RGBColor(red, green, blue)
}

/// Draws `figure` to an SVG file at `path`.
///
/// # Errors
///
/// When the file cannot be written.
pub fn draw(figure: &Figure, path: &Path) -> Result<(), Error> {
    let failed =
        |err: &dyn std::fmt::Display| Error::failed(format!("drawing {}: {err}", path.display()));
    let layout = layout(figure);
    let root =
        SVGBackend::new(path, (layout.width as u32, layout.height as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| failed(&e))?;
    text(&root, &figure.title, (MARGIN, 10), TITLE_SIZE, BLACK, false).map_err(|e| failed(&e))?;
    let ranges = ranges(figure);
    for ((panel, place), (x_range, y_range)) in figure.panels.iter().zip(&layout.panels).zip(ranges)
    {
        let drawn = match panel {
            Panel::Plot(plot) => draw_plot(&root, plot, place, x_range, y_range),
            Panel::Grid(grid) => draw_grid(&root, grid, place),
        };
        drawn.map_err(|e| failed(&e))?;
    }
    root.present().map_err(|e| failed(&e))?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult<'a> =
    Result<(), DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>>;

/// Text with its top-left corner (or, `centred`, its top centre) at `at`.
fn text<'a>(
    root: &Area<'a>,
    words: &str,
    at: (i32, i32),
    size: f64,
    colour: RGBColor,
    centred: bool,
) -> DrawResult<'a> {
    let anchor = Pos::new(if centred { HPos::Center } else { HPos::Left }, VPos::Top);
    let style = TextStyle::from((FONT, size).into_font())
        .color(&colour)
        .pos(anchor);
    root.draw(&Text::new(words.to_owned(), at, style))
}

/// A marker centred at `at`, `size` pixels from centre to edge.
fn marker<'a>(
    root: &Area<'a>,
    shape: Marker,
    at: (i32, i32),
    size: i32,
    colour: RGBColor,
) -> DrawResult<'a> {
    let (x, y) = at;
    let fill = colour.filled();
    let line = colour.stroke_width(2);
    match shape {
        Marker::Circle => root.draw(&Circle::new(at, size, fill)),
        Marker::Square => root.draw(&Rectangle::new(
            [(x - size, y - size), (x + size, y + size)],
            fill,
        )),
        Marker::TriangleUp => root.draw(&Polygon::new(
            vec![
                (x, y - size - 1),
                (x + size + 1, y + size),
                (x - size - 1, y + size),
            ],
            fill,
        )),
        Marker::TriangleDown => root.draw(&Polygon::new(
            vec![
                (x, y + size + 1),
                (x + size + 1, y - size),
                (x - size - 1, y - size),
            ],
            fill,
        )),
        Marker::Diamond => root.draw(&Polygon::new(
            vec![
                (x, y - size - 1),
                (x + size + 1, y),
                (x, y + size + 1),
                (x - size - 1, y),
            ],
            fill,
        )),
        Marker::Cross => {
            root.draw(&PathElement::new(
                vec![(x - size, y - size), (x + size, y + size)],
                line,
            ))?;
            root.draw(&PathElement::new(
                vec![(x - size, y + size), (x + size, y - size)],
                line,
            ))
        }
        Marker::Plus => {
            root.draw(&PathElement::new(
                vec![(x - size - 1, y), (x + size + 1, y)],
                line,
            ))?;
            root.draw(&PathElement::new(
                vec![(x, y - size - 1), (x, y + size + 1)],
                line,
            ))
        }
        // Around a marker of `size`, clear of it.
        Marker::Ring => root.draw(&Circle::new(at, size + 4, colour.stroke_width(2))),
    }
}

/// The pieces of a polyline drawn in `dash`: the whole line, or dashes of
/// 8 pixels with gaps of 5 along it, or dots of 2 with gaps of 4.
fn dashed(points: &[(i32, i32)], dash: Dash) -> Vec<Vec<(i32, i32)>> {
    let (on, off) = match dash {
        Dash::Solid => return vec![points.to_vec()],
        Dash::NoLine => return Vec::new(),
        _ if points.len() < 2 => return vec![points.to_vec()],
        Dash::Dashed => (8.0_f64, 5.0_f64),
        Dash::Dotted => (2.0_f64, 4.0_f64),
    };
    let mut pieces = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    let mut phase = 0.0; // distance into the current on+off period
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let (dx, dy) = (f64::from(b.0 - a.0), f64::from(b.1 - a.1));
        let length = dx.hypot(dy);
        let at = |t: f64| {
            (
                a.0 + (dx * t / length.max(1e-9)).round() as i32,
                a.1 + (dy * t / length.max(1e-9)).round() as i32,
            )
        };
        let mut travelled = 0.0;
        while travelled < length {
            let drawing = phase < on;
            let left_in_phase = if drawing {
                on - phase
            } else {
                on + off - phase
            };
            let step = left_in_phase.min(length - travelled);
            if drawing {
                if current.is_empty() {
                    current.push(at(travelled));
                }
                current.push(at(travelled + step));
            }
            travelled += step;
            phase += step;
            if phase >= on && drawing && phase - step < on {
                pieces.push(std::mem::take(&mut current));
            }
            if phase >= on + off {
                phase = 0.0;
            }
        }
    }
    if current.len() > 1 {
        pieces.push(current);
    }
    pieces
}

/// A polyline in `dash`.
fn line<'a>(
    root: &Area<'a>,
    points: &[(i32, i32)],
    dash: Dash,
    colour: RGBColor,
    width: u32,
) -> DrawResult<'a> {
    for piece in dashed(points, dash) {
        root.draw(&PathElement::new(piece, colour.stroke_width(width)))?;
    }
    Ok(())
}

fn draw_plot<'a>(
    root: &Area<'a>,
    plot: &Plot,
    place: &PanelLayout,
    x_range: std::ops::Range<f64>,
    y_range: std::ops::Range<f64>,
) -> DrawResult<'a> {
    let data = place.data;
    text(
        root,
        &plot.title,
        (data.x, place.outer.y + 2),
        PANEL_TITLE_SIZE,
        BLACK,
        false,
    )?;
    let area = root.clone().shrink(
        (data.x - Y_AXIS_W, data.y),
        (data.w + Y_AXIS_W, data.h + X_AXIS_H),
    );
    let (y_low, y_high) = (y_range.start, y_range.end);
    let (x_log, y_log) = (plot.x.log, plot.y.log);
    let (x_ticks, y_ticks) = (ticks(&x_range, x_log, 8), ticks(&y_range, y_log, 7));
    let mut chart = ChartBuilder::on(&area)
        .x_label_area_size(X_AXIS_H)
        .y_label_area_size(Y_AXIS_W)
        .build_cartesian_2d(Ticked::new(x_range, x_ticks), Ticked::new(y_range, y_ticks))?;
    let x_format = |v: &f64| axis_label(*v, x_log);
    let y_format = |v: &f64| axis_label(*v, y_log);
    chart
        .configure_mesh()
        .x_desc(&plot.x.label)
        .y_desc(&plot.y.label)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .label_style((FONT, SMALL_SIZE))
        .axis_desc_style((FONT, TEXT_SIZE))
        .bold_line_style(BLACK.mix(0.08))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let pixel = |x: f64, y: f64| -> Option<(i32, i32)> {
        let (x, y) = (to_axis(x, x_log)?, to_axis(y, y_log)?);
        Some(chart.backend_coord(&(x, y)))
    };
    for series in &plot.series {
        let colour = rgb(series.colour);
        let points: Vec<(i32, i32)> = series
            .points
            .iter()
            .filter_map(|p| pixel(p.x, p.y))
            .collect();
        line(root, &points, series.dash, colour, 2)?;
        for point in &series.points {
            if let Some((low, high)) = point.interval {
                let clamp = |v: f64| to_axis(v, y_log).unwrap_or(y_low).clamp(y_low, y_high);
                let x = to_axis(point.x, x_log).unwrap_or(f64::NAN);
                if x.is_finite() {
                    let (top, bottom) = (
                        chart.backend_coord(&(x, clamp(high))),
                        chart.backend_coord(&(x, clamp(low))),
                    );
                    root.draw(&PathElement::new(vec![top, bottom], colour.stroke_width(1)))?;
                    for end in [top, bottom] {
                        root.draw(&PathElement::new(
                            vec![(end.0 - 4, end.1), (end.0 + 4, end.1)],
                            colour.stroke_width(1),
                        ))?;
                    }
                }
            }
            if let (Some(shape), Some(at)) = (series.marker, pixel(point.x, point.y)) {
                marker(root, shape, at, 3, colour)?;
            }
        }
    }
    draw_labelled(root, plot, place, &pixel)?;
    if let Some(legend) = place.legend {
        draw_legend(root, &plot.series, legend)?;
    }
    Ok(())
}

/// Where a label of `w` × `h` pixels may go around a marker at (x, y):
/// beside, above, below and on the diagonals, at growing distances (the
/// nearest first).
fn label_places(x: i32, y: i32, w: i32, h: i32) -> Vec<(i32, i32, i32)> {
    let mut places = Vec::new();
    for step in 0..4 {
        let d = 8 + step * 14;
        for (px, py) in [
            (x + d, y - h / 2),
            (x - d - w, y - h / 2),
            (x - w / 2, y - d - h),
            (x - w / 2, y + d),
            (x + d - 4, y - d - h + 4),
            (x + d - 4, y + d - 4),
            (x - d - w + 4, y - d - h + 4),
            (x - d - w + 4, y + d - 4),
        ] {
            places.push((px, py, step));
        }
    }
    places
}

/// Labelled points: the markers, then each label at the place around its
/// marker that overlaps no other label or marker and stays in the data
/// area, nearest first (else where it overlaps least), with a thin leader
/// line when it had to move away.
fn draw_labelled<'a>(
    root: &Area<'a>,
    plot: &Plot,
    place: &PanelLayout,
    pixel: &dyn Fn(f64, f64) -> Option<(i32, i32)>,
) -> DrawResult<'a> {
    let at: Vec<Option<(i32, i32)>> = plot.labelled.iter().map(|p| pixel(p.x, p.y)).collect();
    let markers: Vec<Rect> = at
        .iter()
        .flatten()
        .map(|&(x, y)| Rect {
            x: x - 7,
            y: y - 7,
            w: 14,
            h: 14,
        })
        .collect();
    for (point, at) in plot.labelled.iter().zip(&at) {
        if let Some(at) = *at {
            marker(root, point.look.marker, at, 5, rgb(point.look.colour))?;
            if point.ringed {
                marker(root, Marker::Ring, at, 5, rgb(REFERENCE))?;
            }
        }
    }
    // The lines drawn (the Pareto frontier), every 3 pixels along them:
    // a label placed over one is hard to read.
    let on_lines: Vec<(i32, i32)> = plot
        .series
        .iter()
        .flat_map(|series| {
            let points: Vec<(i32, i32)> = series
                .points
                .iter()
                .filter_map(|p| pixel(p.x, p.y))
                .collect();
            points
                .windows(2)
                .flat_map(|pair| {
                    let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
                    let samples = ((x1 - x0).abs().max((y1 - y0).abs()) / 3).max(1);
                    (0..=samples)
                        .map(move |i| (x0 + (x1 - x0) * i / samples, y0 + (y1 - y0) * i / samples))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // Points in the crowded lower left first get the near places.
    let mut order: Vec<usize> = (0..plot.labelled.len()).collect();
    order.sort_by_key(|&i| at[i].map_or(i32::MAX, |(x, y)| x - y));
    let mut taken: Vec<Rect> = Vec::new();
    for index in order {
        let (point, Some((x, y))) = (&plot.labelled[index], at[index]) else {
            continue;
        };
        // A point another's label names (tied within noise) has none.
        if point.name.is_empty() {
            continue;
        }
        let (w, h) = (
            text_width(&point.name, SMALL_SIZE),
            (SMALL_SIZE / 1.24).ceil() as i32 + 2,
        );
        let cost = |&(cx, cy, step): &(i32, i32, i32)| {
            let rect = Rect { x: cx, y: cy, w, h };
            let overlap: i64 = taken.iter().chain(&markers).map(|r| r.overlap(&rect)).sum();
            let crossed = on_lines
                .iter()
                .filter(|&&(px, py)| {
                    (rect.x..rect.x + rect.w).contains(&px)
                        && (rect.y..rect.y + rect.h).contains(&py)
                })
                .count() as i64;
            let outside = if place.data.contains(&rect) {
                0
            } else {
                100_000
            };
            overlap * 100 + crossed * 400 + outside + i64::from(step) * 50
        };
        let places = label_places(x, y, w, h);
        let (bx, by, step) =
            places
                .iter()
                .min_by_key(|c| cost(c))
                .copied()
                .unwrap_or((x + 8, y, 0));
        taken.push(Rect { x: bx, y: by, w, h });
        if step > 0 {
            // From the marker to the nearest point of the label's box.
            let end = (x.clamp(bx, bx + w), y.clamp(by, by + h));
            root.draw(&PathElement::new(
                vec![(x, y), end],
                RGBColor(150, 150, 150).stroke_width(1),
            ))?;
        }
        text(root, &point.name, (bx, by), SMALL_SIZE, BLACK, false)?;
    }
    Ok(())
}

fn draw_legend<'a>(root: &Area<'a>, series: &[Series], legend: Rect) -> DrawResult<'a> {
    root.draw(&Rectangle::new(
        [
            (legend.x, legend.y),
            (legend.x + legend.w, legend.y + legend.h),
        ],
        BLACK.mix(0.3).stroke_width(1),
    ))?;
    for (row, series) in series.iter().enumerate() {
        let y = legend.y + 6 + row as i32 * LEGEND_ROW_H + LEGEND_ROW_H / 2;
        let (x0, x1) = (legend.x + 6, legend.x + 6 + LEGEND_SAMPLE_W);
        let colour = rgb(series.colour);
        line(root, &[(x0, y), (x1, y)], series.dash, colour, 2)?;
        if let Some(shape) = series.marker {
            marker(root, shape, (x0.midpoint(x1), y), 3, colour)?;
        }
        let height = (TEXT_SIZE / 1.24) as i32;
        text(
            root,
            &series.name,
            (x1 + 10, y - height / 2 - 1),
            TEXT_SIZE,
            BLACK,
            false,
        )?;
    }
    Ok(())
}

/// A colour mixed with white: `share` of the colour.
fn tint(colour: Colour, share: f64) -> RGBColor {
    let RGBColor(r, g, b) = rgb(colour);
    let mix = |c: u8| (f64::from(c) * share + 255.0 * (1.0 - share)).round() as u8;
    RGBColor(mix(r), mix(g), mix(b))
}

fn draw_grid<'a>(root: &Area<'a>, grid: &Grid, place: &PanelLayout) -> DrawResult<'a> {
    let data = place.data;
    text(
        root,
        &grid.title,
        (place.outer.x, place.outer.y + 2),
        PANEL_TITLE_SIZE,
        BLACK,
        false,
    )?;
    for (column, header) in grid.columns.iter().enumerate() {
        let x = data.x + column as i32 * GRID_CELL_W + GRID_CELL_W / 2;
        text(
            root,
            header,
            (x, data.y - GRID_HEADER_H + 4),
            TEXT_SIZE,
            BLACK,
            true,
        )?;
    }
    text(
        root,
        &grid.column_title,
        (place.outer.x, data.y - GRID_HEADER_H + 4),
        TEXT_SIZE,
        BLACK,
        false,
    )?;
    for (row, header) in grid.rows.iter().enumerate() {
        let y = data.y + row as i32 * GRID_CELL_H + GRID_CELL_H / 2 - 8;
        text(
            root,
            header,
            (place.outer.x + 4, y),
            TEXT_SIZE,
            BLACK,
            false,
        )?;
    }
    for cell in &grid.cells {
        let (x, y) = (
            data.x + cell.column as i32 * GRID_CELL_W,
            data.y + cell.row as i32 * GRID_CELL_H,
        );
        let parts = cell.parts.len().max(1) as i32;
        let part_h = GRID_CELL_H / parts;
        for (index, part) in cell.parts.iter().enumerate() {
            draw_part(root, part, x, y + index as i32 * part_h, part_h)?;
        }
        root.draw(&Rectangle::new(
            [(x, y), (x + GRID_CELL_W, y + GRID_CELL_H)],
            BLACK.mix(0.35).stroke_width(1),
        ))?;
    }
    Ok(())
}

/// One part of a grid cell (its heading, then the filters it names) at
/// `x`, `top`, `part_h` high.
fn draw_part<'a>(
    root: &Area<'a>,
    part: &CellPart,
    x: i32,
    top: i32,
    part_h: i32,
) -> DrawResult<'a> {
    // Filters tied within noise share the band, each its stripe
    // and marker.
    let named = part.filters.len().max(1) as i32;
    let stripe = GRID_CELL_W / named;
    for (slot, (_, look)) in part.filters.iter().enumerate() {
        let left = x + slot as i32 * stripe;
        root.draw(&Rectangle::new(
            [(left, top), (left + stripe, top + part_h)],
            tint(look.colour, 0.22).filled(),
        ))?;
    }
    for (slot, (_, look)) in part.filters.iter().enumerate() {
        marker(
            root,
            look.marker,
            (x + 10 + slot as i32 * 10, top + part_h / 2 + 7),
            4,
            rgb(look.colour),
        )?;
    }
    let name_x = x + 12 + named * 10;
    // Tied names two to a line, each line set smaller when it is
    // too long for the cell.
    let names: Vec<&str> = part.name.split(" = ").collect();
    let lines: Vec<String> = names
        .chunks(2)
        .enumerate()
        .map(|(index, pair)| {
            let line = pair.join(" = ");
            if index == 0 {
                line
            } else {
                format!("= {line}")
            }
        })
        .collect();
    let room = f64::from(GRID_CELL_W - (name_x - x) - 4);
    let longest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let size = SMALL_SIZE.min(room / (0.56 * longest.max(1) as f64));
    let step = size as i32 + 1;
    let first = top + part_h / 2 + 1 - (lines.len() as i32 - 1) * step / 2;
    text(
        root,
        &part.heading,
        (x + 6, top + 3),
        SMALL_SIZE,
        RGBColor(60, 60, 60),
        false,
    )?;
    for (index, line) in lines.iter().enumerate() {
        text(
            root,
            line,
            (name_x, first + index as i32 * step),
            size,
            BLACK,
            false,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::style::PALETTE;

    #[test]
    fn ticks_fall_on_round_values() {
        let labels = |range: std::ops::Range<f64>, log: bool, most: usize| -> Vec<String> {
            ticks(&range, log, most)
                .into_iter()
                .map(|t| axis_label(t, log))
                .collect()
        };
        // Decades where the axis spans them (n from 10^4 to 10^7).
        assert_eq!(labels(3.8..7.2, true, 8), ["1e4", "1e5", "1e6", "1e7"]);
        // Every second decade when they are too many.
        assert_eq!(labels(-6.1..0.1, true, 4), ["1e-6", "1e-4", "0.01", "1"]);
        // Within a decade and a bit: 1-2-5.
        assert_eq!(labels(0.9..2.5, true, 7), ["10", "20", "50", "100", "200"]);
        // Within a decade: finer round values (a ratio around 1).
        assert_eq!(
            labels(0.65f64.log10()..1.45f64.log10(), true, 7),
            ["0.7", "0.8", "0.9", "1"]
        );
        assert_eq!(labels(0.0..1.2, true, 7), ["1", "2", "5", "10"]);
        // Linear: steps of 1, 2 or 5 times a power of ten.
        assert_eq!(
            labels(0.0..3.2, false, 8),
            ["0", "0.5", "1", "1.5", "2", "2.5", "3"]
        );
        assert_eq!(labels(0.0..170.0, false, 7), ["0", "50", "100", "150"]);
    }

    #[test]
    fn log_labels_read_as_powers() {
        assert_eq!(axis_label(-3.0, true), "1e-3");
        assert_eq!(axis_label(2.0, true), "100");
        assert_eq!(axis_label(250f64.log10(), true), "250");
        assert_eq!(axis_label(63.1f64.log10(), true), "63");
        assert_eq!(axis_label(2.5f64.log10(), true), "2.5");
        assert_eq!(axis_label(8.0, true), "1e8");
        assert_eq!(axis_label(4.0, true), "1e4");
        assert_eq!(axis_label(32_000f64.log10(), true), "3.2e4");
        assert_eq!(axis_label(0.003_2f64.log10(), true), "3.2e-3");
        assert_eq!(axis_label(0.5, false), "0.5");
        assert_eq!(axis_label(0.79f64.log10(), true), "0.79");
        assert_eq!(axis_label(0.063f64.log10(), true), "0.063");
        assert_eq!(axis_label(-1.0, true), "0.1");
        assert_eq!(axis_label(-2.0, true), "0.01");
        assert_eq!(axis_label(0.0, true), "1");
        assert_eq!(axis_label(150.0, false), "150");
        assert_eq!(axis_label(2.25, false), "2.25");
    }

    #[test]
    fn dashes_alternate_along_the_line() {
        let pieces = dashed(&[(0, 0), (40, 0)], Dash::Dashed);
        assert_eq!(pieces.len(), 4, "{pieces:?}");
        assert_eq!(pieces[0], [(0, 0), (8, 0)]);
        assert_eq!(pieces[1][0], (13, 0));
        assert_eq!(
            dashed(&[(0, 0), (40, 0)], Dash::Solid),
            [vec![(0, 0), (40, 0)]]
        );
    }

    fn sample() -> Figure {
        let look = Look {
            colour: PALETTE[0],
            marker: Marker::Square,
        };
        let series = |name: &str, dash| {
            Series::filter(
                name.to_owned(),
                "a",
                look,
                dash,
                vec![
                    Point {
                        x: 1e-3,
                        y: 2.0,
                        interval: Some((1.5, 2.5)),
                    },
                    Point::at(1e-2, 3.0),
                    Point::at(0.0, 1.0),
                ],
            )
        };
        let plot = Plot {
            title: "panel".into(),
            x: Axis::new("x", true),
            y: Axis::new("y", true),
            series: vec![
                series("a", Dash::Solid),
                series("a (batched)", Dash::Dashed),
                Series::reference("bound", vec![Point::at(1e-3, 1.0), Point::at(1e-2, 1.5)]),
            ],
            labelled: vec![Labelled {
                name: "a label".into(),
                filter: "a".into(),
                look,
                ringed: true,
                x: 2e-3,
                y: 2.2,
            }],
        };
        let grid = Grid {
            title: "grid".into(),
            column_title: "n".into(),
            columns: vec!["10^4".into(), "10^5".into()],
            rows: vec!["p = 1e-2".into()],
            cells: vec![GridCell {
                column: 1,
                row: 0,
                parts: vec![CellPart {
                    heading: "fewest bits: 9.6".into(),
                    name: "a".into(),
                    filters: vec![("a".into(), look)],
                }],
            }],
        };
        Figure {
            title: "t".into(),
            panels: vec![
                Panel::Plot(plot.clone()),
                Panel::Plot(plot),
                Panel::Grid(grid),
            ],
            shared_axes: true,
        }
    }

    #[test]
    fn legends_sit_beside_the_data_and_panels_apart() {
        let figure = sample();
        let layout = layout(&figure);
        assert_eq!(layout.panels.len(), 3);
        for (index, panel) in layout.panels.iter().enumerate() {
            assert!(panel.outer.contains(&panel.data));
            if let Some(legend) = panel.legend {
                assert!(!legend.intersects(&panel.data));
                assert!(panel.outer.contains(&legend));
            }
            for other in &layout.panels[index + 1..] {
                assert!(!panel.outer.intersects(&other.outer));
            }
            assert!(panel.outer.x + panel.outer.w <= layout.width);
            assert!(panel.outer.y + panel.outer.h <= layout.height);
        }
        assert!(layout.panels[2].legend.is_none());
    }

    #[test]
    fn draws_an_svg() {
        let dir = std::env::temp_dir().join(format!("filterlab-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("figure.svg");
        draw(&sample(), &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("bound") && svg.contains("a (batched)"));
        assert!(svg.contains("a label") && svg.contains("fewest bits: 9.6"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
