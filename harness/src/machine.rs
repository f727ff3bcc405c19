//! What the report was measured on: CPU, caches, cores, memory, kernel, and
//! the git revision of the code.

use std::fs;
use std::path::Path;
use std::process::Command;

/// The machine and code a report was measured on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical CPUs the OS reports.
    pub logical_cpus: usize,
    /// Cache levels of CPU 0, e.g. "L1d 32K, L1i 32K, L2 512K, L3 32768K".
    pub caches: String,
    /// Total memory.
    pub memory: String,
    /// OS and kernel.
    pub os: String,
    /// Git revision, with "-dirty" when the tree has uncommitted changes.
    pub revision: String,
}

impl Machine {
    /// Reads the machine's description (Linux paths; "unknown" elsewhere).
    pub fn detect() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo_field(&cpuinfo, "model name").unwrap_or_else(|| "unknown".to_owned());
        let logical_cpus = cpuinfo
            .lines()
            .filter(|line| line.starts_with("processor"))
            .count()
            .max(std::thread::available_parallelism().map_or(1, usize::from));
        let memory = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|info| {
                let line = info
                    .lines()
                    .find(|l| l.starts_with("MemTotal:"))?
                    .to_owned();
                let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
                Some(format!("{:.1} GiB", kib as f64 / (1024.0 * 1024.0)))
            })
            .unwrap_or_else(|| "unknown".to_owned());
        let os = fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(
            |_| std::env::consts::OS.to_owned(),
            |release| format!("{} {}", std::env::consts::OS, release.trim()),
        );
        Self {
            cpu,
            logical_cpus,
            caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
            memory,
            os,
            revision: git_revision(),
        }
    }

    /// Markdown list items for the report.
    pub fn describe(&self) -> String {
        format!(
            "- CPU: {} ({} logical CPUs)\n- caches (cpu0): {}\n- memory: {}\n- OS: {}\n- git revision: {}\n",
            self.cpu, self.logical_cpus, self.caches, self.memory, self.os, self.revision
        )
    }
}

/// The CPU a wall-clock figure belongs to: the model name and, as cloud
/// hosts give one generic name to several generations, family and model.
pub fn cpu_identity() -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let name = cpuinfo_field(&cpuinfo, "model name").unwrap_or_else(|| "unknown".to_owned());
    match (
        cpuinfo_field(&cpuinfo, "cpu family"),
        cpuinfo_field(&cpuinfo, "model"),
    ) {
        (Some(family), Some(model)) => format!("{name} (family {family}, model {model})"),
        _ => name,
    }
}

/// The first value of the field `name` in /proc/cpuinfo's text.
fn cpuinfo_field(cpuinfo: &str, name: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().to_owned())
    })
}

/// Cache levels from sysfs, e.g. "L1d 32K, L1i 32K, L2 512K (shared by 2)".
fn caches(dir: &Path) -> String {
    let Ok(entries) = fs::read_dir(dir) else {
        return "unknown".to_owned();
    };
    let mut indexes: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("index"))
        })
        .collect();
    indexes.sort();
    let read = |path: &Path, file: &str| {
        fs::read_to_string(path.join(file))
            .map(|text| text.trim().to_owned())
            .unwrap_or_default()
    };
    let levels: Vec<String> = indexes
        .iter()
        .map(|path| {
            let kind = match read(path, "type").as_str() {
                "Data" => "d",
                "Instruction" => "i",
                _ => "",
            };
            let shared = read(path, "shared_cpu_list");
            let shared = if shared.is_empty() {
                String::new()
            } else {
                format!(" (CPUs {shared})")
            };
            format!(
                "L{}{kind} {}{shared}",
                read(path, "level"),
                read(path, "size")
            )
        })
        .collect();
    if levels.is_empty() {
        "unknown".to_owned()
    } else {
        levels.join(", ")
    }
}

/// `git rev-parse HEAD` (+ "-dirty"), or "unknown" outside a git checkout.
fn git_revision() -> String {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(revision) if !revision.is_empty() => {
            let dirty = run(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|status| !status.is_empty());
            if dirty {
                format!("{revision}-dirty")
            } else {
                revision
            }
        }
        _ => "unknown".to_owned(),
    }
}
