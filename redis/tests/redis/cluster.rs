//! The sharded filter on a real Redis Cluster of 3 masters and 3 replicas
//! on loopback (`filterlab_redis::testing::Cluster`): many writer
//! processes, a filter bigger than a node, drift and damage of a shard;
//! and, run by `.ci/run` but skipped by a plain `cargo test` (they take
//! half a minute or more each; run them with
//! `cargo test -p filterlab-redis --test redis -- --ignored cluster::`),
//! a slot migration and a master's failover under traffic.
//!
//! The tests that leave the topology and the settings alone share one
//! cluster per test binary; the others start their own. Every process
//! stops with the test (or, for the shared cluster, with the test binary).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use filterlab_core::keys::insert_key;
use filterlab_redis::testing::Cluster;
use filterlab_redis::{
    BloomFilter, Durability, Endpoint, ErrorKind, RedisBloomFilter, RedisShardedBloomFilter,
};

use crate::sharded::{check_sharded_fpp, never_absent, sharded};
use crate::{Children, assert_kind, tamper, unique, until_reconnected, writer_child, writer_env};

/// The cluster the tests that do not change it share (`None`: the test
/// skips, as every Redis test does without the binaries).
fn shared() -> Option<&'static Cluster> {
    static SHARED: OnceLock<Option<Cluster>> = OnceLock::new();
    SHARED.get_or_init(start).as_ref()
}

/// A cluster of 3 masters with a replica each (`None`: the test skips).
fn start() -> Option<Cluster> {
    Cluster::start_or_skip(3, 1)
}

/// The cluster as an endpoint, through the cluster client.
fn endpoint(cluster: &Cluster) -> Endpoint {
    Endpoint::open(&cluster.urls()[0]).expect("the cluster answers")
}

/// Keys per writer process, and per batch.
const KEYS_EACH: u64 = 25_000;
const BATCH: usize = 1_000;
const SEED: u64 = 0xc105;

/// The keys of writer `writer`: disjoint from every other writer's.
fn writer_keys(writer: u64) -> Vec<u64> {
    crate::disjoint_keys(SEED, KEYS_EACH, writer)
}

/// Run by `four_processes_share_one_filter` in a child process: opens the
/// filter through the cluster, says it is ready, waits for the go, inserts
/// its keys in batches and prints how many were new.
#[test]
#[ignore = "a child process of four_processes_share_one_filter"]
fn child_writer() {
    writer_child(
        |url, name| RedisShardedBloomFilter::open(&Endpoint::open(url).unwrap(), name).unwrap(),
        |mut filter, writer| {
            writer_keys(writer)
                .chunks(BATCH)
                .map(|batch| filter.insert_many(batch).unwrap() as u64)
                .sum()
        },
    );
}

/// Four processes insert disjoint keys into one sharded filter through the
/// cluster at once. Afterwards no key is missing, the exact counter is the
/// sum of the "new" answers the writers got, and the measured FPP lies in
/// the interval of the exact sharded theory.
#[test]
fn four_processes_share_one_filter() {
    let Some(cluster) = shared() else { return };
    let name = unique("writers");
    let writers = 4u64;
    let builder = sharded(writers * KEYS_EACH, 0.01, 64);
    let (mut filter, created) = builder.try_init(&endpoint(cluster), &name).unwrap();
    assert!(created);
    let envs: Vec<_> = (0..writers)
        .map(|writer| writer_env(cluster.urls()[writer as usize % 3].clone(), &name, writer))
        .collect();
    let mut children = Children::spawn("cluster::child_writer", &envs);
    children.go();
    let reported: u64 = children.results().iter().sum();
    let all: Vec<u64> = (0..writers).flat_map(writer_keys).collect();
    assert_eq!(never_absent_batched(&mut filter, &all), 0);
    let len = filter.len().unwrap();
    assert_eq!(
        len, reported,
        "the counter is the sum of the new keys reported"
    );
    println!("{len} of {} keys counted new", all.len());
    // The FPP at n = 100,000 distinct keys (inserted again here: not new).
    check_sharded_fpp(&mut filter, writers * KEYS_EACH, 200_000, SEED);
    assert_eq!(filter.len().unwrap(), len);
    filter.delete().unwrap();
}

/// How many of `keys` a batched lookup reports absent.
fn never_absent_batched(filter: &mut RedisShardedBloomFilter, keys: &[u64]) -> usize {
    filter
        .contains_many(keys)
        .unwrap()
        .iter()
        .filter(|&&hit| !hit)
        .count()
}

/// Every node's memory capped below the filter's size: the plain filter
/// (all its keys in one slot, so on one node) is refused with a clear
/// out-of-memory error and leaves nothing behind; the sharded filter of the
/// same size spreads over the three masters and works.
#[test]
fn a_filter_bigger_than_a_node() {
    let Some(cluster) = start() else { return };
    let bits = 96 * 1024 * 1024; // 12 MiB
    let used = |port: u16| -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("memory")
            .query(&mut cluster.node_client(port).get_connection().unwrap())
            .unwrap();
        info.lines()
            .find_map(|line| line.strip_prefix("used_memory:"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap()
    };
    let base = cluster
        .ports()
        .iter()
        .map(|&port| used(port))
        .max()
        .unwrap();
    // 9 MiB above the busiest node: three quarters of the filter, and room
    // for a third of it (5.2 MB with the allocator's rounding) and traffic.
    let limit = base + 9 * 1024 * 1024;
    cluster.config_set("maxmemory", &limit.to_string()).unwrap();
    let endpoint = endpoint(&cluster);

    let name = unique("one-node");
    let plain = RedisBloomFilter::builder(BloomFilter::with_bits(bits).hashes(7))
        .try_init(&endpoint, &name);
    match plain {
        Err(err) => {
            assert_eq!(err.kind(), ErrorKind::OutOfMemory, "{err}");
            println!("plain filter of {} MiB: {err}", bits / 8 / 1024 / 1024);
        }
        Ok(_) => panic!("a {bits}-bit filter fitted under maxmemory {limit}"),
    }
    assert_kind(
        RedisBloomFilter::open(&endpoint, &name),
        ErrorKind::NotFound,
    );

    let builder =
        RedisShardedBloomFilter::builder(BloomFilter::with_bits(bits).hashes(7)).shards(64);
    let (mut filter, created) = builder.try_init(&endpoint, &unique("sharded")).unwrap();
    assert!(created);
    assert!(filter.num_bits() >= bits);
    let keys: Vec<u64> = (0..100_000).map(|i| insert_key(11, i)).collect();
    filter.insert_many(&keys).unwrap();
    assert_eq!(never_absent_batched(&mut filter, &keys), 0);
    let per_master: Vec<u64> = cluster
        .masters()
        .unwrap()
        .iter()
        .map(|master| used(master.port).saturating_sub(base))
        .collect();
    println!(
        "sharded filter of {} MiB: {per_master:?} bytes above the base on each master (limit {} above)",
        bits / 8 / 1024 / 1024,
        limit - base
    );
}

/// A shard re-created with another configuration, one deleted and one
/// truncated, through the cluster: each gives its typed error for its
/// keys, never a false "absent"; the others answer.
#[test]
fn drift_and_damage_through_the_cluster() {
    let Some(cluster) = shared() else { return };
    let endpoint = endpoint(cluster);
    let (mut filter, _) = sharded(20_000, 0.01, 8)
        .try_init(&endpoint, &unique("cluster-damage"))
        .unwrap();
    let keys: Vec<u64> = (0..8_000).map(|i| insert_key(12, i)).collect();
    filter.insert_many(&keys).unwrap();
    let mut con = cluster.client().get_connection().unwrap();
    let tag = |shard: u64| filter.shard_tag(shard).to_owned();
    let (drifted, deleted, truncated) = (tag(0), tag(1), tag(2));
    tamper(
        &mut con,
        &["HSET", &format!("{{{drifted}}}:config"), "seed", "1"],
    );
    let (config, bits) = (
        format!("{{{deleted}}}:config"),
        format!("{{{deleted}}}:bits:0"),
    );
    tamper(&mut con, &["DEL", &config, &bits]);
    tamper(
        &mut con,
        &["SET", &format!("{{{truncated}}}:bits:0"), "short"],
    );
    for (shard, kind) in [
        (0, ErrorKind::ConfigDrift),
        (1, ErrorKind::NotFound),
        (2, ErrorKind::Damaged),
        (3, ErrorKind::Damaged),
    ] {
        let held: Vec<u64> = keys
            .iter()
            .copied()
            .filter(|key| filter.shard_of(key) == shard)
            .collect();
        let refused = never_absent(&mut filter, &held, kind);
        let expected = if shard == 3 { 0 } else { held.len() };
        assert_eq!(refused, expected, "shard {shard}");
    }
    assert_kind(filter.contains_many(&keys), ErrorKind::ConfigDrift);
    RedisShardedBloomFilter::destroy(&endpoint, filter.name()).unwrap();
}

/// A writer and a reader run while `redis-cli --cluster reshard` moves a
/// third of the slots (and the shards in them) from one master to another:
/// neither sees an error (the cluster client follows ASK and MOVED), and
/// no acknowledged key goes missing.
#[test]
#[ignore = "long (a slot migration under traffic): run with --ignored; .ci/run does"]
fn resharding_under_traffic() {
    let Some(cluster) = start() else { return };
    let endpoint = endpoint(&cluster);
    let (filter, _) = sharded(400_000, 0.01, 64)
        .try_init(&endpoint, &unique("reshard"))
        .unwrap();
    let stop = AtomicBool::new(false);
    let masters = cluster.masters().unwrap();
    // All of one master's slots: a third of them (5,461 or 5,462, as
    // redis-cli split the 16,384 among three).
    let (from, to, moved) = (masters[0].port, masters[1].port, masters[0].slots);
    let (acknowledged, new, lookups) = std::thread::scope(|scope| {
        let stop = &stop;
        let mut writer = filter.clone();
        let writer = scope.spawn(move || {
            let (mut acknowledged, mut new) = (Vec::new(), 0);
            for batch in 0u64.. {
                if stop.load(Ordering::Relaxed) && batch >= 20 {
                    break;
                }
                let keys: Vec<u64> = (0..500).map(|i| insert_key(13, batch * 500 + i)).collect();
                new += writer
                    .insert_many(&keys)
                    .expect("an insert during resharding");
                acknowledged.extend(keys);
            }
            (acknowledged, new)
        });
        let mut reader = filter.clone();
        let reader = scope.spawn(move || {
            let mut lookups = 0;
            while !stop.load(Ordering::Relaxed) {
                let keys: Vec<u64> = (0..500).map(|i| insert_key(13, i)).collect();
                let found = reader
                    .contains_many(&keys)
                    .expect("a lookup during resharding");
                lookups += found.len();
                std::thread::sleep(Duration::from_millis(5));
            }
            lookups
        });
        std::thread::sleep(Duration::from_millis(300));
        let started = Instant::now();
        cluster.reshard(from, to, moved).unwrap();
        println!("resharded {moved} slots in {:?}", started.elapsed());
        stop.store(true, Ordering::Relaxed);
        let (acknowledged, new) = writer.join().unwrap();
        (acknowledged, new, reader.join().unwrap())
    });
    cluster.wait_healthy().unwrap();
    let masters = cluster.masters().unwrap();
    assert!(
        masters
            .iter()
            .any(|master| master.port == from && master.slots == 0)
            || masters.iter().all(|master| master.port != from),
        "the slots moved: {masters:?}"
    );
    let mut filter = filter;
    assert_eq!(never_absent_batched(&mut filter, &acknowledged), 0);
    assert_eq!(filter.len().unwrap(), new as u64);
    println!(
        "{} keys acknowledged and {lookups} looked up during the migration, none missing",
        acknowledged.len()
    );
    filter.delete().unwrap();
}

/// `kill -9` of a master while a writer inserts batches, without and then
/// with durable mode. To make the difference certain rather than a matter
/// of timing, the master is cut off from its replica for 0.7 s before the
/// kill, as by a network partition: the replica paused (SIGSTOP) and its
/// link closed by the master (CLIENT KILL TYPE replica), then resumed right
/// after the kill.
///
/// Only the calls in flight until the replica takes over fail, with a typed
/// error, and the same handle goes on after the promotion. Without durable
/// mode the keys the master acknowledged meanwhile are lost (counted and
/// printed); in durable mode (WAIT for 1 replica) those inserts were
/// refused (`NotReplicated` or `Connection`), and every acknowledged key is
/// present afterwards.
#[test]
#[ignore = "long (two failovers of a master): run with --ignored; .ci/run does"]
fn failover_of_a_master() {
    let Some(mut cluster) = start() else { return };
    let endpoint = endpoint(&cluster);
    for durable in [false, true] {
        let (mut filter, _) = sharded(400_000, 0.01, 64)
            .try_init(&endpoint, &unique("failover"))
            .unwrap();
        filter.set_timeout(Some(Duration::from_secs(5)));
        if durable {
            filter.set_durability(Some(Durability {
                replicas: 1,
                timeout: Duration::from_millis(500),
            }));
        }
        // The filter's creation is on every replica before the writer
        // starts, so that only the writes during the cut can be lost.
        cluster.wait_replicated().unwrap();
        let victim = cluster.masters().unwrap()[0].port;
        let replica = cluster.replicas_of(victim).unwrap()[0].port;
        let stop = AtomicBool::new(false);
        let seed = 14 + u64::from(durable);
        let (acknowledged, failed) = std::thread::scope(|scope| {
            let stop = &stop;
            let mut writer = filter.clone();
            let writer = scope.spawn(move || {
                let (mut acknowledged, mut failed) = (Vec::new(), Vec::new());
                let mut batch = 0u64;
                while !stop.load(Ordering::Relaxed) || batch < 20 {
                    let keys: Vec<u64> = (0..200)
                        .map(|i| insert_key(seed, batch * 200 + i))
                        .collect();
                    match writer.insert_many(&keys) {
                        Ok(_) => acknowledged.extend(keys),
                        Err(err) => {
                            let expected = [ErrorKind::Connection, ErrorKind::NotReplicated];
                            assert!(expected.contains(&err.kind()), "{err}");
                            failed.push(err.to_string());
                            std::thread::sleep(Duration::from_millis(50));
                        }
                    }
                    batch += 1;
                }
                (acknowledged, failed)
            });
            std::thread::sleep(Duration::from_millis(500));
            cluster.pause(replica).unwrap();
            cluster.cut_replication(victim).unwrap();
            std::thread::sleep(Duration::from_millis(700));
            cluster.kill(victim);
            cluster.resume(replica).unwrap();
            let started = Instant::now();
            cluster.wait_failover(victim).unwrap();
            println!(
                "durable = {durable}: the replica took over in {:?}",
                started.elapsed()
            );
            // The writer goes on for a while on the promoted replica.
            std::thread::sleep(Duration::from_secs(1));
            stop.store(true, Ordering::Relaxed);
            writer.join().unwrap()
        });
        assert!(!failed.is_empty(), "the writer did not notice the failover");
        // The same handle works again.
        let found = until_reconnected(
            Duration::from_secs(30),
            Duration::from_millis(100),
            "the handle did not recover",
            || filter.contains_many(&acknowledged),
        );
        let lost = found.iter().filter(|&&hit| !hit).count();
        println!(
            "durable = {durable}: {} keys acknowledged, {lost} of them lost; {} calls failed \
             during the failover (first: {:?})",
            acknowledged.len(),
            failed.len(),
            failed.first()
        );
        if durable {
            assert_eq!(lost, 0, "an acknowledged key was lost in durable mode");
        } else {
            assert!(
                lost > 0,
                "the master's unreplicated writes survived its failover"
            );
        }
        // The killed master comes back as a replica of its successor.
        cluster.restart(victim).unwrap();
        cluster.wait_healthy().unwrap();
        filter.set_durability(None);
        filter.delete().unwrap();
    }
}
