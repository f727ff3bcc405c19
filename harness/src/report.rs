//! `filterlab report`: runs the experiments, writes the CSV files, the SVG
//! plots and README.md (summary tables, decision guide, machine, parameters),
//! and applies the accuracy gate.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::Error;
use crate::accuracy::{self, AccuracyRow};
use crate::capacity::{self, CapacityResults, CapacityRow};
use crate::config::{Experiment, RunConfig, format_count};
use crate::guide;
use crate::machine::Machine;
use crate::output::Staging;
use crate::plot::{self, Chart, Series, Style};
use crate::registry::{self, Entry, Origin};
use crate::space::{self, SpaceRow};
use crate::speed::{self, SpeedResults, SpeedRow};

/// What `filterlab report` was asked to do.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// The output directory.
    pub out: PathBuf,
    /// What to measure.
    pub config: RunConfig,
    /// Filters to measure (all when empty).
    pub filters: Vec<String>,
    /// No progress output.
    pub quiet: bool,
    /// The command line, for the report.
    pub command_line: String,
}

/// Everything measured in one run.
pub struct Measurements {
    /// The filters measured.
    pub entries: Vec<Entry>,
    /// The run's configuration.
    pub config: RunConfig,
    /// Accuracy rows (empty when not run).
    pub accuracy: Vec<AccuracyRow>,
    /// Space rows (empty when not run).
    pub space: Vec<SpaceRow>,
    /// Speed results, when run.
    pub speed: Option<SpeedResults>,
    /// Over-capacity results, when run.
    pub capacity: Option<CapacityResults>,
    /// Wall time per experiment, in seconds.
    pub seconds: Vec<(&'static str, f64)>,
}

/// What a finished report run produced.
#[derive(Debug)]
pub struct ReportSummary {
    /// Where the report is.
    pub out: PathBuf,
    /// Accuracy rows of filterlab filters checked by the gate.
    pub gated_rows: usize,
    /// Total wall time in seconds.
    pub seconds: f64,
}

/// Runs the experiments of `config` over `entries`.
///
/// # Errors
///
/// When a filter cannot be built for a workload.
pub fn measure(
    entries: Vec<Entry>,
    config: &RunConfig,
    quiet: bool,
) -> Result<Measurements, Error> {
    let mut seconds = Vec::new();
    let mut timed = |name: &'static str, start: Instant| {
        seconds.push((name, start.elapsed().as_secs_f64()));
    };
    let mut accuracy = Vec::new();
    if config.runs(Experiment::Accuracy) || config.runs(Experiment::Space) {
        let start = Instant::now();
        accuracy = accuracy::run(&entries, config, quiet)?;
        timed("accuracy", start);
    }
    let space = if config.runs(Experiment::Space) {
        space::from_accuracy(&entries, &accuracy)
    } else {
        Vec::new()
    };
    let speed = if config.runs(Experiment::Speed) {
        let start = Instant::now();
        let results = speed::run(&entries, config, quiet);
        timed("speed", start);
        Some(results)
    } else {
        None
    };
    let capacity = if config.runs(Experiment::Capacity) {
        let start = Instant::now();
        let results = capacity::run(&entries, config, quiet)?;
        timed("capacity", start);
        Some(results)
    } else {
        None
    };
    Ok(Measurements {
        entries,
        config: config.clone(),
        accuracy,
        space,
        speed,
        capacity,
        seconds,
    })
}

/// Runs `filterlab report`.
///
/// # Errors
///
/// Usage errors for bad options or an unwritable output directory (before
/// anything runs); a gate error, after the report is written, when a
/// filterlab filter has a false negative or a theory outside its interval.
pub fn run(options: &ReportOptions) -> Result<ReportSummary, Error> {
    let start = Instant::now();
    let entries = registry::select(&options.filters)?;
    let staging = Staging::create(&options.out)?;
    let machine = Machine::detect();
    let measured = measure(entries, &options.config, options.quiet)?;
    write_report(&measured, &machine, &options.command_line, staging.path())?;
    let out = staging.publish()?;
    let failures = accuracy::gate(&measured.accuracy);
    if !failures.is_empty() {
        return Err(Error::gate(format!(
            "accuracy gate failed; the report in {} shows it:\n  {}",
            out.display(),
            failures.join("\n  ")
        )));
    }
    Ok(ReportSummary {
        out,
        gated_rows: measured
            .accuracy
            .iter()
            .filter(|r| r.is_filterlab())
            .count(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), Error> {
    let mut writer = csv::Writer::from_path(path)?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer.flush()?;
    Ok(())
}

/// Writes the CSV files, plots and README.md of `measured` into `dir`.
///
/// # Errors
///
/// When a file cannot be written.
pub fn write_report(
    measured: &Measurements,
    machine: &Machine,
    command_line: &str,
    dir: &Path,
) -> Result<(), Error> {
    if !measured.accuracy.is_empty() {
        write_csv(&dir.join("accuracy.csv"), &measured.accuracy)?;
    }
    if !measured.space.is_empty() {
        write_csv(&dir.join("space.csv"), &measured.space)?;
    }
    if let Some(speed) = &measured.speed {
        write_csv(&dir.join("speed.csv"), &speed.rows)?;
    }
    if let Some(capacity) = &measured.capacity {
        write_csv(&dir.join("capacity.csv"), &capacity.rows)?;
    }
    let charts = charts(measured);
    for (file, chart) in &charts {
        plot::draw(chart, &dir.join(file))?;
    }
    let readme = readme(measured, machine, command_line, &charts);
    fs::write(dir.join("README.md"), readme)?;
    Ok(())
}

/// A filter's colour index: its position in the run's entries.
fn colour(entries: &[Entry], name: &str) -> usize {
    entries.iter().position(|e| e.name == name).unwrap_or(0)
}

fn measured_series<T>(
    entries: &[Entry],
    rows: &[&T],
    filter_of: impl Fn(&T) -> &str,
    point: impl Fn(&T) -> (f64, f64),
) -> Vec<Series> {
    entries
        .iter()
        .filter_map(|entry| {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|row| filter_of(row) == entry.name)
                .map(|row| point(row))
                .collect();
            (!points.is_empty()).then(|| Series {
                name: entry.name.to_owned(),
                points,
                style: Style::Measured(colour(entries, entry.name)),
            })
        })
        .collect()
}

/// The report's charts, with their file names.
fn charts(measured: &Measurements) -> Vec<(String, Chart)> {
    let mut charts = accuracy_charts(measured);
    charts.extend(speed_charts(measured));
    charts.extend(capacity_charts(measured));
    charts
}

/// Measured FPP against target, and bits per item against target.
fn accuracy_charts(measured: &Measurements) -> Vec<(String, Chart)> {
    let entries = &measured.entries;
    let mut charts = Vec::new();
    let fpps = &measured.config.accuracy_fpps;
    if let Some(largest) = measured.accuracy.iter().map(|r| r.n).max() {
        let rows: Vec<&AccuracyRow> = measured
            .accuracy
            .iter()
            .filter(|r| r.n == largest)
            .collect();
        let mut series = measured_series(
            entries,
            &rows,
            |r| &r.filter,
            |r| (r.target_fpp, r.empirical_fpp),
        );
        series.push(Series {
            name: "target (measured = target)".into(),
            points: fpps.iter().map(|&p| (p, p)).collect(),
            style: Style::Reference,
        });
        charts.push((
            "accuracy.svg".into(),
            Chart {
                title: format!("Measured FPP against target, n = {}", format_count(largest)),
                x_label: "target FPP".into(),
                y_label: "measured FPP".into(),
                x_log: true,
                y_log: true,
                series,
            },
        ));
    }
    if let Some(first) = measured.space.first() {
        let rows: Vec<&SpaceRow> = measured.space.iter().collect();
        let mut series = measured_series(
            entries,
            &rows,
            |r| &r.filter,
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
        charts.push((
            "space.svg".into(),
            Chart {
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
        ));
    }
    charts
}

/// ns per operation against n, one chart per operation.
fn speed_charts(measured: &Measurements) -> Vec<(String, Chart)> {
    let Some(speed) = &measured.speed else {
        return Vec::new();
    };
    let mut charts = Vec::new();
    for (file, ops, what) in [
        (
            "speed_insert.svg",
            &["insert", "build"][..],
            "insert (static filters: build, per key)",
        ),
        (
            "speed_lookup_positive.svg",
            &["lookup_positive"][..],
            "positive lookup",
        ),
        (
            "speed_lookup_negative.svg",
            &["lookup_negative"][..],
            "negative lookup",
        ),
        ("speed_remove.svg", &["remove"][..], "remove"),
    ] {
        let rows: Vec<&SpeedRow> = speed
            .rows
            .iter()
            .filter(|r| ops.contains(&r.op.as_str()))
            .collect();
        let series = measured_series(
            &measured.entries,
            &rows,
            |r| &r.filter,
            |r| (r.n as f64, r.ns_per_op),
        );
        if series.is_empty() {
            continue;
        }
        charts.push((
            file.into(),
            Chart {
                title: format!(
                    "{what}: ns per operation (median), p = {}",
                    measured.config.speed_fpp
                ),
                x_label: "items in the filter".into(),
                y_label: "ns per operation".into(),
                x_log: true,
                y_log: true,
                series,
            },
        ));
    }
    charts
}

/// FPP and memory against load past capacity.
fn capacity_charts(measured: &Measurements) -> Vec<(String, Chart)> {
    let Some(capacity) = &measured.capacity else {
        return Vec::new();
    };
    let config = &measured.config;
    let rows: Vec<&CapacityRow> = capacity.rows.iter().collect();
    let mut fpp = measured_series(
        &measured.entries,
        &rows,
        |r| &r.filter,
        |r| (r.load, r.empirical_fpp),
    );
    fpp.push(Series {
        name: "target".into(),
        points: vec![(0.0, config.capacity_fpp), (3.0, config.capacity_fpp)],
        style: Style::Reference,
    });
    let memory = measured_series(
        &measured.entries,
        &rows,
        |r| &r.filter,
        |r| (r.load, r.memory_bytes as f64 * 8.0 / r.capacity as f64),
    );
    vec![
        (
            "capacity_fpp.svg".into(),
            Chart {
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
        ),
        (
            "capacity_memory.svg".into(),
            Chart {
                title: "Memory past capacity".into(),
                x_label: "keys offered / capacity".into(),
                y_label: "bits per item of capacity".into(),
                x_log: false,
                y_log: false,
                series: memory,
            },
        ),
    ]
}

/// Scientific notation with 3 significant digits.
pub fn sci(value: f64) -> String {
    if value == 0.0 {
        "0".to_owned()
    } else {
        format!("{value:.2e}")
    }
}

/// A Markdown table.
fn table(header: &[String], rows: &[Vec<String>]) -> String {
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

/// The README of a report.
fn readme(
    measured: &Measurements,
    machine: &Machine,
    command_line: &str,
    charts: &[(String, Chart)],
) -> String {
    let mut out = String::new();
    let config = &measured.config;
    let _ = writeln!(out, "# filterlab report\n");
    let _ = writeln!(
        out,
        "Generated by `{command_line}` (seed {}, revision `{}`). Every filterlab filter and \
         every peer crate was measured in the same process on the same seeded keys. The data \
         are in the CSV files next to this page; a run with the same seed reproduces every \
         accuracy figure exactly (except cuckoofilter's, which evicts with `thread_rng`); \
         timings vary with the machine and its load.\n",
        config.seed, machine.revision
    );
    let _ = writeln!(out, "## Which filter should I use?\n");
    out.push_str(&guide::decision_guide(measured));
    out.push('\n');
    if !measured.accuracy.is_empty() {
        out.push_str(&accuracy_section(measured));
    }
    if !measured.space.is_empty() {
        out.push_str(&space_section(measured));
    }
    if let Some(speed) = &measured.speed {
        out.push_str(&speed_section(measured, speed));
    }
    if let Some(capacity) = &measured.capacity {
        out.push_str(&capacity_section(measured, capacity));
    }
    let _ = writeln!(out, "## Plots\n");
    for (file, chart) in charts {
        let _ = writeln!(out, "![{}]({file})\n", chart.title);
    }
    out.push_str(&filters_section(measured));
    let _ = writeln!(out, "## Machine and run\n");
    out.push_str(&machine.describe());
    out.push_str(&config.describe());
    let times: Vec<String> = measured
        .seconds
        .iter()
        .map(|(name, seconds)| format!("{name} {seconds:.0} s"))
        .collect();
    let _ = writeln!(out, "- wall time: {}", times.join(", "));
    let _ = writeln!(
        out,
        "- build: {}",
        if cfg!(debug_assertions) {
            "debug (timings are not meaningful; use --release)"
        } else {
            "release"
        }
    );
    out
}

fn accuracy_section(measured: &Measurements) -> String {
    let mut out = String::new();
    let rows = &measured.accuracy;
    let _ = writeln!(out, "## Accuracy\n");
    let failures = accuracy::gate(rows);
    let confidence = rows.first().map_or(0.0, |r| r.confidence);
    if failures.is_empty() {
        let _ = writeln!(
            out,
            "**Gate: passed.** All {} filterlab rows have 0 false negatives and their exact \
             theory inside the {:.4}% interval.\n",
            rows.iter().filter(|r| r.is_filterlab()).count(),
            confidence * 100.0
        );
    } else {
        let _ = writeln!(out, "**Gate: FAILED.**\n");
        for failure in &failures {
            let _ = writeln!(out, "- {failure}");
        }
        out.push('\n');
    }
    out.push_str(&measured_fpp_table(measured));
    out.push_str(&agreement_table(measured));
    out.push_str(&missed_targets(measured));
    out.push_str(&reading_notes(measured, confidence));
    let _ = writeln!(
        out,
        "<details><summary>Every accuracy row</summary>\n\n{}\n</details>\n",
        full_accuracy_table(rows)
    );
    out
}

/// Measured FPP / target per filter and p, at the largest n.
fn measured_fpp_table(measured: &Measurements) -> String {
    let rows = &measured.accuracy;
    let largest = rows.iter().map(|r| r.n).max().unwrap_or(0);
    let fpps = &measured.config.accuracy_fpps;
    let mut header = vec!["filter".to_owned()];
    header.extend(fpps.iter().map(|p| format!("p = {p:e}")));
    let body: Vec<Vec<String>> = measured
        .entries
        .iter()
        .map(|entry| {
            let mut cells = vec![entry.name.to_owned()];
            for &p in fpps {
                let cell = rows
                    .iter()
                    .find(|r| r.filter == entry.name && r.n == largest && r.target_fpp == p)
                    .map_or_else(String::new, |r| {
                        format!(
                            "{} ({:.2}×) {}",
                            sci(r.empirical_fpp),
                            r.empirical_fpp / p,
                            r.target_mark()
                        )
                    });
                cells.push(cell);
            }
            cells
        })
        .collect();
    format!(
        "Measured FPP at n = {} (measured / target; ✓ meets the target: nothing lost or refused, \
         the interval reaches the target and the exact theory, where known, is within 0.1% of \
         it; ≈ measured within the target but the filter's own exact FPP is above it; ✗ misses \
         it):\n\n{}\n",
        format_count(largest),
        table(&header, &body)
    )
}

/// Per filter, over all rows: theory and fill agreement, losses.
fn agreement_table(measured: &Measurements) -> String {
    let rows = &measured.accuracy;
    let header: Vec<String> = [
        "filter",
        "rows",
        "theory",
        "theory inside interval",
        "fill-conditional inside",
        "false negatives",
        "refused",
        "rows meeting target",
    ]
    .map(str::to_owned)
    .to_vec();
    let body: Vec<Vec<String>> = measured
        .entries
        .iter()
        .filter_map(|entry| {
            let mine: Vec<&AccuracyRow> = rows.iter().filter(|r| r.filter == entry.name).collect();
            let first = mine.first()?;
            let count = |f: &dyn Fn(&AccuracyRow) -> Option<bool>| {
                let judged: Vec<bool> = mine.iter().filter_map(|r| f(r)).collect();
                if judged.is_empty() {
                    "n/a".to_owned()
                } else {
                    format!("{}/{}", judged.iter().filter(|&&b| b).count(), judged.len())
                }
            };
            Some(vec![
                entry.name.to_owned(),
                mine.len().to_string(),
                first.theory.clone(),
                count(&AccuracyRow::theory_inside),
                count(&AccuracyRow::fill_inside),
                mine.iter()
                    .map(|r| r.false_negatives)
                    .sum::<u64>()
                    .to_string(),
                mine.iter().map(|r| r.refused).sum::<u64>().to_string(),
                format!(
                    "{}/{}",
                    mine.iter().filter(|r| r.meets_target()).count(),
                    mine.len()
                ),
            ])
        })
        .collect();
    format!(
        "Agreement with theory, over all rows:\n\n{}\n",
        table(&header, &body)
    )
}

/// How the accuracy rows were measured, and the two traps.
fn reading_notes(measured: &Measurements, confidence: f64) -> String {
    let config = &measured.config;
    format!(
        "### How to read these numbers\n\n\
         - Each row inserts exactly n seeded keys into a filter sized for n and queries \
         never-inserted keys from a disjoint seeded stream: about {} false positives are \
         expected per row (at the lower of the target and the theory; queries capped at {}).\n\
         - **Instance variation.** A Wilson interval covers only the sampling of queries, not the \
         variation between filter instances; for a small Bloom filter the number of set bits X \
         varies, and the FPP of one instance is (X/m)^k, whose relative spread ≈ √(k·ln 2/n) \
         dominates at n = 10^3. Each row therefore pools ⌈{}/n⌉ independently seeded instances \
         (up to 64; `instances` column), which shrinks that spread below about a tenth of the \
         query-sampling variance. `fill_fpp` is the mean FPP conditional on each instance's actual \
         state ((X/m)^k for Bloom filters, the per-block product for sbbf): the expectation of the \
         measured FPP given the very filters measured.\n\
         - **Multiple comparisons.** With {} rows, several would miss a 95% interval by chance. The \
         family-wise error rate {} is split over the rows (Bonferroni): each interval has \
         confidence {:.4}%, so the chance that any correct row misses is at most {}.\n\
         - ≈ marks a filter whose own exact FPP at n is more than 0.1% above the target even \
         when the measurement cannot tell: typically sized with the classic formula \
         (1 − e^(−kn/m))^k, which is slightly optimistic, or with k rounded to the nearest \
         integer without rechecking the target. Such rows do not count as meeting the target \
         in the decision guide.\n\
         - `theory` is `exact` where the formula is exact for the design under ideal hashing \
         (standard Bloom: Σ P(X=i)(i/m)^k, Bose et al. 2008, with each filter's own m and k; \
         split block: Σ Pois(i)(1−(31/32)^i)^8; BinaryFuse8: 2^−8), `approximate` for \
         cuckoofilter (1−(1−1/255)^(8·load)), `n/a` where no formula applies \
         (growable-bloom-filter's FPP depends on its growth history). The gate holds filterlab \
         filters to exact theories; peers are reported, not gated.\n\n",
        config.expected_false_positives,
        format_count(config.max_queries),
        format_count(config.instance_items),
        measured.accuracy.len(),
        config.family_error_rate,
        confidence * 100.0,
        config.family_error_rate
    )
}

fn full_accuracy_table(rows: &[AccuracyRow]) -> String {
    let header: Vec<String> = [
        "filter",
        "n",
        "target",
        "bits/item",
        "theory",
        "fill-conditional",
        "measured",
        "interval",
        "queries",
        "inst.",
        "FN",
        "verdict",
    ]
    .map(str::to_owned)
    .to_vec();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.filter.clone(),
                format_count(r.n),
                format!("{:e}", r.target_fpp),
                format!("{:.2}", r.bits_per_item),
                r.theoretical_fpp.map_or_else(|| "n/a".to_owned(), sci),
                r.fill_fpp.map_or_else(|| "n/a".to_owned(), sci),
                sci(r.empirical_fpp),
                format!("[{}, {}]", sci(r.ci_low), sci(r.ci_high)),
                r.queries.to_string(),
                r.instances.to_string(),
                r.false_negatives.to_string(),
                r.verdict.clone(),
            ]
        })
        .collect();
    table(&header, &body)
}

/// Every filter that misses its target somewhere, in words.
fn missed_targets(measured: &Measurements) -> String {
    let mut out = String::new();
    let rows = &measured.accuracy;
    let mut lines = Vec::new();
    for entry in &measured.entries {
        let mine: Vec<&AccuracyRow> = rows.iter().filter(|r| r.filter == entry.name).collect();
        let missed: Vec<&&AccuracyRow> = mine.iter().filter(|r| !r.meets_target()).collect();
        if missed.is_empty() {
            continue;
        }
        let examples: Vec<String> = missed
            .iter()
            .filter(|r| r.n == missed.iter().map(|m| m.n).max().unwrap_or(0))
            .map(|r| {
                let mut why = format!(
                    "p = {:e} → measured {} ({:.2}×)",
                    r.target_fpp,
                    sci(r.empirical_fpp),
                    r.empirical_fpp / r.target_fpp
                );
                if let Some(excess) = r.design_excess() {
                    let _ = write!(why, ", exact theory {excess:.4}× p");
                }
                if r.false_negatives > 0 {
                    let _ = write!(why, ", {} false negatives", r.false_negatives);
                }
                if r.refused > 0 {
                    let _ = write!(why, ", {} refused", r.refused);
                }
                why
            })
            .collect();
        lines.push(format!(
            "- **{}** misses its target in {} of {} rows; at n = {}: {}. ({})",
            entry.name,
            missed.len(),
            mine.len(),
            format_count(missed.iter().map(|m| m.n).max().unwrap_or(0)),
            examples.join("; "),
            entry.about
        ));
    }
    if lines.is_empty() {
        let _ = writeln!(out, "Every filter met its target in every row.\n");
    } else {
        let _ = writeln!(out, "Where a filter misses its target:\n");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        out.push('\n');
    }
    out
}

fn space_section(measured: &Measurements) -> String {
    let mut out = String::new();
    let rows = &measured.space;
    let n = rows.first().map_or(0, |r| r.n);
    let _ = writeln!(out, "## Space\n");
    let _ = writeln!(
        out,
        "Bits per item at n = {} for each target p, beside the lower bound log2(1/p) that no \
         filter can beat (✓ meets the target, ≈ measured within it but its own exact FPP is over \
         it, ✗ misses it; `efficiency` in space.csv is \
         log2(1/measured FPP) / bits per item):\n",
        format_count(n)
    );
    let fpps = &measured.config.accuracy_fpps;
    let mut header = vec!["filter".to_owned()];
    header.extend(fpps.iter().map(|p| format!("p = {p:e}")));
    header.push("formula".to_owned());
    let mut body: Vec<Vec<String>> = vec![{
        let mut cells = vec!["*lower bound log2(1/p)*".to_owned()];
        cells.extend(fpps.iter().map(|p| format!("{:.2}", -p.log2())));
        cells.push(String::new());
        cells
    }];
    for entry in &measured.entries {
        let mine: Vec<&SpaceRow> = rows.iter().filter(|r| r.filter == entry.name).collect();
        let Some(first) = mine.first() else { continue };
        let mut cells = vec![entry.name.to_owned()];
        for &p in fpps {
            cells.push(
                mine.iter()
                    .find(|r| r.target_fpp == p)
                    .map_or_else(String::new, |r| {
                        let formula = r
                            .formula_bits
                            .map_or_else(String::new, |f| format!(" (formula {f:.2})"));
                        let mark = match r.target.as_str() {
                            "meets" => "✓",
                            "theory over target" => "≈",
                            _ => "✗",
                        };
                        format!("{:.2}{formula} {mark}", r.bits_per_item)
                    }),
            );
        }
        cells.push(first.formula.clone());
        body.push(cells);
    }
    out.push_str(&table(&header, &body));
    out.push('\n');
    out
}

fn speed_section(measured: &Measurements, speed: &SpeedResults) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Speed\n");
    let _ = writeln!(
        out,
        "Median ns per operation over the repetitions (filters sized for n at p = {}; \
         u64 keys, each filter hashing with its own hasher; one thread unless stated; insert \
         times fill an empty filter to n; static filters report their construction per key as \
         `build`). filterlab filters are driven through their batch API (`insert_hashes` / \
         `contains_hashes`: 256 keys hashed, then probed with the cache lines of the keys \
         ahead prefetched), the peers key by key, which is all their APIs offer; one key at a \
         time, filterlab's filters are compared with the peers in the criterion benches \
         (`cargo bench -p filterlab-bloom`). The machine is shared, so differences under \
         about 1.5× between runs are noise; the min and max of the repetitions are in \
         speed.csv.\n",
        measured.config.speed_fpp
    );
    let sizes: Vec<u64> = {
        let mut sizes: Vec<u64> = speed.rows.iter().map(|r| r.n).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    };
    for (title, ops) in [
        (
            "Insert (build for static filters)",
            &["insert", "build"][..],
        ),
        (
            "Insert from all cores into one shared filter (wall-clock per key)",
            &["insert_concurrent"][..],
        ),
        ("Positive lookup", &["lookup_positive"][..]),
        ("Negative lookup", &["lookup_negative"][..]),
        ("Remove", &["remove"][..]),
    ] {
        let rows: Vec<&SpeedRow> = speed
            .rows
            .iter()
            .filter(|r| ops.contains(&r.op.as_str()))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "**{title}**, ns/op:\n");
        let mut header = vec!["filter".to_owned()];
        header.extend(sizes.iter().map(|&n| format!("n = {}", format_count(n))));
        let body: Vec<Vec<String>> = measured
            .entries
            .iter()
            .filter(|e| rows.iter().any(|r| r.filter == e.name))
            .map(|entry| {
                let mut cells = vec![entry.name.to_owned()];
                for &n in &sizes {
                    cells.push(
                        rows.iter()
                            .find(|r| r.filter == entry.name && r.n == n)
                            .map_or_else(String::new, |r| format!("{:.1}", r.ns_per_op)),
                    );
                }
                cells
            })
            .collect();
        out.push_str(&table(&header, &body));
        out.push('\n');
    }
    for note in &speed.notes {
        let _ = writeln!(out, "- {note}");
    }
    if !speed.notes.is_empty() {
        out.push('\n');
    }
    out
}

fn capacity_section(measured: &Measurements, capacity: &CapacityResults) -> String {
    let mut out = String::new();
    let config = &measured.config;
    let _ = writeln!(out, "## Past capacity\n");
    let _ = writeln!(
        out,
        "Each filter configured for {} items at p = {}, then offered up to 3× as many keys. \
         FPP over {} never-inserted keys; false negatives among the keys it accepted.\n",
        format_count(config.capacity_items),
        config.capacity_fpp,
        format_count(config.capacity_queries)
    );
    let header: Vec<String> = [
        "filter",
        "FPP at 100%",
        "FPP at 200%",
        "FPP at 300%",
        "memory at 300% / at 100%",
        "refused",
        "false negatives",
    ]
    .map(str::to_owned)
    .to_vec();
    let body: Vec<Vec<String>> = measured
        .entries
        .iter()
        .filter_map(|entry| {
            let mine: Vec<&CapacityRow> = capacity
                .rows
                .iter()
                .filter(|r| r.filter == entry.name)
                .collect();
            let at = |load: f64| {
                mine.iter()
                    .min_by(|a, b| (a.load - load).abs().total_cmp(&(b.load - load).abs()))
                    .copied()
            };
            let (full, double, triple) = (at(1.0)?, at(2.0)?, at(3.0)?);
            Some(vec![
                entry.name.to_owned(),
                sci(full.empirical_fpp),
                sci(double.empirical_fpp),
                sci(triple.empirical_fpp),
                format!(
                    "{:.2}×",
                    triple.memory_bytes as f64 / full.memory_bytes.max(1) as f64
                ),
                triple.refused.to_string(),
                triple.false_negatives.to_string(),
            ])
        })
        .collect();
    out.push_str(&table(&header, &body));
    out.push('\n');
    for note in &capacity.notes {
        let _ = writeln!(out, "- {note}");
    }
    if !capacity.notes.is_empty() {
        out.push('\n');
    }
    out
}

fn filters_section(measured: &Measurements) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## The filters\n");
    for entry in &measured.entries {
        let source = match entry.origin {
            Origin::Filterlab => "filterlab".to_owned(),
            Origin::Peer { package } => format!("peer, {package}"),
        };
        let _ = writeln!(out, "- **{}** ({source}): {}", entry.name, entry.about);
    }
    out.push('\n');
    out
}
