//! The same seed reproduces every accuracy figure exactly; another seed does not.

use filterlab_harness::config::{Preset, RunConfig};
use filterlab_harness::experiments::accuracy;
use filterlab_harness::progress::Tracker;
use filterlab_harness::registry;

fn rows(seed: u64, threads: usize) -> Vec<accuracy::AccuracyRow> {
    // Every reproducible filter: cuckoofilter evicts with thread_rng.
    let entries: Vec<_> = registry::registry()
        .into_iter()
        .filter(|e| e.reproducible)
        .collect();
    let config = RunConfig::preset(Preset::Tiny, seed, threads);
    accuracy::run(&entries, &config, &Tracker::hidden()).unwrap()
}

#[test]
fn same_seed_same_accuracy_rows() {
    let first = rows(11, 1);
    let second = rows(11, 2);
    assert_eq!(first, second);
    assert!(first.iter().all(|r| r.false_negatives == 0));
    assert!(
        accuracy::gate(&first).is_empty(),
        "{:?}",
        accuracy::gate(&first)
    );
}

#[test]
fn another_seed_other_keys() {
    let first = rows(11, 2);
    let other = rows(12, 2);
    assert_ne!(
        first.iter().map(|r| r.false_positives).collect::<Vec<_>>(),
        other.iter().map(|r| r.false_positives).collect::<Vec<_>>()
    );
}
