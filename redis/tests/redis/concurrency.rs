//! Many writers at once: threads of this process and two child processes
//! (this test binary, run again as `child_inserter`) insert disjoint keys
//! into one filter; many clients race to create one filter.

use std::sync::Barrier;

use filterlab_redis::RedisBloomFilter;

use crate::{
    Children, Server, assert_all_contained, init_race, keys_of, layout_keys, unique, writer_child,
    writer_env,
};

/// Keys per writer, and keys per batch.
const KEYS_EACH: u64 = 20_000;
const BATCH: usize = 500;
const SEED: u64 = 0xc0c0;

/// The keys of writer `writer`: disjoint from every other writer's.
fn writer_keys(writer: u64) -> Vec<u64> {
    crate::disjoint_keys(SEED, KEYS_EACH, writer)
}

/// Inserts writer `writer`'s keys in batches; returns how many were new.
fn insert_all(filter: &mut RedisBloomFilter, writer: u64) -> usize {
    writer_keys(writer)
        .chunks(BATCH)
        .map(|batch| filter.insert_many(batch).unwrap())
        .sum()
}

/// Run by `threads_and_processes_insert_disjoint_keys` in a child process:
/// opens the filter, says it is ready, waits for the go, inserts its keys
/// and prints how many were new.
#[test]
#[ignore = "a child process of threads_and_processes_insert_disjoint_keys"]
fn child_inserter() {
    writer_child(
        |url, name| {
            let client = redis::Client::open(url).unwrap();
            let filter = RedisBloomFilter::open(&client, name).unwrap();
            assert_eq!(filter.clone().len().unwrap(), 0);
            filter
        },
        |mut filter, writer| insert_all(&mut filter, writer) as u64,
    );
}

#[test]
fn threads_and_processes_insert_disjoint_keys() {
    let server = server_or_skip!();
    let name = unique("concurrent");
    // Sized far beyond the 100,000 keys, so that no new key finds all its
    // bits set (odds about 1e-7): the counter must then equal the keys.
    let (filter, _) =
        RedisBloomFilter::try_init(&server.client(), &name, 1_000_000, 0.001).unwrap();
    let envs: Vec<_> = (0..2u64)
        .map(|writer| writer_env(server.url().to_owned(), &name, writer))
        .collect();
    let mut children = Children::spawn("concurrency::child_inserter", &envs);
    let threads = 3u64;
    let barrier = Barrier::new(threads as usize + 1);
    let from_threads: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let (mut filter, barrier) = (filter.clone(), &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    insert_all(&mut filter, 2 + thread)
                })
            })
            .collect();
        barrier.wait();
        children.go();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .sum()
    });
    let from_children: u64 = children.results().iter().sum();
    let writers = threads + 2;
    let mut filter = filter;
    let all: Vec<u64> = (0..writers).flat_map(writer_keys).collect();
    assert_all_contained(&mut filter, &all);
    let len = filter.len().unwrap();
    assert_eq!(
        len,
        from_threads as u64 + from_children,
        "the counter is the sum of the new keys reported"
    );
    assert_eq!(len, writers * KEYS_EACH, "every key was new");
    // Bit for bit what one writer would have made.
    let mut local = filterlab_redis::BloomFilter::with_fpp(0.001)
        .expected_items(1_000_000)
        .build()
        .unwrap();
    local.insert_many(&all);
    assert_eq!(filter.export().unwrap(), local);
    filter.delete().unwrap();
}

/// Sixteen clients call `try_init` on one name at once, over several
/// rounds: exactly one creates it each time, every one gets a working
/// handle, and the filter has exactly its layout's keys.
#[test]
fn init_race_creates_exactly_one_filter() {
    let server = server_or_skip!();
    let clients = 16;
    let builder = crate::split(10_000, 4096);
    let init = |name: &str| builder.try_init(&server.client(), name).unwrap();
    let insert = |filter: &mut RedisBloomFilter, i: u64| filter.insert(&i);
    init_race(clients, 5, init, insert, |name| {
        let mut filter = RedisBloomFilter::open(&server.client(), name).unwrap();
        assert_eq!(filter.parts(), 24);
        assert_eq!(
            keys_of(&mut server.connection(), name),
            layout_keys(name, 24)
        );
        assert_all_contained(&mut filter, 0..clients as u64);
        filter.delete().unwrap();
    });
}
