//! The FPP against the state-conditional and a-priori theory, bits per item
//! against f/α, and space against the standard Bloom filter.

use filterlab_bloom::BloomFilter;
use filterlab_core::Membership;
use filterlab_core::keys::insert_key;
use filterlab_core::testing::count_false_positives;
use filterlab_core::theory::{cuckoo_fpp, wilson_interval};
use filterlab_cuckoo::{CuckooFilter, Filter};

use crate::{explicit, fill_until_full};

/// Instances of one configuration, each filled to its first refusal with
/// its own keys and queried with never-inserted keys; the pooled FPP's
/// 99.9% Wilson interval must hold the mean state-conditional FPP
/// (`expected_fpp`), about 1000 false positives in all.
#[test]
fn fpp_at_full_load_matches_the_state_conditional_theory() {
    for bits in [8u32, 12, 16] {
        let (buckets, instances) = (10_007u64, 8u64);
        let mut filter = explicit(buckets, bits, 0);
        let a_priori_full = cuckoo_fpp(bits, 4, 0.96);
        let queries_each = ((1000.0 / a_priori_full) as u64).div_ceil(instances);
        let (mut false_positives, mut conditional, mut a_priori, mut load) = (0, 0.0, 0.0, 0.0);
        for instance in 0..instances {
            let seed = (u64::from(bits) << 8) + instance;
            filter = explicit(buckets, bits, seed);
            fill_until_full(&mut filter, seed, u64::MAX);
            conditional += filter.expected_fpp();
            a_priori += filter.theoretical_fpp(filter.len() as u64).unwrap();
            load += filter.load_factor();
            false_positives += count_false_positives(&filter, seed, queries_each);
        }
        let n = instances as f64;
        let (conditional, a_priori, load) = (conditional / n, a_priori / n, load / n);
        let queries = queries_each * instances;
        let (low, high) = wilson_interval(false_positives, queries, 0.999);
        let measured = false_positives as f64 / queries as f64;
        println!(
            "f={bits}, {buckets} buckets x {instances}, load {load:.4}: FPP {measured:.4e} in \
             [{low:.4e}, {high:.4e}] ({false_positives} of {queries}), state-conditional \
             {conditional:.4e}, a-priori {a_priori:.4e}, Fan et al. 2bα/2^f {:.4e}",
            8.0 * load / 2f64.powi(bits as i32)
        );
        assert!(
            low <= conditional && conditional <= high,
            "f={bits}: {filter:?}"
        );
        assert!(conditional <= a_priori && a_priori <= conditional * 1.01);
    }
}

/// Small tables at several loads: the a-priori formula bounds the mean of
/// the state-conditional FPP from above, by a few percent at most, and the
/// FPP measured over many instances agrees with that mean.
#[test]
fn a_priori_formula_against_simulated_small_tables() {
    let (buckets, bits, instances, queries_each) = (64u64, 6u32, 3000u64, 200u64);
    for load in [0.25, 0.5, 0.75, 0.9] {
        let items = (load * buckets as f64 * 4.0) as u64;
        let (mut conditional, mut false_positives) = (0.0, 0);
        for instance in 0..instances {
            let mut filter = explicit(buckets, bits, instance);
            let accepted = fill_until_full(&mut filter, instance, items);
            assert_eq!(accepted, items);
            conditional += filter.expected_fpp();
            false_positives += count_false_positives(&filter, instance, queries_each);
        }
        let conditional = conditional / instances as f64;
        let a_priori = cuckoo_fpp(bits, 4, items as f64 / (buckets as f64 * 4.0));
        let queries = instances * queries_each;
        let (low, high) = wilson_interval(false_positives, queries, 0.999);
        let measured = false_positives as f64 / queries as f64;
        println!(
            "f={bits}, {buckets} buckets, load {load}: measured {measured:.5} in [{low:.5}, {high:.5}], \
             mean state-conditional {conditional:.5}, a-priori {a_priori:.5} (+{:.2}%)",
            (a_priori / conditional - 1.0) * 100.0
        );
        assert!(low <= conditional && conditional <= high);
        assert!(conditional <= a_priori && a_priori <= conditional * 1.05);
    }
}

/// Bits per item of a full filter, file header included: within 2% of
/// f/α plus the header's bits per item.
#[test]
fn bits_per_item_are_f_over_load() {
    for bits in [8u32, 12, 13, 16] {
        let mut filter = explicit(100_003, bits, 5);
        fill_until_full(&mut filter, 5, u64::MAX);
        let items = filter.len() as f64;
        let file_bits = filter.to_bytes().len() as f64 * 8.0;
        let memory_bits = filter.memory_usage() as f64 * 8.0;
        let ideal = f64::from(bits) / filter.load_factor();
        // Header: 48 fixed bytes, 13 parameters, the directory, the final checksum.
        let header_bits = (48.0 + 104.0 + 16.0 + 8.0) * 8.0 / items;
        println!(
            "f={bits}: load {:.4}, file {:.3} bits/item, memory {:.3}, f/α {ideal:.3} + header {header_bits:.4}",
            filter.load_factor(),
            file_bits / items,
            memory_bits / items
        );
        assert!((file_bits / items / (ideal + header_bits) - 1.0).abs() < 0.02);
        assert!((memory_bits / items / ideal - 1.0).abs() < 0.02);
    }
}

/// At p = 1e-3 and 1e-4 (n = 1e6) the cuckoo filter takes fewer bits per
/// item than the standard Bloom filter, and its measured FPP meets p.
#[test]
fn smaller_than_bloom_at_low_fpp() {
    let items = 1_000_000u64;
    for (fpp, seed) in [(1e-3, 21u64), (1e-4, 22)] {
        let cuckoo = CuckooFilter::params(items, fpp).unwrap();
        let bloom = BloomFilter::params(items, fpp).unwrap();
        let mut filter = CuckooFilter::with_fpp(fpp)
            .expected_items(items)
            .seed(seed)
            .build()
            .unwrap();
        let hasher = *filter.hasher();
        let hashes: Vec<u64> = (0..items)
            .map(|i| hasher.hash(&insert_key(seed, i)))
            .collect();
        filter.insert_hashes(&hashes).unwrap();
        let queries = (1000.0 / cuckoo.fpp_at_capacity) as u64;
        let false_positives = count_false_positives(&filter, seed, queries);
        let (low, high) = wilson_interval(false_positives, queries, 0.999);
        let measured_bits = filter.memory_usage() as f64 * 8.0 / items as f64;
        println!(
            "p={fpp:e}: cuckoo f={} {measured_bits:.3} bits/item (load {:.4}), Bloom {:.3} bits/item (k={}); \
             measured FPP {:.4e} in [{low:.4e}, {high:.4e}], a-priori {:.4e}, state-conditional {:.4e}",
            cuckoo.fingerprint_bits,
            filter.load_factor(),
            bloom.bits_per_item(),
            bloom.num_hashes,
            false_positives as f64 / queries as f64,
            cuckoo.fpp_at_capacity,
            filter.expected_fpp(),
        );
        assert!(measured_bits < bloom.bits_per_item());
        assert!(cuckoo.bits_per_item() < bloom.bits_per_item());
        assert!(low <= fpp, "measured FPP above the target");
    }
}
