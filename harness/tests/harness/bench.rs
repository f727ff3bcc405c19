//! `filterlab bench --check` against a baseline the test saves itself (the
//! test binary is a debug build, whose counts differ from the committed
//! release baseline's): the same counts pass, and the regression injected
//! into debug builds (extra mixing rounds on every key hash of a
//! `BlockedBloomFilter`) fails, naming the filter, each operation and the
//! size. Needs Valgrind; skipped without it, as the Redis tests are
//! without a server (`.ci/run` installs both).

use std::process::Command;

use crate::{assert_contains, run, scratch};

#[test]
fn check_passes_on_the_same_counts_and_names_an_injected_regression() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("skipped: no valgrind on PATH");
        return;
    }
    let dir = scratch("bench-check");
    std::fs::create_dir_all(&dir).unwrap();
    let baseline = dir.join("baseline.csv");
    let common = format!(
        "bench --filters BlockedBloomFilter --sizes tiny --jobs 1 --quiet --baseline {} --wall-baseline {}",
        baseline.display(),
        dir.join("wall.csv").display()
    );
    run(&format!("{common} --save"), 0);
    let saved = std::fs::read_to_string(&baseline).unwrap();
    assert_contains(
        &saved,
        &[
            "# cache: --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64",
            "# build: debug",
        ],
    );
    // The injected regression fails, naming every operation it slows.
    let (stdout, stderr) = run(&format!("{common} --check --inject-regression"), 3);
    assert_contains(&stderr, &["bench --check failed"]);
    for (op, mode) in [
        ("insert", "one_key"),
        ("lookup_positive", "one_key"),
        ("lookup_negative", "one_key"),
        ("lookup_positive", "batched"),
        ("lookup_negative", "batched"),
        ("insert", "batched"),
    ] {
        let named = format!("BlockedBloomFilter {op} ({mode}) at tiny: instructions");
        assert_contains(&stderr, &[&named]);
        assert_contains(&stdout, &[&named]);
    }
    assert_contains(&stdout, &["REGRESSIONS (fail):", "threshold ±1%"]);
    // Without it the counts are the baseline's, every one of them.
    let (stdout, _) = run(&format!("{common} --check"), 0);
    assert_contains(
        &stdout,
        &["6 rows identical to the baseline in every count; 0 changed"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What `bench --wall` runs once per round, in a process of its own: both
/// filters of the pair timed in turn, a ratio per operation and mode of the
/// filterlab filter, whichever goes first.
#[test]
fn a_wall_clock_round_prints_a_ratio_per_operation_and_mode() {
    for order in ["", " --peer-first"] {
        let (stdout, _) = run(
            &format!("bench --wall-round SplitBlockBloomFilter --sizes tiny{order}"),
            0,
        );
        let mut lines = stdout.lines();
        assert_eq!(lines.next(), Some("op,mode,ratio"), "{stdout}");
        let mut seen = Vec::new();
        for line in lines {
            let [op, mode, ratio] = <[&str; 3]>::try_from(line.split(',').collect::<Vec<_>>())
                .unwrap_or_else(|_| panic!("not op,mode,ratio: {line}"));
            let ratio: f64 = ratio.parse().unwrap();
            assert!(ratio.is_finite() && ratio > 0.0, "{line}");
            seen.push(format!("{op} {mode}"));
        }
        for op in ["insert", "lookup_positive", "lookup_negative"] {
            for mode in ["one_key", "batched"] {
                assert!(
                    seen.contains(&format!("{op} {mode}")),
                    "{op} {mode}: {stdout}"
                );
            }
        }
    }
    // A peer has no peer of its own.
    let (_, stderr) = run("bench --wall-round fastbloom --sizes tiny", 2);
    assert_contains(&stderr, &["`fastbloom` has no wall-clock peer"]);
}
