//! The command line: bad arguments fail clearly, with no report left behind;
//! `recommend` prints the sizing; `report` writes a complete report.

use std::fs;

use crate::{filterlab, scratch, text};

#[test]
fn fpp_outside_the_unit_interval_is_refused() {
    for fpp in ["0", "1", "1.5", "-0.1", "NaN", "abc"] {
        let output = filterlab(&["recommend", "--items", "1000", "--fpp", fpp]);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "--fpp {fpp}: {stderr}");
        assert!(stderr.contains("--fpp"), "--fpp {fpp}: {stderr}");
    }
    let output = filterlab(&["compare", "--items", "1000", "--fpp", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).1.contains("must be in (0, 1)"));
}

#[test]
fn zero_items_is_refused() {
    let output = filterlab(&["recommend", "--items", "0", "--fpp", "0.01"]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("at least 1"), "{stderr}");
}

#[test]
fn unknown_filter_is_refused_before_anything_is_written() {
    let out = scratch("unknown-filter");
    let output = filterlab(&[
        "report",
        "--tiny",
        "--quiet",
        "--filters",
        "BloomFilter,NoSuchFilter",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown filter `NoSuchFilter`"), "{stderr}");
    assert!(stderr.contains("known filters: BloomFilter"), "{stderr}");
    assert!(!out.join("README.md").exists());
}

#[test]
fn unwritable_output_directory_is_refused() {
    let blocker = scratch("not-a-directory");
    fs::write(&blocker, "a file where a directory should be").unwrap();
    for out in [blocker.join("reports"), blocker.clone()] {
        let output = filterlab(&[
            "report",
            "--tiny",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("output directory"), "{stderr}");
    }
    assert_eq!(
        fs::read_to_string(&blocker).unwrap(),
        "a file where a directory should be"
    );
    fs::remove_file(&blocker).unwrap();
}

#[test]
fn recommend_sizes_ibm_streams_example_and_warns_about_the_hash() {
    let output = filterlab(&["recommend", "--items", "1000000000", "--fpp", "1e-14"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    // IBM Streams: 8 GB with power-of-two rounding, i.e. 2^36 bits.
    assert!(
        stdout.contains("bits allocated      68719476736"),
        "{stdout}"
    );
    assert!(stdout.contains("8.00 GiB"), "{stdout}");
    assert!(stdout.contains("1. BloomFilter:"), "{stdout}");
    assert!(
        stdout.contains("WARNING: a 64-bit key hash cannot deliver FPP 1e-14"),
        "{stdout}"
    );
}

#[test]
fn recommend_says_when_no_filterlab_filter_deletes() {
    let output = filterlab(&[
        "recommend",
        "--items",
        "1e6",
        "--fpp",
        "0.001",
        "--deletes",
        "--report",
        "/nonexistent",
    ]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("No filterlab filter supports deletes yet"),
        "{stdout}"
    );
    assert!(stdout.contains("cuckoofilter 0.5"), "{stdout}");
}

#[test]
fn compare_shows_one_key_and_batched_speed() {
    let output = filterlab(&[
        "compare",
        "--items",
        "2000",
        "--fpp",
        "0.01",
        "--filters",
        "BloomFilter,fastbloom",
        "--quiet",
    ]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let at = |name: &str| lines.iter().position(|l| l.starts_with(name)).unwrap();
    assert!(
        lines[at("BloomFilter ") + 1]
            .trim_start()
            .starts_with("(batched)"),
        "{stdout}"
    );
    assert!(
        !lines[at("fastbloom ") + 1].contains("(batched)"),
        "{stdout}"
    );
    assert!(stdout.contains("exact theory inside interval"), "{stdout}");
}

#[test]
fn list_names_every_filter() {
    let output = filterlab(&["list"]);
    let (stdout, _) = text(&output);
    for name in [
        "BloomFilter",
        "fastbloom",
        "bloomfilter",
        "sbbf-rs-safe",
        "cuckoofilter",
        "growable-bloom-filter",
        "xorf-BinaryFuse8",
    ] {
        assert!(stdout.contains(name), "{name} missing from {stdout}");
    }
}

#[test]
fn report_writes_a_complete_report() {
    let out = scratch("report");
    let output = filterlab(&[
        "report",
        "--tiny",
        "--quiet",
        "--threads",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("accuracy gate passed"), "{stdout}");
    for file in [
        "README.md",
        "accuracy.csv",
        "space.csv",
        "speed.csv",
        "capacity.csv",
        "accuracy.svg",
        "space.svg",
        "speed_insert.svg",
        "speed_lookup_negative.svg",
        "speed_remove.svg",
        "capacity_fpp.svg",
        "capacity_memory.svg",
    ] {
        assert!(out.join(file).exists(), "{file} missing");
    }
    let readme = fs::read_to_string(out.join("README.md")).unwrap();
    for section in [
        "## Which filter should I use?",
        "**Gate: passed.**",
        "Instance variation",
        "Multiple comparisons",
        "## Machine and run",
        "git revision",
        "![",
    ] {
        assert!(readme.contains(section), "README lacks {section}");
    }
    let accuracy = fs::read_to_string(out.join("accuracy.csv")).unwrap();
    assert!(accuracy.starts_with(
        "filter,origin,n,target_fpp,bits_per_item,theoretical_fpp,theory,fill_fpp,empirical_fpp,ci_low,ci_high,confidence,queries,false_positives,instances,false_negatives,refused,verdict"
    ));
    let speed = fs::read_to_string(out.join("speed.csv")).unwrap();
    assert!(speed.starts_with(
        "filter,origin,op,n,ns_per_op,min_ns_per_op,max_ns_per_op,repetitions,target_fpp,mode\n"
    ));
    // filterlab filters one key at a time and batched; peers one key at a time.
    for line in [
        "BloomFilter,filterlab,lookup_negative,10000,",
        "fastbloom,peer,lookup_negative,10000,",
    ] {
        assert!(speed.contains(line), "{line}");
    }
    assert!(
        speed
            .lines()
            .any(|l| l.starts_with("BloomFilter,") && l.ends_with(",batched"))
    );
    assert!(
        !speed
            .lines()
            .any(|l| l.starts_with("fastbloom,") && l.ends_with(",batched"))
    );
    for row in ["| BloomFilter (batched) |", "| fastbloom |"] {
        assert!(readme.contains(row), "README lacks {row}");
    }
    assert!(!readme.contains("| fastbloom (batched) |"));
    let leftovers = fs::read_dir(&out)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .count();
    assert_eq!(leftovers, 0, "staging directory left behind");
    fs::remove_dir_all(&out).unwrap();
}
