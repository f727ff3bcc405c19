//! Interleaved inserts, duplicate inserts and removals of inserted keys
//! against a multiset oracle: no false negatives, ever, saturation
//! included; `len` and `count` follow the oracle.

use std::collections::BTreeMap;

use filterlab_core::keys::insert_key;
use filterlab_counting_bloom::{
    BlockedCountingBloomFilter, CountingBloom, CountingBloomFilter, Layout,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::conformance::sized;

#[derive(Clone, Debug)]
enum Op {
    /// Insert a key from a small range (so keys repeat).
    Insert(u64),
    /// Insert another copy of the i-th key held (mod their number).
    InsertAgain(usize),
    /// Remove one copy of the i-th key held (mod their number).
    Remove(usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            (0..48u64).prop_map(Op::Insert),
            any::<usize>().prop_map(Op::InsertAgain),
            any::<usize>().prop_map(Op::Remove),
        ],
        0..400,
    )
}

/// Checks the filter against the oracle: every key held is present with a
/// count of at least its multiplicity, and `len` is the oracle's size.
fn holds<L: Layout, const BITS: u32>(
    filter: &CountingBloom<L, BITS>,
    oracle: &BTreeMap<u64, u32>,
    step: usize,
) -> Result<(), TestCaseError> {
    for (&key, &copies) in oracle {
        prop_assert!(
            filter.contains(&key),
            "false negative for {} at step {}",
            key,
            step
        );
        prop_assert!(
            filter.count(&key) >= copies.min(filter.counter_max()),
            "count {} below {} copies of {} at step {}",
            filter.count(&key),
            copies,
            key,
            step
        );
    }
    prop_assert_eq!(
        filter.len(),
        oracle.values().map(|&c| c as usize).sum::<usize>()
    );
    Ok(())
}

fn run<L: Layout, const BITS: u32>(make: impl Fn() -> CountingBloom<L, BITS>) {
    let mut runner = TestRunner::new(Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&ops(), |ops| {
            let mut filter = make();
            let mut oracle: BTreeMap<u64, u32> = BTreeMap::new();
            let mut saturated = 0;
            for (step, op) in ops.iter().enumerate() {
                let held: Vec<u64> = oracle.keys().copied().collect();
                match *op {
                    Op::Insert(key) => {
                        let new = filter.insert(&key);
                        prop_assert!(!(new && oracle.contains_key(&key)));
                        *oracle.entry(key).or_default() += 1;
                    }
                    Op::InsertAgain(i) if !held.is_empty() => {
                        let key = held[i % held.len()];
                        prop_assert!(!filter.insert(&key), "a held key was reported new");
                        *oracle.entry(key).or_default() += 1;
                    }
                    Op::Remove(i) if !held.is_empty() => {
                        let key = held[i % held.len()];
                        prop_assert!(filter.remove(&key), "removing held key {} failed", key);
                        let copies = oracle.get_mut(&key).expect("held");
                        *copies -= 1;
                        if *copies == 0 {
                            oracle.remove(&key);
                        }
                    }
                    _ => {}
                }
                holds(&filter, &oracle, step)?;
                saturated = saturated.max(filter.saturated_counters());
            }
            // Removing what is left empties the filter, saturated counters aside.
            for (key, copies) in std::mem::take(&mut oracle) {
                for _ in 0..copies {
                    prop_assert!(filter.remove(&key));
                }
            }
            prop_assert!(filter.is_empty());
            if filter.saturated_counters() == 0 {
                prop_assert_eq!(filter.nonzero_counters(), 0);
            }
            prop_assert!(
                !filter.remove(&0u64),
                "a removal from an empty filter succeeded"
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn multiset_oracle_standard() {
    run(|| sized::<filterlab_counting_bloom::Standard, 4>(64, 0.1, 1));
    run(|| sized::<filterlab_counting_bloom::Standard, 8>(64, 0.1, 2));
}

#[test]
fn multiset_oracle_blocked() {
    run(|| sized::<filterlab_counting_bloom::Blocked, 4>(64, 0.1, 3));
    run(|| sized::<filterlab_counting_bloom::Blocked, 16>(64, 0.1, 4));
}

/// 4-bit counters, one key inserted 100 times among 1000 others, then
/// removed 100 times: its counters saturate at 15 and stay there, every
/// other key stays present throughout, and all of them can then be removed.
fn forced_saturation<L: Layout>(mut filter: CountingBloom<L, 4>) {
    let hot = u64::MAX;
    let others: Vec<u64> = (0..1000).map(|i| insert_key(5, i)).collect();
    filter.extend(&others);
    for _ in 0..100 {
        filter.insert(&hot);
    }
    assert_eq!(filter.len(), 1100);
    assert_eq!(
        filter.count(&hot),
        15,
        "saturated counters count 'at least 15'"
    );
    let saturated = filter.saturated_counters();
    assert!(
        saturated >= 1 && saturated <= u64::from(filter.num_hashes()),
        "{saturated}"
    );
    for copy in 0..100 {
        assert!(filter.remove(&hot), "removal {copy} of the hot key");
        assert!(
            filter.contains_many(&others).iter().all(|&hit| hit),
            "a false negative after removal {copy}"
        );
    }
    assert_eq!(filter.len(), 1000);
    // The saturated counters stayed: the hot key still tests positive (a
    // false positive now), and nothing else lost a count.
    assert_eq!(filter.saturated_counters(), saturated);
    assert!(filter.contains(&hot));
    for (i, key) in others.iter().enumerate() {
        assert!(filter.remove(key), "removing other key {i}");
    }
    assert!(filter.is_empty());
    assert!(!filter.remove(&hot), "nothing is held any more");
    // Only the saturated counters are left.
    assert_eq!(filter.nonzero_counters(), saturated);
}

#[test]
fn forced_saturation_never_loses_a_key() {
    forced_saturation(
        CountingBloomFilter::with_fpp(0.01)
            .expected_items(1000)
            .seed(11)
            .build()
            .unwrap(),
    );
    forced_saturation(
        BlockedCountingBloomFilter::with_fpp(0.01)
            .expected_items(1000)
            .seed(12)
            .build()
            .unwrap(),
    );
}
