//! Writing a report so that it is never left half-written looking complete:
//! files go to a staging directory inside the output directory and are moved
//! into place at the end, README.md last (the old README is removed first,
//! so a report is either the old one, the new one, or visibly incomplete).

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Every file a report may contain; files of an older report that the new
/// one does not write are removed when it is published.
pub const REPORT_FILES: [&str; 22] = [
    "README.md",
    "accuracy.csv",
    "space.csv",
    "speed.csv",
    "capacity.csv",
    "churn.csv",
    "churn_removals.csv",
    "growth.csv",
    "accuracy.svg",
    "space.svg",
    "speed_insert.svg",
    "speed_lookup_positive.svg",
    "speed_lookup_negative.svg",
    "speed_remove.svg",
    "capacity_fpp.svg",
    "capacity_memory.svg",
    "capacity_refused.svg",
    "churn_fpp.svg",
    "churn_false_negatives.svg",
    "growth_fpp.svg",
    "growth_memory.svg",
    "growth_lookup.svg",
];

/// A staging directory for a report; removed on drop unless published.
pub struct Staging {
    out: PathBuf,
    partial_dir: PathBuf,
    published: bool,
}

impl Staging {
    /// Creates `out` (if needed) and a staging directory inside it.
    ///
    /// # Errors
    ///
    /// A usage error when `out` is not a directory or cannot be written.
    pub fn create(out: &Path) -> Result<Self, Error> {
        if out.exists() && !out.is_dir() {
            return Err(Error::usage(format!(
                "output directory {} exists and is not a directory",
                out.display()
            )));
        }
        fs::create_dir_all(out).map_err(|err| {
            Error::usage(format!(
                "cannot create output directory {}: {err}",
                out.display()
            ))
        })?;
        let partial_dir = out.join(format!(".filterlab-partial-{}", std::process::id()));
        fs::create_dir(&partial_dir).map_err(|err| {
            Error::usage(format!(
                "output directory {} is not writable: {err}",
                out.display()
            ))
        })?;
        Ok(Self {
            out: out.to_owned(),
            partial_dir,
            published: false,
        })
    }

    /// Where to write the report's files.
    pub fn path(&self) -> &Path {
        &self.partial_dir
    }

    /// Moves the written files into the output directory, README.md last,
    /// and removes report files an older run left that this one did not write.
    ///
    /// # Errors
    ///
    /// When a file cannot be moved.
    pub fn publish(mut self) -> Result<PathBuf, Error> {
        let readme = self.out.join("README.md");
        if readme.exists() {
            fs::remove_file(&readme)?;
        }
        let written: Vec<String> = fs::read_dir(&self.partial_dir)?
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        for name in REPORT_FILES {
            let stale = self.out.join(name);
            if !written.iter().any(|w| w == name) && stale.exists() {
                fs::remove_file(stale)?;
            }
        }
        for name in written.iter().filter(|name| *name != "README.md") {
            fs::rename(self.partial_dir.join(name), self.out.join(name))?;
        }
        if written.iter().any(|name| name == "README.md") {
            fs::rename(self.partial_dir.join("README.md"), &readme)?;
        }
        fs::remove_dir(&self.partial_dir)?;
        self.published = true;
        Ok(self.out.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            let _ = fs::remove_dir_all(&self.partial_dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("filterlab-output-{name}-{}", std::process::id()))
    }

    #[test]
    fn publishes_readme_last_and_removes_stale_files() {
        let out = temp("publish");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("README.md"), "old").unwrap();
        fs::write(out.join("speed.csv"), "old").unwrap();
        fs::write(out.join("notes.txt"), "mine").unwrap();
        let staging = Staging::create(&out).unwrap();
        fs::write(staging.path().join("accuracy.csv"), "new").unwrap();
        fs::write(staging.path().join("README.md"), "new").unwrap();
        staging.publish().unwrap();
        assert_eq!(fs::read_to_string(out.join("README.md")).unwrap(), "new");
        assert!(!out.join("speed.csv").exists(), "stale report file kept");
        assert!(
            out.join("notes.txt").exists(),
            "a file that is not a report file was removed"
        );
        let leftovers: Vec<_> = fs::read_dir(&out)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(".filterlab"))
            .collect();
        assert!(leftovers.is_empty());
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn abandoned_staging_is_removed_and_old_report_kept() {
        let out = temp("abandon");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("README.md"), "old").unwrap();
        {
            let staging = Staging::create(&out).unwrap();
            fs::write(staging.path().join("README.md"), "new").unwrap();
        }
        assert_eq!(fs::read_to_string(out.join("README.md")).unwrap(), "old");
        assert_eq!(fs::read_dir(&out).unwrap().count(), 1);
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn a_file_is_not_an_output_directory() {
        let file = temp("file");
        fs::write(&file, "x").unwrap();
        let err = Staging::create(&file).err().unwrap();
        assert_eq!(err.kind(), crate::error::ErrorKind::Usage);
        let err = Staging::create(&file.join("below")).err().unwrap();
        assert!(err.to_string().contains("cannot create"), "{err}");
        fs::remove_file(&file).unwrap();
    }
}
