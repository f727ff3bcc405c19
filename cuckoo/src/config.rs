//! What a cuckoo filter is configured with and the rules for each setting,
//! shared by the builder and the format reader.

use std::hash::{Hash, Hasher};

use filterlab_core::sizing::ensure;
use filterlab_core::{Error, ErrorKind, KeyHasher};

use crate::table::{MAX_FINGERPRINT_BITS, MIN_FINGERPRINT_BITS, SLOTS};

/// The load a filter sized by FPP is built for: 95% of its slots, which
/// four-slot buckets reach before the first refusal (Fan et al. 2014).
pub const LOAD_TARGET: f64 = 0.95;
/// Kicks an insert tries before it is refused, unless configured (as in the
/// reference implementation and RedisBloom's MAXITERATIONS).
pub const DEFAULT_MAX_KICKS: u32 = 500;
/// The most kicks an insert may be configured to try (RedisBloom's limit).
pub const MAX_KICKS: u32 = 65_535;
/// The largest expansion factor (RedisBloom's limit).
pub const MAX_EXPANSION: u32 = 32_768;
/// The tightening ratio r unless set: sub-table t of a growing filter takes
/// the share P·(1 − r)·r^t of the FPP budget P, with a fingerprint about
/// log2(1/r) = 0.23 bits longer per sub-table. Chosen by measurement (see
/// the crate README, "Growth").
pub const DEFAULT_TIGHTENING: f64 = 0.85;
/// Sub-tables a growing filter may have unless configured.
pub const DEFAULT_MAX_TABLES: u32 = 32;
/// The most sub-tables a growing filter may be configured to have.
pub const MAX_TABLES: u32 = 256;
/// The largest memory limit a filter accepts: 2^48 bytes (256 TiB).
pub const MAX_MEMORY_LIMIT: u64 = 1 << 48;

/// How a filter grows when its newest table holds its capacity (RedisBloom's
/// CF.RESERVE … EXPANSION, with the FPP kept): it adds a sub-table
/// `expansion` times the size of the previous one, whose fingerprints are
/// long enough for its share of the FPP budget, up to `max_tables` tables
/// and the memory limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Growth {
    /// Each new sub-table has this many times the buckets of the one before
    /// (1..=32768; 1 adds tables of the first table's size).
    pub expansion: u32,
    /// The most sub-tables, the first included (2..=256).
    pub max_tables: u32,
    /// The tightening ratio r in (0, 1): sub-table t takes the share
    /// P·(1 − r)·r^t of the FPP budget P.
    pub tightening: f64,
}

// A checked growth policy never holds a NaN, so equality is an equivalence.
impl Eq for Growth {}

impl Hash for Growth {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.expansion.hash(state);
        self.max_tables.hash(state);
        self.tightening.to_bits().hash(state);
    }
}

/// Everything that decides where a key's fingerprint goes and how the
/// filter behaves when full (the memory limit, a resource setting like a
/// reader's payload limit, is not part of it):
/// [`Persist::read_from_expecting`](filterlab_core::Persist::read_from_expecting)
/// only accepts a file whose configuration equals the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CuckooConfig {
    /// Buckets of the first table.
    pub buckets: u64,
    /// Bits per fingerprint (4..=32).
    pub fingerprint_bits: u32,
    /// Kicks an insert tries before it is refused (or the filter grows).
    pub max_kicks: u32,
    /// The growth policy; `None` for a filter that refuses when full.
    pub growth: Option<Growth>,
    /// The key hasher and its seed.
    pub hasher: KeyHasher,
}

/// Checks a fingerprint width: 4..=32.
pub(crate) fn check_fingerprint_bits(bits: u32) -> Result<(), Error> {
    let widths = MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS;
    ensure(widths.contains(&bits), || {
        format!(
            "fingerprints must have {MIN_FINGERPRINT_BITS} to {MAX_FINGERPRINT_BITS} bits, got {bits}"
        )
    })
}

/// Checks a kick limit: 1..=[`MAX_KICKS`].
pub(crate) fn check_max_kicks(kicks: u32) -> Result<(), Error> {
    ensure((1..=MAX_KICKS).contains(&kicks), || {
        format!("max kicks must be in 1..={MAX_KICKS}, got {kicks}")
    })
}

/// Checks a growth policy: expansion 1..=[`MAX_EXPANSION`], 2..=[`MAX_TABLES`]
/// tables, a tightening ratio in (0, 1).
pub(crate) fn check_growth(growth: Growth) -> Result<(), Error> {
    let Growth {
        expansion,
        max_tables,
        tightening,
    } = growth;
    ensure(tightening > 0.0 && tightening < 1.0, || {
        format!("the tightening ratio must be in (0, 1), got {tightening}")
    })?;
    ensure((1..=MAX_EXPANSION).contains(&expansion), || {
        format!("expansion must be in 1..={MAX_EXPANSION}, got {expansion}")
    })?;
    ensure((2..=MAX_TABLES).contains(&max_tables), || {
        format!("a growing filter may have 2..={MAX_TABLES} sub-tables, got {max_tables}")
    })
}

/// Checks a memory limit: at most [`MAX_MEMORY_LIMIT`].
pub(crate) fn check_memory_limit(bytes: u64) -> Result<(), Error> {
    ensure(bytes <= MAX_MEMORY_LIMIT, || {
        format!("the memory limit must be at most 2^48 bytes, got {bytes}")
    })
}

/// Checks that a table of `buckets` has a slot for each of the `items` it
/// is sized for (the builder's `expected_items` with `with_buckets`, a
/// file's capacity).
pub(crate) fn check_capacity(items: u64, buckets: u64) -> Result<(), Error> {
    let slots = slots_in(buckets);
    ensure(items <= slots, || {
        format!("{items} items cannot fit in {slots} slots ({buckets} buckets)")
    })
}

/// The slots of `buckets` buckets (saturating: a count beyond u64 is
/// refused elsewhere).
pub(crate) fn slots_in(buckets: u64) -> u64 {
    buckets.saturating_mul(u64::from(SLOTS))
}

/// The same error as an [`ErrorKind::InvalidHeader`]: a rule broken by a file.
#[allow(clippy::needless_pass_by_value)] // used as `map_err(in_header)`
pub(crate) fn in_header(err: Error) -> Error {
    Error::new(ErrorKind::InvalidHeader, err.detail().to_owned())
}
