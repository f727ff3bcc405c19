//! Integration tests of filterlab-cuckoo: the conformance suite and a
//! multiset property test (`contract`), behaviour past capacity and the
//! load reached (`capacity`), the FPP against theory and the space against
//! Bloom filters (`accuracy`), and parameters and the format (`format`).

mod accuracy;
mod capacity;
mod contract;
mod format;

use filterlab_core::Membership;
use filterlab_core::keys::insert_key;
use filterlab_cuckoo::{CuckooFilter, Filter};

/// A filter of `buckets` buckets and `bits`-bit fingerprints.
pub(crate) fn explicit(buckets: u64, bits: u32, seed: u64) -> CuckooFilter {
    CuckooFilter::with_buckets(buckets)
        .fingerprint_bits(bits)
        .seed(seed)
        .build()
        .unwrap()
}

/// Inserts the `seed`-th stream of keys until the first refusal (or
/// `limit` keys); returns how many were accepted.
pub(crate) fn fill_until_full(filter: &mut CuckooFilter, seed: u64, limit: u64) -> u64 {
    let hasher = *filter.hasher();
    for i in 0..limit {
        if filter
            .insert_hash(hasher.hash(&insert_key(seed, i)))
            .is_err()
        {
            return i;
        }
    }
    limit
}
