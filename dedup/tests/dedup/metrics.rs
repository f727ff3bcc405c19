//! Every metric and the status command's answer.

use filterlab_dedup::{Deduplicator, Metrics, PartitionKey, Verdict};

use crate::key;

#[test]
fn every_metric_counts_what_it_says() {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(1000)
        .partitions(2)
        .build()
        .unwrap();
    let bytes_each = dedup.sizing().partition_bytes();
    assert_eq!(
        bytes_each, 4096,
        "1000 at 1e-6: 28756 bits, rounded to 32768"
    );
    let mut empty = dedup.metrics();
    assert_eq!(empty.uniques_configured, 1000);
    empty.uniques_configured = 0;
    assert_eq!(empty, Metrics::default(), "everything else at zero");
    let (one, two, zero) = (
        PartitionKey::from(1u8),
        PartitionKey::from(2u8),
        PartitionKey::from(0u8),
    );
    dedup.check_many((0..100).map(key), Some(&one)).unwrap(); // 100 unique
    dedup.check_many((0..30).map(key), Some(&one)).unwrap(); // 30 duplicate
    dedup.check_many((0..250).map(key), Some(&two)).unwrap(); // 250 unique
    dedup.check_many((0..7).map(key), Some(&zero)).unwrap(); // 7 dropped
    assert!(
        dedup
            .check_hex(b"xyz", Some(&one))
            .unwrap_err()
            .kind()
            .is_fault()
    );
    dedup.record_fault();
    let metrics = dedup.metrics();
    assert_eq!(metrics.memory_bytes, 2 * bytes_each);
    assert_eq!(metrics.uniques_configured, 1000);
    assert_eq!(metrics.uniques_stored, 350);
    assert!(
        (metrics.fill_level - 25.0).abs() < 1e-9,
        "the highest partition's 250/1000"
    );
    assert_eq!(metrics.checks, 387);
    assert_eq!(metrics.unique, 350);
    assert_eq!(metrics.duplicate, 30);
    assert_eq!(metrics.dropped, 7);
    assert_eq!(metrics.faults, 2);
    assert_eq!(metrics.partitions, 2);
    assert_eq!(metrics.evicted, 0);
    dedup.check("k", Some(&PartitionKey::from(3u8))).unwrap();
    let metrics = dedup.metrics();
    assert_eq!(
        (
            metrics.evicted,
            metrics.uniques_stored,
            metrics.memory_bytes
        ),
        (1, 251, 2 * bytes_each)
    );

    let status = dedup.status();
    assert_eq!(status.metrics, metrics);
    let keys: Vec<String> = status
        .partitions
        .iter()
        .map(|p| p.key.as_ref().unwrap().to_string())
        .collect();
    assert_eq!(keys, ["2", "3"]);
    assert_eq!(status.partitions[0].uniques_stored, 250);
    assert!((status.partitions[1].fill_level - 0.1).abs() < 1e-9);
    assert!(status.partitions.iter().all(|p| p.fpp_now < 1e-6));

    // Clearing forgets the keys; the verdict counters go on.
    dedup.clear();
    let cleared = dedup.metrics();
    assert_eq!(
        (
            cleared.uniques_stored,
            cleared.partitions,
            cleared.memory_bytes
        ),
        (0, 0, 0)
    );
    assert_eq!(
        (cleared.checks, cleared.unique, cleared.dropped),
        (388, 351, 7)
    );
    assert_eq!(dedup.check("k", Some(&one)).unwrap(), Verdict::Unique);
}

#[test]
fn unpartitioned_status_has_one_keyless_partition() {
    let mut dedup = Deduplicator::with_fpp(0.01)
        .expected_items(10)
        .build()
        .unwrap();
    dedup.check("k", None).unwrap();
    let status = dedup.status();
    assert_eq!(status.partitions.len(), 1);
    assert_eq!(status.partitions[0].key, None);
    assert_eq!(status.metrics.partitions, 1);
    assert_eq!(dedup.partition_keys().count(), 0);
    dedup.clear();
    assert_eq!(
        dedup.metrics().memory_bytes,
        dedup.sizing().partition_bytes(),
        "the one filter stays"
    );
    assert_eq!(dedup.check("k", None).unwrap(), Verdict::Unique);
}
