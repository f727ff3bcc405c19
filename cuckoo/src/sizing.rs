//! The sizing record of a cuckoo filter: what was chosen for a target and
//! why, as `params(n, p)` returns it and `filterlab recommend` will print it.

use std::fmt;

use filterlab_core::sizing::{HashBits, SizedFor, memory_summary};

use crate::config::Growth;

/// Why a sizing chose its fingerprint width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FingerprintChoice {
    /// The width, among 4..=32 bits, whose table meets the target with the
    /// fewest bits: each at the highest load up to 95% at which its
    /// a-priori FPP meets the target.
    FewestBits,
    /// Given explicitly by the caller.
    Explicit,
}

/// A cuckoo filter's size for a workload, computed without allocating:
/// what `CuckooFilter::params` and `CuckooBuilder::sizing` return.
///
/// # Examples
///
/// ```
/// use filterlab_cuckoo::CuckooFilter;
///
/// let sizing = CuckooFilter::params(1_000_000, 0.001)?;
/// assert_eq!(sizing.fingerprint_bits, 13);
/// assert!(sizing.fpp_at_capacity <= 0.001);
/// assert!(sizing.bits_per_item() < 13.7);
/// println!("{sizing}");
/// # Ok::<(), filterlab_cuckoo::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CuckooSizing {
    /// The items the first table is sized for (its capacity).
    pub expected_items: u64,
    /// The target FPP, if sized for one.
    pub target_fpp: Option<f64>,
    /// Bits per fingerprint.
    pub fingerprint_bits: u32,
    /// Why that width.
    pub fingerprint_choice: FingerprintChoice,
    /// Slots per bucket (4).
    pub slots_per_bucket: u32,
    /// Buckets of the first table: any positive number, not rounded to a
    /// power of two.
    pub buckets: u64,
    /// The load at capacity: expected items over slots (at most 95% when
    /// sized by FPP).
    pub load: f64,
    /// Bytes of the first table (bit-packed buckets and 16 bytes of padding).
    pub bytes: u64,
    /// The a-priori FPP at capacity, 1 − (1 − q)^(2·4·load), q = 1/(2^f − 1).
    pub fpp_at_capacity: f64,
    /// The FPP of a completely full table, 1 − (1 − q)^8: the bound at any load.
    pub fpp_full: f64,
    /// The growth policy, if the filter grows.
    pub growth: Option<Growth>,
    /// Bits of the 64-bit key hash the filter uses: log2(buckets) for the
    /// bucket, f for the fingerprint.
    pub hash_bits_used: f64,
    /// Bits of key hash the target needs: log2(n/p). Above 64 a 64-bit key
    /// hash limits the FPP (about n / 2^64) whatever the fingerprints.
    pub hash_bits_needed: f64,
}

impl CuckooSizing {
    /// Bits per expected item, padding included.
    pub fn bits_per_item(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.expected_items as f64
    }

    /// Whether a 64-bit key hash is too short for the target at this size.
    pub fn hash_limited(&self) -> bool {
        self.hash_bits().limited()
    }

    /// What this sizing says of the key hash: a cuckoo filter takes the
    /// bucket index and the fingerprint from it.
    fn hash_bits(&self) -> HashBits {
        HashBits::new(self.expected_items, self.hash_bits_needed)
            .using(self.hash_bits_used, "the bucket index and fingerprint")
    }
}

impl fmt::Display for CuckooSizing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "CuckooFilter sizing")?;
        SizedFor::new(self.expected_items, self.target_fpp).write_report_lines(f)?;
        let why = match self.fingerprint_choice {
            FingerprintChoice::FewestBits => "the width meeting the target with the fewest bits",
            FingerprintChoice::Explicit => "given explicitly",
        };
        writeln!(f, "  fingerprint bits    {}: {why}", self.fingerprint_bits)?;
        writeln!(
            f,
            "  buckets             {} of {} slots (not rounded to a power of two)",
            self.buckets, self.slots_per_bucket
        )?;
        writeln!(f, "  load at capacity    {:.2}%", self.load * 100.0)?;
        let memory = memory_summary(self.bytes, self.bits_per_item());
        writeln!(f, "  memory              {memory}")?;
        writeln!(
            f,
            "  FPP at capacity     {:.4e} (a table full to the last slot: {:.4e})",
            self.fpp_at_capacity, self.fpp_full
        )?;
        if let Some(growth) = self.growth {
            writeln!(
                f,
                "  growth              sub-tables ×{} each, up to {} tables; the FPP adds up over them",
                growth.expansion, growth.max_tables
            )?;
        }
        self.hash_bits().fmt(f)
    }
}
