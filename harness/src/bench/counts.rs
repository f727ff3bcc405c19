//! Instruction and simulated-cache counts: each case run as a child
//! process under callgrind, its dumps matched to the calls it reports.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use filterlab_peers::Mode;
use serde::{Deserialize, Serialize};

use filterlab_core::mix64;

use crate::bench::callgrind::{Events, read_dumps, valgrind_args, with_events};
use crate::bench::case::{Size, parse_manifest};
use crate::error::Error;
use crate::experiments::speed::Operation;
use crate::registry::{Entry, Origin};

with_events! {
    /// One measured operation's counts (a row of `bench.csv` and of the
    /// baseline): the raw callgrind totals over `ops` operations, and the same
    /// per operation for readers.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct CountRow {
        /// The filter's registry name.
        pub filter: String,
        /// filterlab or a peer.
        pub origin: Origin,
        /// The operation.
        pub op: Operation,
        /// One key at a time, or through the filter's batch API.
        pub mode: Mode,
        /// The size class.
        pub size: Size,
        /// Items in the filter.
        pub items: u64,
        /// Operations counted.
        pub ops: u64,
        /// Instructions per operation.
        pub instructions_per_op: f64,
        /// First-level misses (instruction and data) per operation.
        pub l1_misses_per_op: f64,
        /// Last-level misses per operation.
        pub ll_misses_per_op: f64,
        /// Estimated cycles per operation (see `CYCLES_FORMULA`).
        pub est_cycles_per_op: f64,
        /// Whether `--check` gates this row (false for a filter whose work
        /// differs run to run, e.g. cuckoofilter's random evictions).
        pub gated: bool,
    }
}

/// What identifies a row: filter, operation, mode and size.
pub type RowKey = (String, Operation, Mode, Size);

impl CountRow {
    /// The row of `events` counted over `ops` operations.
    pub fn new(
        entry: &Entry,
        op: Operation,
        mode: Mode,
        size: Size,
        ops: u64,
        events: Events,
    ) -> Self {
        let per_op = |total: u64| total as f64 / ops.max(1) as f64;
        Self {
            filter: entry.name.to_owned(),
            origin: entry.origin,
            op,
            mode,
            size,
            items: size.items(),
            ops,
            instructions_per_op: per_op(events.ir),
            l1_misses_per_op: per_op(events.l1_misses()),
            ll_misses_per_op: per_op(events.ll_misses()),
            est_cycles_per_op: per_op(events.estimated_cycles()),
            gated: entry.reproducible,
            ir: events.ir,
            dr: events.dr,
            dw: events.dw,
            i1mr: events.i1mr,
            d1mr: events.d1mr,
            d1mw: events.d1mw,
            ilmr: events.ilmr,
            dlmr: events.dlmr,
            dlmw: events.dlmw,
        }
    }

    /// The raw totals.
    pub fn events(&self) -> Events {
        Events::from_array([
            self.ir, self.dr, self.dw, self.i1mr, self.d1mr, self.d1mw, self.ilmr, self.dlmr,
            self.dlmw,
        ])
    }

    /// Its key.
    pub fn key(&self) -> RowKey {
        (self.filter.clone(), self.op, self.mode, self.size)
    }
}

/// How to run cases under Valgrind.
#[derive(Clone, Debug)]
pub struct Runner {
    /// The `valgrind` executable.
    pub valgrind: PathBuf,
    /// The `filterlab` binary whose cases are counted (this one).
    pub exe: PathBuf,
    /// A directory for callgrind's dumps (one subdirectory per case).
    pub scratch: PathBuf,
    /// Inject the test regression (debug builds only).
    pub inject: bool,
}

impl Runner {
    /// Counts every operation of `entry` at `size`; returns the kernel
    /// features the case saw and its rows, in call order.
    ///
    /// # Errors
    ///
    /// When Valgrind or the case fails, or the dumps do not match the calls.
    pub fn count(&self, entry: &Entry, size: Size) -> Result<(String, Vec<CountRow>), Error> {
        let what = format!("{} at {}", entry.name, size.label());
        let dir = self
            .scratch
            .join(format!("{:016x}", case_id(entry.name, size)));
        fs::create_dir_all(&dir)?;
        let result = self.count_in(entry, size, &dir);
        let _ = fs::remove_dir_all(&dir);
        result.map_err(|err| err.context(&what))
    }

    fn count_in(
        &self,
        entry: &Entry,
        size: Size,
        dir: &Path,
    ) -> Result<(String, Vec<CountRow>), Error> {
        let out_file = dir.join("cg.out");
        // The same environment (none), working directory and program path
        // for every run: each moves the stack or Valgrind's layout, and
        // with them which simulated cache sets the buffers use.
        let exe = dir.join("filterlab");
        std::os::unix::fs::symlink(&self.exe, &exe)?;
        let mut command = Command::new(&self.valgrind);
        command.env_clear().current_dir("/");
        command.args(valgrind_args(&out_file)).arg(&exe).args([
            "bench",
            "--case",
            entry.name,
            "--sizes",
            size.label(),
        ]);
        if self.inject {
            command.arg("--inject-regression");
        }
        let output = command.output().map_err(|err| {
            Error::failed(format!(
                "cannot run `{}` ({err}); install Valgrind (Debian/Ubuntu: apt-get install valgrind)",
                self.valgrind.display()
            ))
        })?;
        if !output.status.success() {
            // The case's own words, without Valgrind's summary lines.
            let stderr = String::from_utf8_lossy(&output.stderr);
            let own: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("==")).collect();
            return Err(Error::failed(format!(
                "the case failed under valgrind ({}): {}",
                output.status,
                own.join("\n")
            )));
        }
        let (features, calls) = parse_manifest(&String::from_utf8_lossy(&output.stdout))?;
        let dumps = read_dumps(&out_file)?;
        if dumps.len() != calls.len() {
            return Err(Error::failed(format!(
                "callgrind wrote {} dumps for {} measured calls (is `callgrind_measured` in the binary, not inlined?)",
                dumps.len(),
                calls.len()
            )));
        }
        let rows = calls
            .iter()
            .zip(dumps)
            .map(|(call, events)| CountRow::new(entry, call.op, call.mode, size, call.ops, events))
            .collect();
        Ok((features, rows))
    }
}

/// A case's directory name: fixed-length, so that the program's path (its
/// argv[0], on the stack) has the same length in every case and run.
fn case_id(name: &str, size: Size) -> u64 {
    name.bytes()
        .chain(size.label().bytes())
        .fold(0x5eed, |id, byte| mix64(id ^ u64::from(byte)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;

    #[test]
    fn rows_divide_by_the_operations() {
        let entry = registry().into_iter().next().unwrap();
        let events = Events::from_array([1000, 200, 100, 0, 10, 10, 0, 5, 5]);
        let row = CountRow::new(
            &entry,
            Operation::Insert,
            Mode::OneKey,
            Size::Tiny,
            10,
            events,
        );
        assert_eq!(row.instructions_per_op, 100.0);
        assert_eq!(row.l1_misses_per_op, 2.0);
        assert_eq!(row.ll_misses_per_op, 1.0);
        assert_eq!(row.events(), events);
        assert_eq!(
            row.est_cycles_per_op,
            events.estimated_cycles() as f64 / 10.0
        );
        assert_ne!(
            case_id("BloomFilter", Size::Tiny),
            case_id("BloomFilter", Size::InCache)
        );
    }
}
