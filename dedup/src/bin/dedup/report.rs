//! What the command tells on stderr: alarm events and status as JSON lines,
//! the final summary, and a progress line on a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use filterlab_dedup::{AlarmEvent, Metrics, Status};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

/// Writes `text` and a newline on stderr. A stderr that cannot be written
/// (closed, or a pipe whose reader left) loses the line and nothing else:
/// unlike `eprintln!`, this never panics, and whatever the run must report
/// it also reports through its exit code.
pub(crate) fn say(text: &str) {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// An alarm event as a JSON line.
pub(crate) fn alarm_json(event: &AlarmEvent, line: u64) -> String {
    json!({
        "event": "alarm",
        "threshold": event.threshold,
        "fill_level": event.fill_level,
        "rising": event.rising,
        "checks": event.checks,
        "line": line,
    })
    .to_string()
}

fn metrics_json(metrics: &Metrics) -> Value {
    json!({
        "memory_bytes": metrics.memory_bytes,
        "uniques_configured": metrics.uniques_configured,
        "uniques_stored": metrics.uniques_stored,
        "fill_level": metrics.fill_level,
        "checks": metrics.checks,
        "unique": metrics.unique,
        "duplicate": metrics.duplicate,
        "dropped": metrics.dropped,
        "faults": metrics.faults,
        "partitions": metrics.partitions,
        "evicted": metrics.evicted,
    })
}

/// The status command's answer as a JSON line.
pub(crate) fn status_json(status: &Status, lines: u64, elapsed: Duration) -> String {
    let partitions: Vec<Value> = status
        .partitions
        .iter()
        .map(|partition| {
            json!({
                "key": partition.key.as_ref().map(ToString::to_string),
                "uniques_stored": partition.uniques_stored,
                "fill_level": partition.fill_level,
                "fpp_now": partition.fpp_now,
            })
        })
        .collect();
    json!({
        "event": "status",
        "lines": lines,
        "elapsed_seconds": elapsed.as_secs_f64(),
        "metrics": metrics_json(&status.metrics),
        "alarm_level": status.alarm_level,
        "alarm_thresholds": status.alarm_thresholds,
        "partitions": partitions,
    })
    .to_string()
}

/// The status of a run on a shared filter (--redis) as a JSON line: its
/// metrics, the uniques stored counted over every process.
pub(crate) fn shared_status_json(metrics: &Metrics, lines: u64, elapsed: Duration) -> String {
    json!({
        "event": "status",
        "lines": lines,
        "elapsed_seconds": elapsed.as_secs_f64(),
        "metrics": metrics_json(metrics),
    })
    .to_string()
}

/// The final summary: this run's lines and verdicts (`start` holds the
/// metrics at its start, from a restored state or zero).
pub(crate) fn summary(start: &Metrics, end: &Metrics, lines: u64, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 {
        lines as f64 / seconds
    } else {
        0.0
    };
    format!(
        "dedup summary\n  lines                 {lines}\n  uniques               {}\n  \
         duplicates            {}\n  dropped (unknown)     {}\n  faults                {}\n  \
         uniques stored        {} (fill level {:.2}% of N)\n  elapsed               {seconds:.3} s\n  \
         lines/s               {rate:.0}",
        end.unique - start.unique,
        end.duplicate - start.duplicate,
        end.dropped - start.dropped,
        end.faults - start.faults,
        end.uniques_stored,
        end.fill_level,
    )
}

/// A progress line on stderr when it is a terminal; silent otherwise.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
}

impl Progress {
    pub(crate) fn new(enabled: bool) -> Self {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
            let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar
        });
        Self {
            bar,
            start: Instant::now(),
        }
    }

    /// Time since the run started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Shows the lines done and the fill level.
    pub(crate) fn update(&self, lines: u64, fill_level: f64) {
        if let Some(bar) = &self.bar {
            let seconds = self.start.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{lines} lines, {:.0} lines/s, fill level {fill_level:.2}%",
                lines as f64 / seconds
            ));
            bar.tick();
        }
    }

    /// Prints a line on stderr without tearing the progress line.
    pub(crate) fn println(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| say(text)),
            None => say(text),
        }
    }

    /// Removes the progress line.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
