//! The shared conformance suite (as a multiset, with removals) for several
//! fingerprint widths, with and without growth, and a property test of
//! interleaved inserts, duplicates and removals against a multiset oracle.

use std::collections::HashMap;

use filterlab_core::mix64;
use filterlab_core::testing::Conformance;
use filterlab_cuckoo::{CuckooFilter, ErrorKind};
use proptest::prelude::*;

use crate::explicit;

fn growing(buckets: u64, bits: u32, expansion: u32) -> CuckooFilter {
    CuckooFilter::with_buckets(buckets)
        .fingerprint_bits(bits)
        .expansion(expansion)
        .max_tables(8)
        .seed(3)
        .build()
        .unwrap()
}

#[test]
fn conformance_for_each_width() {
    for bits in [4, 8, 12, 16, 32] {
        let suite = Conformance::new("CuckooFilter", move || explicit(101, bits, 1))
            .with_variant(move || explicit(101, bits, 2))
            .multiset()
            .cases(24);
        suite.check();
        suite.check_removable();
    }
}

#[test]
fn conformance_sized_by_fpp() {
    let make = |seed| {
        move || {
            CuckooFilter::with_fpp(0.001)
                .expected_items(300)
                .seed(seed)
                .build()
                .unwrap()
        }
    };
    let suite = Conformance::new("CuckooFilter(fpp)", make(1))
        .with_variant(make(2))
        .multiset();
    suite.check();
    suite.check_removable();
}

/// Growing filters: small first tables, so that the suite's 2000 keys add
/// sub-tables (and reach the cap of 8 with expansion 1).
#[test]
fn conformance_with_growth() {
    for (bits, expansion) in [(4, 2), (8, 2), (12, 1), (16, 3)] {
        let suite = Conformance::new("CuckooFilter(growing)", move || {
            growing(16, bits, expansion)
        })
        .with_variant(move || growing(16, bits, expansion + 1))
        .multiset()
        .cases(24);
        suite.check();
        suite.check_removable();
    }
}

/// Every state inserts, removals, `clear` and accepted files reach reads
/// back, with and without growth.
#[test]
fn reachable_states_persist() {
    for (name, make) in [
        (
            "CuckooFilter",
            (|| explicit(29, 8, 1)) as fn() -> CuckooFilter,
        ),
        ("CuckooFilter(growing)", || growing(8, 8, 2)),
    ] {
        Conformance::new(name, make)
            .multiset()
            .removable()
            .check_states();
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    InsertUnique(u64),
    Remove(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    // Few distinct keys, so that the same key is inserted many times, past
    // the 2·4 copies its two buckets can hold.
    let key = prop_oneof![0..4u64, 0..40u64, any::<u64>()];
    let op = prop_oneof![
        5 => key.clone().prop_map(Op::Insert),
        1 => key.clone().prop_map(Op::InsertUnique),
        3 => key.prop_map(Op::Remove),
    ];
    proptest::collection::vec(op, 0..600)
}

/// Runs `ops` against a multiset oracle: every accepted copy is counted,
/// only held keys are removed; after every operation no held key is
/// absent, `count` bounds its multiplicity, `len` is the oracle's total, and
/// a refused insert left the filter byte-identical.
fn run_against_oracle(mut filter: CuckooFilter, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut held: HashMap<u64, usize> = HashMap::new();
    for op in ops {
        let before = filter.clone();
        match *op {
            Op::Insert(key) | Op::InsertUnique(key) => {
                let unique = matches!(op, Op::InsertUnique(_));
                let present = filter.contains(&key);
                let result = if unique {
                    filter.insert_unique(&key)
                } else {
                    filter.insert(&key)
                };
                match result {
                    Ok(new) => {
                        prop_assert_eq!(new, !present);
                        if new || !unique {
                            *held.entry(key).or_default() += 1;
                        } else {
                            prop_assert_eq!(&filter, &before);
                        }
                    }
                    Err(err) => {
                        prop_assert_eq!(err.kind(), ErrorKind::Full);
                        prop_assert_eq!(filter.to_bytes(), before.to_bytes());
                        // A growing filter refuses only at its caps.
                        let cap = filter.growth().map(|growth| growth.max_tables as usize);
                        prop_assert!(cap.is_none_or(|cap| filter.tables() == cap));
                    }
                }
            }
            Op::Remove(key) => {
                let count = held.entry(key).or_default();
                if *count > 0 {
                    prop_assert!(filter.remove(&key).unwrap(), "held key {} not removed", key);
                    *count -= 1;
                }
            }
        }
        for (&key, &copies) in &held {
            if copies > 0 {
                prop_assert!(
                    filter.contains(&key),
                    "false negative for {} after {:?}",
                    key,
                    op
                );
                prop_assert!(
                    filter.count(&key) >= copies,
                    "count below {} for {}",
                    copies,
                    key
                );
            }
        }
        prop_assert_eq!(filter.len(), held.values().sum::<usize>());
    }
    let decoded = CuckooFilter::from_bytes(&filter.to_bytes()).unwrap();
    prop_assert_eq!(decoded, filter);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn multiset_oracle_without_growth(ops in ops(), bits in prop::sample::select(vec![4u32, 8, 12])) {
        run_against_oracle(explicit(13, bits, 5), &ops)?;
    }

    #[test]
    fn multiset_oracle_with_growth(ops in ops(), bits in prop::sample::select(vec![4u32, 8, 12])) {
        run_against_oracle(growing(4, bits, 2), &ops)?;
    }
}

/// One key inserted over and over: its two buckets take 2·4 copies (4 when
/// they are the same bucket); then a filter that does not grow refuses it
/// as full, unchanged, and a growing one keeps the copies in its overflow;
/// every copy can be removed again.
#[test]
fn duplicates_fill_two_buckets_then_are_refused_or_overflow() {
    for (mut filter, copies) in [(explicit(1000, 12, 9), 8), (growing(1000, 12, 2), 20)] {
        let mut accepted = 0;
        for attempt in 0..20 {
            let before = filter.to_bytes();
            match filter.insert("again") {
                Ok(new) => {
                    assert_eq!(new, attempt == 0);
                    accepted += 1;
                }
                Err(err) => {
                    assert_eq!(err.kind(), ErrorKind::Full);
                    assert_eq!(filter.to_bytes(), before);
                }
            }
        }
        assert_eq!(accepted, copies, "{filter:?}");
        assert_eq!(filter.count("again"), copies);
        assert_eq!(filter.len(), copies);
        assert_eq!(filter.overflow_copies() as usize, copies - 8);
        assert_eq!(filter.tables(), 1, "duplicates never add a sub-table");
        for _ in 0..copies {
            assert!(filter.contains("again"));
            assert!(filter.remove("again").unwrap());
        }
        assert!(!filter.contains("again") && filter.is_empty());
        assert!(!filter.remove("again").unwrap());
    }
}

/// A long seeded run of inserts, unique inserts and removals of held keys
/// against a multiset oracle, in a growing filter that starts at 4-bit
/// fingerprints (false positives everywhere in its first tables) and
/// lengthens them by a bit or more per sub-table: present keys get copies
/// in older tables of other widths, and in the overflow when those are
/// full. No insert is refused below the caps; after every operation the
/// key touched is present with `count` at least its copies, and every
/// 250 operations every held key is, `len` is the oracle's total and the
/// filter reads back equal.
#[test]
fn multiset_oracle_across_growth_with_mixed_widths() {
    let mut filter = CuckooFilter::with_buckets(8)
        .fingerprint_bits(4)
        .expansion(2)
        .max_tables(12)
        .tightening(0.5)
        .seed(21)
        .build()
        .unwrap();
    let mut held: HashMap<u64, usize> = HashMap::new();
    let mut most_overflow = 0;
    for step in 0..40_000u64 {
        let draw = mix64(step ^ 0x5eed);
        // Keys from a pool of 4000, so that many are inserted again.
        let key = mix64(draw % 4000);
        let copies = held.entry(key).or_default();
        match (draw >> 32) % 10 {
            0..=5 => {
                filter.insert(&key).expect("refused below the caps");
                *copies += 1;
            }
            6 => {
                let present = filter.contains(&key);
                assert_eq!(filter.insert_unique(&key).unwrap(), !present);
                *copies += usize::from(!present);
            }
            _ if *copies > 0 => {
                assert!(filter.remove(&key).unwrap(), "held key not removed");
                *copies -= 1;
            }
            _ => {}
        }
        if *copies > 0 {
            assert!(filter.contains(&key), "false negative at step {step}");
            assert!(filter.count(&key) >= *copies, "count below copies");
        }
        most_overflow = most_overflow.max(filter.overflow_copies());
        if step % 250 == 249 {
            for (&key, &copies) in &held {
                assert!(copies == 0 || filter.contains(&key) && filter.count(&key) >= copies);
            }
            assert_eq!(filter.len(), held.values().sum::<usize>());
            assert_eq!(
                CuckooFilter::from_bytes(&filter.to_bytes()).unwrap(),
                filter
            );
        }
    }
    let widths = filter.table_fingerprint_bits();
    let mut distinct = widths.clone();
    distinct.dedup();
    println!(
        "{} tables of widths {widths:?}, {} keys held, {} copies, most overflow copies {most_overflow}",
        filter.tables(),
        held.values().filter(|&&c| c > 0).count(),
        filter.len()
    );
    assert!(distinct.len() >= 4, "widths {widths:?}");
    assert!(most_overflow > 0, "the overflow was never used");
    // Removing every copy empties the filter.
    for (&key, &copies) in &held {
        for _ in 0..copies {
            assert!(filter.remove(&key).unwrap());
        }
    }
    assert!(filter.is_empty() && filter.overflow_copies() == 0);
    assert_eq!(
        filter.occupancy().iter().map(|t| t[0]).sum::<u64>(),
        filter.slots() / 4
    );
}

/// `insert_unique` adds a key once (CF.ADDNX).
#[test]
fn insert_unique_adds_once() {
    let mut filter = explicit(100, 16, 1);
    assert!(filter.insert_unique(&7u64).unwrap());
    assert!(!filter.insert_unique(&7u64).unwrap());
    assert_eq!((filter.len(), filter.count(&7u64)), (1, 1));
    assert!(!filter.insert(&7u64).unwrap());
    assert_eq!(filter.count(&7u64), 2);
}
