//! The shared conformance suite, as a multiset, for both layouts and every
//! counter width: no false negatives after inserts, removals, merges, clear
//! and round trips; `len` semantics; typed errors for every damaged file.

use filterlab_core::testing::Conformance;
use filterlab_counting_bloom::{Blocked, CountingBloom, CountingBloomBuilder, Layout, Standard};

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

fn conformance<L: Layout, const BITS: u32>(name: &'static str) {
    Conformance::new(name, || sized::<L, BITS>(400, 0.01, 1))
        .multiset()
        .with_variant(|| sized::<L, BITS>(400, 0.01, 2))
        .check();
    Conformance::new(name, || sized::<L, BITS>(400, 0.01, 1))
        .multiset()
        .check_removable();
    Conformance::new(name, || sized::<L, BITS>(400, 0.01, 1))
        .multiset()
        .with_variant(|| sized::<L, BITS>(400, 0.001, 1))
        .check_mergeable();
}

#[test]
fn standard_4_bit() {
    conformance::<Standard, 4>("CountingBloomFilter<4>");
}

#[test]
fn standard_8_bit() {
    conformance::<Standard, 8>("CountingBloomFilter<8>");
}

#[test]
fn standard_16_bit() {
    conformance::<Standard, 16>("CountingBloomFilter<16>");
}

#[test]
fn blocked_4_bit() {
    conformance::<Blocked, 4>("BlockedCountingBloomFilter<4>");
}

#[test]
fn blocked_8_bit() {
    conformance::<Blocked, 8>("BlockedCountingBloomFilter<8>");
}

#[test]
fn blocked_16_bit() {
    conformance::<Blocked, 16>("BlockedCountingBloomFilter<16>");
}

/// 1000 counters: the last block is partly outside the array; many probes.
#[test]
fn explicit_sizes() {
    let make = |counters: u64| {
        move || {
            CountingBloomBuilder::<Standard, 4>::with_counters(counters)
                .hashes(13)
                .seed(9)
                .build()
                .unwrap()
        }
    };
    Conformance::new("CountingBloomFilter(1000 counters)", make(1000))
        .multiset()
        .with_variant(make(1001))
        .check();
    Conformance::new("CountingBloomFilter(1000 counters)", make(1000))
        .multiset()
        .with_variant(make(1001))
        .check_mergeable();
}
