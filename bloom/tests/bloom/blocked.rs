//! `BlockedBloomFilter`: the shared conformance suite and FPP against the
//! exact blocked theory for every kernel this CPU runs, the in-block probes
//! against the exact Bloom formula, sizing, bad input and the on-disk format.

use filterlab_bloom::{
    BLOCK_BITS, BlockedBloomBuilder, BlockedBloomFilter, BloomFilter, ErrorKind, Kernel,
};
use filterlab_core::Membership;
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::testing::{
    Conformance, check_fpp_against_theory, fill, mean_fpp_over_instances,
};
use filterlab_core::theory::{blocked_bloom_fpp, bloom_fpp_exact, bloom_optimal_bits};

use crate::{check_golden, check_merges_keep_len_within_the_bits_set, check_union_len, kernels};

block_layout_tests!(BlockedBloomFilter, BlockedBloomBuilder, fpp_seeds: 3000);

/// A filter of `bits` bits (rounded up to whole blocks) with many probes per
/// key.
fn explicit(bits: u64) -> BlockedBloomFilter {
    BlockedBloomFilter::with_bits(bits)
        .hashes(13)
        .seed(9)
        .build()
        .unwrap()
}

#[test]
fn conformance_explicit_sizes() {
    // 1000 bits round up to two blocks.
    Conformance::varying("BlockedBloomFilter(1000 bits)", explicit, 1000, 1025).check_mergeable();
}

/// 10 bits per key, the peers' usual setting: the FPP is below 1% (RocksDB's
/// FastLocalBloom reports 0.957%; sbbf's split blocks 1.27%).
#[test]
fn ten_bits_per_key_stays_below_one_percent() {
    let items = 100_000;
    let mut filter = BlockedBloomFilter::with_bits(10 * items)
        .expected_items(items)
        .seed(10)
        .build()
        .unwrap();
    assert_eq!(filter.num_hashes(), 6);
    assert!(filter.theoretical_fpp(items).unwrap() < 0.0097);
    check_fpp_against_theory(&mut filter, items, Some(0.01), 10);
}

/// A filter of one block is a 512-bit standard Bloom filter: over many
/// instances its mean FPP must match the exact Bloom formula, at high k and
/// loads where correlated probes would show (plain double hashing is 22% to
/// 49% off at such sizes). A few blocks add the block choice.
#[test]
fn probes_inside_a_block_behave_as_independent() {
    // (blocks, k, items, instances)
    #[rustfmt::skip]
    let cases: [(u64, u32, u64, u64); 5] = [
        (1, 6, 51, 100_000), (1, 12, 30, 200_000), (1, 16, 20, 300_000), (1, 24, 16, 300_000),
        (4, 8, 180, 50_000),
    ];
    for (blocks, hashes, items, instances) in cases {
        for kernel in kernels() {
            let mut filter = BlockedBloomFilter::with_bits(blocks * u64::from(BLOCK_BITS))
                .hashes(hashes)
                .kernel(kernel)
                .build()
                .unwrap();
            let (mean, half_width) =
                mean_fpp_over_instances(&mut filter, 0xb10c_0000, items, instances);
            let exact = blocked_bloom_fpp(blocks, BLOCK_BITS, hashes, items).unwrap();
            let context = format!(
                "blocks={blocks} k={hashes} n={items} {kernel:?}: simulated {mean:.5} ± {half_width:.5} \
                 ({:.2}%), exact {exact:.5}",
                100.0 * half_width / exact
            );
            println!("{context}");
            assert!((mean - exact).abs() <= half_width, "{context}");
            if blocks == 1 {
                let bloom = bloom_fpp_exact(u64::from(BLOCK_BITS), hashes, items).unwrap();
                assert!((exact / bloom - 1.0).abs() < 1e-9);
            }
        }
    }
}

/// Every kernel answers exactly as the scalar one, for members and
/// non-members, one at a time and in batches.
#[test]
fn kernels_agree() {
    for hashes in [1, 3, 6, 8, 9, 16, 17, 64] {
        let mut filter = BlockedBloomFilter::with_bits(64 * u64::from(BLOCK_BITS))
            .hashes(hashes)
            .seed(u64::from(hashes))
            .kernel(Kernel::Scalar)
            .build()
            .unwrap();
        // Filled so that about a fifth of non-members test positive: the
        // fill f with f^k = 0.2, reached after ln(1 − f)/ln(1 − 1/512)
        // probes per block.
        let fill_ratio = 0.2f64.powf(1.0 / f64::from(hashes));
        let probes_per_block = (1.0 - fill_ratio).ln() / (-1.0 / 512.0f64).ln_1p();
        fill(
            &mut filter,
            5,
            (64.0 * probes_per_block / f64::from(hashes)) as u64,
        );
        let probes: Vec<u64> = (0..20_000).map(|i| query_key(5, i)).collect();
        let reference: Vec<bool> = probes.iter().map(|key| filter.contains(key)).collect();
        let positives = reference.iter().filter(|&&hit| hit).count();
        assert!(
            positives > 2000 && positives < 8000,
            "k={hashes}: {positives}"
        );
        for kernel in kernels() {
            filter.set_kernel(kernel).unwrap();
            assert_eq!(filter.kernel(), kernel);
            let single: Vec<bool> = probes.iter().map(|key| filter.contains(key)).collect();
            assert_eq!(single, reference, "k={hashes} {kernel:?}");
            assert_eq!(
                filter.contains_many(&probes),
                reference,
                "k={hashes} {kernel:?}"
            );
        }
    }
}

#[test]
fn sizing_pays_a_few_percent_for_blocking() {
    let sizing = BlockedBloomFilter::params(1_000_000, 0.01).unwrap();
    assert!(sizing.fpp_at_capacity <= 0.01);
    assert_eq!(sizing.num_bits % u64::from(BLOCK_BITS), 0);
    // DESIGN: about +3.5% bits over the standard optimum at 10 bits per item.
    let overhead = sizing.num_bits as f64 / bloom_optimal_bits(1_000_000, 0.01) - 1.0;
    assert!((0.02..0.06).contains(&overhead), "{overhead} {sizing:?}");
    // The next smaller size would not meet the target with any k.
    let smaller = sizing.num_bits / u64::from(BLOCK_BITS) - 1;
    assert!((1..=20).all(|k| blocked_bloom_fpp(smaller, BLOCK_BITS, k, 1_000_000).unwrap() > 0.01));
    // At 20 bits per item blocking costs more, and fewer probes than the
    // standard optimum (m/n)·ln 2 are best.
    let tight = BlockedBloomFilter::params(1_000_000, 1e-4).unwrap();
    let overhead = tight.num_bits as f64 / bloom_optimal_bits(1_000_000, 1e-4) - 1.0;
    assert!((0.1..0.3).contains(&overhead), "{overhead} {tight:?}");
    let standard_k = tight.bits_per_item() * std::f64::consts::LN_2;
    assert!(f64::from(tight.num_hashes) < standard_k - 1.0, "{tight:?}");
    for k in [tight.num_hashes - 1, tight.num_hashes + 1] {
        assert!(
            blocked_bloom_fpp(tight.num_bits / 512, BLOCK_BITS, k, 1_000_000).unwrap()
                > tight.fpp_at_capacity
        );
    }
    let report = sizing.to_string();
    assert!(report.contains("BlockedBloomFilter"), "{report}");
    assert!(report.contains("512-bit blocks"), "{report}");
}

#[test]
fn bad_parameters_are_typed_errors() {
    check_bad_parameters!(BlockedBloomFilter);
}

#[test]
fn union_len_estimates_the_merged_set() {
    let make = || sized(100_000, 0.01, 3, Kernel::detect());
    check_union_len(make, BlockedBloomFilter::estimated_len);
}

#[test]
fn merges_keep_len_within_the_bits_set() {
    for blocks in [1, 3] {
        let one_hash = || {
            BlockedBloomFilter::with_bits(blocks * u64::from(BLOCK_BITS))
                .hashes(1)
                .build()
                .unwrap()
        };
        let keys = blocks * 350;
        check_merges_keep_len_within_the_bits_set(one_hash, BlockedBloomFilter::set_bits, keys);
    }
}

/// An explicit size is rounded up to whole blocks, or refused as TooLarge
/// when no whole number of blocks in a u64 holds it (it used to saturate to
/// u64::MAX bits, not a whole number of blocks).
#[test]
fn explicit_sizes_round_up_to_whole_blocks_or_are_refused() {
    let unlimited = |bits: u64| {
        BlockedBloomFilter::with_bits(bits)
            .hashes(3)
            .max_memory(u64::MAX)
            .sizing()
    };
    let largest = u64::MAX - 511;
    assert_eq!(largest % u64::from(BLOCK_BITS), 0);
    assert_eq!(unlimited(largest).unwrap().num_bits, largest);
    assert_eq!(unlimited(largest - 100).unwrap().num_bits, largest);
    for bits in [largest + 1, u64::MAX - 164, u64::MAX] {
        let err = unlimited(bits).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooLarge, "{bits}: {err}");
        let err = BlockedBloomFilter::with_bits(bits)
            .hashes(3)
            .sizing()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooLarge, "{bits}: {err}");
    }
}

#[test]
fn config_drift_is_rejected_before_the_payload() {
    let builder = BlockedBloomFilter::with_fpp(0.01)
        .expected_items(1000)
        .seed(5);
    // Another seed, another k, another array: each is another filter.
    let drifted = [
        builder.clone().seed(6),
        builder.clone().hashes(6),
        builder.clone().expected_items(2000),
    ];
    check_drift(&builder, &drifted);
    // A standard Bloom file is not a blocked one.
    let standard = BloomFilter::with_bits(1024).hashes(3).build().unwrap();
    let err = BlockedBloomFilter::from_bytes(&standard.to_bytes()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WrongKind);
}

/// The format must not change by accident: a small filter's bytes are fixed.
/// Regenerate with `FILTERLAB_BLESS=1 cargo test -p filterlab-bloom golden`
/// only for a deliberate, versioned format change.
#[test]
fn golden_file_blocked() {
    let build = |hasher| {
        let builder = BlockedBloomFilter::with_bits(1024).hashes(6).hasher(hasher);
        builder.build().unwrap()
    };
    check_golden_every_kernel(&check_golden(build, "blocked-bloom"));
}

/// The memory is the blocks' (with at most one line of alignment slack),
/// and the classic approximation is below the exact theory.
#[test]
fn memory_and_classic_theory() {
    let mut filter = sized(10_000, 0.01, 4, Kernel::detect());
    assert_eq!(filter.memory_usage() % 8, 0);
    assert!(filter.memory_usage() as u64 >= filter.num_bits() / 8);
    assert!(filter.memory_usage() as u64 <= filter.num_bits() / 8 + 56);
    filter.extend((0..10_000u64).map(|i| insert_key(4, i)));
    assert!(filter.classic_fpp(10_000) <= filter.theoretical_fpp(10_000).unwrap());
    assert!(filter.fill_ratio() > 0.3 && filter.fill_ratio() < 0.6);
}
