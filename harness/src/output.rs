//! Writing a report so that it is never left half-written looking complete:
//! files go to a staging directory inside the output directory and are moved
//! into place at the end, README.md last (the old README is removed first,
//! so a report is either the old one, the new one, or visibly incomplete).

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Preset;
use crate::error::Error;

/// Every file a report may contain, but the Pareto charts (one per target,
/// see [`is_report_file`]); files of an older report that the new one does
/// not write are removed when it is published.
pub const REPORT_FILES: [&str; 26] = [
    "README.md",
    RECORD_FILE,
    "accuracy.csv",
    "space.csv",
    "speed.csv",
    "sweep.csv",
    "capacity.csv",
    "churn.csv",
    "churn_removals.csv",
    "growth.csv",
    "redis.csv",
    "accuracy.svg",
    "space.svg",
    "skyline.svg",
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

/// Whether `name` is a file a report writes: one of [`REPORT_FILES`] or a
/// Pareto chart (`pareto_p1e-2.svg`).
pub fn is_report_file(name: &str) -> bool {
    REPORT_FILES.contains(&name)
        || (name.starts_with("pareto_p")
            && Path::new(name)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("svg")))
}

/// The file recording what made a report (its [`RunRecord`]).
pub const RECORD_FILE: &str = "run.csv";

/// What made a report: recorded beside it, so that a run with less data
/// does not overwrite it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The preset's name (`Preset::name`).
    pub preset: String,
    /// The master seed.
    pub seed: u64,
    /// Filters measured.
    pub filters: usize,
    /// Whether every registered filter and every experiment of the preset
    /// ran, on generated keys.
    pub complete: bool,
    /// The command line.
    pub command: String,
    /// Cells where two experiments' timings of the same thing agreed
    /// within [`AGREEMENT_FACTOR`](crate::experiments::timing::AGREEMENT_FACTOR)
    /// (empty when not checked).
    #[serde(default)]
    pub timing_cells_agreeing: Option<usize>,
    /// Cells compared.
    #[serde(default)]
    pub timing_cells_compared: Option<usize>,
}

impl RunRecord {
    /// The preset, when its name is known.
    pub fn preset(&self) -> Option<Preset> {
        Preset::from_name(&self.preset)
    }

    /// The flag that runs this record's preset again, `None` for the
    /// default preset (no flag) or an unknown one.
    pub fn preset_flag(&self) -> Option<&'static str> {
        self.preset()
            .map(Preset::flag)
            .filter(|flag| !flag.is_empty())
    }

    /// Whether a report made by `self` holds at least the data of one made
    /// by `other`: a preset at least as large, and complete if `other` is.
    pub fn covers(&self, other: &Self) -> bool {
        self.preset() >= other.preset() && (self.complete || !other.complete)
    }

    /// "a --full report (21 filters, every experiment)".
    pub fn describe(&self) -> String {
        let flag = match self.preset().map(Preset::flag) {
            Some("") => "default".to_owned(),
            Some(flag) => flag.to_owned(),
            None => self.preset.clone(),
        };
        let scope = if self.complete {
            "every filter and experiment"
        } else {
            "a selection of filters, experiments or keys"
        };
        format!("a {flag} report ({} filters; {scope})", self.filters)
    }

    /// Writes the record into `dir`.
    ///
    /// # Errors
    ///
    /// When the file cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        let mut writer = csv::Writer::from_path(dir.join(RECORD_FILE))?;
        writer.serialize(self)?;
        writer.flush()?;
        Ok(())
    }

    /// The record of the report in `dir`, if there is one: its record
    /// file, or for a report from before records, its README's preset line.
    pub fn read(dir: &Path) -> Option<Self> {
        if let Ok(mut reader) = csv::Reader::from_path(dir.join(RECORD_FILE)) {
            return reader.deserialize().next()?.ok();
        }
        let readme = fs::read_to_string(dir.join("README.md")).ok()?;
        if !readme.starts_with("# filterlab report") {
            return None;
        }
        let preset = readme
            .lines()
            .find_map(|line| line.strip_prefix("- preset: "))?
            .split(';')
            .next()?
            .trim()
            .to_owned();
        let command = readme
            .lines()
            .find_map(|line| line.strip_prefix("Generated by `"))
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_default()
            .to_owned();
        let complete = !["--filters", "--experiments", "--keys"]
            .iter()
            .any(|flag| command.contains(flag));
        Some(Self {
            preset,
            seed: 0,
            filters: readme.lines().filter(|l| l.starts_with("| **")).count(),
            complete,
            command,
            timing_cells_agreeing: None,
            timing_cells_compared: None,
        })
    }
}

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
        for old in fs::read_dir(&self.out)?.filter_map(Result::ok) {
            let name = old.file_name().to_string_lossy().into_owned();
            if is_report_file(&name) && !written.contains(&name) && old.path().is_file() {
                fs::remove_file(old.path())?;
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
        fs::write(out.join("pareto_p1e-9.svg"), "old").unwrap();
        fs::write(out.join("notes.txt"), "mine").unwrap();
        let staging = Staging::create(&out).unwrap();
        fs::write(staging.path().join("accuracy.csv"), "new").unwrap();
        fs::write(staging.path().join("README.md"), "new").unwrap();
        staging.publish().unwrap();
        assert_eq!(fs::read_to_string(out.join("README.md")).unwrap(), "new");
        assert!(!out.join("speed.csv").exists(), "stale report file kept");
        assert!(!out.join("pareto_p1e-9.svg").exists(), "stale chart kept");
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
    fn records_say_which_report_holds_more_data() {
        let record = |preset: Preset, complete| RunRecord {
            preset: preset.name().to_owned(),
            seed: 1,
            filters: 21,
            complete,
            command: "filterlab".to_owned(),
            timing_cells_agreeing: Some(104),
            timing_cells_compared: Some(105),
        };
        let full = record(Preset::Full, true);
        let default = record(Preset::Default, true);
        let full_subset = record(Preset::Full, false);
        assert!(full.covers(&default) && full.covers(&full));
        assert!(!default.covers(&full));
        assert!(!full_subset.covers(&full) && full.covers(&full_subset));
        assert!(!full_subset.covers(&default));
        assert_eq!(
            full.describe(),
            "a --full report (21 filters; every filter and experiment)"
        );
        let dir = temp("record");
        fs::create_dir_all(&dir).unwrap();
        assert_eq!(RunRecord::read(&dir), None);
        // A report from before records: its README says the preset.
        fs::write(
            dir.join("README.md"),
            "# filterlab report\n\nGenerated by `filterlab report` (seed 1)\n\n| **BloomFilter** |\n- preset: Full; seed: 1\n",
        )
        .unwrap();
        let legacy = RunRecord::read(&dir).unwrap();
        assert_eq!(legacy.preset(), Some(Preset::Full));
        assert!(legacy.complete && !default.covers(&legacy));
        default.write(&dir).unwrap();
        assert_eq!(RunRecord::read(&dir), Some(default.clone()));
        // A record from before the timing check reads, without its figures.
        fs::write(
            dir.join(RECORD_FILE),
            "preset,seed,filters,complete,command\nfull,24301,21,true,filterlab report --full\n",
        )
        .unwrap();
        let older = RunRecord::read(&dir).unwrap();
        assert_eq!(older.timing_cells_compared, None);
        assert_eq!(older.preset(), Some(Preset::Full));
        fs::remove_dir_all(&dir).unwrap();
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
