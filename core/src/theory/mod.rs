//! The formulas filters are sized by and measured against, one file per
//! family: standard Bloom filters (`bloom.rs`), blocked Bloom filters
//! (`blocked.rs`), and the statistics the tests and the harness judge
//! measurements with (`stats.rs`).
//!
//! Everything here is a pure function of the parameters, cheap enough to call
//! while sizing a filter, bounded in time for any input, and shared by the
//! filter crates, their statistical tests and the harness. The exact formulas
//! return an error, never a wrong number, for parameters they cannot
//! evaluate exactly (see [`MAX_EXACT_HASHES`]).

mod blocked;
mod bloom;
mod scalable;
mod stats;

pub use blocked::{
    BlockFppTable, blocked_bloom_fpp, blocked_bloom_fpp_classic, blocked_bloom_fpp_with,
};
pub use bloom::{
    bloom_estimate_items, bloom_fpp_classic, bloom_fpp_exact, bloom_fpp_given_fill,
    bloom_optimal_bits, bloom_optimal_hashes,
};
pub use scalable::{
    scalable_bloom_fpp, scalable_bloom_fpp_bound, scalable_bloom_loads, scalable_layer_fpp,
};
pub use stats::{normal_quantile, queries_for, wilson_interval};

use crate::Error;

/// The most probes per key the exact formulas evaluate. Their cost grows
/// with the cube of k; no FPP a 64-bit key hash can deliver needs more than
/// 64 probes, so filters never come near it.
pub const MAX_EXACT_HASHES: u32 = 256;

/// The largest block the exact blocked formula evaluates, in bits (its
/// per-block occupancy chain holds one probability per bit).
pub const MAX_EXACT_BLOCK_BITS: u32 = 1 << 16;

/// The error of an exact formula asked for more probes than it evaluates.
pub(crate) fn check_exact_hashes(num_hashes: u32) -> Result<(), Error> {
    if num_hashes <= MAX_EXACT_HASHES {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "the exact FPP is evaluated for at most {MAX_EXACT_HASHES} probes per key, got {num_hashes}"
        )))
    }
}

/// Bits per item of the information-theoretic lower bound for any
/// approximate-membership structure at false-positive rate `fpp`: log2(1/p).
pub fn lower_bound_bits_per_item(fpp: f64) -> f64 {
    -fpp.log2()
}

/// Bits of key hash needed so that two distinct keys sharing a hash adds at
/// most `fpp` to the false-positive rate at `items` items: log2(items / fpp).
///
/// A filter fed 64-bit key hashes cannot do better than about `items / 2^64`.
pub fn hash_bits_needed(items: u64, fpp: f64) -> f64 {
    (items as f64 / fpp).log2()
}
