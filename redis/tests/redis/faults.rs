//! Faults: a configuration that drifts under a running client, bits that
//! vanish, keys of the wrong type, and a server killed and restarted in the
//! middle of a run. Each gives a typed error, never a wrong answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use filterlab_core::Probes;
use filterlab_core::keys::insert_key;
use filterlab_redis::{ErrorKind, RedisBloomFilter};
use redis::Connection;

use crate::{
    Server, assert_all_contained, assert_kind, create, keys_of, private_server, split, tamper,
    unique, until_reconnected,
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
        tamper(&mut con, &["HSET", &key, field, value]);
        let err = edited.contains("k").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ConfigDrift, "{err}");
        assert!(err.to_string().contains(field), "{err}");
        assert_kind(edited.insert("k2"), ErrorKind::ConfigDrift);
        tamper(&mut con, &["DEL", &key]);
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
    tamper(&mut con, &["DEL", &part]);
    assert_kind(filter.contains_many(&keys), ErrorKind::Damaged);
    assert_kind(filter.insert_many(&keys), ErrorKind::Damaged);
    assert_kind(filter.export(), ErrorKind::Damaged);
    // Re-creating it over the damage is refused too.
    assert_kind(
        split(10_000, 4096).try_init(&server.client(), filter.name()),
        ErrorKind::Damaged,
    );
    tamper(&mut con, &["SET", &part, "short"]);
    assert_kind(filter.len(), ErrorKind::Damaged);

    let config = format!("{{{}}}:config", filter.name());
    tamper(&mut con, &["DEL", &config]);
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

/// One way to damage part `part` of filter `name`.
type Damage = fn(&mut Connection, &str);

/// The four ways a part gets damaged by hand (or by an eviction), and the
/// error each must give.
fn damages() -> [(&'static str, Damage, ErrorKind); 4] {
    [
        (
            "deleted",
            |con, part| tamper(con, &["DEL", part]),
            ErrorKind::Damaged,
        ),
        (
            "truncated",
            |con, part| {
                let head: Vec<u8> = redis::cmd("GETRANGE")
                    .arg(part)
                    .arg(0)
                    .arg(99)
                    .query(con)
                    .unwrap();
                redis::cmd("SET").arg(part).arg(head).exec(con).unwrap();
            },
            ErrorKind::Damaged,
        ),
        (
            "extended",
            |con, part| {
                let len: u64 = redis::cmd("STRLEN").arg(part).query(con).unwrap();
                tamper(con, &["SETRANGE", part, &len.to_string(), "x"]);
            },
            ErrorKind::Damaged,
        ),
        (
            "another type",
            |con, part| {
                tamper(con, &["DEL", part]);
                tamper(con, &["LPUSH", part, "x"]);
            },
            ErrorKind::WrongType,
        ),
    ]
}

/// Every part's bytes but `skip`'s, and the raw counter, read around the scripts.
fn raw_state(con: &mut Connection, filter: &RedisBloomFilter, skip: u64) -> (Vec<Vec<u8>>, String) {
    let name = filter.name();
    let parts = (0..filter.parts())
        .filter(|&part| part != skip)
        .map(|part| {
            redis::cmd("GET")
                .arg(format!("{{{name}}}:bits:{part}"))
                .query(con)
                .unwrap()
        })
        .collect();
    let items = redis::cmd("HGET")
        .arg(format!("{{{name}}}:config"))
        .arg("items")
        .query(con)
        .unwrap();
    (parts, items)
}

/// The parts (in order, without repeats) a key's probes fall in.
fn parts_of(filter: &RedisBloomFilter, key: u64) -> Vec<u64> {
    let hash = filter.hasher().hash(&key);
    let mut parts: Vec<u64> = Probes::new(hash, filter.num_bits())
        .take(filter.num_hashes() as usize)
        .map(|index| (index ^ 7) / filter.part_bits())
        .collect();
    parts.dedup();
    parts
}

/// With one part of a 24-part filter damaged in each of four ways, insert
/// and insert_many refuse before writing anything: no bit of an intact part
/// changes and the counter stays as it was (issue 23, item 5: the scripts
/// set the bits of the parts before the damaged one, then failed). Lookups
/// answer "present" or refuse, never a false "absent".
#[test]
fn a_refused_insert_writes_nothing() {
    let server = server_or_skip!();
    let mut con = server.connection();
    let damaged = 12;
    let mut written = Vec::new();
    for (how, damage, kind) in damages() {
        let (mut filter, _) = split(10_000, 4096)
            .try_init(&server.client(), &unique("refused"))
            .unwrap();
        assert_eq!(filter.parts(), 24);
        let old: Vec<u64> = (0..1_000).map(|i| insert_key(23, i)).collect();
        filter.insert_many(&old).unwrap();
        let part = format!("{{{}}}:bits:{damaged}", filter.name());
        damage(&mut con, &part);
        let before = raw_state(&mut con, &filter, damaged);

        // A batch touches every part; one key touches the damaged part
        // after others (the old scripts wrote those first).
        let new: Vec<u64> = (0..2_000).map(|i| insert_key(24, i)).collect();
        assert_kind(filter.insert_many(&new), kind);
        let last = new
            .iter()
            .copied()
            .find(|&key| {
                let parts = parts_of(&filter, key);
                parts.len() > 1 && parts.last() == Some(&damaged)
            })
            .expect("a key probing the damaged part last");
        assert_kind(filter.insert(&last), kind);
        assert_kind(filter.insert_hashes([filter.hasher().hash(&last)]), kind);
        let after = raw_state(&mut con, &filter, damaged);
        let changed = before
            .0
            .iter()
            .zip(&after.0)
            .filter(|(b, a)| b != a)
            .count();
        if changed > 0 || before.1 != after.1 {
            written.push(format!(
                "{how}: {changed} of 23 intact parts changed, counter {} -> {}",
                before.1, after.1
            ));
        }

        // Lookups: present, or refused; never absent.
        assert_kind(filter.contains_many(&old), kind);
        for key in &old {
            match filter.contains(key) {
                Ok(found) => assert!(found, "{how}: a false negative"),
                Err(err) => assert_eq!(err.kind(), kind, "{how}: {err}"),
            }
        }
        assert!(filter.delete().unwrap());
        assert!(keys_of(&mut con, filter.name()).is_empty());
    }
    assert!(written.is_empty(), "refused inserts wrote: {written:#?}");
}

/// A name whose keys hold another type of value gives WRONGTYPE as a typed
/// error from every entry point.
#[test]
fn wrong_type_is_a_typed_error() {
    let server = server_or_skip!();
    let client = server.client();
    let mut con = server.connection();
    let name = unique("wrongtype");
    tamper(
        &mut con,
        &["SET", &format!("{{{name}}}:config"), "a string"],
    );
    assert_kind(RedisBloomFilter::open(&client, &name), ErrorKind::WrongType);
    assert_kind(
        RedisBloomFilter::try_init(&client, &name, 1000, 0.01),
        ErrorKind::WrongType,
    );
    tamper(&mut con, &["DEL", &format!("{{{name}}}:config")]);

    let mut filter = create(&server, 1000, 0.01, 1);
    let part = format!("{{{}}}:bits:0", filter.name());
    tamper(&mut con, &["DEL", &part]);
    tamper(&mut con, &["LPUSH", &part, "x"]);
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
    let found = until_reconnected(
        Duration::from_secs(20),
        Duration::from_millis(50),
        "no reconnection",
        || filter.contains_many(&acknowledged),
    );
    assert!(found.iter().all(|&hit| hit));
    let written: Vec<u64> = (0..20_000).map(|i| insert_key(12, i)).collect();
    assert_all_contained(&mut filter, &written);
    assert!(filter.insert("after the restart").unwrap());
    filter.delete().unwrap();
}
