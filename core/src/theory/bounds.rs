//! Bounds that hold for any approximate-membership filter: the
//! information-theoretic bits per item, and the key-hash bits a target needs.

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
