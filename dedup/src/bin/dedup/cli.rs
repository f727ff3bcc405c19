//! The command line: every flag, parsed and checked before any input is read.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use filterlab_dedup::{Deduplicator, DeduplicatorBuilder, SizingMode};

/// Flags each input line unique or duplicate in bounded memory (a Bloom
/// filter per partition, sized like IBM Streams' BloomFilter operator),
/// where `awk '!seen[$0]++'` needs memory for every distinct line.
///
/// Reads lines (bytes: any encoding) from the files, or standard input.
/// Prints the startup sizing, alarm events (JSON lines), status on SIGUSR1
/// (a JSON line) and a final summary on stderr (--quiet: errors and events
/// only). With --state, the state is loaded at start when the file exists,
/// written every --checkpoint-every lines, at the end, before stopping on
/// an error, and on SIGINT/SIGTERM. When the reader of the output goes
/// away (`dedup ... | head`), the run ends there, exit code 0, the state
/// written.
// Each bool is one independent command-line switch.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Parser)]
#[command(name = "dedup", version)]
pub(crate) struct Args {
    /// Input files; none, or `-`, for standard input.
    pub(crate) files: Vec<PathBuf>,

    /// N: the unique keys expected (in each partition).
    #[arg(short = 'n', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) expected: u64,

    /// P: the false-positive probability at N uniques, in (0, 1).
    #[arg(short = 'p', long, value_name = "P", default_value = "1e-6", allow_negative_numbers = true, value_parser = parse_fpp)]
    pub(crate) fpp: f64,

    /// Bit-array sizing: a power-of-two number of bytes with the fewest
    /// hash functions meeting P (as the operator), or the exact smallest.
    #[arg(long, value_enum, default_value_t = Sizing::PowerOfTwo)]
    pub(crate) sizing: Sizing,

    /// The field separator: one byte, or `tab`.
    #[arg(short = 'd', long, value_name = "BYTE", default_value = "tab", value_parser = parse_delimiter)]
    pub(crate) delimiter: u8,

    /// The key is this field (counted from 1); the whole line by default.
    #[arg(short = 'k', long, value_name = "FIELD", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) key_field: Option<u64>,

    /// The key is a hexadecimal hash computed by the caller (of at least
    /// the digits the startup report names), not text to hash.
    #[arg(long)]
    pub(crate) hex_hashes: bool,

    /// The partition key is this field (counted from 1): numbers order
    /// numerically, other text byte by byte, numbers first.
    #[arg(long, value_name = "FIELD", requires = "partitions", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) partition_field: Option<u64>,

    /// Keep at most K partitions: a new partition key beyond K evicts the lowest.
    #[arg(long, value_name = "K", requires = "partition_field", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) partitions: Option<u64>,

    /// Also look a key up in the other partitions (it is stored in its own).
    #[arg(long, requires = "partitions")]
    pub(crate) search_all: bool,

    /// Which lines to print: unique ones, duplicate ones, or all with a
    /// column `unique`, `duplicate`, `unknown` (partition evicted) or
    /// `fault` (skipped, permissive faults only).
    #[arg(long, value_enum, default_value_t = Emit::Unique)]
    pub(crate) emit: Emit,

    /// Fill-level alarm thresholds in percent of N, e.g. 50,80,100 (0 is
    /// always one); events go to stderr as JSON lines.
    #[arg(long, value_name = "PERCENTS", value_delimiter = ',', allow_negative_numbers = true, value_parser = parse_percent)]
    pub(crate) alarms: Vec<f64>,

    /// The state file: loaded at start when present, written at the end,
    /// on SIGINT/SIGTERM and every --checkpoint-every lines.
    #[arg(long, value_name = "FILE")]
    pub(crate) state: Option<PathBuf>,

    /// Keep the filter in Redis rather than in this process: a server, or
    /// any node of a Redis Cluster (`redis://host:port/`), sharded over its
    /// masters. Every `dedup` given the same URL's server or cluster,
    /// --redis-name, -n, -p and --seed shares the one filter, so that
    /// processes reading parts of one stream call each key unique once in
    /// all. Not with partitions, alarms or --state (the state is in Redis).
    #[arg(long, value_name = "URL", conflicts_with_all = ["state", "partition_field", "alarms"])]
    pub(crate) redis: Option<String>,

    /// The shared filter's name in Redis.
    #[arg(long, value_name = "NAME", default_value = "dedup", requires = "redis")]
    pub(crate) redis_name: String,

    /// Shards of the shared filter (spread over a cluster's masters).
    #[arg(long, value_name = "S", default_value_t = 64, requires = "redis", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub(crate) redis_shards: u64,

    /// Durable mode: a block's verdicts wait until this many replicas of
    /// each master have its keys (WAIT), so that a failover loses none.
    #[arg(long, value_name = "REPLICAS", requires = "redis")]
    pub(crate) redis_replicas: Option<u32>,

    /// Write the state after every LINES input lines (at the end of the
    /// block of input that reaches the count).
    #[arg(long, value_name = "LINES", requires = "state", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) checkpoint_every: Option<u64>,

    /// A bad line (missing field, empty key, malformed or short hash):
    /// `strict` stops with an error naming it (after saving the state),
    /// `permissive` logs it, counts it and goes on.
    #[arg(long, value_enum, default_value_t = Faults::Strict)]
    pub(crate) faults: Faults,

    /// Treat an empty key as a key rather than a fault.
    #[arg(long)]
    pub(crate) allow_empty_keys: bool,

    /// The key hasher's seed (a state file records it).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,

    /// No progress line, even on a terminal.
    #[arg(long)]
    pub(crate) no_progress: bool,

    /// Leave stderr to errors and events: no sizing, state or summary
    /// lines and no progress line; errors, skipped faults, alarm events,
    /// status (SIGUSR1) and removed stale state files still print.
    #[arg(short = 'q', long)]
    pub(crate) quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Sizing {
    PowerOfTwo,
    Exact,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Emit {
    Unique,
    Duplicate,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Faults {
    Strict,
    Permissive,
}

impl Args {
    /// The de-duplicator these flags describe.
    pub(crate) fn builder(&self) -> DeduplicatorBuilder {
        let mode = match self.sizing {
            Sizing::PowerOfTwo => SizingMode::PowerOfTwo,
            Sizing::Exact => SizingMode::Exact,
        };
        let mut builder = Deduplicator::with_fpp(self.fpp)
            .expected_items(self.expected)
            .sizing_mode(mode)
            .search_all(self.search_all)
            .alarms(self.alarms.iter().copied())
            .seed(self.seed);
        if let Some(count) = self.partitions {
            builder = builder.partitions(count);
        }
        builder
    }
}

fn parse_fpp(text: &str) -> Result<f64, String> {
    let fpp: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if fpp > 0.0 && fpp < 1.0 {
        Ok(fpp)
    } else {
        Err(format!("P must be strictly between 0 and 1, got {text}"))
    }
}

fn parse_percent(text: &str) -> Result<f64, String> {
    let percent: f64 = text
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("{text:?} is not a percentage"))?;
    if percent.is_finite() && percent >= 0.0 {
        Ok(percent)
    } else {
        Err(format!(
            "a threshold is a percentage of at least 0, got {text}"
        ))
    }
}

fn parse_delimiter(text: &str) -> Result<u8, String> {
    match text {
        "tab" | "\\t" => Ok(b'\t'),
        "space" => Ok(b' '),
        _ => match text.as_bytes() {
            [byte] => Ok(*byte),
            _ => Err(format!(
                "the delimiter is one byte (or `tab`, `space`), got {text:?}"
            )),
        },
    }
}
