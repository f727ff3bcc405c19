//! `filterlab bench`: counts every filter's operations under Valgrind,
//! compares them with the committed baseline (`--check`) or rewrites it
//! (`--save`), and optionally measures wall-clock ratios to the peers
//! (`--wall`) and times the counted operations (`--timings`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use crate::bench::baseline::{Setup, read_rows, write_rows};
use crate::bench::callgrind::{CACHE_MODEL, CYCLES_FORMULA, valgrind_version};
use crate::bench::case::{Size, run_case};
use crate::bench::compare::{Comparison, compare, describe, thresholds_text};
use crate::bench::counts::{CountRow, Runner};
use crate::bench::plot;
use crate::bench::sanity::{correlations, join};
use crate::bench::table::{Table, counts_table, sanity_table, wall_table};
use crate::bench::wall::{self, CONFIDENCE, WALL_STAGE, WallRow};
use crate::error::Error;
use crate::machine::cpu_identity;
use crate::parallel::map_in_order;
use crate::progress::{self, Tracker};
use crate::registry::{self, Entry, Origin};

/// The baseline of counts `--check` and `--save` use by default.
pub const DEFAULT_BASELINE: &str = "reports/bench-baseline.csv";

/// The wall-clock baseline.
pub const DEFAULT_WALL_BASELINE: &str = "reports/bench-wall-baseline.csv";

/// The filters CI counts at the size that exceeds the simulated last
/// level (all are counted in cache): one block layout, one of random
/// probes, so that the subset stays within 5 minutes on 2 shared cores.
pub const CI_LARGE_FILTERS: [&str; 2] = ["BlockedBloomFilter", "CountingBloomFilter"];

/// The pairs CI times in the wall-clock mode, in cache.
pub const CI_WALL_FILTERS: [&str; 2] = ["BlockedBloomFilter", "SplitBlockBloomFilter"];

/// Options of `filterlab bench`.
#[derive(Debug, Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "each is an independent command-line flag"
)]
pub struct BenchArgs {
    /// Compare with the baseline; exit 3 naming every regression beyond the
    /// thresholds (+1% instructions, +3% est. cycles per operation; a
    /// wall-clock ratio interval more than 25% above the baseline's range).
    #[arg(long, conflicts_with = "save")]
    pub check: bool,
    /// Write this run into the baseline (rows it did not measure are kept
    /// when Valgrind, rustc, profile, caches and kernels are unchanged).
    #[arg(long)]
    pub save: bool,
    /// The baseline of counts.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_BASELINE)]
    pub baseline: PathBuf,
    /// The baseline of wall-clock ratios.
    #[arg(long, value_name = "FILE", default_value = DEFAULT_WALL_BASELINE)]
    pub wall_baseline: PathBuf,
    /// The subset CI runs: every filter in cache, two at the size that
    /// exceeds the simulated last level, and two wall-clock pairs.
    #[arg(long, conflicts_with_all = ["filters", "sizes"])]
    pub ci: bool,
    /// Only these filters (comma-separated registry names).
    #[arg(long, value_name = "NAMES", value_delimiter = ',', num_args = 1..)]
    pub filters: Vec<String>,
    /// Only these sizes.
    #[arg(long, value_name = "SIZES", value_delimiter = ',', num_args = 1.., value_enum)]
    pub sizes: Vec<Size>,
    /// Also measure wall-clock ratios to each filterlab filter's peer, in
    /// cache (a native size past a server's last level, hundreds of MiB,
    /// would take minutes a round).
    #[arg(long)]
    pub wall: bool,
    /// Rounds of the wall-clock mode (and repetitions of `--timings`).
    #[arg(long, value_name = "N", default_value_t = 15, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(3..))]
    pub rounds: u32,
    /// Independent wall-clock runs of `--rounds` rounds; a row of several
    /// is the range of their intervals (default: 10 with `--save`, as the
    /// baseline must span how far a shared host moves a ratio between
    /// runs; 1 otherwise).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub wall_runs: Option<u32>,
    /// With `--save`, replace the wall-clock baseline instead of widening
    /// it (after an intended change of speed).
    #[arg(long, requires = "save")]
    pub wall_fresh: bool,
    /// Also time every counted operation in cache, and print the rank
    /// correlation between counts and times.
    #[arg(long)]
    pub timings: bool,
    /// Write the run's CSV files, Markdown and charts into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Append the Markdown tables to this file (e.g. $GITHUB_STEP_SUMMARY).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Valgrind processes at once (default: every core).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// The Valgrind executable.
    #[arg(long, value_name = "PATH", default_value = "valgrind")]
    pub valgrind: PathBuf,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
    /// Run one case in this process (what Valgrind runs).
    #[arg(long, hide = true, value_name = "FILTER")]
    pub case: Option<String>,
    /// Inject the tests' regression (debug builds only).
    #[arg(long, hide = true)]
    pub inject_regression: bool,
    /// Time one wall-clock round of this filterlab filter and its peer in
    /// this process and print the ratios (what `--wall` runs per round).
    #[arg(long, hide = true, value_name = "FILTER")]
    pub wall_round: Option<String>,
    /// In `--wall-round`, time the peer first.
    #[arg(long, hide = true)]
    pub peer_first: bool,
}

/// The progress stage of the counting.
const COUNT_STAGE: &str = "counting";

/// Rough seconds of one core to count one filter at `size` under Valgrind
/// on this project's machine (the full baseline, 42 cases, took 26 minutes
/// on 2 cores), for the progress bar's time left.
fn count_seconds(size: Size) -> f64 {
    match size {
        Size::InCache => 9.0,
        Size::ExceedsLlc => 140.0,
        Size::Tiny => 1.0,
    }
}

/// Wall-clock runs a baseline spans by default.
const SAVED_WALL_RUNS: u32 = 10;

/// The wall-clock runs of this invocation.
fn wall_runs(args: &BenchArgs) -> u32 {
    args.wall_runs
        .unwrap_or(if args.save { SAVED_WALL_RUNS } else { 1 })
}

/// Rough seconds to time one filter's operations once in cache (the
/// wall-clock mode times two a round, `--timings` every one).
const TIMING_SECONDS: f64 = 0.5;

/// What a run counts and times.
struct Plan {
    /// The filters counted.
    entries: Vec<Entry>,
    /// The sizes they are counted at.
    sizes: Vec<Size>,
    /// The filterlab filters timed against their peers.
    wall: Vec<Entry>,
}

/// `program` as found on PATH (the cases run with an empty environment),
/// or as given.
fn on_path(program: &Path) -> PathBuf {
    if program.components().count() > 1 {
        return program.to_owned();
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
        .unwrap_or_else(|| program.to_owned())
}

/// What a run measured and how it compares.
struct Run {
    setup: Setup,
    counts: Vec<CountRow>,
    wall: Vec<WallRow>,
    seconds: f64,
}

/// Text for the terminal and Markdown for a job summary, built together.
#[derive(Default)]
struct Output {
    text: String,
    markdown: String,
}

impl Output {
    fn line(&mut self, line: &str) {
        let _ = writeln!(self.text, "{line}");
        let _ = writeln!(self.markdown, "{line}\n");
    }

    fn heading(&mut self, title: &str) {
        let _ = writeln!(self.text, "\n== {title}");
        let _ = writeln!(self.markdown, "### {title}\n");
    }

    fn table(&mut self, table: &Table) {
        self.text.push_str(&table.text());
        self.markdown.push_str(&table.markdown());
        self.markdown.push('\n');
    }

    fn list(&mut self, title: &str, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.line(title);
        for item in items {
            let _ = writeln!(self.text, "  {item}");
            let _ = writeln!(self.markdown, "- {item}");
        }
        self.markdown.push('\n');
    }
}

/// Runs `filterlab bench`; prints its tables and returns what is left to
/// print (a case's manifest, or nothing).
///
/// # Errors
///
/// Usage errors, a failing Valgrind, and (exit code 3) a failed `--check`.
pub fn bench(args: &BenchArgs) -> Result<String, Error> {
    if let Some(filter) = &args.case {
        let size = args.sizes.first().copied().unwrap_or(Size::InCache);
        return run_case(filter, size, args.inject_regression);
    }
    if let Some(filter) = &args.wall_round {
        let size = args.sizes.first().copied().unwrap_or(Size::InCache);
        return wall::round(filter, size, args.peer_first);
    }
    let plan = plan(args)?;
    let progress = Tracker::new(progress_plan(args, &plan), args.quiet);
    let run = measure(args, &plan, &progress)?;
    let entries = plan.entries;
    let mut output = Output::default();
    describe_run(&mut output, &run);
    let mut failures = Vec::new();
    if args.check {
        check(args, &run, &mut output, &mut failures)?;
    } else {
        output.heading("Counts");
        output.table(&counts_table(&run.counts, None));
        if !run.wall.is_empty() {
            output.heading("Wall-clock ratios to the peers (below 1: filterlab faster)");
            output.table(&wall_table(&run.wall, &[]));
        }
    }
    if args.timings {
        timings(args, &run, &entries, &progress, &mut output)?;
    }
    drop(progress);
    if args.save {
        save(args, &run)?;
        output.line(&format!("baseline written: {}", args.baseline.display()));
        if !run.wall.is_empty() {
            output.line(&format!(
                "wall-clock baseline written: {}",
                args.wall_baseline.display()
            ));
        }
    }
    if let Some(dir) = &args.out {
        write_out(dir, &run, &entries, &output)?;
    }
    if let Some(path) = &args.markdown {
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        file.write_all(output.markdown.as_bytes())?;
    }
    print!("{}", output.text);
    if failures.is_empty() {
        Ok(String::new())
    } else {
        Err(Error::gate(format!(
            "bench --check failed:\n  {}",
            failures.join("\n  ")
        )))
    }
}

/// The filters and sizes to count, and the filters to time against peers.
fn plan(args: &BenchArgs) -> Result<Plan, Error> {
    let all = registry::registry();
    if args.ci {
        let wall = if args.wall {
            registry::select(all.clone(), &CI_WALL_FILTERS.map(str::to_owned))?
        } else {
            Vec::new()
        };
        return Ok(Plan {
            entries: all,
            sizes: Size::MEASURED.to_vec(),
            wall,
        });
    }
    let entries = registry::select(all, &args.filters)?;
    let sizes = if args.sizes.is_empty() {
        Size::MEASURED.to_vec()
    } else {
        args.sizes.clone()
    };
    let wall = if args.wall {
        entries
            .iter()
            .filter(|e| e.origin == Origin::Filterlab)
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    Ok(Plan {
        entries,
        sizes,
        wall,
    })
}

/// Valgrind processes at once.
fn jobs(args: &BenchArgs) -> usize {
    args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        usize::from,
    )
}

/// Each stage's estimated seconds, for the progress bar's time left.
fn progress_plan(args: &BenchArgs, plan: &Plan) -> progress::Plan {
    let mut estimate = progress::Plan::default();
    let counting: f64 = cases(args, plan)
        .iter()
        .map(|&(_, size)| count_seconds(size))
        .sum();
    estimate.add(COUNT_STAGE, counting / jobs(args) as f64);
    let rounds = f64::from(args.rounds);
    if !plan.wall.is_empty() {
        estimate.add(
            WALL_STAGE,
            plan.wall.len() as f64 * rounds * f64::from(wall_runs(args)) * 2.0 * TIMING_SECONDS,
        );
    }
    if args.timings {
        estimate.add("speed", plan.entries.len() as f64 * rounds * TIMING_SECONDS);
    }
    estimate
}

/// Every (filter, size) the run counts.
fn cases<'p>(args: &BenchArgs, plan: &'p Plan) -> Vec<(&'p Entry, Size)> {
    plan.sizes
        .iter()
        .flat_map(|&size| plan.entries.iter().map(move |entry| (entry, size)))
        .filter(|(entry, size)| in_subset(args, entry, *size))
        .collect()
}

/// Whether the CI subset counts `entry` at `size`.
fn in_subset(args: &BenchArgs, entry: &Entry, size: Size) -> bool {
    !args.ci || size != Size::ExceedsLlc || CI_LARGE_FILTERS.contains(&entry.name)
}

/// Counts every case under Valgrind (several at once), then measures the
/// wall-clock ratios.
fn measure(args: &BenchArgs, plan: &Plan, progress: &Tracker) -> Result<Run, Error> {
    let start = Instant::now();
    let valgrind = valgrind_version(&args.valgrind)?;
    // Fixed-length, as the case directories inside it (see `Runner`).
    let scratch = std::env::temp_dir().join(format!("filterlab-bench-{:010}", std::process::id()));
    let runner = Runner {
        valgrind: on_path(&args.valgrind),
        exe: std::env::current_exe()?,
        scratch: scratch.clone(),
        inject: args.inject_regression,
    };
    let cases = cases(args, plan);
    // The largest cases first, so that the workers finish together.
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cases[i].1.items()));
    let jobs = jobs(args);
    let stage = progress.stage(COUNT_STAGE, cases.len() as u64);
    let results = map_in_order(&order, jobs, |i| {
        let (entry, size) = cases[i];
        let result = runner.count(entry, size);
        stage.step(&format!("{} at {}", entry.name, size.label()));
        result
    });
    stage.finish(&format!("{} cases counted", cases.len()));
    let _ = fs::remove_dir_all(&scratch);
    let mut counts = Vec::new();
    let mut features: Option<String> = None;
    for result in results {
        let (seen, rows) = result?;
        match &features {
            Some(first) if *first != seen => {
                return Err(Error::failed(format!(
                    "the cases saw different CPU features ({first} and {seen})"
                )));
            }
            _ => features = Some(seen),
        }
        counts.extend(rows);
    }
    let setup = Setup::current(valgrind, features.unwrap_or_default());
    let wall = if plan.wall.is_empty() {
        Vec::new()
    } else {
        let pairs = wall::pairs(&plan.wall)?;
        wall::measure(
            &runner.exe,
            &pairs,
            &[Size::InCache],
            (args.rounds, wall_runs(args)),
            progress,
        )?
    };
    Ok(Run {
        setup,
        counts,
        wall,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// What was measured, how, and what the numbers mean.
fn describe_run(output: &mut Output, run: &Run) {
    output.line(&format!(
        "filterlab bench: {} operations counted under Valgrind's callgrind in {:.0} s: instructions and simulated cache misses per operation (counts, not time)",
        run.counts.len(),
        run.seconds
    ));
    output.line(&format!(
        "simulated caches {CACHE_MODEL}; sizes: in-cache = {} items, exceeds-llc = {} items, p = 1%",
        Size::InCache.items(),
        Size::ExceedsLlc.items()
    ));
    output.line(CYCLES_FORMULA);
    output.line(&format!(
        "{}; {}; {}; CPU features under Valgrind: {} (Valgrind has no AVX-512, so the filters ran their AVX2 or scalar kernels)",
        run.setup.valgrind, run.setup.rustc, run.setup.build, run.setup.features
    ));
}

/// `--check`: compares counts (and wall-clock ratios) with the baselines;
/// pushes one line per failure.
fn check(
    args: &BenchArgs,
    run: &Run,
    output: &mut Output,
    failures: &mut Vec<String>,
) -> Result<(), Error> {
    let (header, baseline): (String, Vec<CountRow>) = read_rows(&args.baseline)?;
    let (differences, incomparable) = run.setup.differences(&Setup::parse(&header));
    if incomparable {
        return Err(Error::usage(format!(
            "the counts cannot be compared with {}: {}; make a baseline with this setup (`filterlab bench --save`), or run the one it records",
            args.baseline.display(),
            differences.join("; ")
        )));
    }
    let comparison = compare(&baseline, &run.counts);
    output.heading(&format!(
        "Counts, checked against {}",
        args.baseline.display()
    ));
    output.line(&format!("thresholds: {}", thresholds_text()));
    output.list(
        "the setup differs from the baseline's (counts may move for that reason alone):",
        &differences,
    );
    let changes: Vec<_> = comparison
        .regressions
        .iter()
        .chain(&comparison.improvements)
        .chain(&comparison.other_changes)
        .cloned()
        .collect();
    output.table(&counts_table(&run.counts, Some(&changes)));
    report_comparison(output, &comparison, failures);
    if !run.wall.is_empty() {
        check_wall(args, run, output, failures);
    }
    Ok(())
}

/// One line per item.
fn lines<T: ToString>(items: &[T]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

/// The verdict lines of a counts comparison.
fn report_comparison(output: &mut Output, comparison: &Comparison, failures: &mut Vec<String>) {
    output.line(&format!(
        "{} rows identical to the baseline in every count; {} changed; {} baseline rows not measured in this run",
        comparison.identical,
        comparison.changed,
        comparison.not_measured
    ));
    let regressions = lines(&comparison.regressions);
    let missing: Vec<String> = comparison
        .not_in_baseline
        .iter()
        .map(|key| {
            format!(
                "{} is not in the baseline (save one with --save)",
                describe(key)
            )
        })
        .collect();
    output.list("REGRESSIONS (fail):", &regressions);
    output.list("NOT IN THE BASELINE (fail):", &missing);
    output.list("improvements:", &lines(&comparison.improvements));
    output.list(
        "other changes (within the thresholds, or not gated):",
        &lines(&comparison.other_changes),
    );
    failures.extend(regressions);
    failures.extend(missing);
}

/// The CPU a wall-clock baseline's header names.
fn recorded_cpu(header: &str) -> &str {
    header
        .lines()
        .find_map(|line| line.strip_prefix("# cpu: "))
        .unwrap_or("unknown")
}

/// Compares the wall-clock ratios with their baseline, when it was measured
/// on this CPU model (ratios of other machines say nothing about this one).
fn check_wall(args: &BenchArgs, run: &Run, output: &mut Output, failures: &mut Vec<String>) {
    let cpu = cpu_identity();
    output.heading("Wall-clock ratios to the peers (below 1: filterlab faster)");
    let Ok((header, baseline)) = read_rows::<WallRow>(&args.wall_baseline) else {
        output.line(&format!(
            "no wall-clock baseline at {}: not compared",
            args.wall_baseline.display()
        ));
        output.table(&wall_table(&run.wall, &[]));
        return;
    };
    let recorded = recorded_cpu(&header);
    if recorded != cpu {
        output.line(&format!(
            "the wall-clock baseline was measured on `{recorded}`, this machine is `{cpu}`: ratios shown, not compared"
        ));
        output.table(&wall_table(&run.wall, &baseline));
        return;
    }
    let comparison = wall::compare(&baseline, &run.wall);
    output.line(&format!(
        "a ratio fails when its {:.0}% interval lies wholly above the baseline's range by more than {:.0}%; {} compared",
        100.0 * CONFIDENCE,
        100.0 * wall::WALL_TOLERANCE,
        comparison.compared
    ));
    output.table(&wall_table(&run.wall, &baseline));
    let regressions: Vec<String> = comparison
        .regressions
        .iter()
        .map(wall::WallChange::describe)
        .collect();
    output.list("WALL-CLOCK REGRESSIONS (fail):", &regressions);
    output.list(
        "wall-clock improvements:",
        &comparison
            .improvements
            .iter()
            .map(wall::WallChange::describe)
            .collect::<Vec<_>>(),
    );
    failures.extend(regressions);
}

/// `--timings`: every counted in-cache operation timed natively, beside
/// its counts, with the rank correlations.
fn timings(
    args: &BenchArgs,
    run: &Run,
    entries: &[Entry],
    progress: &Tracker,
    output: &mut Output,
) -> Result<(), Error> {
    let in_cache: Vec<CountRow> = run
        .counts
        .iter()
        .filter(|r| r.size == Size::InCache)
        .cloned()
        .collect();
    if in_cache.is_empty() {
        return Err(Error::usage("--timings needs the in-cache size"));
    }
    let times = wall::timings(entries, Size::InCache, args.rounds, progress);
    let rows = join(&in_cache, &times);
    let (instructions, cycles) = correlations(&rows);
    let show = |rho: Option<f64>| rho.map_or_else(|| "-".to_owned(), |r| format!("{r:.3}"));
    output.heading("Counts beside times (in cache, this machine)");
    output.line(&format!(
        "Spearman rank correlation over {} operations: instructions vs ns {}, est. cycles vs ns {} (ns: median of {} alternating repetitions)",
        rows.len(),
        show(instructions),
        show(cycles),
        args.rounds
    ));
    output.table(&sanity_table(&rows));
    if let Some(dir) = &args.out {
        write_rows(&dir.join("bench-timings.csv"), "", &rows)?;
    }
    Ok(())
}

/// Rows in a stable order: size, registry order, operation, mode.
fn sorted<T: Clone>(rows: &[T], key: impl Fn(&T) -> (Size, &str, u8)) -> Vec<T> {
    let position: BTreeMap<&str, usize> = registry::registry()
        .iter()
        .enumerate()
        .map(|(i, e)| (e.name, i))
        .collect();
    let mut out = rows.to_vec();
    out.sort_by_key(|row| {
        let (size, name, rank) = key(row);
        (
            size,
            position.get(name).copied().unwrap_or(usize::MAX),
            rank,
        )
    });
    out
}

/// `--save`: this run into the baselines, keeping rows it did not measure
/// when the setup is unchanged.
fn save(args: &BenchArgs, run: &Run) -> Result<(), Error> {
    let mut rows = run.counts.clone();
    if args.baseline.exists() {
        let (header, old): (String, Vec<CountRow>) = read_rows(&args.baseline)?;
        let measured: Vec<_> = rows.iter().map(CountRow::key).collect();
        let kept: Vec<CountRow> = old
            .into_iter()
            .filter(|row| !measured.contains(&row.key()))
            .collect();
        if !kept.is_empty() && Setup::parse(&header) != run.setup {
            let (differences, _) = run.setup.differences(&Setup::parse(&header));
            return Err(Error::usage(format!(
                "{} holds rows this run did not measure, made with another setup ({}): save a full run (`filterlab bench --save`) to replace them all",
                args.baseline.display(),
                differences.join("; ")
            )));
        }
        rows.extend(kept);
    }
    let rows = sorted(&rows, |r| {
        (r.size, r.filter.as_str(), r.op as u8 * 2 + r.mode as u8)
    });
    write_rows(&args.baseline, &run.setup.header(), &rows)?;
    if !run.wall.is_empty() {
        save_wall(args, &run.wall)?;
    }
    Ok(())
}

/// Writes the wall-clock baseline. On the CPU that made it, a saved run
/// widens it (each row's range spans every run saved into it, as the
/// other tenants of a shared host move a ratio further between sessions
/// than within one); `--wall-fresh`, another CPU or a new pair replace.
fn save_wall(args: &BenchArgs, run: &[WallRow]) -> Result<(), Error> {
    let cpu = cpu_identity();
    let kept = match read_rows::<WallRow>(&args.wall_baseline) {
        Ok((header, old)) if !args.wall_fresh && recorded_cpu(&header) == cpu => old,
        _ => Vec::new(),
    };
    let rows = wall::envelope(&[kept, run.to_vec()]);
    let runs = rows.iter().map(|r| r.runs).max().unwrap_or(1);
    let rounds = rows.iter().map(|r| r.rounds).min().unwrap_or(args.rounds);
    let header = format!(
        "# filterlab bench --wall: ratios of a filterlab filter's time to its peer's over {runs} runs of {rounds} alternating rounds (a process a round); ratio: the median of the runs' medians; low, high: the range of their distribution-free intervals\n# cpu: {cpu}\n"
    );
    let rows = sorted(&rows, |r| {
        (r.size, r.filter.as_str(), r.op as u8 * 2 + r.mode as u8)
    });
    write_rows(&args.wall_baseline, &header, &rows)
}

/// `--out`: the run's CSV files, its Markdown and its charts.
fn write_out(dir: &Path, run: &Run, entries: &[Entry], output: &Output) -> Result<(), Error> {
    fs::create_dir_all(dir)?;
    write_rows(&dir.join("bench.csv"), &run.setup.header(), &run.counts)?;
    if !run.wall.is_empty() {
        write_rows(&dir.join("bench-wall.csv"), "", &run.wall)?;
    }
    fs::write(dir.join("bench.md"), &output.markdown)?;
    plot::draw(&run.counts, entries, dir)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: BenchArgs,
    }

    #[test]
    fn the_ci_subset_counts_four_filters_beyond_the_last_level() {
        let args = Wrapper::try_parse_from(["x", "--ci", "--check"])
            .unwrap()
            .args;
        let plan = plan(&args).unwrap();
        assert_eq!(plan.entries.len(), registry::registry().len());
        assert_eq!(plan.sizes, [Size::InCache, Size::ExceedsLlc]);
        assert!(plan.wall.is_empty());
        let large = plan
            .entries
            .iter()
            .filter(|e| in_subset(&args, e, Size::ExceedsLlc))
            .count();
        assert_eq!(large, CI_LARGE_FILTERS.len());
        assert!(Wrapper::try_parse_from(["x", "--ci", "--filters", "a"]).is_err());
        assert!(Wrapper::try_parse_from(["x", "--check", "--save"]).is_err());
    }
}
