//! Every verdict path, batched checks against one-by-one checks, and the
//! parameter errors.

use filterlab_core::ErrorKind as CoreKind;
use filterlab_dedup::{Deduplicator, ErrorKind, PartitionKey, SizingMode, Verdict};

use crate::{key, other_key};

#[test]
fn unique_then_duplicate_without_partitions() {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(1000)
        .build()
        .unwrap();
    for i in 0..1000 {
        assert_eq!(dedup.check(&key(i), None).unwrap(), Verdict::Unique, "{i}");
    }
    for i in 0..1000 {
        assert_eq!(dedup.check(&key(i), None).unwrap(), Verdict::Duplicate);
    }
    // Bytes that are not UTF-8 are keys like any other.
    assert_eq!(
        dedup.check(&[0xffu8, 0xfe][..], None).unwrap(),
        Verdict::Unique
    );
    assert_eq!(
        dedup.check(&[0xffu8, 0xfe][..], None).unwrap(),
        Verdict::Duplicate
    );
}

#[test]
fn unknown_when_the_partition_was_evicted_or_would_be_at_once() {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(100)
        .partitions(2)
        .build()
        .unwrap();
    let day = |d: u64| PartitionKey::from(d);
    // Fewer partitions than the count: a lower key still opens one.
    assert_eq!(dedup.check("a", Some(&day(5))).unwrap(), Verdict::Unique);
    assert_eq!(dedup.check("a", Some(&day(3))).unwrap(), Verdict::Unique);
    // Full: a key below every live one would be evicted at once.
    assert_eq!(dedup.check("a", Some(&day(2))).unwrap(), Verdict::Unknown);
    assert_eq!(dedup.partition_keys().count(), 2);
    // A higher key evicts day 3; day 3 is then below every live key.
    assert_eq!(dedup.check("b", Some(&day(7))).unwrap(), Verdict::Unique);
    assert_eq!(dedup.check("a", Some(&day(3))).unwrap(), Verdict::Unknown);
    // Live partitions still answer.
    assert_eq!(dedup.check("a", Some(&day(5))).unwrap(), Verdict::Duplicate);
    // Between the live keys: a new partition, which evicts day 5.
    assert_eq!(dedup.check("a", Some(&day(6))).unwrap(), Verdict::Unique);
    let live: Vec<String> = dedup.partition_keys().map(ToString::to_string).collect();
    assert_eq!(live, ["6", "7"]);
    // Unknown in a batch, too, for every key of it.
    let verdicts = dedup.check_many(["x", "y", "z"], Some(&day(1))).unwrap();
    assert_eq!(verdicts, [Verdict::Unknown; 3]);
    assert_eq!(dedup.metrics().dropped, 5);
}

#[test]
fn batched_checks_answer_as_one_by_one() {
    for search_all in [false, true] {
        let build = || {
            Deduplicator::with_fpp(0.01)
                .expected_items(2000)
                .partitions(3)
                .search_all(search_all)
                .build()
                .unwrap()
        };
        let (mut batched, mut single) = (build(), build());
        // Keys repeat within a batch and across partitions.
        let keys: Vec<String> = (0..3000).map(|i| key(i * 7 % 1300)).collect();
        for (round, chunk) in keys.chunks(500).enumerate() {
            let partition = PartitionKey::from(round as u64 / 2);
            let together = batched.check_many(chunk, Some(&partition)).unwrap();
            let apart: Vec<Verdict> = chunk
                .iter()
                .map(|k| single.check(k, Some(&partition)).unwrap())
                .collect();
            assert_eq!(together, apart, "round {round}, search-all {search_all}");
        }
        assert_eq!(crate::snapshot(&batched), crate::snapshot(&single));
    }
}

#[test]
fn check_hash_and_check_agree() {
    let mut dedup = Deduplicator::with_fpp(1e-4)
        .expected_items(100)
        .seed(9)
        .build()
        .unwrap();
    let hash = dedup.hasher().hash("k");
    assert_eq!(dedup.check("k", None).unwrap(), Verdict::Unique);
    assert_eq!(dedup.check_hash(hash, None).unwrap(), Verdict::Duplicate);
    let mut hashes = Vec::new();
    dedup
        .check_hashes(
            &[hash, dedup.hasher().hash(&other_key(0))],
            None,
            &mut hashes,
        )
        .unwrap();
    assert_eq!(hashes, [Verdict::Duplicate, Verdict::Unique]);
}

#[test]
fn a_partition_given_or_missing_against_the_configuration_is_an_error() {
    let mut plain = Deduplicator::with_fpp(0.01)
        .expected_items(10)
        .build()
        .unwrap();
    let err = plain
        .check("k", Some(&PartitionKey::from(1u8)))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PartitionMismatch);
    let mut partitioned = Deduplicator::with_fpp(0.01)
        .expected_items(10)
        .partitions(1)
        .build()
        .unwrap();
    let before = crate::snapshot(&partitioned);
    let err = partitioned.check("k", None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PartitionMismatch);
    assert_eq!(crate::snapshot(&partitioned), before, "nothing checked");
}

#[test]
fn bad_parameters_are_typed_errors() {
    let invalid = ErrorKind::Filter(CoreKind::InvalidParameter);
    for fpp in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let err = Deduplicator::with_fpp(fpp)
            .expected_items(10)
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), invalid, "P = {fpp}");
    }
    let err = Deduplicator::with_fpp(0.01)
        .expected_items(0)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), invalid);
    assert!(err.to_string().contains("uniques N"), "{err}");
    let err = Deduplicator::with_fpp(0.01).build().unwrap_err();
    assert_eq!(err.kind(), invalid);
    let err = Deduplicator::with_fpp(0.01)
        .expected_items(10)
        .partitions(0)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), invalid);
    for threshold in [-1.0, f64::NAN] {
        let err = Deduplicator::with_fpp(0.01)
            .expected_items(10)
            .alarms([threshold])
            .build()
            .unwrap_err();
        assert_eq!(err.kind(), invalid);
    }
    let err = Deduplicator::with_fpp(1e-300)
        .expected_items(u64::MAX)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Filter(CoreKind::TooLarge));
}

#[test]
fn sizing_modes() {
    let power = Deduplicator::with_fpp(1e-6)
        .expected_items(15_000_000)
        .sizing()
        .unwrap();
    // M = 431 Mbit = 54 MB, rounded up to 64 MiB as the operator does.
    assert_eq!(power.bloom.num_bits, 1 << 29);
    assert!(power.bloom.fpp_at_capacity <= 1e-6);
    assert!(power.bloom.num_hashes <= power.unreduced_hashes);
    assert_eq!(power.hash_bits_recommended, 44);
    assert_eq!(power.hex_digits_required, 11);
    let exact = Deduplicator::with_fpp(1e-6)
        .expected_items(15_000_000)
        .sizing_mode(SizingMode::Exact)
        .sizing()
        .unwrap();
    assert!(exact.bloom.num_bits < power.bloom.num_bits);
    assert!(exact.bloom.fpp_at_capacity <= 1e-6);
    assert_eq!(exact.bloom.num_hashes, exact.unreduced_hashes);
    let report = power.to_string();
    for needed in [
        "N (expected uniques)",
        "bits configured",
        "bits actual",
        "bytes",
        "k (hash functions)",
        "exact FPP",
        "hash bits",
    ] {
        assert!(report.contains(needed), "{needed} missing from\n{report}");
    }
}
