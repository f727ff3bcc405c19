//! What a de-duplicator reports about itself: the operator's metrics, and
//! the status command's answer.

use crate::partition::PartitionKey;

/// The running counts and sizes (the operator's metrics, and a few more).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Metrics {
    /// Bytes of the live partitions' bit arrays.
    pub memory_bytes: u64,
    /// N: the uniques each partition is sized for.
    pub uniques_configured: u64,
    /// Keys stored: inserts that set a bit, summed over the live partitions.
    pub uniques_stored: u64,
    /// Uniques stored over uniques configured, in percent, of the highest
    /// partition when partitioned (0 with no partition yet).
    pub fill_level: f64,
    /// Checks made (every verdict), since creation or the checkpoint restored.
    pub checks: u64,
    /// [`Verdict::Unique`](crate::Verdict::Unique) answers.
    pub unique: u64,
    /// [`Verdict::Duplicate`](crate::Verdict::Duplicate) answers.
    pub duplicate: u64,
    /// [`Verdict::Unknown`](crate::Verdict::Unknown) answers: keys dropped
    /// because their partition was evicted, or would have been at once.
    pub dropped: u64,
    /// Inputs that could not be checked (a malformed or short hash, or what
    /// the caller reports through [`record_fault`](crate::Deduplicator::record_fault)).
    pub faults: u64,
    /// Live partitions (1 without partitioning).
    pub partitions: u64,
    /// Partitions evicted.
    pub evicted: u64,
}

/// One partition in a [`Status`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PartitionStatus {
    /// The partition's key; `None` for the one filter of an unpartitioned de-duplicator.
    pub key: Option<PartitionKey>,
    /// Keys stored in it.
    pub uniques_stored: u64,
    /// Its fill level, in percent of N.
    pub fill_level: f64,
    /// The FPP a never-seen key meets in it now, (X/m)^k for its X set bits.
    pub fpp_now: f64,
}

/// The answer to the status command.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Status {
    /// The metrics.
    pub metrics: Metrics,
    /// The highest alarm threshold reached, in percent.
    pub alarm_level: f64,
    /// The configured thresholds, 0 first.
    pub alarm_thresholds: Vec<f64>,
    /// The live partitions, lowest key first.
    pub partitions: Vec<PartitionStatus>,
}
