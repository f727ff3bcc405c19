//! The sizing record of a Bloom filter: what was chosen for a target and
//! why, as `params(n, p)` returns it and `filterlab recommend` prints it.
//! (The parameter rules and the size search itself are core's
//! [`filterlab_core::sizing`].)

use std::fmt;

use filterlab_core::sizing::{HashBits, HashChoice, SizedFor, memory_summary};

use crate::kernel::BlockProbes;

/// A filter's size for a workload, computed without allocating: what
/// `BloomFilter::params` and the builders' `sizing` return and what
/// `filterlab recommend` prints.
///
/// # Examples
///
/// ```
/// use filterlab_bloom::BloomFilter;
///
/// let sizing = BloomFilter::params(1_000_000, 0.01)?;
/// assert_eq!(sizing.num_hashes, 7);
/// assert!(sizing.fpp_at_capacity <= 0.01);
/// assert!(sizing.bits_per_item() < 9.7);
/// println!("{sizing}");
/// # Ok::<(), filterlab_bloom::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BloomSizing {
    /// Which filter this sizes, e.g. "BloomFilter".
    pub filter: &'static str,
    /// The items the filter is sized for.
    pub expected_items: u64,
    /// The target FPP, if sized for one.
    pub target_fpp: Option<f64>,
    /// Bits asked for: the textbook optimum −n ln p / ln²2, or the explicit size.
    pub requested_bits: f64,
    /// Bits actually allocated.
    pub num_bits: u64,
    /// Hash probes per key.
    pub num_hashes: u32,
    /// Why that many probes.
    pub hash_choice: HashChoice,
    /// Whether the array was rounded up to a power of two.
    pub power_of_two: bool,
    /// The array is a whole number of these: 64-bit words for
    /// `BloomFilter`, 512-bit blocks for `BlockedBloomFilter`.
    pub unit_bits: u64,
    /// The filter's exact FPP after `expected_items` distinct inserts.
    pub fpp_at_capacity: f64,
    /// The textbook (independent-bits) FPP at the same load, for comparison.
    pub fpp_classic: f64,
    /// Bits of key hash the target needs at this size: log2(n/p). Above 64 a
    /// 64-bit key hash limits the FPP (about n / 2^64) no matter the array.
    pub hash_bits_needed: f64,
    /// Where a `BlockedBloomFilter` places a key's bits in its block; `None`
    /// for the other filters.
    pub block_probes: Option<BlockProbes>,
}

impl BloomSizing {
    /// Bytes of bit array.
    pub fn bytes(&self) -> u64 {
        self.num_bits.div_ceil(64) * 8
    }

    /// Bits per expected item.
    pub fn bits_per_item(&self) -> f64 {
        self.num_bits as f64 / self.expected_items as f64
    }

    /// Whether a 64-bit key hash is too short for the target at this size.
    pub fn hash_limited(&self) -> bool {
        HashBits::new(self.expected_items, self.hash_bits_needed).limited()
    }
}

impl fmt::Display for BloomSizing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} sizing", self.filter)?;
        SizedFor::new(self.expected_items, self.target_fpp).write_report_lines(f)?;
        writeln!(f, "  bits requested      {:.0}", self.requested_bits.ceil())?;
        let rounding = match (self.target_fpp, self.power_of_two, self.unit_bits) {
            (None, _, _) => String::new(),
            (Some(_), true, _) => " (rounded up to a power of two)".to_owned(),
            (Some(_), false, 64) => {
                " (smallest whole-word size meeting the target exactly)".to_owned()
            }
            (Some(_), false, unit) => {
                format!(" (smallest number of {unit}-bit blocks meeting the target exactly)")
            }
        };
        writeln!(f, "  bits allocated      {}{rounding}", self.num_bits)?;
        let memory = memory_summary(self.bytes(), self.bits_per_item());
        writeln!(f, "  memory              {memory}")?;
        writeln!(
            f,
            "  hashes (k)          {}: {}",
            self.num_hashes, self.hash_choice
        )?;
        writeln!(
            f,
            "  FPP at capacity     {:.4e} exact (classic formula: {:.4e})",
            self.fpp_at_capacity, self.fpp_classic
        )?;
        HashBits::new(self.expected_items, self.hash_bits_needed).fmt(f)
    }
}
