//! Delete, rename, expire and import act on the configuration and every
//! part together: no key of a filter is ever left behind or missing.

use std::time::Duration;

use redis::Connection;

use filterlab_redis::{BloomBuilder, BloomFilter, ErrorKind, RedisBloomFilter};

use crate::{Server, assert_all_contained, assert_kind, keys_of, layout_keys, split, unique};

/// A filter of 6 parts holding 1,000 keys on `server`, with its 7 keys there.
fn split_filter(server: &Server) -> RedisBloomFilter {
    let (mut filter, _) = split(5_000, 8192)
        .try_init(&server.client(), &unique("life"))
        .unwrap();
    assert_eq!(filter.parts(), 6);
    filter.insert_many(0..1_000u64).unwrap();
    let name = filter.name();
    assert_eq!(
        keys_of(&mut server.connection(), name),
        layout_keys(name, 6)
    );
    filter
}

/// A server, a connection to it, a [`split_filter`] and its name; `None`
/// without a server (the test skips).
fn start() -> Option<(Server, Connection, RedisBloomFilter, String)> {
    let server = Server::start()?;
    let con = server.connection();
    let filter = split_filter(&server);
    let name = filter.name().to_owned();
    Some((server, con, filter, name))
}

#[test]
fn delete_leaves_no_key() {
    let Some((_server, mut con, mut filter, name)) = start() else {
        return;
    };
    assert!(filter.delete().unwrap());
    assert!(keys_of(&mut con, &name).is_empty());
    assert!(!filter.delete().unwrap(), "nothing left to delete");
    assert_kind(filter.contains(&1u64), ErrorKind::NotFound);
}

#[test]
fn rename_moves_every_key() {
    let Some((server, mut con, mut filter, old)) = start() else {
        return;
    };
    let before = filter.export().unwrap();
    let new = unique("renamed");
    filter.rename(&new).unwrap();
    assert_eq!(filter.name(), new);
    assert!(keys_of(&mut con, &old).is_empty());
    assert_eq!(keys_of(&mut con, &new), layout_keys(&new, 6));
    assert_eq!(filter.export().unwrap(), before);
    assert_all_contained(&mut filter, 0..1_000u64);
    // Another handle on the old name finds nothing.
    assert_kind(
        RedisBloomFilter::open(&server.client(), &old),
        ErrorKind::NotFound,
    );

    // A rename onto an existing filter is refused, and moves nothing.
    let mut other = split_filter(&server);
    assert_kind(filter.rename(other.name()), ErrorKind::AlreadyExists);
    assert_eq!(keys_of(&mut con, &new), layout_keys(&new, 6));
    assert_kind(
        filter.rename("bad{name}"),
        ErrorKind::Filter(filterlab_core::ErrorKind::InvalidParameter),
    );
    filter.delete().unwrap();
    other.delete().unwrap();
}

/// PTTL of every key of the 6-part filter `name`, read in one script (so
/// at one instant).
fn ttls_ms(con: &mut Connection, name: &str) -> Vec<i64> {
    redis::Script::new(
        "local t = {} for i, k in ipairs(KEYS) do t[i] = redis.call('PTTL', k) end return t",
    )
    .key(layout_keys(name, 6))
    .invoke(con)
    .unwrap()
}

/// Absolute expiry time (Unix ms, PEXPIRETIME) of every key of the 6-part
/// filter `name`: equal values mean one deadline, whatever the clock does
/// between reads.
fn deadlines_ms(con: &mut Connection, name: &str) -> Vec<i64> {
    layout_keys(name, 6)
        .iter()
        .map(|key| redis::cmd("PEXPIRETIME").arg(key).query(con).unwrap())
        .collect()
}

#[test]
fn expire_acts_on_every_key() {
    let Some((_server, mut con, mut filter, name)) = start() else {
        return;
    };
    filter.expire(Duration::from_secs(60)).unwrap();
    let ttls = ttls_ms(&mut con, &name);
    assert!(
        ttls.iter().all(|&ttl| ttl > 50_000 && ttl <= 60_000),
        "{ttls:?}"
    );
    let deadlines = deadlines_ms(&mut con, &name);
    assert!(
        deadlines.iter().all(|&at| at > 0 && at == deadlines[0]),
        "one deadline: {deadlines:?}"
    );
    // Inserts keep the time to live.
    filter.insert_many(1_000..2_000u64).unwrap();
    let ttl = filter.info(false).unwrap().ttl.unwrap();
    assert!(ttl > Duration::from_secs(50), "{ttl:?}");
    filter.persist().unwrap();
    assert_eq!(filter.info(false).unwrap().ttl, None);
    let ttls = ttls_ms(&mut con, &name);
    assert_eq!(ttls, [-1; 7]);

    filter.expire(Duration::from_millis(200)).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert!(keys_of(&mut con, &name).is_empty());
    assert_kind(filter.contains(&1u64), ErrorKind::NotFound);
    assert!(!filter.delete().unwrap());
}

/// A local filter of `bloom`'s sizing holding the keys `0..keys`.
fn filled(bloom: &BloomBuilder, keys: u64) -> BloomFilter {
    let mut filter = bloom.build().unwrap();
    filter.insert_many(0..keys);
    filter
}

/// Import publishes a filter whole, under a name that must be free, and
/// leaves no upload key behind.
#[test]
fn import_creates_a_whole_filter_or_nothing() {
    let server = server_or_skip!();
    let client = server.client();
    let mut con = server.connection();
    let local = filled(
        &BloomFilter::with_fpp(0.01).expected_items(50_000).seed(9),
        20_000,
    );
    let name = unique("imported");
    // Parts of 8 KiB: 8 of them.
    let mut shared = RedisBloomFilter::import_in_parts(&client, &name, &local, 1 << 16).unwrap();
    assert_eq!(shared.parts(), 8);
    assert_eq!(keys_of(&mut con, &name), layout_keys(&name, 8));
    assert_eq!(shared.export().unwrap(), local);
    assert_eq!(shared.len().unwrap(), local.len() as u64);
    assert!(shared.insert(&20_000u64).unwrap());
    // The name is taken now: a second import is refused and changes nothing.
    assert_kind(
        RedisBloomFilter::import(&client, &name, &local),
        ErrorKind::AlreadyExists,
    );
    assert_eq!(keys_of(&mut con, &name), layout_keys(&name, 8));
    assert_eq!(shared.len().unwrap(), local.len() as u64 + 1);
    // A filter larger than one transfer chunk, in one part.
    let big = filled(
        &BloomFilter::with_bits(20_000_000).hashes(3).seed(1),
        100_000,
    );
    let big_name = unique("imported-big");
    let mut shared_big = RedisBloomFilter::import(&client, &big_name, &big).unwrap();
    assert_eq!(shared_big.export().unwrap(), big);
    assert_eq!(keys_of(&mut con, &big_name), layout_keys(&big_name, 1));
    shared.delete().unwrap();
    shared_big.delete().unwrap();
}
