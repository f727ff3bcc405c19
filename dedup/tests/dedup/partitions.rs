//! Eviction order (the lowest key first, numbers numerically, strings byte
//! by byte) and search-all on and off.

use filterlab_dedup::{Deduplicator, PartitionKey, Verdict};

fn partitioned(count: u64, search_all: bool) -> Deduplicator {
    Deduplicator::with_fpp(1e-6)
        .expected_items(1000)
        .partitions(count)
        .search_all(search_all)
        .build()
        .unwrap()
}

/// Partition keys 1 to N.
fn days<const N: usize>() -> [PartitionKey; N] {
    std::array::from_fn(|i| PartitionKey::from(i + 1))
}

/// Checks `key` in each partition in turn.
fn checks_of<const N: usize>(
    key: &str,
    dedup: &mut Deduplicator,
    partitions: [&PartitionKey; N],
) -> [Verdict; N] {
    partitions.map(|partition| dedup.check(key, Some(partition)).unwrap())
}

fn live(dedup: &Deduplicator) -> Vec<String> {
    dedup.partition_keys().map(ToString::to_string).collect()
}

#[test]
fn numeric_keys_evict_the_numerically_lowest() {
    let mut dedup = partitioned(3, false);
    // As strings "10" < "9" < "100"; as numbers 9 < 10 < 100.
    for day in ["10", "9", "100"] {
        dedup
            .check("k", Some(&PartitionKey::parse(day.as_bytes())))
            .unwrap();
    }
    assert_eq!(live(&dedup), ["9", "10", "100"]);
    dedup
        .check("k", Some(&PartitionKey::parse(b"101")))
        .unwrap();
    assert_eq!(live(&dedup), ["10", "100", "101"], "9 went first");
    dedup.check("k", Some(&PartitionKey::parse(b"-5"))).unwrap();
    assert_eq!(live(&dedup), ["10", "100", "101"], "-5 evicted at once");
    dedup
        .check("k", Some(&PartitionKey::parse(b"99.5")))
        .unwrap();
    assert_eq!(live(&dedup), ["99.5", "100", "101"]);
    assert_eq!(dedup.metrics().evicted, 2);
    assert_eq!(dedup.metrics().dropped, 1);
}

#[test]
fn string_keys_evict_the_lexicographically_lowest() {
    let mut dedup = partitioned(2, false);
    for date in ["2024-01-10", "2024-01-09"] {
        dedup
            .check("k", Some(&PartitionKey::parse(date.as_bytes())))
            .unwrap();
    }
    dedup
        .check("k", Some(&PartitionKey::parse(b"2024-01-11")))
        .unwrap();
    assert_eq!(live(&dedup), ["2024-01-10", "2024-01-11"]);
    // Byte order: "Z" < "a", and numbers come before every string.
    let mut mixed = partitioned(2, false);
    for key in ["a", "Z", "12"] {
        mixed
            .check("k", Some(&PartitionKey::parse(key.as_bytes())))
            .unwrap();
    }
    assert_eq!(live(&mixed), ["Z", "a"], "the number 12 was the lowest");
}

#[test]
fn an_evicted_partition_forgets_its_keys() {
    let mut dedup = partitioned(1, false);
    let [one, two, three] = days();
    // The reused filter was cleared: partition 3 has not seen "k".
    let verdicts = checks_of("k", &mut dedup, [&one, &two, &three]);
    assert_eq!(verdicts, [Verdict::Unique; 3]);
    assert_eq!(dedup.metrics().uniques_stored, 1);
}

#[test]
fn search_all_off_looks_only_in_the_own_partition() {
    let mut dedup = partitioned(3, false);
    let (monday, tuesday) = (PartitionKey::parse(b"mon"), PartitionKey::parse(b"tue"));
    let verdicts = checks_of("k", &mut dedup, [&monday, &tuesday, &tuesday]);
    assert_eq!(
        verdicts,
        [Verdict::Unique, Verdict::Unique, Verdict::Duplicate]
    );
}

#[test]
fn search_all_on_finds_keys_of_other_partitions_and_stores_in_its_own() {
    let mut dedup = partitioned(3, true);
    let [one, two, three] = days();
    assert_eq!(dedup.check("k", Some(&one)).unwrap(), Verdict::Unique);
    // Unique in partition 2, but partition 1 holds it: a duplicate, and
    // still stored in partition 2 (the operator's rule).
    assert_eq!(dedup.check("k", Some(&two)).unwrap(), Verdict::Duplicate);
    let stored: Vec<u64> = dedup
        .status()
        .partitions
        .iter()
        .map(|p| p.uniques_stored)
        .collect();
    assert_eq!(stored, [1, 1]);
    // Once partition 1 is evicted, partition 2 still knows the key.
    dedup.check("other", Some(&three)).unwrap();
    dedup
        .check("other", Some(&PartitionKey::from(4u8)))
        .unwrap();
    assert_eq!(live(&dedup), ["2", "3", "4"]);
    assert_eq!(dedup.check("k", Some(&three)).unwrap(), Verdict::Duplicate);
    // A key in no partition is unique, and stored in its own.
    assert_eq!(dedup.check("new", Some(&three)).unwrap(), Verdict::Unique);
    assert_eq!(dedup.check("new", Some(&two)).unwrap(), Verdict::Duplicate);
}
