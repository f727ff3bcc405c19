//! The files of a bench run and of the committed baseline: CSV rows under
//! `# key: value` lines that record what the counts depend on (Valgrind,
//! the compiler and profile, the simulated caches, the CPU features the
//! kernels were chosen by).

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bench::callgrind::{CACHE_MODEL, CYCLES_FORMULA};
use crate::error::Error;

/// What counts depend on besides the code: recorded beside them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// `valgrind --version`.
    pub valgrind: String,
    /// The compiler that built the binary.
    pub rustc: String,
    /// The binary's profile (a debug build counts other instructions).
    pub build: String,
    /// The simulated caches.
    pub cache: String,
    /// The CPU features the filters' runtime detection saw under Valgrind.
    pub features: String,
}

/// The recorded fields, in file order: (key, whether a difference makes
/// counts incomparable rather than merely suspect).
const FIELDS: [(&str, bool); 5] = [
    ("valgrind", false),
    ("rustc", false),
    ("build", true),
    ("cache", true),
    ("features", true),
];

impl Setup {
    /// This binary's setup, with Valgrind's version and the features the
    /// cases saw.
    pub fn current(valgrind: String, features: String) -> Self {
        Self {
            valgrind,
            rustc: env!("FILTERLAB_RUSTC_VERSION").to_owned(),
            build: env!("FILTERLAB_BUILD").to_owned(),
            cache: CACHE_MODEL.to_string(),
            features,
        }
    }

    fn field(&self, key: &str) -> &str {
        match key {
            "valgrind" => &self.valgrind,
            "rustc" => &self.rustc,
            "build" => &self.build,
            "cache" => &self.cache,
            _ => &self.features,
        }
    }

    /// The `# key: value` lines of a counts file.
    pub fn header(&self) -> String {
        let mut out = String::from(
            "# filterlab bench: instructions and simulated cache misses per operation, counted by \
             Valgrind's callgrind (not time)\n",
        );
        let _ = writeln!(out, "# {CYCLES_FORMULA}");
        let _ = writeln!(
            out,
            "# Valgrind has no AVX-512: under it the filters' runtime detection picks their AVX2 \
             or scalar kernels (features below)"
        );
        for (key, _) in FIELDS {
            let _ = writeln!(out, "# {key}: {}", self.field(key));
        }
        out
    }

    /// Reads the `# key: value` lines of `text` ("unknown" where missing).
    pub fn parse(text: &str) -> Self {
        let value = |key: &str| {
            let prefix = format!("# {key}: ");
            text.lines()
                .find_map(|line| line.strip_prefix(&prefix))
                .unwrap_or("unknown")
                .to_owned()
        };
        Self {
            valgrind: value("valgrind"),
            rustc: value("rustc"),
            build: value("build"),
            cache: value("cache"),
            features: value("features"),
        }
    }

    /// How `self` (a run) differs from `baseline`: one sentence per field,
    /// and whether any difference makes the counts incomparable.
    pub fn differences(&self, baseline: &Self) -> (Vec<String>, bool) {
        let mut notes = Vec::new();
        let mut incomparable = false;
        for (key, breaks) in FIELDS {
            let (now, then) = (self.field(key), baseline.field(key));
            if now != then {
                incomparable |= breaks;
                notes.push(format!("{key}: baseline `{then}`, this run `{now}`"));
            }
        }
        (notes, incomparable)
    }
}

/// Writes `rows` as CSV under the comment lines `header`.
///
/// # Errors
///
/// When the file cannot be written.
pub fn write_rows<T: Serialize>(path: &Path, header: &str, rows: &[T]) -> Result<(), Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    let body = writer
        .into_inner()
        .map_err(|err| Error::failed(err.to_string()))?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    let mut text = header.to_owned().into_bytes();
    text.extend(body);
    fs::write(path, text).map_err(|err| Error::from(err).context(path.display()))
}

/// Reads a file [`write_rows`] wrote: its comment lines and its rows.
///
/// # Errors
///
/// When the file is missing or a row does not parse.
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> Result<(String, Vec<T>), Error> {
    let text = fs::read_to_string(path).map_err(|err| {
        Error::usage(format!(
            "cannot read the baseline {} ({err}); make one with `filterlab bench --save`",
            path.display()
        ))
    })?;
    let mut header = String::new();
    for line in text.lines().take_while(|line| line.starts_with('#')) {
        header.push_str(line);
        header.push('\n');
    }
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let rows = reader
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .map_err(|err| Error::failed(format!("{}: {err}", path.display())))?;
    Ok((header, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setups_round_trip_and_say_what_differs() {
        let setup = Setup::current("valgrind-3.19.0".into(), "avx2".into());
        let back = Setup::parse(&setup.header());
        assert_eq!(back, setup);
        assert_eq!(setup.differences(&back), (Vec::new(), false));
        let newer = Setup {
            rustc: "rustc 9.0".into(),
            ..setup.clone()
        };
        let (notes, incomparable) = newer.differences(&setup);
        assert!(!incomparable);
        assert!(notes[0].starts_with("rustc: baseline `rustc"), "{notes:?}");
        let scalar = Setup {
            features: "none".into(),
            ..setup.clone()
        };
        assert!(scalar.differences(&setup).1);
        assert_eq!(Setup::parse("").valgrind, "unknown");
    }

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Row {
        n: u32,
        s: String,
    }

    #[test]
    fn rows_round_trip_under_their_header() {
        let path =
            std::env::temp_dir().join(format!("filterlab-bench-rows-{}.csv", std::process::id()));
        let rows = vec![
            Row {
                n: 1,
                s: "a".into(),
            },
            Row {
                n: 2,
                s: "b, c".into(),
            },
        ];
        write_rows(&path, "# x: y\n", &rows).unwrap();
        let (header, back): (String, Vec<Row>) = read_rows(&path).unwrap();
        assert_eq!(header, "# x: y\n");
        assert_eq!(back, rows);
        fs::remove_file(&path).unwrap();
        assert!(read_rows::<Row>(&path).is_err());
    }
}
