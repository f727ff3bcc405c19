//! What a de-duplicator is configured with, and the sizing that follows:
//! the startup report the operator prints.

use std::fmt;

use filterlab_bloom::{BloomBuilder, BloomConfig, BloomFilter, BloomSizing, human_bytes};
use filterlab_core::{HashAlgorithm, KeyHasher};

use crate::error::{Error, invalid};
use crate::hex::digits_for_bits;

/// How each partition's bit array is sized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SizingMode {
    /// As IBM Streams' BloomFilter operator: M = −N·ln P / ln²2 bits rounded
    /// up to a power-of-two number of bytes, then the fewest hash functions
    /// that still meet P. More memory, fewer probes per key.
    #[default]
    PowerOfTwo,
    /// The smallest whole-word array (and its best k) whose exact FPP at N
    /// items meets P.
    Exact,
}

impl SizingMode {
    /// The id a checkpoint records.
    pub(crate) fn id(self) -> u64 {
        match self {
            Self::PowerOfTwo => 0,
            Self::Exact => 1,
        }
    }

    /// The mode a checkpoint's id names.
    pub(crate) fn from_id(id: u64) -> Option<Self> {
        [Self::PowerOfTwo, Self::Exact]
            .into_iter()
            .find(|mode| mode.id() == id)
    }
}

impl fmt::Display for SizingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::PowerOfTwo => "power of two",
            Self::Exact => "exact",
        })
    }
}

/// Everything a de-duplicator is built from.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) fpp: f64,
    pub(crate) expected_items: Option<u64>,
    pub(crate) sizing_mode: SizingMode,
    pub(crate) partition_count: Option<u64>,
    pub(crate) search_all: bool,
    pub(crate) alarms: Vec<f64>,
    pub(crate) seed: u64,
}

impl Settings {
    /// N, required.
    pub(crate) fn items(&self) -> Result<u64, Error> {
        match self.expected_items {
            Some(0) => Err(invalid(
                "the expected number of uniques N must be at least 1",
            )),
            Some(items) => Ok(items),
            None => Err(invalid(
                "the expected number of uniques N is required (expected_items)",
            )),
        }
    }

    /// The partition count, which must be at least 1 when given.
    pub(crate) fn checked_partitions(&self) -> Result<Option<u64>, Error> {
        match self.partition_count {
            Some(0) => Err(invalid("a partition count must be at least 1")),
            count => Ok(count),
        }
    }

    /// The builder of every partition's filter.
    pub(crate) fn filter_builder(&self) -> Result<BloomBuilder, Error> {
        Ok(BloomFilter::with_fpp(self.fpp)
            .expected_items(self.items()?)
            .power_of_two(self.sizing_mode == SizingMode::PowerOfTwo)
            .hasher(self.hasher()))
    }

    /// The sizing, computed without allocating.
    pub(crate) fn sizing(&self) -> Result<DedupSizing, Error> {
        let partitions = self.checked_partitions()?;
        let builder = self.filter_builder()?;
        let bloom = builder.sizing()?;
        let exact = builder.clone().power_of_two(false).sizing()?;
        let recommended = bloom.hash_bits_needed.ceil().max(1.0) as u32;
        Ok(DedupSizing {
            config: builder.config()?,
            bloom,
            unreduced_hashes: exact.num_hashes,
            hash_bits_recommended: recommended,
            hex_digits_required: digits_for_bits(recommended.min(HASH_BITS_USED)),
            partitions,
            sizing_mode: self.sizing_mode,
        })
    }

    /// The key hasher: XXH3 with integer keys by width (hasher id 1), as
    /// every checkpoint so far was written with. A checkpoint records it
    /// and is refused under another, so id 2 (integers by value, the other
    /// filters' default) would refuse every existing state file; the
    /// command's keys are bytes, which both ids hash alike.
    pub(crate) fn hasher(&self) -> KeyHasher {
        KeyHasher::with_algorithm(HashAlgorithm::Xxh3, self.seed)
    }
}

/// The bits of key hash the filters probe with.
pub const HASH_BITS_USED: u32 = 64;

/// A de-duplicator's sizing: what each partition's filter holds and costs,
/// as the startup report prints it (its `Display`).
///
/// # Examples
///
/// ```
/// use filterlab_dedup::Deduplicator;
///
/// let sizing = Deduplicator::with_fpp(1e-6).expected_items(1_000_000).sizing()?;
/// assert_eq!(sizing.bloom.num_bits, 1 << 25); // 4 MiB: a power of two
/// assert!(sizing.bloom.fpp_at_capacity <= 1e-6);
/// assert!(sizing.bloom.num_hashes < sizing.unreduced_hashes);
/// assert_eq!(sizing.hex_digits_required, 10); // log2(N/P) = 39.9 bits
/// # Ok::<(), filterlab_dedup::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DedupSizing {
    /// Each partition's filter: N, P, bits requested and allocated, k, the
    /// exact FPP at N.
    pub bloom: BloomSizing,
    /// The configuration every partition's filter has.
    pub config: BloomConfig,
    /// k of the exact (unrounded) sizing: with a power-of-two array the
    /// sizing needs fewer.
    pub unreduced_hashes: u32,
    /// Bits of key hash the target needs, log2(N/P), rounded up.
    pub hash_bits_recommended: u32,
    /// The fewest hex digits a caller-supplied hash must have: the
    /// recommended bits, at most the 64 used.
    pub hex_digits_required: usize,
    /// The partition count, if partitioned.
    pub partitions: Option<u64>,
    /// How the array was sized.
    pub sizing_mode: SizingMode,
}

impl DedupSizing {
    /// Bytes of one partition's filter.
    pub fn partition_bytes(&self) -> u64 {
        self.bloom.bytes()
    }

    /// The most bytes the filters take: one partition's times the partition count.
    pub fn max_bytes(&self) -> u64 {
        self.partition_bytes()
            .saturating_mul(self.partitions.unwrap_or(1))
    }
}

impl fmt::Display for DedupSizing {
    /// The startup sizing block, one `name value` line each.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bloom = &self.bloom;
        writeln!(f, "dedup sizing")?;
        writeln!(f, "  N (expected uniques)  {}", bloom.expected_items)?;
        if let Some(p) = bloom.target_fpp {
            writeln!(f, "  P (target FPP)        {p:e}")?;
        }
        writeln!(
            f,
            "  bits configured       {:.0} (M = -N ln P / ln^2 2)",
            bloom.requested_bits.ceil()
        )?;
        writeln!(
            f,
            "  bits actual           {} ({} sizing)",
            bloom.num_bits, self.sizing_mode
        )?;
        writeln!(
            f,
            "  bytes                 {} ({}) per partition",
            bloom.bytes(),
            human_bytes(bloom.bytes())
        )?;
        if let Some(count) = self.partitions {
            writeln!(
                f,
                "  partitions            {count}, at most {} in all",
                human_bytes(self.max_bytes())
            )?;
        }
        writeln!(
            f,
            "  k (hash functions)    {} (exact sizing: {}, reduced by {})",
            bloom.num_hashes,
            self.unreduced_hashes,
            self.unreduced_hashes.saturating_sub(bloom.num_hashes)
        )?;
        writeln!(f, "  exact FPP at N        {:.4e}", bloom.fpp_at_capacity)?;
        write!(
            f,
            "  hash bits             {HASH_BITS_USED} used, {} recommended (log2(N/P) = {:.1}); \
             caller-supplied hex hashes need at least {} digits",
            self.hash_bits_recommended, bloom.hash_bits_needed, self.hex_digits_required
        )?;
        if self.hash_bits_recommended > HASH_BITS_USED {
            write!(
                f,
                "\n  WARNING               a 64-bit hash cannot deliver P at N: \
                 distinct keys sharing a hash alone give about N/2^64"
            )?;
        }
        Ok(())
    }
}
