//! Adding a filter is one registry entry, provably: an entry that only this
//! test registers appears in every per-filter table, every plot, every CSV
//! file and the decision guide of a report written by the normal pipeline.

use std::fs;
use std::path::Path;

use filterlab_bloom::{AtomicBloomFilter, BloomFilter};
use filterlab_core::{Error, Filter, Membership, RemovableFilter};
use filterlab_harness::commands::report::{ReportOptions, run_with};
use filterlab_harness::config::{Experiment, Preset, RunConfig};
use filterlab_harness::registry::{self, Build, Capability, Entry, Origin};
use filterlab_peers::{FilterlabSubject, Mode, Subject, Workload};

use crate::scratch;

const NAME: &str = "ExtraTestFilter";

/// An AtomicBloomFilter under another name. It claims deletes so that it
/// must show in the churn tables and plots (and be judged by the guide's
/// "Deletes" row):
/// its removal reports a present key as removed and changes nothing, which
/// keeps it free of false negatives (and its state-conditional FPP exact).
struct Extra(AtomicBloomFilter);

impl Membership for Extra {
    filterlab_harness::forward_keyless_methods!(0);
    fn contains_hash(&self, hash: u64) -> bool {
        self.0.contains_hash(hash)
    }
    fn contains_hashes(&self, hashes: &[u64], found: &mut [bool]) {
        self.0.contains_hashes(hashes, found);
    }
}

impl Filter for Extra {
    fn clear(&mut self) {
        self.0.clear();
    }
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Error> {
        self.0.insert_hash(hash)
    }
    fn insert_hashes(&mut self, hashes: &[u64]) -> Result<usize, Error> {
        self.0.insert_hashes(hashes)
    }
}

impl RemovableFilter for Extra {
    fn remove_hash(&mut self, hash: u64) -> Result<bool, Error> {
        Ok(self.0.contains_hash(hash))
    }
}

/// Builds the extra filter as a measured subject: removable, and taking
/// inserts from several threads.
fn build_extra(w: &Workload) -> Result<Box<dyn Subject>, filterlab_harness::Error> {
    let builder = BloomFilter::with_fpp(w.fpp)
        .expected_items(w.items)
        .seed(w.seed);
    let subject = FilterlabSubject::new(Extra(builder.build_atomic()?))
        .removable()
        .concurrent(|extra, keys, mode| match mode {
            Mode::OneKey => keys.iter().filter(|key| extra.0.insert(*key)).count(),
            Mode::Batched => extra.0.insert_many(keys),
        });
    Ok(subject.boxed())
}

/// The one entry the extra filter needs.
fn extra_entry() -> Entry {
    let what = "an AtomicBloomFilter under another name, registered by a test";
    let theory = "exact: the standard Bloom formula with its m and k";
    Entry::new(
        NAME,
        Origin::Filterlab,
        "test",
        what,
        theory,
        Build::Empty(build_extra),
    )
    .can(&[Capability::Deletes, Capability::ConcurrentInserts])
}

/// The Markdown tables of `text`, each as its lines.
fn tables(text: &str) -> Vec<Vec<&str>> {
    let mut tables: Vec<Vec<&str>> = Vec::new();
    let mut previous_was_row = false;
    for line in text.lines() {
        let is_row = line.starts_with('|');
        if is_row && !previous_was_row {
            tables.push(Vec::new());
        }
        if let Some(table) = tables.last_mut().filter(|_| is_row) {
            table.push(line);
        }
        previous_was_row = is_row;
    }
    tables
}

/// The row of `table` whose first cell is `first`.
fn row<'a>(table: &[&'a str], first: &str) -> Option<&'a str> {
    table.iter().copied().find(|line| {
        line.trim_start_matches('|')
            .split('|')
            .next()
            .is_some_and(|cell| cell.trim() == first)
    })
}

fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(suffix))
        .collect();
    names.sort();
    names
}

#[test]
fn an_extra_entry_appears_in_every_table_plot_and_the_guide() {
    let out = scratch("extra-filter");
    let mut entries = registry::registry();
    entries.push(extra_entry());
    // Every experiment over the entries: the Redis one measures
    // filterlab-redis against BloomFilter, not each entry.
    let mut config = RunConfig::preset(Preset::Tiny, 5, 2);
    config.experiments.retain(|&e| e != Experiment::Redis);
    let options = ReportOptions {
        out: Some(out.clone()),
        skipped: Vec::new(),
        config,
        filters: Vec::new(),
        quiet: true,
        command_line: "filterlab report --tiny (extra_filter test)".to_owned(),
    };
    let summary = run_with(entries, &options).unwrap();
    assert_eq!(summary.out, out);
    let readme = fs::read_to_string(out.join("README.md")).unwrap();
    let tables = tables(&readme);
    let per_filter: Vec<&Vec<&str>> = tables
        .iter()
        .filter(|t| t[0].starts_with("| filter |"))
        .collect();
    // Tables of filters with a capability it lacks (growth, the static
    // filters' builds), and those that show a chosen few (the static set's
    // comparison, the fastest single-thread inserters), need not have it;
    // every other does.
    let chosen_few = |t: &Vec<&str>| {
        t[0].contains("items at the end")
            || t[0].contains("| P |")
            || t[0].contains("| kind |")
            || t[0].contains("shared inserts")
            || t[0].contains("peak build memory")
    };
    let (few, every): (Vec<&&Vec<&str>>, Vec<&&Vec<&str>>) =
        per_filter.iter().partition(|t| chosen_few(t));
    // Fewest bits; fastest lookups; deletes; accuracy: measured FPP,
    // agreement, every row; speed: insert, concurrent insert, positive and
    // negative lookup, remove; capacity; churn and the removal of
    // never-inserted keys; the filters.
    assert_eq!(every.len(), 15, "{readme}");
    // Growth: one table per target (1e-2, 1e-3, 1e-4); the static set's
    // comparison and builds; the threads table.
    assert_eq!(few.len(), 7, "{readme}");
    for table in &every {
        let found = row(table, NAME).or_else(|| row(table, &format!("**{NAME}**")));
        assert!(found.is_some(), "{NAME} missing from\n{}", table.join("\n"));
    }
    // The growth tables do not have it (it does not grow); the threads
    // table does (its inserts take &self).
    for table in few
        .iter()
        .filter(|t| t[0].contains("items at the end") || t[0].contains("| P |"))
    {
        assert!(row(table, NAME).is_none());
        assert!(row(table, "ScalableBloomFilter").is_some());
    }
    // The builds table holds the static filters, not it.
    let builds = few
        .iter()
        .find(|t| t[0].contains("peak build memory"))
        .unwrap();
    assert!(row(builds, NAME).is_none() && row(builds, "RibbonFilter").is_some());
    let threads = few
        .iter()
        .find(|t| t[0].contains("shared inserts"))
        .unwrap();
    assert!(
        row(threads, NAME).is_some_and(|r| r.contains("| yes |")),
        "{}",
        threads.join("\n")
    );
    // The speed tables, in order: insert, concurrent insert, positive and
    // negative lookup (each with a batched row), remove (one key at a time).
    let speed: Vec<&&&Vec<&str>> = every
        .iter()
        .filter(|t| t[0].contains("| n = 10^4 |") && !t[0].contains("batched"))
        .collect();
    assert_eq!(speed.len(), 5, "{readme}");
    for (index, table) in speed.iter().enumerate() {
        let batched = row(table, &format!("{NAME} (batched)"));
        assert_eq!(batched.is_some(), index < 4, "{}", table.join("\n"));
    }
    // The filters table names it by its id too.
    assert!(
        readme.contains(&format!("| **{NAME}** | `{NAME}` |")),
        "{readme}"
    );

    // The guide judges deletes where the need lives, after the churn: its
    // removals remove nothing, so by then it holds 11× its capacity and its
    // FPP is far above p; the row picks another (it had the fewest bits
    // before any churn), and the churn tables above list it.
    let guide = &tables[0];
    let deletes = row(guide, "Deletes").expect("a Deletes row");
    assert!(deletes.contains("after 10× capacity of churn"), "{deletes}");
    assert!(!deletes.contains(&format!("**{NAME}**")), "{deletes}");

    // Every plot of filters that delete or take inserts has it in its
    // legend (the speed plots its batched line), or as a labelled point
    // (the Pareto charts); the growth plots do not.
    let plots = files_ending(&out, ".svg");
    assert_eq!(plots.len(), 17, "{plots:?}");
    for plot in plots.iter().filter(|p| {
        !p.starts_with("growth_") && *p != "skyline.svg" && *p != "capacity_refused.svg"
    }) {
        let svg = fs::read_to_string(out.join(plot)).unwrap();
        // plotters writes each text on a line of its own; on a Pareto
        // chart a point tied with another on the frontier shares its label
        // ("BloomFilter = ExtraTestFilter (within noise)").
        let labelled = |label: &str| svg.lines().any(|line| line.trim() == label);
        let tied = svg
            .lines()
            .any(|line| line.contains(NAME) && line.contains("(within noise)"));
        assert!(
            labelled(NAME) || (plot.starts_with("pareto_") && tied),
            "{plot} lacks {NAME}"
        );
        if plot.starts_with("speed_") && plot != "speed_remove.svg" {
            assert!(labelled(&format!("{NAME} (batched)")), "{plot}");
        }
    }
    for plot in plots.iter().filter(|p| p.starts_with("growth_")) {
        let svg = fs::read_to_string(out.join(plot)).unwrap();
        assert!(!svg.lines().any(|line| line.trim() == NAME), "{plot}");
    }

    check_csvs(&out);
    fs::remove_dir_all(&out).unwrap();
}

/// Every CSV file of the report in `out` but growth.csv and build.csv (the
/// static filters' builds) has the extra filter's rows.
fn check_csvs(out: &Path) {
    let csvs = files_ending(out, ".csv");
    assert_eq!(csvs.len(), 10, "{csvs:?}");
    for csv in csvs
        .iter()
        .filter(|c| !["growth.csv", "run.csv", "build.csv"].contains(&c.as_str()))
    {
        let text = fs::read_to_string(out.join(csv)).unwrap();
        assert!(text.contains(&format!("\n{NAME},filterlab,")), "{csv}");
    }
}
