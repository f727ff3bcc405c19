//! Past capacity: refusals, never losses; growth by sub-tables to 1000× the
//! first table with the FPP inside its stated bound; the load reached
//! before the first refusal.

use filterlab_core::keys::insert_key;
use filterlab_core::testing::count_false_positives;
use filterlab_core::theory::{cuckoo_compound_fpp, cuckoo_fpp, wilson_interval};
use filterlab_cuckoo::{CuckooFilter, ErrorKind, Filter};

use crate::{explicit, fill_until_full};

/// A non-growing filter offered 1.2× its capacity: every accepted key is
/// contained afterwards, every refused insert left the filter
/// byte-identical, and the refusals start only near full load.
#[test]
fn overload_refuses_and_loses_nothing() {
    for (bits, seed) in [(8u32, 1u64), (12, 2), (16, 3)] {
        let mut filter = explicit(5_003, bits, seed);
        let capacity = filter.capacity().unwrap() as u64;
        let hasher = *filter.hasher();
        let (mut accepted, mut refused, mut first_refusal) = (Vec::new(), 0u64, None);
        for i in 0..capacity * 6 / 5 {
            let key = insert_key(seed, i);
            let before = filter.clone();
            match filter.insert_hash(hasher.hash(&key)) {
                Ok(_) => accepted.push(key),
                Err(err) => {
                    assert_eq!(err.kind(), ErrorKind::Full);
                    assert_eq!(
                        filter.to_bytes(),
                        before.to_bytes(),
                        "refusal changed the filter"
                    );
                    refused += 1;
                    first_refusal.get_or_insert(i);
                }
            }
        }
        let lost = accepted.iter().filter(|key| !filter.contains(*key)).count();
        assert_eq!(lost, 0);
        assert_eq!(filter.len(), accepted.len());
        let first = first_refusal.expect("1.2x capacity must be refused somewhere");
        println!(
            "f={bits}: capacity {capacity}, offered {}, accepted {}, refused {refused}, first refusal at load {:.4}, final load {:.4}",
            capacity * 6 / 5,
            accepted.len(),
            first as f64 / filter.slots() as f64,
            filter.load_factor()
        );
        assert!(
            first >= capacity,
            "refused before capacity: {first} < {capacity}"
        );
    }
}

/// A growing filter (expansion 2) fed 1000× its first table's capacity:
/// no accepted key is lost; the only keys refused already tested positive
/// (in a full older table), and each refusal left the filter exactly as the
/// accepted keys alone make it; the measured FPP lies within the stated
/// compound bound (and matches the state-conditional theory).
#[test]
fn growth_to_a_thousand_times_the_first_table() {
    let build = || {
        CuckooFilter::with_fpp(0.001)
            .expected_items(1000)
            .expansion(2)
            .seed(11)
            .build()
            .unwrap()
    };
    let mut filter = build();
    // The filter is deterministic: one fed only the accepted keys must be
    // byte-identical to it after every refusal.
    let mut shadow = build();
    let hasher = *filter.hasher();
    let keys = 1_000 * filter.initial_capacity();
    let mut refused = Vec::new();
    for i in 0..keys {
        let hash = hasher.hash(&insert_key(11, i));
        match filter.insert_hash(hash) {
            Ok(_) => {
                shadow.insert_hash(hash).unwrap();
            }
            Err(err) => {
                // Below the caps, only a key that already tests positive in
                // a full older table is refused.
                assert_eq!(err.kind(), ErrorKind::Full);
                assert!(
                    filter.contains_hash(hash),
                    "a key testing negative was refused"
                );
                assert_eq!(filter.to_bytes(), shadow.to_bytes());
                refused.push(i);
            }
        }
    }
    let lost = (0..keys)
        .filter(|i| refused.binary_search(i).is_err() && !filter.contains(&insert_key(11, *i)))
        .count();
    assert_eq!(lost, 0, "accepted keys reported absent");
    assert_eq!(filter.len() as u64, keys - refused.len() as u64);
    let refused = refused.len();

    let bits = filter.fingerprint_bits();
    let tables = filter.tables();
    let bound = cuckoo_compound_fpp((0..tables).map(|_| cuckoo_fpp(bits, 4, 1.0)));
    let conditional = filter.expected_fpp();
    let a_priori = filter.theoretical_fpp(filter.len() as u64).unwrap();
    let queries = (1500.0 / conditional) as u64;
    let false_positives = count_false_positives(&filter, 11, queries);
    let (low, high) = wilson_interval(false_positives, queries, 0.999);
    let measured = false_positives as f64 / queries as f64;
    println!(
        "growth: {keys} keys offered, {refused} refused, {tables} tables, load {:.4}, {} MiB, \
         {:.2} bits/item; FPP {measured:.4e} in [{low:.4e}, {high:.4e}], conditional \
         {conditional:.4e}, a-priori {a_priori:.4e}, bound {bound:.4e} (first table's target 1e-3)",
        filter.load_factor(),
        filter.memory_usage() >> 20,
        filter.memory_usage() as f64 * 8.0 / filter.len() as f64,
    );
    assert!(low <= conditional && conditional <= high);
    assert!(low <= bound, "measured FPP above the compound bound");
    assert!(a_priori <= bound);
}

/// Growth stops at its caps with a refusal, unchanged: at the sub-table cap
/// and at the memory limit.
#[test]
fn growth_caps_refuse_without_loss() {
    let capped_tables = CuckooFilter::with_buckets(64)
        .fingerprint_bits(12)
        .expansion(2)
        .max_tables(3)
        .build()
        .unwrap();
    let capped_memory = CuckooFilter::with_buckets(64)
        .fingerprint_bits(12)
        .expansion(2)
        .max_memory(1200)
        .build()
        .unwrap();
    for (mut filter, tables) in [(capped_tables, 3), (capped_memory, 2)] {
        let accepted = fill_until_absent_refused(&mut filter, 4);
        assert_eq!(filter.tables(), tables);
        assert!(filter.memory_usage() as u64 <= filter.max_memory());
        let before = filter.to_bytes();
        let err = filter.insert(&insert_key(4, accepted)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Full);
        assert_eq!(filter.to_bytes(), before);
        assert!((0..accepted).all(|i| filter.contains(&insert_key(4, i))));
        assert!(!filter.contains(&insert_key(4, accepted)));
        println!(
            "capped at {tables} tables: {accepted} keys, load {:.4}, {err}",
            filter.load_factor()
        );
    }
}

/// The load reached before the first refusal, averaged over seeds, for
/// bucket counts that are and are not powers of two.
#[test]
fn load_before_first_refusal_is_at_least_95_percent() {
    for (buckets, seeds) in [
        (1u64 << 10, 20u64),
        (10_007, 8),
        (100_000, 3),
        (1_000_000, 1),
    ] {
        let mut loads = Vec::new();
        for seed in 0..seeds {
            let mut filter = explicit(buckets, 16, seed);
            let accepted = fill_until_full(&mut filter, 100 + seed, u64::MAX);
            loads.push(accepted as f64 / filter.slots() as f64);
        }
        let mean = loads.iter().sum::<f64>() / loads.len() as f64;
        let min = loads.iter().copied().fold(1.0, f64::min);
        println!(
            "b=4, {buckets} buckets, f=16, {seeds} seeds: mean load at first refusal {mean:.4} (min {min:.4})"
        );
        assert!(mean >= 0.95, "{buckets} buckets: mean load {mean}");
    }
    // Narrow fingerprints give each bucket fewer alternates: reported, not asserted.
    for bits in [4, 6, 8] {
        let mut filter = explicit(100_000, bits, 1);
        let accepted = fill_until_full(&mut filter, 7, u64::MAX);
        println!(
            "b=4, 100000 buckets, f={bits}: load at first refusal {:.4}",
            accepted as f64 / filter.slots() as f64
        );
    }
}

/// Inserts the `seed`-th key stream until a key that tests negative is
/// refused (keys testing positive may be refused earlier by a full older
/// table, and are skipped); returns the index of that key.
fn fill_until_absent_refused(filter: &mut CuckooFilter, seed: u64) -> u64 {
    let mut i = 0;
    loop {
        let key = insert_key(seed, i);
        if filter.insert(&key).is_err() && !filter.contains(&key) {
            return i;
        }
        i += 1;
    }
}
