//! The sizing record of a Bloom filter: what was chosen for a target and
//! why, as `params(n, p)` returns it and `filterlab recommend` prints it.
//! (The parameter rules and the size search itself are core's
//! [`filterlab_core::sizing`].)

use std::fmt;

use filterlab_core::sizing::human_bytes;

/// Why a sizing chose its number of hashes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum HashChoice {
    /// The integer near the real optimum (m/n)·ln 2 with the lowest exact FPP.
    Optimal {
        /// The real-valued optimum.
        optimum: f64,
    },
    /// The smallest k that still meets the target with the rounded-up array
    /// (power-of-two sizing): fewer probes, same guarantee.
    SmallestMeetingTarget {
        /// The real-valued optimum for the rounded array.
        optimum: f64,
    },
    /// The k with the lowest exact FPP, searched from `approximate`, the
    /// best k under the blocked filter's independent-bits approximation
    /// (Putze et al.); well below (m/n)·ln 2 at many bits per item.
    Blocked {
        /// The best k of the approximation.
        approximate: u32,
    },
    /// Given explicitly by the caller.
    Explicit,
}

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
        self.hash_bits_needed > 64.0
    }
}

impl fmt::Display for BloomSizing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} sizing", self.filter)?;
        writeln!(f, "  expected items      {}", self.expected_items)?;
        match self.target_fpp {
            Some(p) => writeln!(f, "  target FPP          {p:.3e}")?,
            None => writeln!(f, "  target FPP          (none: explicit size)")?,
        }
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
        writeln!(
            f,
            "  memory              {} ({:.2} bits per item)",
            human_bytes(self.bytes()),
            self.bits_per_item()
        )?;
        let why = match self.hash_choice {
            HashChoice::Optimal { optimum } => {
                format!("nearest integer to (m/n)·ln 2 = {optimum:.2} with the lower exact FPP")
            }
            HashChoice::SmallestMeetingTarget { optimum } => format!(
                "smallest k meeting the target with this array (optimum {optimum:.2}); fewer probes per lookup"
            ),
            HashChoice::Blocked { approximate } => format!(
                "lowest exact FPP for blocks, searched from the approximation's best k = {approximate}"
            ),
            HashChoice::Explicit => "given explicitly".to_owned(),
        };
        writeln!(f, "  hashes (k)          {}: {why}", self.num_hashes)?;
        writeln!(
            f,
            "  FPP at capacity     {:.4e} exact (classic formula: {:.4e})",
            self.fpp_at_capacity, self.fpp_classic
        )?;
        write!(
            f,
            "  hash bits           64-bit key hash; the target needs {:.1}",
            self.hash_bits_needed
        )?;
        if self.hash_limited() {
            write!(
                f,
                "\n  WARNING             a 64-bit key hash cannot deliver this FPP at this many items: \
                 distinct keys sharing a hash alone give about n/2^64 = {:.1e}",
                self.expected_items as f64 / 2f64.powi(64)
            )?;
        }
        Ok(())
    }
}
