//! Alarm events: up through each threshold, back to 0% on clear and when a
//! new partition becomes the highest.

use filterlab_dedup::{Deduplicator, PartitionKey};

use crate::key;

fn thresholds(events: &[filterlab_dedup::AlarmEvent]) -> Vec<(f64, bool)> {
    events.iter().map(|e| (e.threshold, e.rising)).collect()
}

#[test]
fn events_rise_through_each_threshold_and_fall_to_zero_on_clear() {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(100)
        .alarms([50.0, 80.0, 100.0])
        .build()
        .unwrap();
    assert!(dedup.take_events().is_empty(), "no event at start");
    for i in 0..49 {
        dedup.check(&key(i), None).unwrap();
    }
    assert!(dedup.pending_events().is_empty());
    dedup.check(&key(49), None).unwrap();
    let events = dedup.take_events();
    assert_eq!(thresholds(&events), [(50.0, true)]);
    assert_eq!((events[0].fill_level, events[0].checks), (50.0, 50));
    // Duplicates do not fill.
    dedup.check(&key(0), None).unwrap();
    assert!(dedup.pending_events().is_empty());
    // One batch crossing two thresholds raises both, lowest first.
    dedup.check_many((50..100).map(key), None).unwrap();
    assert_eq!(
        thresholds(&dedup.take_events()),
        [(80.0, true), (100.0, true)]
    );
    dedup.clear();
    let events = dedup.take_events();
    assert_eq!(thresholds(&events), [(0.0, false)]);
    assert_eq!(events[0].fill_level, 0.0);
    // And up again after the clear.
    dedup.check_many((0..50).map(key), None).unwrap();
    assert_eq!(thresholds(&dedup.take_events()), [(50.0, true)]);
    assert_eq!(dedup.status().alarm_level, 50.0);
    assert_eq!(dedup.status().alarm_thresholds, [0.0, 50.0, 80.0, 100.0]);
}

#[test]
fn the_fill_level_is_the_highest_partitions() {
    let mut dedup = Deduplicator::with_fpp(1e-6)
        .expected_items(10)
        .partitions(2)
        .alarms([50.0])
        .build()
        .unwrap();
    let (one, two) = (PartitionKey::from(1u8), PartitionKey::from(2u8));
    dedup.check_many((0..6).map(key), Some(&one)).unwrap();
    assert_eq!(thresholds(&dedup.take_events()), [(50.0, true)]);
    // A new, empty highest partition: the level falls back to 0%.
    dedup.check(&key(100), Some(&two)).unwrap();
    assert_eq!(thresholds(&dedup.take_events()), [(0.0, false)]);
    assert!((dedup.fill_level() - 10.0).abs() < 1e-9);
    // Filling the lower partition does not raise the level.
    dedup.check_many((6..10).map(key), Some(&one)).unwrap();
    assert!(dedup.take_events().is_empty());
}
