//! The command line: `filterlab [report|recommend|compare|list|bench]`.
//!
//! Every numeric option takes a negative value as its value, so that
//! `--fpp -0.1` reaches the option's range check instead of reading as a
//! flag `-0` (`allow_negative_numbers`; `allow_hyphen_values` for a size,
//! whose unit makes `-1K` no number to clap).

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use filterlab_core::sizing::{check_fpp, check_items};

use crate::commands::bench::{BenchArgs, bench};
use crate::commands::compare::{CompareRequest, compare};
use crate::commands::list::list;
use crate::commands::recommend::{Request, recommend};
use crate::commands::report::{self, ReportOptions};
use crate::config::{DEFAULT_SEED, Experiment, Preset, RunConfig};
use crate::error::Error;
use crate::experiments::keys::KeySet;
use crate::registry;

/// Measures approximate-membership filters against their theory and the
/// peer crates, and sizes filters for a workload.
#[derive(Debug, Parser)]
#[command(name = "filterlab", version, about, long_about = None)]
pub struct Cli {
    /// What to do; `report` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure every filter and write the report (CSV, SVG, README.md).
    Report(ReportArgs),
    /// Size every suitable filter for a workload and recommend one.
    Recommend(RecommendArgs),
    /// Measure every filter at one (n, p) and print a table.
    Compare(CompareArgs),
    /// List the registered filters.
    List,
    /// Count every filter's operations under Valgrind; check or save the baseline.
    Bench(BenchArgs),
}

/// Options of `filterlab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// How much to measure (`--full`, `--quick`; the default without).
    #[command(flatten)]
    pub size: SizeArgs,
    /// The output directory [default: reports, or target/filterlab-report
    /// when reports/ holds a report made with more data].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only these filters (comma-separated registry names; see `filterlab list`).
    #[arg(long, value_name = "NAMES", value_delimiter = ',', num_args = 1..)]
    pub filters: Vec<String>,
    /// The master seed (decimal or 0x-hex); the same seed reproduces every accuracy figure.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// Only these experiments (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', num_args = 1.., value_enum)]
    pub experiments: Vec<Experiment>,
    /// Worker threads for the accuracy and capacity experiments (default: all cores).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
    /// The user's keys (`--keys`, `--holdout`).
    #[command(flatten)]
    pub keys: KeysArgs,
}

impl Default for ReportArgs {
    fn default() -> Self {
        Self {
            size: SizeArgs::default(),
            out: None,
            filters: Vec::new(),
            seed: DEFAULT_SEED,
            experiments: Vec::new(),
            threads: None,
            quiet: false,
            keys: KeysArgs::default(),
        }
    }
}

/// The preset flags of `filterlab report`.
#[derive(Debug, Default, Args)]
pub struct SizeArgs {
    /// The committed report: n up to 10^8, more repetitions (about half an
    /// hour on 2 cores). Without a preset flag: n up to 10^7, about 5 minutes.
    #[arg(long, conflicts_with_all = ["quick", "tiny"])]
    pub full: bool,
    /// A short run for CI (about a minute on 2 cores).
    #[arg(long, conflicts_with = "tiny")]
    pub quick: bool,
    /// A run of seconds, for tests.
    #[arg(long, hide = true)]
    pub tiny: bool,
}

impl ReportArgs {
    /// The preset its flags select.
    pub fn preset(&self) -> Preset {
        let size = &self.size;
        if size.tiny {
            Preset::Tiny
        } else if size.quick {
            Preset::Quick
        } else if size.full {
            Preset::Full
        } else {
            Preset::Default
        }
    }
}

/// Measuring the user's keys instead of generated ones.
#[derive(Debug, Default, Args)]
pub struct KeysArgs {
    /// Measure on these keys: one per line (read as u64s when every line is
    /// one, else as strings); a share of them is held out, never inserted,
    /// and the FPP measured on those.
    #[arg(long, value_name = "FILE")]
    pub keys: Option<PathBuf>,
    /// The share of the file's distinct keys held out (with --keys).
    #[arg(long, value_name = "SHARE", default_value_t = DEFAULT_HOLDOUT, requires = "keys")]
    pub holdout: f64,
}

/// The share of a key file held out when `--holdout` is not given.
pub const DEFAULT_HOLDOUT: f64 = 0.5;

impl KeysArgs {
    /// The key file, read and split with `seed`, when one was named.
    ///
    /// # Errors
    ///
    /// As [`KeySet::load`].
    pub fn load(&self, seed: u64) -> Result<Option<Arc<KeySet>>, Error> {
        self.keys
            .as_deref()
            .map(|path| KeySet::load(path, self.holdout, seed).map(Arc::new))
            .transpose()
    }
}

/// Options of `filterlab recommend`.
#[derive(Debug, Args)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "each is a flag of the command line"
)]
pub struct RecommendArgs {
    /// Distinct items the filter must hold (e.g. 1000000000 or 1e9).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_items)]
    pub items: u64,
    /// Target false-positive probability, in (0, 1).
    #[arg(long, value_name = "P", allow_negative_numbers = true, value_parser = parse_fpp)]
    pub fpp: f64,
    /// Items must be deletable.
    #[arg(long)]
    pub deletes: bool,
    /// The final item count is unknown: the filter must grow.
    #[arg(long)]
    pub unknown_size: bool,
    /// Several threads insert concurrently.
    #[arg(long)]
    pub concurrent: bool,
    /// A set built once, never changed: choose among the filters built
    /// from the whole key set (no inserts after the build).
    #[arg(long = "static", conflicts_with_all = ["deletes", "unknown_size", "concurrent"])]
    pub static_set: bool,
    /// A memory budget (bytes; suffixes K, M, G, KiB, MiB, GiB accepted).
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = parse_bytes)]
    pub memory: Option<u64>,
    /// The report to quote measurements from [default: reports, else
    /// target/filterlab-report].
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
}

/// Options of `filterlab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Items: each filter's capacity, all inserted (with --keys: the keys
    /// not held out).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_items, required_unless_present = "keys", conflicts_with = "keys")]
    pub items: Option<u64>,
    /// Target false-positive probability, in (0, 1).
    #[arg(long, value_name = "P", allow_negative_numbers = true, value_parser = parse_fpp)]
    pub fpp: f64,
    /// Only these filters (comma-separated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',', num_args = 1..)]
    pub filters: Vec<String>,
    /// The master seed (decimal or 0x-hex).
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
    /// The user's keys (`--keys`, `--holdout`).
    #[command(flatten)]
    pub keys: KeysArgs,
}

/// Parses an FPP strictly inside (0, 1).
///
/// # Errors
///
/// A message for clap when the value is not a number in (0, 1).
pub fn parse_fpp(text: &str) -> Result<f64, String> {
    let fpp: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    check_fpp(fpp)
        .map(|()| fpp)
        .map_err(|err| err.detail().to_owned())
}

/// Parses a positive item count, as an integer or in scientific notation.
///
/// # Errors
///
/// A message for clap when the value is not a whole number of at least 1.
pub fn parse_items(text: &str) -> Result<u64, String> {
    let trimmed = text.trim().replace('_', "");
    let items = if let Ok(items) = trimmed.parse::<u64>() {
        items
    } else {
        let value: f64 = trimmed
            .parse()
            .map_err(|_| format!("`{text}` is not a number of items"))?;
        if !(value.fract() == 0.0 && (0.0..1.8e19).contains(&value)) {
            return Err(format!(
                "`{text}` is not a whole number of items of at least 1"
            ));
        }
        value as u64
    };
    check_items(items)
        .map(|()| items)
        .map_err(|err| err.detail().to_owned())
}

/// Parses a seed in decimal or 0x-hex.
///
/// # Errors
///
/// A message for clap when the value is not a u64.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("`{text}` is not a 64-bit seed (decimal or 0x-hex)"))
}

/// Parses a byte count with an optional unit suffix.
///
/// # Errors
///
/// A message for clap when the value is not a positive size.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => return Err(format!("`{text}`: unknown unit `{unit}`")),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a size in bytes"))?;
    let bytes = value * multiplier as f64;
    if (1.0..1.8e19).contains(&bytes) {
        Ok(bytes as u64)
    } else {
        Err(format!("`{text}` is not a positive size in bytes"))
    }
}

/// The default thread count: every core.
fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Runs a parsed command line; returns what to print on stdout.
///
/// # Errors
///
/// As the subcommand.
pub fn run(cli: Cli, command_line: &str) -> Result<String, Error> {
    match cli
        .command
        .unwrap_or(Command::Report(ReportArgs::default()))
    {
        Command::Report(args) => {
            let threads = args.threads.map_or_else(default_threads, usize::from);
            let mut config = RunConfig::preset(args.preset(), args.seed, threads);
            if !args.experiments.is_empty() {
                config.experiments = args.experiments;
            }
            let mut skipped = Vec::new();
            if let Some(keys) = args.keys.load(args.seed)? {
                (config, skipped) = config.with_keys(keys);
            }
            let options = ReportOptions {
                out: args.out,
                config,
                filters: args.filters,
                quiet: args.quiet,
                command_line: command_line.to_owned(),
                skipped,
            };
            let summary = report::run(&options)?;
            Ok(format!(
                "report written to {} in {:.0} s; accuracy gate passed ({} filterlab rows); \
                 guide check passed\n",
                summary.out.display(),
                summary.seconds,
                summary.gated_rows
            ))
        }
        Command::Recommend(args) => recommend(&Request {
            items: args.items,
            fpp: args.fpp,
            deletes: args.deletes,
            unknown_size: args.unknown_size,
            concurrent: args.concurrent,
            static_set: args.static_set,
            memory: args.memory,
            report: args.report,
        }),
        Command::Compare(args) => {
            let keys = args.keys.load(args.seed)?;
            let items = match (&keys, args.items) {
                (Some(keys), _) => keys.inserted().len() as u64,
                (None, Some(items)) => items,
                (None, None) => return Err(Error::usage("compare needs --items or --keys")),
            };
            compare(&CompareRequest {
                items,
                fpp: args.fpp,
                filters: args.filters,
                seed: args.seed,
                threads: default_threads(),
                quiet: args.quiet,
                keys,
            })
        }
        Command::List => Ok(list(&registry::registry())),
        Command::Bench(args) => bench(&args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_accept_and_refuse() {
        assert_eq!(parse_fpp("0.01"), Ok(0.01));
        assert!(parse_fpp("0").is_err());
        assert!(parse_fpp("1").is_err());
        assert!(parse_fpp("1.5").is_err());
        assert!(parse_fpp("NaN").is_err());
        assert!(parse_fpp("x").is_err());
        assert_eq!(parse_items("1e9"), Ok(1_000_000_000));
        assert_eq!(parse_items("1_000"), Ok(1000));
        assert!(parse_items("0").is_err());
        assert!(parse_items("1.5").is_err());
        assert!(parse_items("-3").is_err());
        assert_eq!(parse_seed("0x5eed"), Ok(0x5eed));
        assert_eq!(parse_seed("42"), Ok(42));
        assert!(parse_seed("zz").is_err());
        assert_eq!(parse_bytes("8GiB"), Ok(8 << 30));
        assert_eq!(parse_bytes("1.5 K"), Ok(1500));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("3 parsecs").is_err());
    }

    /// Every option that takes a number (its value named N, P, S or
    /// BYTES) takes a negative one as its value, for its range check.
    #[test]
    fn numeric_options_take_negative_values() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let mut numeric = 0;
        for command in cli.get_subcommands() {
            for arg in command.get_arguments() {
                let names = arg.get_value_names().unwrap_or_default();
                if names
                    .iter()
                    .any(|n| ["N", "P", "S", "BYTES"].contains(&n.as_str()))
                {
                    numeric += 1;
                    let name = (command.get_name(), arg.get_id());
                    let negative = arg.is_allow_negative_numbers_set();
                    assert!(negative || arg.is_allow_hyphen_values_set(), "{name:?}");
                }
            }
        }
        assert!(numeric >= 8, "only {numeric} numeric options found");
    }

    #[test]
    fn no_subcommand_means_the_default_report() {
        let cli = Cli::try_parse_from(["filterlab"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(ReportArgs::default().preset(), Preset::Default);
        for (flag, preset) in [("--full", Preset::Full), ("--quick", Preset::Quick)] {
            match Cli::try_parse_from(["filterlab", "report", flag])
                .unwrap()
                .command
            {
                Some(Command::Report(args)) => assert_eq!(args.preset(), preset),
                other => panic!("{other:?}"),
            }
        }
        assert!(Cli::try_parse_from(["filterlab", "report", "--full", "--quick"]).is_err());
        assert!(Cli::try_parse_from(["filterlab", "report", "--holdout", "0.3"]).is_err());
        assert!(Cli::try_parse_from(["filterlab", "compare", "--fpp", "0.01"]).is_err());
        assert!(
            Cli::try_parse_from([
                "filterlab",
                "compare",
                "--fpp",
                "0.01",
                "--keys",
                "k",
                "--items",
                "9"
            ])
            .is_err()
        );
        let cli =
            Cli::try_parse_from(["filterlab", "report", "--filters", "a,b", "--seed", "0x10"])
                .unwrap();
        match cli.command {
            Some(Command::Report(args)) => {
                assert_eq!(args.filters, ["a", "b"]);
                assert_eq!(args.seed, 16);
            }
            other => panic!("{other:?}"),
        }
    }
}
