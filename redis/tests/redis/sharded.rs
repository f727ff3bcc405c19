//! The sharded filter on one server: answers, counter and exports equal to
//! a local `ShardedBloomFilter` of the same layout; its FPP against the
//! exact sharded theory; creation (racing, abandoned), deletion (stopped
//! half-way), expiry and transfer as a whole; drift and damage of one
//! shard. The same on a real cluster: `cluster.rs`.

use filterlab_core::Membership;
use std::time::Duration;

use filterlab_core::keys::{insert_key, query_key};
use filterlab_redis::{
    BloomFilter, Durability, ErrorKind, Filter, RedisShardedBloomBuilder, RedisShardedBloomFilter,
};
use redis::Connection;

use crate::{Server, assert_fpp_within, assert_kind, false_positives, init_race, tamper, unique};

/// A builder of `shards` shards sized for `items` at `fpp`, seed 9.
pub(crate) fn sharded(items: u64, fpp: f64, shards: u64) -> RedisShardedBloomBuilder {
    RedisShardedBloomFilter::builder(BloomFilter::with_fpp(fpp).expected_items(items).seed(9))
        .shards(shards)
}

/// A filter of `builder` created (not found) under a new name from
/// `label`: its name and handle.
fn created(
    server: &Server,
    builder: &RedisShardedBloomBuilder,
    label: &str,
) -> (String, RedisShardedBloomFilter) {
    let name = unique(label);
    let (filter, created) = builder.try_init(&server.client(), &name).unwrap();
    assert!(created, "{name} was new");
    (name, filter)
}

/// The first `count` keys of insert stream `seed`.
fn inserted(seed: u64, count: u64) -> Vec<u64> {
    (0..count).map(|i| insert_key(seed, i)).collect()
}

/// The first `count` keys of query stream `seed` (never inserted).
fn queried(seed: u64, count: u64) -> Vec<u64> {
    (0..count).map(|i| query_key(seed, i)).collect()
}

/// A filter of four shards sized for `items` at 1% under a new name from
/// `label`, holding `items / 2` keys of stream `seed`: its builder, name,
/// handle and keys.
fn four_shards_holding(
    server: &Server,
    label: &str,
    items: u64,
    seed: u64,
) -> (
    RedisShardedBloomBuilder,
    String,
    RedisShardedBloomFilter,
    Vec<u64>,
) {
    let builder = sharded(items, 0.01, 4);
    let (name, mut filter) = created(server, &builder, label);
    let keys = inserted(seed, items / 2);
    filter.insert_many(&keys).unwrap();
    (builder, name, filter, keys)
}

/// Every key of the sharded filter `name` on a server: its marker and its
/// shards' keys (SCAN), sorted.
pub(crate) fn sharded_keys(con: &mut Connection, name: &str) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for pattern in [format!("{{{name}#*"), format!("{{{name}}}:*")] {
        let found: Vec<String> = redis::cmd("SCAN")
            .cursor_arg(0)
            .arg("MATCH")
            .arg(pattern)
            .clone()
            .iter(con)
            .expect("SCAN")
            .collect::<Result<_, _>>()
            .expect("SCAN");
        keys.extend(found);
    }
    keys.sort();
    keys
}

/// Checks that `filter` answers "present" for every key of `keys` or
/// refuses with `kind`: never a false "absent"; returns how many it refused.
#[track_caller]
pub(crate) fn never_absent(
    filter: &mut RedisShardedBloomFilter,
    keys: &[u64],
    kind: ErrorKind,
) -> usize {
    let mut refused = 0;
    for key in keys {
        match filter.contains(key) {
            Ok(found) => assert!(found, "a false negative"),
            Err(err) => {
                assert_eq!(err.kind(), kind, "{err}");
                refused += 1;
            }
        }
    }
    refused
}

#[test]
fn sharded_filter_answers_as_the_local_one() {
    let server = server_or_skip!();
    let builder = sharded(20_000, 0.01, 16);
    let (_, mut shared) = created(&server, &builder, "sharded");
    let mut local = builder.build_local().unwrap();
    let keys = inserted(5, 20_000);
    let probes = queried(5, 20_000);
    // One at a time, then batched (the first keys again: not new).
    for key in &keys[..100] {
        let hash = local.hasher().hash(key);
        assert_eq!(
            shared.insert(key).unwrap(),
            local.insert_hash(hash).unwrap()
        );
    }
    let hashes: Vec<u64> = keys.iter().map(|key| local.hasher().hash(key)).collect();
    // Small calls: several per shard per batch.
    shared.set_bits_per_call(500).unwrap();
    let each: Vec<bool> = hashes
        .iter()
        .map(|&hash| local.insert_hash(hash).unwrap())
        .collect();
    assert_eq!(shared.insert_each(&keys).unwrap(), each);
    assert_eq!(shared.len().unwrap(), local.len() as u64);
    assert!(shared.contains_many(&keys).unwrap().iter().all(|&hit| hit));
    assert_eq!(
        shared.contains_many(&probes).unwrap(),
        local.contains_many(&probes)
    );
    assert_eq!(
        shared.contains(&probes[0]).unwrap(),
        local.contains(&probes[0])
    );
    assert_eq!(shared.export().unwrap(), local);
    assert_eq!(shared.fpp_given_fill().unwrap(), local.expected_fpp());
    assert!(shared.delete().unwrap());
    assert!(sharded_keys(&mut server.connection(), shared.name()).is_empty());
    assert_kind(shared.contains(&keys[0]), ErrorKind::NotFound);
}

/// Inserts `items` keys, queries absent ones, and checks that the 99.9%
/// Wilson interval of the measured FPP holds the exact sharded theory.
pub(crate) fn check_sharded_fpp(
    filter: &mut RedisShardedBloomFilter,
    items: u64,
    queries: u64,
    seed: u64,
) {
    let false_positives = false_positives(
        filter,
        (items, queries, seed),
        |filter: &mut RedisShardedBloomFilter, keys| filter.insert_many(keys).unwrap(),
        |filter: &mut RedisShardedBloomFilter, keys| filter.contains_many(keys).unwrap(),
    );
    let theory = filter.theoretical_fpp(items).unwrap();
    let given_fill = filter.fpp_given_fill().unwrap();
    let what = format!(
        "{} shards of {} bits, k = {}, n = {items}",
        filter.shards(),
        filter.shard_config().num_bits,
        filter.num_hashes()
    );
    let predictions = [
        ("sharded theory", theory),
        ("FPP given the fill", given_fill),
    ];
    assert_fpp_within(false_positives, queries, &what, &predictions);
    if let Some(target) = filter.target_fpp() {
        assert!(
            theory <= target,
            "the sizing misses the target: {what}, {theory:.4e}"
        );
    }
}

#[test]
fn fpp_matches_the_sharded_theory() {
    let server = server_or_skip!();
    // About 2,000 false positives expected: ±5%.
    let (_, mut filter) = created(&server, &sharded(20_000, 0.01, 32), "fpp");
    check_sharded_fpp(&mut filter, 20_000, 200_000, 0x5eed_0003);
    filter.delete().unwrap();
}

/// Twelve clients call `try_init` on one name at once, over three rounds:
/// exactly one creates it each time, and every one gets a working handle
/// on the same creation.
#[test]
fn init_race_creates_exactly_one_filter() {
    let server = server_or_skip!();
    let clients = 12;
    let builder = sharded(10_000, 0.01, 8);
    let init = |name: &str| builder.try_init(&server.client(), name).unwrap();
    let insert = |filter: &mut RedisShardedBloomFilter, i: u64| filter.insert(&i);
    init_race(clients, 3, init, insert, |name| {
        let mut filter = RedisShardedBloomFilter::open(&server.client(), name).unwrap();
        assert_eq!(filter.len().unwrap(), clients as u64);
        let keys: Vec<u64> = (0..clients as u64).collect();
        assert_eq!(never_absent(&mut filter, &keys, ErrorKind::NotFound), 0);
        // 8 shards of 2 keys each, and the marker.
        assert_eq!(sharded_keys(&mut server.connection(), name).len(), 17);
        filter.delete().unwrap();
    });
}

/// A creation abandoned half-way: its client wrote the marker and the
/// shards (and, here, bits into them) but died before marking the filter
/// ready. The filter is refused by `open` while the lease runs; a later
/// `try_init` waits for the lease to run out and takes over, replacing the
/// shards; a handle of the abandoned creation gets drift, never an answer.
#[test]
fn abandoned_creation_is_refused_then_taken_over() {
    let server = server_or_skip!();
    let mut con = server.connection();
    let builder = sharded(5_000, 0.01, 4).creation_lease(Duration::from_millis(1500));
    let (name, mut abandoned) = created(&server, &builder, "abandoned");
    abandoned.insert_many(0..1000u64).unwrap();
    let marker = format!("{{{name}}}:sharded");
    tamper(&mut con, &["HSET", &marker, "state", "creating"]);
    tamper(&mut con, &["PEXPIRE", &marker, "1500"]);

    assert_kind(
        RedisShardedBloomFilter::open(&server.client(), &name),
        ErrorKind::Incomplete,
    );
    let started = std::time::Instant::now();
    let (mut filter, created) = builder.try_init(&server.client(), &name).unwrap();
    assert!(created, "the abandoned creation was taken over");
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "it waited for the lease"
    );
    assert_eq!(filter.len().unwrap(), 0, "the shards were replaced");
    assert!(filter.insert(&1u64).unwrap());
    assert_kind(abandoned.contains(&1u64), ErrorKind::ConfigDrift);
    assert_kind(abandoned.insert(&2u64), ErrorKind::ConfigDrift);
    filter.delete().unwrap();
    assert!(sharded_keys(&mut con, &name).is_empty());
}

/// A delete that stopped half-way (its client died after marking the
/// filter and deleting two of its four shards): `open` and `try_init`
/// refuse the name; a handle opened before answers from the shards left
/// ("present", never a false "absent") and refuses for the shards gone;
/// `destroy` finishes the delete, after which the name can be created anew.
#[test]
fn stopped_delete_is_refused_until_destroyed() {
    let server = server_or_skip!();
    let mut con = server.connection();
    let (builder, name, mut filter, keys) = four_shards_holding(&server, "half-deleted", 5_000, 7);
    tamper(
        &mut con,
        &["HSET", &format!("{{{name}}}:sharded"), "state", "deleting"],
    );
    for shard in 0..2 {
        let tag = filter.shard_tag(shard);
        tamper(
            &mut con,
            &[
                "DEL",
                &format!("{{{tag}}}:config"),
                &format!("{{{tag}}}:bits:0"),
            ],
        );
    }
    assert_kind(
        RedisShardedBloomFilter::open(&server.client(), &name),
        ErrorKind::Incomplete,
    );
    assert_kind(
        builder.try_init(&server.client(), &name),
        ErrorKind::Incomplete,
    );
    let refused = never_absent(&mut filter, &keys, ErrorKind::NotFound);
    let gone: usize = keys.iter().filter(|key| filter.shard_of(*key) < 2).count();
    assert_eq!(refused, gone);
    assert!(RedisShardedBloomFilter::destroy(&server.client(), &name).unwrap());
    assert!(sharded_keys(&mut con, &name).is_empty());
    assert!(!RedisShardedBloomFilter::destroy(&server.client(), &name).unwrap());
    let (mut again, created) = builder.try_init(&server.client(), &name).unwrap();
    assert!(created);
    assert_kind(filter.contains(&keys[0]), ErrorKind::ConfigDrift);
    again.delete().unwrap();
}

/// One shard re-created with another configuration (a field edited), one
/// deleted, one truncated: each gives its typed error for the keys it
/// holds, a refused insert writes nothing, and no lookup answers a false
/// "absent". The filter deleted and created again with the same
/// configuration is another creation: the old handle gets drift.
#[test]
fn drift_and_damage_of_a_shard_are_typed_errors() {
    let server = server_or_skip!();
    let mut con = server.connection();
    let (builder, name, mut filter, keys) = four_shards_holding(&server, "damaged", 8_000, 8);
    let tags: Vec<String> = (0..4)
        .map(|shard| filter.shard_tag(shard).to_owned())
        .collect();
    let config = |shard: usize| format!("{{{}}}:config", tags[shard]);
    let bits = |shard: usize| format!("{{{}}}:bits:0", tags[shard]);
    tamper(&mut con, &["HSET", &config(0), "num_hashes", "3"]);
    tamper(&mut con, &["DEL", &config(1), &bits(1)]);
    tamper(&mut con, &["SET", &bits(2), "short"]);
    let by_shard: Vec<Vec<u64>> = (0..4)
        .map(|shard| {
            keys.iter()
                .copied()
                .filter(|key| filter.shard_of(key) == shard)
                .collect()
        })
        .collect();
    let in_shard = |shard: usize| by_shard[shard].clone();
    for (shard, kind) in [
        (0, ErrorKind::ConfigDrift),
        (1, ErrorKind::NotFound),
        (2, ErrorKind::Damaged),
    ] {
        let held = in_shard(shard);
        assert_eq!(
            never_absent(&mut filter, &held, kind),
            held.len(),
            "shard {shard}"
        );
        assert_kind(filter.insert(&held[0]), kind);
    }
    // The intact shard answers; a batch touching a damaged shard refuses.
    let intact = in_shard(3);
    assert_eq!(never_absent(&mut filter, &intact, ErrorKind::Damaged), 0);
    assert_kind(filter.contains_many(&keys), ErrorKind::ConfigDrift);
    assert_kind(filter.len(), ErrorKind::ConfigDrift);
    let intact_bits =
        |con: &mut Connection| -> Vec<u8> { redis::cmd("GET").arg(bits(3)).query(con).unwrap() };
    let before = intact_bits(&mut con);
    assert_kind(filter.insert(&in_shard(2)[0]), ErrorKind::Damaged);
    let after = intact_bits(&mut con);
    assert_eq!(before, after);

    assert!(filter.delete().unwrap());
    let (mut again, created) = builder.try_init(&server.client(), &name).unwrap();
    assert!(created);
    assert_kind(filter.contains(&keys[0]), ErrorKind::ConfigDrift);
    assert_kind(filter.insert(&keys[0]), ErrorKind::ConfigDrift);
    assert_kind(filter.len(), ErrorKind::ConfigDrift);
    // Creating it again with another configuration is drift too.
    assert_kind(
        sharded(8_000, 0.001, 4).try_init(&server.client(), &name),
        ErrorKind::ConfigDrift,
    );
    assert_kind(
        sharded(8_000, 0.01, 8).try_init(&server.client(), &name),
        ErrorKind::ConfigDrift,
    );
    again.delete().unwrap();
}

/// Expire and persist act on the marker and every shard together; a
/// filter that expired is gone whole.
#[test]
fn expire_persist_and_delete_act_on_every_key() {
    let server = server_or_skip!();
    let mut con = server.connection();
    let (name, mut filter) = created(&server, &sharded(5_000, 0.01, 4), "expiring");
    filter.insert_many(0..100u64).unwrap();
    let keys = sharded_keys(&mut con, &name);
    assert_eq!(keys.len(), 9);
    let ttls = |con: &mut Connection| -> Vec<i64> {
        keys.iter()
            .map(|key| redis::cmd("PTTL").arg(key).query(con).unwrap())
            .collect()
    };
    filter.expire(Duration::from_secs(60)).unwrap();
    let set = ttls(&mut con);
    assert!(
        set.iter().all(|&ttl| ttl > 50_000 && ttl <= 60_000),
        "{set:?}"
    );
    let spread = set.iter().max().unwrap() - set.iter().min().unwrap();
    assert!(spread < 1000, "one deadline for all: {set:?}");
    filter.persist().unwrap();
    assert!(ttls(&mut con).iter().all(|&ttl| ttl == -1));
    filter.expire(Duration::from_millis(300)).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    assert!(sharded_keys(&mut con, &name).is_empty());
    assert_kind(
        RedisShardedBloomFilter::open(&server.client(), &name),
        ErrorKind::NotFound,
    );
    assert_kind(filter.contains(&1u64), ErrorKind::NotFound);
    assert!(!filter.delete().unwrap(), "nothing left to delete");
}

/// Export gives a local filter equal to one built locally; import publishes
/// it under a new name, answering alike; a taken name is refused.
#[test]
fn export_and_import_round_trip() {
    let server = server_or_skip!();
    let builder = sharded(10_000, 0.01, 8);
    let (_, mut shared) = created(&server, &builder, "export");
    let keys = inserted(9, 10_000);
    shared.insert_many(&keys).unwrap();
    let exported = shared.export().unwrap();
    let mut local = builder.build_local().unwrap();
    let hashes: Vec<u64> = keys.iter().map(|key| local.hasher().hash(key)).collect();
    local.insert_hashes(&hashes).unwrap();
    assert_eq!(exported, local);
    let name = unique("imported");
    let mut imported = RedisShardedBloomFilter::import(&server.client(), &name, &exported).unwrap();
    let probes = queried(9, 20_000);
    assert_eq!(
        imported.contains_many(&probes).unwrap(),
        exported.contains_many(&probes)
    );
    assert_eq!(imported.len().unwrap(), exported.len() as u64);
    assert_eq!(imported.export().unwrap(), exported);
    assert_kind(
        RedisShardedBloomFilter::import(&server.client(), &name, &exported),
        ErrorKind::AlreadyExists,
    );
    shared.delete().unwrap();
    imported.delete().unwrap();
}

/// Durable mode on a server without replicas: the insert is applied, but
/// reported as not replicated.
#[test]
fn durable_mode_without_replicas_reports_not_replicated() {
    let server = server_or_skip!();
    let (_, mut filter) = created(&server, &sharded(1_000, 0.01, 2), "durable");
    filter.set_durability(Some(Durability {
        replicas: 1,
        timeout: Duration::from_millis(100),
    }));
    assert_kind(filter.insert(&1u64), ErrorKind::NotReplicated);
    assert!(filter.contains(&1u64).unwrap(), "applied on the master");
    filter.set_durability(None);
    assert!(!filter.insert(&1u64).unwrap());
    filter.delete().unwrap();
}
