//! Seeded streams of distinct `u64` keys: one to insert, one that never
//! meets it, for FPP measurements. Used by the tests, the benches and the
//! harness (which does not need the `testing` feature for them).

use crate::mix64;

/// The `i`-th key of a seeded stream of distinct keys to insert.
///
/// [`query_key`] never returns one of these, so the two streams give
/// inserted keys and never-inserted probe keys for FPP measurements.
///
/// # Examples
///
/// ```
/// use filterlab_core::keys::{insert_key, query_key};
///
/// assert_ne!(insert_key(7, 0), insert_key(7, 1));
/// assert_ne!(insert_key(7, 0), query_key(7, 0));
/// ```
pub fn insert_key(seed: u64, i: u64) -> u64 {
    mix64(seed ^ mix64(i << 1))
}

/// The `i`-th key of a seeded stream of distinct keys that [`insert_key`]
/// never produces for the same seed.
pub fn query_key(seed: u64, i: u64) -> u64 {
    mix64(seed ^ mix64((i << 1) | 1))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn key_streams_are_disjoint_and_distinct() {
        let inserted: HashSet<u64> = (0..10_000).map(|i| insert_key(5, i)).collect();
        assert_eq!(inserted.len(), 10_000);
        assert!((0..10_000).all(|i| !inserted.contains(&query_key(5, i))));
        assert_ne!(insert_key(5, 0), insert_key(6, 0));
    }
}
