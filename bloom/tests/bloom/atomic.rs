//! `AtomicBloomFilter`: inserts from real threads lose no bit, the counter
//! stays within its documented bounds, conversions reuse the allocation, and
//! it passes the conformance suite and the FPP check like `BloomFilter`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use filterlab_bloom::{AtomicBloomFilter, BloomFilter};
use filterlab_core::keys::{insert_key, query_key};
use filterlab_core::testing::{Conformance, check_fpp_against_theory};
use filterlab_core::{Membership, Probes};

use crate::{check_counter_bound, check_merges_keep_len_within_the_bits_set};

fn sized(items: u64, fpp: f64, seed: u64) -> AtomicBloomFilter {
    BloomFilter::with_fpp(fpp)
        .expected_items(items)
        .seed(seed)
        .build_atomic()
        .unwrap()
}

#[test]
fn is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<AtomicBloomFilter>();
}

#[test]
fn conformance() {
    Conformance::varying("AtomicBloomFilter", |seed| sized(400, 0.01, seed), 1, 2).check();
    Conformance::varying("AtomicBloomFilter", |fpp| sized(400, fpp, 1), 0.01, 0.001)
        .check_mergeable();
}

/// Every state inserts, merges, `clear` and accepted files reach reads back.
#[test]
fn reachable_states_persist() {
    Conformance::new("AtomicBloomFilter", || sized(100, 0.01, 1))
        .mergeable()
        .check_states();
}

#[test]
fn fpp_matches_exact_theory() {
    for (index, &(items, target)) in [(1_000u64, 1e-2), (100_000, 1e-3)].iter().enumerate() {
        let seed = 4000 + index as u64;
        check_fpp_against_theory(&mut sized(items, target, seed), items, Some(target), seed);
    }
}

/// Keys whose every bit is also set by another key of `keys`: the only ones
/// an insert may find fully present and leave uncounted, in any order.
fn covered_by_others(filter: &AtomicBloomFilter, keys: &[u64]) -> usize {
    let hasher = *filter.hasher();
    let bits_of = |key: &u64| {
        let mut bits: Vec<u64> = Probes::new(hasher.hash(key), filter.num_bits())
            .take(filter.num_hashes() as usize)
            .collect();
        bits.sort_unstable();
        bits.dedup();
        bits
    };
    let mut keys_per_bit: HashMap<u64, u32> = HashMap::new();
    for key in keys {
        for bit in bits_of(key) {
            *keys_per_bit.entry(bit).or_default() += 1;
        }
    }
    keys.iter()
        .filter(|key| bits_of(key).iter().all(|bit| keys_per_bit[bit] >= 2))
        .count()
}

/// N threads insert disjoint key sets at once: afterwards every key is
/// present (no bit was lost), `len` is exactly the number of inserts that
/// returned true, at most the number of keys, and short of it only by keys
/// another key's bits cover.
#[test]
fn threads_inserting_disjoint_keys_lose_nothing() {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 50_000;
    for round in 0..3u64 {
        // Loaded to twice its capacity: many words are shared between threads.
        let filter = sized(THREADS * PER_THREAD / 2, 0.01, round);
        let reported = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let (filter, reported) = (&filter, &reported);
                scope.spawn(move || {
                    let keys = (0..PER_THREAD).map(|i| insert_key(round, thread * PER_THREAD + i));
                    let new = if thread % 2 == 0 {
                        keys.filter(|key| filter.insert(key)).count()
                    } else {
                        filter.insert_many(keys)
                    };
                    reported.fetch_add(new, Ordering::Relaxed);
                });
            }
        });
        let keys: Vec<u64> = (0..THREADS * PER_THREAD)
            .map(|i| insert_key(round, i))
            .collect();
        assert!(
            keys.iter().all(|key| filter.contains(key)),
            "a bit was lost"
        );
        assert!(filter.contains_many(&keys).iter().all(|&hit| hit));
        let len = filter.len();
        assert_eq!(len, reported.load(Ordering::Relaxed));
        let covered = covered_by_others(&filter, &keys);
        assert!(len <= keys.len(), "len {len} over {} keys", keys.len());
        assert!(len + covered >= keys.len(), "len {len}, covered {covered}");
        println!(
            "round {round}: len {len} of {} keys, {covered} covered by others",
            keys.len()
        );
        // The same bits as a filter filled on one thread.
        let mut sequential = BloomFilter::with_fpp(0.01)
            .expected_items(THREADS * PER_THREAD / 2)
            .seed(round)
            .build()
            .unwrap();
        sequential.extend(keys.iter().copied());
        let frozen = filter.freeze();
        assert_eq!(frozen.set_bits(), sequential.set_bits());
        // The payloads: after the 48-byte fixed header and 4 parameters.
        let payload = |bytes: &[u8]| bytes[48 + 4 * 8..bytes.len() - 8].to_vec();
        assert_eq!(payload(&frozen.to_bytes()), payload(&sequential.to_bytes()));
    }
}

/// Every thread inserts the same keys at once: a key may then be counted
/// once per racing thread that set one of its bits first, never more than
/// min(threads, distinct bits of the key) times.
#[test]
fn threads_inserting_the_same_keys_stay_within_the_bound() {
    const THREADS: usize = 4;
    const KEYS: u64 = 50_000;
    let filter = sized(KEYS, 0.01, 77);
    let keys: Vec<u64> = (0..KEYS).map(|i| insert_key(77, i)).collect();
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            let (filter, keys) = (&filter, &keys);
            scope.spawn(move || keys.iter().filter(|key| filter.insert(*key)).count());
        }
    });
    assert!(keys.iter().all(|key| filter.contains(key)));
    let len = filter.len();
    let bound = keys.len() * THREADS.min(filter.num_hashes() as usize);
    let covered = covered_by_others(&filter, &keys);
    println!(
        "len {len} for {} keys x {THREADS} threads (bound {bound}, {covered} covered)",
        keys.len()
    );
    assert!(len <= bound);
    assert!(len + covered >= keys.len());
}

#[test]
fn conversions_keep_bits_counter_and_format() {
    let mut plain = crate::standard::sized(10_000, 0.01, 3);
    plain.extend(0..5_000u64);
    let bytes = plain.to_bytes();
    let atomic = plain.clone().into_atomic();
    // Same answers, same format, same counter.
    assert_eq!(atomic.to_bytes(), bytes);
    assert_eq!(atomic.len(), 5_000);
    assert!((0..5_000u64).all(|key| atomic.contains(&key)));
    let probes: Vec<u64> = (0..50_000).map(|i| query_key(3, i)).collect();
    assert_eq!(atomic.contains_many(&probes), plain.contains_many(&probes));
    assert_eq!(AtomicBloomFilter::from_bytes(&bytes).unwrap(), atomic);
    let frozen = atomic.freeze();
    assert_eq!(frozen, plain);
    assert_eq!(BloomFilter::from_bytes(&frozen.to_bytes()).unwrap(), plain);
}

/// The atomic filter reads kind 1 with the same counter check, and its
/// merges go through the plain filter's.
#[test]
fn a_counter_above_the_bits_set_is_refused() {
    check_counter_bound(sized(1000, 0.01, 6), AtomicBloomFilter::set_bits);
}

#[test]
fn merges_keep_len_within_the_bits_set() {
    let one_hash = || BloomFilter::with_bits(64).hashes(1).build_atomic().unwrap();
    check_merges_keep_len_within_the_bits_set(one_hash, AtomicBloomFilter::set_bits, 40);
}

/// Loom model checks: every interleaving of two racing inserts. Run alone,
/// since under `--cfg loom` the filter's atomics only work inside a model:
/// `RUSTFLAGS="--cfg loom" cargo test -p filterlab-bloom --release --test bloom loom_`
#[cfg(loom)]
mod loom_models {
    use filterlab_bloom::{AtomicBloomFilter, BloomFilter, Filter, Persist};
    use loom::sync::Arc;

    /// Runs `work` on this thread while another inserts `theirs` into the
    /// same small filter, in every interleaving loom explores, then
    /// `check(filter, what work returned, whether their insert was new)`.
    /// Whatever the interleaving, the counter stays within the bits set.
    fn race<R: 'static>(
        theirs: u64,
        work: fn(&AtomicBloomFilter) -> R,
        check: fn(&AtomicBloomFilter, R, bool),
    ) {
        loom::model(move || {
            let filter = BloomFilter::with_bits(128).hashes(3).build_atomic();
            let filter = Arc::new(filter.unwrap());
            let other = Arc::clone(&filter);
            let thread = loom::thread::spawn(move || other.insert(&theirs));
            let result = work(&filter);
            let their_new = thread.join().unwrap();
            assert!(filter.len() as u64 <= filter.set_bits());
            check(&filter, result, their_new);
        });
    }

    /// Two threads insert different keys: both are present afterwards, and
    /// `len` is exactly the inserts that returned true.
    #[test]
    fn loom_racing_inserts_of_two_keys() {
        race(
            1,
            |filter| filter.insert(&2u64),
            |filter, mine, theirs| {
                assert!(filter.contains(&1u64) && filter.contains(&2u64));
                assert_eq!(filter.len(), usize::from(mine) + usize::from(theirs));
            },
        );
    }

    /// Two threads insert the same key: it is present, at least one insert
    /// reports it new (one of them sets its first clear bit), and it is
    /// counted at most twice (min(threads, k)).
    #[test]
    fn loom_racing_inserts_of_one_key() {
        race(
            7,
            |filter| filter.insert(&7u64),
            |filter, mine, theirs| {
                assert!(filter.contains(&7u64));
                assert!(mine || theirs);
                assert_eq!(filter.len(), usize::from(mine) + usize::from(theirs));
            },
        );
    }

    /// A snapshot and a file taken while another thread inserts record a
    /// counter within the bits they hold, so both read back.
    #[test]
    fn loom_snapshot_and_file_racing_an_insert() {
        let work = |filter: &AtomicBloomFilter| (filter.snapshot(), filter.to_bytes());
        race(3, work, |_, (snapshot, bytes), _| {
            assert!(snapshot.len() as u64 <= snapshot.set_bits());
            assert!(BloomFilter::from_bytes(&snapshot.to_bytes()).is_ok());
            assert!(AtomicBloomFilter::from_bytes(&bytes).is_ok());
        });
    }
}
