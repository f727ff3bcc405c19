//! The user's own keys (`--keys FILE`): one key per line, read as u64s
//! when every line is a decimal u64, else as byte strings mapped to u64
//! keys by XXH3 (every filter then hashes that u64 with its own hasher, as
//! it does the generated keys). Duplicates are dropped, the distinct keys
//! shuffled with the run's seed and split: the first part is inserted, the
//! rest held out as never-inserted keys, so the FPP is measured against
//! keys of the same kind as those inserted.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use filterlab_core::{KeyHasher, mix64};

use crate::error::Error;
use crate::text::format_count;

/// The seed of the XXH3 that maps a line to its u64 key (fixed, so a file
/// gives the same keys in every run).
const LINE_SEED: u64 = 0x6b65_7973;

/// Fewest distinct keys a file must hold: enough for a filter of 100 keys
/// and 100 held-out queries.
const MIN_KEYS: usize = 200;

/// How the lines of a key file were read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyFormat {
    /// Every line a decimal u64: the keys are those numbers.
    Integers,
    /// Byte strings, each mapped to a u64 by XXH3.
    Lines,
}

/// The keys of a file, split into keys to insert and keys held out.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySet {
    path: PathBuf,
    format: KeyFormat,
    lines: usize,
    inserted: Vec<u64>,
    held_out: Vec<u64>,
}

impl KeySet {
    /// Reads `path` and splits its distinct keys: a `held_out` share (in
    /// (0, 1)) of them is never inserted, the rest is, in an order shuffled
    /// by `seed`.
    ///
    /// # Errors
    ///
    /// A usage error when the file cannot be read, `held_out` is not in
    /// (0, 1), or too few distinct keys remain on either side.
    pub fn load(path: &Path, held_out: f64, seed: u64) -> Result<Self, Error> {
        let bytes = fs::read(path).map_err(|err| {
            Error::usage(format!("cannot read keys from {}: {err}", path.display()))
        })?;
        Self::from_bytes(path, &bytes, held_out, seed)
    }

    /// As [`load`](Self::load), from the file's contents.
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load).
    pub fn from_bytes(path: &Path, bytes: &[u8], held_out: f64, seed: u64) -> Result<Self, Error> {
        if !(held_out > 0.0 && held_out < 1.0) {
            return Err(Error::usage(format!(
                "--holdout {held_out} must be a share in (0, 1)"
            )));
        }
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
            .filter(|line| !line.is_empty())
            .collect();
        let integers: Option<Vec<u64>> = lines
            .iter()
            .map(|line| std::str::from_utf8(line).ok()?.trim().parse().ok())
            .collect();
        let (format, mut keys) = if let Some(values) = integers {
            (KeyFormat::Integers, values)
        } else {
            let hasher = KeyHasher::new(LINE_SEED);
            let keys = lines.iter().map(|line| hasher.hash_bytes(line)).collect();
            (KeyFormat::Lines, keys)
        };
        keys.sort_unstable();
        keys.dedup();
        if keys.len() < MIN_KEYS {
            return Err(Error::usage(format!(
                "{} holds {} distinct keys; at least {MIN_KEYS} are needed (some to insert, some held out)",
                path.display(),
                keys.len()
            )));
        }
        // A seeded order: sort by a keyed mix of each key.
        keys.sort_unstable_by_key(|&key| mix64(key ^ mix64(seed ^ 0x6b65_7973_686f_6c64)));
        let held = ((keys.len() as f64 * held_out).round() as usize).clamp(1, keys.len() - 1);
        let held_out_keys = keys.split_off(keys.len() - held);
        Ok(Self {
            path: path.to_owned(),
            format,
            lines: lines.len(),
            inserted: keys,
            held_out: held_out_keys,
        })
    }

    /// The keys inserted into every filter.
    pub fn inserted(&self) -> &[u64] {
        &self.inserted
    }

    /// The keys never inserted: the FPP is measured on them.
    pub fn held_out(&self) -> &[u64] {
        &self.held_out
    }

    /// The file, its lines and the split, in words.
    pub fn describe(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for KeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let read = match self.format {
            KeyFormat::Integers => "read as u64 integers",
            KeyFormat::Lines => "lines mapped to u64 keys by XXH3",
        };
        write!(
            f,
            "{} ({} non-empty lines, {read}; {} distinct): {} inserted, {} held out and \
             never inserted, the FPP measured on those",
            self.path.display(),
            format_count(self.lines as u64),
            format_count((self.inserted.len() + self.held_out.len()) as u64),
            format_count(self.inserted.len() as u64),
            format_count(self.held_out.len() as u64)
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::fmt::Write as _;

    use super::*;

    fn lines(count: usize, line: impl Fn(usize) -> String) -> Vec<u8> {
        let mut text = String::new();
        for i in 0..count {
            let _ = writeln!(text, "{}", line(i));
        }
        text.into_bytes()
    }

    #[test]
    fn integers_are_kept_and_split_disjointly() {
        // Each number twice, with Windows line ends on some.
        let mut text = lines(1000, |i| format!("{}", i % 500));
        text.extend_from_slice(b"7\r\n\n");
        let keys = KeySet::from_bytes(Path::new("n.txt"), &text, 0.25, 1).unwrap();
        assert_eq!(keys.format, KeyFormat::Integers);
        assert_eq!(keys.inserted().len() + keys.held_out().len(), 500);
        assert_eq!(keys.held_out().len(), 125);
        let inserted: HashSet<u64> = keys.inserted().iter().copied().collect();
        assert!(keys.held_out().iter().all(|k| !inserted.contains(k)));
        assert!(
            keys.inserted()
                .iter()
                .chain(keys.held_out())
                .all(|&k| k < 500)
        );
        assert!(
            keys.describe().contains("375 inserted, 125 held out"),
            "{}",
            keys.describe()
        );
    }

    #[test]
    fn strings_are_hashed_and_the_seed_picks_the_split() {
        let text = lines(400, |i| format!("https://example.org/page/{i}"));
        let one = KeySet::from_bytes(Path::new("u.txt"), &text, 0.5, 1).unwrap();
        let again = KeySet::from_bytes(Path::new("u.txt"), &text, 0.5, 1).unwrap();
        let other = KeySet::from_bytes(Path::new("u.txt"), &text, 0.5, 2).unwrap();
        assert_eq!(one.format, KeyFormat::Lines);
        assert_eq!(one, again);
        assert_ne!(one.held_out(), other.held_out());
        assert_eq!(one.inserted().len(), 200);
    }

    #[test]
    fn too_few_keys_and_bad_shares_are_usage_errors() {
        let few = lines(150, |i| format!("k{i}"));
        let err = KeySet::from_bytes(Path::new("few"), &few, 0.5, 1).unwrap_err();
        assert!(err.to_string().contains("150 distinct keys"), "{err}");
        let enough = lines(300, |i| format!("k{i}"));
        for share in [0.0, 1.0, f64::NAN] {
            let err = KeySet::from_bytes(Path::new("k"), &enough, share, 1).unwrap_err();
            assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        }
        let missing = KeySet::load(Path::new("/nonexistent/keys.txt"), 0.5, 1).unwrap_err();
        assert!(
            missing.to_string().contains("cannot read keys"),
            "{missing}"
        );
    }
}
