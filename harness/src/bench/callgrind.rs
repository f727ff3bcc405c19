//! Driving Valgrind's callgrind: the simulated caches (fixed, so counts do
//! not depend on the host), the command line that collects only the
//! measured function, and the events read back from its dumps.
//!
//! Valgrind is driven directly rather than through gungraun: the only
//! thing to install is the OS's `valgrind` package, where gungraun needs
//! its runner binary at the exact version of its library crate.

use std::fmt;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::error::Error;

/// The name of the one function whose calls are counted (see
/// `bench::case::callgrind_measured`); callgrind matches it as `*::NAME`.
pub const MEASURED_FUNCTION: &str = "callgrind_measured";

/// One simulated cache: total bytes, associativity, line bytes (valgrind's
/// `--I1=size,assoc,line` triple).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLevel {
    /// Total size in bytes.
    pub bytes: u64,
    /// Ways per set.
    pub ways: u64,
    /// Line size in bytes.
    pub line: u64,
}

impl CacheLevel {
    fn arg(self) -> String {
        format!("{},{},{}", self.bytes, self.ways, self.line)
    }
}

/// The simulated cache hierarchy, fixed so that counts do not depend on the
/// host's caches (valgrind reads them from CPUID when not told).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheModel {
    /// First-level instruction cache.
    pub i1: CacheLevel,
    /// First-level data cache.
    pub d1: CacheLevel,
    /// Last-level cache (unified).
    pub ll: CacheLevel,
}

/// 32 KiB 8-way L1s and a 1 MiB 16-way last level, 64-byte lines: a common
/// core's L1s and a small last level (a core's L2), so that an array of a
/// few MiB already exceeds it and runs under Valgrind stay short.
pub const CACHE_MODEL: CacheModel = CacheModel {
    i1: CacheLevel {
        bytes: 32 << 10,
        ways: 8,
        line: 64,
    },
    d1: CacheLevel {
        bytes: 32 << 10,
        ways: 8,
        line: 64,
    },
    ll: CacheLevel {
        bytes: 1 << 20,
        ways: 16,
        line: 64,
    },
};

impl fmt::Display for CacheModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--I1={} --D1={} --LL={}",
            self.i1.arg(),
            self.d1.arg(),
            self.ll.arg()
        )
    }
}

/// The estimated-cycles formula, as stated in every output.
pub const CYCLES_FORMULA: &str = "est. cycles = L1 hits + 5 × LL hits + 35 × LL misses, over all \
     instruction fetches and data reads and writes (iai's and gungraun's weights, after Itamar \
     Turner-Trauring)";

/// Declares a struct with its own fields followed by the nine callgrind
/// event totals (`u64`, named and ordered as [`EVENT_NAMES`]): one list of
/// the events for [`Events`] and for the rows that store them
/// (`bench::CountRow`, whose CSV columns follow the field order).
macro_rules! with_events {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
            /// Instructions executed.
            pub ir: u64,
            /// Data reads.
            pub dr: u64,
            /// Data writes.
            pub dw: u64,
            /// First-level instruction cache read misses.
            pub i1mr: u64,
            /// First-level data cache read misses.
            pub d1mr: u64,
            /// First-level data cache write misses.
            pub d1mw: u64,
            /// Last-level misses of instruction reads.
            pub ilmr: u64,
            /// Last-level misses of data reads.
            pub dlmr: u64,
            /// Last-level misses of data writes.
            pub dlmw: u64,
        }
    };
}
pub(crate) use with_events;

with_events! {
    /// The events callgrind's cache simulation counts, in its order
    /// (`Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Events {}
}

/// The event names callgrind writes, in [`Events`] order.
pub const EVENT_NAMES: [&str; 9] = [
    "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
];

impl Events {
    /// From the nine values in [`EVENT_NAMES`] order.
    pub fn from_array(values: [u64; 9]) -> Self {
        let [ir, dr, dw, i1mr, d1mr, d1mw, ilmr, dlmr, dlmw] = values;
        Self {
            ir,
            dr,
            dw,
            i1mr,
            d1mr,
            d1mw,
            ilmr,
            dlmr,
            dlmw,
        }
    }

    /// The nine values in [`EVENT_NAMES`] order.
    pub fn to_array(self) -> [u64; 9] {
        [
            self.ir, self.dr, self.dw, self.i1mr, self.d1mr, self.d1mw, self.ilmr, self.dlmr,
            self.dlmw,
        ]
    }

    /// First-level misses, instruction and data.
    pub fn l1_misses(self) -> u64 {
        self.i1mr + self.d1mr + self.d1mw
    }

    /// Last-level misses (accesses that would go to memory).
    pub fn ll_misses(self) -> u64 {
        self.ilmr + self.dlmr + self.dlmw
    }

    /// See [`CYCLES_FORMULA`].
    pub fn estimated_cycles(self) -> u64 {
        let accesses = self.ir + self.dr + self.dw;
        let l1_misses = self.l1_misses();
        let ll_misses = self.ll_misses();
        let l1_hits = accesses.saturating_sub(l1_misses);
        let ll_hits = l1_misses.saturating_sub(ll_misses);
        l1_hits + 5 * ll_hits + 35 * ll_misses
    }
}

/// Reads the `totals:` (or `summary:`) line of one callgrind dump, whose
/// `events:` line must list [`EVENT_NAMES`].
///
/// # Errors
///
/// When the dump has other events or no totals.
pub fn parse_dump(text: &str) -> Result<Events, Error> {
    let mut events_line = None;
    let mut totals = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events_line = Some(rest.split_whitespace().collect::<Vec<_>>());
        } else if let Some(rest) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            totals = Some(rest.to_owned());
        }
    }
    let names = events_line.ok_or_else(|| Error::failed("callgrind dump without events"))?;
    if names != EVENT_NAMES {
        return Err(Error::failed(format!(
            "callgrind counted {names:?}, not {EVENT_NAMES:?} (is --cache-sim=yes honoured?)"
        )));
    }
    let totals = totals.ok_or_else(|| Error::failed("callgrind dump without totals"))?;
    // A dump of nothing collected writes a single 0.
    let mut values = [0u64; 9];
    for (slot, word) in values.iter_mut().zip(totals.split_whitespace()) {
        *slot = word
            .parse()
            .map_err(|_| Error::failed(format!("callgrind total `{word}` is not a count")))?;
    }
    Ok(Events::from_array(values))
}

/// The arguments that make callgrind count only inside
/// [`MEASURED_FUNCTION`], dump after each call of it, and simulate
/// [`CACHE_MODEL`].
pub fn valgrind_args(out_file: &Path) -> Vec<String> {
    let function = format!("*::{MEASURED_FUNCTION}");
    vec![
        "--tool=callgrind".to_owned(),
        "--cache-sim=yes".to_owned(),
        format!("--I1={}", CACHE_MODEL.i1.arg()),
        format!("--D1={}", CACHE_MODEL.d1.arg()),
        format!("--LL={}", CACHE_MODEL.ll.arg()),
        "--collect-atstart=no".to_owned(),
        format!("--toggle-collect={function}"),
        format!("--dump-after={function}"),
        format!("--callgrind-out-file={}", out_file.display()),
    ]
}

/// The numbered dumps callgrind wrote for `out_file` (`out_file.1`, ...),
/// in call order.
///
/// # Errors
///
/// When a dump cannot be read or parsed.
pub fn read_dumps(out_file: &Path) -> Result<Vec<Events>, Error> {
    let mut dumps = Vec::new();
    for part in 1.. {
        let mut name = out_file.as_os_str().to_owned();
        name.push(format!(".{part}"));
        let path = std::path::PathBuf::from(name);
        match fs::read_to_string(&path) {
            Ok(text) => dumps.push(parse_dump(&text)?),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => break,
            Err(err) => return Err(Error::from(err).context(path.display())),
        }
    }
    Ok(dumps)
}

/// `valgrind --version` of `valgrind` (e.g. "valgrind-3.19.0").
///
/// # Errors
///
/// When it cannot be run: the message says how to install it.
pub fn valgrind_version(valgrind: &Path) -> Result<String, Error> {
    let output = Command::new(valgrind)
        .arg("--version")
        .output()
        .map_err(|err| {
            Error::failed(format!(
                "cannot run `{}` ({err}); install Valgrind (Debian/Ubuntu: apt-get install valgrind)",
                valgrind.display()
            ))
        })?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_parse_and_cycles_follow_the_formula() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n\
                    fl=(1)\n\nsummary: 1000 300 100 10 50 20 5 30 10\ntotals: 1000 300 100 10 50 20 5 30 10\n";
        let events = parse_dump(dump).unwrap();
        assert_eq!(events.to_array(), [1000, 300, 100, 10, 50, 20, 5, 30, 10]);
        assert_eq!(Events::from_array(events.to_array()), events);
        assert_eq!(events.l1_misses(), 80);
        assert_eq!(events.ll_misses(), 45);
        // 1400 accesses: 1320 L1 hits, 35 LL hits, 45 misses.
        assert_eq!(events.estimated_cycles(), 1320 + 5 * 35 + 35 * 45);
        // Nothing collected: callgrind writes one 0.
        let empty =
            parse_dump("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: 0\ntotals: 0\n");
        assert_eq!(empty.unwrap(), Events::default());
        assert!(parse_dump("events: Ir\ntotals: 5\n").is_err());
        assert!(parse_dump("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\ntotals: x\n").is_err());
    }

    #[test]
    fn arguments_fix_the_caches() {
        let args = valgrind_args(Path::new("/tmp/x/cg.out"));
        assert!(args.contains(&"--LL=1048576,16,64".to_owned()));
        assert!(args.contains(&"--dump-after=*::callgrind_measured".to_owned()));
        assert_eq!(
            CACHE_MODEL.to_string(),
            "--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
        );
    }
}
