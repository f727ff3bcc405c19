//! The command line: bad arguments fail clearly, with no report left behind;
//! `recommend` prints the sizing; `compare` prints both speeds; `report`
//! writes a complete report.

use std::fmt::Write as _;
use std::fs;

use filterlab_harness::output::REPORT_FILES;

use crate::{assert_contains, line_after, refused_with, run, scratch, stdout_with};

#[test]
fn fpp_outside_the_unit_interval_is_refused() {
    for fpp in ["0", "1", "1.5", "-0.1", "NaN", "abc"] {
        let (_, stderr) = run(&format!("recommend --items 1000 --fpp {fpp}"), 2);
        let why = if fpp == "abc" {
            "is not a number"
        } else {
            "must be in (0, 1)"
        };
        let value = format!("invalid value '{fpp}' for '--fpp <P>'");
        assert_contains(&stderr, &[&value, why]);
    }
    refused_with("compare --items 1000 --fpp 1", &["must be in (0, 1)"]);
}

/// A negative number given as its own argument is the option's value, and
/// gets the option's range message (issue 23, item 7): `--fpp -0.1` was
/// read as an unknown flag `-0`, and clap's usage line after that message
/// still named `--fpp`. Every numeric option of every subcommand.
#[test]
fn negative_numbers_get_the_range_message() {
    let cases = [
        (
            "report --tiny --quiet --seed -1",
            "--seed <S>",
            "is not a 64-bit seed",
        ),
        (
            "report --tiny --quiet --threads -2",
            "--threads <N>",
            "-2 is not in 1..=65535",
        ),
        (
            "recommend --items -5 --fpp 0.01",
            "--items <N>",
            "of at least 1",
        ),
        (
            "recommend --items 100 --fpp -0.1",
            "--fpp <P>",
            "must be in (0, 1)",
        ),
        (
            "recommend --items 100 --fpp 0.01 --memory -1K",
            "--memory <BYTES>",
            "not a positive size",
        ),
        (
            "compare --items -5 --fpp 0.01",
            "--items <N>",
            "of at least 1",
        ),
        (
            "compare --items 100 --fpp -0.1",
            "--fpp <P>",
            "must be in (0, 1)",
        ),
        (
            "compare --items 100 --fpp 0.01 --seed -1",
            "--seed <S>",
            "is not a 64-bit seed",
        ),
    ];
    for (command, option, range) in cases {
        let stderr = refused_with(command, &[&format!("for '{option}': "), range]);
        assert!(
            !stderr.contains("unexpected argument"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn zero_items_is_refused() {
    refused_with("recommend --items 0 --fpp 0.01", &["at least 1"]);
}

#[test]
fn unknown_filter_is_refused_before_anything_is_written() {
    let out = scratch("unknown-filter");
    let command = format!(
        "report --tiny --quiet --filters BloomFilter,NoSuchFilter --out {}",
        out.display()
    );
    refused_with(
        &command,
        &[
            "unknown filter `NoSuchFilter`",
            "known filters: BloomFilter",
        ],
    );
    assert!(!out.join("README.md").exists());
}

#[test]
fn unwritable_output_directory_is_refused() {
    let blocker = scratch("not-a-directory");
    fs::write(&blocker, "a file where a directory should be").unwrap();
    for out in [blocker.join("reports"), blocker.clone()] {
        refused_with(
            &format!("report --tiny --quiet --out {}", out.display()),
            &["output directory"],
        );
    }
    let content = fs::read_to_string(&blocker).unwrap();
    assert_eq!(content, "a file where a directory should be");
    fs::remove_file(&blocker).unwrap();
}

#[test]
fn recommend_sizes_ibm_streams_example_and_warns_about_the_hash() {
    // IBM Streams: 8 GB with power-of-two rounding, i.e. 2^36 bits.
    stdout_with(
        "recommend --items 1000000000 --fpp 1e-14",
        &[
            "bits allocated      68719476736",
            "8.00 GiB",
            "1. BloomFilter:",
            "WARNING: a 64-bit key hash cannot deliver FPP 1e-14",
        ],
    );
}

#[test]
fn recommend_names_filterlab_filters_that_delete_or_grow() {
    let cases: [(&str, &[&str]); 3] = [
        (
            "--fpp 0.001 --deletes",
            &[
                "1. CuckooFilter:",
                "CountingBloomFilter",
                "BlockedCountingBloomFilter",
            ],
        ),
        // The growing cuckoo filter keeps its target, in fewer bytes.
        (
            "--fpp 0.01 --unknown-size",
            &[
                "1. CuckooFilter-grow:",
                "2. ScalableBloomFilter:",
                "after growing 1000×",
            ],
        ),
        (
            "--fpp 0.01 --deletes --concurrent",
            &[
                "No filterlab filter offers all of: deletes, concurrent inserts",
                "deletes alone: CountingBloomFilter",
                "Measured figures: none; looked for a report in /nonexistent and found none",
            ],
        ),
    ];
    for (options, needles) in cases {
        let command = format!("recommend --items 1e6 {options} --report /nonexistent");
        let stdout = stdout_with(&command, needles);
        assert!(!stdout.contains("No filterlab filter supports"), "{stdout}");
    }
}

#[test]
fn compare_shows_one_key_and_batched_speed_in_columns() {
    let command = "compare --items 2000 --fpp 0.01 --filters BloomFilter,fastbloom,scalable_cuckoo_filter --quiet";
    let (stdout, _) = run(command, 0);
    assert!(
        line_after(&stdout, "BloomFilter ").starts_with("(batched)"),
        "{stdout}"
    );
    assert!(
        line_after(&stdout, "fastbloom 0.17 ").starts_with("scalable_cuckoo_filter 0.5"),
        "{stdout}"
    );
    assert_contains(
        &stdout,
        &["exact theory inside interval", "Keys: generated"],
    );
    // Every column starts where its header does, whatever the name's length.
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("filter ")).unwrap();
    let column = |line: &str, word: &str| line.find(word);
    let verdict = column(lines[header], "verdict").unwrap();
    for line in &lines[header + 1..] {
        if line.trim().is_empty() {
            break;
        }
        if !line.trim_start().starts_with("(batched)") {
            let at = line
                .find(" exact theory")
                .or_else(|| line.find(" approximate"))
                .unwrap();
            assert_eq!(at + 1, verdict, "{stdout}");
        }
    }
}

#[test]
fn compare_measures_your_own_keys_against_held_out_ones() {
    let dir = scratch("keys");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("urls.txt");
    let mut urls = String::new();
    for i in 0..4000 {
        let _ = writeln!(
            urls,
            "https://shop.example.com/product/{}/reviews?page={}",
            i / 7,
            i % 7
        );
    }
    fs::write(&file, urls).unwrap();
    let command = format!(
        "compare --keys {} --fpp 0.01 --filters BloomFilter,CuckooFilter --quiet",
        file.display()
    );
    stdout_with(
        &command,
        &[
            "2·10^3 items at target FPP 1e-2",
            "lines mapped to u64 keys by XXH3",
            "2·10^3 inserted, 2·10^3 held out",
            "held-out keys each filter answered present",
            "BloomFilter ",
            "CuckooFilter ",
        ],
    );
    refused_with(
        &format!("compare --keys {} --fpp 0.01 --items 5", file.display()),
        &["--items"],
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_is_in_columns_with_report_names() {
    let (stdout, _) = run("list", 0);
    let lines: Vec<&str> = stdout.lines().collect();
    let second = lines[0].find("in the report").unwrap();
    for line in &lines[1..] {
        let name_end = line.find(' ').unwrap();
        assert!(name_end < second, "{line}");
        assert_ne!(line.as_bytes()[second], b' ', "{stdout}");
        assert_eq!(line.as_bytes()[second - 1], b' ', "{stdout}");
    }
    assert_contains(
        &stdout,
        &[
            "bloomfilter 3.0",
            "qfilter 0.3 resizeable",
            "BloomFilter (pow2)",
        ],
    );
}

#[test]
fn a_run_with_less_data_never_overwrites_a_richer_report() {
    let dir = scratch("richer");
    let reports = dir.join("reports");
    fs::create_dir_all(&reports).unwrap();
    fs::write(
        reports.join("run.csv"),
        "preset,seed,filters,complete,command\nfull,24301,21,true,filterlab report --full\n",
    )
    .unwrap();
    fs::write(
        reports.join("README.md"),
        "# filterlab report\n\nthe committed one\n",
    )
    .unwrap();
    let filterlab = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_filterlab"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    // Named explicitly: refused before anything runs.
    let output = filterlab(&["report", "--tiny", "--quiet", "--out", "reports"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_contains(
        &stderr,
        &[
            "reports holds a --full report",
            "has less data",
            "--out DIR",
        ],
    );
    // The default directory: the run goes elsewhere and says so first.
    let output = filterlab(&["report", "--tiny", "--quiet", "--experiments", "accuracy"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_contains(&stderr, &["writing to target/filterlab-report instead"]);
    assert!(dir.join("target/filterlab-report/README.md").exists());
    let readme = fs::read_to_string(reports.join("README.md")).unwrap();
    assert_eq!(readme, "# filterlab report\n\nthe committed one\n");
    // A run with as much data may replace it.
    let output = filterlab(&[
        "report",
        "--tiny",
        "--quiet",
        "--experiments",
        "accuracy",
        "--out",
        "target/filterlab-report",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_names_every_filter() {
    stdout_with(
        "list",
        &[
            "BloomFilter",
            "fastbloom",
            "bloomfilter",
            "sbbf-rs-safe",
            "cuckoofilter",
            "growable-bloom-filter",
            "xorf-BinaryFuse8",
            "CountingBloomFilter",
            "BlockedCountingBloomFilter",
            "CuckooFilter-grow",
            "ScalableBloomFilter-nonscaling",
            "fastbloom-rs",
            "qfilter-resizeable",
            "scalable_cuckoo_filter",
        ],
    );
}

#[test]
fn report_writes_a_complete_report() {
    let out = scratch("report");
    stdout_with(
        &format!("report --tiny --quiet --threads 2 --out {}", out.display()),
        &["accuracy gate passed"],
    );
    // Every report file: the tiny run has removals, churn and growth too,
    // and redis.csv when a Redis server was found.
    let readme = fs::read_to_string(out.join("README.md")).unwrap();
    let redis_skipped = readme.contains("skipped: no Redis server");
    for file in REPORT_FILES {
        let expected = file != "redis.csv" || !redis_skipped;
        assert_eq!(out.join(file).exists(), expected, "{file}");
    }
    // A Pareto chart per target of the tiny run.
    assert!(out.join("pareto_p1e-1.svg").exists() && out.join("pareto_p1e-2.svg").exists());
    let record = fs::read_to_string(out.join("run.csv")).unwrap();
    assert!(
        record.starts_with(
            "preset,seed,filters,complete,command,timing_cells_agreeing,timing_cells_compared\n\
             tiny,24301,"
        ),
        "{record}"
    );
    // The timing check's figure: cells within 1.25×, out of how many.
    let fields: Vec<&str> = record
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split(',')
        .collect();
    let figure = |from_end: usize| fields[fields.len() - from_end].parse::<usize>().ok();
    let (agreeing, compared) = (figure(2), figure(1));
    assert!(
        compared.is_some_and(|c| c > 0) && agreeing <= compared,
        "{record}"
    );
    assert_contains(
        &readme,
        &[
            "## Which filter should I use?",
            "**Gate: passed.**",
            "Instance variation",
            "Multiple comparisons",
            "## Machine and run",
            "git revision",
            "![",
            // filterlab filters one key at a time and batched; peers one key at a time.
            "| BloomFilter (batched) |",
            "| fastbloom 0.17 |",
            "## Summary charts",
            "![Skyline map",
        ],
    );
    assert!(!readme.contains("| fastbloom 0.17 (batched) |"));
    let accuracy = fs::read_to_string(out.join("accuracy.csv")).unwrap();
    assert!(accuracy.starts_with(
        "filter,origin,n,target_fpp,bits_per_item,theoretical_fpp,theory,fill_fpp,empirical_fpp,ci_low,ci_high,confidence,queries,false_positives,instances,false_negatives,refused,verdict,gated_on\n"
    ));
    let speed = fs::read_to_string(out.join("speed.csv")).unwrap();
    assert!(speed.starts_with(
        "filter,origin,op,n,ns_per_op,min_ns_per_op,max_ns_per_op,repetitions,target_fpp,mode\n"
    ));
    let modes = |filter: &str| {
        let mut modes: Vec<&str> = speed
            .lines()
            .filter(|l| l.starts_with(&format!("{filter},")) && l.contains(",lookup_negative,"))
            .filter_map(|l| l.rsplit(',').next())
            .collect();
        modes.sort_unstable();
        modes
    };
    assert_eq!(modes("BloomFilter"), ["batched", "one_key"]);
    assert_eq!(modes("fastbloom"), ["one_key"]);
    let churn = fs::read_to_string(out.join("churn.csv")).unwrap();
    assert!(
        churn
            .lines()
            .any(|l| l.starts_with("CuckooFilter,filterlab,"))
    );
    assert!(churn.lines().any(|l| l.starts_with("qfilter,peer,")));
    let growth = fs::read_to_string(out.join("growth.csv")).unwrap();
    for filter in [
        "ScalableBloomFilter",
        "CuckooFilter-grow",
        "growable-bloom-filter",
    ] {
        assert!(growth.contains(&format!("\n{filter},")), "{filter}");
    }
    assert_contains(
        &readme,
        &[
            "## Churn (filters that delete)",
            "## Growth (filters that grow)",
            "## Shared through Redis (filterlab-redis)",
        ],
    );
    let leftovers = fs::read_dir(&out)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .count();
    assert_eq!(leftovers, 0, "staging directory left behind");
    fs::remove_dir_all(&out).unwrap();
}
