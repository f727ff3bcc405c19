//! Faults: a configuration that drifts under a running client, bits that
//! vanish, keys of the wrong type, and a server killed and restarted in the
//! middle of a run. Each gives a typed error, never a wrong answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use filterlab_core::keys::insert_key;
use filterlab_redis::{ErrorKind, RedisBloomFilter};

use crate::{
    Server, assert_all_contained, assert_kind, create, keys_of, private_server, split, unique,
};

/// Another client re-creates the filter with other parameters, or edits one
/// field of its configuration: every call of the running client, reads
/// included, is refused as drift, and changes nothing.
#[test]
fn drift_is_an_error_for_reads_and_writes() {
    let server = server_or_skip!();
    let client = server.client();
    let mut running = create(&server, 10_000, 0.01, 7);
    let name = running.name().to_owned();
    running.insert("before").unwrap();

    // Re-created with another FPP: other bits and hashes.
    let mut other = RedisBloomFilter::open(&client, &name).unwrap();
    assert!(other.delete().unwrap());
    let (mut other, created) = RedisBloomFilter::try_init(&client, &name, 10_000, 0.001).unwrap();
    assert!(created);
    assert_kind(running.insert("after"), ErrorKind::ConfigDrift);
    assert_kind(running.contains("before"), ErrorKind::ConfigDrift);
    assert_kind(
        running.contains_many(["before", "after"]),
        ErrorKind::ConfigDrift,
    );
    assert_kind(running.insert_many(["x", "y"]), ErrorKind::ConfigDrift);
    assert_kind(running.len(), ErrorKind::ConfigDrift);
    assert_kind(running.export(), ErrorKind::ConfigDrift);
    assert_kind(running.delete(), ErrorKind::ConfigDrift);
    assert_kind(
        running.expire(Duration::from_secs(9)),
        ErrorKind::ConfigDrift,
    );
    // Nothing reached the new filter.
    assert_eq!((other.len().unwrap(), other.set_bits().unwrap()), (0, 0));
    // Creating it again with the old parameters is drift too.
    assert_kind(
        RedisBloomFilter::try_init(&client, &name, 10_000, 0.01),
        ErrorKind::ConfigDrift,
    );
    // Reopening follows the new configuration.
    let mut reopened = RedisBloomFilter::open(&client, &name).unwrap();
    assert!(reopened.insert("after").unwrap());

    // One field edited by hand: the seed, then the hash count.
    let mut con = server.connection();
    for (field, value) in [("seed", "8"), ("num_hashes", "3")] {
        let mut edited = create(&server, 1_000, 0.01, 7);
        edited.insert("k").unwrap();
        let key = format!("{{{}}}:config", edited.name());
        let _: () = redis::cmd("HSET")
            .arg(&key)
            .arg(field)
            .arg(value)
            .query(&mut con)
            .unwrap();
        let err = edited.contains("k").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConfigDrift, "{err}");
        assert!(err.to_string().contains(field), "{err}");
        assert_kind(edited.insert("k2"), ErrorKind::ConfigDrift);
        let _: () = redis::cmd("DEL").arg(&key).query(&mut con).unwrap();
        assert!(edited.delete().unwrap(), "the parts remain to be deleted");
        assert!(keys_of(&mut con, edited.name()).is_empty());
    }
    other.delete().unwrap();
}

/// A bit array key deleted or truncated by hand (or evicted) makes every
/// call fail as damage: without it a lookup would give false negatives.
/// Without its configuration the filter is not found.
#[test]
fn missing_bits_are_damage_and_missing_config_is_not_found() {
    let server = server_or_skip!();
    let mut con = server.connection();
    let mut filter = split(10_000, 4096)
        .try_init(&server.client(), &unique("damaged"))
        .unwrap()
        .0;
    let keys: Vec<u64> = (0..1_000).collect();
    filter.insert_many(&keys).unwrap();
    let part = format!("{{{}}}:bits:3", filter.name());
    let _: () = redis::cmd("DEL").arg(&part).query(&mut con).unwrap();
    assert_kind(filter.contains_many(&keys), ErrorKind::Damaged);
    assert_kind(filter.insert_many(&keys), ErrorKind::Damaged);
    assert_kind(filter.export(), ErrorKind::Damaged);
    // Re-creating it over the damage is refused too.
    assert_kind(
        split(10_000, 4096).try_init(&server.client(), filter.name()),
        ErrorKind::Damaged,
    );
    let _: () = redis::cmd("SET")
        .arg(&part)
        .arg("short")
        .query(&mut con)
        .unwrap();
    assert_kind(filter.len(), ErrorKind::Damaged);

    let config = format!("{{{}}}:config", filter.name());
    let _: () = redis::cmd("DEL").arg(&config).query(&mut con).unwrap();
    assert_kind(filter.contains(&1u64), ErrorKind::NotFound);
    assert_kind(
        RedisBloomFilter::open(&server.client(), filter.name()),
        ErrorKind::NotFound,
    );
    // Bits without a configuration: a new filter may not take them over.
    assert_kind(
        split(10_000, 4096).try_init(&server.client(), filter.name()),
        ErrorKind::AlreadyExists,
    );
    assert!(filter.delete().unwrap());
    assert!(keys_of(&mut con, filter.name()).is_empty());
}

/// A name whose keys hold another type of value gives WRONGTYPE as a typed
/// error from every entry point.
#[test]
fn wrong_type_is_a_typed_error() {
    let server = server_or_skip!();
    let client = server.client();
    let mut con = server.connection();
    let name = unique("wrongtype");
    let _: () = redis::cmd("SET")
        .arg(format!("{{{name}}}:config"))
        .arg("a string")
        .query(&mut con)
        .unwrap();
    assert_kind(RedisBloomFilter::open(&client, &name), ErrorKind::WrongType);
    assert_kind(
        RedisBloomFilter::try_init(&client, &name, 1000, 0.01),
        ErrorKind::WrongType,
    );
    let _: () = redis::cmd("DEL")
        .arg(format!("{{{name}}}:config"))
        .query(&mut con)
        .unwrap();

    let mut filter = create(&server, 1000, 0.01, 1);
    let part = format!("{{{}}}:bits:0", filter.name());
    let _: () = redis::cmd("DEL").arg(&part).query(&mut con).unwrap();
    let _: () = redis::cmd("LPUSH")
        .arg(&part)
        .arg("x")
        .query(&mut con)
        .unwrap();
    assert_kind(filter.insert("k"), ErrorKind::WrongType);
    assert_kind(filter.contains("k"), ErrorKind::WrongType);
    assert_kind(filter.estimated_len(), ErrorKind::WrongType);
    assert_kind(filter.expire(Duration::from_secs(5)), ErrorKind::WrongType);
    assert!(filter.delete().unwrap());
    assert!(keys_of(&mut con, filter.name()).is_empty());
}

/// The server is killed (SIGKILL) while a reader and a writer are running,
/// and restarted with its data. Meanwhile every call fails with a
/// connection error, no call answers wrongly, and afterwards every call
/// succeeds on the same handles, which reconnect by themselves.
#[test]
fn server_killed_and_restarted_mid_run() {
    let Some(mut server) = private_server("killing the server", true) else {
        return;
    };
    let mut filter = create(&server, 200_000, 0.01, 11);
    filter.set_timeout(Some(Duration::from_secs(2)));
    let acknowledged: Vec<u64> = (0..50_000).map(|i| insert_key(11, i)).collect();
    filter.insert_many(&acknowledged).unwrap();

    let stop = AtomicBool::new(false);
    let (reader_errors, writer_errors) = std::thread::scope(|scope| {
        let (stop, acknowledged) = (&stop, &acknowledged);
        // A reader: every answer it gets must be "all present".
        let mut reader = filter.clone();
        let reader = scope.spawn(move || {
            let (mut errors, mut answers) = (0, 0);
            while !stop.load(Ordering::Relaxed) || answers < 3 {
                match reader.contains_many(acknowledged) {
                    Ok(found) => {
                        assert!(found.iter().all(|&hit| hit), "a wrong answer");
                        answers += 1;
                    }
                    Err(err) => {
                        assert_eq!(err.kind(), ErrorKind::Connection, "{err}");
                        errors += 1;
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            }
            errors
        });
        // A writer of new keys; a failed batch is retried (idempotent bits).
        let mut writer = filter.clone();
        let writer = scope.spawn(move || {
            let mut errors = 0;
            for batch in 0..40u64 {
                let keys: Vec<u64> = (0..500).map(|i| insert_key(12, batch * 500 + i)).collect();
                loop {
                    match writer.insert_many(&keys) {
                        Ok(_) => break,
                        Err(err) => {
                            assert_eq!(err.kind(), ErrorKind::Connection, "{err}");
                            errors += 1;
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            errors
        });
        std::thread::sleep(Duration::from_millis(100));
        server.kill();
        // While it is down, calls fail; they never answer.
        for _ in 0..3 {
            assert_kind(filter.contains(&acknowledged[0]), ErrorKind::Connection);
            assert_kind(filter.insert(&1u64), ErrorKind::Connection);
            assert_kind(filter.len(), ErrorKind::Connection);
        }
        std::thread::sleep(Duration::from_millis(300));
        server.restart();
        stop.store(true, Ordering::Relaxed);
        (reader.join().unwrap(), writer.join().unwrap())
    });
    assert!(
        reader_errors + writer_errors > 0,
        "the run did not notice the restart"
    );
    // The same handle works again, with every acknowledged key kept.
    let deadline = Instant::now() + Duration::from_secs(20);
    let found = loop {
        match filter.contains_many(&acknowledged) {
            Ok(found) => break found,
            Err(err) if Instant::now() < deadline => {
                assert_eq!(err.kind(), ErrorKind::Connection, "{err}");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(err) => panic!("no reconnection: {err}"),
        }
    };
    assert!(found.iter().all(|&hit| hit));
    let written: Vec<u64> = (0..20_000).map(|i| insert_key(12, i)).collect();
    assert_all_contained(&mut filter, &written);
    assert!(filter.insert("after the restart").unwrap());
    filter.delete().unwrap();
}
