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
