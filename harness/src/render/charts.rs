//! What the report plots: one [`Figure`] per SVG file, built from the
//! measurements. Most are small multiples: one panel per family of
//! filters (the style table's), at most eight lines a panel, each filter
//! in its own colour and marker in every figure; a second line of the same
//! filter (batched, theory, a second target) is dashed in its colour. The
//! two summary charts: a Pareto chart per target p (bits per item against
//! the one-key negative lookup, labelled points, the frontier drawn) and
//! the skyline map (per (n, p), the fewest bits and the fastest lookup
//! meeting p), after Lang et al., "Performance-Optimal Filtering" (VLDB 2019).

use filterlab_core::theory::wilson_interval;
use filterlab_peers::Mode;

use crate::error::Error;
use crate::experiments::capacity::{CapacityResults, CapacityRow};
use crate::experiments::churn::{ChurnResults, ChurnRow};
use crate::experiments::growth::{GrowthResults, GrowthRow};
use crate::experiments::measurements::Measurements;
use crate::experiments::speed::{Operation, SpeedResults};
use crate::experiments::sweep::{SweepResults, SweepRow};
use crate::registry::Entry;
use crate::render::evidence::label;
use crate::render::pick::{self, Contender, Interval, Pick, names};
use crate::render::plot::{
    self, Axis, CellPart, Dash, Figure, Grid, GridCell, Labelled, Panel, Plot, Point, Series,
};
use crate::render::style::{Family, Marker, Styles};
use crate::text::format_count;

/// The confidence of the intervals drawn on the past-capacity FPP.
const CAPACITY_CONFIDENCE: f64 = 0.99;

/// Most lines a panel holds.
pub const MAX_SERIES: usize = 8;

/// A figure and the file it is drawn to.
pub struct FigureFile {
    /// The SVG file name.
    pub file: String,
    /// The figure.
    pub figure: Figure,
}

/// One line of one filter: its legend label, dash and points.
struct FilterLine {
    filter: String,
    name: String,
    dash: Dash,
    points: Vec<Point>,
}

/// What every figure needs: the filters and their styles.
struct Ctx<'a> {
    entries: &'a [Entry],
    styles: Styles,
}

impl Ctx<'_> {
    fn label(&self, filter: &str) -> String {
        label(self.entries, filter)
    }

    /// A line of `filter`, labelled with its name and `suffix`.
    fn line(
        &self,
        filter: &str,
        suffix: &str,
        dash: Dash,
        points: Vec<Point>,
    ) -> Option<FilterLine> {
        (!points.is_empty()).then(|| FilterLine {
            filter: filter.to_owned(),
            name: format!("{}{suffix}", self.label(filter)),
            dash,
            points,
        })
    }

    /// One line per entry that has points: the points `point` makes of the
    /// rows whose filter (`filter_of`) it is, labelled with its name and
    /// `suffix`, drawn in `dash`.
    fn lines<R>(
        &self,
        rows: &[R],
        filter_of: fn(&R) -> &str,
        point: impl Fn(&R) -> Option<Point>,
        (suffix, dash): (&str, Dash),
    ) -> Vec<FilterLine> {
        self.entries
            .iter()
            .filter_map(|entry| {
                let points = rows
                    .iter()
                    .filter(|r| filter_of(r) == entry.name)
                    .filter_map(&point)
                    .collect();
                self.line(entry.name, suffix, dash, points)
            })
            .collect()
    }

    /// `lines` as panels, one per family (in the style table's order),
    /// each with `references` after its filters; a family whose lines do
    /// not fit in one panel is split, a filter's lines kept together.
    fn family_panels(
        &self,
        x: &Axis,
        y: &Axis,
        lines: &[FilterLine],
        references: &[Series],
    ) -> Vec<Panel> {
        let mut panels = Vec::new();
        for family in Family::ALL {
            let mine: Vec<&FilterLine> = lines
                .iter()
                .filter(|l| self.styles.family(&l.filter) == family)
                .collect();
            let groups = self.group(&mine);
            let chunks = chunk(&groups, MAX_SERIES.saturating_sub(references.len()).max(1));
            let count = chunks.len();
            for (index, chunk) in chunks.into_iter().enumerate() {
                let mut series: Vec<Series> = chunk
                    .iter()
                    .flat_map(|group| group.iter())
                    .map(|line| self.series(line))
                    .collect();
                series.extend(references.iter().cloned());
                let title = if count > 1 {
                    format!("{} ({} of {count})", family.title(), index + 1)
                } else {
                    family.title().to_owned()
                };
                panels.push(Panel::Plot(Plot {
                    title,
                    x: x.clone(),
                    y: y.clone(),
                    series,
                    labelled: Vec::new(),
                }));
            }
        }
        panels
    }

    /// `lines` grouped by filter, in registry order.
    fn group<'l>(&self, lines: &[&'l FilterLine]) -> Vec<Vec<&'l FilterLine>> {
        let mut groups: Vec<Vec<&FilterLine>> = Vec::new();
        let mut filters: Vec<&str> = lines.iter().map(|l| l.filter.as_str()).collect();
        let position = |f: &str| {
            self.entries
                .iter()
                .position(|e| e.name == f)
                .unwrap_or(usize::MAX)
        };
        filters.sort_by_key(|f| position(f));
        filters.dedup();
        for filter in filters {
            groups.push(
                lines
                    .iter()
                    .copied()
                    .filter(|l| l.filter == filter)
                    .collect(),
            );
        }
        groups
    }

    fn series(&self, line: &FilterLine) -> Series {
        Series::filter(
            line.name.clone(),
            &line.filter,
            self.styles.look(&line.filter),
            line.dash,
            line.points.clone(),
        )
    }
}

/// Consecutive groups packed into chunks of at most `room` lines.
fn chunk<T>(groups: &[Vec<T>], room: usize) -> Vec<Vec<&Vec<T>>> {
    let mut chunks: Vec<Vec<&Vec<T>>> = Vec::new();
    let mut used = 0;
    for group in groups {
        if chunks.is_empty() || used + group.len() > room {
            chunks.push(Vec::new());
            used = 0;
        }
        used += group.len();
        if let Some(last) = chunks.last_mut() {
            last.push(group);
        }
    }
    chunks
}

/// The report's figures, with their file names.
pub fn figures(measured: &Measurements) -> Vec<FigureFile> {
    let ctx = Ctx {
        entries: &measured.entries,
        styles: Styles::new(&measured.entries),
    };
    let mut figures = Vec::new();
    if let Some(sweep) = &measured.sweep {
        figures.extend(pareto_figures(&ctx, measured, sweep));
        figures.extend(skyline_figure(&ctx, measured, sweep));
    }
    figures.extend(accuracy_figure(&ctx, measured));
    figures.extend(space_figure(&ctx, measured));
    if let Some(speed) = &measured.speed {
        figures.extend(speed_figures(measured, speed));
    }
    if let Some(capacity) = &measured.capacity {
        figures.extend(capacity_figures(&ctx, measured, capacity));
    }
    if let Some(churn) = &measured.churn {
        figures.extend(churn_figures(&ctx, measured, churn));
    }
    if let Some(growth) = &measured.growth {
        figures.extend(growth_figures(&ctx, measured, growth));
    }
    figures.retain(|f| !f.figure.panels.is_empty());
    figures
}

/// Draws every figure into `dir`.
///
/// # Errors
///
/// When a file cannot be written.
pub fn draw_all(figures: &[FigureFile], dir: &std::path::Path) -> Result<(), Error> {
    for figure in figures {
        plot::draw(&figure.figure, &dir.join(&figure.file))?;
    }
    Ok(())
}

fn figure(file: String, title: String, panels: Vec<Panel>, shared_axes: bool) -> FigureFile {
    FigureFile {
        file,
        figure: Figure {
            title,
            panels,
            shared_axes,
        },
    }
}

/// The sweep size the Pareto charts show: the configured one, or the
/// largest measured below it.
pub fn pareto_items(measured: &Measurements, sweep: &SweepResults) -> Option<u64> {
    let target = measured.config.pareto_items;
    sweep
        .rows
        .iter()
        .map(|r| r.n)
        .filter(|&n| n <= target)
        .max()
        .or_else(|| sweep.rows.iter().map(|r| r.n).min())
}

/// A sweep row as a contender: `by_bits` ranks by bits per item (then the
/// lookup), otherwise by the lookup (then bits); the lookup's interval is
/// the fastest and slowest of its rounds.
fn contender(row: &SweepRow, by_bits: bool) -> Contender<&SweepRow> {
    let bits = Interval::exact(row.bits_per_item);
    let ns = Interval::spread(row.negative_ns, row.min_negative_ns, row.max_negative_ns);
    let (measure, lookup) = if by_bits { (bits, ns) } else { (ns, bits) };
    Contender {
        item: row,
        measure,
        lookup: Some(lookup),
    }
}

/// The Pareto-optimal rows among `rows` by their medians: none of them
/// has another with both fewer bits and a faster lookup; fastest first
/// (the staircase the Pareto chart draws).
pub fn frontier<'a>(rows: &[&'a SweepRow]) -> Vec<&'a SweepRow> {
    let mut sorted: Vec<&SweepRow> = rows.to_vec();
    sorted.sort_by(|a, b| {
        a.negative_ns
            .total_cmp(&b.negative_ns)
            .then(a.bits_per_item.total_cmp(&b.bits_per_item))
    });
    let mut front: Vec<&SweepRow> = Vec::new();
    for row in sorted {
        if front
            .last()
            .is_none_or(|last| row.bits_per_item < last.bits_per_item)
        {
            front.push(row);
        }
    }
    front
}

/// Each frontier row with the rows of `rows` tied with it within noise on
/// both bits and lookup (one label on the Pareto chart names them all),
/// fastest first; a row joins the first frontier row it ties with.
pub fn frontier_ties<'a>(front: &[&'a SweepRow], rows: &[&'a SweepRow]) -> Vec<Vec<&'a SweepRow>> {
    let tied = |a: &SweepRow, b: &SweepRow| {
        let (a, b) = (contender(a, true), contender(b, true));
        a.measure.ties(&b.measure) && a.lookup.zip(b.lookup).is_some_and(|(x, y)| x.ties(&y))
    };
    let mut placed: Vec<&str> = front.iter().map(|r| r.filter.as_str()).collect();
    front
        .iter()
        .map(|&on| {
            let mut group = vec![on];
            for &row in rows {
                if !placed.contains(&row.filter.as_str()) && tied(on, row) {
                    placed.push(&row.filter);
                    group.push(row);
                }
            }
            group
        })
        .collect()
}

/// The Pareto file of target `p`.
pub fn pareto_file(p: f64) -> String {
    format!("pareto_p{p:e}.svg")
}

/// One Pareto chart per target p: every filter meeting p at one n a
/// labelled point, bits per item against one-key negative lookup ns, the
/// frontier drawn as a staircase.
fn pareto_figures(ctx: &Ctx<'_>, measured: &Measurements, sweep: &SweepResults) -> Vec<FigureFile> {
    let Some(n) = pareto_items(measured, sweep) else {
        return Vec::new();
    };
    let mut figures = Vec::new();
    for &p in &measured.config.accuracy_fpps {
        let rows: Vec<&SweepRow> = sweep
            .rows
            .iter()
            .filter(|r| r.n == n && r.target_fpp == p && r.meets_target && r.negative_ns > 0.0)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let dynamic: Vec<&SweepRow> = rows
            .iter()
            .copied()
            .filter(|r| takes_inserts(ctx.entries, &r.filter))
            .collect();
        let front = frontier(&dynamic);
        // Frontier points tied within noise: the first one's label names
        // them all, the others carry none.
        let mut tie_labels: Vec<(String, String)> = Vec::new();
        for group in frontier_ties(&front, &dynamic)
            .iter()
            .filter(|g| g.len() > 1)
        {
            let named: Vec<String> = group.iter().map(|r| ctx.label(&r.filter)).collect();
            let label = format!("{} (within noise)", named.join(" = "));
            for (index, row) in group.iter().enumerate() {
                let text = if index == 0 {
                    label.clone()
                } else {
                    String::new()
                };
                tie_labels.push((row.filter.clone(), text));
            }
        }
        let mut steps = Vec::new();
        for (index, row) in front.iter().enumerate() {
            if index > 0 {
                steps.push(Point::at(row.negative_ns, front[index - 1].bits_per_item));
            }
            steps.push(Point::at(row.negative_ns, row.bits_per_item));
        }
        let labelled: Vec<Labelled> = rows
            .iter()
            .map(|r| Labelled {
                name: if let Some((_, tied)) = tie_labels.iter().find(|(f, _)| *f == r.filter) {
                    tied.clone()
                } else {
                    ctx.label(&r.filter)
                },
                filter: r.filter.clone(),
                look: ctx.styles.look(&r.filter),
                ringed: !takes_inserts(ctx.entries, &r.filter),
                x: r.negative_ns,
                y: r.bits_per_item,
            })
            .collect();
        let missing = sweep
            .rows
            .iter()
            .filter(|r| r.n == n && r.target_fpp == p && !r.meets_target)
            .count();
        let plot = Plot {
            title: format!(
                "filters meeting p = {p:e} at n = {} ({missing} not meeting it left out)",
                format_count(n)
            ),
            x: Axis::new("ns per negative lookup, one key at a time", true),
            y: Axis::new("bits per item", true),
            series: {
                let mut series = vec![Series::reference(
                    "Pareto frontier (filters that take inserts)",
                    steps,
                )];
                if labelled.iter().any(|l| l.ringed) {
                    series.push(Series::key(STATIC_KEY, Marker::Ring));
                }
                series
            },
            labelled,
        };
        figures.push(figure(
            pareto_file(p),
            format!("Bits per item against lookup time, p = {p:e}: lower left is better"),
            vec![Panel::Plot(plot)],
            false,
        ));
    }
    figures
}

/// The legend entry of the ring around a static filter's point.
const STATIC_KEY: &str = "ringed: built once from its keys (static)";

/// The skyline map: per (n, p), the filter taking inserts with the fewest
/// bits meeting p, the one with the fastest one-key negative lookup meeting
/// p, and the static layer: the filter built once with the fewest bits
/// meeting p.
fn skyline_figure(
    ctx: &Ctx<'_>,
    measured: &Measurements,
    sweep: &SweepResults,
) -> Option<FigureFile> {
    let mut sizes: Vec<u64> = sweep.rows.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let fpps = &measured.config.accuracy_fpps;
    if sizes.is_empty() {
        return None;
    }
    let mut cells = Vec::new();
    for (column, &n) in sizes.iter().enumerate() {
        for (row, &p) in fpps.iter().enumerate() {
            let (fewest, fastest) = skyline_cell(ctx.entries, sweep, n, p);
            let built_once = static_skyline_cell(ctx.entries, sweep, n, p);
            let part = |what: &str, chosen: Option<&Pick<&SweepRow>>| {
                let Some(chosen) = chosen else {
                    return CellPart {
                        heading: what.to_owned(),
                        name: "none meets p".to_owned(),
                        filters: Vec::new(),
                    };
                };
                let best = chosen.best.item;
                let figure = if what == FASTEST {
                    format!("{:.0} ns", best.negative_ns)
                } else {
                    format!("{:.1} bits/item", best.bits_per_item)
                };
                let tie = if chosen.is_tie() {
                    " · tie within noise"
                } else {
                    ""
                };
                CellPart {
                    heading: format!("{what}: {figure}{tie}"),
                    name: names(chosen, |r| ctx.label(&r.filter)).replace(" (within noise)", ""),
                    filters: chosen
                        .all()
                        .map(|c| (c.item.filter.clone(), ctx.styles.look(&c.item.filter)))
                        .collect(),
                }
            };
            cells.push(GridCell {
                column,
                row,
                parts: vec![
                    part(FEWEST, fewest.as_ref()),
                    part(FASTEST, fastest.as_ref()),
                    part(FEWEST_STATIC, built_once.as_ref()),
                ],
            });
        }
    }
    let grid = Grid {
        title: "Top: fewest bits per item meeting p · middle: fastest one-key negative lookup \
                meeting p (filters that take inserts) · bottom: fewest bits meeting p, built once"
            .to_owned(),
        column_title: "n →".to_owned(),
        columns: sizes
            .iter()
            .map(|&n| format!("n = {}", format_count(n)))
            .collect(),
        rows: fpps.iter().map(|p| format!("p = {p:e}")).collect(),
        cells,
    };
    Some(figure(
        "skyline.svg".to_owned(),
        "Skyline map: which filter wins at each size and target".to_owned(),
        vec![Panel::Grid(grid)],
        false,
    ))
}

/// Whether the filter with registry name `filter` takes inserts (a name
/// no entry has counts as taking them).
fn takes_inserts(entries: &[Entry], filter: &str) -> bool {
    entries
        .iter()
        .find(|e| e.name == filter)
        .is_none_or(Entry::takes_inserts)
}

/// The skyline's three headings.
const FEWEST: &str = "fewest bits";
const FASTEST: &str = "fastest lookup";
const FEWEST_STATIC: &str = "built once, fewest bits";

/// The sweep rows at (n, p) meeting p, of filters that take inserts or
/// (`inserts` false) of filters built once.
fn meeting<'a>(
    entries: &[Entry],
    sweep: &'a SweepResults,
    (n, p): (u64, f64),
    inserts: bool,
) -> Vec<&'a SweepRow> {
    sweep
        .rows
        .iter()
        .filter(|r| {
            r.n == n
                && r.target_fpp == p
                && r.meets_target
                && takes_inserts(entries, &r.filter) == inserts
        })
        .collect()
}

/// Among the filters built once meeting p at (n, p), the pick by bits per
/// item, with the filters tied with it within noise ([`pick`]).
pub fn static_skyline_cell<'a>(
    entries: &[Entry],
    sweep: &'a SweepResults,
    n: u64,
    p: f64,
) -> Option<Pick<&'a SweepRow>> {
    let contenders: Vec<Contender<&SweepRow>> = meeting(entries, sweep, (n, p), false)
        .into_iter()
        .map(|r| contender(r, true))
        .collect();
    pick::pick(&contenders)
}

/// Among the filters that take inserts meeting p at (n, p), the pick by
/// bits per item and the pick by one-key negative lookup, each with the
/// filters tied with it within noise ([`pick`]).
pub fn skyline_cell<'a>(
    entries: &[Entry],
    sweep: &'a SweepResults,
    n: u64,
    p: f64,
) -> (Option<Pick<&'a SweepRow>>, Option<Pick<&'a SweepRow>>) {
    let meeting = meeting(entries, sweep, (n, p), true);
    let by = |by_bits: bool| {
        let contenders: Vec<Contender<&SweepRow>> = meeting
            .iter()
            .filter(|r| by_bits || r.negative_ns > 0.0)
            .map(|r| contender(r, by_bits))
            .collect();
        pick::pick(&contenders)
    };
    (by(true), by(false))
}

/// Measured FPP over target with its interval, per target, at the largest n.
fn accuracy_figure(ctx: &Ctx<'_>, measured: &Measurements) -> Option<FigureFile> {
    let largest = measured.accuracy.iter().map(|r| r.n).max()?;
    let confidence = measured.accuracy.first().map_or(0.0, |r| r.confidence);
    let lines = ctx.lines(
        &measured.accuracy,
        |r| &r.filter,
        |r| {
            (r.n == largest && r.empirical_fpp > 0.0).then(|| Point {
                x: r.target_fpp,
                y: r.empirical_fpp / r.target_fpp,
                interval: Some((r.ci_low / r.target_fpp, r.ci_high / r.target_fpp)),
            })
        },
        ("", Dash::Solid),
    );
    let fpps = &measured.config.accuracy_fpps;
    let target = Series::reference(
        "target (measured = p)",
        fpps.iter().map(|&p| Point::at(p, 1.0)).collect(),
    );
    Some(figure(
        "accuracy.svg".to_owned(),
        format!(
            "Measured FPP / target p at n = {}, with {:.3}% Wilson intervals",
            format_count(largest),
            confidence * 100.0
        ),
        ctx.family_panels(
            &Axis::new("target p", true),
            &Axis::new("measured FPP / p", true),
            &lines,
            &[target],
        ),
        false,
    ))
}

/// Bits per item against target, beside the Bloom optimum and the bound.
fn space_figure(ctx: &Ctx<'_>, measured: &Measurements) -> Option<FigureFile> {
    let n = measured.space.first()?.n;
    let lines = ctx.lines(
        &measured.space,
        |r| &r.filter,
        |r| Some(Point::at(r.target_fpp, r.bits_per_item)),
        ("", Dash::Solid),
    );
    let fpps = &measured.config.accuracy_fpps;
    let curve = |name: &str, f: fn(f64) -> f64| {
        Series::reference(name, fpps.iter().map(|&p| Point::at(p, f(p))).collect())
    };
    let references = [
        curve("lower bound log2(1/p)", |p| -p.log2()),
        curve("Bloom optimum 1.44·log2(1/p)", |p| {
            -p.ln() / std::f64::consts::LN_2.powi(2)
        })
        .dashed(Dash::Dotted),
    ];
    Some(figure(
        "space.svg".to_owned(),
        format!("Bits per item against target p, n = {}", format_count(n)),
        ctx.family_panels(
            &Axis::new("target p", true),
            &Axis::new("bits per item", true),
            &lines,
            &references,
        ),
        true,
    ))
}

/// The speed figures' operations: file stem, operations drawn, title.
pub const OPERATION_FIGURES: [(&str, &[Operation], &str); 4] = [
    (
        "insert",
        &[Operation::Insert, Operation::Build],
        "Insert (static filters: build, per key)",
    ),
    (
        "lookup_positive",
        &[Operation::LookupPositive],
        "Positive lookup",
    ),
    (
        "lookup_negative",
        &[Operation::LookupNegative],
        "Negative lookup",
    ),
    ("remove", &[Operation::Remove], "Remove"),
];

/// A filter's points for operations in a mode: `(filter, ops, mode)`.
pub type OperationPoints<'a> = dyn Fn(&str, &[Operation], Mode) -> Vec<Point> + 'a;

/// One figure per operation of [`OPERATION_FIGURES`], a measure against
/// the items in the filter by family, one key at a time solid and batched
/// dashed: the speed figures, and `filterlab bench`'s counts. Files are
/// named `{prefix}_{operation}.svg`; `points(filter, ops, mode)` gives a
/// filter's points, `title(what)` a figure's title (to which "dashed:
/// batched" is added when the figure has batched lines).
pub fn operation_figures(
    entries: &[Entry],
    (prefix, y): (&str, &Axis),
    points: &OperationPoints<'_>,
    title: &dyn Fn(&str) -> String,
) -> Vec<FigureFile> {
    let ctx = Ctx {
        entries,
        styles: Styles::new(entries),
    };
    let mut figures = Vec::new();
    for (stem, ops, what) in OPERATION_FIGURES {
        let mut lines = Vec::new();
        for entry in entries {
            for (mode, suffix, dash) in [
                (Mode::OneKey, "", Dash::Solid),
                (Mode::Batched, " (batched)", Dash::Dashed),
            ] {
                lines.extend(ctx.line(entry.name, suffix, dash, points(entry.name, ops, mode)));
            }
        }
        if lines.is_empty() {
            continue;
        }
        let batched = lines.iter().any(|line| line.dash == Dash::Dashed);
        figures.push(figure(
            format!("{prefix}_{stem}.svg"),
            if batched {
                format!("{}; dashed: batched", title(what))
            } else {
                title(what)
            },
            ctx.family_panels(&Axis::new("items in the filter", true), y, &lines, &[]),
            true,
        ));
    }
    figures
}

/// ns per operation against n, one figure per operation.
fn speed_figures(measured: &Measurements, speed: &SpeedResults) -> Vec<FigureFile> {
    let fpp = measured.config.speed_fpp;
    operation_figures(
        &measured.entries,
        ("speed", &Axis::new("ns per operation", true)),
        &|filter, ops, mode| {
            speed
                .rows
                .iter()
                .filter(|r| r.filter == filter && r.mode == mode && ops.contains(&r.op))
                .map(|r| Point::at(r.n as f64, r.ns_per_op))
                .collect()
        },
        &|what| format!("{what}: ns per operation (median), p = {fpp}"),
    )
}

/// A past-capacity FPP as a point with its Wilson interval; none for an
/// FPP of 0 (a log axis cannot show it).
fn capacity_fpp_point(row: &CapacityRow, queries: u64) -> Option<Point> {
    (row.empirical_fpp > 0.0).then(|| {
        let found = (row.empirical_fpp * queries as f64).round() as u64;
        Point {
            x: row.load,
            y: row.empirical_fpp,
            interval: Some(wilson_interval(found, queries, CAPACITY_CONFIDENCE)),
        }
    })
}

/// The past-capacity lines of the filters `only` accepts: each filter's
/// points, labelled with its name and `suffix`, drawn in `dash`.
fn capacity_lines(
    ctx: &Ctx<'_>,
    capacity: &CapacityResults,
    point: &dyn Fn(&CapacityRow) -> Option<Point>,
    (suffix, dash): (&str, Dash),
    only: &dyn Fn(&str) -> bool,
) -> Vec<FilterLine> {
    ctx.lines(
        &capacity.rows,
        |r| &r.filter,
        |r| point(r).filter(|_| only(&r.filter)),
        (suffix, dash),
    )
}

/// FPP, memory, refusals and losses against load past capacity.
fn capacity_figures(
    ctx: &Ctx<'_>,
    measured: &Measurements,
    capacity: &CapacityResults,
) -> Vec<FigureFile> {
    let config = &measured.config;
    let lines_of = |point: &dyn Fn(&CapacityRow) -> Option<Point>,
                    suffix: &str,
                    dash: Dash,
                    only: &dyn Fn(&str) -> bool| {
        capacity_lines(ctx, capacity, point, (suffix, dash), only)
    };
    let every = |_: &str| true;
    let share = |count: u64, r: &CapacityRow| count as f64 / r.offered.max(1) as f64;
    let losing = |f: &str| {
        capacity
            .rows
            .iter()
            .any(|r| r.filter == f && r.false_negatives > 0)
    };
    let refusing =
        |f: &str| losing(f) || capacity.rows.iter().any(|r| r.filter == f && r.refused > 0);
    let fpp = lines_of(
        &|r| capacity_fpp_point(r, config.capacity_queries),
        "",
        Dash::Solid,
        &every,
    );
    let memory = lines_of(
        &|r| {
            Some(Point::at(
                r.load,
                r.memory_bytes as f64 * 8.0 / r.capacity as f64,
            ))
        },
        "",
        Dash::Solid,
        &every,
    );
    let mut refused = lines_of(
        &|r| Some(Point::at(r.load, share(r.refused, r))),
        " refused",
        Dash::Solid,
        &refusing,
    );
    refused.extend(lines_of(
        &|r| Some(Point::at(r.load, share(r.false_negatives, r))),
        " lost",
        Dash::Dashed,
        &losing,
    ));
    let load = Axis::new("keys offered / capacity", false);
    let target = Series::reference(
        "target p",
        vec![
            Point::at(0.0, config.capacity_fpp),
            Point::at(3.0, config.capacity_fpp),
        ],
    );
    let fpp_title = format!(
        "Measured FPP past capacity with 99% Wilson intervals (capacity {}, p = {}; an FPP of 0 \
         is not drawn)",
        format_count(config.capacity_items),
        config.capacity_fpp
    );
    vec![
        figure(
            "capacity_fpp.svg".to_owned(),
            fpp_title,
            ctx.family_panels(&load, &Axis::new("measured FPP", true), &fpp, &[target]),
            true,
        ),
        figure(
            "capacity_memory.svg".to_owned(),
            "Memory past capacity".to_owned(),
            ctx.family_panels(
                &load,
                &Axis::new("bits per item of capacity", true),
                &memory,
                &[],
            ),
            true,
        ),
        figure(
            "capacity_refused.svg".to_owned(),
            "Keys refused (solid) and accepted keys lost (dashed) past capacity, per key offered; \
             filters that did neither are left out"
                .to_owned(),
            ctx.family_panels(
                &load,
                &Axis::new("share of the keys offered", false),
                &refused,
                &[],
            ),
            true,
        ),
    ]
}

/// Measured FPP and live false negatives against churn.
fn churn_figures(ctx: &Ctx<'_>, measured: &Measurements, churn: &ChurnResults) -> Vec<FigureFile> {
    let config = &measured.config;
    let lines_of = |point: &dyn Fn(&ChurnRow) -> Option<Point>, suffix: &str, dash: Dash| {
        ctx.lines(&churn.rows, |r| &r.at.filter, point, (suffix, dash))
    };
    let mut fpp = lines_of(
        &|r| {
            (r.sample.empirical_fpp > 0.0).then_some(Point {
                x: r.at.churn,
                y: r.sample.empirical_fpp,
                interval: Some((r.sample.ci_low, r.sample.ci_high)),
            })
        },
        "",
        Dash::Solid,
    );
    fpp.extend(lines_of(
        &|r| r.sample.theoretical_fpp.map(|t| Point::at(r.at.churn, t)),
        " (theory)",
        Dash::Dashed,
    ));
    let mut lost = lines_of(
        &|r| Some(Point::at(r.at.churn, r.at.false_negatives as f64)),
        "",
        Dash::Solid,
    );
    lost.extend(lines_of(
        &|r| (r.at.failed_removals > 0).then(|| Point::at(r.at.churn, r.at.failed_removals as f64)),
        " (failed removals)",
        Dash::Dashed,
    ));
    let span = f64::from(config.churn_span);
    let target = Series::reference(
        "target p",
        vec![
            Point::at(0.0, config.churn_fpp),
            Point::at(span, config.churn_fpp),
        ],
    );
    let title = |what: &str| {
        format!(
            "{what} under churn (capacity {}, p = {}; each step removes the oldest key and inserts a new one)",
            format_count(config.churn_items),
            config.churn_fpp
        )
    };
    let steps = Axis::new("window steps / capacity", false);
    vec![
        figure(
            "churn_fpp.svg".to_owned(),
            title(&format!(
                "Measured FPP with {:.3}% intervals (dashed: theory for the live keys; an FPP of 0 is not drawn)",
                churn.rows.first().map_or(0.0, |r| r.sample.confidence) * 100.0
            )),
            ctx.family_panels(&steps, &Axis::new("FPP", true), &fpp, &[target]),
            true,
        ),
        figure(
            "churn_false_negatives.svg".to_owned(),
            title("Live keys reported absent (dashed: removals that found nothing)"),
            ctx.family_panels(&steps, &Axis::new("keys", false), &lost, &[]),
            true,
        ),
    ]
}

/// One growth figure: its file, what it shows, its y axis, each row's
/// point on it, and whether the target P is drawn.
struct GrowthFigure<'t> {
    file: &'static str,
    what: &'t str,
    y_axis: Axis,
    point: fn(&GrowthRow) -> Point,
    with_target: bool,
}

/// FPP, memory and lookup time against items held while growing: one
/// panel per target P.
fn growth_figures(
    ctx: &Ctx<'_>,
    measured: &Measurements,
    growth: &GrowthResults,
) -> Vec<FigureFile> {
    let config = &measured.config;
    let span = (config.growth_initial as f64, config.growth_final as f64);
    let panels = |y_axis: &Axis, point: fn(&GrowthRow) -> Point, with_target: bool| {
        let mut panels = Vec::new();
        for &p in &config.growth_fpps {
            let at_p =
                |r: &GrowthRow| Some(point(r)).filter(|pt| r.at.target_fpp == p && pt.y > 0.0);
            let mut series: Vec<Series> = ctx
                .lines(&growth.rows, |r| &r.at.filter, at_p, ("", Dash::Solid))
                .iter()
                .map(|l| ctx.series(l))
                .collect();
            if series.is_empty() {
                continue;
            }
            if with_target {
                series.push(Series::reference(
                    "target P",
                    vec![Point::at(span.0, p), Point::at(span.1, p)],
                ));
            }
            series.truncate(MAX_SERIES);
            panels.push(Panel::Plot(Plot {
                title: format!("P = {p:e}"),
                x: Axis::new("items inserted", true),
                y: y_axis.clone(),
                series,
                labelled: Vec::new(),
            }));
        }
        panels
    };
    let growing = |what: &str| {
        format!(
            "{what} while growing from capacity {}",
            format_count(config.growth_initial)
        )
    };
    let fpp_title = format!(
        "Measured FPP with {:.3}% intervals (an FPP of 0 is not drawn)",
        growth.rows.first().map_or(0.0, |r| r.sample.confidence) * 100.0
    );
    [
        GrowthFigure {
            file: "growth_fpp.svg",
            what: &fpp_title,
            y_axis: Axis::new("measured FPP", true),
            point: |r| Point {
                x: r.at.items as f64,
                y: r.sample.empirical_fpp,
                interval: Some((r.sample.ci_low, r.sample.ci_high)),
            },
            with_target: true,
        },
        GrowthFigure {
            file: "growth_memory.svg",
            what: "Memory per item",
            y_axis: Axis::new("bits per item held", false),
            point: |r| Point::at(r.at.items as f64, r.at.bits_per_item),
            with_target: false,
        },
        GrowthFigure {
            file: "growth_lookup.svg",
            what: "Negative lookup, one key at a time",
            y_axis: Axis::new("ns per lookup", true),
            point: |r| Point::at(r.at.items as f64, r.at.negative_ns),
            with_target: false,
        },
    ]
    .into_iter()
    .map(|shown| {
        figure(
            shown.file.to_owned(),
            growing(shown.what),
            panels(&shown.y_axis, shown.point, shown.with_target),
            true,
        )
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Origin;

    fn row(filter: &str, bits: f64, ns: f64) -> SweepRow {
        SweepRow {
            filter: filter.to_owned(),
            origin: Origin::Filterlab,
            n: 10,
            target_fpp: 0.01,
            bits_per_item: bits,
            negative_ns: ns,
            min_negative_ns: ns,
            max_negative_ns: ns,
            rounds: 1,
            queries: 1,
            false_positives: 0,
            empirical_fpp: 0.0,
            ci_low: 0.0,
            ci_high: 0.0,
            theoretical_fpp: None,
            refused: 0,
            meets_target: true,
        }
    }

    #[test]
    fn the_frontier_keeps_what_nothing_beats() {
        let rows = [
            row("fast-big", 20.0, 10.0),
            row("slow-small", 9.0, 80.0),
            row("dominated", 21.0, 30.0),
            row("middle", 12.0, 25.0),
            row("tie-slower", 12.0, 26.0),
        ];
        let refs: Vec<&SweepRow> = rows.iter().collect();
        let names: Vec<&str> = frontier(&refs).iter().map(|r| r.filter.as_str()).collect();
        assert_eq!(names, ["fast-big", "middle", "slow-small"]);
        let sweep = SweepResults {
            rows: rows.to_vec(),
            notes: Vec::new(),
        };
        let (fewest, fastest) = skyline_cell(&[], &sweep, 10, 0.01);
        assert_eq!(fewest.unwrap().best.item.filter, "slow-small");
        assert_eq!(fastest.unwrap().best.item.filter, "fast-big");
        assert_eq!(skyline_cell(&[], &sweep, 11, 0.01), (None, None));
    }

    /// Two filters whose lookup intervals overlap: the skyline cell names
    /// both, as a tie, and the Pareto frontier labels them together.
    #[test]
    fn a_tied_cell_names_every_filter_in_the_tie() {
        let spread = |mut r: SweepRow, min: f64, max: f64| {
            r.min_negative_ns = min;
            r.max_negative_ns = max;
            r
        };
        let rows = vec![
            spread(row("SplitBlockBloomFilter", 10.53, 3.4), 3.3, 5.6),
            spread(row("sbbf-rs-safe", 11.0, 3.2), 3.1, 3.5),
            spread(row("BloomFilter", 9.59, 9.5), 9.4, 9.8),
            spread(row("AtomicBloomFilter", 9.59, 9.6), 9.3, 9.9),
        ];
        let sweep = SweepResults {
            rows: rows.clone(),
            notes: Vec::new(),
        };
        let (fewest, fastest) = skyline_cell(&[], &sweep, 10, 0.01);
        let named = |chosen: Option<Pick<&SweepRow>>| {
            let chosen = chosen.unwrap();
            let mut all: Vec<String> = chosen.all().map(|c| c.item.filter.clone()).collect();
            all.sort();
            (chosen.is_tie(), all)
        };
        assert_eq!(
            named(fastest),
            (
                true,
                vec!["SplitBlockBloomFilter".into(), "sbbf-rs-safe".into()]
            ),
            "a cell tied within noise names one winner"
        );
        assert_eq!(
            named(fewest),
            (true, vec!["AtomicBloomFilter".into(), "BloomFilter".into()])
        );
        // Apart beyond noise: one winner.
        let apart = SweepResults {
            rows: vec![rows[1].clone(), spread(row("slow", 12.0, 9.0), 8.9, 9.1)],
            notes: Vec::new(),
        };
        let (_, fastest) = skyline_cell(&[], &apart, 10, 0.01);
        assert_eq!(named(fastest), (false, vec!["sbbf-rs-safe".into()]));
        // The Pareto frontier's label names a point tied with it on both
        // bits and lookup: AtomicBloomFilter, off the frontier by its median
        // lookup, is within noise of BloomFilter on it.
        let refs: Vec<&SweepRow> = rows.iter().collect();
        let front = frontier(&refs);
        let groups: Vec<Vec<&str>> = frontier_ties(&front, &refs)
            .iter()
            .map(|g| g.iter().map(|r| r.filter.as_str()).collect())
            .collect();
        assert_eq!(
            groups,
            [
                vec!["sbbf-rs-safe"],
                vec!["SplitBlockBloomFilter"],
                vec!["BloomFilter", "AtomicBloomFilter"]
            ]
        );
    }

    #[test]
    fn chunks_keep_groups_whole() {
        let groups = vec![vec![1, 2], vec![3, 4], vec![5], vec![6, 7, 8]];
        let chunks = chunk(&groups, 4);
        let sizes: Vec<usize> = chunks
            .iter()
            .map(|c| c.iter().map(|g| g.len()).sum())
            .collect();
        assert_eq!(sizes, [4, 4]);
        assert_eq!(pareto_file(0.01), "pareto_p1e-2.svg");
    }
}
