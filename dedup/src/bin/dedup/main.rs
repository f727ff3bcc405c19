//! `dedup`: flags each input line unique or duplicate in bounded memory.
//! See `dedup --help` and the crate README.

#![forbid(unsafe_code)]

mod cli;
mod input;
mod report;
mod run;
mod shared;

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use filterlab_dedup::{AtomicFile, ErrorKind};

use crate::cli::Args;
use crate::input::{open_sources, spawn_reader};
use crate::report::say;
use crate::run::{Run, Signals, Stop};
use crate::shared::Shared;

fn main() -> ExitCode {
    let args = Args::parse();
    match dedup(&args) {
        Ok(code) => code,
        Err(message) => {
            say(&format!("dedup: {message}"));
            ExitCode::FAILURE
        }
    }
}

/// Runs the command: an `Err` is an error before any input was checked (the
/// state, if any, is then left as it was).
fn dedup(args: &Args) -> Result<ExitCode, String> {
    // What --quiet silences: the sizing, state and summary lines.
    let inform = |text: &str| {
        if !args.quiet {
            say(text);
        }
    };
    // First, so that no signal sent once the sizing is printed finds the
    // default handlers (SIGUSR1's would end the process).
    let signals = Signals::register().map_err(|err| format!("cannot handle signals: {err}"))?;
    let builder = args.builder();
    let sizing = builder
        .sizing()
        .map_err(|err| format!("--expected {} --fpp {}: {err}", args.expected, args.fpp))?;
    // With --redis the local filters stay unused: the shared one is described instead.
    if args.redis.is_none() {
        inform(&sizing.to_string());
    }
    let mut dedup = builder
        .build()
        .map_err(|err| format!("cannot build the filters: {err}"))?;
    if let Some(path) = &args.state {
        match dedup.read_checkpoint(path) {
            Ok(()) => {
                let metrics = dedup.metrics();
                inform(&format!(
                    "dedup: state restored from {}: {} checks, {} uniques stored, {} partition(s)",
                    path.display(),
                    metrics.checks,
                    metrics.uniques_stored,
                    metrics.partitions
                ));
            }
            Err(err) if err.kind() == ErrorKind::CheckpointMissing => {
                inform(&format!(
                    "dedup: no state at {} yet: starting empty",
                    path.display()
                ));
            }
            Err(err) => {
                return Err(format!(
                    "--state: {err} (the file is left as it is; move it away to start empty)"
                ));
            }
        }
    }
    let shared = match &args.redis {
        Some(url) => {
            let (shared, line) = Shared::open(args, url)?;
            inform(&line);
            Some(shared)
        }
        None => None,
    };
    let sources = open_sources(&args.files)?;
    if let Some(path) = &args.state {
        remove_stale_temporaries(path);
    }
    let names = sources.iter().map(|source| source.name.clone()).collect();
    let blocks = spawn_reader(sources);
    let mut run = Run::new(args, dedup, shared, names, signals);
    let stopped = run.process(&blocks);
    let saved = run.checkpoint();
    run.progress.finish();
    inform(&run.summary());
    if let (Ok(()), Some(path)) = (&saved, run.state()) {
        inform(&format!("dedup: state written to {}", path.display()));
    }
    let mut code = ExitCode::SUCCESS;
    for stop in [stopped.err(), saved.err()].into_iter().flatten() {
        code = match stop {
            Stop::Signal(signal) => {
                say(&format!("dedup: stopped by signal {signal}"));
                ExitCode::from(128 + signal as u8)
            }
            Stop::Error(message) => {
                say(&format!("dedup: {message}"));
                ExitCode::FAILURE
            }
            // The reader is gone: the run's end, whatever else decided the code.
            Stop::OutputClosed => code,
        };
    }
    Ok(code)
}

/// Removes the temporary state files that runs killed while writing the
/// state left beside it, naming each; a failure is a warning, not a reason
/// to stop (the run writes its own temporary file).
fn remove_stale_temporaries(state: &Path) {
    match AtomicFile::remove_stale(state) {
        Ok(removed) => {
            for path in removed {
                say(&format!(
                    "dedup: removed {}, a temporary state file left by a run that died writing it",
                    path.display()
                ));
            }
        }
        Err(err) => say(&format!(
            "dedup: warning: cannot remove stale temporary state files: {err}"
        )),
    }
}
