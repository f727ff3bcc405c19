//! The sizing record of a cuckoo filter: what was chosen for a target and
//! why, as `params(n, p)` returns it and `filterlab recommend` will print it.

use std::fmt;

use filterlab_core::sizing::{HashBits, SizedFor, memory_summary};
use filterlab_core::theory::cuckoo_grown_fpp;

use crate::config::Growth;
use crate::growth::{Schedule, Shape};

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
    /// The a-priori FPP at capacity, 1 − (1 − q)^(2·4·load), q = 1/(2^f − 1)
    /// (of the first table: a growing filter's first table is sized for
    /// P·(1 − r), its share of the target P).
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

    /// The a-priori FPP after `items` inserts: of the one table when the
    /// filter does not grow (its load capped at 1); of the sub-tables a
    /// growing filter has by then, each filled to its capacity in turn,
    /// compounded (what `theoretical_fpp(items)` of the filter says before
    /// it holds anything). At most the target, for a growing filter sized
    /// for one, below its caps.
    ///
    /// # Examples
    ///
    /// ```
    /// use filterlab_cuckoo::CuckooFilter;
    ///
    /// let sizing = CuckooFilter::with_fpp(0.01).expected_items(1000).expansion(2).sizing()?;
    /// assert!(sizing.fpp_after(1000) <= 0.0015);
    /// assert!(sizing.fpp_after(1_000_000) <= 0.01);
    /// # Ok::<(), filterlab_cuckoo::Error>(())
    /// ```
    pub fn fpp_after(&self, items: u64) -> f64 {
        let first = self.first_shape();
        let added = self.growth.into_iter().flat_map(|growth| {
            Schedule::new(growth, first, self.target_fpp).shapes_from(1, first.bits)
        });
        cuckoo_grown_fpp(
            items,
            std::iter::once(first).chain(added).map(Shape::theory),
        )
    }

    /// The first table's shape.
    fn first_shape(&self) -> Shape {
        Shape {
            bits: self.fingerprint_bits,
            buckets: self.buckets,
            capacity: self.expected_items,
        }
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
            let schedule = Schedule::new(growth, self.first_shape(), self.target_fpp);
            writeln!(
                f,
                "  growth              sub-tables ×{} each, up to {}; sub-table t's FPP share \
                 {:.3e}·{}^t, fingerprints {:.2} bits longer each: at most {:.3e} compounded",
                growth.expansion,
                growth.max_tables,
                schedule.budget(0),
                growth.tightening,
                (1.0 / growth.tightening).log2(),
                schedule.bound()
            )?;
        }
        self.hash_bits().fmt(f)
    }
}
