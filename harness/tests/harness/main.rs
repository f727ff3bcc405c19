//! Integration tests of the harness: the `filterlab` binary's command line,
//! the report it writes, the reproducibility of its accuracy figures, the
//! Redis experiment with and without a server, and the bench gate.

mod bench;
mod charts;
mod cli;
mod extra_filter;
mod redis;
mod reproducibility;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `filterlab` binary with the words of `command_line`, checks
/// that it exits with `code`, and returns its stdout and stderr.
pub(crate) fn run(command_line: &str, code: i32) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_filterlab"))
        .args(command_line.split_whitespace())
        .output()
        .expect("the filterlab binary runs");
    let (stdout, stderr) = text(&output);
    assert_eq!(
        output.status.code(),
        Some(code),
        "filterlab {command_line}\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

/// Runs `filterlab command_line`, expects it to succeed with every one of
/// `needles` in its standard output, and returns that output.
pub(crate) fn stdout_with(command_line: &str, needles: &[&str]) -> String {
    let (stdout, _) = run(command_line, 0);
    assert_contains(&stdout, needles);
    stdout
}

/// Runs `filterlab command_line`, expects it to be refused (exit code 2)
/// with every one of `needles` in its standard error, and returns that.
pub(crate) fn refused_with(command_line: &str, needles: &[&str]) -> String {
    let (_, stderr) = run(command_line, 2);
    assert_contains(&stderr, needles);
    stderr
}

/// Checks that `text` contains every one of `needles`.
pub(crate) fn assert_contains(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
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

/// The line after the first line of `text` that starts with `prefix`
/// (ignoring indentation), trimmed; empty when there is none.
pub(crate) fn line_after<'a>(text: &'a str, prefix: &str) -> &'a str {
    let mut lines = text.lines().map(str::trim);
    lines.find(|line| line.starts_with(prefix));
    lines.next().unwrap_or_default()
}

/// stdout and stderr as text.
fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
