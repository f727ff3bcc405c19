//! The builder of a [`Deduplicator`].

use crate::dedup::Deduplicator;
use crate::error::Error;
use crate::settings::{DedupSizing, Settings, SizingMode};

/// Configures a [`Deduplicator`]; made by [`Deduplicator::with_fpp`].
///
/// # Examples
///
/// ```
/// use filterlab_dedup::{Deduplicator, PartitionKey, SizingMode, Verdict};
///
/// // One partition per day, the last 7 days kept; alarms at 50% and 80% full.
/// let mut dedup = Deduplicator::with_fpp(1e-4)
///     .expected_items(100_000)
///     .partitions(7)
///     .search_all(true)
///     .alarms([50.0, 80.0])
///     .sizing_mode(SizingMode::Exact)
///     .build()?;
/// let monday = PartitionKey::parse(b"2024-06-03");
/// assert_eq!(dedup.check("txn-1", Some(&monday))?, Verdict::Unique);
/// # Ok::<(), filterlab_dedup::Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct DeduplicatorBuilder {
    settings: Settings,
}

impl Deduplicator {
    /// A builder for a de-duplicator whose partitions each have a false
    /// positive probability of at most `fpp` (P) up to
    /// [`expected_items`](DeduplicatorBuilder::expected_items) (N) uniques.
    pub fn with_fpp(fpp: f64) -> DeduplicatorBuilder {
        DeduplicatorBuilder {
            settings: Settings {
                fpp,
                expected_items: None,
                sizing_mode: SizingMode::default(),
                partition_count: None,
                search_all: false,
                alarms: Vec::new(),
                seed: 0,
            },
        }
    }
}

impl DeduplicatorBuilder {
    /// The builder with one setting changed.
    fn with(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(&mut self.settings);
        self
    }

    /// N: the uniques each partition must hold at the target FPP (required).
    pub fn expected_items(self, items: u64) -> Self {
        self.with(|settings| settings.expected_items = Some(items))
    }

    /// Power-of-two sizing (the default, as the operator) or exact.
    pub fn sizing_mode(self, mode: SizingMode) -> Self {
        self.with(|settings| settings.sizing_mode = mode)
    }

    /// Partitions by a key: at most `count` live partitions, each a filter
    /// for N uniques; a new key beyond the count evicts the lowest (see
    /// [`PartitionKey`](crate::PartitionKey) for the order).
    pub fn partitions(self, count: u64) -> Self {
        self.with(|settings| settings.partition_count = Some(count))
    }

    /// With partitions, also looks up a key new to its own partition in the
    /// others, and calls it a duplicate if one holds it. It is stored in its
    /// own partition either way (the operator's documented rule).
    pub fn search_all(self, enabled: bool) -> Self {
        self.with(|settings| settings.search_all = enabled)
    }

    /// Fill-level thresholds in percent of N (0% is always one): crossing
    /// one raises an [`AlarmEvent`](crate::AlarmEvent).
    pub fn alarms(self, thresholds: impl IntoIterator<Item = f64>) -> Self {
        self.with(|settings| settings.alarms = thresholds.into_iter().collect())
    }

    /// The key hasher's seed (default 0); a checkpoint records it.
    pub fn seed(self, seed: u64) -> Self {
        self.with(|settings| settings.seed = seed)
    }

    /// The sizing, without allocating.
    ///
    /// # Errors
    ///
    /// `InvalidParameter` (as [`ErrorKind::Filter`](crate::ErrorKind::Filter))
    /// for P outside (0, 1), N = 0 or missing, or a partition count of 0;
    /// `TooLarge` when one partition's filter exceeds 64 GiB.
    pub fn sizing(&self) -> Result<DedupSizing, Error> {
        self.settings.sizing()
    }

    /// Builds the de-duplicator.
    ///
    /// # Errors
    ///
    /// As [`sizing`](Self::sizing), and `InvalidParameter` for a negative
    /// or non-finite alarm threshold; `TooLarge` when the memory cannot be had.
    pub fn build(&self) -> Result<Deduplicator, Error> {
        Deduplicator::from_settings(self.settings.clone())
    }
}
