//! Progress for long runs: an indicatif bar when stderr is a terminal, plain
//! lines (one per finished step) otherwise, so CI logs stay readable.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// Progress of one experiment.
pub struct Progress {
    bar: Option<ProgressBar>,
    label: &'static str,
    total: u64,
    start: Instant,
    quiet: bool,
}

impl Progress {
    /// Progress over `total` steps of the experiment called `label`.
    pub fn new(label: &'static str, total: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template(
                "{prefix:>9} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_prefix(label);
            bar
        });
        Self {
            bar,
            label,
            total,
            start: Instant::now(),
            quiet,
        }
    }

    /// One step done; `what` says which.
    pub fn step(&self, what: &str) {
        match &self.bar {
            Some(bar) => {
                bar.set_message(what.to_owned());
                bar.inc(1);
            }
            None if !self.quiet => {
                eprintln!(
                    "{} [{:>6.1}s] {what}",
                    self.label,
                    self.start.elapsed().as_secs_f64()
                );
            }
            None => {}
        }
    }

    /// The experiment is done.
    pub fn finish(self) {
        let seconds = self.start.elapsed().as_secs_f64();
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if !self.quiet {
            eprintln!("{}: {} steps in {seconds:.1} s", self.label, self.total);
        }
    }
}
