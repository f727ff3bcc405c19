//! Integration tests of filterlab-dedup: one module per concern, and the
//! helpers they share. The end-to-end tests of the `dedup` binary need the
//! `cli` feature (on by default).

mod alarms;
mod checkpoint;
#[cfg(feature = "cli")]
mod cli;
mod faults;
mod metrics;
mod partitions;
#[cfg(feature = "cli")]
mod redis;
mod verdicts;

use std::path::PathBuf;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_dedup::Deduplicator;

/// The de-duplicator's whole state (partitions, filters, counters) as its
/// checkpoint bytes: equal bytes, equal state.
pub(crate) fn snapshot(dedup: &Deduplicator) -> Vec<u8> {
    let mut bytes = Vec::new();
    dedup
        .write_checkpoint_to(&mut bytes)
        .expect("writing to memory cannot fail");
    bytes
}

/// An empty directory of its own for one test.
pub(crate) fn scratch_dir(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dedup-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("cannot create a scratch directory");
    dir
}

/// A fresh scratch directory for `test` and the path of a state file in
/// it (not created).
pub(crate) fn scratch_state(test: &str) -> (PathBuf, PathBuf) {
    let dir = scratch_dir(test);
    let state = dir.join("state");
    (dir, state)
}

/// The `i`-th key of a stream of distinct keys.
pub(crate) fn key(i: u64) -> String {
    format!("key-{:016x}", insert_key(12, i))
}

/// The `i`-th key of a stream of distinct keys [`key`] never returns.
pub(crate) fn other_key(i: u64) -> String {
    format!("key-{:016x}", query_key(12, i))
}
