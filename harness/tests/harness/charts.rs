//! The figures keep their specifications (at most eight lines a panel, no
//! two lines of a panel drawn alike, one colour and marker per filter in
//! every figure, the report's and `filterlab bench`'s, each legend outside
//! every data area), every SVG renders
//! with resvg (those of a fresh run and those committed in reports/), and
//! the guide keeps its rules. With FILTERLAB_PNG_DIR set, the rendered
//! images are written there as PNG files, to be looked at (and with
//! FILTERLAB_RENDER_DIR, the SVG files of that report too).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use filterlab_harness::bench::CountRow;
use filterlab_harness::bench::baseline::read_rows;
use filterlab_harness::bench::plot::figures as bench_figures;
use filterlab_harness::bench::table::per_op;
use filterlab_harness::commands::report::{Context, write_report};
use filterlab_harness::config::{Experiment, Preset, RunConfig};
use filterlab_harness::experiments::measurements::{Measurements, measure};
use filterlab_harness::machine::Machine;
use filterlab_harness::registry;
use filterlab_harness::render::charts::{FigureFile, MAX_SERIES, draw_all, figures};
use filterlab_harness::render::guide::{anchor, check_guide};
use filterlab_harness::render::plot::{Panel, Series, layout};
use filterlab_harness::render::sections::counts::{COUNTS_HEADING, CommittedCounts};
use filterlab_harness::render::style::{Colour, Marker};
use filterlab_peers::Mode;
use resvg::{tiny_skia, usvg};

use crate::scratch;

/// A tiny run of every experiment but Redis over every registered filter.
fn tiny_run() -> Measurements {
    let mut config = RunConfig::preset(Preset::Tiny, 9, 2);
    config.experiments.retain(|&e| e != Experiment::Redis);
    measure(registry::registry(), &config, true).unwrap()
}

/// The system's fonts, loaded once for every rendering.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    Arc::clone(FONTS.get_or_init(|| {
        let mut database = usvg::fontdb::Database::new();
        database.load_system_fonts();
        // The figures ask for "sans-serif"; fontdb maps it to Arial unless told.
        let sans = database
            .faces()
            .flat_map(|face| face.families.iter().map(|(name, _)| name.clone()))
            .find(|name| name == "DejaVu Sans" || name.contains("Sans"));
        if let Some(sans) = sans {
            database.set_sans_serif_family(sans);
        }
        Arc::new(database)
    }))
}

/// Renders an SVG file to pixels; an error for anything resvg refuses, an
/// empty size or a blank image. Saved as PNG under FILTERLAB_PNG_DIR.
fn render(path: &Path) -> Result<(), String> {
    let data = fs::read(path).map_err(|e| e.to_string())?;
    let options = usvg::Options {
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_data(&data, &options).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("an SVG of no size")?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let inked = pixmap
        .pixels()
        .iter()
        .filter(|p| p.red() < 200 || p.green() < 200 || p.blue() < 200)
        .count();
    if inked * 1000 < pixmap.pixels().len() {
        return Err(format!("nearly blank: {inked} dark pixels"));
    }
    if let Some(dir) = std::env::var_os("FILTERLAB_PNG_DIR") {
        let dir = PathBuf::from(dir);
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let name = path.file_stem().unwrap_or_default().to_string_lossy();
        let parent = path
            .parent()
            .and_then(Path::file_name)
            .unwrap_or_default()
            .to_string_lossy();
        pixmap
            .save_png(dir.join(format!("{parent}-{name}.png")))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Every SVG file in `dir`, rendered; the failures.
fn render_all(dir: &Path) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut failures = Vec::new();
    for entry in fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "svg") {
            count += 1;
            if let Err(err) = render(&path) {
                failures.push(format!("{}: {err}", path.display()));
            }
        }
    }
    (count, failures)
}

/// Each filter's looks over the figures checked so far.
type Looks = HashMap<String, HashSet<(Colour, Marker)>>;

/// Holds `figures` to the specifications: at most eight lines a panel, no
/// two lines or labelled points of a panel drawn alike, each legend
/// outside every data area and inside the figure; adds each filter's
/// looks to `looks`.
fn check_specifications(figures: &[FigureFile], looks: &mut Looks) {
    let mut note = |filter: &str, colour: Colour, marker: Marker| {
        looks
            .entry(filter.to_owned())
            .or_default()
            .insert((colour, marker));
    };
    for figure in figures {
        let file = &figure.file;
        let place = layout(&figure.figure);
        for (panel, at) in figure.figure.panels.iter().zip(&place.panels) {
            let series = panel.series();
            assert!(
                series.len() <= MAX_SERIES,
                "{file}: a panel with {} lines",
                series.len()
            );
            let styles: HashSet<_> = series.iter().map(Series::style).collect();
            assert_eq!(styles.len(), series.len(), "{file}: two lines drawn alike");
            for s in series {
                if let (Some(filter), Some(marker)) = (&s.filter, s.marker) {
                    note(filter, s.colour, marker);
                }
            }
            match panel {
                Panel::Plot(plot) => {
                    let drawn: HashSet<_> = plot.labelled.iter().map(|p| p.look).collect();
                    assert_eq!(
                        drawn.len(),
                        plot.labelled.len(),
                        "{file}: two points drawn alike"
                    );
                    for point in &plot.labelled {
                        note(&point.filter, point.look.colour, point.look.marker);
                    }
                }
                Panel::Grid(grid) => {
                    for part in grid.cells.iter().flat_map(|c| &c.parts) {
                        for (filter, look) in &part.filters {
                            note(filter, look.colour, look.marker);
                        }
                    }
                }
            }
            if let Some(legend) = at.legend {
                for other in &place.panels {
                    assert!(!legend.intersects(&other.data), "{file}: legend over data");
                }
                assert!(legend.x + legend.w <= place.width, "{file}: legend cut off");
            }
        }
    }
}

/// The committed bench baseline's counts.
fn committed_counts() -> Vec<CountRow> {
    read_rows(&committed_counts_file()).unwrap().1
}

/// The committed bench baseline.
fn committed_counts_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/bench-baseline.csv")
}

/// The static filters: ringed on the Pareto chart (exactly they, with a
/// legend entry saying so), and a layer of the skyline map in every cell.
fn check_static_marks(figures: &[FigureFile]) {
    let entries = registry::registry();
    let built_once = |filter: &str| {
        entries
            .iter()
            .any(|e| e.name == filter && !e.takes_inserts())
    };
    let pareto = figures
        .iter()
        .find(|f| f.file == "pareto_p1e-2.svg")
        .unwrap();
    let Panel::Plot(plot) = &pareto.figure.panels[0] else {
        panic!("the Pareto chart is a plot")
    };
    assert!(plot.labelled.iter().any(|p| p.ringed), "no static point");
    for point in &plot.labelled {
        assert_eq!(point.ringed, built_once(&point.filter), "{}", point.filter);
    }
    assert!(
        plot.series
            .iter()
            .any(|s| s.marker == Some(Marker::Ring) && s.name.contains("static")),
        "no legend entry for the ring"
    );
    let skyline = figures.iter().find(|f| f.file == "skyline.svg").unwrap();
    let Panel::Grid(grid) = &skyline.figure.panels[0] else {
        panic!("the skyline map is a grid")
    };
    for cell in &grid.cells {
        let layer = cell.parts.last().unwrap();
        assert!(layer.heading.starts_with("built once"), "{layer:?}");
        assert!(
            layer.filters.iter().all(|(f, _)| built_once(f)),
            "{layer:?}"
        );
    }
    assert!(
        grid.cells
            .iter()
            .any(|c| !c.parts.last().unwrap().filters.is_empty())
    );
}

#[test]
fn a_fresh_report_keeps_the_figure_and_guide_rules_and_renders() {
    let measured = tiny_run();
    let figures = figures(&measured);
    // The summary charts are there: a Pareto chart per target, the skyline.
    let files: Vec<&str> = figures.iter().map(|f| f.file.as_str()).collect();
    for file in [
        "skyline.svg",
        "pareto_p1e-1.svg",
        "pareto_p1e-2.svg",
        "accuracy.svg",
        "space.svg",
    ] {
        assert!(files.contains(&file), "{file} missing from {files:?}");
    }
    // The charts of `filterlab bench` (of the committed counts) keep the
    // same rules, each filter in the same look as in the report.
    let bench = bench_figures(&committed_counts(), &measured.entries);
    let bench_files: Vec<&str> = bench.iter().map(|f| f.file.as_str()).collect();
    assert_eq!(
        bench_files,
        [
            "bench_insert.svg",
            "bench_lookup_positive.svg",
            "bench_lookup_negative.svg",
            "bench_remove.svg"
        ]
    );
    let mut looks = Looks::new();
    check_specifications(&figures, &mut looks);
    check_specifications(&bench, &mut looks);
    for (filter, drawn) in &looks {
        assert_eq!(drawn.len(), 1, "{filter} drawn in {drawn:?}");
    }
    assert!(looks.len() >= registry::registry().len() - 1, "{looks:?}");

    check_static_marks(&figures);

    // The report itself: the guide keeps its rules, every SVG renders.
    let out = scratch("charts");
    fs::create_dir_all(&out).unwrap();
    let context = Context {
        machine: &Machine::detect(),
        command_line: "filterlab report --tiny (charts test)",
        skipped: &[],
        counts: &CommittedCounts::read(&committed_counts_file()),
    };
    let readme = write_report(&measured, &context, &out).unwrap();
    assert_eq!(check_guide(&readme), Vec::<String>::new());
    // The committed counts are there, as counts, linked from the speed
    // figures' sections.
    assert!(readme.contains(&format!("## {COUNTS_HEADING}\n")));
    assert!(readme.contains("**These are counts, not times**"));
    let counts = committed_counts();
    let bloom = counts
        .iter()
        .find(|r| r.filter == "BloomFilter" && r.mode == Mode::OneKey)
        .unwrap();
    let row = format!("| BloomFilter | {} |", per_op(bloom.instructions_per_op));
    assert!(readme.contains(&row), "{row} not in the README");
    assert!(readme.contains(&format!("(#{})", anchor(COUNTS_HEADING))));
    let (count, failures) = render_all(&out);
    assert_eq!(count, figures.len());
    assert!(failures.is_empty(), "{failures:#?}");
    fs::remove_dir_all(&out).unwrap();
    let out = scratch("bench-charts");
    fs::create_dir_all(&out).unwrap();
    draw_all(&bench, &out).unwrap();
    let (count, failures) = render_all(&out);
    assert_eq!(count, bench.len());
    assert!(failures.is_empty(), "{failures:#?}");
    fs::remove_dir_all(&out).unwrap();
}

/// Every SVG of the committed report renders (and of the report in
/// FILTERLAB_RENDER_DIR, when set: a report to look at).
#[test]
fn every_committed_svg_renders() {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports")];
    dirs.extend(std::env::var_os("FILTERLAB_RENDER_DIR").map(PathBuf::from));
    for dir in dirs {
        let (count, failures) = render_all(&dir);
        assert!(count > 0, "no SVG in {}", dir.display());
        assert!(failures.is_empty(), "{failures:#?}");
    }
}
