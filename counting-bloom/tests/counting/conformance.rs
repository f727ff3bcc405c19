//! The shared conformance suite, as a multiset, for both layouts and every
//! counter width: no false negatives after inserts, removals, merges, clear
//! and round trips; `len` semantics; typed errors for every damaged file.

use filterlab_core::keys::insert_key;
use filterlab_core::testing::Conformance;
use filterlab_counting_bloom::{
    Blocked, CountingBloom, CountingBloomBuilder, CountingBloomFilter, Layout, Standard,
};

/// A filter sized for `items` keys at `fpp`, seeded with `seed`.
pub(crate) fn sized<L: Layout, const BITS: u32>(
    items: u64,
    fpp: f64,
    seed: u64,
) -> CountingBloom<L, BITS> {
    CountingBloomBuilder::<L, BITS>::with_fpp(fpp)
        .expected_items(items)
        .seed(seed)
        .build()
        .unwrap()
}

/// A 4-bit standard filter sized for `items` keys at 1e-2 holding the first
/// `items` keys of the `seed`-th stream, and those keys.
pub(crate) fn filled(items: u64, seed: u64) -> (CountingBloomFilter, Vec<u64>) {
    let mut filter = sized::<Standard, 4>(items, 0.01, seed);
    let keys: Vec<u64> = (0..items).map(|i| insert_key(seed, i)).collect();
    filter.extend(&keys);
    (filter, keys)
}

fn conformance<L: Layout, const BITS: u32>(name: &'static str) {
    Conformance::varying(name, |seed| sized::<L, BITS>(400, 0.01, seed), 1, 2)
        .multiset()
        .check();
    Conformance::new(name, || sized::<L, BITS>(400, 0.01, 1))
        .multiset()
        .check_removable();
    // Small filters, so that sequences overfill them: false positives,
    // saturated counters, intersections of crowded blocks. (Sized once:
    // the blocked layout's exact sizing costs more than a sequence.)
    let small = sized::<L, BITS>(100, 0.01, 1);
    Conformance::new(name, move || small.clone())
        .multiset()
        .removable()
        .mergeable()
        .check_states();
    Conformance::varying(name, |fpp| sized::<L, BITS>(400, fpp, 1), 0.01, 0.001)
        .multiset()
        .check_mergeable();
}

/// One test per layout and width, each running the three suites.
macro_rules! conformance_tests {
    ($($test:ident: $layout:ident, $bits:literal, $name:literal;)+) => {$(
        #[test]
        fn $test() {
            conformance::<$layout, $bits>($name);
        }
    )+};
}

conformance_tests! {
    standard_4_bit: Standard, 4, "CountingBloomFilter<4>";
    standard_8_bit: Standard, 8, "CountingBloomFilter<8>";
    standard_16_bit: Standard, 16, "CountingBloomFilter<16>";
    blocked_4_bit: Blocked, 4, "BlockedCountingBloomFilter<4>";
    blocked_8_bit: Blocked, 8, "BlockedCountingBloomFilter<8>";
    blocked_16_bit: Blocked, 16, "BlockedCountingBloomFilter<16>";
}

/// 1000 counters: the last block is partly outside the array; many probes.
#[test]
fn explicit_sizes() {
    let make = |counters| {
        CountingBloomBuilder::<Standard, 4>::with_counters(counters)
            .hashes(13)
            .seed(9)
            .build()
            .unwrap()
    };
    let suite =
        Conformance::varying("CountingBloomFilter(1000 counters)", make, 1000, 1001).multiset();
    suite.check();
    suite.check_mergeable();
}
