//! The sizing record of a counting Bloom filter: what was chosen for a
//! target and why, and what the counters risk, as `params(n, p)` returns it
//! and a report prints it.

use std::fmt;

use filterlab_core::sizing::{HashBits, HashChoice, SizedFor, human_bytes};

use crate::counters::BLOCK_BYTES;

/// A counting filter's size for a workload, computed without allocating:
/// what `CountingBloomFilter::params` and `CountingBloomBuilder::sizing`
/// return.
///
/// # Examples
///
/// ```
/// use filterlab_counting_bloom::CountingBloomFilter;
///
/// let sizing = CountingBloomFilter::params(1_000_000, 0.01)?;
/// assert_eq!(sizing.num_hashes, 7);
/// assert!(sizing.fpp_at_capacity <= 0.01);
/// // Four bits per counter: four times the equivalent Bloom filter.
/// assert_eq!(sizing.bits_per_item(), 4.0 * sizing.bloom_bits_per_item());
/// assert!(sizing.overflow_probability < 1e-7);
/// println!("{sizing}");
/// # Ok::<(), filterlab_counting_bloom::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CountingSizing {
    /// Which filter this sizes: "CountingBloomFilter" or "BlockedCountingBloomFilter".
    pub filter: &'static str,
    /// The items the filter is sized for (its capacity).
    pub expected_items: u64,
    /// The FPP target, or `None` for a filter of an explicit size.
    pub target_fpp: Option<f64>,
    /// Counters asked for: the textbook optimum −n ln p / ln²2, or the explicit number.
    pub requested_counters: f64,
    /// Counters allocated.
    pub num_counters: u64,
    /// Bits per counter: 4, 8 or 16.
    pub counter_bits: u32,
    /// Counters per 64-byte block for the blocked layout (each key's
    /// counters lie in one block); `None` for the standard layout.
    pub block_counters: Option<u32>,
    /// Counters probed per key.
    pub num_hashes: u32,
    /// Why that many probes.
    pub hash_choice: HashChoice,
    /// The exact FPP after `expected_items` distinct inserts: that of the
    /// Bloom filter (standard or blocked) with the same counters and k.
    pub fpp_at_capacity: f64,
    /// An upper bound on the probability that some counter saturates
    /// (reaches 2^w − 1 and sticks) by `expected_items` distinct inserts: m
    /// times the exact probability for one counter.
    pub overflow_probability: f64,
    /// Fan et al.'s classic bound on some counter reaching 2^w, for
    /// comparison (standard layout only: it assumes uniform counters).
    pub overflow_bound_fan: Option<f64>,
    /// Bits of key hash the target needs: log2(n/p). Above 64 a 64-bit key
    /// hash limits the FPP (about n / 2^64) no matter the array.
    pub hash_bits_needed: f64,
}

impl CountingSizing {
    /// The items and FPP target as the filter's header records them.
    pub(crate) fn sized_for(&self) -> SizedFor {
        SizedFor::new(self.expected_items, self.target_fpp)
    }

    /// Bytes of counters: whole 64-byte blocks.
    pub fn bytes(&self) -> u64 {
        let per_block = u64::from(512 / self.counter_bits);
        self.num_counters.div_ceil(per_block) * BLOCK_BYTES as u64
    }

    /// Bits of memory per expected item.
    pub fn bits_per_item(&self) -> f64 {
        // In floating point: from 2^61 bytes on, the bits do not fit a `u64`.
        self.bytes() as f64 * 8.0 / self.expected_items as f64
    }

    /// Bits per item of the Bloom filter with one bit per counter (what
    /// `to_bloom` ships): the counting filter costs `counter_bits` times this.
    pub fn bloom_bits_per_item(&self) -> f64 {
        self.num_counters as f64 / self.expected_items as f64
    }

    /// Whether a 64-bit key hash is too short for the target at this size.
    pub fn hash_limited(&self) -> bool {
        HashBits::new(self.expected_items, self.hash_bits_needed).limited()
    }
}

impl fmt::Display for CountingSizing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} sizing ({}-bit counters)",
            self.filter, self.counter_bits
        )?;
        self.sized_for().write_report_lines(f)?;
        writeln!(
            f,
            "  counters requested  {:.0}",
            self.requested_counters.ceil()
        )?;
        let unit = 512 / self.counter_bits;
        let rounding = match (self.target_fpp, self.block_counters) {
            (None, None) => String::new(),
            (None, Some(per_block)) => format!(" (whole blocks of {per_block})"),
            (Some(_), None) => format!(
                " (smallest number of 64-byte lines, {unit} counters each, meeting the target exactly)"
            ),
            (Some(_), Some(per_block)) => format!(
                " (smallest number of {per_block}-counter blocks meeting the target exactly)"
            ),
        };
        writeln!(f, "  counters allocated  {}{rounding}", self.num_counters)?;
        writeln!(
            f,
            "  memory              {} ({:.2} bits per item; {:.2} for the equivalent Bloom filter)",
            human_bytes(self.bytes()),
            self.bits_per_item(),
            self.bloom_bits_per_item()
        )?;
        writeln!(
            f,
            "  hashes (k)          {}: {}",
            self.num_hashes, self.hash_choice
        )?;
        writeln!(
            f,
            "  FPP at capacity     {:.4e} exact (the {}Bloom filter's with these counters as bits)",
            self.fpp_at_capacity,
            if self.block_counters.is_some() {
                "blocked "
            } else {
                ""
            }
        )?;
        let overflow = if self.overflow_probability > 0.0 {
            format!("<= {:.2e}", self.overflow_probability)
        } else {
            "< 1e-300".to_owned()
        };
        write!(
            f,
            "  counter overflow    P(a counter reaches {} by capacity) {overflow} (exact tail, union bound)",
            (1u64 << self.counter_bits) - 1,
        )?;
        if let Some(fan) = self.overflow_bound_fan {
            write!(
                f,
                "; Fan et al.'s bound for {}: {fan:.2e}",
                1u64 << self.counter_bits
            )?;
        }
        writeln!(f)?;
        HashBits::new(self.expected_items, self.hash_bits_needed).fmt(f)
    }
}
