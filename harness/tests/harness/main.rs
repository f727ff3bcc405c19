//! Integration tests of the harness: the `filterlab` binary's command line,
//! the report it writes, and the reproducibility of its accuracy figures.

mod cli;
mod extra_filter;
mod reproducibility;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `filterlab` binary with `args`.
pub(crate) fn filterlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_filterlab"))
        .args(args)
        .output()
        .expect("the filterlab binary runs")
}

/// A fresh, empty temporary directory path for one test (not created).
pub(crate) fn scratch(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "filterlab-harness-test-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&path);
    path
}

/// stdout and stderr as text.
pub(crate) fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
