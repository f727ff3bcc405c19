//! Choosing (bits, hashes) for a target: validation, the search for the
//! smallest array that meets p under a filter's exact FPP, and the sizing
//! report `filterlab recommend` prints.

use std::f64::consts::LN_2;
use std::fmt;

use filterlab_core::theory::{bloom_optimal_bits, hash_bits_needed};
use filterlab_core::{Error, ErrorKind};

/// The most hash probes a filter accepts. No FPP a 64-bit key hash can
/// deliver needs more, and each probe is a memory access.
pub const MAX_HASHES: u32 = 64;

/// Checks an FPP target: finite and strictly inside (0, 1).
pub(crate) fn check_fpp(fpp: f64) -> Result<(), Error> {
    if fpp > 0.0 && fpp < 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "the false-positive probability must be in (0, 1), got {fpp}"
        )))
    }
}

pub(crate) fn check_items(items: u64) -> Result<(), Error> {
    if items == 0 {
        Err(Error::invalid("expected items must be at least 1"))
    } else {
        Ok(())
    }
}

pub(crate) fn check_hashes(hashes: u32) -> Result<(), Error> {
    if (1..=MAX_HASHES).contains(&hashes) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "the number of hashes must be in 1..={MAX_HASHES}, got {hashes}"
        )))
    }
}

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
/// [`BloomFilter::params`](crate::BloomFilter::params) returns and what
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

/// Bytes in a human unit (binary prefixes).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
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

/// A sizing problem: the exact FPP function of one filter family and the
/// granularity of its bit array.
pub(crate) struct SizingProblem<'a> {
    pub(crate) items: u64,
    pub(crate) fpp: f64,
    /// Bit arrays are whole multiples of this many bits.
    pub(crate) unit_bits: u64,
    pub(crate) max_bits: u64,
    /// The exact FPP of (bits, hashes) at `items`.
    pub(crate) fpp_of: &'a dyn Fn(u64, u32) -> f64,
    /// Where to start looking for the best k for a number of bits; `None`
    /// for the standard filter's optimum (m/n)·ln 2.
    pub(crate) hashes_near: Option<&'a dyn Fn(u64) -> u32>,
}

impl SizingProblem<'_> {
    fn too_large(&self, bits: f64) -> Error {
        Error::new(
            ErrorKind::TooLarge,
            format!(
                "{} items at FPP {:e} need about {} of bits, over the memory limit of {}",
                self.items,
                self.fpp,
                human_bytes((bits / 8.0).min(u64::MAX as f64) as u64),
                human_bytes(self.max_bits / 8)
            ),
        )
    }

    /// The k near the optimum for `bits` with the lowest exact FPP.
    ///
    /// Searches ± 2 around the starting point ([`hashes_near`](Self::hashes_near),
    /// by default (m/n)·ln 2) and follows the slope beyond that window when
    /// the best k lies on its edge.
    pub(crate) fn best_hashes(&self, bits: u64) -> (u32, f64) {
        let center = if let Some(near) = self.hashes_near {
            near(bits).clamp(1, MAX_HASHES)
        } else {
            let optimum = bits as f64 / self.items as f64 * LN_2;
            optimum.round().clamp(1.0, f64::from(MAX_HASHES)) as u32
        };
        let low = center.saturating_sub(2).max(1);
        let high = (center + 2).min(MAX_HASHES);
        let mut best = (low..=high).map(|k| (k, (self.fpp_of)(bits, k))).fold(
            (center, f64::INFINITY),
            |best, candidate| {
                if candidate.1 < best.1 {
                    candidate
                } else {
                    best
                }
            },
        );
        let beyond: Vec<u32> = if best.0 == low {
            (1..low).rev().collect()
        } else if best.0 == high {
            (high + 1..=MAX_HASHES).collect()
        } else {
            Vec::new()
        };
        for k in beyond {
            let fpp = (self.fpp_of)(bits, k);
            if fpp >= best.1 {
                break;
            }
            best = (k, fpp);
        }
        best
    }

    /// The smallest whole-unit array (and its best k) whose exact FPP meets the target.
    pub(crate) fn smallest(&self) -> Result<(u64, u32, f64), Error> {
        let optimum = bloom_optimal_bits(self.items, self.fpp);
        if optimum.is_nan() || optimum >= self.max_bits as f64 {
            return Err(self.too_large(optimum));
        }
        let units = |bits: f64| (bits / self.unit_bits as f64).ceil().max(1.0) as u64;
        let meets = |unit_count: u64| {
            let (k, fpp) = self.best_hashes(unit_count * self.unit_bits);
            (fpp <= self.fpp).then_some((k, fpp))
        };
        let max_units = self.max_bits / self.unit_bits;
        let mut low = units(optimum).min(max_units);
        if let Some((k, fpp)) = meets(low) {
            return Ok((low * self.unit_bits, k, fpp));
        }
        // Grow geometrically until the target is met, then bisect.
        let mut high = low;
        let found = loop {
            if high == max_units {
                return Err(self.too_large(high as f64 * self.unit_bits as f64 * 1.01));
            }
            low = high;
            high = (high + high / 32 + 1).min(max_units);
            if let Some(found) = meets(high) {
                break found;
            }
        };
        let (mut best_units, mut best) = (high, found);
        let mut lo = low; // does not meet
        while best_units - lo > 1 {
            let mid = lo + (best_units - lo) / 2;
            match meets(mid) {
                Some(found) => (best_units, best) = (mid, found),
                None => lo = mid,
            }
        }
        Ok((best_units * self.unit_bits, best.0, best.1))
    }

    /// The smallest k meeting the target with `bits` (power-of-two sizing).
    pub(crate) fn smallest_hashes(&self, bits: u64) -> (u32, f64) {
        (1..=MAX_HASHES)
            .map(|k| (k, (self.fpp_of)(bits, k)))
            .find(|&(_, fpp)| fpp <= self.fpp)
            .unwrap_or_else(|| self.best_hashes(bits))
    }

    pub(crate) fn hash_bits_needed(&self) -> f64 {
        hash_bits_needed(self.items, self.fpp)
    }
}
